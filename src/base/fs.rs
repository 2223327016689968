//! The two file primitives every piece of local bookkeeping uses: an advisory lock on a sidecar
//! file, and an atomic replace (temp file in the same directory, fsync, rename), so a reader
//! never sees a half-written file and a crash leaves the old one or the new one.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::Path;

/// An advisory lock on a file, released when dropped.
pub(crate) struct FileLock(File);

impl FileLock {
    /// Takes an exclusive lock on `path` (created, with its directory, if missing), waiting for
    /// other holders.
    pub(crate) fn exclusive(path: &Path) -> std::io::Result<FileLock> {
        let f = Self::open(path)?;
        f.lock()?;
        Ok(FileLock(f))
    }

    /// Takes a shared lock on `path`, like [`FileLock::exclusive`].
    pub(crate) fn shared(path: &Path) -> std::io::Result<FileLock> {
        let f = Self::open(path)?;
        f.lock_shared()?;
        Ok(FileLock(f))
    }

    fn open(path: &Path) -> std::io::Result<File> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .open(path)
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// Replaces `path` with `data` atomically: a temp file beside it with permissions `mode`,
/// written, fsynced, then renamed over `path`. The temp file is removed on failure.
pub(crate) fn write_atomic(path: &Path, data: &[u8], mode: u32) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // Named so that directory readers skip it ([`is_temp_name`]); removed if dropped unpersisted.
    let mut tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}.tmp-"))
        .tempfile_in(dir)?;
    // Exactly `mode`, whatever the umask (hooks must stay executable).
    tmp.as_file()
        .set_permissions(std::fs::Permissions::from_mode(mode))?;
    tmp.write_all(data)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// Whether a directory entry is a temp file of [`write_atomic`] (or of the older `.tmp-*`
/// naming), which readers of a directory skip.
pub(crate) fn is_temp_name(name: &str) -> bool {
    name.starts_with('.') && name.contains(".tmp-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_write_replaces_and_sets_mode() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        write_atomic(&p, b"one", 0o600).unwrap();
        write_atomic(&p, b"two", 0o600).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert_eq!(
            fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temp file left"
        );
    }

    #[test]
    fn locks_create_their_directory() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("a/b/l.lock");
        drop(FileLock::exclusive(&p).unwrap());
        let _s1 = FileLock::shared(&p).unwrap();
        let _s2 = FileLock::shared(&p).unwrap();
    }
}
