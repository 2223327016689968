//! Side repositories: where network operations run so that they do not scale with the number
//! of local refs (docs/decisions.md, "Network operations run from a side repository").
//!
//! git matches every explicit refspec against every local ref, and fetch loads every local ref
//! tip. A side repository is an empty bare repository in a temp dir under the common dir whose
//! object directory is the real one (`GIT_OBJECT_DIRECTORY`) and whose config includes the real
//! config (so remotes, `pushurl`, `insteadOf` and credential settings apply), holding only the
//! refs involved. Measured when this was decided: pushing 200 refs from a repository with
//! 100,000 checkpoint refs took 15.1 s, from a side repository 0.15 s. It is deleted when dropped.

use git2::Oid;

use std::path::Path;
use std::time::Duration;

use crate::git::refname::{CheckpointRef, CHECKPOINT_REF_PREFIX};
use crate::git::repo::Repo;
use crate::git::subprocess::{first_error_line, Git, GitError, Output, TempDir};
use crate::git::url::Remote;

/// `path` as a git-config value: double-quoted with `\\`, `"`, newline and tab escaped, so a
/// repository under a directory named `C# "semi;colon" back\slash` still includes its config
/// (unquoted, `#` and `;` start a comment and `\` an escape).
pub(crate) fn config_quoted(path: &std::path::Path) -> String {
    let mut out = String::from("\"");
    for c in path.to_string_lossy().chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The options of every checkpoint-ref fetch (before the remote and the refspecs). What arrived
/// is read from the refs it wrote, so every supported git does the same (`--porcelain`, which
/// would say it too, is 2.41's).
const FETCH_ARGS: [&str; 4] = [
    "fetch",
    "--no-tags",
    "--no-write-fetch-head",
    "--no-auto-gc",
];

/// git on the repository beside `repo` whose git dir is `git_dir` and whose objects are
/// `objects`, run from the real work tree so relative remote paths resolve as they do there.
fn beside(repo: &Repo, git_dir: &Path, objects: &Path) -> Git {
    let cwd = repo.workdir().unwrap_or(repo.common_dir());
    Git::side(cwd, git_dir, objects)
}

/// The fetch of `wants` (refspecs or object IDs) from the promisor remote `promisor` with
/// `filter` (a `--filter` spec) into the partial cache of `repo` at `cache` (a bare repository
/// of its own objects), for the caller to run by its deadline.
pub(crate) fn filtered_fetch<I, S>(
    repo: &Repo,
    cache: &Path,
    promisor: &str,
    filter: &str,
    wants: I,
) -> Git
where
    I: IntoIterator<Item = S>,
    S: Into<std::ffi::OsString>,
{
    beside(repo, cache, &cache.join("objects"))
        .args(FETCH_ARGS)
        .args([format!("--filter={filter}"), promisor.to_owned()])
        .args(wants)
}

/// `git cat-file --batch-check` of `ids` in the partial cache of `repo` at `cache`, with git's
/// lazy fetch of missing objects from its promisor remotes allowed: each object git could not
/// get is a line ending ` missing`.
pub(crate) fn fetch_missing(
    repo: &Repo,
    cache: &Path,
    ids: &[Oid],
    deadline: Duration,
) -> Result<Output, GitError> {
    let input: String = ids.iter().map(|o| format!("{o}\n")).collect();
    beside(repo, cache, &cache.join("objects"))
        .env_remove("GIT_NO_LAZY_FETCH")
        .args(["cat-file", "--batch-check"])
        .input(input.into_bytes())
        .run(deadline)
}

/// Why a side repository learned nothing from the remote.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SideError {
    /// git could not run or ran out of time.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The remote answered with a failure (unreachable, refused): git's first error line,
    /// credentials redacted.
    #[error("{0}")]
    Remote(String),
    /// The fetch succeeded but wrote no ref (the remote lacks it).
    #[error("the fetch wrote no ref")]
    NoRef,
}

/// A side repository of `repo`.
pub(crate) struct SideRepo<'a> {
    repo: &'a Repo,
    dir: TempDir,
}

impl<'a> SideRepo<'a> {
    /// Creates one holding exactly `refs` (written as a sorted `packed-refs`).
    pub(crate) fn new(repo: &'a Repo, refs: &[(String, Oid)]) -> std::io::Result<Self> {
        let dir = TempDir::new(&repo.common_dir().join("entire").join("tmp"), "side-")?;
        let config = repo.common_dir().join("config");
        let d = dir.path();
        let mut packed = String::from("# pack-refs with: peeled fully-peeled sorted \n");
        let mut sorted: Vec<&(String, Oid)> = refs.iter().collect();
        sorted.sort_by(|a, b| a.0.cmp(&b.0));
        for (name, oid) in sorted {
            packed.push_str(&format!("{oid} {name}\n"));
        }
        // The real config first, then what makes this a bare repository of its own that never
        // runs maintenance on the shared object store.
        let cfg = format!(
            "[include]\n\tpath = {}\n{}[core]\n\tbare = true\n\tlogAllRefUpdates = false\n[gc]\n\tauto = 0\n[maintenance]\n\tauto = false\n[fetch]\n\twriteCommitGraph = false\n[protocol]\n\tversion = 2\n",
            config_quoted(&config),
            repo.object_format().config_lines()
        );
        std::fs::create_dir_all(d.join("refs/heads"))?;
        std::fs::create_dir_all(d.join("objects"))?;
        std::fs::write(d.join("HEAD"), "ref: refs/heads/entire-side\n")?;
        std::fs::write(d.join("config"), cfg)?;
        std::fs::write(d.join("packed-refs"), packed)?;
        Ok(SideRepo { repo, dir })
    }

    /// A git command on this side repository, run from the real work tree so relative remote
    /// paths resolve as they do there.
    fn git(&self) -> Git {
        beside(
            self.repo,
            self.dir.path(),
            &self.repo.common_dir().join("objects"),
        )
    }

    /// The fetch of `specs` (refspecs) from `remote` into this side repository, for the caller
    /// to run by its deadline.
    pub(crate) fn fetch_refspecs(&self, remote: &Remote, specs: Vec<String>) -> Git {
        self.git().args(FETCH_ARGS).remote(remote, specs)
    }

    /// The fetch of the objects `ids` (and what they reach, but for what `filter` leaves out: a
    /// `--filter` spec, else the remote's configured one) from `remote`, given on standard input
    /// so that any number fit, into this side repository; it writes no ref. For the caller to
    /// run by its deadline.
    pub(crate) fn fetch_ids(&self, remote: &Remote, ids: &[Oid], filter: Option<&str>) -> Git {
        let ids: String = ids.iter().map(|oid| format!("{oid}\n")).collect();
        self.git()
            .args(FETCH_ARGS)
            .args(filter.map(|f| format!("--filter={f}")))
            .args(["--stdin"])
            .remote(remote, Vec::<String>::new())
            .input(ids.into_bytes())
    }

    /// One `git push --porcelain --no-verify` of `specs` (refspecs) to `remote` from this side
    /// repository, by `deadline`; git's per-ref results are in its output. `--no-verify`: the
    /// side repository includes the real config, so the user's pre-push hook (ours among them)
    /// would otherwise run again for our own push.
    pub(crate) fn push<I, S>(
        &self,
        remote: &Remote,
        specs: I,
        deadline: Duration,
    ) -> Result<Output, GitError>
    where
        I: IntoIterator<Item = S>,
        S: Into<std::ffi::OsString>,
    {
        self.git()
            .args(["push", "--porcelain", "--no-verify"])
            .remote(remote, specs)
            .run(deadline)
    }

    /// The value of a ref in the side repository: its loose file, else its `packed-refs` line.
    pub(crate) fn read_ref(&self, name: &str) -> Option<Oid> {
        if let Ok(text) = std::fs::read_to_string(self.dir.path().join(name)) {
            return self.repo.parse_oid(text.trim()).ok();
        }
        let packed = std::fs::read_to_string(self.dir.path().join("packed-refs")).ok()?;
        packed.lines().find_map(|l| {
            let (oid, n) = l.split_once(' ')?;
            (n == name).then(|| self.repo.parse_oid(oid).ok()).flatten()
        })
    }

    /// The checkpoint refs `remote` advertises with their commits, from one `ls-remote` of the
    /// checkpoint prefix (refs under it that are not checkpoint refs are left out).
    pub(crate) fn ls_remote_checkpoints(
        &self,
        remote: &Remote,
        budget: Duration,
    ) -> Result<Vec<(CheckpointRef, String)>, SideError> {
        let listed = self.ls_remote(remote, &[format!("{CHECKPOINT_REF_PREFIX}*")], budget)?;
        Ok(listed
            .into_iter()
            .filter_map(|(name, oid)| CheckpointRef::parse(&name).ok().map(|r| (r, oid)))
            .collect())
    }

    /// The refs `remote` advertises matching `patterns` (`ls-remote` patterns, e.g. a prefix and
    /// `*`), with their objects; one `ls-remote`.
    pub(crate) fn ls_remote(
        &self,
        remote: &Remote,
        patterns: &[String],
        budget: Duration,
    ) -> Result<Vec<(String, String)>, SideError> {
        let out = self
            .git()
            .args(["ls-remote", "--refs"])
            .remote(remote, patterns.iter().cloned())
            .run(budget)?;
        if !out.success() {
            return Err(SideError::Remote(first_error_line(&out.stderr)));
        }
        Ok(out
            .stdout
            .lines()
            .filter_map(|l| l.split_once('\t'))
            .map(|(oid, name)| (name.to_owned(), oid.to_owned()))
            .collect())
    }

    /// Fetches `specs` (refspecs whose destinations are under `refs/fetched/`, forced: the side
    /// repository is thrown away) from `remote` into this side repository, and returns every ref
    /// the fetch wrote there. A glob that matches nothing on the remote is no failure.
    pub(crate) fn fetch_into(
        &self,
        remote: &Remote,
        specs: &[String],
        budget: Duration,
    ) -> Result<Vec<(String, Oid)>, SideError> {
        let out = self
            .git()
            .args(["fetch", "--no-tags", "--no-write-fetch-head"])
            .remote(remote, specs.iter().cloned())
            .run(budget)?;
        if !out.success() {
            return Err(SideError::Remote(first_error_line(&out.stderr)));
        }
        let listed = self
            .git()
            .args([
                "for-each-ref",
                "--format=%(objectname) %(refname)",
                "refs/fetched/",
            ])
            .run(budget)?;
        if !listed.success() {
            return Err(SideError::Remote(first_error_line(&listed.stderr)));
        }
        Ok(listed
            .stdout
            .lines()
            .filter_map(|l| {
                let (oid, name) = l.split_once(' ')?;
                Some((name.to_owned(), self.repo.parse_oid(oid).ok()?))
            })
            .collect())
    }

    /// Fetches `remote_ref` from `remote` into this side repository and returns its commit.
    /// Forcing into the side repository's private name is safe: the side repository is thrown
    /// away and nothing is ever pushed from that name.
    pub(crate) fn fetch_one(
        &self,
        remote: &Remote,
        remote_ref: &str,
        budget: Duration,
    ) -> Result<Oid, SideError> {
        const FETCHED: &str = "refs/fetched/one";
        let out = self
            .git()
            .args(["fetch", "--no-tags", "--no-write-fetch-head"])
            .remote(remote, [format!("+{remote_ref}:{FETCHED}")])
            .run(budget)?;
        if !out.success() {
            return Err(SideError::Remote(first_error_line(&out.stderr)));
        }
        self.read_ref(FETCHED).ok_or(SideError::NoRef)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_values_are_quoted() {
        assert_eq!(
            config_quoted(std::path::Path::new(
                r#"/t/C# "semi;colon" back\slash/.git/config"#
            )),
            r#""/t/C# \"semi;colon\" back\\slash/.git/config""#
        );
    }
}
