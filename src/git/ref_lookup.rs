//! Resolving one ref of the files backend without loading every ref, and enumerating the refs
//! under one prefix as a sorted stream ([`for_each_under`]).
//!
//! libgit2 parses the whole `packed-refs` file on the first lookup of any ref, which with
//! 100,000 packed checkpoint refs costs more than the rest of a `show`. git itself reads the
//! loose file, else binary-searches the sorted `packed-refs`; this module does the same, and
//! answers [`Lookup::Unknown`] whenever the files are in a form it does not fully understand (a
//! symbolic or malformed loose ref, a `packed-refs` without the `sorted` trait or with a
//! malformed line, a per-worktree ref), so that the caller asks libgit2 instead. It never answers
//! "missing" for a ref that exists.

use std::cell::RefCell;
use std::collections::HashMap;
use std::fs::File;
use std::io::{BufRead, BufReader, ErrorKind, Read, Seek, SeekFrom};
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::rc::Rc;

use git2::Oid;

use crate::git::format::ObjectFormat;

/// The files backend of one repository: its common dir, and the format of the object IDs its
/// refs hold (40 or 64 hex digits).
#[derive(Debug, Clone, Copy)]
pub(crate) struct FilesBackend<'a> {
    /// The git common dir.
    pub common_dir: &'a Path,
    /// The repository's object format.
    pub format: ObjectFormat,
    /// Where lookups keep `packed-refs` in memory for the rest of the command; `None` reads the
    /// file for each lookup.
    pub packed: Option<&'a PackedRefsCache>,
}

/// `packed-refs` read whole, for a command that looks many refs up (`blame` asks for over a
/// thousand): each lookup then costs an `open` and an `fstat` instead of a dozen positioned
/// reads of a binary search. A small file is read whole at once; a large one (100,000 packed
/// checkpoints are 10 MB) only once a command has searched it [`SEARCHES_BEFORE_SNAPSHOT`]
/// times, so that a `show` of one checkpoint reads a dozen blocks of it, not all of it. The
/// copy is used only while the file is the same one (device, inode, size and modification
/// time of the file the lookup opened): git replaces `packed-refs` by renaming a new file
/// over it, so any rewrite is a new inode.
#[derive(Debug, Default)]
pub(crate) struct PackedRefsCache {
    state: RefCell<PackedState>,
}

#[derive(Debug, Default)]
struct PackedState {
    /// Searches of the file so far in this command.
    searches: u32,
    snapshot: Option<(FileKey, Rc<[u8]>)>,
    /// What this command's searches by positioned reads answered, and of which file: a command
    /// asks for the same ref more than once (`show` finds the checkpoint, then reads it), and
    /// such a search is a dozen reads.
    answers: Option<(FileKey, Answers)>,
}

/// What searches of one `packed-refs` answered, by ref name.
type Answers = HashMap<Vec<u8>, Option<Lookup>>;

/// What tells one `packed-refs` file from the one that replaced it.
type FileKey = (u64, u64, u64, i64, i64);

fn file_key(m: &std::fs::Metadata) -> FileKey {
    (m.dev(), m.ino(), m.len(), m.mtime(), m.mtime_nsec())
}

/// A `packed-refs` no larger than this is read whole on its first search.
const SMALL_PACKED: u64 = 64 << 10;
/// Searches of a larger file before it is read whole.
const SEARCHES_BEFORE_SNAPSHOT: u32 = 8;

impl PackedRefsCache {
    /// Looks `name` up in the opened `packed-refs` `file`: in memory when this command read the
    /// same file whole already, or now decides to; else by positioned reads, whose answer is
    /// kept for the same name asked again of the same file (a search in memory is cheap enough
    /// to do again, and `blame` asks for a thousand names).
    fn search(&self, file: &File, name: &[u8], format: ObjectFormat) -> Option<Lookup> {
        let meta = file.metadata().ok()?;
        let key = file_key(&meta);
        let mut state = self.state.borrow_mut();
        let held = state
            .snapshot
            .as_ref()
            .filter(|(k, _)| *k == key)
            .map(|(_, bytes)| Rc::clone(bytes));
        let bytes = match held {
            Some(bytes) => bytes,
            None => {
                let answered = state
                    .answers
                    .as_ref()
                    .filter(|(k, _)| *k == key)
                    .and_then(|(_, answers)| answers.get(name).copied());
                if let Some(found) = answered {
                    return found;
                }
                state.searches += 1;
                if meta.len() > SMALL_PACKED && state.searches <= SEARCHES_BEFORE_SNAPSHOT {
                    drop(state);
                    let found = search_packed(file, meta.len(), name, format);
                    let mut state = self.state.borrow_mut();
                    if state.answers.as_ref().is_none_or(|(k, _)| *k != key) {
                        state.answers = Some((key, HashMap::new()));
                    }
                    if let Some((_, answers)) = &mut state.answers {
                        answers.insert(name.to_vec(), found);
                    }
                    return found;
                }
                let mut bytes = Vec::with_capacity(meta.len() as usize);
                (&*file).read_to_end(&mut bytes).ok()?;
                let bytes: Rc<[u8]> = bytes.into();
                state.snapshot = Some((key, Rc::clone(&bytes)));
                bytes
            }
        };
        drop(state);
        search_packed(&*bytes, bytes.len() as u64, name, format)
    }
}

/// What a direct lookup found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Lookup {
    /// The ref exists and points at this object.
    Found(Oid),
    /// Neither a loose file nor a `packed-refs` line names the ref.
    Missing,
    /// Not decided here: ask the full ref database.
    Unknown,
}

/// The first line of a `packed-refs` file written by git: the traits it guarantees.
pub(crate) const HEADER_PREFIX: &[u8] = b"# pack-refs with:";
/// How many bytes each read of `packed-refs` fetches while scanning for a line end.
const CHUNK: usize = 256;

impl FilesBackend<'_> {
    /// Looks `name` up (loose file, then sorted `packed-refs`).
    pub(crate) fn lookup(self, name: &str) -> Lookup {
        let (common_dir, format) = (self.common_dir, self.format);
        // Per-worktree refs live in the worktree's own git dir; leave them to libgit2.
        if !name.starts_with("refs/")
            || ["refs/worktree/", "refs/bisect/", "refs/rewritten/"]
                .iter()
                .any(|p| name.starts_with(p))
        {
            return Lookup::Unknown;
        }
        match std::fs::read(common_dir.join(name)) {
            Ok(bytes) => return parse_loose(&bytes, format),
            // A missing file, or a directory on the way (or at) the name: not loose.
            Err(e) if is_absent(&e) => {}
            Err(_) => return Lookup::Unknown,
        }
        let file = match File::open(common_dir.join("packed-refs")) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => return Lookup::Missing,
            Err(_) => return Lookup::Unknown,
        };
        let found = match self.packed {
            Some(cache) => cache.search(&file, name.as_bytes(), format),
            None => search_packed(&file, file_len(&file), name.as_bytes(), format),
        };
        found.unwrap_or(Lookup::Unknown)
    }
}

fn is_absent(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::NotFound | ErrorKind::NotADirectory | ErrorKind::IsADirectory
    )
}

/// A loose ref file: an ID of the repository's format and a newline; anything else (a symbolic
/// ref) is Unknown.
fn parse_loose(bytes: &[u8], format: ObjectFormat) -> Lookup {
    let text = bytes.strip_suffix(b"\n").unwrap_or(bytes);
    format
        .parse_bytes(text)
        .map_or(Lookup::Unknown, Lookup::Found)
}

/// A record's line in `packed-refs` (its hex ID checked to be hex, not yet parsed: a search
/// parses only the record it ends on) and the span of that line.
struct RecordAt {
    line: Vec<u8>,
    hex_len: usize,
    /// Where its line starts.
    start: u64,
    /// Just after its line.
    end: u64,
}

impl RecordAt {
    fn name(&self) -> &[u8] {
        &self.line[self.hex_len + 1..]
    }

    /// The record; `None` when its ID is not one of `format`.
    fn into_record(mut self, format: ObjectFormat) -> Option<Record> {
        let oid = format.parse_bytes(&self.line[..self.hex_len])?;
        self.line.drain(..=self.hex_len);
        Some((self.line, oid))
    }
}

/// What a search reads `packed-refs` from: the file, by positioned reads, or a copy of it in
/// memory.
trait ReadAt {
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize>;
}

impl ReadAt for File {
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        FileExt::read_at(self, buf, at)
    }
}

impl ReadAt for [u8] {
    fn read_at(&self, buf: &mut [u8], at: u64) -> std::io::Result<usize> {
        let rest = self.get(at as usize..).unwrap_or_default();
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        Ok(n)
    }
}

/// The length of an opened file; 0 (an empty file, which holds no ref) when it cannot be read.
fn file_len(file: &File) -> u64 {
    file.metadata().map_or(0, |m| m.len())
}

/// Reads `packed-refs` through positioned reads: the header, then O(log n) lines.
struct Packed<'f, S: ReadAt + ?Sized> {
    file: &'f S,
    len: u64,
    format: ObjectFormat,
}

impl<S: ReadAt + ?Sized> Packed<'_, S> {
    /// The line starting at `pos` (without its newline) and the position after it.
    fn line_at(&self, pos: u64) -> Option<(Vec<u8>, u64)> {
        let mut line = Vec::new();
        let mut at = pos;
        while at < self.len {
            let mut buf = [0u8; CHUNK];
            let n = self.file.read_at(&mut buf, at).ok()?;
            if n == 0 {
                break;
            }
            if let Some(i) = buf[..n].iter().position(|&b| b == b'\n') {
                line.extend_from_slice(&buf[..i]);
                return Some((line, at + i as u64 + 1));
            }
            line.extend_from_slice(&buf[..n]);
            at += n as u64;
        }
        // A last line without a newline.
        Some((line, self.len))
    }

    /// The first record line starting in `[start, limit)`, skipping peeled `^` lines (they
    /// belong to the record before them): the record, where it starts and the position after
    /// it. `None` for a malformed record, `Some(None)` when no record starts there.
    fn record_from(&self, mut start: u64, limit: u64) -> Option<Option<RecordAt>> {
        loop {
            if start >= limit {
                return Some(None);
            }
            let (line, next) = self.line_at(start)?;
            if line.first() == Some(&b'^') {
                start = next;
                continue;
            }
            let hex_len = self.format.hex_len();
            if !line.get(..hex_len)?.iter().all(u8::is_ascii_hexdigit)
                || line.get(hex_len) != Some(&b' ')
            {
                return None;
            }
            return Some(Some(RecordAt {
                line,
                hex_len,
                start,
                end: next,
            }));
        }
    }

    /// The first position at or after `pos` where a line starts.
    fn line_start_from(&self, pos: u64) -> Option<u64> {
        if pos == 0 {
            return Some(0);
        }
        // The line containing byte `pos - 1` ends at its newline; the next line starts after it.
        self.line_at(pos - 1).map(|(_, next)| next)
    }
}

/// A `packed-refs` record: the ref name and its object id.
type Record = (Vec<u8>, Oid);

/// The first record of a sorted `packed-refs` whose name is `>= key` (`Some(None)` when there is
/// none), by binary search; `None` when the file is not in a form this search may trust (no
/// `sorted` trait, a malformed record).
fn lower_bound<S: ReadAt + ?Sized>(
    file: &S,
    len: u64,
    key: &[u8],
    format: ObjectFormat,
) -> Option<Option<Record>> {
    match lower_bound_at(file, len, key, format)? {
        Some(at) => Some(Some(at.into_record(format)?)),
        None => Some(None),
    }
}

/// As [`lower_bound`], with where the record's line starts.
fn lower_bound_at<S: ReadAt + ?Sized>(
    file: &S,
    len: u64,
    key: &[u8],
    format: ObjectFormat,
) -> Option<Option<RecordAt>> {
    let packed = Packed { file, len, format };
    let (header, first) = packed.line_at(0)?;
    let traits = header.strip_prefix(HEADER_PREFIX)?;
    if !traits.split(|&b| b == b' ').any(|t| t == b"sorted") {
        return None;
    }
    // Invariant: every record starting before `lo` is < key, every one starting at or after
    // `hi` is >= key; `lo` and `hi` are line starts (or the end of the file).
    let (mut lo, mut hi) = (first, packed.len);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        let start = packed.line_start_from(mid)?;
        match packed.record_from(start, hi)? {
            // No record starts in [mid, hi): the boundary lies before `mid`.
            None => hi = mid,
            Some(at) if at.name() < key => lo = at.end,
            Some(at) => hi = at.start,
        }
    }
    packed.record_from(lo, packed.len)
}

/// Looks `name` up in a sorted `packed-refs` of `len` bytes.
fn search_packed<S: ReadAt + ?Sized>(
    file: &S,
    len: u64,
    name: &[u8],
    format: ObjectFormat,
) -> Option<Lookup> {
    Some(match lower_bound(file, len, name, format)? {
        Some((found, oid)) if found == name => Lookup::Found(oid),
        _ => Lookup::Missing,
    })
}

impl FilesBackend<'_> {
    /// Whether the sorted `packed-refs` holds a ref whose name starts with `prefix`; `None` when
    /// that cannot be decided here (unsorted or malformed file).
    pub(crate) fn packed_has_prefix(self, prefix: &str) -> Option<bool> {
        match File::open(self.common_dir.join("packed-refs")) {
            Ok(file) => Some(
                lower_bound(&file, file_len(&file), prefix.as_bytes(), self.format)?
                    .is_some_and(|(name, _)| name.starts_with(prefix.as_bytes())),
            ),
            Err(e) if e.kind() == ErrorKind::NotFound => Some(false),
            Err(_) => None,
        }
    }

    /// Calls `each` with every ref of the files backend under `common_dir` whose name starts with
    /// `prefix` (which ends in `/`), in byte order of name, as git lists them: a loose file overrides
    /// the `packed-refs` line of the same name, and peeled (`^`) lines are skipped. Reads the loose
    /// refs under the prefix, then streams `packed-refs` from the first line at or after the prefix
    /// (found by binary search): memory grows with the number of loose refs, not packed ones.
    ///
    /// Returns `None`, possibly after some calls (whose refs the caller must then discard and ask
    /// libgit2 instead), whenever something is in a form this reader does not fully understand:
    /// another ref backend (a `reftable` directory), a `packed-refs` without the `sorted` trait or
    /// with a malformed or out-of-order line, a loose ref that is symbolic, malformed, unreadable,
    /// not a valid ref name or not a regular file. It never leaves out a ref that exists.
    pub(crate) fn for_each_under(
        self,
        prefix: &str,
        mut each: impl FnMut(&str, Oid),
    ) -> Option<()> {
        let (common_dir, format) = (self.common_dir, self.format);
        if common_dir.join("reftable").exists() {
            return None;
        }
        // Loose refs first: a concurrent `pack-refs` moves refs from loose files into `packed-refs`,
        // so a ref read in neither place is impossible in this order.
        let mut loose = Vec::new();
        loose_under(&common_dir.join(prefix), prefix, format, &mut loose)?;
        loose.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut loose = loose.into_iter().peekable();
        let file = match File::open(common_dir.join("packed-refs")) {
            Ok(f) => Some(f),
            Err(e) if e.kind() == ErrorKind::NotFound => None,
            Err(_) => return None,
        };
        if let Some(first) = file
            .as_ref()
            .map(|f| lower_bound_at(f, file_len(f), prefix.as_bytes(), format))
        {
            if let (Some(file), Some(first)) = (file.as_ref(), first?) {
                let mut reader = BufReader::with_capacity(64 << 10, file);
                reader.seek(SeekFrom::Start(first.start)).ok()?;
                let (mut line, mut previous) = (Vec::new(), Vec::new());
                loop {
                    line.clear();
                    if reader.read_until(b'\n', &mut line).ok()? == 0 {
                        break;
                    }
                    let text = line.strip_suffix(b"\n").unwrap_or(&line);
                    if text.first() == Some(&b'^') {
                        continue;
                    }
                    let oid = format.parse_bytes(text.get(..format.hex_len())?)?;
                    let name = text.get(format.hex_len()..)?.strip_prefix(b" ")?;
                    if !name.starts_with(prefix.as_bytes()) {
                        break;
                    }
                    // The binary search already trusted the order; a file that breaks it is not
                    // what git wrote.
                    if name <= previous.as_slice() {
                        return None;
                    }
                    previous.clear();
                    previous.extend_from_slice(name);
                    let name = std::str::from_utf8(name).ok()?;
                    let mut overridden = false;
                    while let Some((l, oid)) = loose.next_if(|(l, _)| l.as_str() <= name) {
                        overridden |= l == name;
                        each(&l, oid);
                    }
                    if !overridden {
                        each(name, oid);
                    }
                }
            }
        }
        for (l, oid) in loose {
            each(&l, oid);
        }
        Some(())
    }
}

/// Collects the loose refs in `dir`, whose ref name is `name` (ending in `/`), recursively.
fn loose_under(
    dir: &Path,
    name: &str,
    format: ObjectFormat,
    out: &mut Vec<(String, Oid)>,
) -> Option<()> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if is_absent(&e) => return Some(()),
        Err(_) => return None,
    };
    for entry in entries {
        let entry = entry.ok()?;
        let file_name = entry.file_name().into_string().ok()?;
        let full = format!("{name}{file_name}");
        let kind = entry.file_type().ok()?;
        if kind.is_dir() {
            loose_under(&entry.path(), &format!("{full}/"), format, out)?;
        } else if kind.is_file() {
            // A writer's lock file, never a ref (no ref name ends in `.lock`).
            if file_name.ends_with(".lock") {
                continue;
            }
            if !git2::Reference::is_valid_name(&full) {
                return None;
            }
            match parse_loose(&std::fs::read(entry.path()).ok()?, format) {
                Lookup::Found(oid) => out.push((full, oid)),
                _ => return None,
            }
        } else {
            return None;
        }
    }
    Some(())
}

/// Object ids for the tests of this module and of the `ref_update` module.
#[cfg(test)]
pub(crate) mod test_ids {
    use git2::Oid;

    pub const A: &str = "1111111111111111111111111111111111111111";
    pub const B: &str = "2222222222222222222222222222222222222222";
    pub const PEELED: &str = "3333333333333333333333333333333333333333";

    pub fn oid(s: &str) -> Oid {
        Oid::from_str(s).unwrap()
    }
}

#[cfg(test)]
mod tests {
    use super::test_ids::{oid, A, B, PEELED};
    use super::*;

    fn lookup(dir: &Path, name: &str) -> Lookup {
        sha1(dir).lookup(name)
    }

    fn sha1(dir: &Path) -> FilesBackend<'_> {
        FilesBackend {
            common_dir: dir,
            format: ObjectFormat::Sha1,
            packed: None,
        }
    }

    fn dir_with_packed(text: &str) -> tempfile::TempDir {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("packed-refs"), text).unwrap();
        d
    }

    /// A sorted packed-refs of `n` refs `refs/entire/checkpoints/<i:04>` plus a peeled tag.
    fn sorted_packed(n: usize) -> String {
        let mut names: Vec<String> = (0..n)
            .map(|i| format!("refs/entire/checkpoints/{:02}/{i:06}", i % 100))
            .collect();
        names.push("refs/tags/v1".into());
        names.sort();
        let mut s = String::from("# pack-refs with: peeled fully-peeled sorted \n");
        for n in names {
            let tip = if n.ends_with("000007") { B } else { A };
            s.push_str(&format!("{tip} {n}\n"));
            if n == "refs/tags/v1" {
                s.push_str(&format!("^{PEELED}\n"));
            }
        }
        s
    }

    #[test]
    fn finds_every_packed_ref_and_misses_absent_ones() {
        let d = dir_with_packed(&sorted_packed(500));
        for i in 0..500 {
            let name = format!("refs/entire/checkpoints/{:02}/{i:06}", i % 100);
            let want = if i == 7 { B } else { A };
            assert_eq!(lookup(d.path(), &name), Lookup::Found(oid(want)), "{name}");
        }
        assert_eq!(lookup(d.path(), "refs/tags/v1"), Lookup::Found(oid(A)));
        for absent in [
            "refs/entire/checkpoints/00/000001",
            "refs/entire/checkpoints/07/00000",
            "refs/entire/checkpoints/99/999999",
            "refs/a",
            "refs/zzz",
            "refs/tags/v0",
            "refs/tags/v2",
        ] {
            assert_eq!(lookup(d.path(), absent), Lookup::Missing, "{absent}");
        }
    }

    /// A command's copy of `packed-refs` answers as the file does, and a file renamed over it (as
    /// git writes it) is read again, not answered from the old copy. A ref asked for again is
    /// answered from the first search, without another, while the file is the same one.
    #[test]
    fn a_cached_packed_refs_answers_as_the_file_and_follows_its_replacement() {
        let text = sorted_packed(3000);
        assert!(text.len() as u64 > SMALL_PACKED, "the large-file path");
        let d = dir_with_packed(&text);
        let cache = PackedRefsCache::default();
        let files = FilesBackend {
            packed: Some(&cache),
            ..sha1(d.path())
        };
        let name = |i: usize| format!("refs/entire/checkpoints/{:02}/{i:06}", i % 100);
        let searches = || cache.state.borrow().searches;
        for _ in 0..3 {
            assert_eq!(files.lookup(&name(7)), Lookup::Found(oid(B)));
            assert_eq!(files.lookup(&format!("{}x", name(7))), Lookup::Missing);
            assert_eq!(
                searches(),
                2,
                "a ref, found or missing, is searched for once"
            );
        }
        for i in (0..3000).step_by(7) {
            let want = if i == 7 { B } else { A };
            assert_eq!(files.lookup(&name(i)), Lookup::Found(oid(want)), "{i}");
            assert_eq!(files.lookup(&format!("{}x", name(i))), Lookup::Missing);
        }
        assert!(cache.state.borrow().snapshot.is_some(), "read whole by now");
        let kept = cache.state.borrow().answers.as_ref().map(|(_, a)| a.len());
        assert!(
            kept <= Some(SEARCHES_BEFORE_SNAPSHOT as usize),
            "only what positioned reads answered is kept: {kept:?}"
        );
        let new = d.path().join("packed-refs.new");
        std::fs::write(&new, text.replace(B, A)).unwrap();
        std::fs::rename(&new, d.path().join("packed-refs")).unwrap();
        let before = searches();
        assert_eq!(files.lookup(&name(7)), Lookup::Found(oid(A)));
        assert_eq!(searches(), before + 1, "the new file is searched");
        std::fs::remove_file(d.path().join("packed-refs")).unwrap();
        assert_eq!(files.lookup(&name(7)), Lookup::Missing);
    }

    #[test]
    fn sha256_ids_are_read_in_a_sha256_repository_only() {
        let long = "c".repeat(64);
        let d = dir_with_packed(&format!(
            "# pack-refs with: peeled fully-peeled sorted \n{long} refs/a\n"
        ));
        let sha256 = FilesBackend {
            common_dir: d.path(),
            format: ObjectFormat::Sha256,
            packed: None,
        };
        assert_eq!(
            sha256.lookup("refs/a"),
            Lookup::Found(ObjectFormat::Sha256.parse(&long).unwrap())
        );
        assert_eq!(sha256.lookup("refs/b"), Lookup::Missing);
        assert_eq!(
            lookup(d.path(), "refs/a"),
            Lookup::Unknown,
            "not a SHA-1 line"
        );
        loose(
            d.path(),
            "refs/entire/checkpoints/ab/x",
            &format!("{long}\n"),
        );
        let mut seen = Vec::new();
        sha256
            .for_each_under(P, |n, o| seen.push((n.to_owned(), o)))
            .unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(scan(d.path()), None, "a SHA-1 reader cannot decide");
    }

    #[test]
    fn peeled_lines_are_skipped_around_the_search_point() {
        // Every record peeled: the midpoint often lands on a `^` line.
        let mut s = String::from("# pack-refs with: peeled fully-peeled sorted \n");
        for i in 0..64 {
            s.push_str(&format!("{A} refs/tags/t{i:03}\n^{PEELED}\n"));
        }
        let d = dir_with_packed(&s);
        for i in 0..64 {
            assert_eq!(
                lookup(d.path(), &format!("refs/tags/t{i:03}")),
                Lookup::Found(oid(A))
            );
        }
        assert_eq!(lookup(d.path(), "refs/tags/t064"), Lookup::Missing);
    }

    #[test]
    fn loose_file_wins_over_packed() {
        let d = dir_with_packed(&sorted_packed(10));
        let name = "refs/entire/checkpoints/03/000003";
        std::fs::create_dir_all(d.path().join("refs/entire/checkpoints/03")).unwrap();
        std::fs::write(d.path().join(name), format!("{B}\n")).unwrap();
        assert_eq!(lookup(d.path(), name), Lookup::Found(oid(B)));
    }

    #[test]
    fn loose_only_and_nothing_at_all() {
        let d = tempfile::tempdir().unwrap();
        let name = "refs/entire/checkpoints/ab/0123456789ab";
        assert_eq!(lookup(d.path(), name), Lookup::Missing);
        std::fs::create_dir_all(d.path().join("refs/entire/checkpoints/ab")).unwrap();
        std::fs::write(d.path().join(name), format!("{A}\n")).unwrap();
        assert_eq!(lookup(d.path(), name), Lookup::Found(oid(A)));
        // A directory where a name would be, and a file where a directory would be.
        assert_eq!(
            lookup(d.path(), "refs/entire/checkpoints/ab"),
            Lookup::Missing
        );
        assert_eq!(lookup(d.path(), &format!("{name}/x")), Lookup::Missing);
    }

    #[test]
    fn undecidable_forms_are_left_to_libgit2() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(d.path().join("refs/heads")).unwrap();
        std::fs::write(d.path().join("refs/heads/sym"), "ref: refs/heads/main\n").unwrap();
        std::fs::write(d.path().join("refs/heads/bad"), "not an id\n").unwrap();
        assert_eq!(lookup(d.path(), "refs/heads/sym"), Lookup::Unknown);
        assert_eq!(lookup(d.path(), "refs/heads/bad"), Lookup::Unknown);
        assert_eq!(lookup(d.path(), "HEAD"), Lookup::Unknown);
        assert_eq!(lookup(d.path(), "refs/worktree/x"), Lookup::Unknown);
        // No `sorted` trait (older writers, hand edits), or no header at all.
        for text in [
            format!("# pack-refs with: peeled \n{B} refs/b\n{A} refs/a\n"),
            format!("{A} refs/a\n"),
        ] {
            let d = dir_with_packed(&text);
            assert_eq!(lookup(d.path(), "refs/a"), Lookup::Unknown, "{text}");
        }
        // A malformed record met by the search.
        let d = dir_with_packed("# pack-refs with: sorted \ngarbage\n");
        assert_eq!(lookup(d.path(), "refs/a"), Lookup::Unknown);
        // An ID that is not hex, on a line the search only passes through.
        let not_hex = "z".repeat(40);
        let d = dir_with_packed(&format!(
            "# pack-refs with: sorted \n{not_hex} refs/a\n{B} refs/b\n"
        ));
        assert_eq!(lookup(d.path(), "refs/b"), Lookup::Unknown);
    }

    #[test]
    fn long_names_span_several_reads() {
        let long = format!("refs/entire/{}", "x".repeat(3 * CHUNK));
        let text = format!("# pack-refs with: sorted \n{A} refs/a\n{B} {long}\n{A} refs/z");
        let d = dir_with_packed(&text);
        assert_eq!(lookup(d.path(), &long), Lookup::Found(oid(B)));
        // The last line has no newline.
        assert_eq!(lookup(d.path(), "refs/z"), Lookup::Found(oid(A)));
        assert_eq!(lookup(d.path(), "refs/y"), Lookup::Missing);
    }

    const P: &str = "refs/entire/checkpoints/";

    fn scan(d: &Path) -> Option<Vec<(String, Oid)>> {
        let mut out = Vec::new();
        sha1(d).for_each_under(P, |n, o| out.push((n.to_owned(), o)))?;
        Some(out)
    }

    fn loose(d: &Path, name: &str, text: &str) {
        std::fs::create_dir_all(d.join(name).parent().unwrap()).unwrap();
        std::fs::write(d.join(name), text).unwrap();
    }

    #[test]
    fn enumerates_packed_refs_under_the_prefix_only_skipping_peeled_lines() {
        let mut text = String::from("# pack-refs with: peeled fully-peeled sorted \n");
        text.push_str(&format!("{A} refs/entire/a\n^{PEELED}\n"));
        text.push_str(&format!("{A} refs/entire/checkpoints/00/x\n^{PEELED}\n"));
        text.push_str(&format!("{B} refs/entire/checkpoints/01/y\n"));
        text.push_str(&format!(
            "{A} refs/entire/checkpointsz\n{A} refs/tags/v1\n^{PEELED}\n"
        ));
        let d = dir_with_packed(&text);
        let got = scan(d.path()).unwrap();
        assert_eq!(
            got,
            [(format!("{P}00/x"), oid(A)), (format!("{P}01/y"), oid(B))]
        );
        // Large enough that the start is found by binary search, not at the first line.
        let d = dir_with_packed(&sorted_packed(3000));
        assert_eq!(scan(d.path()).unwrap().len(), 3000);
    }

    #[test]
    fn loose_refs_override_packed_ones_and_interleave_in_order() {
        let d = dir_with_packed(&sorted_packed(5));
        loose(d.path(), &format!("{P}02/000002"), &format!("{B}\n"));
        loose(d.path(), &format!("{P}01/000009"), &format!("{B}\n"));
        loose(d.path(), &format!("{P}zz/last"), B);
        loose(d.path(), &format!("{P}03/000003.lock"), "junk");
        let got = scan(d.path()).unwrap();
        let names: Vec<&str> = got.iter().map(|(n, _)| &n[P.len()..]).collect();
        assert_eq!(
            names,
            [
                "00/000000",
                "01/000001",
                "01/000009",
                "02/000002",
                "03/000003",
                "04/000004",
                "zz/last"
            ]
        );
        let tip = |leaf: &str| got.iter().find(|(n, _)| n.ends_with(leaf)).unwrap().1;
        assert_eq!(tip("02/000002"), oid(B), "the loose file wins");
        assert_eq!(tip("03/000003"), oid(A), "a lock file is not a ref");
    }

    #[test]
    fn loose_refs_only_or_nothing() {
        let d = tempfile::tempdir().unwrap();
        assert_eq!(scan(d.path()).unwrap(), []);
        loose(d.path(), &format!("{P}ab/x"), &format!("{A}\n"));
        assert_eq!(scan(d.path()).unwrap(), [(format!("{P}ab/x"), oid(A))]);
    }

    #[test]
    fn undecidable_enumerations_are_left_to_libgit2() {
        let sorted = sorted_packed(3);
        let unsorted = format!("# pack-refs with: sorted \n{A} {P}b\n{A} {P}a\n");
        let bad = format!("# pack-refs with: sorted \n{A} {P}a\nnot a line\n");
        let unknown_traits = format!("# pack-refs with: peeled \n{A} {P}a\n");
        for text in [unsorted, bad, unknown_traits] {
            assert_eq!(scan(dir_with_packed(&text).path()), None, "{text}");
        }
        for (name, text) in [
            (format!("{P}ab/sym"), "ref: refs/heads/main\n".to_owned()),
            (format!("{P}ab/bad"), "not an id\n".to_owned()),
            (format!("{P}ab/bad..name"), format!("{A}\n")),
        ] {
            let d = dir_with_packed(&sorted);
            loose(d.path(), &name, &text);
            assert_eq!(scan(d.path()), None, "{name}");
        }
        let d = dir_with_packed(&sorted);
        std::fs::create_dir(d.path().join("reftable")).unwrap();
        assert_eq!(scan(d.path()), None, "another ref backend");
        let d = dir_with_packed(&sorted);
        std::fs::create_dir_all(d.path().join(P)).unwrap();
        std::os::unix::fs::symlink("/nonexistent", d.path().join(format!("{P}ab"))).unwrap();
        assert_eq!(scan(d.path()), None, "a symbolic link");
    }
}
