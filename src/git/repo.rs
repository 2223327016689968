//! Opening the repository the way git finds it, refusing formats we cannot handle, and the
//! identity checkpoint commits are made with.

use crate::config::settings::SettingsFiles;
use std::path::{Path, PathBuf};

use crate::base::time as timefmt;
use crate::git::ref_lookup::{self, Lookup};
use crate::git::ref_update::{self, Cas};

/// Errors opening a repository.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// No repository at or above the working directory (or at `GIT_DIR`).
    #[error("not a git repository (or any of the parent directories): {0}")]
    NotARepository(String),
    /// A repository format this tool refuses rather than misreads.
    #[error("unsupported repository: {0}")]
    Unsupported(String),
    /// Any other failure from the object or ref database.
    #[error("{context}")]
    Git {
        /// What was being done.
        context: String,
        /// What libgit2 said.
        #[source]
        source: LibGitError,
    },
}

/// An error of libgit2 (the object and ref database), shown by its message alone: its class and
/// code are for the code that handles it, not for the user.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.message())]
pub struct LibGitError(#[from] git2::Error);

/// A person: name and email.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Identity {
    /// Display name.
    pub name: String,
    /// Email address.
    pub email: String,
}

/// The identity used when neither the environment nor the config has one.
pub const FALLBACK_NAME: &str = "Unknown";
/// See [`FALLBACK_NAME`].
pub const FALLBACK_EMAIL: &str = "unknown@local";

/// An open repository. git2 types stay inside the crate.
pub struct Repo {
    pub(crate) git: git2::Repository,
    common_dir: PathBuf,
    /// The settings files, read on first use and then kept for the whole command.
    settings: std::cell::OnceCell<SettingsFiles>,
}

/// Maps a git2 error into [`RepoError::Git`] with context.
pub(crate) fn git_err(context: impl Into<String>) -> impl FnOnce(git2::Error) -> RepoError {
    let context = context.into();
    move |e| RepoError::Git {
        context,
        source: e.into(),
    }
}

fn unsupported_from_config(git_dir: &Path) -> Option<String> {
    let text = std::fs::read_to_string(git_dir.join("config")).ok()?;
    let lower = text.to_ascii_lowercase();
    let value_of = |key: &str| -> Option<String> {
        lower.lines().find_map(|l| {
            let l = l.trim();
            let rest = l.strip_prefix(key)?.trim_start();
            Some(rest.strip_prefix('=')?.trim().to_owned())
        })
    };
    if let Some(v) = value_of("refstorage") {
        if v != "files" {
            return Some(format!(
                "the {v} ref storage format is not supported (extensions.refStorage = {v}); only the files backend is"
            ));
        }
    }
    if let Some(v) = value_of("objectformat") {
        if v != "sha1" {
            return Some(format!(
                "the {v} object format is not supported (extensions.objectFormat = {v}); only sha1 repositories are"
            ));
        }
    }
    None
}

/// Finds the git dir that discovery would pick, without opening it (so that a repository libgit2
/// refuses can still be named precisely).
fn probe_git_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("GIT_DIR") {
        return Some(PathBuf::from(dir));
    }
    let mut cur = std::env::current_dir().ok()?;
    loop {
        let dot = cur.join(".git");
        if dot.is_dir() {
            return Some(dot);
        }
        if dot.is_file() {
            let text = std::fs::read_to_string(&dot).ok()?;
            let target = text.strip_prefix("gitdir:")?.trim();
            return Some(cur.join(target));
        }
        if cur.join("HEAD").is_file() && cur.join("objects").is_dir() {
            return Some(cur);
        }
        if !cur.pop() {
            return None;
        }
    }
}

/// Where a [`Repo`] is, to open it again on another thread: a libgit2 handle cannot be shared
/// between threads, so a thread that reads beside the first opens its own.
#[derive(Debug, Clone)]
pub struct RepoLocation {
    git_dir: PathBuf,
    workdir: Option<PathBuf>,
}

impl RepoLocation {
    /// Opens the repository again: the same git dir and work tree.
    pub fn open(&self) -> Result<Repo, RepoError> {
        let git = git2::Repository::open(&self.git_dir).map_err(git_err(format!(
            "open repository {}",
            self.git_dir.display()
        )))?;
        if let Some(w) = &self.workdir {
            git.set_workdir(w, false)
                .map_err(git_err(format!("set work tree {}", w.display())))?;
        }
        Repo::from_git(git)
    }
}

impl Repo {
    /// Opens the repository git would use from the current directory, honouring `GIT_DIR`,
    /// `GIT_WORK_TREE`, linked worktrees and subdirectories. Reftable and sha256 repositories
    /// are refused with [`RepoError::Unsupported`].
    pub fn discover() -> Result<Repo, RepoError> {
        if let Some(dir) = probe_git_dir() {
            // A linked worktree's config lives in the common dir.
            let common = std::fs::read_to_string(dir.join("commondir"))
                .ok()
                .map(|c| dir.join(c.trim()))
                .unwrap_or_else(|| dir.clone());
            if let Some(why) = unsupported_from_config(&common) {
                return Err(RepoError::Unsupported(why));
            }
        }
        match git2::Repository::open_from_env() {
            Ok(git) => Self::from_git(git),
            Err(e) if e.code() == git2::ErrorCode::NotFound => {
                Err(RepoError::NotARepository(e.message().to_owned()))
            }
            Err(e) if e.message().contains("extension") => {
                Err(RepoError::Unsupported(e.message().to_owned()))
            }
            Err(e) => Err(git_err("open repository")(e)),
        }
    }

    /// Opens the repository at `path` (a work tree or a git dir).
    pub fn open(path: &Path) -> Result<Repo, RepoError> {
        if let Some(why) =
            unsupported_from_config(path).or_else(|| unsupported_from_config(&path.join(".git")))
        {
            return Err(RepoError::Unsupported(why));
        }
        let git = git2::Repository::open(path).map_err(|e| match e.code() {
            git2::ErrorCode::NotFound => RepoError::NotARepository(e.message().to_owned()),
            _ => git_err(format!("open repository {}", path.display()))(e),
        })?;
        Self::from_git(git)
    }

    fn from_git(git: git2::Repository) -> Result<Repo, RepoError> {
        // libgit2 re-hashes every object it reads (git does not): a quarter of the cost of
        // `list` over 100,000 checkpoints (docs/performance.md). Corruption is still caught by
        // zlib's checksum of each object, and by `git fsck`.
        static READ_WITHOUT_REHASH: std::sync::Once = std::sync::Once::new();
        READ_WITHOUT_REHASH.call_once(|| git2::opts::strict_hash_verification(false));
        let common_dir = git.commondir().to_path_buf();
        Ok(Repo {
            git,
            common_dir,
            settings: std::cell::OnceCell::new(),
        })
    }

    /// The settings files of the work tree (none in a bare repository), read once per command:
    /// every setting a command uses comes from this one reading.
    pub fn settings(&self) -> &SettingsFiles {
        self.settings
            .get_or_init(|| SettingsFiles::read(self.workdir()))
    }

    /// The git common dir (shared by all worktrees): where the queue and staged sessions live.
    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    /// Where this repository is, to open it again on another thread.
    pub fn location(&self) -> RepoLocation {
        RepoLocation {
            git_dir: self.git_dir().to_path_buf(),
            workdir: self.workdir().map(Path::to_path_buf),
        }
    }

    /// This worktree's git dir.
    pub fn git_dir(&self) -> &Path {
        self.git.path()
    }

    /// The work tree root, or `None` in a bare repository.
    pub fn workdir(&self) -> Option<&Path> {
        self.git.workdir()
    }

    /// The short name of the checked-out branch; `None` when detached or unborn-and-unnamed.
    pub fn current_branch(&self) -> Option<String> {
        let head = self.git.find_reference("HEAD").ok()?;
        let target = head.symbolic_target().ok()??;
        target.strip_prefix("refs/heads/").map(str::to_owned)
    }

    /// The message of the commit `rev` names (any commit-ish), or `None` when it names none.
    pub fn commit_message(&self, rev: &str) -> Option<String> {
        let commit = self.git.revparse_single(rev).ok()?.peel_to_commit().ok()?;
        Some(String::from_utf8_lossy(commit.message_bytes()).into_owned())
    }

    /// The messages of the commits in `range`: `A..B` (reachable from B, not from A), or one
    /// revision and everything it reaches.
    pub fn commit_messages_in(&self, range: &str) -> Result<Vec<String>, RepoError> {
        let mut walk = self.git.revwalk().map_err(git_err("walk commits"))?;
        if range.contains("..") {
            walk.push_range(range)
        } else {
            self.git
                .revparse_single(range)
                .and_then(|o| o.peel_to_commit())
                .and_then(|c| walk.push(c.id()))
        }
        .map_err(git_err(format!("resolve {range}")))?;
        let mut out = Vec::new();
        for oid in walk {
            let oid = oid.map_err(git_err("walk commits"))?;
            let c = self.git.find_commit(oid).map_err(git_err("read commit"))?;
            out.push(String::from_utf8_lossy(c.message_bytes()).into_owned());
        }
        Ok(out)
    }

    /// The configured remotes' names, in config order.
    pub fn remote_names(&self) -> Vec<String> {
        self.git
            .remotes()
            .map(|names| {
                names
                    .iter()
                    .flatten()
                    .flatten()
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The object `name` points at, `None` when the ref does not exist. Reads the loose file or
    /// binary-searches the sorted `packed-refs` (cost independent of the number of refs), and
    /// asks libgit2 only for what that cannot decide (symbolic refs, unsorted `packed-refs`).
    pub(crate) fn ref_tip(&self, name: &str) -> Result<Option<git2::Oid>, git2::Error> {
        match ref_lookup::lookup(&self.common_dir, name) {
            Lookup::Found(oid) => Ok(Some(oid)),
            Lookup::Missing => Ok(None),
            Lookup::Unknown => match self.git.refname_to_id(name) {
                Ok(oid) => Ok(Some(oid)),
                Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
                Err(e) => Err(e),
            },
        }
    }

    /// Moves `name` to `new` only if it points at `old` (`Oid::ZERO_SHA1`: only if it does not
    /// exist), checked under the ref's lock. Checkpoint refs are updated directly (see
    /// [`ref_update`]); anything else goes through libgit2 with `reflog` as the message. A lost
    /// race is an error with code `Modified` (wrong old value) or `Locked`, as from libgit2.
    pub(crate) fn set_ref_matching(
        &self,
        name: &str,
        new: git2::Oid,
        old: git2::Oid,
        reflog: &str,
    ) -> Result<(), git2::Error> {
        let logs_all = self
            .config_string("core.logAllRefUpdates")
            .is_some_and(|v| v.eq_ignore_ascii_case("always"));
        let lost = |code, what: &str| {
            git2::Error::new(code, git2::ErrorClass::Reference, format!("{name}: {what}"))
        };
        match ref_update::compare_and_swap(&self.common_dir, name, new, old, logs_all) {
            Cas::Done => Ok(()),
            Cas::Mismatch => Err(lost(
                git2::ErrorCode::Modified,
                "old reference value does not match",
            )),
            Cas::Locked => Err(lost(
                git2::ErrorCode::Locked,
                "the ref is locked by another writer",
            )),
            Cas::NotHandled => self
                .git
                .reference_matching(name, new, true, old, reflog)
                .map(|_| ()),
        }
    }

    /// A config value as the repository sees it (local, then global, then system).
    pub fn config_string(&self, key: &str) -> Option<String> {
        self.git.config().ok()?.get_string(key).ok()
    }

    /// The identity for `role` (`AUTHOR` or `COMMITTER`): `GIT_<ROLE>_NAME`/`_EMAIL`, then
    /// `user.name`/`user.email`, then `Unknown <unknown@local>`.
    pub fn identity(&self, role: &str) -> Identity {
        let env = |k: &str| {
            std::env::var(format!("GIT_{role}_{k}"))
                .ok()
                .filter(|v| !v.is_empty())
        };
        Identity {
            name: env("NAME")
                .or_else(|| self.config_string("user.name"))
                .unwrap_or_else(|| FALLBACK_NAME.to_owned()),
            email: env("EMAIL")
                .or_else(|| self.config_string("user.email"))
                .unwrap_or_else(|| FALLBACK_EMAIL.to_owned()),
        }
    }

    /// A signature for `who` at `GIT_<ROLE>_DATE` when set (so scripted runs are
    /// reproducible, as with git itself), else now in the local zone.
    pub(crate) fn signature(
        &self,
        who: &Identity,
        role: &str,
    ) -> Result<git2::Signature<'static>, RepoError> {
        let date = std::env::var(format!("GIT_{role}_DATE"))
            .ok()
            .and_then(|d| timefmt::parse_git_date(&d));
        match date {
            Some((secs, offset)) => {
                git2::Signature::new(&who.name, &who.email, &git2::Time::new(secs, offset))
            }
            None => git2::Signature::now(&who.name, &who.email),
        }
        .map_err(git_err("make commit signature"))
    }
}

impl crate::base::error::ExitStatus for RepoError {
    fn exit_code(&self) -> i32 {
        match self {
            RepoError::NotARepository(_) | RepoError::Unsupported(_) => {
                crate::base::error::NOT_A_REPOSITORY
            }
            RepoError::Git { .. } => crate::base::error::FAILURE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_extensions_in_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("config"),
            "[core]\n\trepositoryformatversion = 1\n[extensions]\n\trefStorage = reftable\n",
        )
        .unwrap();
        let why = unsupported_from_config(dir.path()).unwrap();
        assert!(why.contains("reftable"), "{why}");
        std::fs::write(
            dir.path().join("config"),
            "[extensions]\n\tobjectformat = sha256\n",
        )
        .unwrap();
        assert!(unsupported_from_config(dir.path())
            .unwrap()
            .contains("sha256"));
        std::fs::write(dir.path().join("config"), "[core]\n\tbare = false\n").unwrap();
        assert!(unsupported_from_config(dir.path()).is_none());
    }
}
