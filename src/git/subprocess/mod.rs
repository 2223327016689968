//! The one wrapper around the `git` binary, used for everything that touches the network.
//!
//! The network goes through real git so that the user's credential helpers, ssh config, proxies,
//! `pushurl` and `insteadOf` apply, and so that pushes report per-ref results. Every invocation
//! is non-interactive: no terminal prompts, stdin detached, the user's own ssh command in batch
//! mode (`ssh`), a C locale for parsing, and a deadline after which the process is killed; in a
//! hook, no credential dialog either ([`Git::start`]).
//!
//! ## Deadlines
//! git runs in a process group of its own, and the deadline kills the whole group: a transport
//! helper (`git-remote-http`) or `ssh` that git started is killed with it, so nothing keeps the
//! output pipes open and the call ends at its deadline. The network subcommands
//! ([`NETWORK_SUBCOMMANDS`]) are bounded further: by [`network_timeout`] (interactive commands,
//! [`ENV_NETWORK_TIMEOUT`]) and by the process's [`set_network_deadline`] (hooks, whose whole
//! network work has one budget). Local subcommands keep the deadline their caller gives: killing
//! a `git update-ref` or `git pack-refs` midway would leave a lock file behind.
//!
//! A process group of its own does not receive the terminal's Ctrl-C, so the live groups are
//! tracked: [`kill_live_groups`] kills them, for a binary's SIGINT/SIGTERM handler.
//!
//! ## Credentials
//! [`redact`] hides the password or token of every URL (and of every scheme-less
//! `user:password@host`) in a text; git's standard error is redacted before anyone sees it.
//!
//! Here: the command builder ([`Git`]) and the git it starts ([`Running`], [`Stream`]); in
//! `deadline` how long a call may take, in `ssh` the ssh command git runs, in `process` the
//! process groups, in `program` which git and its version, in `porcelain` what git prints,
//! read, and in `pager` the pager git would use.

mod deadline;
mod pager;
mod porcelain;
mod process;
mod program;
mod ssh;

use std::ffi::OsString;
use std::io::Read;
use std::marker::PhantomData;
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use crate::git::url::Remote;
use crate::git::url::{redact, redact_url};
use crate::git::version::MIN_GIT_VERSION;
use deadline::limit_for;
use process::{collect, drain, kill_group, kill_group_now, read_in_thread, Tracked, KILL_GRACE};
use ssh::ssh_command;

pub use deadline::{
    clamped_seconds, env_seconds, network_deadline, network_timeout, set_network_deadline,
    DEFAULT_NETWORK_TIMEOUT, ENV_NETWORK_TIMEOUT, NETWORK_SUBCOMMANDS, NETWORK_TIMEOUT_RANGE,
};
pub use pager::pager_for;
pub use porcelain::{
    first_error_line, is_unreachable, parse_push_porcelain, server_words, size_limit,
    unauthenticated_line, PushStatus, PushedRef, RemoteTrouble,
};
pub use process::{before_spawn, kill_live_groups, terminating};
pub use program::{program, require_supported, version};

/// Errors running git.
#[derive(Debug, Clone, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started at all.
    #[error("cannot run git: {0}")]
    Spawn(String),
    /// git is older than [`MIN_GIT_VERSION`]: nothing was run but (once) `git --version`.
    #[error("{} is git {found}, which is too old: entire-checkpoints needs git {MIN_GIT_VERSION} or newer. Upgrade git (your package manager, Xcode's command line tools, or https://git-scm.com/downloads), or put a newer git first on PATH", .program.display())]
    TooOld {
        /// The version it is.
        found: String,
        /// The git that said it.
        program: std::path::PathBuf,
    },
    /// `git --version` said something that names no version.
    #[error("cannot tell which git {} is: `git --version` printed {text:?}", .program.display())]
    UnknownVersion {
        /// What it printed.
        text: String,
        /// The git that printed it.
        program: std::path::PathBuf,
    },
    /// The deadline passed and the process was killed (with everything it started).
    #[error("git {command} did not finish within {}", seconds(*.after))]
    Timeout {
        /// The subcommand.
        command: String,
        /// The deadline.
        after: Duration,
    },
}

/// `d` in seconds for people: whole ones as such, else to the tenth (what is left of a hook's
/// budget is often under a second).
fn seconds(d: Duration) -> String {
    match d.subsec_millis() {
        0 => format!("{}s", d.as_secs()),
        _ => format!("{:.1}s", d.as_secs_f64()),
    }
}

/// Keeps git from asking for credentials in a process with a network deadline (a hook, which
/// must never hold the user's command): `GIT_TERMINAL_PROMPT=0` stops terminal prompts only, so
/// the askpass programs (`GIT_ASKPASS`, `core.askPass` and `SSH_ASKPASS`, which IDEs and GUI
/// clients set and which git still runs without a terminal) are neutralised, ssh's own askpass
/// too, and credential helpers are told not to interact (`credential.interactive`). Stored
/// credentials still apply. Interactive commands keep the user's dialogs.
fn never_ask(cmd: &mut Command) {
    // An empty GIT_ASKPASS makes git skip every askpass program (it wins over the others).
    cmd.env("GIT_ASKPASS", "")
        .env_remove("SSH_ASKPASS")
        .env("SSH_ASKPASS_REQUIRE", "never")
        .args(["-c", "credential.interactive=never"]);
}

/// What a finished git process produced.
#[derive(Debug, Clone)]
pub struct Output {
    /// Exit status code (`None` when killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error, with credentials redacted ([`redact`]).
    pub stderr: String,
}

impl Output {
    /// Whether git exited 0.
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// A git invocation being prepared.
pub struct Git {
    cmd: Command,
    args: Vec<OsString>,
    input: Option<Vec<u8>>,
    /// Whether it is a call of our callers: starting it first makes sure git is new enough
    /// ([`require_supported`]), gives it our ssh command ([`ssh_command`]) and, in a hook,
    /// keeps it from asking for credentials ([`never_ask`]). The calls this wrapper makes to
    /// find those out (`git --version`, the `git config` reading the user's ssh command) are
    /// not, as finding out for them would recurse.
    gated: bool,
}

/// The git subcommand of `args`: the first word that is not a global option (`-c <v>` and
/// `-C <v>` take a value).
fn subcommand(args: &[OsString]) -> String {
    let mut words = args.iter().map(|a| a.to_string_lossy());
    while let Some(w) = words.next() {
        if w == "-c" || w == "-C" {
            words.next();
        } else if !w.starts_with('-') {
            return w.into_owned();
        }
    }
    args.first()
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default()
}

impl Git {
    /// `git` with the non-interactive environment, run in `dir`.
    pub fn new(dir: &Path) -> Self {
        let mut cmd = Command::new(program());
        cmd.current_dir(dir)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GCM_INTERACTIVE", "never")
            .env("LC_ALL", "C")
            .env("LANG", "C")
            // Everything git prints is read to its end before it is used: no flush per record
            // (which git does by default when its output is a pipe).
            .env("GIT_FLUSH", "0")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Git {
            cmd,
            args: Vec::new(),
            input: None,
            gated: true,
        }
    }

    /// `git` operating on a side repository: refs from `git_dir`, objects from `objects`,
    /// run in `cwd` (the real work tree, so relative remote paths resolve as they do there).
    pub fn side(cwd: &Path, git_dir: &Path, objects: &Path) -> Self {
        let mut g = Self::new(cwd);
        g.cmd
            .env("GIT_DIR", git_dir)
            .env("GIT_OBJECT_DIRECTORY", objects)
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("GIT_COMMON_DIR");
        g
    }

    /// Appends arguments.
    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Appends `--`, then `remote`, then `rest` (refspecs, patterns). After `--` git takes the
    /// remote as the repository whatever it holds, and a [`Remote`] was validated besides.
    pub fn remote<I, S>(self, remote: &Remote, rest: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args(["--", remote.as_str()]).args(rest)
    }

    /// Feeds `bytes` to git's standard input (otherwise it is detached).
    pub fn input(mut self, bytes: Vec<u8>) -> Self {
        self.cmd.stdin(Stdio::piped());
        self.input = Some(bytes);
        self
    }

    /// Sets an environment variable.
    pub fn env(mut self, key: &str, value: impl Into<OsString>) -> Self {
        self.cmd.env(key, value.into());
        self
    }

    /// Removes an environment variable inherited from the caller.
    pub fn env_remove(mut self, key: &str) -> Self {
        self.cmd.env_remove(key);
        self
    }

    /// Runs to completion. When `deadline` passes (for a network subcommand: or the network
    /// timeout, or the process's network deadline), git and every process it started are killed
    /// and the result is [`GitError::Timeout`]; the call never outlives its deadline by more
    /// than a short grace for the killed processes' output to close.
    pub fn run(self, deadline: Duration) -> Result<Output, GitError> {
        self.start(deadline)?.wait()
    }

    /// Starts git and returns at once, so that the caller can work while git runs;
    /// [`Running::wait`] then ends as [`Git::run`] does, by the same deadline (counted from
    /// now). In a process with a network deadline (a hook), git never asks for credentials
    /// ([`never_ask`]).
    pub fn start(mut self, deadline: Duration) -> Result<Running, GitError> {
        if self.gated {
            require_supported()?;
        }
        let name = subcommand(&self.args);
        let limit = limit_for(&name, deadline);
        if limit.is_zero() {
            return Err(GitError::Timeout {
                command: name,
                after: limit,
            });
        }
        if self.gated {
            let ssh = ssh_command(&self.cmd, limit);
            self.cmd.env("GIT_SSH_COMMAND", ssh);
            if network_deadline().is_some() {
                never_ask(&mut self.cmd);
            }
        }
        self.cmd.args(&self.args);
        let shown: Vec<String> = self
            .args
            .iter()
            .map(|a| redact_url(&a.to_string_lossy()).into_owned())
            .collect();
        log::debug!("run git {}", shown.join(" "));
        let start = Instant::now();
        let mut git = Tracked::spawn(&mut self.cmd)?;
        if let (Some(bytes), Some(mut stdin)) = (self.input.take(), git.stdin.take()) {
            // A writer thread, so a git that answers while reading cannot deadlock with us. It
            // ends when git reads everything or its process group dies.
            std::thread::spawn(move || {
                let _ = std::io::Write::write_all(&mut stdin, &bytes);
            });
        }
        let stdout = read_in_thread(git.stdout.take());
        let stderr = read_in_thread(git.stderr.take());
        Ok(Running {
            name,
            limit,
            start,
            git,
            stdout,
            stderr,
            waited: false,
            on_this_thread: PhantomData,
        })
    }

    /// Starts git and reads its standard output as a [`Stream`]: for a local command whose
    /// output may be larger than memory (a blob of any size). No deadline and no input.
    pub fn stream(mut self) -> Result<Stream, GitError> {
        let name = subcommand(&self.args);
        self.cmd.args(&self.args);
        log::debug!("stream git {name}");
        let mut git = Tracked::spawn(&mut self.cmd)?;
        let stdout = git
            .stdout
            .take()
            .ok_or_else(|| GitError::Spawn("git's output is not a pipe".into()))?;
        let stderr = read_in_thread(git.stderr.take());
        Ok(Stream {
            name,
            git,
            stdout,
            stderr,
            done: false,
            on_this_thread: PhantomData,
        })
    }
}

/// A git started by [`Git::stream`]: its standard output read as git writes it, straight from
/// the pipe (nothing is buffered beyond the pipe's own 64 KiB), for output of any size. At the
/// end of the output git's exit is awaited, and a failure is the error of that last read,
/// naming git's first error line. Dropped before the end, git's process group is killed. It
/// has no deadline: the reader sets the pace (a pager may take its time).
pub struct Stream {
    name: String,
    git: Tracked,
    stdout: ChildStdout,
    stderr: Receiver<Vec<u8>>,
    done: bool,
    on_this_thread: PhantomData<*const ()>,
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.done {
            return Ok(0);
        }
        let n = self.stdout.read(buf)?;
        if n > 0 || buf.is_empty() {
            return Ok(n);
        }
        self.done = true;
        let status = self
            .git
            .exited
            .recv()
            .map_err(|_| std::io::Error::other(format!("git {} was lost", self.name)))??;
        if status.success() {
            return Ok(0);
        }
        let stderr = drain(&self.stderr, Instant::now() + KILL_GRACE).unwrap_or_default();
        Err(std::io::Error::other(format!(
            "git {} failed: {}",
            self.name,
            first_error_line(&redact(&String::from_utf8_lossy(&stderr)))
        )))
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        if !self.done {
            self.git.kill();
        }
    }
}

/// A git started by [`Git::start`]. Dropped without [`Running::wait`], its process group is
/// killed. It stays on the thread that started it (it is not `Send`): the parent-death signal
/// that kills git with this process follows that thread, which must outlive git.
pub struct Running {
    name: String,
    limit: Duration,
    start: Instant,
    git: Tracked,
    stdout: Receiver<Vec<u8>>,
    stderr: Receiver<Vec<u8>>,
    waited: bool,
    on_this_thread: PhantomData<*const ()>,
}

impl Running {
    /// The next piece of git's standard output as git writes it, `None` once it is closed:
    /// to work on the output while git is still producing it. [`Running::wait`] then returns
    /// what was not taken. When the deadline passes first, the result is
    /// [`GitError::Timeout`] and git is killed when this is dropped.
    pub fn next_output(&mut self) -> Result<Option<Vec<u8>>, GitError> {
        let until = self.start + self.limit;
        match self
            .stdout
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            Ok(piece) => Ok(Some(piece)),
            Err(RecvTimeoutError::Disconnected) => Ok(None),
            Err(RecvTimeoutError::Timeout) => Err(GitError::Timeout {
                command: self.name.clone(),
                after: self.limit,
            }),
        }
    }

    /// Waits for git to finish (see [`Git::run`]).
    pub fn wait(mut self) -> Result<Output, GitError> {
        self.waited = true;
        let until = self.start + self.limit;
        let git = &self.git;
        let status = match git
            .exited
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            Ok(Ok(status)) => Some(status),
            Ok(Err(e)) => {
                kill_group(git.pgid);
                return Err(GitError::Spawn(e.to_string()));
            }
            Err(_) => {
                git.kill();
                None
            }
        };
        // The pipes close once every process holding them is gone: at once after the kill.
        // After a normal exit, something git started may linger with them; it gets until the
        // deadline, then its group is killed too.
        let drain_until = match status {
            Some(_) => until,
            None => Instant::now() + KILL_GRACE,
        };
        let mut output = collect(&self.stdout, &self.stderr, drain_until);
        if output.is_none() && status.is_some() {
            kill_group(git.pgid);
            output = collect(&self.stdout, &self.stderr, Instant::now() + KILL_GRACE);
            if output.is_none() {
                kill_group_now(git.pgid);
                output = collect(&self.stdout, &self.stderr, Instant::now() + KILL_GRACE);
            }
        }
        log::debug!(
            "git {} finished in {:.1} ms: {}",
            self.name,
            self.start.elapsed().as_secs_f64() * 1e3,
            match status.map(|s| s.code()) {
                Some(Some(code)) => format!("exit {code}"),
                Some(None) => "killed by a signal".to_owned(),
                None => "still running at the deadline".to_owned(),
            }
        );
        let (Some(status), Some((stdout, stderr))) = (status, output) else {
            return Err(GitError::Timeout {
                command: std::mem::take(&mut self.name),
                after: self.limit,
            });
        };
        Ok(Output {
            code: status.code(),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: redact(&String::from_utf8_lossy(&stderr)),
        })
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if !self.waited {
            self.git.kill();
        }
    }
}

/// A directory under `parent` removed when dropped.
pub struct TempDir(tempfile::TempDir);

impl TempDir {
    /// Creates `parent/<prefix><random>` (and `parent` when missing).
    pub fn new(parent: &Path, prefix: &str) -> std::io::Result<Self> {
        std::fs::create_dir_all(parent)?;
        tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(parent)
            .map(TempDir)
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        self.0.path()
    }
}

impl crate::base::error::ExitStatus for GitError {
    fn exit_code(&self) -> i32 {
        match self {
            GitError::Spawn(_)
            | GitError::TooOld { .. }
            | GitError::UnknownVersion { .. }
            | GitError::Timeout { .. } => crate::base::error::FAILURE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    /// The password of these tests: it must never survive redaction.
    const PW: &str = "s3cr3tpw";

    #[test]
    fn redacts_credentials() {
        assert_eq!(
            redact("fatal: unable to access 'https://alice:s3cret@example.com/r.git/': x"),
            "fatal: unable to access 'https://alice:***@example.com/r.git/': x"
        );
        assert_eq!(
            redact("https://ghp_TOKEN@github.com/o/r"),
            "https://***@github.com/o/r"
        );
        assert_eq!(
            redact("ssh://git@host/x and /local/path"),
            "ssh://git@host/x and /local/path"
        );
        assert_eq!(redact("no urls here"), "no urls here");
        assert_eq!(redact("git@github.com:o/r.git"), "git@github.com:o/r.git");
        assert_eq!(redact("/tmp/a:b@c/r.git"), "/tmp/a:b@c/r.git");
        assert_eq!(redact("see a@b.c"), "see a@b.c");
    }

    #[test]
    fn redacts_every_spelling_of_a_password() {
        let cases = [
            // (text, what must remain)
            (
                format!("'http://user:s3cr'{PW}@127.0.0.1:1/r.git/'"),
                "127.0.0.1:1/r.git/'",
            ),
            (format!("http://user:\"{PW}\"@h/r"), "user:***@h/r"),
            (
                format!("https://user:p@ss{PW}@example.com/r"),
                "user:***@example.com/r",
            ),
            (
                format!("https://user:a:b:{PW}@example.com"),
                "user:***@example.com",
            ),
            (
                format!("https://user:%40{PW}%3A@example.com/r"),
                "user:***@example.com/r",
            ),
            (
                format!("https://user%3A{PW}@example.com/r"),
                "user:***@example.com/r",
            ),
            (
                format!("http://user:{PW}@[::1]:8080/r.git"),
                "user:***@[::1]:8080/r.git",
            ),
            (
                format!("http://user:{PW}@[fe80::1%25eth0]/r"),
                "user:***@[fe80::1%25eth0]/r",
            ),
            (
                format!("user:{PW}@example.com:o/r.git"),
                "user:***@example.com:o/r.git",
            ),
            (
                format!("git://user:{PW}@127.0.0.1:1/r.git"),
                "user:***@127.0.0.1:1/r.git",
            ),
            (
                format!("ssh://git:{PW}@example.com:22/r.git"),
                "git:***@example.com:22/r.git",
            ),
            (format!("HTTPS://{PW}@example.com/r"), "***@example.com/r"),
            (
                format!("https://ghp_{PW}:x-oauth-basic@github.com/o/r"),
                "***@github.com/o/r",
            ),
            (
                format!("fatal: unable to look up user:{PW}@127.0.0.1 (port 1)"),
                "user:***@127.0.0.1 (port 1)",
            ),
            (
                format!("ssh: Could not resolve hostname user:{PW}@h: x"),
                "user:***@h: x",
            ),
            (
                format!("To http://u:{PW}@h/r\n! [rejected]\tx"),
                "u:***@h/r\n! [rejected]\tx",
            ),
        ];
        for (text, kept) in cases {
            let got = redact(&text);
            assert!(!got.contains(PW), "{text:?} -> {got:?}");
            assert!(
                got.ends_with(kept),
                "{text:?} -> {got:?}, expected to end {kept:?}"
            );
        }
    }

    #[test]
    fn a_whole_url_is_redacted_even_with_whitespace_in_the_password() {
        let url = format!("https://user:a {PW}@example.com/r.git");
        assert!(!redact_url(&url).contains(PW));
        assert!(matches!(
            redact_url("https://example.com/r.git"),
            Cow::Borrowed(_)
        ));
    }

    #[test]
    fn subcommand_skips_global_options() {
        let args = |a: &[&str]| a.iter().map(OsString::from).collect::<Vec<_>>();
        assert_eq!(
            subcommand(&args(&["-c", "a=b", "-C", "x", "push", "o"])),
            "push"
        );
        assert_eq!(subcommand(&args(&["--version"])), "--version");
        assert_eq!(
            limit_for("update-ref", Duration::from_secs(600)).as_secs(),
            600
        );
        assert!(limit_for("fetch", Duration::from_secs(7200)) <= network_timeout());
    }

    /// Runs the shell alias `script` with a deadline of `ms`; returns the result and how long
    /// the call took.
    fn run_script(script: &str, ms: u64) -> (Result<Output, GitError>, Duration) {
        let start = Instant::now();
        let result = Git::new(Path::new("."))
            .args(["-c", &format!("alias.script=!{script}"), "script"])
            .run(Duration::from_millis(ms));
        (result, start.elapsed())
    }

    #[test]
    fn deadline_kills() {
        let (result, _) = run_script("sleep 5", 200);
        assert!(matches!(result, Err(GitError::Timeout { .. })));
    }

    /// The output arrives as git writes it, the pieces make up the whole, and `wait` returns
    /// the result with what was not taken; a git that stalls mid-output still ends by the
    /// deadline.
    #[test]
    fn output_is_read_as_it_comes() {
        let script = |s: &str| {
            [
                "-c".to_owned(),
                format!("alias.script=!{s}"),
                "script".into(),
            ]
        };
        // git goes on only once the first piece was read (it waits for a file made then).
        let dir = tempfile::tempdir().unwrap();
        let mut git = Git::new(dir.path())
            .args(script(
                "printf one; until [ -e read ]; do sleep 0.01; done; printf two",
            ))
            .start(Duration::from_secs(60))
            .unwrap();
        assert_eq!(git.next_output().unwrap().as_deref(), Some(&b"one"[..]));
        std::fs::write(dir.path().join("read"), "").unwrap();
        assert_eq!(git.next_output().unwrap().as_deref(), Some(&b"two"[..]));
        assert_eq!(git.next_output().unwrap(), None);
        let out = git.wait().unwrap();
        assert!(out.success() && out.stdout.is_empty(), "{out:?}");

        let mut git = Git::new(Path::new("."))
            .args(script("printf one; sleep 30"))
            .start(Duration::from_millis(300))
            .unwrap();
        assert!(git.next_output().unwrap().is_some());
        let start = Instant::now();
        assert!(matches!(git.next_output(), Err(GitError::Timeout { .. })));
        drop(git);
        assert!(start.elapsed() < Duration::from_secs(10));
    }

    /// A grandchild that keeps the output pipes open (as `git-remote-http` does on a stalled
    /// server) is killed with git: the call ends at its deadline, not when the grandchild does.
    #[test]
    fn deadline_kills_the_whole_process_group() {
        let (result, took) = run_script("sleep 30 & sleep 30", 300);
        assert!(
            matches!(result, Err(GitError::Timeout { .. })),
            "{result:?}"
        );
        assert!(took < Duration::from_secs(10), "{took:?}");
    }

    /// git exits, but something it started in the background keeps its output pipes: the call
    /// still ends by its deadline (the lingering group is killed) with git's own result.
    #[test]
    fn a_lingering_descendant_cannot_hold_the_call() {
        let (result, took) = run_script("sleep 30 &", 500);
        assert!(result.unwrap().success());
        assert!(took < Duration::from_secs(10), "{took:?}");
    }
}
