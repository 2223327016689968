//! The one wrapper around the `git` binary, used for everything that touches the network.
//!
//! The network goes through real git so that the user's credential helpers, ssh config, proxies,
//! `pushurl` and `insteadOf` apply, and so that pushes report per-ref results. Every invocation
//! is non-interactive: no terminal prompts, stdin detached, OpenSSH in batch mode, a C locale
//! for parsing, and a deadline after which the process is killed.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::remote::Remote;

/// The oldest git whose output we parse (`git fetch --porcelain` appeared in 2.41).
pub const MIN_GIT_VERSION: (u32, u32) = (2, 41);

/// Errors running git.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` could not be started at all.
    #[error("cannot run git: {0}")]
    Spawn(String),
    /// git is older than [`MIN_GIT_VERSION`].
    #[error("git {found} is too old: version {}.{} or newer is required", MIN_GIT_VERSION.0, MIN_GIT_VERSION.1)]
    TooOld {
        /// The version git reported.
        found: String,
    },
    /// The deadline passed and the process was killed.
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
    /// Standard error, with credentials in URLs redacted.
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
}

fn ssh_command() -> String {
    // Respect an explicit user choice; otherwise OpenSSH must never prompt (a hook has no
    // terminal) and must give up on a dead host rather than hang.
    match std::env::var("GIT_SSH_COMMAND") {
        Ok(c) if !c.trim().is_empty() => {
            if c.contains("BatchMode") {
                c
            } else {
                format!("{c} -o BatchMode=yes")
            }
        }
        _ => "ssh -o BatchMode=yes -o ConnectTimeout=60".to_owned(),
    }
}

impl Git {
    /// `git` with the non-interactive environment, run in `dir`.
    pub fn new(dir: &Path) -> Self {
        let mut cmd = Command::new("git");
        cmd.current_dir(dir)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GCM_INTERACTIVE", "never")
            .env("LC_ALL", "C")
            .env("LANG", "C")
            .env("GIT_SSH_COMMAND", ssh_command())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        Git {
            cmd,
            args: Vec::new(),
            input: None,
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

    /// Runs to completion, killing git when `deadline` passes.
    pub fn run(mut self, deadline: Duration) -> Result<Output, GitError> {
        let name = self
            .args
            .iter()
            .find(|a| !a.to_string_lossy().starts_with('-'))
            .or(self.args.first())
            .map(|a| a.to_string_lossy().into_owned())
            .unwrap_or_default();
        self.cmd.args(&self.args);
        let shown: Vec<String> = self
            .args
            .iter()
            .map(|a| redact(&a.to_string_lossy()))
            .collect();
        log::debug!("run git {}", shown.join(" "));
        let mut child = self
            .cmd
            .spawn()
            .map_err(|e| GitError::Spawn(e.to_string()))?;
        if let (Some(bytes), Some(mut stdin)) = (self.input.take(), child.stdin.take()) {
            // A writer thread, so a git that answers while reading cannot deadlock with us.
            std::thread::spawn(move || {
                let _ = std::io::Write::write_all(&mut stdin, &bytes);
            });
        }
        let mut out_pipe = child.stdout.take();
        let mut err_pipe = child.stderr.take();
        let out_thread = std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(p) = out_pipe.as_mut() {
                let _ = p.read_to_end(&mut s);
            }
            s
        });
        let err_thread = std::thread::spawn(move || {
            let mut s = Vec::new();
            if let Some(p) = err_pipe.as_mut() {
                let _ = p.read_to_end(&mut s);
            }
            s
        });
        let start = Instant::now();
        // Poll quickly at first (most git calls here take a few milliseconds), then back off.
        let mut pause = Duration::from_micros(100);
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if start.elapsed() >= deadline => {
                    let _ = child.kill();
                    let _ = child.wait();
                    break None;
                }
                Ok(None) => {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(5));
                }
                Err(e) => return Err(GitError::Spawn(e.to_string())),
            }
        };
        let stdout = out_thread.join().unwrap_or_default();
        let stderr = err_thread.join().unwrap_or_default();
        log::debug!(
            "git {name} finished in {:.1} ms with {:?}",
            start.elapsed().as_secs_f64() * 1e3,
            status.and_then(|s| s.code())
        );
        let Some(status) = status else {
            return Err(GitError::Timeout {
                command: name,
                after: deadline,
            });
        };
        Ok(Output {
            code: status.code(),
            stdout: String::from_utf8_lossy(&stdout).into_owned(),
            stderr: redact(&String::from_utf8_lossy(&stderr)),
        })
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

/// Whether git's stderr says it does not know an option we pass (an old git).
pub fn is_unknown_option(stderr: &str) -> bool {
    stderr.contains("unknown option") || stderr.contains("unknown switch")
}

/// Checks that the `git` on `PATH` is new enough. Hot paths call it only after a git command
/// failed with [`is_unknown_option`], to turn that into a clear "git is too old" error.
pub fn check_version() -> Result<String, GitError> {
    let out = Git::new(Path::new("."))
        .args(["--version"])
        .run(Duration::from_secs(10))?;
    let found = out
        .stdout
        .trim()
        .trim_start_matches("git version ")
        .to_owned();
    match parse_version(&found) {
        Some(v) if v >= MIN_GIT_VERSION => Ok(found),
        _ => Err(GitError::TooOld { found }),
    }
}

fn parse_version(s: &str) -> Option<(u32, u32)> {
    let mut parts = s.split(['.', ' ', '-']);
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// Replaces the password (or token) of every `scheme://user:secret@host` URL in `text` with
/// `***`, and drops a bare `scheme://token@host` user part, so no credential reaches a terminal.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("://") {
        let (head, tail) = rest.split_at(pos + 3);
        out.push_str(head);
        let end = tail
            .find(|c: char| c.is_whitespace() || c == '/' || c == '\'' || c == '"')
            .unwrap_or(tail.len());
        let authority = &tail[..end];
        match authority.rfind('@') {
            Some(at) => {
                let user = &authority[..at];
                // Over HTTP a lone user part is usually a token; over ssh it is a login name.
                let scheme = head[..head.len() - 3]
                    .rsplit(|c: char| !c.is_ascii_alphanumeric() && c != '+')
                    .next()
                    .unwrap_or("");
                match user.split_once(':') {
                    Some((name, _)) => {
                        out.push_str(name);
                        out.push_str(":***@");
                    }
                    None if scheme.starts_with("http") => out.push_str("***@"),
                    None => {
                        out.push_str(user);
                        out.push('@');
                    }
                }
                out.push_str(&authority[at + 1..]);
            }
            None => out.push_str(authority),
        }
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
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
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates `parent/<prefix><random>`.
    pub fn new(parent: &Path, prefix: &str) -> std::io::Result<Self> {
        std::fs::create_dir_all(parent)?;
        for _ in 0..16 {
            let p = parent.join(format!("{prefix}{:016x}", rand::random::<u64>()));
            match std::fs::create_dir(&p) {
                Ok(()) => return Ok(TempDir(p)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(std::io::Error::other("could not create a unique temp dir"))
    }

    /// Its path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    }

    #[test]
    fn versions() {
        assert_eq!(parse_version("2.47.3"), Some((2, 47)));
        assert_eq!(parse_version("2.39.5 (Apple Git-154)"), Some((2, 39)));
        assert!(parse_version("2.39.5").unwrap() < MIN_GIT_VERSION);
        assert!(check_version().is_ok());
    }

    #[test]
    fn unreachable_markers() {
        assert!(is_unreachable(
            "fatal: unable to access 'https://x/': Could not resolve host: x"
        ));
        assert!(!is_unreachable("! [remote rejected] x (hook declined)"));
    }

    #[test]
    fn deadline_kills() {
        let err = Git::new(Path::new("."))
            .args(["-c", "alias.slow=!sleep 5", "slow"])
            .run(Duration::from_millis(200))
            .unwrap_err();
        assert!(matches!(err, GitError::Timeout { .. }));
    }
}
