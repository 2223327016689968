//! Moving one checkpoint ref by compare-and-swap without loading every ref.
//!
//! libgit2 checks a new ref name against every packed ref (it parses the whole `packed-refs`
//! file on each update), which with 100,000 packed checkpoint refs costs ten times more than the
//! rest of a `write`. This does what git's files backend does for a single ref — take
//! `<name>.lock` exclusively, compare the current value, check the names a new ref would
//! collide with, write the lock and rename it over the ref — using the direct lookups of
//! [`crate::git::ref_lookup`]. It handles only checkpoint refs that get no reflog; anything else, and
//! every unusual state (a name collision, an undecidable `packed-refs`), is [`Cas::NotHandled`]
//! and left to libgit2, which reports it precisely. The lock protocol is git's own, so
//! concurrent git, libgit2 and our writers exclude each other.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::PathBuf;

use git2::Oid;

use crate::git::ref_lookup::{FilesBackend, Lookup};
use crate::git::refname::CHECKPOINT_REF_PREFIX;

/// The outcome of [`compare_and_swap`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cas {
    /// The ref now points at the new value.
    Done,
    /// The ref was not at the expected value; nothing changed.
    Mismatch,
    /// Another writer holds the ref's lock; nothing changed.
    Locked,
    /// Not attempted or given up before any change: use the full ref database.
    NotHandled,
}

/// Removes the lock file unless it was renamed into place.
struct LockFile {
    path: PathBuf,
    committed: bool,
}

impl Drop for LockFile {
    fn drop(&mut self) {
        if !self.committed {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Moves `name` (a checkpoint ref of `files`) to `new` if it currently points at `old`; `old`
/// the zero ID (of the repository's format) means "must not exist".
/// `logs_all_refs` is whether `core.logAllRefUpdates` is `always` (then a reflog is due and
/// libgit2 writes it).
pub(crate) fn compare_and_swap(
    files: FilesBackend<'_>,
    name: &str,
    new: Oid,
    old: Oid,
    logs_all_refs: bool,
) -> Cas {
    let common_dir = files.common_dir;
    if !name.starts_with(CHECKPOINT_REF_PREFIX)
        || logs_all_refs
        || common_dir.join("logs").join(name).exists()
    {
        return Cas::NotHandled;
    }
    let path = common_dir.join(name);
    let Some(parent) = path.parent() else {
        return Cas::NotHandled;
    };
    // A file where a directory must be is a name collision: libgit2 reports it.
    if std::fs::create_dir_all(parent).is_err() {
        return Cas::NotHandled;
    }
    let mut lock_name = path.clone().into_os_string();
    lock_name.push(".lock");
    let lock = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock_name)
    {
        Ok(f) => (
            f,
            LockFile {
                path: lock_name.into(),
                committed: false,
            },
        ),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => return Cas::Locked,
        Err(_) => return Cas::NotHandled,
    };
    let (mut file, mut guard) = lock;
    let current = match files.lookup(name) {
        Lookup::Found(oid) => Some(oid),
        Lookup::Missing => None,
        Lookup::Unknown => return Cas::NotHandled,
    };
    if current.unwrap_or(files.format.zero()) != old {
        return Cas::Mismatch;
    }
    if current.is_none() && !free_to_create(files, name) {
        return Cas::NotHandled;
    }
    if write_value(&mut file, new).is_err() {
        return Cas::NotHandled;
    }
    drop(file);
    // Fails on a directory at the ref's own path (refs below it): a collision for libgit2.
    if std::fs::rename(&guard.path, &path).is_err() {
        return Cas::NotHandled;
    }
    guard.committed = true;
    Cas::Done
}

fn write_value(file: &mut File, oid: Oid) -> std::io::Result<()> {
    file.write_all(format!("{oid}\n").as_bytes())
}

/// Whether a new ref `name` collides with no packed ref: none named like one of its parent
/// directories, none below it. (Loose collisions make the directory creation or the rename fail.)
fn free_to_create(files: FilesBackend<'_>, name: &str) -> bool {
    let parents_free = name
        .match_indices('/')
        .map(|(i, _)| &name[..i])
        .skip(1) // "refs" itself is never a ref
        .all(|parent| files.lookup(parent) == Lookup::Missing);
    parents_free && files.packed_has_prefix(&format!("{name}/")) == Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::ref_lookup::test_ids::{oid, A, B};
    use std::path::Path;

    const NAME: &str = "refs/entire/checkpoints/ab/0123456789ab";

    fn files(dir: &Path) -> FilesBackend<'_> {
        FilesBackend {
            common_dir: dir,
            format: crate::git::format::ObjectFormat::Sha1,
        }
    }

    fn cas(dir: &Path, name: &str, new: &str, old: Oid) -> Cas {
        compare_and_swap(files(dir), name, oid(new), old, false)
    }

    fn loose(dir: &Path, name: &str) -> Option<String> {
        std::fs::read_to_string(dir.join(name)).ok()
    }

    #[test]
    fn create_then_update_then_refuse_a_stale_old_value() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(cas(d.path(), NAME, A, Oid::ZERO_SHA1), Cas::Done);
        assert_eq!(loose(d.path(), NAME).unwrap(), format!("{A}\n"));
        // Creating again: it exists now.
        assert_eq!(cas(d.path(), NAME, B, Oid::ZERO_SHA1), Cas::Mismatch);
        assert_eq!(cas(d.path(), NAME, B, oid(B)), Cas::Mismatch);
        assert_eq!(cas(d.path(), NAME, B, oid(A)), Cas::Done);
        assert_eq!(loose(d.path(), NAME).unwrap(), format!("{B}\n"));
        assert!(!d.path().join(format!("{NAME}.lock")).exists());
    }

    #[test]
    fn a_packed_ref_is_compared_and_overridden_by_the_loose_write() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("packed-refs"),
            format!("# pack-refs with: peeled fully-peeled sorted \n{A} {NAME}\n"),
        )
        .unwrap();
        assert_eq!(cas(d.path(), NAME, B, Oid::ZERO_SHA1), Cas::Mismatch);
        assert_eq!(cas(d.path(), NAME, B, oid(A)), Cas::Done);
        assert_eq!(files(d.path()).lookup(NAME), Lookup::Found(oid(B)));
    }

    #[test]
    fn a_held_lock_is_reported_and_left_alone() {
        let d = tempfile::tempdir().unwrap();
        let lock = d.path().join(format!("{NAME}.lock"));
        std::fs::create_dir_all(lock.parent().unwrap()).unwrap();
        std::fs::write(&lock, "").unwrap();
        assert_eq!(cas(d.path(), NAME, A, Oid::ZERO_SHA1), Cas::Locked);
        assert!(lock.exists());
        assert_eq!(loose(d.path(), NAME), None);
    }

    #[test]
    fn collisions_and_other_refs_are_left_to_libgit2() {
        let d = tempfile::tempdir().unwrap();
        // A packed ref named like the shard directory, or one below the new name.
        for other in ["refs/entire/checkpoints/ab".to_owned(), format!("{NAME}/x")] {
            std::fs::write(
                d.path().join("packed-refs"),
                format!("# pack-refs with: sorted \n{A} {other}\n"),
            )
            .unwrap();
            assert_eq!(cas(d.path(), NAME, B, Oid::ZERO_SHA1), Cas::NotHandled);
            assert_eq!(loose(d.path(), NAME), None, "{other}");
        }
        std::fs::remove_file(d.path().join("packed-refs")).unwrap();
        // A loose ref below the new name: a directory at its path.
        std::fs::create_dir_all(d.path().join(NAME)).unwrap();
        std::fs::write(d.path().join(NAME).join("x"), format!("{A}\n")).unwrap();
        assert_eq!(cas(d.path(), NAME, B, Oid::ZERO_SHA1), Cas::NotHandled);
        assert!(!d.path().join(format!("{NAME}.lock")).exists());
        // Outside the namespace, with a reflog, or with logAllRefUpdates = always.
        let e = tempfile::tempdir().unwrap();
        assert_eq!(
            cas(e.path(), "refs/heads/main", A, Oid::ZERO_SHA1),
            Cas::NotHandled
        );
        assert_eq!(
            compare_and_swap(files(e.path()), NAME, oid(A), Oid::ZERO_SHA1, true),
            Cas::NotHandled
        );
        std::fs::create_dir_all(e.path().join("logs/refs/entire/checkpoints/ab")).unwrap();
        std::fs::write(e.path().join("logs").join(NAME), "").unwrap();
        assert_eq!(cas(e.path(), NAME, A, Oid::ZERO_SHA1), Cas::NotHandled);
        assert_eq!(loose(e.path(), NAME), None);
    }
}
