//! Writing a large blob as a loose object with its ID and its compressed form computed at once.
//!
//! libgit2, like git, hashes an object whole (collision-detecting SHA-1, or SHA-256) and only
//! then compresses it into the object directory. For a transcript of megabytes each takes about
//! as long as the other, one after the other on one thread, while the write has nothing else to
//! do. Here they run on two threads: the object is compressed into a temporary file of the
//! object directory while its ID is computed, and the file is then moved into place under that
//! ID. The file is the one libgit2's loose backend writes: zlib at its level (1), mode 0444, its
//! fan-out directory made with mode 0777 less the umask.
//!
//! Anything else is left to libgit2, which then writes the object as always: an object
//! directory named by `GIT_OBJECT_DIRECTORY`, `core.fsyncObjectFiles`, an object the database
//! already holds (libgit2 freshens it, as git does, so that a prune spares it), and any error.

use std::io::Write;
use std::path::{Path, PathBuf};

use git2::{ObjectType, Oid, Repository};

use crate::base::threads::join;

/// From this size a blob is written with its ID and its compressed form computed at once: below
/// it, starting a thread costs more than the overlap saves.
pub(crate) const AT_ONCE_FROM: usize = 64 << 10;

/// The zlib level of libgit2's loose objects (and of git's, `core.looseCompression`'s default).
const LEVEL: u32 = 1;

/// Writes `data` as a loose blob of `repo` (a repository on disk), compressing it while its ID
/// is computed on a second thread ([`join`]: one the system refuses leaves the ID to this thread
/// after). `None` when it is left to libgit2; nothing was written then.
pub(crate) fn write_blob(repo: &Repository, data: &[u8]) -> Option<Oid> {
    let objects = objects_dir(repo)?;
    let format = repo.object_format();
    let (compressed, id) = join(|| compress(&objects, data), &|| {
        Oid::hash_object_ext(ObjectType::Blob, data, format)
    });
    let oid = id.ok()?;
    // Dropped unplaced on any return below: the temporary file is removed.
    let file = compressed.ok()?;
    if repo.odb().ok()?.exists(oid) {
        return None;
    }
    let hex = oid.to_string();
    let dir = objects.join(&hex[..2]);
    match std::fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(_) => return None,
    }
    file.persist(dir.join(&hex[2..])).ok()?;
    Some(oid)
}

/// The object directory libgit2 writes `repo`'s loose objects to, when this module may write
/// there instead.
fn objects_dir(repo: &Repository) -> Option<PathBuf> {
    // libgit2 honours it when the repository was opened from the environment; whichever way
    // this one was opened, libgit2 knows where its objects go.
    if std::env::var_os("GIT_OBJECT_DIRECTORY").is_some() {
        return None;
    }
    if repo
        .config()
        .ok()?
        .get_bool("core.fsyncObjectFiles")
        .unwrap_or(false)
    {
        return None;
    }
    let objects = repo.commondir().join("objects");
    (objects.is_absolute() && objects.is_dir()).then_some(objects)
}

/// `data` as a loose blob (`blob <size>\0` and the bytes, zlib-compressed) in a new temporary
/// file of `objects`, which is removed when dropped unless it is persisted.
fn compress(objects: &Path, data: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    let file = tempfile::Builder::new()
        .prefix("tmp_obj_")
        .permissions(std::fs::Permissions::from_mode(0o444))
        .tempfile_in(objects)?;
    let mut z = flate2::write::ZlibEncoder::new(file, flate2::Compression::new(LEVEL));
    write!(z, "blob {}\0", data.len())?;
    z.write_all(data)?;
    z.finish()
}
