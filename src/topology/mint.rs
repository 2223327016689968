//! Minting the ID of a new checkpoint, in the primary's format, which the settings decide.

use super::open::plan;
use super::{Topology, TopologyError};
use crate::base::id::{CheckpointId, IdKind};
use crate::config::settings::SettingsFiles;
use crate::git::repo::Repo;
use crate::store::registry::Registry;
use crate::store::StoreKind;

/// Mints the ID of a new checkpoint in the configured primary's format; hex when the
/// configuration cannot be read (fail-soft, as hooks must never fail: docs/format.md,
/// "Checkpoint IDs"). No store is opened ([`id_kind`]).
pub fn mint_checkpoint_id(repo: &Repo) -> CheckpointId {
    CheckpointId::mint(id_kind(repo.settings()))
}

/// The format of a new checkpoint's ID: the primary's ([`StoreKind::id_kind`]) when the settings
/// open a topology, hex when [`Topology::open`] would fail. From the settings alone, checked as
/// opening checks them ([`plan`]): no store is opened, no remote looked at, no mirror built.
fn id_kind(files: &SettingsFiles) -> IdKind {
    files
        .checkpoints_config()
        .map_err(TopologyError::from)
        .and_then(|resolved| Ok(plan(&Registry::builtin(), files, &resolved, true)?.primary))
        .map_or(IdKind::Hex, StoreKind::id_kind)
}

impl<'r> Topology<'r> {
    /// Mints a new ID in the primary's format.
    pub fn mint_id(&self) -> CheckpointId {
        CheckpointId::mint(self.primary.id_kind())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kind decided from the settings alone is the one of the topology they open, hex when
    /// they open none: for settings that open one and for each way they can fail to.
    #[test]
    fn the_kind_from_the_settings_is_the_opened_primarys() {
        let cases: [(Option<&str>, Option<&str>, IdKind); 11] = [
            (None, None, IdKind::Hex),
            (
                Some(r#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#),
                None,
                IdKind::Ulid,
            ),
            (
                Some(r#"{"checkpoints": {"primary": {"type": "git-branch"}}}"#),
                None,
                IdKind::Hex,
            ),
            (
                Some(
                    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"type": "fs"}]}}"#,
                ),
                None,
                IdKind::Ulid,
            ),
            (
                Some(
                    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dri": "x"}}]}}"#,
                ),
                None,
                IdKind::Hex,
            ),
            (
                Some(
                    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "nope"}]}}"#,
                ),
                None,
                IdKind::Hex,
            ),
            (
                Some(
                    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-refs"}]}}"#,
                ),
                None,
                IdKind::Hex,
            ),
            (
                Some(r#"{"checkpoints": {"primary": {"type": "fs"}}}"#),
                None,
                IdKind::Hex,
            ),
            (
                Some(
                    r#"{"checkpoints": {"primary": {"type": "git-refs"}}, "redaction": {"rules": [{"name": "x", "pattern": "("}]}}"#,
                ),
                None,
                IdKind::Hex,
            ),
            (
                Some(
                    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": 1}]}}"#,
                ),
                None,
                IdKind::Hex,
            ),
            // The committed file's mirror outside git awaits approval: left out, not checked.
            (
                None,
                Some(
                    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": 1}]}}"#,
                ),
                IdKind::Ulid,
            ),
        ];
        for (local, committed, kind) in cases {
            let (dir, _) = crate::git::test_repo::init();
            if let Some(text) = local {
                let path = crate::config::settings::local_path(&dir.path().join(".git"));
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(path, text).unwrap();
            }
            if let Some(text) = committed {
                std::fs::create_dir_all(dir.path().join(".entire")).unwrap();
                std::fs::write(dir.path().join(".entire/settings.json"), text).unwrap();
            }
            let repo = Repo::open(dir.path()).unwrap();
            let opened = Topology::open(&repo).map_or(IdKind::Hex, |t| t.primary().id_kind());
            assert_eq!(id_kind(repo.settings()), opened, "{local:?} {committed:?}");
            assert_eq!(opened, kind, "{local:?} {committed:?}");
        }
    }
}
