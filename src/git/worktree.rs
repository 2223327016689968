//! What git knows about files of the work tree: whether it tracks or ignores them, and, for the
//! settings files ([`SettingsContext`]), the approval of the committed one, recorded in the
//! repository's local git config by `git entire-checkpoint trust`.

use std::path::Path;

use crate::config::settings::{SettingsContext, TRUST_KEY};
use crate::git::repo::{git_err, Repo, RepoError};

impl SettingsContext for Repo {
    fn approved_digest(&self) -> Option<String> {
        let config = self.git.config().ok()?;
        config
            .open_level(git2::ConfigLevel::Local)
            .ok()?
            .get_string(TRUST_KEY)
            .ok()
    }

    fn tracks(&self, path: &str) -> bool {
        let path = Path::new(path);
        let in_index = self
            .git
            .index()
            .is_ok_and(|index| index.get_path(path, 0).is_some());
        in_index
            || self
                .resolve_commit("HEAD")
                .and_then(|id| self.git.find_commit(id).ok())
                .and_then(|c| c.tree().ok())
                .is_some_and(|tree| tree.get_path(path).is_ok())
    }
}

impl Repo {
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
