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
//!
//! [`create_packed`] creates many checkpoint refs at once by adding them to `packed-refs` under
//! its lock, as git's own clone does, so that a bulk fetch of a million refs does not become a
//! million loose files.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, ErrorKind, Write};
use std::path::PathBuf;

use git2::Oid;

use crate::git::ref_lookup::{FilesBackend, Lookup, HEADER_PREFIX};
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

/// Creates the checkpoint refs `new` (each name once), none of which may exist, by merging them
/// into the sorted `packed-refs` under `packed-refs.lock`. Like [`compare_and_swap`], it
/// handles only checkpoint refs that get no reflog, in a `packed-refs` it fully understands
/// (sorted, well formed) and without a name collision; anything else is [`Cas::NotHandled`],
/// for git's own transaction. A ref that already exists (loose or packed) is [`Cas::Mismatch`]
/// and nothing is written; a held lock is [`Cas::Locked`].
///
/// A loose ref that another writer creates for one of the names while this runs overrides the
/// packed line (git reads loose first): that writer's value wins, as it would have in a race.
pub(crate) fn create_packed(
    files: FilesBackend<'_>,
    new: &[(String, Oid)],
    logs_all_refs: bool,
) -> Cas {
    let common_dir = files.common_dir;
    if logs_all_refs
        || new
            .iter()
            .any(|(n, _)| !n.starts_with(CHECKPOINT_REF_PREFIX))
    {
        return Cas::NotHandled;
    }
    let mut sorted: Vec<&(String, Oid)> = new.iter().collect();
    sorted.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
        return Cas::NotHandled;
    }
    let lock_path = common_dir.join("packed-refs.lock");
    let (file, mut guard) = match OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&lock_path)
    {
        Ok(f) => (
            f,
            LockFile {
                path: lock_path,
                committed: false,
            },
        ),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => return Cas::Locked,
        Err(_) => return Cas::NotHandled,
    };
    let old = match std::fs::read(common_dir.join("packed-refs")) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => Vec::new(),
        Err(_) => return Cas::NotHandled,
    };
    let Some(packed) = PackedFile::parse(&old, files) else {
        return Cas::NotHandled;
    };
    for (name, _) in &sorted {
        match packed.state_of(name) {
            NameState::Free => {}
            NameState::Exists => return Cas::Mismatch,
            NameState::Collides => return Cas::NotHandled,
        }
        // Loose: the ref itself (a file: it exists; a directory: refs below it), or a file
        // where one of its parent directories must be.
        match std::fs::symlink_metadata(common_dir.join(name)) {
            Ok(m) if m.is_file() => return Cas::Mismatch,
            Ok(_) => return Cas::NotHandled,
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(_) => return Cas::NotHandled,
        }
        let mut parents = name.match_indices('/').map(|(i, _)| &name[..i]).skip(1);
        if parents.any(|p| common_dir.join(p).is_file()) {
            return Cas::NotHandled;
        }
    }
    let mut out = BufWriter::with_capacity(1 << 20, file);
    let written = (|| -> std::io::Result<()> {
        out.write_all(packed.header)?;
        let mut records = packed.records.iter().peekable();
        for (name, oid) in &sorted {
            while let Some(r) = records.next_if(|r| r.name < name.as_bytes()) {
                out.write_all(r.lines)?;
            }
            out.write_all(format!("{oid} {name}\n").as_bytes())?;
        }
        for r in records {
            out.write_all(r.lines)?;
        }
        out.flush()
    })();
    let Ok(file) = written.and_then(|_| out.into_inner().map_err(|e| e.into_error())) else {
        return Cas::NotHandled;
    };
    drop(file);
    if std::fs::rename(&guard.path, common_dir.join("packed-refs")).is_err() {
        return Cas::NotHandled;
    }
    guard.committed = true;
    Cas::Done
}

/// A `packed-refs` file read whole: its header line and its records in order.
struct PackedFile<'a> {
    header: &'a [u8],
    records: Vec<PackedRecord<'a>>,
}

/// One ref of a `packed-refs` file: its name and its lines (the record and any peeled line).
struct PackedRecord<'a> {
    name: &'a [u8],
    lines: &'a [u8],
}

/// Where a new ref name stands against the packed refs.
enum NameState {
    Free,
    Exists,
    /// A packed ref is named like one of its directories, or lies below it.
    Collides,
}

impl<'a> PackedFile<'a> {
    /// The records of `bytes` (empty: no file yet), when it is what git writes: the header with
    /// the `sorted` trait, well-formed records of the repository's format in strictly
    /// ascending order, each line ending in a newline.
    fn parse(bytes: &'a [u8], files: FilesBackend<'_>) -> Option<PackedFile<'a>> {
        const NEW_HEADER: &[u8] = b"# pack-refs with: peeled fully-peeled sorted \n";
        if bytes.is_empty() {
            return Some(PackedFile {
                header: NEW_HEADER,
                records: Vec::new(),
            });
        }
        if !bytes.ends_with(b"\n") {
            return None;
        }
        let header_end = memchr::memchr(b'\n', bytes)? + 1;
        let header = &bytes[..header_end];
        let traits = header.strip_prefix(HEADER_PREFIX)?;
        if !traits
            .split(|&b| b == b' ' || b == b'\n')
            .any(|t| t == b"sorted")
        {
            return None;
        }
        let hex_len = files.format.hex_len();
        let mut records: Vec<PackedRecord<'a>> = Vec::new();
        let mut at = header_end;
        while at < bytes.len() {
            let end = at + memchr::memchr(b'\n', &bytes[at..])? + 1;
            let line = &bytes[at..end - 1];
            if line.first() == Some(&b'^') {
                // A peeled line belongs to the record before it.
                let last = records.last_mut()?;
                let start = last.lines.as_ptr() as usize - bytes.as_ptr() as usize;
                last.lines = &bytes[start..end];
            } else {
                let (hex, name) = (
                    line.get(..hex_len)?,
                    line.get(hex_len..)?.strip_prefix(b" ")?,
                );
                if !hex.iter().all(u8::is_ascii_hexdigit) || name.is_empty() {
                    return None;
                }
                if records.last().is_some_and(|r| r.name >= name) {
                    return None;
                }
                records.push(PackedRecord {
                    name,
                    lines: &bytes[at..end],
                });
            }
            at = end;
        }
        Some(PackedFile { header, records })
    }

    fn has(&self, name: &[u8]) -> bool {
        self.records.binary_search_by(|r| r.name.cmp(name)).is_ok()
    }

    fn state_of(&self, name: &str) -> NameState {
        if self.has(name.as_bytes()) {
            return NameState::Exists;
        }
        let parents_packed = name
            .match_indices('/')
            .map(|(i, _)| &name[..i])
            .skip(1)
            .any(|p| self.has(p.as_bytes()));
        let below = format!("{name}/");
        let first_below = self.records.partition_point(|r| r.name < below.as_bytes());
        let children = self
            .records
            .get(first_below)
            .is_some_and(|r| r.name.starts_with(below.as_bytes()));
        match parents_packed || children {
            true => NameState::Collides,
            false => NameState::Free,
        }
    }
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
            packed: None,
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

    fn packed(dir: &Path) -> String {
        std::fs::read_to_string(dir.join("packed-refs")).unwrap_or_default()
    }

    fn name(n: usize) -> String {
        format!("refs/entire/checkpoints/{:02}/{n:010}", n % 100)
    }

    #[test]
    fn many_refs_are_created_in_packed_refs_and_merged_in_order() {
        let d = tempfile::tempdir().unwrap();
        let first: Vec<(String, Oid)> = (0..50).step_by(2).map(|n| (name(n), oid(A))).collect();
        assert_eq!(create_packed(files(d.path()), &first, false), Cas::Done);
        let text = packed(d.path());
        assert!(
            text.starts_with("# pack-refs with: peeled fully-peeled sorted \n"),
            "{text}"
        );
        // A tag with its peeled line stays with it; the new refs go around it.
        std::fs::write(
            d.path().join("packed-refs"),
            format!("{text}{A} refs/tags/v1\n^{B}\n"),
        )
        .unwrap();
        let second: Vec<(String, Oid)> = (1..50)
            .step_by(2)
            .rev()
            .map(|n| (name(n), oid(B)))
            .collect();
        assert_eq!(create_packed(files(d.path()), &second, false), Cas::Done);
        for n in 0..50 {
            let want = if n % 2 == 0 { A } else { B };
            assert_eq!(
                files(d.path()).lookup(&name(n)),
                Lookup::Found(oid(want)),
                "{n}"
            );
        }
        let text = packed(d.path());
        assert!(
            text.ends_with(&format!("{A} refs/tags/v1\n^{B}\n")),
            "{text}"
        );
        let mut listed = Vec::new();
        files(d.path())
            .for_each_under(CHECKPOINT_REF_PREFIX, |n, _| listed.push(n.to_owned()))
            .expect("still sorted and well formed");
        assert_eq!(listed.len(), 50);
        assert!(!d.path().join("packed-refs.lock").exists());
        assert!(!d.path().join("refs").exists(), "no loose file");
    }

    #[test]
    fn an_existing_ref_or_a_collision_writes_nothing() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(
            create_packed(files(d.path()), &[(name(1), oid(A))], false),
            Cas::Done
        );
        let before = packed(d.path());
        // Already packed, or loose.
        assert_eq!(
            create_packed(
                files(d.path()),
                &[(name(2), oid(A)), (name(1), oid(B))],
                false
            ),
            Cas::Mismatch
        );
        std::fs::create_dir_all(d.path().join(name(3)).parent().unwrap()).unwrap();
        std::fs::write(d.path().join(name(3)), format!("{A}\n")).unwrap();
        assert_eq!(
            create_packed(files(d.path()), &[(name(3), oid(B))], false),
            Cas::Mismatch
        );
        // A packed ref named like the shard directory; a loose one below the new name.
        std::fs::write(
            d.path().join("packed-refs"),
            format!("{before}{A} refs/entire/checkpoints/04\n"),
        )
        .unwrap();
        assert_eq!(
            create_packed(files(d.path()), &[(name(4), oid(B))], false),
            Cas::NotHandled
        );
        std::fs::create_dir_all(d.path().join(name(5))).unwrap();
        assert_eq!(
            create_packed(files(d.path()), &[(name(5), oid(B))], false),
            Cas::NotHandled
        );
        // Not a checkpoint ref, a reflog due, a name twice, an unsorted file, a held lock.
        assert_eq!(
            create_packed(files(d.path()), &[("refs/heads/x".into(), oid(A))], false),
            Cas::NotHandled
        );
        assert_eq!(
            create_packed(files(d.path()), &[(name(6), oid(A))], true),
            Cas::NotHandled
        );
        assert_eq!(
            create_packed(
                files(d.path()),
                &[(name(6), oid(A)), (name(6), oid(B))],
                false
            ),
            Cas::NotHandled
        );
        let e = tempfile::tempdir().unwrap();
        std::fs::write(
            e.path().join("packed-refs"),
            format!("# pack-refs with: peeled \n{A} {}\n", name(9)),
        )
        .unwrap();
        assert_eq!(
            create_packed(files(e.path()), &[(name(6), oid(A))], false),
            Cas::NotHandled
        );
        std::fs::write(e.path().join("packed-refs.lock"), "").unwrap();
        assert_eq!(
            create_packed(files(e.path()), &[(name(6), oid(A))], false),
            Cas::Locked
        );
        assert!(
            e.path().join("packed-refs.lock").exists(),
            "another writer's lock stays"
        );
        assert!(!d.path().join("packed-refs.lock").exists());
        assert!(files(d.path()).lookup(&name(6)) == Lookup::Missing);
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
