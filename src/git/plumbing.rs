//! The local git commands the layers above run, each a named function with typed arguments
//! and results: the command lines are built here and nowhere else (`.ci/layers` checks it), so
//! that what git is asked, and how its answer is read, has one place. The network commands of
//! side repositories live with them (`side`).

use std::path::Path;
use std::time::Duration;

use crate::git::subprocess::{Git, GitError, Output, Running};

/// How long a local command of this module may take (it reads the config or a few files).
const LOCAL_BUDGET: Duration = Duration::from_secs(30);

/// Why a local git command gave no answer.
#[derive(Debug, thiserror::Error)]
pub enum PlumbingError {
    /// git could not run or ran out of time.
    #[error(transparent)]
    Git(#[from] GitError),
    /// git ran and refused.
    #[error("git {args} failed: {stderr}")]
    Failed {
        /// Its arguments, as one line.
        args: String,
        /// Its exit code (`None` when killed by a signal).
        code: Option<i32>,
        /// What it said, trimmed.
        stderr: String,
    },
}

/// Runs `git <args>` in `dir`; its output when it succeeded, or what it said.
fn run(dir: &Path, args: &[&str]) -> Result<Output, PlumbingError> {
    checked(args.join(" "), Git::new(dir).args(args).run(LOCAL_BUDGET)?)
}

/// `out` of `git <args>` when it succeeded, else what it said.
fn checked(args: String, out: Output) -> Result<Output, PlumbingError> {
    match out.success() {
        true => Ok(out),
        false => Err(PlumbingError::Failed {
            args,
            code: out.code,
            stderr: out.stderr.trim().to_owned(),
        }),
    }
}

/// Which config files a read looks at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigScope {
    /// Every level (system, global, local, worktree), in git's order.
    All,
    /// The repository's own config.
    Local,
}

impl ConfigScope {
    fn options(self) -> &'static [&'static str] {
        match self {
            ConfigScope::All => &[],
            ConfigScope::Local => &["--local"],
        }
    }
}

/// The lines `git config <args>` prints; none when nothing matches (exit 1).
fn config_lines(
    dir: &Path,
    scope: ConfigScope,
    args: &[&str],
) -> Result<Vec<String>, PlumbingError> {
    let args: Vec<&str> = ["config"]
        .iter()
        .chain(scope.options())
        .chain(args)
        .copied()
        .collect();
    match run(dir, &args) {
        Ok(out) => Ok(out.stdout.lines().map(str::to_owned).collect()),
        Err(PlumbingError::Failed { code: Some(1), .. }) => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

/// Every value of `key` in `scope`, in git's order (`git config --get-all`), as seen from `dir`.
pub fn config_get_all(
    dir: &Path,
    scope: ConfigScope,
    key: &str,
) -> Result<Vec<String>, PlumbingError> {
    config_lines(dir, scope, &["--get-all", key])
}

/// The names of the keys in `scope` that match the regular expression `pattern`
/// (`git config --name-only --get-regexp`).
pub fn config_names_matching(
    dir: &Path,
    scope: ConfigScope,
    pattern: &str,
) -> Result<Vec<String>, PlumbingError> {
    config_lines(dir, scope, &["--name-only", "--get-regexp", pattern])
}

/// Sets `key` to `value` in the repository's own config.
pub fn config_set_local(dir: &Path, key: &str, value: &str) -> Result<(), PlumbingError> {
    run(dir, &["config", "--local", key, value]).map(drop)
}

/// Removes `key` from the repository's own config.
pub fn config_unset_local(dir: &Path, key: &str) -> Result<(), PlumbingError> {
    run(dir, &["config", "--local", "--unset", key]).map(drop)
}

/// Removes `[section]` (with its header) from the repository's own config.
pub fn config_remove_section_local(dir: &Path, section: &str) -> Result<(), PlumbingError> {
    run(dir, &["config", "--local", "--remove-section", section]).map(drop)
}

/// Which config file sets `key`, as `git config --show-scope` names it (`global`, `system`,
/// `local`, `worktree`, `command`); `None` when none does.
pub fn config_scope_of(dir: &Path, key: &str) -> Result<Option<String>, PlumbingError> {
    match run(dir, &["config", "--show-scope", "--get", key]) {
        Ok(out) => Ok(out.stdout.split('\t').next().map(str::to_owned)),
        Err(PlumbingError::Failed { .. }) => Ok(None),
        Err(e) => Err(e),
    }
}

/// Whether git tracks a file at or under `path` in the work tree `dir` (`git ls-files`).
pub fn tracks(dir: &Path, path: &Path) -> Result<bool, PlumbingError> {
    let out = run(dir, &["ls-files", "--", &path.to_string_lossy()])?;
    Ok(!out.stdout.trim().is_empty())
}

/// Adds the trailers `trailers` (each `Key: value`) to the commit message file `file` in
/// place, with `if_exists` as `git interpret-trailers --if-exists` takes it, run in `dir`.
pub fn add_trailers(
    dir: &Path,
    file: &Path,
    trailers: &[String],
    if_exists: &str,
) -> Result<(), PlumbingError> {
    let mut git =
        Git::new(dir).args(["interpret-trailers", "--in-place", "--if-exists", if_exists]);
    for t in trailers {
        git = git.args(["--trailer", t.as_str()]);
    }
    let out = git.args([file.as_os_str()]).run(LOCAL_BUDGET)?;
    checked("interpret-trailers".to_owned(), out).map(drop)
}

/// Starts `git log -z --format=<format> <options> --end-of-options <revisions> --` in `dir`,
/// where git finds the repository itself: the records come as git writes them
/// ([`Running::next_output`]). `options` are passed as given: the caller admits only options
/// that select commits.
pub fn start_log(
    dir: &Path,
    format: &str,
    options: &[String],
    revisions: &[String],
    deadline: Duration,
) -> Result<Running, GitError> {
    Git::new(dir)
        .args(["log", "-z", &format!("--format={format}")])
        .args(options)
        .args(["--end-of-options"])
        .args(revisions)
        .args(["--"])
        .start(deadline)
}

/// The commits on branches, tags and remote-tracking branches (the checkpoint branches
/// `entire/checkpoints/*` excluded) whose message holds `word` (case-insensitively), as
/// `(commit, message)`, newest first; none when git refuses (no commit yet).
pub fn commits_mentioning(
    dir: &Path,
    word: &str,
    deadline: Duration,
) -> Result<Vec<(String, String)>, GitError> {
    let out = Git::new(dir)
        .args([
            "log",
            "--exclude=entire/checkpoints/*",
            "--branches",
            "--exclude=*/entire/checkpoints/*",
            "--remotes",
            "--tags",
            "--fixed-strings",
            "-i",
            &format!("--grep={word}"),
            "--format=%H%x00%B%x00",
        ])
        .run(deadline)?;
    let mut found = Vec::new();
    if out.success() {
        let mut fields = out.stdout.split('\0');
        while let (Some(sha), Some(message)) = (fields.next(), fields.next()) {
            found.push((sha.trim().to_owned(), message.to_owned()));
        }
    }
    Ok(found)
}

/// The branches and remote-tracking branches (full ref names, with the commit each names, in
/// byte order of name) whose tips `commit` has not merged: one `git for-each-ref --no-merged`,
/// which answers for every ref in one walk however many there are. Symbolic refs are listed
/// with the commit they resolve to.
pub fn branches_not_merged_into(
    dir: &Path,
    commit: &str,
) -> Result<Vec<(String, String)>, PlumbingError> {
    let no_merged = format!("--no-merged={commit}");
    let out = run(
        dir,
        &[
            "for-each-ref",
            "--format=%(objectname) %(refname)",
            &no_merged,
            "refs/heads/",
            "refs/remotes/",
        ],
    )?;
    Ok(out
        .stdout
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(oid, name)| (name.to_owned(), oid.to_owned()))
        .collect())
}
