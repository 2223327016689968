//! What git is told to talk to: a configured remote's name, a URL or a path, validated so that
//! git can read it neither as an option nor as a command (docs/security.md).
//!
//! Values from a committed settings file are untrusted: whoever can push to the repository
//! writes them. git reads an argument that starts with `-` as an option (`--upload-pack=<cmd>`
//! runs `<cmd>`), a `<transport>::<address>` URL as a remote helper (`ext::sh -c ...` runs a
//! shell), and an ssh host that starts with `-` as an ssh option (`-oProxyCommand=...`). A
//! [`Remote`] can only be made by [`Remote::parse`], which refuses all of these, and the one git
//! wrapper puts it after `--` (`Git::remote` of the subprocess module), so no other spelling reaches git.

use std::borrow::Cow;
use std::fmt;
use std::path::Path;

/// The transports a `scheme://` URL may use. `ext::`, `fd::` and every other remote helper are
/// refused: they run programs chosen by the URL.
pub const ALLOWED_SCHEMES: [&str; 5] = ["https", "http", "ssh", "git", "file"];

/// The longest value accepted; git has no use for more and a huge value only costs.
pub const MAX_LEN: usize = 2048;

/// Why a value is not a remote git may be given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RemoteError {
    /// Nothing at all.
    #[error("it is empty")]
    Empty,
    /// Longer than [`MAX_LEN`].
    #[error("it is {0} bytes long (at most {MAX_LEN})")]
    TooLong(usize),
    /// A control character (newline, NUL, escape, ...).
    #[error("it contains a control character")]
    ControlCharacter,
    /// Leading or trailing white space (never silently trimmed: `"  --x"` is still an option).
    #[error("it starts or ends with white space")]
    Whitespace,
    /// It starts with `-`.
    #[error("it starts with '-', so git would read it as an option")]
    OptionLike,
    /// `<transport>::<address>`.
    #[error("remote helper transports ({0}::) run programs named by the URL and are not allowed")]
    Helper(String),
    /// A `scheme://` outside [`ALLOWED_SCHEMES`].
    #[error("transport {0:?} is not allowed (allowed: https, http, ssh, git, file)")]
    Scheme(String),
    /// A host or user part that starts with `-` (read by ssh as an option).
    #[error("its host or user part starts with '-', so ssh would read it as an option")]
    HostOptionLike,
}

/// A remote name, URL or path that git may be given (see the module documentation).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Remote(String);

impl Remote {
    /// Validates `value`: a configured remote's name, a `scheme://` URL with an allowed
    /// transport, an scp-like `[user@]host:path`, or a path; none of them option-like.
    pub fn parse(value: &str) -> Result<Self, RemoteError> {
        validate(value)?;
        Ok(Remote(value.to_owned()))
    }

    /// A local repository of ours at `path` (the partial cache). An absolute path cannot be
    /// read as an option or a transport.
    pub(crate) fn local(path: &Path) -> Result<Self, RemoteError> {
        let path = std::path::absolute(path).map_err(|_| RemoteError::Empty)?;
        Self::parse(&path.to_string_lossy())
    }

    /// The value as given to git.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Remote {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Remote {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Remote({:?})", redact(&self.0))
    }
}

impl fmt::Display for Remote {
    /// The value with credentials redacted.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&redact(&self.0))
    }
}

impl std::str::FromStr for Remote {
    type Err = RemoteError;

    fn from_str(s: &str) -> Result<Self, RemoteError> {
        Self::parse(s)
    }
}

/// A refused value as it may be shown in one line: escaped (control characters visible),
/// credentials redacted, and cut after 80 characters.
pub fn shown(value: &str) -> String {
    const SHOWN: usize = 80;
    let redacted = redact(value);
    let mut cut: String = redacted.chars().take(SHOWN).collect();
    if cut.len() < redacted.len() {
        cut.push_str("...");
    }
    format!("{cut:?}")
}

fn validate(value: &str) -> Result<(), RemoteError> {
    if value.is_empty() {
        return Err(RemoteError::Empty);
    }
    if value.len() > MAX_LEN {
        return Err(RemoteError::TooLong(value.len()));
    }
    if value.chars().any(char::is_control) {
        return Err(RemoteError::ControlCharacter);
    }
    if value.trim() != value {
        return Err(RemoteError::Whitespace);
    }
    if value.starts_with('-') {
        return Err(RemoteError::OptionLike);
    }
    // Never a real host; refused even where git would read the value as a path, so no reading
    // of it (git's, ssh's, a future git's) can see an option.
    if value.contains("@-") {
        return Err(RemoteError::HostOptionLike);
    }
    if let Some((scheme, rest)) = value.split_once("://") {
        // git treats "<helper>::<address>" before "scheme://" ("ext::ssh://...").
        if let Some((helper, _)) = scheme.split_once("::") {
            return Err(RemoteError::Helper(helper.to_owned()));
        }
        if !ALLOWED_SCHEMES.contains(&scheme) {
            return Err(RemoteError::Scheme(scheme.to_owned()));
        }
        let authority = rest.split('/').next().unwrap_or("");
        return check_authority(authority);
    }
    let before_slash = value.split('/').next().unwrap_or("");
    let host_part = before_slash
        .rsplit_once('@')
        .map_or(before_slash, |(_, h)| h);
    if host_part.starts_with('[') {
        // scp-like with a bracketed host ("[::1]:path"): its "::" is an address, not a helper.
        let authority = before_slash
            .find("]:")
            .map_or(before_slash, |i| &before_slash[..=i]);
        return check_authority(authority);
    }
    if let Some((helper, _)) = before_slash.split_once("::") {
        return Err(RemoteError::Helper(helper.to_owned()));
    }
    if let Some((host, _)) = before_slash.split_once(':') {
        return check_authority(host);
    }
    Ok(())
}

/// `[user@]host[:port]`: neither part may start with `-`, also once percent-decoded.
fn check_authority(authority: &str) -> Result<(), RemoteError> {
    let decoded = percent_encoding::percent_decode_str(authority)
        .decode_utf8_lossy()
        .into_owned();
    let (user, host) = match decoded.rsplit_once('@') {
        Some((u, h)) => (Some(u), h),
        None => (None, decoded.as_str()),
    };
    let host = host.strip_prefix('[').unwrap_or(host);
    if host.starts_with('-') || user.is_some_and(|u| u.starts_with('-')) {
        return Err(RemoteError::HostOptionLike);
    }
    if decoded.chars().any(char::is_control) {
        return Err(RemoteError::ControlCharacter);
    }
    Ok(())
}

/// Prefixes of forge tokens, which some URLs carry as the user name
/// (`https://<token>:x-oauth-basic@github.com/...`).
const TOKEN_PREFIXES: [&str; 7] = [
    "ghp_",
    "gho_",
    "ghu_",
    "ghs_",
    "ghr_",
    "github_pat_",
    "glpat-",
];

/// Replaces every credential in `text` with `***`, whatever the characters of the secret
/// (quotes, `:`, `@`, percent-encoding), so none reaches a terminal or a log:
///
/// - `scheme://user:secret@host` keeps the user name: `scheme://user:***@host`. The userinfo is
///   everything before the last `@` of the authority (which ends at the first `/`, `?` or `#`),
///   so IPv6 hosts (`[::1]`) and an `@` inside the password are handled.
/// - `http(s)://token@host` (a lone user part over HTTP is usually a token), and a user name
///   that is a known forge token, become `***@host`; `ssh://git@host` is a login and stays.
/// - A scheme-less `user:secret@host` (scp-like `user:secret@host:path`, or a host as git
///   prints it: `unable to look up user:secret@127.0.0.1`) becomes `user:***@host`. A local
///   path (a `/` before the first `:`) is left alone.
///
/// Words are separated by whitespace; a secret containing whitespace is only hidden by
/// [`redact_url`], which takes its whole input as one URL.
pub fn redact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for piece in text.split_inclusive(char::is_whitespace) {
        let word = piece.trim_end_matches(char::is_whitespace);
        out.push_str(&redact_url(word));
        out.push_str(&piece[word.len()..]);
    }
    out
}

/// [`redact`] for one URL, path or word, taken whole (whitespace included).
pub fn redact_url(word: &str) -> Cow<'_, str> {
    if let Some(pos) = word.find("://") {
        let head = &word[..pos];
        let scheme = head
            .rsplit(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.')))
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        let tail = &word[pos + 3..];
        let end = tail.find(['/', '?', '#']).unwrap_or(tail.len());
        let (authority, rest) = tail.split_at(end);
        let authority = redact_authority(authority, scheme.starts_with("http"));
        let rest = redact_url(rest);
        if matches!((&authority, &rest), (Cow::Borrowed(_), Cow::Borrowed(_))) {
            return Cow::Borrowed(word);
        }
        return Cow::Owned(format!("{}{authority}{rest}", &word[..pos + 3]));
    }
    match word.rfind('@') {
        Some(at) => {
            let userinfo = &word[..at];
            match password_start(userinfo).map(|end| &userinfo[..end]) {
                // A `/` before the password's separator makes it a local path.
                Some(name) if !name.contains('/') => {
                    Cow::Owned(format!("{name}:***{}", &word[at..]))
                }
                _ => Cow::Borrowed(word),
            }
        }
        None => Cow::Borrowed(word),
    }
}

/// Where the password of `userinfo` starts: the end of the user name, at the first `:`
/// (literal or percent-encoded).
fn password_start(userinfo: &str) -> Option<usize> {
    let colon = userinfo.find(':');
    let encoded = userinfo.to_ascii_lowercase().find("%3a");
    match (colon, encoded) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

/// The authority of a URL with its credentials redacted (see [`redact`]).
fn redact_authority(authority: &str, http: bool) -> Cow<'_, str> {
    let Some(at) = authority.rfind('@') else {
        return Cow::Borrowed(authority);
    };
    let (userinfo, host) = authority.split_at(at);
    let name = password_start(userinfo).map(|end| &userinfo[..end]);
    let token_name = |n: &str| TOKEN_PREFIXES.iter().any(|p| n.starts_with(p));
    match name {
        Some(n) if !token_name(n) => Cow::Owned(format!("{n}:***{host}")),
        Some(_) => Cow::Owned(format!("***{host}")),
        None if http || token_name(userinfo) => Cow::Owned(format!("***{host}")),
        None => Cow::Borrowed(authority),
    }
}

impl crate::base::error::ExitStatus for RemoteError {
    /// A refused remote named on the command line is a usage error (one from a settings file
    /// reaches the binaries wrapped in `CheckpointRemoteError`, a failure).
    fn exit_code(&self) -> i32 {
        match self {
            RemoteError::Empty
            | RemoteError::TooLong(_)
            | RemoteError::ControlCharacter
            | RemoteError::Whitespace
            | RemoteError::OptionLike
            | RemoteError::Helper(_)
            | RemoteError::Scheme(_)
            | RemoteError::HostOptionLike => crate::base::error::USAGE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_what_git_users_write() {
        for ok in [
            "origin",
            "upstream-2",
            "https://github.com/acme/r.git",
            "http://127.0.0.1:8080/r.git",
            "ssh://git@example.com:2222/acme/r.git",
            "git://example.com/r.git",
            "file:///srv/git/r.git",
            "git@github.com:acme/r.git",
            "example.com:r.git",
            "[::1]:r.git",
            "user@[fe80::1]:r.git",
            "ssh://[::1]:22/r.git",
            "/srv/git/r.git",
            "../r.git",
            "./-odd-name.git",
            "C:/repos/r.git",
        ] {
            assert!(Remote::parse(ok).is_ok(), "{ok:?}: {:?}", Remote::parse(ok));
        }
    }

    #[test]
    fn refuses_options_helpers_and_odd_bytes() {
        use RemoteError::*;
        for (bad, why) in [
            ("", Empty),
            ("--upload-pack=touch x;", OptionLike),
            ("-cprotocol.ext.allow=always", OptionLike),
            ("  --upload-pack=x", Whitespace),
            ("\t--upload-pack=x", ControlCharacter),
            ("origin ", Whitespace),
            ("ext::sh -c touch% x", Helper("ext".into())),
            ("fd::0", Helper("fd".into())),
            ("foo::bar", Helper("foo".into())),
            ("ext::ssh://h/r", Helper("ext".into())),
            ("gopher://example.com/r", Scheme("gopher".into())),
            ("HTTPS://example.com/r", Scheme("HTTPS".into())),
            ("ssh://-oProxyCommand=x/r", HostOptionLike),
            ("ssh://git@-oProxyCommand=x/r", HostOptionLike),
            ("ssh://%2doProxyCommand=x/r", HostOptionLike),
            ("ssh://-user@host/r", HostOptionLike),
            ("-oProxyCommand=x:r", OptionLike),
            ("git@-oProxyCommand=x:r", HostOptionLike),
            ("git@-oProxyCommand=touch /tmp/x:r", HostOptionLike),
            ("ssh://h/r\n--upload-pack=x", ControlCharacter),
            ("file:///r\0x", ControlCharacter),
            ("http://h/\u{1b}[31m", ControlCharacter),
            ("ssh://h%0a/r", ControlCharacter),
        ] {
            assert_eq!(Remote::parse(bad), Err(why), "{bad:?}");
        }
        assert_eq!(
            Remote::parse(&"a".repeat(MAX_LEN + 1)),
            Err(TooLong(MAX_LEN + 1))
        );
    }

    #[test]
    fn shown_is_one_escaped_line() {
        assert_eq!(shown("a\nb"), "\"a\\nb\"");
        assert!(shown(&"x".repeat(500)).len() < 100);
        assert!(!shown("https://u:pw@h/r").contains("pw"));
    }
}
