//! Exit codes of the command-line contract (cli.md), decided in one place from an error chain.

use std::error::Error;

use crate::id::InvalidIdError;
use crate::repo::RepoError;
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

/// The exit code for an error: the first error in the chain that decides one wins.
pub fn code_for(err: &(dyn Error + 'static)) -> i32 {
    let mut cur: Option<&(dyn Error + 'static)> = Some(err);
    while let Some(e) = cur {
        if let Some(r) = e.downcast_ref::<RepoError>() {
            if matches!(r, RepoError::NotARepository(_) | RepoError::Unsupported(_)) {
                return NOT_A_REPOSITORY;
            }
        }
        if let Some(StoreError::NotFound { .. }) = e.downcast_ref::<StoreError>() {
            return NOT_FOUND;
        }
        if let Some(TopologyError::NoMatch(_)) = e.downcast_ref::<TopologyError>() {
            return NOT_FOUND;
        }
        if e.downcast_ref::<InvalidIdError>().is_some() {
            return USAGE;
        }
        cur = e.source();
    }
    FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_through_wrappers() {
        let id = crate::id::CheckpointId::parse("a1b2c3d4e5f6").unwrap();
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
