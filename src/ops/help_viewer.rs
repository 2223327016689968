//! `git entire-checkpoint --help` where no man page is installed. git turns `git <command>
//! --help` into `git help <command>`, which runs `man git-<command>`: a plain build (`cargo
//! install`, no man pages) answered "No manual entry" and exit 16. `enable` therefore names a man
//! viewer of ours in the repository's own config (`man.viewer`, which `git help` reads): an
//! installed page still wins, the page of one of our binaries that is not installed is the
//! binary's long help, and every other page (`git help log`) goes to `man` as before. Where the user chose a viewer or a help
//! format other than man pages, nothing is set.

use std::path::Path;

use crate::git::plumbing::{self, ConfigScope, PlumbingError};
use crate::git::repo::Repo;

/// Errors reading or writing the viewer's config: git could not be run, or `git config`
/// refused.
#[derive(Debug, thiserror::Error)]
pub enum HelpViewerError {
    /// git could not be run, or refused.
    #[error(transparent)]
    Git(#[from] PlumbingError),
}

/// The name of our viewer in `man.viewer` and `man.<tool>.cmd`.
pub const VIEWER: &str = "entire-checkpoints";

/// The viewer's command, run by `git help` as `sh -c "<this> <page>"`: `man` when it has the
/// page; else, for the page of one of our binaries, the binary's own long help (run as
/// `git-entire-checkpoint --help`, not through git, which would turn `--help` into `git help`
/// again); else `man` (its own message).
pub const COMMAND: &str = "f() { man -w \"$1\" >/dev/null 2>&1 && exec man \"$1\"; \
case \"$1\" in git-entire-checkpoint|git-entire-fetch|git-entire-prepush) exec \"$1\" --help;; \
esac; exec man \"$1\"; }; f";

/// The config key of the viewer's command.
fn command_key() -> String {
    format!("man.{VIEWER}.cmd")
}

/// Names our viewer in `repo`'s config (`man.viewer`, `man.entire-checkpoints.cmd`) unless
/// another viewer is configured at any level or `help.format` is not `man`. `Ok(true)` when it
/// set it now, `Ok(false)` when it was set already or is left to the user's choice.
pub fn install(repo: &Repo) -> Result<bool, HelpViewerError> {
    let dir = config_dir(repo);
    let viewers = get_all(dir, "man.viewer")?;
    if !viewers.is_empty() {
        // Ours already, or the user's choice: git tries the viewers in order, so adding ours
        // after theirs would change nothing, and before it would override them.
        return Ok(false);
    }
    let format = get_all(dir, "help.format")?;
    if cfg!(windows) || format.last().is_some_and(|f| f != "man") {
        return Ok(false);
    }
    plumbing::config_set_local(dir, &command_key(), COMMAND)?;
    plumbing::config_set_local(dir, "man.viewer", VIEWER)?;
    Ok(true)
}

/// Removes what [`install`] set from `repo`'s own config; a viewer the user named stays.
/// `Ok(true)` when it removed it.
pub fn uninstall(repo: &Repo) -> Result<bool, HelpViewerError> {
    let dir = config_dir(repo);
    let ours = get_local(dir, "man.viewer")? == [VIEWER];
    if ours {
        plumbing::config_unset_local(dir, "man.viewer")?;
    }
    if get_local(dir, &command_key())?.len() == 1 {
        // `--remove-section` also drops the section header git leaves behind an `--unset`.
        plumbing::config_remove_section_local(dir, &format!("man.{VIEWER}"))?;
    }
    if ours && get_local(dir, "man.viewer")?.is_empty() {
        // Only when nothing else is left in it: a `[man]` section the user had stays.
        let _ = remove_empty_section(dir, "man");
    }
    Ok(ours)
}

/// The directory `git config` runs in for `repo`.
fn config_dir(repo: &Repo) -> &Path {
    repo.workdir().unwrap_or(repo.common_dir())
}

/// Every value of `key` at every level, in git's order.
fn get_all(dir: &Path, key: &str) -> Result<Vec<String>, HelpViewerError> {
    Ok(plumbing::config_get_all(dir, ConfigScope::All, key)?)
}

/// Every value of `key` in the repository's own config.
fn get_local(dir: &Path, key: &str) -> Result<Vec<String>, HelpViewerError> {
    Ok(plumbing::config_get_all(dir, ConfigScope::Local, key)?)
}

/// Removes `[section]` from the repository's config when no key is left in it.
fn remove_empty_section(dir: &Path, section: &str) -> Result<(), HelpViewerError> {
    let left = plumbing::config_names_matching(dir, ConfigScope::Local, &format!("^{section}\\."))?;
    if left.is_empty() {
        plumbing::config_remove_section_local(dir, section)?;
    }
    Ok(())
}
