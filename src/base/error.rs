//! What every error of the crate shares: its one-line rendering with all its sources, and the
//! exit code of the command-line contract (cli.md) it decides.
//!
//! Each error type of the library implements [`ExitStatus`] with an exhaustive `match`, so a new
//! variant cannot be added without deciding its code, and a wrapper delegates to the error it
//! wraps instead of hiding it.

use std::error::Error;

/// Success.
pub const SUCCESS: i32 = 0;
/// The operation failed.
pub const FAILURE: i32 = 1;
/// Usage error (bad flags or argument values).
pub const USAGE: i32 = 2;
/// The named checkpoint does not exist.
pub const NOT_FOUND: i32 = 3;
/// Not a git repository, or an unsupported one.
pub const NOT_A_REPOSITORY: i32 = 128;

/// The exit code an error decides for the command that failed with it (cli.md: 1 failure,
/// 2 usage, 3 not found, 128 not a repository).
pub trait ExitStatus {
    /// The exit code.
    fn exit_code(&self) -> i32;
}

/// An error and all its sources as one line, `outer: inner: innermost` (errors here keep their
/// source out of their own message, so nothing repeats).
pub fn error_chain(err: &(dyn Error + 'static)) -> String {
    let mut parts = vec![err.to_string()];
    let mut cur = err.source();
    while let Some(e) = cur {
        parts.push(e.to_string());
        cur = e.source();
    }
    parts.join(": ")
}

impl ExitStatus for crate::base::id::InvalidIdError {
    /// A checkpoint ID is an argument: a malformed one is a usage error.
    fn exit_code(&self) -> i32 {
        USAGE
    }
}

impl ExitStatus for crate::base::session_id::InvalidSessionIdError {
    /// A failure, as it always was (not a usage error, unlike a malformed checkpoint ID).
    fn exit_code(&self) -> i32 {
        FAILURE
    }
}

impl ExitStatus for crate::base::time::InvalidTimeError {
    /// A failure, as it always was (not a usage error, unlike a malformed checkpoint ID).
    fn exit_code(&self) -> i32 {
        FAILURE
    }
}

/// A file operation that failed, and what was being done: the one IO error of the library,
/// which each operation's error enum wraps (`Io(#[from] IoError)`).
#[derive(Debug, thiserror::Error)]
#[error("{context}")]
pub struct IoError {
    /// What was being done.
    pub context: String,
    /// The error.
    #[source]
    pub source: std::io::Error,
}

/// Maps an IO error to an [`IoError`] saying what was being done (`?` then converts it).
pub fn io_context(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> IoError {
    let context = context.into();
    move |source| IoError { context, source }
}
