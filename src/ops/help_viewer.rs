//! `git entire-checkpoint --help` where no man page is installed. git turns `git <command>
//! --help` into `git help <command>`, which runs `man git-<command>`: a plain build (`cargo
//! install`, no man pages) answered "No manual entry" and exit 16. `enable` therefore names a man
//! viewer of ours in the repository's own config (`man.viewer`, which `git help` reads): an
//! installed page still wins, the page of one of our binaries that is not installed is the
//! binary's long help, and every other page (`git help log`) goes to `man` as before. Where the user chose a viewer or a help
//! format other than man pages, nothing is set.

use std::path::Path;
use std::time::Duration;

use crate::git::repo::Repo;
use crate::git::subprocess::{Git, GitError};

/// Errors reading or writing the viewer's config.
#[derive(Debug, thiserror::Error)]
pub enum HelpViewerError {
    /// git could not be run.
    #[error(transparent)]
    Git(#[from] GitError),
    /// `git config` refused.
    #[error("git config {args} failed: {stderr}")]
    Config {
        /// Its arguments.
        args: String,
        /// What it said.
        stderr: String,
    },
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

/// How long a `git config` may take.
const BUDGET: Duration = Duration::from_secs(30);

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
    config(dir, &["--local", &command_key(), COMMAND])?;
    config(dir, &["--local", "man.viewer", VIEWER])?;
    Ok(true)
}

/// Removes what [`install`] set from `repo`'s own config; a viewer the user named stays.
/// `Ok(true)` when it removed it.
pub fn uninstall(repo: &Repo) -> Result<bool, HelpViewerError> {
    let dir = config_dir(repo);
    let ours = get_local(dir, "man.viewer")? == [VIEWER];
    if ours {
        config(dir, &["--local", "--unset", "man.viewer"])?;
    }
    if get_local(dir, &command_key())?.len() == 1 {
        // `--remove-section` also drops the section header git leaves behind an `--unset`.
        config(
            dir,
            &["--local", "--remove-section", &format!("man.{VIEWER}")],
        )?;
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
    values(dir, &["--get-all", key])
}

/// Every value of `key` in the repository's own config.
fn get_local(dir: &Path, key: &str) -> Result<Vec<String>, HelpViewerError> {
    values(dir, &["--local", "--get-all", key])
}

/// The values `git config <args>` prints; none when the key is unset (exit 1).
fn values(dir: &Path, args: &[&str]) -> Result<Vec<String>, HelpViewerError> {
    let out = Git::new(dir).args(["config"]).args(args).run(BUDGET)?;
    match out.code {
        Some(0) => Ok(out.stdout.lines().map(str::to_owned).collect()),
        Some(1) => Ok(Vec::new()),
        _ => Err(refused(args, out.stderr)),
    }
}

/// Runs `git config <args>`.
fn config(dir: &Path, args: &[&str]) -> Result<(), HelpViewerError> {
    let out = Git::new(dir).args(["config"]).args(args).run(BUDGET)?;
    if out.success() {
        Ok(())
    } else {
        Err(refused(args, out.stderr))
    }
}

/// The error of a `git config <args>` that failed saying `stderr`.
fn refused(args: &[&str], stderr: String) -> HelpViewerError {
    HelpViewerError::Config {
        args: args.join(" "),
        stderr: stderr.trim().to_owned(),
    }
}

/// Removes `[section]` from the repository's config when no key is left in it.
fn remove_empty_section(dir: &Path, section: &str) -> Result<(), HelpViewerError> {
    let left = values(
        dir,
        &[
            "--local",
            "--name-only",
            "--get-regexp",
            &format!("^{section}\\."),
        ],
    )?;
    if left.is_empty() {
        config(dir, &["--local", "--remove-section", section])?;
    }
    Ok(())
}
