//! Reading a settings file as the user's own or as untrusted input: never through a symbolic
//! link, never past [`MAX_SETTINGS_BYTES`], the committed file only inside the work tree, and the
//! per-clone file moved from its old place in the work tree when it is the user's.

use std::path::Path;

use serde_json::Value;

use crate::base::fs::{read_cache_file, CacheFileError};

use super::{
    local_path, shown, SettingsContext, SettingsError, SettingsFiles, SettingsWarning,
    LEGACY_LOCAL_SHOWN, LOCAL_SETTINGS_FILE, SETTINGS_DIR, SETTINGS_FILE,
};

/// The largest settings file read: a larger one is not read at all (a committed 1 GB file would
/// otherwise cost 1 GB of memory in every command), and counts as a file that does not parse.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// A settings file as read: its bytes (for the approval of a committed file recorded by an
/// older version, a digest of the bytes) and its JSON.
pub(super) struct ReadFile {
    pub(super) bytes: Vec<u8>,
    pub(super) value: Value,
}

/// The bytes of the settings file at `path` (shown as `shown`), never through a symbolic link
/// at the file: `None` when it is missing, unreadable, not a regular file or empty (or only
/// whitespace: it says nothing, so nothing is lost); [`SettingsError::TooLarge`] over
/// [`MAX_SETTINGS_BYTES`].
fn read_bytes(path: &Path, shown: &str) -> Result<Option<Vec<u8>>, SettingsError> {
    let bytes = match read_cache_file(path, MAX_SETTINGS_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(CacheFileError::TooLarge { size, max }) => {
            return Err(SettingsError::TooLarge {
                path: shown.to_owned(),
                size,
                max,
            })
        }
        Err(e) => {
            log::info!("ignoring {}: {e}", path.display());
            return Ok(None);
        }
    };
    Ok((!bytes.iter().all(u8::is_ascii_whitespace)).then_some(bytes))
}

/// [`read_bytes`], parsed: [`SettingsError::Syntax`] when it is not valid JSON.
pub(super) fn read_file(path: &Path, shown: &str) -> Result<Option<ReadFile>, SettingsError> {
    let Some(bytes) = read_bytes(path, shown)? else {
        return Ok(None);
    };
    let value = serde_json::from_slice(&bytes).map_err(|e| SettingsError::Syntax {
        path: shown.to_owned(),
        message: e.to_string(),
    })?;
    Ok(Some(ReadFile { bytes, value }))
}

/// Whether `path` is a symbolic link (not followed).
fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// How git tracks a path, as [`SettingsContext::tracked_kind`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracked {
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A gitlink: a submodule.
    Submodule,
    /// A directory (of `HEAD`'s tree).
    Directory,
}

/// Why the work tree's `.entire` is not a directory of the user's own, so that whoever can
/// push wrote what is under it: its files are read as the committed file is (untrusted), and
/// nothing of ours is written into it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForeignDir {
    /// `.entire` is a symbolic link (a checkout makes one where git tracks one).
    #[error("{SETTINGS_DIR} is a symbolic link")]
    Symlink,
    /// `.entire` holds a `.git`: it is a repository of its own (a submodule).
    #[error("{SETTINGS_DIR} is a submodule (a repository of its own)")]
    Submodule,
    /// git tracks `.entire` itself as something other than a directory.
    #[error("git tracks {SETTINGS_DIR} as {}", match .0 {
        Tracked::Symlink => "a symbolic link",
        Tracked::Submodule => "a submodule",
        Tracked::File | Tracked::Directory => "a file",
    })]
    Tracked(Tracked),
}

/// Why `.entire` of `worktree` is not the user's own directory, if it is not (see
/// [`ForeignDir`]); `None` also when there is no `.entire`.
pub fn foreign_settings_dir(worktree: &Path, context: &dyn SettingsContext) -> Option<ForeignDir> {
    let dir = worktree.join(SETTINGS_DIR);
    let meta = std::fs::symlink_metadata(&dir).ok();
    if meta.as_ref().is_some_and(|m| m.file_type().is_symlink()) {
        return Some(ForeignDir::Symlink);
    }
    if meta.is_some() && std::fs::symlink_metadata(dir.join(".git")).is_ok() {
        return Some(ForeignDir::Submodule);
    }
    match context.tracked_kind(SETTINGS_DIR) {
        None | Some(Tracked::Directory) => None,
        Some(kind) => Some(ForeignDir::Tracked(kind)),
    }
}

/// The committed settings file of `worktree`. The file itself is never read through a link
/// (one warning says so); `.entire` may be one (its files are untrusted like the committed
/// file) only while it resolves inside the work tree.
pub(super) fn read_committed(
    worktree: &Path,
    context: &dyn SettingsContext,
    warnings: &mut Vec<SettingsWarning>,
) -> Result<Option<ReadFile>, SettingsError> {
    let dir = worktree.join(SETTINGS_DIR);
    let path = dir.join(SETTINGS_FILE);
    // A sparse checkout that leaves `.entire/` out of its cone: the file as git holds it in the
    // index, as git reads `.gitmodules` (the settings are never silently the defaults there).
    if let Some(held) = context.sparse_file(
        &format!("{SETTINGS_DIR}/{SETTINGS_FILE}"),
        MAX_SETTINGS_BYTES,
    ) {
        let shown = shown(SETTINGS_FILE);
        let bytes = held.map_err(|size| SettingsError::TooLarge {
            path: shown.clone(),
            size,
            max: MAX_SETTINGS_BYTES,
        })?;
        if bytes.iter().all(u8::is_ascii_whitespace) {
            return Ok(None);
        }
        let value = serde_json::from_slice(&bytes).map_err(|e| SettingsError::Syntax {
            path: shown,
            message: e.to_string(),
        })?;
        return Ok(Some(ReadFile { bytes, value }));
    }
    if is_link(&dir) {
        let inside = std::fs::canonicalize(&dir)
            .ok()
            .zip(std::fs::canonicalize(worktree).ok())
            .is_some_and(|(real, root)| real.starts_with(root));
        if !inside {
            log::warn!(
                "ignoring {}: it points outside the work tree",
                dir.display()
            );
            return Ok(None);
        }
    }
    if is_link(&path) {
        warnings.push(SettingsWarning::Link {
            path: shown(SETTINGS_FILE),
        });
        return Ok(None);
    }
    read_file(&path, &shown(SETTINGS_FILE))
}

/// The per-clone file as found at its old place, `.entire/settings.local.json` of `worktree`,
/// when it is the user's own (see the module docs): moved to [`local_path`] (a file already
/// there is kept beside it as `settings.local.json.replaced`: the one in the work tree is the
/// newer word). Otherwise it stays where it is, unread, with one warning saying why. Returns
/// the bytes when the move failed, to be read where they are for this command.
pub(super) fn move_legacy_local(
    worktree: &Path,
    common_dir: &Path,
    context: &dyn SettingsContext,
    files: &mut SettingsFiles,
) -> Option<Vec<u8>> {
    let legacy = worktree.join(SETTINGS_DIR).join(LOCAL_SETTINGS_FILE);
    let meta = std::fs::symlink_metadata(&legacy).ok()?;
    let path = LEGACY_LOCAL_SHOWN.to_owned();
    if let Some(why) = foreign_settings_dir(worktree, context) {
        files
            .warnings
            .push(SettingsWarning::ForeignLocalFile { path, why });
        return None;
    }
    if meta.file_type().is_symlink() {
        files.warnings.push(SettingsWarning::Link { path });
        return None;
    }
    if !meta.is_file() {
        return None;
    }
    if context
        .tracked_kind(&format!("{SETTINGS_DIR}/{LOCAL_SETTINGS_FILE}"))
        .is_some()
    {
        files
            .warnings
            .push(SettingsWarning::TrackedLocalFile { path });
        return None;
    }
    let bytes = match read_cache_file(&legacy, MAX_SETTINGS_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return None,
        Err(CacheFileError::TooLarge { size, max }) => {
            files
                .unparseable
                .push(SettingsError::TooLarge { path, size, max });
            return None;
        }
        Err(e) => {
            log::info!("ignoring {}: {e}", legacy.display());
            return None;
        }
    };
    let target = local_path(common_dir);
    let replaced = target.with_extension("json.replaced");
    let moved = (|| -> std::io::Result<bool> {
        std::fs::create_dir_all(common_dir.join("entire"))?;
        let replacing = std::fs::symlink_metadata(&target).is_ok();
        if replacing {
            std::fs::rename(&target, &replaced)?;
        }
        crate::base::fs::write_atomic(&target, &bytes, 0o644)?;
        match std::fs::remove_file(&legacy) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(replacing),
        }
    })();
    match moved {
        Ok(replacing) => {
            files.warnings.push(SettingsWarning::Moved { replacing });
            None
        }
        Err(e) => {
            files.warnings.push(SettingsWarning::NotMoved {
                reason: e.to_string(),
            });
            Some(bytes)
        }
    }
}
