//! The one wrapper around the `git` binary, used for everything that touches the network.
//!
//! The network goes through real git so that the user's credential helpers, ssh config, proxies,
//! `pushurl` and `insteadOf` apply, and so that pushes report per-ref results. Every invocation
//! is non-interactive: no terminal prompts, stdin detached, OpenSSH in batch mode, a C locale
//! for parsing, and a deadline after which the process is killed.
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

use std::ffi::OsString;
use std::io::Read;
use std::marker::PhantomData;
use std::ops::RangeInclusive;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use crate::git::url::Remote;
use crate::git::url::{redact, redact_url};
use crate::git::version::{BinaryId, GitVersion, VersionMemo, MIN_GIT_VERSION};

/// Environment variable: the most seconds one network git call of an interactive command may
/// take (whole seconds within [`NETWORK_TIMEOUT_RANGE`]).
pub const ENV_NETWORK_TIMEOUT: &str = "ENTIRE_NETWORK_TIMEOUT_SECONDS";
/// The network timeout when [`ENV_NETWORK_TIMEOUT`] is unset.
pub const DEFAULT_NETWORK_TIMEOUT: Duration = Duration::from_secs(120);
/// The values [`ENV_NETWORK_TIMEOUT`] accepts, in seconds; others are clamped into it.
pub const NETWORK_TIMEOUT_RANGE: RangeInclusive<u64> = 1..=3600;
/// The git subcommands that talk to a remote, bounded by [`network_timeout`] and the network
/// deadline.
pub const NETWORK_SUBCOMMANDS: [&str; 6] = [
    "push",
    "fetch",
    "ls-remote",
    "fetch-pack",
    "send-pack",
    "clone",
];
/// OpenSSH's connect timeout when the deadline leaves more time than this.
const MAX_SSH_CONNECT: Duration = Duration::from_secs(60);
/// How long the output of a killed process group may take to close.
const KILL_GRACE: Duration = Duration::from_secs(2);

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
    #[error("git {command} did not finish within {}s", .after.as_secs())]
    Timeout {
        /// The subcommand.
        command: String,
        /// The deadline.
        after: Duration,
    },
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
    /// Whether starting it first makes sure git is new enough ([`require_supported`]); only
    /// the `git --version` that finds out is not.
    gated: bool,
}

/// `seconds` clamped into `range`, as a duration.
pub fn clamped_seconds(seconds: u64, range: RangeInclusive<u64>) -> Duration {
    Duration::from_secs(seconds.clamp(*range.start(), *range.end()))
}

/// A whole number of seconds from the environment variable `name`, clamped into `range`;
/// `None` when unset. A value that is not a whole number is ignored with a logged warning.
pub fn env_seconds(name: &str, range: RangeInclusive<u64>) -> Option<Duration> {
    let raw = std::env::var(name).ok()?;
    match raw.trim().parse::<u64>() {
        Ok(s) => Some(clamped_seconds(s, range)),
        Err(_) => {
            log::warn!("ignoring {name}={raw:?}: not a whole number of seconds");
            None
        }
    }
}

/// The most one network git call may take: [`ENV_NETWORK_TIMEOUT`], else
/// [`DEFAULT_NETWORK_TIMEOUT`]. Read once per process.
pub fn network_timeout() -> Duration {
    static TIMEOUT: OnceLock<Duration> = OnceLock::new();
    *TIMEOUT.get_or_init(|| {
        env_seconds(ENV_NETWORK_TIMEOUT, NETWORK_TIMEOUT_RANGE).unwrap_or(DEFAULT_NETWORK_TIMEOUT)
    })
}

static NETWORK_DEADLINE: OnceLock<Instant> = OnceLock::new();

/// Ends every network git call this process starts by `at` at the latest (a hook's budget).
/// The first call wins; later ones are ignored.
pub fn set_network_deadline(at: Instant) {
    let _ = NETWORK_DEADLINE.set(at);
}

/// The deadline set by [`set_network_deadline`], if any.
pub fn network_deadline() -> Option<Instant> {
    NETWORK_DEADLINE.get().copied()
}

/// The process groups of the git processes running now, and whether the process is going down.
struct Live {
    groups: Vec<i32>,
    terminating: bool,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    groups: Vec::new(),
    terminating: false,
});

fn live() -> std::sync::MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Kills every process group in `group` (SIGKILL to `-pgid`).
fn kill_group(pgid: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions; a negative pid names a process group.
    unsafe {
        libc::kill(-pgid, libc::SIGKILL);
    }
}

/// Kills every git process this process started that is still running, with everything they
/// started, and makes later spawns fail. For a SIGINT/SIGTERM handler: git runs in process
/// groups of its own, which the terminal's Ctrl-C does not reach.
pub fn kill_live_groups() {
    let mut live = live();
    live.terminating = true;
    for &g in &live.groups {
        kill_group(g);
    }
}

/// Makes the child killed when this process dies, even by SIGKILL, which no handler sees: in its
/// own process group, git no longer dies with ours (Linux only; elsewhere the deadline and the
/// signal handler are all there is).
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe calls
    // (prctl, getppid, _exit). The death signal follows the spawning thread, which waits for the
    // child in `Git::run` and so outlives it.
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl: nobody would ever kill this git.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// A spawned git, its process group registered while it lives.
struct Tracked {
    pgid: i32,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    /// The leader's exit status, sent by the thread that reaps it.
    exited: Receiver<std::io::Result<ExitStatus>>,
}

impl Tracked {
    /// Spawns `cmd` as the leader of a new process group and registers the group. Spawning and
    /// registering happen under the registry lock, so a signal handler's [`kill_live_groups`]
    /// either sees the group or prevents the spawn. A thread waits for the leader, so that the
    /// caller hears of its exit at once (no polling) or not at all before its deadline.
    fn spawn(cmd: &mut Command) -> Result<Self, GitError> {
        let mut live = live();
        if live.terminating {
            return Err(GitError::Spawn("the process is terminating".into()));
        }
        cmd.process_group(0);
        die_with_parent(cmd);
        let mut child = cmd.spawn().map_err(|e| GitError::Spawn(e.to_string()))?;
        let pgid = i32::try_from(child.id()).map_err(|e| GitError::Spawn(e.to_string()))?;
        live.groups.push(pgid);
        Ok(Tracked {
            pgid,
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
            exited: reap_in_thread(child, pgid),
        })
    }

    /// Kills the group and waits until the leader is reaped.
    fn kill(&self) {
        kill_group(self.pgid);
        let _ = self.exited.recv();
    }
}

/// Waits for `child`, the leader of group `pgid`, in a thread: once it has exited (still
/// unreaped, so that its process id, which is the group id, cannot be reused meanwhile), the
/// group is unregistered, then the leader reaped and its status sent.
fn reap_in_thread(mut child: Child, pgid: i32) -> Receiver<std::io::Result<ExitStatus>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        wait_unreaped(pgid);
        live().groups.retain(|&g| g != pgid);
        let _ = tx.send(child.wait());
    });
    rx
}

/// Blocks until process `pid` (a child of this process) has exited, without reaping it.
fn wait_unreaped(pid: i32) {
    let Ok(id) = libc::id_t::try_from(pid) else {
        return;
    };
    loop {
        // SAFETY: waitid(2) writes only into `info`, a zeroed siginfo_t we own.
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT)
        };
        if rc == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Reads `pipe` to its end in a thread, sending what each read returns; the channel closes
/// once every writer is gone.
fn read_in_thread(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Some(mut p) = pipe else { return };
        // A pipe gives at most 64 KiB a read.
        let mut buf = vec![0; 64 << 10];
        loop {
            match p.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    });
    rx
}

/// The rest of what `pipe`'s reader sends, if it finishes by `until`.
fn drain(pipe: &Receiver<Vec<u8>>, until: Instant) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    loop {
        match pipe.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(piece) if bytes.is_empty() => bytes = piece,
            Ok(piece) => bytes.extend_from_slice(&piece),
            Err(RecvTimeoutError::Disconnected) => return Some(bytes),
            Err(RecvTimeoutError::Timeout) => return None,
        }
    }
}

/// Both outputs, if their readers finish by `until`.
fn collect(
    out: &Receiver<Vec<u8>>,
    err: &Receiver<Vec<u8>>,
    until: Instant,
) -> Option<(Vec<u8>, Vec<u8>)> {
    Some((drain(out, until)?, drain(err, until)?))
}

/// The user's `GIT_SSH_COMMAND`, read once.
fn user_ssh_command() -> Option<&'static str> {
    static CMD: OnceLock<Option<String>> = OnceLock::new();
    CMD.get_or_init(|| {
        std::env::var("GIT_SSH_COMMAND")
            .ok()
            .filter(|c| !c.trim().is_empty())
    })
    .as_deref()
}

/// The ssh command of a git call that must end within `limit`. An explicit user choice is
/// respected; OpenSSH must never prompt (a hook has no terminal) and must give up connecting to
/// a dead host before the deadline kills it (so the error says why).
fn ssh_command(limit: Duration) -> String {
    let connect = limit.min(MAX_SSH_CONNECT).as_secs().max(1);
    let Some(user) = user_ssh_command() else {
        return format!("ssh -o BatchMode=yes -o ConnectTimeout={connect}");
    };
    let mut c = user.to_owned();
    if !c.contains("BatchMode") {
        c.push_str(" -o BatchMode=yes");
    }
    let program = c.split_whitespace().next().unwrap_or("");
    let is_openssh = Path::new(program).file_name().is_some_and(|n| n == "ssh");
    if is_openssh && !c.contains("ConnectTimeout") {
        c.push_str(&format!(" -o ConnectTimeout={connect}"));
    }
    c
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

/// The deadline of a call of `subcommand` asked to end within `deadline`: network calls are
/// bounded further by [`network_timeout`] and the process's network deadline.
fn limit_for(subcommand: &str, deadline: Duration) -> Duration {
    if !NETWORK_SUBCOMMANDS.contains(&subcommand) {
        return deadline;
    }
    let limit = deadline.min(network_timeout());
    match network_deadline() {
        Some(at) => limit.min(at.saturating_duration_since(Instant::now())),
        None => limit,
    }
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
    /// now).
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
        self.cmd
            .args(&self.args)
            .env("GIT_SSH_COMMAND", ssh_command(limit));
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

/// The line of git's stderr worth showing: the first `fatal:`/`error:` line, else the first
/// non-empty one.
pub fn first_error_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| stderr.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("git failed without a message")
        .to_owned()
}

/// The git this process runs, found once: the `git` of `GIT_EXEC_PATH` when it has one (git sets
/// it for the hooks and subcommands it runs, so that a hook runs the git that runs the hook,
/// even when a hook manager or a GUI client changed `PATH`), else the first `git` on `PATH`, as
/// an absolute path. Just `git` when neither has one (spawning it then fails and says so).
pub fn program() -> &'static Path {
    static PROGRAM: OnceLock<std::path::PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        find_program(std::env::var_os("GIT_EXEC_PATH"), std::env::var_os("PATH"))
            .unwrap_or_else(|| "git".into())
    })
}

/// Where [`program`] finds git, given `GIT_EXEC_PATH` and `PATH`.
fn find_program(exec_path: Option<OsString>, path: Option<OsString>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let from_exec = exec_path
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(&d).join("git"));
    let on_path = path
        .iter()
        .flat_map(std::env::split_paths)
        // An empty entry is the current directory, as for execvp.
        .map(|d| match d.as_os_str().is_empty() {
            true => Path::new(".").join("git"),
            false => d.join("git"),
        });
    from_exec
        .into_iter()
        .chain(on_path)
        .find(|p| runnable(p))
        .and_then(|p| std::path::absolute(p).ok())
}

/// The version of [`program`], found once per process: from the user's memo of their git
/// binaries when this binary is in it, else by asking it (`git --version`, remembered then).
pub fn version() -> Result<GitVersion, GitError> {
    static VERSION: OnceLock<Result<GitVersion, GitError>> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            let program = program();
            let memo = VersionMemo::of_user();
            let id = BinaryId::of(program);
            let remembered = match (&memo, &id) {
                (Some(memo), Some(id)) => memo.recall(program, id),
                _ => None,
            };
            let text = match remembered {
                Some(text) => text,
                None => {
                    let text = ask_version()?;
                    if let (Some(memo), Some(id)) = (&memo, &id) {
                        if GitVersion::parse(&text).is_some() {
                            memo.remember(program, id, &text);
                        }
                    }
                    text
                }
            };
            GitVersion::parse(&text).ok_or_else(|| GitError::UnknownVersion {
                text,
                program: program.to_owned(),
            })
        })
        .clone()
}

/// What `git --version` prints, without its `git version ` prefix.
fn ask_version() -> Result<String, GitError> {
    let mut git = Git::new(Path::new("/")).args(["--version"]);
    git.gated = false;
    let out = git.run(Duration::from_secs(10))?;
    let text = out.stdout.trim();
    Ok(text.strip_prefix("git version ").unwrap_or(text).to_owned())
}

/// The version of [`program`] when it is one we support ([`MIN_GIT_VERSION`] or newer), else
/// [`GitError::TooOld`] naming it, the version it is and the version needed. Every git call
/// checks it before it starts; commands that must not write anything with an old git call it
/// first.
pub fn require_supported() -> Result<GitVersion, GitError> {
    let v = version()?;
    if v.is_supported() {
        return Ok(v);
    }
    Err(GitError::TooOld {
        found: v.to_string(),
        program: program().to_owned(),
    })
}

/// The pager git would start for `git <command>` run in `dir`, by git's rules:
/// `pager.<command>` (`false` turns paging off, `true` keeps the default, any other value is the
/// pager), else `git var GIT_PAGER` (`GIT_PAGER`, `core.pager`, `PAGER`, else `less`). `None`
/// when that is no pager (`false`, empty, `cat`) or git cannot say.
pub fn pager_for(dir: &Path, command: &str) -> Option<String> {
    let budget = Duration::from_secs(10);
    let key = format!("pager.{command}");
    let configured = Git::new(dir)
        .args(["config", "--type=bool-or-str", "--get", &key])
        .run(budget)
        .ok()
        .filter(Output::success)
        .map(|o| o.stdout.trim().to_owned());
    let pager = match configured.as_deref() {
        Some("false") => return None,
        Some("true") | None => Git::new(dir)
            .args(["var", "GIT_PAGER"])
            .run(budget)
            .ok()
            .filter(Output::success)?
            .stdout
            .trim()
            .to_owned(),
        Some(other) => other.to_owned(),
    };
    (!pager.is_empty() && pager != "cat").then_some(pager)
}

/// One line of `git push --porcelain` output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedRef {
    /// The status flag: ` ` fast-forward, `+` forced, `-` deleted, `*` new, `!` rejected,
    /// `=` up to date.
    pub flag: char,
    /// The local side of the refspec.
    pub src: String,
    /// The remote ref.
    pub dst: String,
    /// The summary, e.g. `[rejected] (non-fast-forward)` or `[new reference]`.
    pub summary: String,
}

impl PushedRef {
    /// Whether the remote now has the ref at the value pushed.
    pub fn landed(&self) -> bool {
        matches!(self.flag, ' ' | '*' | '=')
    }

    /// Whether the remote refused because it has commits we lack (recoverable by merging).
    pub fn non_fast_forward(&self) -> bool {
        self.flag == '!'
            && (self.summary.contains("non-fast-forward")
                || self.summary.contains("fetch first")
                || self.summary.contains("stale info"))
    }

    /// Whether a server hook or policy refused it (not recoverable by merging).
    pub fn remote_rejected(&self) -> bool {
        self.flag == '!' && self.summary.contains("remote rejected")
    }
}

/// Parses `git push --porcelain` standard output.
pub fn parse_push_porcelain(stdout: &str) -> Vec<PushedRef> {
    stdout
        .lines()
        .filter_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let flag_field = fields.next()?;
            let refs = fields.next()?;
            let summary = fields.next().unwrap_or("").to_owned();
            let mut flag_chars = flag_field.chars();
            let flag = flag_chars.next()?;
            if flag_chars.next().is_some() || !" +-*!=".contains(flag) {
                return None;
            }
            let (src, dst) = refs.split_once(':')?;
            Some(PushedRef {
                flag,
                src: src.to_owned(),
                dst: dst.to_owned(),
                summary,
            })
        })
        .collect()
}

/// Whether git's stderr says the remote could not be reached at all (as opposed to a refusal).
pub fn is_unreachable(stderr: &str) -> bool {
    const MARKERS: [&str; 11] = [
        "Could not resolve host",
        "Could not read from remote repository",
        "does not appear to be a git repository",
        "Connection refused",
        "Connection timed out",
        "Failed to connect",
        "No route to host",
        "unable to access",
        "Name or service not known",
        "Temporary failure in name resolution",
        "Network is unreachable",
    ];
    MARKERS.iter().any(|m| stderr.contains(m))
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

    // Captured from git 2.47 pushing to a local bare remote with one new ref, one fast-forward,
    // one up-to-date, one non-fast-forward and one refused by a pre-receive hook.
    const CAPTURED: &str = "To /tmp/remote.git\n\
*\trefs/entire/checkpoints/f6/a1b2c3d4e5f6:refs/entire/checkpoints/f6/a1b2c3d4e5f6\t[new reference]\n \
\trefs/entire/checkpoints/a1/f6e5d4c3b2a1:refs/entire/checkpoints/a1/f6e5d4c3b2a1\t4b825dc..1e2f3a4\n\
=\trefs/entire/checkpoints/ZN/01KVBJCWYA4YW6J5M9GP655HZN:refs/entire/checkpoints/ZN/01KVBJCWYA4YW6J5M9GP655HZN\t[up to date]\n\
!\trefs/entire/checkpoints/00/aaaaaaaaaa00:refs/entire/checkpoints/00/aaaaaaaaaa00\t[rejected] (non-fast-forward)\n\
!\trefs/entire/checkpoints/11/bbbbbbbbbb11:refs/entire/checkpoints/11/bbbbbbbbbb11\t[remote rejected] (pre-receive hook declined)\n\
Done\n";

    #[test]
    fn parses_captured_porcelain() {
        let r = parse_push_porcelain(CAPTURED);
        assert_eq!(r.len(), 5);
        assert!(r[0].landed() && r[0].flag == '*');
        assert!(r[1].landed() && r[1].flag == ' ');
        assert!(r[2].landed());
        assert!(!r[3].landed() && r[3].non_fast_forward() && !r[3].remote_rejected());
        assert!(r[4].remote_rejected() && !r[4].non_fast_forward());
        assert_eq!(r[0].dst, "refs/entire/checkpoints/f6/a1b2c3d4e5f6");
    }

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

    #[test]
    fn ssh_gives_up_connecting_within_the_deadline() {
        if user_ssh_command().is_none() {
            assert_eq!(
                ssh_command(Duration::from_secs(3)),
                "ssh -o BatchMode=yes -o ConnectTimeout=3"
            );
            assert!(ssh_command(Duration::from_secs(600)).ends_with("ConnectTimeout=60"));
            assert!(ssh_command(Duration::from_millis(10)).ends_with("ConnectTimeout=1"));
        }
    }

    #[test]
    fn the_git_on_path_is_supported() {
        assert!(require_supported().is_ok_and(|v| v.is_supported()));
        assert!(program().is_absolute());
    }

    /// A hook runs the git that runs it: `GIT_EXEC_PATH`'s when it has one, else `PATH`'s.
    #[test]
    fn finds_the_git_that_runs_us() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let make = |sub: &str, mode: u32| {
            let d = dir.path().join(sub);
            std::fs::create_dir_all(&d).unwrap();
            let git = d.join("git");
            std::fs::write(&git, "").unwrap();
            std::fs::set_permissions(&git, std::fs::Permissions::from_mode(mode)).unwrap();
            d
        };
        let exec = make("libexec", 0o755);
        let first = make("first", 0o644);
        let second = make("second", 0o755);
        let path = std::env::join_paths([&first, &second]).unwrap();
        let found =
            |e: Option<&Path>| find_program(e.map(|p| p.as_os_str().into()), Some(path.clone()));
        assert_eq!(found(Some(&exec)), Some(exec.join("git")));
        // Not executable: skipped, as execvp does.
        assert_eq!(found(None), Some(second.join("git")));
        assert_eq!(
            found(Some(&dir.path().join("none"))),
            Some(second.join("git"))
        );
        assert_eq!(find_program(None, None), None);
    }

    #[test]
    fn unreachable_markers() {
        assert!(is_unreachable(
            "fatal: unable to access 'https://x/': Could not resolve host: x"
        ));
        assert!(!is_unreachable("! [remote rejected] x (hook declined)"));
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
