//! A write's objects stored as one pack instead of one loose file each.
//!
//! A checkpoint write makes seven or eight objects (its blobs, two trees, a commit). Written
//! loose, each is a temporary file, often a new fan-out directory, a link and an unlink: more
//! files made than anything else the write does, and where making a file is slow (ext4 just
//! after many files were deleted took 450 to 700 µs a file here) the write is as slow as the
//! files it makes. Here they are kept in memory (libgit2's mempack, added to an object database
//! of its own that reads the repository's objects beside it) and, when the work that wrote them
//! succeeds, written as one pack that libgit2's indexer checks and indexes: two files, no
//! fan-out directory. Blobs of [`crate::git::loose::AT_ONCE_FROM`] and more are still written
//! loose as they come: compressing them a second time into the pack would cost more than the
//! files save.
//!
//! Packs made this way are small and pile up; git's `gc --auto` repacks everything once there
//! are more than `gc.autoPackLimit` (50) of them. Before that, at [`REPACK_FROM`] packs, the
//! write runs `git repack -d --geometric=2`, which rolls the small packs up into one and leaves
//! the large ones be (docs/decisions.md, "A write's objects as one pack").

use std::path::{Path, PathBuf};

use sha2::Digest;

use crate::git::format::ObjectFormat;
use crate::git::objects::Oid;
use crate::git::repo::{LibGitError, Repo};
use crate::git::subprocess::Git;
use crate::git::version::GitVersion;

/// At this many packs in the object directory a write rolls the small ones up.
pub(crate) const REPACK_FROM: usize = 40;

/// The first git whose `repack` takes `--geometric`.
const GEOMETRIC: GitVersion = GitVersion::new(2, 32, 0);

impl Repo {
    /// Runs `f`, which writes a commit through [`Repo::objects`] and returns it (`None`: nothing
    /// written), with the objects it writes (but large blobs) kept in memory; when `f` succeeds,
    /// the commit and everything it reaches that the object directory lacks are stored there as
    /// one pack before this returns. Anything else `f` wrote is dropped, as is everything when
    /// `f` fails: nothing refers to it. When storing them fails, the error is that. Called
    /// within itself it fails before running `f`: the outer call would store only what its own
    /// commit reaches, and the inner commit could be lost.
    ///
    /// Objects are written as always (loose, as `f` writes them) where the loose files are what
    /// the user asked for: an object directory named by `GIT_OBJECT_DIRECTORY` and
    /// `core.fsyncObjectFiles`.
    pub fn in_one_pack<E>(
        &self,
        f: impl FnOnce() -> Result<Option<Oid>, E>,
    ) -> Result<Result<Option<Oid>, E>, LibGitError> {
        let Some(objects) = self.packable_objects() else {
            return Ok(f());
        };
        if self.batching.get() {
            return Err(
                git2::Error::from_str("a write's objects are already being gathered").into(),
            );
        }
        let original = self.git.odb().map_err(LibGitError::from)?;
        let odb = git2::Odb::new_ext(self.object_format().git2()).map_err(LibGitError::from)?;
        odb.add_new_mempack_backend(1000)
            .map_err(LibGitError::from)?;
        // Read-only there: an alternate takes no writes, so every write goes to memory.
        odb.add_disk_alternate(&objects.to_string_lossy())
            .map_err(LibGitError::from)?;
        self.git.set_odb(&odb).map_err(LibGitError::from)?;
        self.batching.set(true);
        let restore = Restore(self, &original);
        let value = match f() {
            Ok(value) => value,
            Err(e) => return Ok(Err(e)),
        };
        let pack = match &value {
            Some(commit) => self.pack_of(*commit, &odb, &original)?,
            None => Vec::new(),
        };
        drop(restore);
        if !pack.is_empty() {
            let mut writer = original.packwriter().map_err(LibGitError::from)?;
            std::io::Write::write_all(&mut writer, &pack)
                .map_err(|e| LibGitError::from(git2::Error::from_str(&e.to_string())))?;
            writer.commit().map_err(LibGitError::from)?;
            // Seen at once by this handle's look-ups, whichever way it lists the packs.
            original.refresh().map_err(LibGitError::from)?;
            self.roll_up_small_packs(&objects);
        }
        Ok(Ok(value))
    }

    /// The object directory, when a write's objects may go there as one pack.
    fn packable_objects(&self) -> Option<PathBuf> {
        let objects = crate::git::loose::objects_dir(&self.git)?;
        objects.join("pack").is_dir().then_some(objects)
    }

    /// `git repack -d --geometric=2` when the object directory holds [`REPACK_FROM`] packs or
    /// more (or four fifths of `gc.autoPackLimit`, when that is lower), so that a write's packs
    /// are rolled up before they make `gc --auto` repack everything. Not in a partial clone (its promisor
    /// packs are `gc`'s to handle), nor with a git older than `--geometric`. A failure is
    /// logged: the objects are in place whatever happens here.
    fn roll_up_small_packs(&self, objects: &Path) {
        let limit = match self
            .git
            .config()
            .and_then(|c| c.get_i32("gc.autoPackLimit"))
        {
            Ok(n) if n > 0 => REPACK_FROM.min((n as usize * 4 / 5).max(2)),
            _ => REPACK_FROM,
        };
        if count_packs(&objects.join("pack")) < limit || self.promisor_remote().is_some() {
            return;
        }
        match crate::git::subprocess::version() {
            Ok(v) if v >= GEOMETRIC => {}
            _ => return,
        }
        let git: Git = self.git_cmd().args([
            "repack",
            "-d",
            "-q",
            "--geometric=2",
            "--no-write-bitmap-index",
        ]);
        match self.run_git(git, "roll up small packs") {
            Ok(out) if out.success() => {}
            Ok(out) => log::warn!(
                "git repack --geometric: {}",
                crate::git::subprocess::first_error_line(&out.stderr)
            ),
            Err(e) => log::warn!("git repack --geometric: {e}"),
        }
    }
}

/// Puts the repository's own object database back when dropped, on every way out of
/// [`Repo::in_one_pack`] (an error or a panic included): no later write may go to memory.
struct Restore<'a>(&'a Repo, &'a git2::Odb<'a>);

impl Drop for Restore<'_> {
    fn drop(&mut self) {
        self.0.batching.set(false);
        if let Err(e) = self.0.git.set_odb(self.1) {
            log::warn!("put the object database back: {e}");
        }
    }
}

impl Repo {
    /// A pack (version 2, no deltas, zlib at the loose objects' level) of `commit` and of what
    /// it reaches that `disk` (the object directory, not listed again) does not hold: what `f`
    /// wrote into `memory`'s in-memory backend. Empty when there is nothing to store. The
    /// indexer that takes it inflates and hashes every object again and writes its index.
    fn pack_of(
        &self,
        commit: Oid,
        memory: &git2::Odb<'_>,
        disk: &git2::Odb<'_>,
    ) -> Result<Vec<u8>, LibGitError> {
        let mut todo = vec![commit];
        let mut seen = std::collections::HashSet::new();
        let mut objects = Vec::new();
        while let Some(oid) = todo.pop() {
            if !seen.insert(oid) || disk.exists_ext(oid, git2::OdbLookupFlags::NO_REFRESH) {
                continue;
            }
            // Neither there nor written: a partial clone's promised object, not ours to store.
            let Ok(object) = memory.read(oid) else {
                continue;
            };
            match object.kind() {
                git2::ObjectType::Commit => {
                    let c = self.git.find_commit(oid)?;
                    todo.push(c.tree_id());
                    todo.extend(c.parent_ids());
                }
                git2::ObjectType::Tree => {
                    let t = self.git.find_tree(oid)?;
                    todo.extend(
                        t.iter()
                            .filter(|e| e.kind() != Some(git2::ObjectType::Commit))
                            .map(|e| e.id()),
                    );
                }
                _ => {}
            }
            objects.push(object);
        }
        if objects.is_empty() {
            return Ok(Vec::new());
        }
        let mut pack = Vec::with_capacity(objects.iter().map(|o| o.len() + 32).sum());
        pack.extend_from_slice(b"PACK");
        pack.extend_from_slice(&2u32.to_be_bytes());
        pack.extend_from_slice(&(objects.len() as u32).to_be_bytes());
        let mut z = flate2::Compress::new(flate2::Compression::new(LEVEL), true);
        for object in &objects {
            entry_header(&mut pack, kind_number(object.kind()), object.len());
            z.reset();
            deflate_into(&mut z, object.data(), &mut pack)?;
        }
        let trailer = match self.object_format() {
            ObjectFormat::Sha1 => sha1::Sha1::digest(&pack).to_vec(),
            ObjectFormat::Sha256 => sha2::Sha256::digest(&pack).to_vec(),
        };
        pack.extend_from_slice(&trailer);
        Ok(pack)
    }
}

/// The zlib level of the pack's objects: that of libgit2's loose objects, which they replace.
const LEVEL: u32 = 1;

/// The type number of a pack entry of kind `kind`.
fn kind_number(kind: git2::ObjectType) -> u8 {
    match kind {
        git2::ObjectType::Commit => 1,
        git2::ObjectType::Tree => 2,
        git2::ObjectType::Blob => 3,
        _ => 4,
    }
}

/// Appends a pack entry's header: its type and size, the size's low four bits first, then
/// seven bits a byte while more remain.
fn entry_header(pack: &mut Vec<u8>, kind: u8, size: usize) {
    let mut byte = (kind << 4) | (size & 0x0f) as u8;
    let mut rest = size >> 4;
    while rest > 0 {
        pack.push(byte | 0x80);
        byte = (rest & 0x7f) as u8;
        rest >>= 7;
    }
    pack.push(byte);
}

/// Appends `data` compressed whole (a zlib stream) by `z`, which was just reset.
fn deflate_into(
    z: &mut flate2::Compress,
    data: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), LibGitError> {
    let start = z.total_in();
    loop {
        out.reserve(data.len() / 2 + 64);
        let read = (z.total_in() - start) as usize;
        let status = z
            .compress_vec(&data[read..], out, flate2::FlushCompress::Finish)
            .map_err(|e| LibGitError::from(git2::Error::from_str(&e.to_string())))?;
        if status == flate2::Status::StreamEnd {
            return Ok(());
        }
    }
}

/// How many `.pack` files `dir` holds.
fn count_packs(dir: &Path) -> usize {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .filter(|e| e.file_name().as_encoded_bytes().ends_with(b".pack"))
                .count()
        })
        .unwrap_or(0)
}
