//! Writing objects as loose objects, without libgit2's loose backend where it costs more than
//! the object.
//!
//! libgit2, like git, deflates every loose object it writes, and starts a deflate stream to do
//! it: zlib-ng allocates its window and clears its 128 KiB hash table for each one, about 0.2 M
//! instructions, more than hashing and writing a tree of a few hundred bytes. A checkpoint write
//! stores nine objects, most of them small (the trees, the commit, the metadata, the content
//! hash): that was a quarter of the instructions of writing an 8.8 KB transcript. Here an object
//! whose file fits in one 4 KiB block, where deflating it saves no disk, is written as a zlib
//! stream of one stored (uncompressed) deflate block, which every reader of loose objects
//! inflates like any other (RFC 1950, RFC 1951 §3.2.4); `git gc` and `git push` deflate it
//! again in a pack, as they do every loose object.
//!
//! A larger object is deflated at libgit2's level (1); from [`AT_ONCE_FROM`] (a transcript of
//! megabytes) it is deflated into a temporary file of the object directory while its ID is
//! computed on a second thread, then moved into place under that ID, where libgit2 would hash it
//! whole and only then compress it, one after the other. Every file is the one libgit2's loose
//! backend writes: mode 0444, its fan-out directory made with mode 0777 less the umask.
//!
//! Anything else is left to libgit2, which then writes the object as always: an object
//! directory named by `GIT_OBJECT_DIRECTORY`, `core.fsyncObjectFiles`, an object the database
//! already holds (libgit2 freshens it, as git does, so that a prune spares it), an object
//! database in memory, and any error.

use std::io::Write;
use std::path::{Path, PathBuf};

use git2::{ObjectType, OdbLookupFlags, Oid, Repository};

use crate::base::threads::join;

/// From this size an object is written with its ID and its compressed form computed at once:
/// below it, starting a thread costs more than the overlap saves.
pub(crate) const AT_ONCE_FROM: usize = 64 << 10;

/// Up to this many bytes of object (its `<kind> <size>\0` header and its data) it is stored
/// uncompressed: with the stream's 11 bytes around it, its file fits in one 4 KiB block.
const STORED_UP_TO: usize = 4096 - 11;

/// The zlib level of libgit2's loose objects (and of git's, `core.looseCompression`'s default).
const LEVEL: u32 = 1;

/// Writes `data` as an object of `kind`: a loose object of `repo`'s object directory when
/// `on_disk` (as this module describes), else, and whenever this module leaves it, through the
/// object database's write, which writes nothing when the object is already there.
pub(in crate::git) fn write_object(
    repo: &Repository,
    on_disk: bool,
    kind: ObjectType,
    data: &[u8],
) -> Result<Oid, git2::Error> {
    if on_disk {
        if let Some(oid) = write(repo, kind, data) {
            return Ok(oid);
        }
    }
    repo.odb()?.write(kind, data)
}

/// Writes `data` as a loose object of `kind` of `repo` (a repository on disk). `None` when it
/// is left to libgit2; nothing was written then.
fn write(repo: &Repository, kind: ObjectType, data: &[u8]) -> Option<Oid> {
    let objects = objects_dir(repo)?;
    let format = repo.object_format();
    let header = format!("{} {}\0", kind.str(), data.len());
    let hash = || Oid::hash_object_ext(kind, data, format);
    let (oid, file) = if data.len() >= AT_ONCE_FROM {
        let (file, oid) = join(|| deflated(&objects, &header, data), &hash);
        // Dropped unplaced on any return below: the temporary file is removed.
        let (oid, file) = (oid.ok()?, file.ok()?);
        if held(repo, oid)? {
            return None;
        }
        (oid, file)
    } else {
        let oid = hash().ok()?;
        if held(repo, oid)? {
            return None;
        }
        let file = if header.len() + data.len() <= STORED_UP_TO {
            stored(&objects, header.as_bytes(), data)
        } else {
            deflated(&objects, &header, data)
        };
        (oid, file.ok()?)
    };
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

/// Whether the object database holds `oid`, without listing the packs again: an object only in
/// a pack another process added since is written loose once more, which is harmless (`git
/// prune-packed` removes it).
fn held(repo: &Repository, oid: Oid) -> Option<bool> {
    Some(repo.odb().ok()?.exists_ext(oid, OdbLookupFlags::NO_REFRESH))
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

/// A new temporary file of `objects`, which is removed when dropped unless it is persisted.
fn temporary(objects: &Path) -> std::io::Result<tempfile::NamedTempFile> {
    use std::os::unix::fs::PermissionsExt;
    tempfile::Builder::new()
        .prefix("tmp_obj_")
        .permissions(std::fs::Permissions::from_mode(0o444))
        .tempfile_in(objects)
}

/// `header` and `data`, zlib-compressed, in a new temporary file of `objects`.
fn deflated(objects: &Path, header: &str, data: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    let mut z =
        flate2::write::ZlibEncoder::new(temporary(objects)?, flate2::Compression::new(LEVEL));
    z.write_all(header.as_bytes())?;
    z.write_all(data)?;
    z.finish()
}

/// `header` and `data` (at most [`STORED_UP_TO`] bytes together) as a zlib stream of one stored
/// block, in a new temporary file of `objects`.
fn stored(objects: &Path, header: &[u8], data: &[u8]) -> std::io::Result<tempfile::NamedTempFile> {
    let mut file = temporary(objects)?;
    file.write_all(&stored_zlib(header, data))?;
    Ok(file)
}

/// The zlib stream (RFC 1950) of `header` then `data` (together under 64 KiB) as one final
/// stored deflate block (RFC 1951 §3.2.4): the 2-byte zlib header (deflate, a 32 KiB window, the
/// fastest level; its check bits make it a multiple of 31), the block's header byte, its length
/// and that length's complement (little-endian), the bytes, and their Adler-32 (big-endian).
fn stored_zlib(header: &[u8], data: &[u8]) -> Vec<u8> {
    let len = u16::try_from(header.len() + data.len()).expect("a stored object under 64 KiB");
    let mut adler = adler2::Adler32::new();
    adler.write_slice(header);
    adler.write_slice(data);
    let mut out = Vec::with_capacity(usize::from(len) + 11);
    out.extend_from_slice(&[0x78, 0x01, 0x01]);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&(!len).to_le_bytes());
    out.extend_from_slice(header);
    out.extend_from_slice(data);
    out.extend_from_slice(&adler.checksum().to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    /// A stored stream inflates to its bytes, through zlib itself, at every size it is used for.
    #[test]
    fn a_stored_stream_inflates_to_its_bytes() {
        for size in [0, 1, 100, 4000, STORED_UP_TO - 12] {
            let data: Vec<u8> = (0..size).map(|i| (i * 7 % 251) as u8).collect();
            let header = format!("blob {size}\0");
            let z = stored_zlib(header.as_bytes(), &data);
            assert_eq!(u16::from_be_bytes([z[0], z[1]]) % 31, 0);
            let mut out = Vec::new();
            flate2::read::ZlibDecoder::new(&z[..])
                .read_to_end(&mut out)
                .expect("inflate");
            assert_eq!(&out[..header.len()], header.as_bytes());
            assert_eq!(&out[header.len()..], &data[..]);
        }
    }
}
