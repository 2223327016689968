//! The filesystem mirror (`fs`): every checkpoint as plain files under a directory,
//! `<dir>/<id>/metadata.json`, `<dir>/<id>/0/full.jsonl`, ... — the same layout as a git-refs
//! checkpoint tree, readable by any tool.
//!
//! It is not git-backed, so it can only ever be a mirror. To apply exactly the same write
//! semantics as the git stores (slot reuse, slot wipes, summary recomputation, backfill rules),
//! it imports the checkpoint's files into an in-memory object database, runs the shared tree
//! writer there, and exports the result: every file through a temp file and a rename, stale
//! files removed. A per-checkpoint lock file serialises concurrent writers.

use std::fs;
use std::path::{Path, PathBuf};

use crate::git::objects::Oid;
use crate::git::objects::{ObjectKind, Objects, ScratchObjects, Tree};
use serde_json::Value;

use crate::base::fs::{is_temp_name, read_owned, write_atomic, FileLock};
use crate::config::settings::{ConfigSource, Limits, SETTINGS_DIR, SETTINGS_FILE};
use crate::git::repo::Repo;
use crate::store::tree;
use crate::store::{git_err, Backfill, CheckpointWriter, SessionWrite, StoreError, WriteOutcome};

/// The backend type name.
pub const FS_BACKEND: &str = "fs";

/// The default directory, relative to the git common dir.
pub const DEFAULT_FS_DIR: &str = "entire/fs-mirror";

/// The filesystem mirror.
pub struct FsMirror {
    dir: Target,
    /// The caps on reading the checkpoints it finds there (its directory may be in a work tree
    /// whose content came from a remote).
    limits: Limits,
}

/// Where the mirror writes, or why it writes nothing.
enum Target {
    /// The (confined, when untrusted) directory.
    Dir(PathBuf),
    /// The directory is refused: every write fails with this reason, and the primary write
    /// goes on (mirrors are best effort).
    Refused(DirRefused),
}

/// Why an fs mirror's settings were refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FsConfigError {
    /// A key other than `dir`.
    #[error("unknown field {0:?} in fs mirror config (expected \"dir\")")]
    UnknownField(String),
    /// `dir` is empty or not a string.
    #[error("fs mirror config \"dir\" must be a non-empty string")]
    DirNotAString,
    /// The config is not an object.
    #[error("fs mirror config must be a JSON object")]
    NotAnObject,
}

/// Why the fs mirror refuses every write to its directory.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DirRefused {
    /// The directory an untrusted settings file gave resolves outside the repository (or into
    /// its git dir).
    #[error("fs mirror dir {dir:?} from {} resolves outside the repository (or into its git dir): refused; \
a committed settings file may only name a directory inside the work tree or under .git/entire/ \
(set it in .entire/settings.local.json to use another)", Path::new(SETTINGS_DIR).join(SETTINGS_FILE).display())]
    OutsideRepository {
        /// The directory as the settings file gave it.
        dir: String,
    },
    /// The directory is inside the work tree and git does not ignore it: `git add -A` would
    /// commit the transcripts written there.
    #[error("fs mirror dir {dir:?} is inside the work tree and git does not ignore it, so `git add -A` would commit its transcripts: refused; \
add `/{ignore}/` to .gitignore (or to .git/info/exclude for this clone only), or leave \"dir\" unset to mirror under .git/entire/fs-mirror")]
    NotIgnored {
        /// The directory as the settings gave it.
        dir: String,
        /// The directory relative to the work tree, `/`-separated: the line to ignore.
        ignore: String,
    },
}

fn io_err(context: String) -> impl FnOnce(std::io::Error) -> StoreError {
    move |e| crate::base::error::io_context(context)(e).into()
}

impl FsMirror {
    /// A mirror writing under `dir`.
    pub fn new(dir: PathBuf) -> Self {
        FsMirror {
            dir: Target::Dir(dir),
            limits: Limits::default(),
        }
    }

    /// Builds the mirror from its settings `config` (`{"dir": "<path>"}`, relative paths taken
    /// from the work tree root), defaulting to `<git-common-dir>/entire/fs-mirror`.
    ///
    /// From an untrusted `source` (the committed settings file) the directory must resolve,
    /// after `..` and symlinks, inside the work tree but outside the git dir, or inside
    /// `<git-common-dir>/entire/`; otherwise the mirror is built but refuses every write.
    pub fn from_config(
        repo: &Repo,
        config: Option<&Value>,
        source: ConfigSource,
    ) -> Result<Self, FsConfigError> {
        let Some(given) = Self::dir_setting(config)? else {
            return Ok(FsMirror {
                limits: repo.settings().limits(),
                ..FsMirror::new(repo.common_dir().join(DEFAULT_FS_DIR))
            });
        };
        let dir = match &given {
            d if d.is_absolute() => d.clone(),
            d => repo.workdir().unwrap_or(repo.common_dir()).join(d),
        };
        let shown = given.display().to_string();
        let dir = if source.trusted() {
            resolve(&dir).unwrap_or(dir)
        } else {
            match confined(repo, &dir) {
                Some(real) => real,
                None => {
                    return Ok(FsMirror {
                        dir: Target::Refused(DirRefused::OutsideRepository { dir: shown }),
                        limits: Limits::default(),
                    })
                }
            }
        };
        if let Some(ignore) = unignored_in_work_tree(repo, &dir) {
            return Ok(FsMirror {
                dir: Target::Refused(DirRefused::NotIgnored { dir: shown, ignore }),
                limits: Limits::default(),
            });
        }
        Ok(FsMirror {
            limits: repo.settings().limits(),
            ..FsMirror::new(dir)
        })
    }

    /// The directory the settings `config` give, as given (`None`: the default), or why they
    /// are refused: the only settings [`FsMirror::from_config`] refuses, read from them alone.
    pub fn dir_setting(config: Option<&Value>) -> Result<Option<PathBuf>, FsConfigError> {
        Ok(match config {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => {
                for key in m.keys() {
                    if key != "dir" {
                        return Err(FsConfigError::UnknownField(key.clone()));
                    }
                }
                match m.get("dir") {
                    None => None,
                    Some(Value::String(s)) if !s.is_empty() => Some(PathBuf::from(s)),
                    Some(_) => return Err(FsConfigError::DirNotAString),
                }
            }
            Some(_) => return Err(FsConfigError::NotAnObject),
        })
    }

    /// The directory the mirror writes to, or why it refuses to write.
    pub fn dir(&self) -> Result<&Path, &DirRefused> {
        match &self.dir {
            Target::Dir(d) => Ok(d),
            Target::Refused(why) => Err(why),
        }
    }

    fn scratch() -> Result<ScratchObjects, StoreError> {
        ScratchObjects::new().map_err(git_err("create in-memory object database"))
    }

    /// Reads a directory tree into the scratch object database.
    fn import(repo: Objects<'_>, path: &Path, limits: &Limits) -> Result<Option<Oid>, StoreError> {
        let entries = match fs::read_dir(path) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(format!("read {}", path.display()))(e)),
        };
        let mut builder = repo.tree_builder(None).map_err(git_err("start tree"))?;
        for entry in entries {
            let entry = entry.map_err(io_err(format!("read {}", path.display())))?;
            let name = entry.file_name();
            let Some(name) = name.to_str() else { continue };
            if is_temp_name(name) {
                continue;
            }
            let p = entry.path();
            let ft = entry
                .file_type()
                .map_err(io_err(format!("stat {}", p.display())))?;
            if ft.is_dir() {
                if let Some(oid) = Self::import(repo, &p, limits)? {
                    builder
                        .insert(name, oid, 0o040000)
                        .map_err(git_err("insert tree"))?;
                }
            } else if ft.is_file() {
                let data = read_owned(&p, limits.blob_bytes)
                    .map_err(io_err(format!("read {}", p.display())))?
                    .unwrap_or_default();
                let oid = repo.write_blob(&data).map_err(git_err("write blob"))?;
                builder
                    .insert(name, oid, 0o100644)
                    .map_err(git_err("insert blob"))?;
            }
        }
        builder.write().map(Some).map_err(git_err("write tree"))
    }

    /// Writes `tree` out under `path`: changed files atomically, stale entries removed.
    ///
    /// A symlink where a directory goes is replaced by a directory, never followed: the mirror
    /// may sit in a work tree whose content came from a remote.
    fn export(repo: Objects<'_>, tree: &Tree<'_>, path: &Path) -> Result<(), StoreError> {
        if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
            fs::remove_file(path).map_err(io_err(format!("remove {}", path.display())))?;
        }
        fs::create_dir_all(path).map_err(io_err(format!("create {}", path.display())))?;
        let mut keep = std::collections::HashSet::new();
        for entry in tree.iter() {
            let Some(name) = entry.name() else { continue };
            keep.insert(name.to_owned());
            let target = path.join(name);
            match entry.kind() {
                Some(ObjectKind::Tree) => {
                    if target.is_file() {
                        fs::remove_file(&target)
                            .map_err(io_err(format!("remove {}", target.display())))?;
                    }
                    let sub = repo.find_tree(entry.id()).map_err(git_err("read tree"))?;
                    Self::export(repo, &sub, &target)?;
                }
                Some(ObjectKind::Blob) => {
                    let blob = repo.read_blob(entry.id()).map_err(git_err("read blob"))?;
                    let size = blob.len() as u64;
                    if read_owned(&target, size).ok().flatten().as_deref() == Some(&blob[..]) {
                        continue;
                    }
                    if target.is_dir() {
                        fs::remove_dir_all(&target)
                            .map_err(io_err(format!("remove {}", target.display())))?;
                    }
                    write_atomic(&target, &blob, 0o644)
                        .map_err(io_err(format!("write {}", target.display())))?;
                }
                _ => {}
            }
        }
        for entry in fs::read_dir(path).map_err(io_err(format!("read {}", path.display())))? {
            let entry = entry.map_err(io_err(format!("read {}", path.display())))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if keep.contains(&name) || is_temp_name(&name) {
                continue;
            }
            let p = entry.path();
            if p.is_dir() {
                fs::remove_dir_all(&p)
            } else {
                fs::remove_file(&p)
            }
            .map_err(io_err(format!("remove {}", p.display())))?;
        }
        Ok(())
    }

    /// Runs `build` on the checkpoint's current files under the per-checkpoint lock and exports
    /// the result.
    fn update(
        &self,
        id: &crate::base::id::CheckpointId,
        build: impl FnOnce(Objects<'_>, Option<&Tree<'_>>) -> Result<Option<tree::Change>, StoreError>,
    ) -> Result<WriteOutcome, StoreError> {
        let dir = self
            .dir()
            .map_err(|refused| StoreError::Refused(refused.clone()))?;
        fs::create_dir_all(dir).map_err(io_err(format!(
            "create fs mirror directory {}",
            dir.display()
        )))?;
        let lock_path = dir.join(format!(".{id}.lock"));
        let _lock = FileLock::exclusive(&lock_path)
            .map_err(io_err(format!("lock {}", lock_path.display())))?;
        let scratch = Self::scratch()?;
        let repo = scratch.objects();
        let target = dir.join(id.as_str());
        let base = match Self::import(repo, &target, &self.limits)? {
            Some(oid) => Some(repo.find_tree(oid).map_err(git_err("read tree"))?),
            None => None,
        };
        let Some(change) = build(repo, base.as_ref())? else {
            return Ok(WriteOutcome {
                ref_name: target.display().to_string(),
                commit: String::new(),
                changed: false,
                enqueue_error: None,
                session: None,
            });
        };
        let tree = repo.find_tree(change.tree).map_err(git_err("read tree"))?;
        Self::export(repo, &tree, &target)?;
        Ok(WriteOutcome {
            ref_name: target.display().to_string(),
            commit: change.tree.to_string(),
            changed: true,
            enqueue_error: None,
            session: None,
        })
    }
}

/// `dir` with `..` and symlinks resolved, if it lies inside the work tree but outside the git
/// dirs, or inside `<git-common-dir>/entire/`. The part of `dir` that does not exist yet is
/// resolved lexically (it cannot hold symlinks until it exists).
fn confined(repo: &Repo, dir: &Path) -> Option<PathBuf> {
    let real = resolve(dir)?;
    let canon = |p: &Path| fs::canonicalize(p).ok();
    let common = canon(repo.common_dir())?;
    if real.starts_with(common.join("entire")) {
        return Some(real);
    }
    let git_dir = canon(repo.git_dir())?;
    let worktree = canon(repo.workdir()?)?;
    (real.starts_with(&worktree) && !real.starts_with(&common) && !real.starts_with(&git_dir))
        .then_some(real)
}

/// When the real directory `dir` is inside the work tree (outside the git dirs) and git does
/// not ignore what would be written there: the directory relative to the work tree,
/// `/`-separated.
fn unignored_in_work_tree(repo: &Repo, dir: &Path) -> Option<String> {
    let canon = |p: &Path| fs::canonicalize(p).ok();
    let worktree = canon(repo.workdir()?)?;
    let inside = dir.strip_prefix(&worktree).ok()?;
    let common = canon(repo.common_dir())?;
    if dir.starts_with(&common) || canon(repo.git_dir()).is_some_and(|g| dir.starts_with(g)) {
        return None;
    }
    let rel: Vec<String> = inside
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let rel = rel.join("/");
    // A file as the mirror writes it (`<dir>/<id>/metadata.json`): a rule for the directory
    // or for what is in it counts.
    let probe = format!(
        "{}0123456789ab/metadata.json",
        if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        }
    );
    (!repo.is_ignored(&probe)).then_some(rel)
}

/// The real path `dir` (absolute) names: each existing prefix canonicalized (symlinks
/// followed), and `..` applied to the real path so far, so it cannot climb out through a link.
fn resolve(dir: &Path) -> Option<PathBuf> {
    use std::path::Component;
    let mut out = PathBuf::new();
    for part in dir.components() {
        match part {
            Component::Prefix(_) | Component::RootDir => out.push(part),
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(name) => {
                out.push(name);
                if let Ok(real) = fs::canonicalize(&out) {
                    out = real;
                }
            }
        }
    }
    out.is_absolute().then_some(out)
}

impl CheckpointWriter for FsMirror {
    fn name(&self) -> &str {
        FS_BACKEND
    }

    fn write_session(&self, w: &SessionWrite) -> Result<WriteOutcome, StoreError> {
        self.update(&w.checkpoint_id, |repo, base| {
            tree::build_session(repo, base, "", w, &self.limits).map(|(c, _)| Some(c))
        })
    }

    fn backfill(&self, b: &Backfill) -> Result<WriteOutcome, StoreError> {
        let sid = b.requested_session();
        let target = b.slot_target(sid.as_deref());
        self.update(b.id(), |repo, base| {
            Ok(tree::build_backfill(repo, base, "", b, &target, &self.limits)?.map(|(c, _)| c))
        })
    }
}
