//! Exit codes of the command-line contract (docs/cli.md), decided in one place from an error chain.

use std::error::Error;

use crate::base::id::InvalidIdError;
use crate::git::repo::RepoError;
use crate::git::url::RemoteError;
use crate::remote::checkpoint_remote::CheckpointRemoteError;
use crate::store::StoreError;
use crate::topology::TopologyError;

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

/// The exit code for an error: the first error in the chain that decides one wins.
pub fn code_for(err: &(dyn Error + 'static)) -> i32 {
    let mut cur: Option<&(dyn Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(code) = decided(e) {
            return code;
        }
        cur = e.source();
    }
    FAILURE
}

/// The code one error decides, looking through `#[error(transparent)]` wrappers (whose
/// `source()` skips the wrapped error itself).
fn decided(e: &(dyn Error + 'static)) -> Option<i32> {
    if let Some(r) = e.downcast_ref::<RepoError>() {
        return matches!(r, RepoError::NotARepository(_) | RepoError::Unsupported(_))
            .then_some(NOT_A_REPOSITORY);
    }
    if let Some(s) = e.downcast_ref::<StoreError>() {
        return match s {
            StoreError::NotFound { .. } | StoreError::NotFoundAnywhere { .. } => Some(NOT_FOUND),
            StoreError::Repo(r) => decided(r),
            _ => None,
        };
    }
    if let Some(t) = e.downcast_ref::<TopologyError>() {
        return match t {
            TopologyError::NoMatch(_) => Some(NOT_FOUND),
            TopologyError::Store(s) => decided(s),
            TopologyError::InvalidId(_) => Some(USAGE),
            _ => None,
        };
    }
    // A refused remote from a settings file is a failure of the command; the same refusal of a
    // command-line value (a bare `RemoteError`) is a usage error.
    if e.downcast_ref::<CheckpointRemoteError>().is_some() {
        return Some(FAILURE);
    }
    if e.downcast_ref::<RemoteError>().is_some() {
        return Some(USAGE);
    }
    e.downcast_ref::<InvalidIdError>().map(|_| USAGE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_through_wrappers() {
        let id = crate::base::id::CheckpointId::parse("a1b2c3d4e5f6").unwrap();
        let nf = TopologyError::Store(StoreError::NotFound { id });
        assert_eq!(code_for(&nf), NOT_FOUND);
        let repo = StoreError::Repo(RepoError::NotARepository("x".into()));
        assert_eq!(code_for(&repo), NOT_A_REPOSITORY);
        let other = StoreError::Repo(RepoError::Git {
            context: "c".into(),
            message: "m".into(),
        });
        assert_eq!(code_for(&other), FAILURE);
    }
}
