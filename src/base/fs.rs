//! The file primitives every piece of local bookkeeping under `<git-common-dir>/entire*` uses:
//! an advisory lock on a sidecar file, an atomic replace (temp file in the same directory,
//! fsync, rename: the rename replaces a link rather than following it), so a reader never sees a
//! half-written file and a crash leaves the old one or the new one, an append, and a bounded
//! read. None of them opens a file through a symbolic link or waits on a FIFO or a device:
//! whoever can write to `.git` must not make a command hang, grow without bound or write outside
//! it through a file of ours.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
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
        // Never through a link, never waiting on a FIFO.
        let f = OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)?;
        regular(&f)?;
        Ok(f)
    }
}

/// `Ok` when `f` is a regular file, else an error of kind `InvalidData`.
fn regular(f: &File) -> std::io::Result<()> {
    if f.metadata()?.is_file() {
        Ok(())
    } else {
        Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "not a regular file",
        ))
    }
}

/// Opens the file we own at `path` to append to it (created with `mode` when missing), never
/// through a symbolic link, never a FIFO, device or directory.
pub(crate) fn open_append(path: &Path, mode: u32) -> std::io::Result<File> {
    let f = OpenOptions::new()
        .create(true)
        .read(true)
        .append(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    regular(&f)?;
    Ok(f)
}

/// [`read_cache_file`] for readers that report I/O errors: `Ok(None)` when it does not exist; a
/// link, a FIFO, a device or a file over `max` bytes is an error of kind `InvalidData`.
pub(crate) fn read_owned(path: &Path, max: u64) -> std::io::Result<Option<Vec<u8>>> {
    read_cache_file(path, max).map_err(|e| match e {
        CacheFileError::Unreadable(e) => e,
        other => std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("{}: {other}", path.display()),
        ),
    })
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = self.0.unlock();
    }
}

/// An exclusive lock whose file exists only while it is held, for locks named after user input
/// (a session ID) that must not pile up: released, it removes its file before unlocking. A
/// waiter that locked the file meanwhile removed (or replaced) finds that the path no longer
/// names the file it holds, and locks again, so two holders never overlap. A file a crash left
/// is simply locked and removed by the next holder.
pub(crate) struct TransientLock {
    /// Held until after the file is removed (fields drop after `drop`).
    _lock: FileLock,
    path: std::path::PathBuf,
}

impl TransientLock {
    /// Takes the lock on `path` (created, with its directory, if missing), waiting for other
    /// holders.
    pub(crate) fn exclusive(path: &Path) -> std::io::Result<TransientLock> {
        use std::os::unix::fs::MetadataExt;
        loop {
            let lock = FileLock::exclusive(path)?;
            let held = lock.0.metadata()?;
            match fs::symlink_metadata(path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {
                    return Ok(TransientLock {
                        _lock: lock,
                        path: path.to_owned(),
                    })
                }
                // Released (removed) by its holder while we waited: lock the path anew.
                Ok(_) => continue,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(e),
            }
        }
    }
}

impl Drop for TransientLock {
    fn drop(&mut self) {
        // Removed while still locked: the lock is released after this, as its field drops.
        let _ = fs::remove_file(&self.path);
    }
}

/// Replaces `path` with `data` atomically: a temp file beside it with permissions `mode`,
/// written, fsynced, then renamed over `path`. The temp file is removed on failure.
pub(crate) fn write_atomic(path: &Path, data: &[u8], mode: u32) -> std::io::Result<()> {
    replace(path, data, mode, true)
}

/// [`write_atomic`] without the fsync, for a cache file whose readers check what they read
/// (a file torn by a crash fails their checks and is recomputed): readers never see a partial
/// file, and a cache of many entries costs no disk flush per entry.
pub(crate) fn write_cache_file(path: &Path, data: &[u8]) -> std::io::Result<()> {
    replace(path, data, 0o644, false)
}

fn replace(path: &Path, data: &[u8], mode: u32, sync: bool) -> std::io::Result<()> {
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
    if sync {
        tmp.as_file().sync_all()?;
    }
    tmp.persist(path).map(drop).map_err(|e| e.error)
}

/// Why a cache file was not read.
#[derive(Debug, thiserror::Error)]
pub enum CacheFileError {
    /// A symbolic link, a directory, a FIFO or anything else that is not a regular file; a link
    /// is never followed and a FIFO never waited on.
    #[error("not a regular file")]
    NotAFile,
    /// Larger than the reader accepts.
    #[error("too large: {size} bytes (at most {max})")]
    TooLarge {
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// It could not be read.
    #[error("unreadable")]
    Unreadable(#[source] std::io::Error),
}

/// The bytes of the local cache file `path`, `None` when it does not exist. Refuses anything
/// but a regular file of at most `max` bytes (also when it grows while being read).
pub(crate) fn read_cache_file(path: &Path, max: u64) -> Result<Option<Vec<u8>>, CacheFileError> {
    let mut file = match OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(CacheFileError::NotAFile),
        Err(e) => return Err(CacheFileError::Unreadable(e)),
    };
    let meta = file.metadata().map_err(CacheFileError::Unreadable)?;
    if !meta.is_file() {
        return Err(CacheFileError::NotAFile);
    }
    let too_large = |size| CacheFileError::TooLarge { size, max };
    if meta.len() > max {
        return Err(too_large(meta.len()));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    (&mut file)
        .take(max.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(CacheFileError::Unreadable)?;
    if bytes.len() as u64 > max {
        return Err(too_large(bytes.len() as u64));
    }
    Ok(Some(bytes))
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
    fn cache_files_are_read_only_when_regular_and_small() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("cache");
        assert!(matches!(read_cache_file(&path, 8), Ok(None)));
        fs::write(&path, b"1234").unwrap();
        assert_eq!(read_cache_file(&path, 8).unwrap().unwrap(), b"1234");
        assert!(matches!(
            read_cache_file(&path, 3),
            Err(CacheFileError::TooLarge { size: 4, max: 3 })
        ));
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(matches!(
            read_cache_file(&link, 8),
            Err(CacheFileError::NotAFile)
        ));
        let sub = dir.path().join("dir");
        fs::create_dir(&sub).unwrap();
        assert!(matches!(
            read_cache_file(&sub, 8),
            Err(CacheFileError::NotAFile)
        ));
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_cache_file(&fifo, 8),
            Err(CacheFileError::NotAFile)
        ));
    }

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
    fn a_transient_lock_leaves_no_file_and_excludes_its_waiters() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("s/.sid.lock");
        drop(TransientLock::exclusive(&p).unwrap());
        assert!(!p.exists(), "no file once released");
        // Threads adding to a counter read and written under the lock never lose an update,
        // however often the file is removed and made again.
        let counter = dir.path().join("counter");
        fs::write(&counter, "0").unwrap();
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..50 {
                        let _l = TransientLock::exclusive(&p).unwrap();
                        let n: u32 = fs::read_to_string(&counter).unwrap().parse().unwrap();
                        fs::write(&counter, (n + 1).to_string()).unwrap();
                    }
                });
            }
        });
        assert_eq!(fs::read_to_string(&counter).unwrap(), "200");
        assert!(!p.exists());
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
