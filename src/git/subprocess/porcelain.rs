//! What git prints, read: `git push --porcelain` per ref, whether standard error says the remote
//! could not be reached, and the line of it worth showing.

/// The line of git's stderr worth showing: the server's or ssh's own reason when there is one
/// (credentials wanted or refused, [`unauthenticated_line`]; ssh's `ssh: connect to host ...`
/// or `Host key verification failed.`), which git follows with a generic `fatal: Could not
/// read from remote repository.`; else the first `fatal:`/`error:` line, else the first
/// non-empty one.
pub fn first_error_line(stderr: &str) -> String {
    let ssh_says = |l: &&str| l.starts_with("ssh: ") || l.starts_with("Host key verification");
    unauthenticated_line(stderr)
        .or_else(|| {
            stderr
                .lines()
                .map(str::trim)
                .find(ssh_says)
                .map(str::to_owned)
        })
        .unwrap_or_else(|| first_git_error_line(stderr))
}

/// git's own first `fatal:`/`error:` line, else the first non-empty one.
fn first_git_error_line(stderr: &str) -> String {
    stderr
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("fatal:") || l.starts_with("error:"))
        .or_else(|| stderr.lines().map(str::trim).find(|l| !l.is_empty()))
        .unwrap_or("git failed without a message")
        .to_owned()
}

/// What `git push --porcelain` says became of one ref (its flag, and for a refusal its
/// summary).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PushStatus {
    /// ` `: fast-forwarded.
    FastForward,
    /// `+`: forced.
    Forced,
    /// `-`: deleted.
    Deleted,
    /// `*`: created.
    New,
    /// `=`: already at the value pushed.
    UpToDate,
    /// `!` because the remote has commits we lack (`non-fast-forward`, `fetch first`, `stale
    /// info`): recoverable by merging.
    RejectedNonFastForward,
    /// `!` `[remote rejected]`: a server hook or policy refused it.
    RemoteRejected,
    /// `!` for any other reason.
    Rejected,
}

impl PushStatus {
    /// The status of flag `flag` with summary `summary`; `None` for a flag git does not print.
    fn of(flag: char, summary: &str) -> Option<PushStatus> {
        Some(match flag {
            ' ' => PushStatus::FastForward,
            '+' => PushStatus::Forced,
            '-' => PushStatus::Deleted,
            '*' => PushStatus::New,
            '=' => PushStatus::UpToDate,
            '!' if ["non-fast-forward", "fetch first", "stale info"]
                .iter()
                .any(|s| summary.contains(s)) =>
            {
                PushStatus::RejectedNonFastForward
            }
            '!' if summary.contains("remote rejected") => PushStatus::RemoteRejected,
            '!' => PushStatus::Rejected,
            _ => return None,
        })
    }
}

/// One line of `git push --porcelain` output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PushedRef {
    /// What became of the ref.
    pub status: PushStatus,
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
        matches!(
            self.status,
            PushStatus::FastForward | PushStatus::New | PushStatus::UpToDate
        )
    }

    /// Whether the remote refused because it has commits we lack (recoverable by merging).
    pub fn non_fast_forward(&self) -> bool {
        self.status == PushStatus::RejectedNonFastForward
    }

    /// Whether a server hook or policy refused it (not recoverable by merging).
    pub fn remote_rejected(&self) -> bool {
        self.status == PushStatus::RemoteRejected
    }
}

/// Parses `git push --porcelain` standard output: one [`PushedRef`] per ref line (the `To`
/// and `Done` lines, and any other, are not refs).
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
            if flag_chars.next().is_some() {
                return None;
            }
            let status = PushStatus::of(flag, &summary)?;
            let (src, dst) = refs.split_once(':')?;
            Some(PushedRef {
                status,
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

/// What the server said in git's stderr (its `remote:` lines: a `pre-receive` hook's message,
/// a hosting policy's), the first few joined with `; `; `None` when it said nothing.
pub fn server_words(stderr: &str) -> Option<String> {
    const MOST: usize = 3;
    let words: Vec<&str> = stderr
        .lines()
        .filter_map(|l| l.strip_prefix("remote:"))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .take(MOST)
        .collect();
    (!words.is_empty()).then(|| words.join("; "))
}

/// What kind of trouble talking to a remote was, as people are told it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RemoteTrouble {
    /// The server wants credentials it was not given, or refused the ones it got.
    Unauthenticated,
    /// The server answered and refused (access rules, a hook, no such repository).
    Refused,
    /// The server could not be reached at all.
    Unreachable,
}

impl RemoteTrouble {
    /// What git's stderr (or the line of it shown) says the trouble was; `None` when it says
    /// none of these.
    pub fn of(stderr: &str) -> Option<Self> {
        // A repository that is not there ("does not appear to be a git repository") stays
        // unreachable: that is what a wrong path or URL is.
        const REFUSED: [&str; 4] = [
            "DENIED",
            "Access denied",
            "access denied",
            "The requested URL returned error: 403",
        ];
        if unauthenticated_line(stderr).is_some() {
            Some(RemoteTrouble::Unauthenticated)
        } else if server_words(stderr).is_some() || REFUSED.iter().any(|m| stderr.contains(m)) {
            Some(RemoteTrouble::Refused)
        } else if is_unreachable(stderr) {
            Some(RemoteTrouble::Unreachable)
        } else {
            None
        }
    }
}

impl std::fmt::Display for RemoteTrouble {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RemoteTrouble::Unauthenticated => "unauthenticated",
            RemoteTrouble::Refused => "refused",
            RemoteTrouble::Unreachable => "unreachable",
        })
    }
}

/// The server's limit on a push's size that `text` (git's stderr, or a refused ref's summary
/// with the server's words) says a push ran into, named for people: git's own
/// `receive.maxInputSize` (`pack exceeds maximum allowed size`), or a web server's limit on a
/// request's body (HTTP 413); `None` for any other failure.
pub fn size_limit(text: &str) -> Option<&'static str> {
    const BODY_LIMIT: [&str; 4] = [
        "HTTP 413",
        "returned error: 413",
        "Request Entity Too Large",
        "Payload Too Large",
    ];
    if text.contains("pack exceeds maximum allowed size") {
        Some("the server's receive.maxInputSize")
    } else if BODY_LIMIT.iter().any(|m| text.contains(m)) {
        Some("the web server's limit on a request's body, HTTP 413: Apache's LimitRequestBody, nginx's client_max_body_size")
    } else {
        None
    }
}

/// The line of git's stderr saying the remote wants credentials it was not given or refused
/// the ones it got (HTTP without stored credentials, ssh's own `Permission denied` line);
/// `None` for any other failure.
pub fn unauthenticated_line(stderr: &str) -> Option<String> {
    const MARKERS: [&str; 7] = [
        "could not read Username",
        "could not read Password",
        // git with `credential.interactive=never` (2.46 and newer)
        "unable to get password from user",
        "Authentication failed",
        "Permission denied (",
        "HTTP Basic: Access denied",
        "The requested URL returned error: 401",
    ];
    stderr
        .lines()
        .map(str::trim)
        .find(|l| MARKERS.iter().any(|m| l.contains(m)))
        .map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_trouble_is_classified() {
        let kind = |s: &str| RemoteTrouble::of(s);
        assert_eq!(
            kind("git@127.0.0.1: Permission denied (publickey).\nfatal: Could not read from remote repository."),
            Some(RemoteTrouble::Unauthenticated)
        );
        assert_eq!(
            kind("FATAL: R any acme/app alice DENIED by fallthru\nfatal: Could not read from remote repository."),
            Some(RemoteTrouble::Refused)
        );
        assert_eq!(
            kind("remote: policy: ask #infra\nfatal: Could not read from remote repository."),
            Some(RemoteTrouble::Refused)
        );
        assert_eq!(
            kind("ssh: connect to host 127.0.0.1 port 1: Connection refused\nfatal: Could not read from remote repository."),
            Some(RemoteTrouble::Unreachable)
        );
        assert_eq!(kind("error: something else"), None);
    }

    #[test]
    fn a_size_limit_is_named_in_either_shape() {
        // Captured from git 2.47: receive.maxInputSize (the server's words on a refused ref),
        // and a web server's 413.
        let max_input = "[remote rejected] (unpacker error) (the server said: fatal: pack exceeds maximum allowed size)";
        assert!(size_limit(max_input)
            .unwrap()
            .contains("receive.maxInputSize"));
        let body = "error: RPC failed; HTTP 413 curl 22 The requested URL returned error: 413\n\
                    send-pack: unexpected disconnect while reading sideband packet\n";
        assert!(size_limit(body).unwrap().contains("LimitRequestBody"));
        assert_eq!(
            size_limit("[remote rejected] (pre-receive hook declined)"),
            None
        );
    }

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
        assert!(r[0].landed() && r[0].status == PushStatus::New);
        assert!(r[1].landed() && r[1].status == PushStatus::FastForward);
        assert!(r[2].landed());
        assert!(!r[3].landed() && r[3].non_fast_forward() && !r[3].remote_rejected());
        assert!(r[4].remote_rejected() && !r[4].non_fast_forward());
        assert_eq!(r[0].dst, "refs/entire/checkpoints/f6/a1b2c3d4e5f6");
    }

    #[test]
    fn unreachable_markers() {
        assert!(is_unreachable(
            "fatal: unable to access 'https://x/': Could not resolve host: x"
        ));
        assert!(!is_unreachable("! [remote rejected] x (hook declined)"));
    }

    #[test]
    fn server_words_are_its_remote_lines() {
        let stderr = "remote: policy: no checkpoints here        \nremote: \n\
                      remote: ask #infra\nTo http://127.0.0.1:1/r.git\n\
                      error: failed to push some refs to 'http://127.0.0.1:1/r.git'\n";
        assert_eq!(
            server_words(stderr).as_deref(),
            Some("policy: no checkpoints here; ask #infra")
        );
        assert_eq!(server_words("error: failed to push some refs"), None);
    }

    // Captured from git 2.39 and OpenSSH 9.2 against servers on 127.0.0.1.
    #[test]
    fn unauthenticated_lines() {
        let http = "fatal: could not read Username for 'http://127.0.0.1:4000': terminal prompts disabled\n";
        assert_eq!(unauthenticated_line(http).as_deref(), Some(http.trim()));
        let ssh = "git@127.0.0.1: Permission denied (publickey).\r\n\
                   fatal: Could not read from remote repository.\n\n\
                   Please make sure you have the correct access rights\n";
        assert_eq!(
            unauthenticated_line(ssh).as_deref(),
            Some("git@127.0.0.1: Permission denied (publickey).")
        );
        assert_eq!(unauthenticated_line("fatal: Connection refused"), None);
        assert_eq!(
            first_error_line(ssh),
            "git@127.0.0.1: Permission denied (publickey)."
        );
        let refused = "ssh: connect to host 127.0.0.1 port 1: Connection refused\r\n\
                       fatal: Could not read from remote repository.\n";
        assert_eq!(
            first_error_line(refused),
            "ssh: connect to host 127.0.0.1 port 1: Connection refused"
        );
        assert_eq!(
            first_error_line("hint: x\nfatal: repository 'r' not found\n"),
            "fatal: repository 'r' not found"
        );
    }
}
