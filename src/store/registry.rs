//! The backend registry (docs/configuration.md, "The topology"): the two built-in git-backed
//! stores, plus mirror-only backends registered by name. Only a git-backed backend can be the
//! primary, because push, fetch and every lifecycle path drive a ref in this repository.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::config::settings::ConfigSource;
use crate::git::repo::Repo;
use crate::store::fs::{FsMirror, FS_BACKEND};
use crate::store::{CheckpointWriter, StoreKind};

/// Builds a mirror-only backend from its settings `config`, read from `source` (a factory must
/// not let an untrusted source make it write outside the repository).
pub type MirrorFactory = for<'r> fn(
    &'r Repo,
    Option<&Value>,
    ConfigSource,
) -> Result<Box<dyn CheckpointWriter + 'r>, MirrorConfigError>;

/// Checks a mirror-only backend's settings `config` from the settings alone: no store is
/// opened, no file read, nothing built.
pub type MirrorCheck = fn(Option<&Value>) -> Result<(), MirrorConfigError>;

/// Why a mirror-only backend refused its settings: the factory's own error.
pub type MirrorConfigError = Box<dyn std::error::Error + Send + Sync>;

/// A mirror-only backend: how its settings are checked, and how it is built from them. `build`
/// refuses exactly the settings `check` refuses, with the same error, so that whether the
/// settings open a topology (and so which ID a new checkpoint gets) is known without building it.
#[derive(Clone, Copy)]
pub struct MirrorBackend {
    /// Checks the settings.
    pub check: MirrorCheck,
    /// Builds the backend.
    pub build: MirrorFactory,
}

/// Errors registering a backend.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistryError {
    /// The type name is taken (by a built-in or an earlier registration).
    #[error("checkpoint: backend type {0:?} already registered")]
    AlreadyRegistered(String),
}

impl crate::base::error::ExitStatus for RegistryError {
    fn exit_code(&self) -> i32 {
        match self {
            RegistryError::AlreadyRegistered(_) => crate::base::error::FAILURE,
        }
    }
}

/// What a type name resolves to.
pub enum Backend {
    /// A built-in git-backed store.
    Git(StoreKind),
    /// A mirror-only backend.
    MirrorOnly(MirrorBackend),
}

/// The set of backend types a topology may name.
pub struct Registry {
    mirror_only: BTreeMap<String, MirrorBackend>,
}

/// The fs mirror ([`FsMirror`]).
const FS: MirrorBackend = MirrorBackend {
    check: fs_check,
    build: fs_factory,
};

fn fs_check(config: Option<&Value>) -> Result<(), MirrorConfigError> {
    FsMirror::dir_setting(config)?;
    Ok(())
}

fn fs_factory<'r>(
    repo: &'r Repo,
    config: Option<&Value>,
    source: ConfigSource,
) -> Result<Box<dyn CheckpointWriter + 'r>, MirrorConfigError> {
    Ok(Box::new(FsMirror::from_config(repo, config, source)?))
}

impl Default for Registry {
    fn default() -> Self {
        Self::builtin()
    }
}

impl Registry {
    /// The built-in registry: `git-branch`, `git-refs`, and the `fs` mirror (registered through
    /// [`Registry::register`] like any other mirror-only backend).
    pub fn builtin() -> Self {
        let mut r = Registry {
            mirror_only: BTreeMap::new(),
        };
        r.register(FS_BACKEND, FS)
            .expect("the fs backend name is free in a new registry");
        r
    }

    /// Registers a mirror-only backend under `kind`.
    pub fn register(&mut self, kind: &str, backend: MirrorBackend) -> Result<(), RegistryError> {
        if self.lookup(kind).is_some() {
            return Err(RegistryError::AlreadyRegistered(kind.to_owned()));
        }
        self.mirror_only.insert(kind.to_owned(), backend);
        Ok(())
    }

    /// Resolves a type name.
    pub fn lookup(&self, kind: &str) -> Option<Backend> {
        match kind {
            "git-refs" => Some(Backend::Git(StoreKind::GitRefs)),
            "git-branch" => Some(Backend::Git(StoreKind::GitBranch)),
            other => self.mirror_only.get(other).map(|f| Backend::MirrorOnly(*f)),
        }
    }

    /// Every registered type name, sorted.
    pub fn names(&self) -> Vec<String> {
        let mut v: Vec<String> = ["git-branch", "git-refs"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        v.extend(self.mirror_only.keys().cloned());
        v.sort();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builtins_and_duplicates() {
        let mut r = Registry::builtin();
        assert_eq!(r.names(), vec!["fs", "git-branch", "git-refs"]);
        assert!(matches!(
            r.lookup("git-refs"),
            Some(Backend::Git(StoreKind::GitRefs))
        ));
        assert!(matches!(r.lookup("fs"), Some(Backend::MirrorOnly(_))));
        assert!(r.lookup("nope").is_none());
        assert_eq!(
            r.register("git-refs", FS).unwrap_err().to_string(),
            "checkpoint: backend type \"git-refs\" already registered"
        );
        assert!(r.register("fs", FS).is_err());
        r.register("other", FS).unwrap();
        assert_eq!(r.names().len(), 4);
    }
}
