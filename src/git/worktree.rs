//! What git knows about files of the work tree: whether it tracks or ignores them, and, for the
//! settings files ([`SettingsContext`]), the approval of the committed one, recorded in the
//! repository's local git config by `git entire-checkpoint trust`.

use std::path::Path;

use crate::config::settings::{
    foreign_settings_dir, ForeignDir, SettingsContext, Tracked, TRUST_KEY,
};
use crate::git::repo::{git_err, Repo, RepoError};

/// The skip-worktree bit of an index entry's extended flags: a sparse checkout leaves the
/// file out of the work tree.
const SKIP_WORKTREE: u16 = 1 << 14;

impl SettingsContext for Repo {
    fn sparse_file(&self, path: &str, max: u64) -> Option<Result<Vec<u8>, u64>> {
        let index = self.git.index().ok()?;
        let entry = index.get_path(Path::new(path), 0)?;
        if entry.flags_extended & SKIP_WORKTREE == 0 {
            return None;
        }
        let odb = self.git.odb().ok()?;
        let (size, _) = odb.read_header(entry.id).ok()?;
        if size as u64 > max {
            return Some(Err(size as u64));
        }
        let object = odb.read(entry.id).ok()?;
        Some(Ok(object.data().to_vec()))
    }

    fn approved_digest(&self) -> Option<String> {
        let config = self.git.config().ok()?;
        config
            .open_level(git2::ConfigLevel::Local)
            .ok()?
            .get_string(TRUST_KEY)
            .ok()
    }

    fn tracked_kind(&self, path: &str) -> Option<Tracked> {
        let kind = |mode: u32| match mode & 0o170000 {
            0o120000 => Tracked::Symlink,
            0o160000 => Tracked::Submodule,
            0o040000 => Tracked::Directory,
            _ => Tracked::File,
        };
        let path = Path::new(path);
        if let Some(entry) = self.git.index().ok().and_then(|i| i.get_path(path, 0)) {
            return Some(kind(entry.mode));
        }
        let tree = self
            .resolve_commit("HEAD")
            .and_then(|id| self.git.find_commit(id).ok())
            .and_then(|c| c.tree().ok())?;
        let entry = tree.get_path(path).ok()?;
        Some(kind(u32::try_from(entry.filemode()).unwrap_or(0)))
    }
}

impl Repo {
    /// Why the work tree's `.entire` is not the user's own directory, if it is not
    /// ([`foreign_settings_dir`]); `None` in a bare repository.
    pub fn foreign_settings_dir(&self) -> Option<ForeignDir> {
        foreign_settings_dir(self.workdir()?, self)
    }

    /// Records `digest` as the approved content of the committed settings file, in the
    /// repository's local git config (replacing an earlier approval).
    pub fn approve_settings(&self, digest: &str) -> Result<(), RepoError> {
        self.local_config()?
            .set_str(TRUST_KEY, digest)
            .map_err(git_err(format!("set {TRUST_KEY}")))
    }

    /// Removes the approval of the committed settings file; whether there was one.
    pub fn revoke_settings(&self) -> Result<bool, RepoError> {
        let mut config = self.local_config()?;
        if config.get_string(TRUST_KEY).is_err() {
            return Ok(false);
        }
        config
            .remove_multivar(TRUST_KEY, ".*")
            .map_err(git_err(format!("unset {TRUST_KEY}")))?;
        Ok(true)
    }

    /// Whether git ignores `path` (relative to the work tree, `/`-separated), by its own rules
    /// or a rule for a directory above it; `false` in a bare repository.
    pub fn is_ignored(&self, path: &str) -> bool {
        self.git.is_path_ignored(path).unwrap_or(false)
    }

    fn local_config(&self) -> Result<git2::Config, RepoError> {
        self.git
            .config()
            .and_then(|c| c.open_level(git2::ConfigLevel::Local))
            .map_err(git_err("open the repository's git config"))
    }
}
