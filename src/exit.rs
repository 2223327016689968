//! Exit codes of the command-line contract (docs/cli.md). The codes and the [`ExitStatus`] trait
//! live in [`crate::base::error`]; each error type implements it next to its definition, except
//! the ones of `store` and `remote`, whose implementations are here until those layers take them.

use crate::base::error::ExitStatus;
use crate::remote::checkpoint_remote::CheckpointRemoteError;
use crate::remote::fetch::FetchError;
use crate::remote::push::PushError;
use crate::store::queue::QueueError;
use crate::store::registry::RegistryError;
use crate::store::StoreError;

use crate::base::error::{FAILURE, NOT_FOUND};

impl ExitStatus for StoreError {
    fn exit_code(&self) -> i32 {
        match self {
            StoreError::NotFound { .. } | StoreError::NotFoundAnywhere { .. } => NOT_FOUND,
            StoreError::SessionNotFound { .. }
            | StoreError::FileNotFound { .. }
            | StoreError::MissingSession { .. }
            | StoreError::AbsentBlob { .. }
            | StoreError::BadSessionPath { .. }
            | StoreError::SlotConflict { .. }
            | StoreError::CasExhausted { .. }
            | StoreError::UlidOnBranch { .. }
            | StoreError::Refused(_)
            | StoreError::Io(_) => FAILURE,
            StoreError::Corrupt { source, .. } => source.exit_code(),
            StoreError::Transcript { source, .. } => source.exit_code(),
            StoreError::Fetch(e) => e.exit_code(),
            StoreError::Repo(e) => e.exit_code(),
        }
    }
}

impl ExitStatus for QueueError {
    fn exit_code(&self) -> i32 {
        FAILURE
    }
}

impl ExitStatus for RegistryError {
    fn exit_code(&self) -> i32 {
        match self {
            RegistryError::AlreadyRegistered(_) => FAILURE,
        }
    }
}

impl ExitStatus for FetchError {
    fn exit_code(&self) -> i32 {
        match self {
            FetchError::Transport { .. }
            | FetchError::Skipped { .. }
            | FetchError::Local { .. } => FAILURE,
        }
    }
}

impl ExitStatus for CheckpointRemoteError {
    /// A refused remote from a settings file is a failure of the command (the same refusal of a
    /// command-line value, a bare `RemoteError`, is a usage error).
    fn exit_code(&self) -> i32 {
        match self {
            CheckpointRemoteError::Malformed { .. }
            | CheckpointRemoteError::UnknownProvider { .. }
            | CheckpointRemoteError::BadRepo { .. }
            | CheckpointRemoteError::EmptyUrl { .. }
            | CheckpointRemoteError::Refused { .. }
            | CheckpointRemoteError::Derived { .. }
            | CheckpointRemoteError::Code { .. }
            | CheckpointRemoteError::Credentials { .. } => FAILURE,
        }
    }
}

impl ExitStatus for PushError {
    fn exit_code(&self) -> i32 {
        match self {
            PushError::Queue(e) => e.exit_code(),
            PushError::Git(e) => e.exit_code(),
            PushError::Store(e) => e.exit_code(),
            PushError::Io(_) => FAILURE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::base::error::NOT_A_REPOSITORY;
    use crate::base::id::CheckpointId;
    use crate::git::repo::RepoError;
    use crate::topology::TopologyError;

    #[test]
    fn maps_through_wrappers() {
        let id = CheckpointId::parse("a1b2c3d4e5f6").unwrap();
        let nf = TopologyError::Store(StoreError::NotFound { id: id.clone() });
        assert_eq!(nf.exit_code(), NOT_FOUND);
        let repo = StoreError::Repo(RepoError::NotARepository("x".into()));
        assert_eq!(repo.exit_code(), NOT_A_REPOSITORY);
        let other = StoreError::Repo(RepoError::Git {
            context: "c".into(),
            source: git2::Error::from_str("m").into(),
        });
        assert_eq!(other.exit_code(), FAILURE);
        // Transparent wrappers follow the error they wrap.
        let push = PushError::Store(StoreError::NotFound { id });
        assert_eq!(push.exit_code(), NOT_FOUND);
        let doctor = crate::ops::doctor::DoctorError::Repo(RepoError::Unsupported("x".into()));
        assert_eq!(doctor.exit_code(), NOT_A_REPOSITORY);
    }
}
