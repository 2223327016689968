//! Adding what was being done to an error, for the commands that report their own steps.

use super::error::{CliError, Result};

/// Adds what was being done to an error, or turns a missing value into a failure.
pub trait Context<T> {
    /// With `context` as what was being done.
    fn context(self, context: impl Into<String>) -> Result<T>;
    /// With the context `f` makes, only on error.
    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T>;
}

impl<T, E: Into<CliError>> Context<T> for std::result::Result<T, E> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.with_context(|| context)
    }

    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T> {
        self.map_err(|e| CliError::from((f().into(), e)))
    }
}

impl<T> Context<T> for Option<T> {
    fn context(self, context: impl Into<String>) -> Result<T> {
        self.ok_or_else(|| CliError::Failed(context.into()))
    }

    fn with_context<S: Into<String>>(self, f: impl FnOnce() -> S) -> Result<T> {
        self.ok_or_else(|| CliError::Failed(f().into()))
    }
}
