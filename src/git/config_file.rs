//! A git config file read and edited on its own, as `git config --file` does: for the config of
//! a side repository the crate manages (the partial cache's promisor remotes), never the
//! user's.

use std::path::Path;

use crate::git::repo::LibGitError;

/// One config file, opened for reading and editing; edits are written as they are made.
pub struct ConfigFile(git2::Config);

impl ConfigFile {
    /// The config file at `path` (created on the first edit when absent).
    pub fn open(path: &Path) -> Result<Self, LibGitError> {
        Ok(ConfigFile(git2::Config::open(path)?))
    }

    /// The boolean at `key`, `None` when unset or not a boolean.
    pub fn get_bool(&self, key: &str) -> Option<bool> {
        self.0.get_bool(key).ok()
    }

    /// The string at `key`, `None` when unset.
    pub fn get_string(&self, key: &str) -> Option<String> {
        self.0.get_string(key).ok()
    }

    /// Sets `key` to the string `value`.
    pub fn set_str(&mut self, key: &str, value: &str) -> Result<(), LibGitError> {
        Ok(self.0.set_str(key, value)?)
    }

    /// Sets `key` to the boolean `value`.
    pub fn set_bool(&mut self, key: &str, value: bool) -> Result<(), LibGitError> {
        Ok(self.0.set_bool(key, value)?)
    }

    /// The names of the keys matching the regular expression `pattern` (git's config key
    /// regex, as `git config --get-regexp` takes), in file order; unreadable entries skipped.
    pub fn keys_matching(&self, pattern: &str) -> Vec<String> {
        let mut keys = Vec::new();
        if let Ok(mut entries) = self.0.entries(Some(pattern)) {
            while let Some(Ok(e)) = entries.next() {
                if let Ok(name) = e.name() {
                    keys.push(name.to_owned());
                }
            }
        }
        keys
    }
}
