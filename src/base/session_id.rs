//! Agent session IDs. They name directories under the git common dir (staged sessions) and appear
//! in commit trailers, so anything that could escape a directory or break a trailer line is
//! rejected.

use std::fmt;

/// The longest session ID accepted.
pub const MAX_SESSION_ID_LEN: usize = 256;

/// The error for a session ID that is empty, too long, or could escape a path or a trailer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid session ID {input:?}: {reason}")]
pub struct InvalidSessionIdError {
    /// The rejected input.
    pub input: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// A validated session ID: 1–256 characters, no path separators, not `.` or `..`, no `..`
/// component, no whitespace at either end and no control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// Validates `s`.
    pub fn parse(s: &str) -> Result<Self, InvalidSessionIdError> {
        let fail = |reason| InvalidSessionIdError {
            input: s.to_owned(),
            reason,
        };
        if s.is_empty() {
            return Err(fail("must not be empty"));
        }
        if s.len() > MAX_SESSION_ID_LEN {
            return Err(fail("longer than 256 bytes"));
        }
        if s.contains(['/', '\\']) {
            return Err(fail("must not contain path separators"));
        }
        if s.contains("..") || s == "." {
            return Err(fail("must not contain \"..\" or be \".\""));
        }
        if s.chars().any(char::is_control) {
            return Err(fail("must not contain control characters"));
        }
        if s.trim() != s {
            return Err(fail("must not start or end with whitespace"));
        }
        Ok(SessionId(s.to_owned()))
    }

    /// The ID as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_real_ids() {
        for ok in ["sess-1", "2f1c9a0e-5b7d-4c1e-9f3a-000000000000", "a.b_c"] {
            assert!(SessionId::parse(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_escapes() {
        for bad in [
            "",
            "..",
            ".",
            "a/b",
            "a\\b",
            "x..y",
            "a\nb",
            " a",
            &"x".repeat(257),
        ] {
            assert!(SessionId::parse(bad).is_err(), "{bad:?}");
        }
    }
}
