//! Opening the repository the way git finds it, refusing formats we cannot handle, and the
//! identity checkpoint commits are made with.

use crate::config::settings::SettingsFiles;
use std::path::{Path, PathBuf};

use crate::base::time as timefmt;
use crate::git::format::{Formats, ObjectFormat, OidError, RefFormat};
use crate::git::version::GitVersion;

/// Errors opening a repository.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// No repository at or above the working directory (or at `GIT_DIR`): what git names
    /// there (`.git`, or the directory given).
    #[error("not a git repository (or any of the parent directories): {0}")]
    NotARepository(String),
    /// A repository format this tool refuses rather than misreads.
    #[error("unsupported repository: {0}")]
    Unsupported(String),
    /// The repository's ref format is one the git on `PATH` cannot read (reftable before git
    /// 2.45): nothing is read or written, as git itself would refuse the repository.
    #[error("this repository stores its refs in the {} format, which git {found} cannot read: git {}.{} or newer is needed (upgrade git, or put a newer git first on PATH)", .format.name(), .format.git_needed().0, .format.git_needed().1)]
    GitTooOldFor {
        /// The repository's ref format.
        format: RefFormat,
        /// What `git --version` said.
        found: String,
    },
    /// A bare repository found by discovery (no `GIT_DIR`) that git refuses to use that way
    /// (`safe.bareRepository=explicit`): git's own words.
    #[error("{0}")]
    ImplicitBare(String),
    /// Any other failure from the object or ref database.
    #[error("{context}")]
    Git {
        /// What was being done.
        context: String,
        /// What libgit2 said.
        #[source]
        source: LibGitError,
    },
    /// git could not be run for a local command (refs of a reftable repository, a transaction).
    #[error("{context}")]
    Command {
        /// What was being done.
        context: String,
        /// Why git could not run.
        #[source]
        source: crate::git::subprocess::GitError,
    },
    /// A local git command failed.
    #[error("{context}: {message}")]
    GitFailed {
        /// What was being done.
        context: String,
        /// git's first error line.
        message: String,
    },
    /// An object ID given by the user in the wrong form (the other format's, or not an ID).
    #[error(transparent)]
    Oid(#[from] OidError),
}

/// An error of libgit2 (the object and ref database), shown by its message alone: its class and
/// code are for the code that handles it, not for the user.
#[derive(Debug, thiserror::Error)]
#[error("{}", .0.message())]
pub struct LibGitError(#[from] git2::Error);

impl LibGitError {
    /// An error of our own, worded as libgit2 would word it.
    pub fn new(message: &str) -> Self {
        LibGitError(git2::Error::from_str(message))
    }

    /// Whether it says that what was asked for does not exist.
    pub fn is_not_found(&self) -> bool {
        self.0.code() == git2::ErrorCode::NotFound
    }

    /// This error as a [`RepoError::Git`] of doing `context`.
    pub fn context(self, context: impl Into<String>) -> RepoError {
        RepoError::Git {
            context: context.into(),
            source: self,
        }
    }
}

/// A person: name and email.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Identity {
    /// Display name.
    pub name: String,
    /// Email address.
    pub email: String,
}

/// Who made a commit, and when: what [`Repo::signature`] makes, to write one with
/// [`crate::git::objects::Objects::commit`].
pub struct Signature(pub(in crate::git) git2::Signature<'static>);

/// The identity used when neither the environment nor the config has one.
pub const FALLBACK_NAME: &str = "Unknown";
/// See [`FALLBACK_NAME`].
pub const FALLBACK_EMAIL: &str = "unknown@local";

/// An open repository. git2 types stay inside the crate.
pub struct Repo {
    pub(in crate::git) git: git2::Repository,
    common_dir: PathBuf,
    /// Its object and ref formats, read from its config when it was opened.
    formats: Formats,
    /// The settings files, read on first use and then kept for the whole command.
    settings: std::cell::OnceCell<SettingsFiles>,
    /// The remotes' names, listed on first use and then kept for the whole command (nothing in
    /// the library adds or removes a remote; listing them walks every config entry).
    remotes: std::cell::OnceCell<Vec<String>>,
    /// Its promisor remote when it is a partial clone, read on first use.
    promisor: std::cell::OnceCell<Option<String>>,
    /// `packed-refs` as ref lookups of this command read it.
    pub(in crate::git) packed_refs: crate::git::ref_lookup::PackedRefsCache,
    /// For a handle that lists the packs again only once ([`Repo::list_packs_again_once`]):
    /// whether it has.
    pub(in crate::git) packs_listed_again: Option<std::cell::Cell<bool>>,
}

/// Maps a git2 error into [`RepoError::Git`] with context.
pub(crate) fn git_err<E: Into<LibGitError>>(
    context: impl Into<String>,
) -> impl FnOnce(E) -> RepoError {
    let context = context.into();
    move |e| e.into().context(context)
}

/// The formats of the repository whose git dir is `git_dir` (a linked worktree's are its
/// common dir's), or why it cannot be used.
fn formats_of(git_dir: &Path) -> Result<Formats, RepoError> {
    // A linked worktree's config lives in the common dir.
    let common = std::fs::read_to_string(git_dir.join("commondir"))
        .ok()
        .map(|c| git_dir.join(c.trim()))
        .unwrap_or_else(|| git_dir.to_path_buf());
    let formats = Formats::read(&common).map_err(RepoError::Unsupported)?;
    if formats.refs != RefFormat::Files {
        // Every ref goes through git there: a git that cannot read the format would fail on
        // the first one, after objects were written.
        let found = crate::git::subprocess::version().map_err(|source| RepoError::Command {
            context: format!(
                "find the version of git ({} refs need it)",
                formats.refs.name()
            ),
            source,
        })?;
        let (major, minor) = formats.refs.git_needed();
        if found < GitVersion::new(major, minor, 0) {
            return Err(RepoError::GitTooOldFor {
                format: formats.refs,
                found: found.to_string(),
            });
        }
    }
    Ok(formats)
}

/// Sets libgit2 up once per process, before it opens any repository.
fn init_libgit2() {
    static INIT: std::sync::Once = std::sync::Once::new();
    INIT.call_once(|| {
        // libgit2 re-hashes every object it reads (git does not): a quarter of the cost of
        // `list` over 100,000 checkpoints (docs/performance.md). Corruption is still caught by
        // zlib's checksum of each object, and by `git fsck`.
        git2::opts::strict_hash_verification(false);
        // libgit2 checks that every object a new tree or commit names exists: it opened, read
        // and inflated each object a write had just written (a seventh of a small write's
        // system calls: docs/performance.md). Our trees name only
        // objects this process has just written or entries of a tree it read; a bug naming a
        // missing one is still caught by `git fsck` and by a push, which cannot send it.
        git2::opts::strict_object_creation(false);
        // libgit2 refuses a repository declaring an extension it does not implement. It does
        // not implement reftable, but it is only ever asked for objects and config there: every
        // ref goes through git (`git::refs`), so the repository may be opened.
        // SAFETY: called once, before any repository is opened, from this one place.
        if let Err(e) = unsafe { git2::opts::set_extensions(&["refstorage"]) } {
            log::warn!("libgit2 will refuse reftable repositories: {}", e.message());
        }
        // libgit2 caches no tree over 4 KiB, and the v1 branch's root and shard trees are
        // larger (256 shards: 7.7 KB): each lookup of a checkpoint by path inflated them again,
        // from a delta chain when packed (a third of a git-branch `show`, docs/performance.md).
        // SAFETY: as above.
        if let Err(e) =
            unsafe { git2::opts::set_cache_object_limit(git2::ObjectType::Tree, 1 << 20) }
        {
            log::info!("libgit2 object cache: {}", e.message());
        }
    });
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
        init_libgit2();
        let git = git2::Repository::open(&self.git_dir).map_err(git_err(format!(
            "open repository {}",
            self.git_dir.display()
        )))?;
        if let Some(w) = &self.workdir {
            git.set_workdir(w, false)
                .map_err(git_err(format!("set work tree {}", w.display())))?;
        }
        Repo::from_git(git, formats_of(&self.git_dir)?)
    }
}

impl Repo {
    /// Opens the repository git would use from the current directory, honouring `GIT_DIR`,
    /// `GIT_WORK_TREE`, linked worktrees and subdirectories. A format no git knows yet is
    /// refused with [`RepoError::Unsupported`], reftable refs with a git that cannot read them
    /// with [`RepoError::GitTooOldFor`].
    pub fn discover() -> Result<Repo, RepoError> {
        init_libgit2();
        let formats = match probe_git_dir() {
            Some(dir) => formats_of(&dir)?,
            None => Formats::CLASSIC,
        };
        match git2::Repository::open_from_env() {
            Ok(git) => {
                refuse_implicit_bare(&git)?;
                Self::from_git(git, formats)
            }
            // Named as git names it (`fatal: not a git repository ...: .git`), not as libgit2
            // does ("could not find repository at '.'").
            Err(e) if e.code() == git2::ErrorCode::NotFound => Err(RepoError::NotARepository(
                std::env::var("GIT_DIR").unwrap_or_else(|_| ".git".to_owned()),
            )),
            Err(e) if e.message().contains("extension") => {
                Err(RepoError::Unsupported(e.message().to_owned()))
            }
            Err(e) => Err(git_err("open repository")(e)),
        }
    }

    /// Opens the repository at `path` (a work tree or a git dir).
    pub fn open(path: &Path) -> Result<Repo, RepoError> {
        init_libgit2();
        let git = git2::Repository::open(path).map_err(|e| match e.code() {
            git2::ErrorCode::NotFound => RepoError::NotARepository(path.display().to_string()),
            _ if e.message().contains("extension") => {
                RepoError::Unsupported(e.message().to_owned())
            }
            _ => git_err(format!("open repository {}", path.display()))(e),
        })?;
        let formats = formats_of(git.path())?;
        Self::from_git(git, formats)
    }

    fn from_git(git: git2::Repository, formats: Formats) -> Result<Repo, RepoError> {
        if git.object_format() != formats.objects.git2() {
            return Err(RepoError::Unsupported(format!(
                "the repository's objects are {} for libgit2 but {} for git",
                git.object_format(),
                formats.objects.name()
            )));
        }
        let common_dir = git.commondir().to_path_buf();
        Ok(Repo {
            git,
            common_dir,
            formats,
            settings: std::cell::OnceCell::new(),
            remotes: std::cell::OnceCell::new(),
            promisor: std::cell::OnceCell::new(),
            packed_refs: Default::default(),
            packs_listed_again: None,
        })
    }

    /// Makes this handle list the packs again only at the first object it does not find, not at
    /// every one (libgit2's way, so that a pack another process added since is seen). For a
    /// handle that reads many objects, many of them absent (the transcripts of a partial
    /// clone), whose caller reads what it did not find again through another handle: a pack
    /// added after that first miss is not seen through this one.
    pub fn list_packs_again_once(&mut self) {
        self.packs_listed_again = Some(std::cell::Cell::new(false));
    }

    /// How this repository names its objects.
    pub fn object_format(&self) -> ObjectFormat {
        self.formats.objects
    }

    /// How this repository stores its refs.
    pub fn ref_format(&self) -> RefFormat {
        self.formats.refs
    }

    /// Parses a full hex object ID of this repository's format; one of the other format (or
    /// anything else) is an error that says so.
    pub fn parse_oid(&self, hex: &str) -> Result<git2::Oid, OidError> {
        self.formats.objects.parse(hex)
    }

    /// The settings files (the per-clone one of the common dir, the committed one of the work
    /// tree: none in a bare repository), read once per command: every setting a command uses
    /// comes from this one reading. An approval recorded by an older version (a digest of the
    /// committed file's bytes) is recorded again as what the file asks for, so that edits of
    /// anything else keep it.
    pub fn settings(&self) -> &SettingsFiles {
        self.settings.get_or_init(|| {
            let files = SettingsFiles::read(self.workdir(), Some(self.common_dir()), self);
            if let crate::config::settings::Approval::Approved {
                digest,
                by_bytes: true,
            } = files.approval()
            {
                if let Err(e) = self.approve_settings(digest) {
                    log::info!("could not record the approval anew: {e}");
                }
            }
            files
        })
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
        self.head_ref()?
            .strip_prefix("refs/heads/")
            .map(str::to_owned)
    }

    /// The message of the commit `rev` names (any commit-ish), or `None` when it names none.
    pub fn commit_message(&self, rev: &str) -> Option<String> {
        let (_, message) = self.commit_and_message(rev)?;
        Some(String::from_utf8_lossy(&message).into_owned())
    }

    /// The messages of the commits in `range`: `A..B` (reachable from B, not from A), or one
    /// revision and everything it reaches.
    pub fn commit_messages_in(&self, range: &str) -> Result<Vec<String>, RepoError> {
        let resolve = |rev: &str| {
            // An empty side of `A..B` is HEAD, as git reads it.
            let rev = if rev.is_empty() { "HEAD" } else { rev };
            self.resolve_commit(rev)
                .ok_or_else(|| match self.foreign_oid(rev) {
                    Some(e) => RepoError::Oid(e),
                    None => RepoError::GitFailed {
                        context: format!("resolve {range}"),
                        message: format!("{rev:?} names no commit"),
                    },
                })
        };
        let (include, exclude) = match range.split_once("..") {
            Some((from, to)) if !to.starts_with('.') => (resolve(to)?, Some(resolve(from)?)),
            Some(_) => {
                return Err(RepoError::GitFailed {
                    context: format!("resolve {range}"),
                    message: "a symmetric difference (A...B) is not a range of commits here".into(),
                })
            }
            None => (resolve(range)?, None),
        };
        let mut walk = self.git.revwalk().map_err(git_err("walk commits"))?;
        walk.push(include)
            .map_err(git_err(format!("walk {range}")))?;
        if let Some(exclude) = exclude {
            walk.hide(exclude)
                .map_err(git_err(format!("walk {range}")))?;
        }
        let mut out = Vec::new();
        for oid in walk {
            let oid = oid.map_err(git_err("walk commits"))?;
            let c = self.git.find_commit(oid).map_err(git_err("read commit"))?;
            out.push(String::from_utf8_lossy(c.message_bytes()).into_owned());
        }
        Ok(out)
    }

    /// Why `word` (a revision the user gave, that names nothing here) names nothing: it is a
    /// full object ID of the other format (a SHA-256 ID in a SHA-1 repository, or the
    /// reverse). `None` when it is anything else, or when it names an object after all (in a
    /// SHA-256 repository, 40 hex digits may be an abbreviated ID).
    pub fn foreign_oid(&self, word: &str) -> Option<OidError> {
        let err = self.parse_oid(word).err()?;
        match err {
            OidError::OtherFormat { .. } if self.resolve_commit(word).is_none() => Some(err),
            _ => None,
        }
    }

    /// [`Repo::foreign_oid`] of the revision git's error line names (`bad revision 'X'`,
    /// `ambiguous argument 'X'`, `invalid object name 'X'`), if it is such an ID.
    pub fn foreign_oid_in(&self, git_error: &str) -> Option<OidError> {
        [
            "bad revision '",
            "ambiguous argument '",
            "invalid object name '",
        ]
        .iter()
        .find_map(|marker| git_error.split(marker).nth(1)?.split('\'').next())?
        // Each end of `A..B` or `A...B`.
        .split("..")
        .find_map(|end| self.foreign_oid(end.trim_matches(['.', '^'])))
    }

    /// Whether `hex` is the full ID of a commit of this repository.
    pub fn has_commit(&self, hex: &str) -> bool {
        self.parse_oid(hex)
            .is_ok_and(|oid| self.git.find_commit(oid).is_ok())
    }

    /// The full ID of the one commit whose ID starts with `hex` (7 hex digits or more, as git
    /// abbreviates them), when exactly one does.
    pub fn commit_with_prefix(&self, hex: &str) -> Option<String> {
        if hex.len() < 7 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        self.git
            .find_object_by_prefix(hex, Some(git2::ObjectType::Commit))
            .ok()
            .map(|o| o.id().to_string())
    }

    /// The configured remotes' names, in config order, as they were when first asked for.
    pub fn remote_names(&self) -> &[String] {
        self.remotes.get_or_init(|| {
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
        })
    }

    /// The promisor remote of a partial clone (`git clone --filter`): `extensions.partialClone`,
    /// else the first remote with `remote.<name>.promisor` set. Objects its refs reach may be
    /// missing, to be fetched from there. `None` when the repository is no partial clone.
    pub fn promisor_remote(&self) -> Option<&str> {
        self.promisor
            .get_or_init(|| {
                let config = self.git.config().ok()?;
                if let Ok(name) = config.get_string("extensions.partialclone") {
                    return Some(name);
                }
                self.remote_names()
                    .iter()
                    .find(|name| {
                        config
                            .get_bool(&format!("remote.{name}.promisor"))
                            .unwrap_or(false)
                    })
                    .cloned()
            })
            .as_deref()
    }

    /// Where history ends in a shallow clone (`git clone --depth`, `--shallow-since`): the
    /// commits git lists in `<git-common-dir>/shallow`, whose parents it does not have. Empty
    /// in a repository with its whole history.
    pub fn shallow_boundary(&self) -> Vec<String> {
        std::fs::read_to_string(self.common_dir.join("shallow"))
            .map(|text| text.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default()
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
    pub fn signature(&self, who: &Identity, role: &str) -> Result<Signature, RepoError> {
        let date = std::env::var(format!("GIT_{role}_DATE"))
            .ok()
            .and_then(|d| timefmt::parse_git_date(&d));
        match date {
            Some((secs, offset)) => {
                git2::Signature::new(&who.name, &who.email, &git2::Time::new(secs, offset))
            }
            None => git2::Signature::now(&who.name, &who.email),
        }
        .map(Signature)
        .map_err(git_err("make commit signature"))
    }
}

/// Refuses a bare repository that discovery found (no `GIT_DIR`) when git would: with
/// `safe.bareRepository=explicit` (Git 3.0's default), so that a repository embedded in a clone
/// cannot bring its config (and the commands it names) into our git calls. libgit2 does not
/// know the setting, which only git's protected config may set: git itself is asked, from the
/// same directory.
fn refuse_implicit_bare(git: &git2::Repository) -> Result<(), RepoError> {
    if !git.is_bare() || std::env::var_os("GIT_DIR").is_some() {
        return Ok(());
    }
    let out = crate::git::subprocess::Git::new(Path::new("."))
        .args(["rev-parse", "--git-dir"])
        .run(std::time::Duration::from_secs(30))
        .map_err(|e| {
            RepoError::ImplicitBare(format!(
                "cannot tell whether git may use the bare repository {}: {e}",
                git.path().display()
            ))
        })?;
    match out.success() {
        true => Ok(()),
        false => Err(RepoError::ImplicitBare(
            crate::git::subprocess::first_error_line(&out.stderr)
                .trim_start_matches("fatal: ")
                .to_owned(),
        )),
    }
}

impl crate::base::error::ExitStatus for RepoError {
    fn exit_code(&self) -> i32 {
        match self {
            RepoError::NotARepository(_)
            | RepoError::Unsupported(_)
            | RepoError::GitTooOldFor { .. }
            | RepoError::ImplicitBare(_) => crate::base::error::NOT_A_REPOSITORY,
            RepoError::Git { .. } | RepoError::Command { .. } | RepoError::GitFailed { .. } => {
                crate::base::error::FAILURE
            }
            // Only ever an ID the user gave.
            RepoError::Oid(_) => crate::base::error::USAGE,
        }
    }
}
