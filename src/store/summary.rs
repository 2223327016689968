//! The summary index: a local cache of what `list` shows of each git-refs checkpoint, so that a
//! listing reads one file instead of five objects per checkpoint (docs/format.md, "The summary
//! index"; docs/decisions.md, "A summary index for list").
//!
//! It is never the source of truth. A record is used only for the ref it names and only while
//! that ref still points at the commit the record was computed from; anything else is read from
//! the checkpoint again. A file that is missing, truncated, corrupt, of another version, too
//! large or not a regular file is ignored whole (with a [`Damage`] for the caller to warn about)
//! and replaced. An unreadable checkpoint is recorded only when a document of it does not parse
//! (a fact of the objects at the recorded tip); any other is never recorded, so a checkpoint that
//! becomes readable (a blob fetched into a partial clone) is listed as it is. Writers replace the
//! file atomically and take no lock: two racing writers each leave a complete index, and a
//! record the loser wrote for a tip that has moved on only costs recomputation.

use std::path::{Path, PathBuf};

use crate::git::objects::Oid;

use crate::base::fs::{read_cache_file, write_atomic, CacheFileError};
use crate::base::id::CheckpointId;
use crate::git::format::ObjectFormat;
use crate::git::refname::{is_checkpoint_tail, CHECKPOINT_REF_PREFIX};
use crate::store::{CheckpointInfo, StoreKind};

/// The index's file name, in `<git common dir>/entire/`.
pub const INDEX_FILE: &str = "summary-index";
/// The first four bytes of every index.
const MAGIC: &[u8; 4] = b"ECSI";
/// The format version this code reads and writes (2 added each line's subject, 3 why a
/// checkpoint whose documents do not parse is unreadable, 4 every session's agent in a line's
/// agent, 5 the commits its root's `linked_commits` names and the entries it refused, 6 a CRC-32C
/// checksum instead of SHA-256; an index of an earlier version is ignored and rebuilt, never read
/// with this version's checksum).
pub const VERSION: u8 = 6;
/// Magic, version, object id length, two reserved bytes, record count.
const HEADER_LEN: usize = 12;
/// The checksum of everything before it ([`checksum`]).
pub const TRAILER_LEN: usize = 4;
/// The largest index read or written: about 250,000 checkpoints of one session each. A larger
/// file is ignored as damaged; a writer stops adding records before reaching it (the rest are
/// then read from their checkpoints on every listing).
pub const MAX_BYTES: u64 = 32 << 20;

/// Why an index file was ignored.
#[derive(Debug, thiserror::Error)]
pub enum Damage {
    /// A symbolic link (or something else that is not a regular file) is where the index should
    /// be; it is never followed.
    #[error("not a regular file")]
    NotAFile,
    /// The file is larger than [`MAX_BYTES`].
    #[error("too large: {size} bytes (at most {MAX_BYTES})")]
    TooLarge {
        /// Its size.
        size: u64,
    },
    /// The file could not be read.
    #[error("unreadable")]
    Unreadable(#[source] std::io::Error),
    /// The file does not start with the index magic.
    #[error("not a summary index")]
    NotAnIndex,
    /// Written by another version of the format.
    #[error("format version {found} (this version reads {VERSION})")]
    Version {
        /// The version in the file.
        found: u8,
    },
    /// The checksum does not match: truncated or corrupt.
    #[error("truncated or corrupt (checksum mismatch)")]
    Checksum,
    /// A record does not decode.
    #[error("malformed: {0}")]
    Malformed(&'static str),
    /// Two records for one ref, or records out of order.
    #[error("records out of order or repeated at {name}")]
    Order {
        /// The ref of the offending record.
        name: String,
    },
}

/// A validated index (loaded, or built by a [`Builder`]): its bytes and where each record starts.
///
/// Invariant: every offset in `records` starts a whole record of `bytes` whose strings are UTF-8.
/// [`Index::parse`] checks it once (the only way outside bytes become an index), a [`Builder`]
/// keeps it (it writes `&str`s, or copies whole records of an index that holds it), and `bytes`
/// never changes afterwards but for the checksum appended after the last record; so the strings
/// are read without checking them again ([`utf8`]).
#[derive(Debug)]
pub struct Index {
    bytes: Vec<u8>,
    records: Vec<u32>,
    /// The object format of its IDs (binary, 20 bytes for SHA-1, 32 for SHA-256).
    format: ObjectFormat,
    /// Whether `bytes` ends with its checksum (a built index gets it only when stored).
    sealed: bool,
}

/// The number of a record in its [`Index`], as [`Lines::find`] returns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordNo(u32);

/// One record as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record<'a> {
    /// The checkpoint ref's tip this record was computed from.
    pub tip: Oid,
    /// The ref name without [`CHECKPOINT_REF_PREFIX`] (`<shard>/<id>`).
    pub leaf: &'a str,
    /// The list line's `created_at`.
    pub created_at: &'a str,
    /// The list line's agent.
    pub agent: &'a str,
    /// The list line's subject.
    pub subject: &'a str,
    /// Why the checkpoint is unreadable, when its documents do not parse at that tip (a fact of
    /// its objects, which never changes); "" for a readable one.
    pub corrupt: &'a str,
    /// The session IDs, in slot order.
    pub session_ids: Vec<&'a str>,
    /// The commits its root's `linked_commits` names (validated full object IDs).
    pub linked_commits: Vec<&'a str>,
    /// Why each other `linked_commits` entry was skipped.
    pub refused_links: Vec<&'a str>,
}

/// The index of the repository whose git common dir is `common`.
pub fn path(common: &Path) -> PathBuf {
    common.join("entire").join(INDEX_FILE)
}

impl Index {
    /// Loads the index at `path`: `Ok(None)` when there is none, `Err` when the file is there
    /// but must not be trusted (an index of another object format included). Never follows a
    /// symbolic link and never blocks on a special file.
    pub fn load(path: &Path, format: ObjectFormat) -> Result<Option<Index>, Damage> {
        let bytes = match read_cache_file(path, MAX_BYTES) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => return Ok(None),
            Err(CacheFileError::NotAFile) => return Err(Damage::NotAFile),
            Err(CacheFileError::TooLarge { size, .. }) => return Err(Damage::TooLarge { size }),
            Err(CacheFileError::Unreadable(e)) => return Err(Damage::Unreadable(e)),
        };
        // An index an earlier version wrote is no damage: it is rebuilt as if missing.
        if bytes.len() > 4 && &bytes[..4] == MAGIC && bytes[4] < VERSION {
            return Ok(None);
        }
        Index::parse(bytes, format).map(Some)
    }

    /// Validates `bytes` as an index: header, checksum, and every record decodable, its ref
    /// name a checkpoint ref, in strictly ascending checkpoint ID order (so one ID has one record).
    pub fn parse(bytes: Vec<u8>, format: ObjectFormat) -> Result<Index, Damage> {
        let oid_len = format.raw_len();
        if bytes.len() < 4 || &bytes[..4] != MAGIC {
            return Err(Damage::NotAnIndex);
        }
        if bytes.len() < HEADER_LEN + TRAILER_LEN {
            return Err(Damage::Checksum);
        }
        if bytes[4] != VERSION {
            return Err(Damage::Version { found: bytes[4] });
        }
        let (body, sum) = bytes.split_at(bytes.len() - TRAILER_LEN);
        if checksum(body) != sum {
            return Err(Damage::Checksum);
        }
        if usize::from(body[5]) != oid_len || body[6..8] != [0, 0] {
            return Err(Damage::Malformed("unknown object id length or flags"));
        }
        let count = u32::from_le_bytes([body[8], body[9], body[10], body[11]]) as usize;
        // A count larger than the file could hold is refused before allocating for it.
        if count > body.len() / oid_len {
            return Err(Damage::Malformed("record count larger than the file"));
        }
        let mut records = Vec::with_capacity(count);
        let mut at = HEADER_LEN;
        let mut previous: Option<&str> = None;
        for _ in 0..count {
            let (record, next) = decode::<true>(body, at, oid_len)?;
            if !is_checkpoint_tail(record.leaf) {
                return Err(Damage::Malformed("a record names no checkpoint ref"));
            }
            let id = id_of(record.leaf);
            if previous.is_some_and(|p| p >= id) {
                return Err(Damage::Order {
                    name: format!("{CHECKPOINT_REF_PREFIX}{}", record.leaf),
                });
            }
            previous = Some(id);
            records.push(at as u32);
            at = next;
        }
        if at != body.len() {
            return Err(Damage::Malformed("bytes after the last record"));
        }
        Ok(Index {
            bytes,
            records,
            format,
            sealed: true,
        })
    }

    /// How many records the index holds.
    pub fn record_count(&self) -> usize {
        self.records.len()
    }

    /// Every record, in checkpoint ID order.
    pub fn records(&self) -> impl Iterator<Item = Record<'_>> {
        self.records.iter().map(|&at| self.record_at(at))
    }

    /// A reader of this index's lines for refs visited in ascending ID order.
    pub fn lines(&self) -> Lines<'_> {
        Lines {
            index: self,
            next: 0,
        }
    }

    /// The record numbered `no` (from [`Lines::find`] on this index).
    pub fn record(&self, no: RecordNo) -> Record<'_> {
        self.record_at(self.records[no.0 as usize])
    }

    /// The checkpoint ID and `created_at` of record `no`, without decoding the rest.
    pub fn id_and_time(&self, no: RecordNo) -> (&str, &str) {
        let at = self.records[no.0 as usize] as usize;
        let leaf = leaf_at(&self.bytes, at, self.format.raw_len());
        let mut cur = Cursor::<false> {
            body: &self.bytes,
            at: at + self.format.raw_len() + 2 + leaf.len(),
        };
        (id_of(leaf), cur.string().unwrap_or(""))
    }

    /// The bytes of record `no`, as stored.
    fn raw(&self, no: RecordNo) -> &[u8] {
        let i = no.0 as usize;
        let end = self
            .records
            .get(i + 1)
            .map_or(self.body_len(), |&e| e as usize);
        &self.bytes[self.records[i] as usize..end]
    }

    fn body_len(&self) -> usize {
        self.bytes.len() - if self.sealed { TRAILER_LEN } else { 0 }
    }

    fn record_at(&self, at: u32) -> Record<'_> {
        // Every offset was decoded once by `parse`, or encoded by a `Builder`.
        decode::<false>(&self.bytes, at as usize, self.format.raw_len())
            .map(|(r, _)| r)
            .unwrap_or_else(|_| unreachable!("validated by Index::parse"))
    }

    /// Replaces the index file at `path` with this index, atomically (its directory is created
    /// when missing); a built index is sealed with its checksum first.
    pub fn store(&mut self, path: &Path) -> std::io::Result<()> {
        if !self.sealed {
            let sum = checksum(&self.bytes);
            self.bytes.extend_from_slice(&sum);
            self.sealed = true;
        }
        store(path, &self.bytes)
    }
}

impl<'a> Record<'a> {
    /// This record as a list line.
    pub fn line(self) -> crate::store::ListLine<'a> {
        crate::store::ListLine {
            id: id_of(self.leaf),
            store: StoreKind::GitRefs,
            created_at: self.created_at,
            session_count: self.session_ids.len(),
            session_ids: self.session_ids,
            agent: self.agent,
            subject: self.subject,
            remote_only: false,
            unreadable: (!self.corrupt.is_empty()).then_some(self.corrupt),
            linked_commits: self.linked_commits,
            refused_links: self.refused_links,
        }
    }
}

impl Record<'_> {
    /// The list line this record holds, for checkpoint `id` (the ID of its ref).
    pub fn info(&self, id: CheckpointId) -> CheckpointInfo {
        CheckpointInfo {
            id,
            store: StoreKind::GitRefs,
            created_at: self.created_at.to_owned(),
            session_count: self.session_ids.len(),
            session_ids: self.session_ids.iter().map(|s| (*s).to_owned()).collect(),
            agent: self.agent.to_owned(),
            subject: self.subject.to_owned(),
            remote_only: false,
            unreadable: self.unreadable().map(str::to_owned),
            linked_commits: owned(&self.linked_commits),
            refused_links: owned(&self.refused_links),
        }
    }

    /// Why the checkpoint is unreadable, when the record says it is.
    fn unreadable(&self) -> Option<&str> {
        (!self.corrupt.is_empty()).then_some(self.corrupt)
    }

    /// The checkpoint ID of the record's ref.
    pub fn id(&self) -> &str {
        id_of(self.leaf)
    }
}

fn owned(strings: &[&str]) -> Vec<String> {
    strings.iter().map(|s| (*s).to_owned()).collect()
}

/// Builds an index record by record, in strictly ascending checkpoint ID order (the caller's
/// order; [`Index::parse`] refuses anything else), without ever holding the lines themselves.
pub struct Builder {
    bytes: Vec<u8>,
    records: Vec<u32>,
    format: ObjectFormat,
}

impl Builder {
    /// An empty index of `format`'s object IDs with room for about `records` records.
    pub fn new(records: usize, format: ObjectFormat) -> Self {
        let oid_len = format.raw_len();
        let mut bytes = Vec::with_capacity(HEADER_LEN + records * 104 + TRAILER_LEN);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&[VERSION, oid_len as u8, 0, 0, 0, 0, 0, 0]);
        Builder {
            bytes,
            records: Vec::with_capacity(records),
            format,
        }
    }

    /// Appends a copy of record `no` of `from`; `None` (nothing appended) past [`MAX_BYTES`], or
    /// when `from` holds IDs of another format.
    pub fn copy(&mut self, from: &Index, no: RecordNo) -> Option<RecordNo> {
        if from.format != self.format {
            return None;
        }
        let raw = from.raw(no);
        (self.bytes.len() + raw.len() <= LIMIT).then(|| {
            let start = self.bytes.len();
            self.bytes.extend_from_slice(raw);
            self.mark(start)
        })
    }

    /// Appends the record of `info`, the line of the ref `<prefix><leaf>` at `tip`; `None`
    /// (nothing appended) when the line is unreadable for a reason that may pass (`corrupt`
    /// false: a blob not fetched yet, a limit of the settings) or remote-only, a string or the
    /// session count does not fit the format, or the index would exceed [`MAX_BYTES`].
    pub fn push(
        &mut self,
        leaf: &str,
        tip: Oid,
        info: &CheckpointInfo,
        corrupt: bool,
    ) -> Option<RecordNo> {
        if (info.unreadable.is_some() && !corrupt)
            || info.remote_only
            || tip.as_bytes().len() != self.format.raw_len()
        {
            return None;
        }
        let start = self.bytes.len();
        if encode_record(&mut self.bytes, leaf, tip, info).is_none() || self.bytes.len() > LIMIT {
            self.bytes.truncate(start);
            return None;
        }
        Some(self.mark(start))
    }

    fn mark(&mut self, start: usize) -> RecordNo {
        self.records.push(start as u32);
        RecordNo(self.records.len() as u32 - 1)
    }

    /// The index built: its records are numbered as `copy` and `push` returned.
    pub fn finish(mut self) -> Index {
        let count = self.records.len() as u32;
        self.bytes[8..12].copy_from_slice(&count.to_le_bytes());
        Index {
            bytes: self.bytes,
            records: self.records,
            format: self.format,
            sealed: false,
        }
    }
}

/// The largest body (everything before the checksum) of an index.
const LIMIT: usize = MAX_BYTES as usize - TRAILER_LEN;

/// Looks lines up for refs visited in ascending ID order, in one pass over the index (a merge
/// of two sorted sequences: no search, no random access).
pub struct Lines<'a> {
    index: &'a Index,
    next: usize,
}

impl Lines<'_> {
    /// The list line of checkpoint `id` whose ref `name` points at `tip`, if the index holds a
    /// record for exactly that ref at exactly that tip. `id` must be greater than the IDs of
    /// the previous calls.
    pub fn get(&mut self, name: &str, tip: Oid, id: &CheckpointId) -> Option<CheckpointInfo> {
        let (shard, _) = name.strip_prefix(CHECKPOINT_REF_PREFIX)?.split_once('/')?;
        let no = self.find(shard, id.as_str(), tip)?;
        Some(self.index.record(no).info(id.clone()))
    }

    /// The record of the ref `<prefix><shard>/<id>` at `tip`, if the index holds one for
    /// exactly that ref at exactly that tip. `id` must be greater than the IDs of the previous
    /// calls.
    pub fn find(&mut self, shard: &str, id: &str, tip: Oid) -> Option<RecordNo> {
        let records = &self.index.records;
        while self.next < records.len()
            && id_of(leaf_at(
                &self.index.bytes,
                records[self.next] as usize,
                self.index.format.raw_len(),
            )) < id
        {
            self.next += 1;
        }
        let at = *records.get(self.next)? as usize;
        // The leaf is `<shard>/<id>`, compared in place.
        let leaf = leaf_at(&self.index.bytes, at, self.index.format.raw_len()).as_bytes();
        let same = leaf.len() == shard.len() + 1 + id.len()
            && leaf.starts_with(shard.as_bytes())
            && leaf[shard.len()] == b'/'
            && leaf.ends_with(id.as_bytes());
        let no = RecordNo(self.next as u32);
        (same && self.index.record(no).tip == tip).then_some(no)
    }
}

/// The checkpoint ID of a ref leaf `<shard>/<id>`.
fn id_of(leaf: &str) -> &str {
    leaf.split_once('/').map_or(leaf, |(_, id)| id)
}

/// The ref leaf of the record at `at` of an [`Index`]'s bytes (a record start: its invariant).
fn leaf_at(bytes: &[u8], at: usize, oid_len: usize) -> &str {
    let start = at + oid_len;
    let len = usize::from(u16::from_le_bytes([bytes[start], bytes[start + 1]]));
    utf8(&bytes[start + 2..start + 2 + len])
}

/// A string of an [`Index`]'s records, taken as UTF-8 without checking it again.
fn utf8(bytes: &[u8]) -> &str {
    debug_assert!(std::str::from_utf8(bytes).is_ok());
    // SAFETY: only called on the bytes of a string of a record of an `Index` (`leaf_at`, and a
    // `Cursor<false>`, which `Index::record_at` and `Index::id_and_time` alone make), whose
    // strings are all UTF-8: the invariant documented on `Index`, checked once by `Index::parse`
    // (`decode::<true>`) or kept by the `Builder` that made it.
    unsafe { std::str::from_utf8_unchecked(bytes) }
}

/// The checksum that ends an index: CRC-32C of everything before it, little-endian.
///
/// It only has to catch a torn or partial write of a local cache (a crash mid-write, a full
/// disk, a truncated copy, a flipped bit): the file is written by us and read by us, and is not
/// defended against anyone who means it harm, because whoever can write `.git/entire/` can
/// write the refs themselves (a forged record with a valid checksum is shown as recorded;
/// `doctor` compares each record with its checkpoint). A CRC-32C detects every burst of up to
/// 32 flipped bits and misses other damage with a chance of 2^-32, and costs a fraction of a
/// SHA-256 (hardware-accelerated where the CPU has the instruction). The writes are atomic
/// (rename), so a torn file is rare in the first place; any damage the decoder still meets is
/// refused by it record by record.
pub fn checksum(body: &[u8]) -> [u8; TRAILER_LEN] {
    crc32c::crc32c(body).to_le_bytes()
}

/// Decodes the record at `at` of `body`; returns it and where the next one starts. `CHECK`:
/// whether its strings are checked to be UTF-8 (`false` only for a record of an [`Index`]).
fn decode<const CHECK: bool>(
    body: &[u8],
    at: usize,
    oid_len: usize,
) -> Result<(Record<'_>, usize), Damage> {
    let mut cur = Cursor::<CHECK> { body, at };
    let tip = ObjectFormat::from_raw(cur.take(oid_len)?)
        .ok_or(Damage::Malformed("object id of a record"))?;
    let leaf = cur.string()?;
    let created_at = cur.string()?;
    let agent = cur.string()?;
    let subject = cur.string()?;
    let corrupt = cur.string()?;
    let session_ids = cur.strings()?;
    let linked_commits = cur.strings()?;
    let refused_links = cur.strings()?;
    Ok((
        Record {
            tip,
            leaf,
            created_at,
            agent,
            subject,
            corrupt,
            session_ids,
            linked_commits,
            refused_links,
        },
        cur.at,
    ))
}

/// Reads a record's fields; `CHECK`: whether strings are checked to be UTF-8 (`false` only on
/// the records of an [`Index`]: see [`utf8`]).
struct Cursor<'a, const CHECK: bool> {
    body: &'a [u8],
    at: usize,
}

impl<'a, const CHECK: bool> Cursor<'a, CHECK> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Damage> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.body.len())
            .ok_or(Damage::Malformed("a record runs past the end"))?;
        let out = &self.body[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u16(&mut self) -> Result<u16, Damage> {
        let b = self.take(2)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }

    fn string(&mut self) -> Result<&'a str, Damage> {
        let len = usize::from(self.u16()?);
        let bytes = self.take(len)?;
        if CHECK {
            std::str::from_utf8(bytes).map_err(|_| Damage::Malformed("a string is not UTF-8"))
        } else {
            Ok(utf8(bytes))
        }
    }

    /// A count, then that many strings.
    fn strings(&mut self) -> Result<Vec<&'a str>, Damage> {
        let count = usize::from(self.u16()?);
        let mut out = Vec::with_capacity(count.min(self.body.len() - self.at));
        for _ in 0..count {
            out.push(self.string()?);
        }
        Ok(out)
    }
}

/// Appends one record; `None` when a string or a list's length does not fit in 16 bits.
fn encode_record(out: &mut Vec<u8>, leaf: &str, tip: Oid, info: &CheckpointInfo) -> Option<()> {
    let string = |out: &mut Vec<u8>, s: &str| -> Option<()> {
        out.extend_from_slice(&u16::try_from(s.len()).ok()?.to_le_bytes());
        out.extend_from_slice(s.as_bytes());
        Some(())
    };
    out.extend_from_slice(tip.as_bytes());
    string(out, leaf)?;
    string(out, &info.created_at)?;
    string(out, &info.agent)?;
    string(out, &info.subject)?;
    string(out, info.unreadable.as_deref().unwrap_or(""))?;
    for list in [&info.session_ids, &info.linked_commits, &info.refused_links] {
        out.extend_from_slice(&u16::try_from(list.len()).ok()?.to_le_bytes());
        for s in list {
            string(out, s)?;
        }
    }
    Some(())
}

/// Replaces the index at `path` with `bytes`, atomically; its directory is created when missing.
fn store(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    write_atomic(path, bytes, 0o644)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::git::refname::CheckpointRef;

    /// Encodes an index of `entries` (ref name, tip, list line), sorted by ID here, one per ID.
    fn encode<'a>(
        entries: impl IntoIterator<Item = (&'a str, Oid, &'a CheckpointInfo)>,
    ) -> Vec<u8> {
        let mut sorted: Vec<(&str, Oid, &CheckpointInfo)> = entries
            .into_iter()
            .filter_map(|(name, tip, info)| {
                name.strip_prefix(CHECKPOINT_REF_PREFIX)
                    .map(|leaf| (leaf, tip, info))
            })
            .collect();
        sorted.sort_by(|a, b| id_of(a.0).cmp(id_of(b.0)));
        sorted.dedup_by(|a, b| id_of(a.0) == id_of(b.0));
        let mut builder = Builder::new(sorted.len(), SHA1);
        for (leaf, tip, info) in sorted {
            builder.push(leaf, tip, info, false);
        }
        let mut index = builder.finish();
        let sum = checksum(&index.bytes);
        index.bytes.extend_from_slice(&sum);
        index.bytes
    }

    fn line(id: &str, agent: &str, sessions: &[&str]) -> CheckpointInfo {
        CheckpointInfo {
            id: CheckpointId::parse(id).unwrap(),
            store: StoreKind::GitRefs,
            created_at: "2026-05-01T10:00:00Z".into(),
            session_count: sessions.len(),
            session_ids: sessions.iter().map(|s| (*s).to_owned()).collect(),
            agent: agent.into(),
            subject: format!("the prompt of {id}"),
            remote_only: false,
            unreadable: None,
            linked_commits: vec![format!("{:040x}", id.len())],
            refused_links: Vec::new(),
        }
    }

    fn name(id: &str) -> String {
        CheckpointRef::canonical(&CheckpointId::parse(id).unwrap())
            .name()
            .to_owned()
    }

    const SHA1: ObjectFormat = ObjectFormat::Sha1;
    const A: &str = "01KVBJCWYA4YW6J5M9GP000001";
    const B: &str = "01KVBJCWYA4YW6J5M9GP000002";
    const HEX: &str = "0123456789ab";
    /// A ULID whose shard has letters, so its ref has a case-folded spelling.
    const F: &str = "01KVBJCWYA4YW6J5M9GP0000AB";

    fn tip(n: u8) -> Oid {
        Oid::from_bytes(&[n; 20]).unwrap()
    }

    fn sample() -> (Vec<(String, Oid, CheckpointInfo)>, Vec<u8>) {
        let entries = vec![
            (name(B), tip(2), line(B, "Codex", &["s1", "s2"])),
            (name(HEX), tip(3), line(HEX, "", &[])),
            (name(A), tip(1), line(A, "Claude Code", &["s0"])),
        ];
        let bytes = encode(entries.iter().map(|(n, t, i)| (n.as_str(), *t, i)));
        (entries, bytes)
    }

    /// Re-computes the checksum of hand-edited bytes, so that only the check under test fails.
    fn reseal(mut body: Vec<u8>) -> Vec<u8> {
        let sum = checksum(&body);
        body.extend_from_slice(&sum);
        body
    }

    fn body(bytes: &[u8]) -> Vec<u8> {
        bytes[..bytes.len() - TRAILER_LEN].to_vec()
    }

    #[test]
    fn round_trip_in_id_order_and_only_at_the_recorded_tip() {
        let (mut entries, bytes) = sample();
        let index = Index::parse(bytes, SHA1).unwrap();
        assert_eq!(index.record_count(), 3);
        let ids: Vec<&str> = index.records().map(|r| id_of(r.leaf)).collect();
        assert_eq!(ids, [HEX, A, B], "sorted by ID (digits before letters)");
        entries.sort_by(|a, b| a.2.id.cmp(&b.2.id));
        let mut lines = index.lines();
        for (name, tip, info) in &entries {
            assert_eq!(lines.get(name, *tip, &info.id).as_ref(), Some(info));
        }
        let mut lines = index.lines();
        let a = CheckpointId::parse(A).unwrap();
        assert_eq!(lines.get(&name(A), tip(9), &a), None, "another tip");
        let f = CheckpointId::parse(F).unwrap();
        let folded = CheckpointRef::folded(&f).unwrap();
        let bytes = encode([(name(F).as_str(), tip(4), &line(F, "x", &["s"]))]);
        let index = Index::parse(bytes, SHA1).unwrap();
        assert!(index.lines().get(&name(F), tip(4), &f).is_some());
        assert_eq!(
            index.lines().get(folded.name(), tip(4), &f),
            None,
            "a record is for one spelling of the ref"
        );
        let mut lines = index.lines();
        let c = CheckpointId::parse("01KVBJCWYA4YW6J5M9GP000003").unwrap();
        assert_eq!(lines.get(&name(c.as_str()), tip(1), &c), None, "no record");
    }

    #[test]
    fn unreadable_and_remote_only_lines_are_never_recorded() {
        let mut broken = line(A, "x", &["s"]);
        broken.unreadable = Some("checkpoint A: metadata.json is corrupt".into());
        let remote = CheckpointInfo::remote_only(CheckpointId::parse(B).unwrap());
        let (na, nb) = (name(A), name(B));
        let bytes = encode([
            (na.as_str(), tip(1), &broken),
            (nb.as_str(), tip(2), &remote),
        ]);
        assert_eq!(Index::parse(bytes, SHA1).unwrap().record_count(), 0);
    }

    #[test]
    fn lines_that_do_not_fit_are_left_out() {
        let long = "x".repeat(usize::from(u16::MAX) + 1);
        let big = line(A, &long, &["s"]);
        let ok = line(B, "Codex", &["s"]);
        let (na, nb) = (name(A), name(B));
        let index = Index::parse(
            encode([(na.as_str(), tip(1), &big), (nb.as_str(), tip(2), &ok)]),
            SHA1,
        )
        .unwrap();
        assert_eq!(index.record_count(), 1);
        assert_eq!(index.records().next().unwrap().agent, "Codex");
    }

    #[test]
    fn a_sha256_index_holds_32_byte_ids_and_is_refused_as_the_other_format() {
        let tip = ObjectFormat::Sha256.parse(&"5".repeat(64)).unwrap();
        let info = line(A, "Codex", &["s"]);
        let mut builder = Builder::new(1, ObjectFormat::Sha256);
        let leaf = &name(A)[CHECKPOINT_REF_PREFIX.len()..];
        assert!(builder.push(leaf, tip, &info, false).is_some());
        assert!(
            builder
                .push(leaf, super::tests::tip(1), &info, false)
                .is_none(),
            "a SHA-1 tip is not recorded in a SHA-256 index"
        );
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INDEX_FILE);
        builder.finish().store(&path).unwrap();
        let index = Index::load(&path, ObjectFormat::Sha256).unwrap().unwrap();
        assert_eq!(index.records().next().unwrap().tip, tip);
        assert_eq!(index.lines().find(&leaf[..2], A, tip), Some(RecordNo(0)));
        assert!(matches!(
            Index::load(&path, SHA1),
            Err(Damage::Malformed(_))
        ));
        let (_, sha1) = sample();
        let sha1 = Index::parse(sha1, SHA1).unwrap();
        let mut other = Builder::new(1, ObjectFormat::Sha256);
        assert!(
            other.copy(&sha1, RecordNo(0)).is_none(),
            "no record of another format is copied"
        );
    }

    #[test]
    fn damage_is_detected() {
        let (_, bytes) = sample();
        let damaged = |b: Vec<u8>| Index::parse(b, SHA1).unwrap_err();
        assert!(matches!(damaged(Vec::new()), Damage::NotAnIndex));
        assert!(matches!(damaged(b"ECSI".to_vec()), Damage::Checksum));
        assert!(matches!(
            damaged(bytes[..bytes.len() - 1].to_vec()),
            Damage::Checksum
        ));
        let mut flipped = bytes.clone();
        flipped[HEADER_LEN + 3] ^= 1;
        assert!(matches!(damaged(flipped), Damage::Checksum));
        let mut version = bytes.clone();
        version[4] = VERSION + 1;
        assert!(matches!(damaged(version), Damage::Version { found } if found == VERSION + 1));

        // Each of these passes the checksum: the records themselves are refused.
        let mut count = body(&bytes);
        count[8..12].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(damaged(reseal(count)), Damage::Malformed(_)));
        let mut fewer = body(&bytes);
        fewer[8..12].copy_from_slice(&2u32.to_le_bytes());
        assert!(matches!(damaged(reseal(fewer)), Damage::Malformed(_)));
        let mut oid_len = body(&bytes);
        oid_len[5] = 32;
        assert!(matches!(damaged(reseal(oid_len)), Damage::Malformed(_)));
    }

    #[test]
    fn a_torn_index_is_refused_and_an_older_one_rebuilt() {
        let (_, bytes) = sample();
        assert!(Index::parse(bytes.clone(), SHA1).is_ok());
        // Every prefix a torn write can leave, and every byte flipped (each bit of it): none is
        // read.
        for len in 0..bytes.len() {
            let torn = Index::parse(bytes[..len].to_vec(), SHA1);
            assert!(torn.is_err(), "the first {len} of {} bytes", bytes.len());
        }
        for at in 0..bytes.len() {
            for bit in 0..8 {
                let mut flipped = bytes.clone();
                flipped[at] ^= 1 << bit;
                assert!(
                    Index::parse(flipped, SHA1).is_err(),
                    "bit {bit} of byte {at} flipped"
                );
            }
        }
        // On disk: a torn file is damage (the listing warns and writes it again), an index of
        // an earlier version (another checksum) is no index at all (rebuilt without a warning).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INDEX_FILE);
        store(&path, &bytes[..bytes.len() - 1]).unwrap();
        assert!(matches!(Index::load(&path, SHA1), Err(Damage::Checksum)));
        let mut older = bytes.clone();
        older[4] = VERSION - 1;
        store(&path, &older).unwrap();
        assert!(matches!(Index::load(&path, SHA1), Ok(None)));
        store(&path, &bytes).unwrap();
        assert_eq!(Index::load(&path, SHA1).unwrap().unwrap().record_count(), 3);
    }

    #[test]
    fn duplicate_unordered_and_foreign_records_are_refused() {
        let one = line(A, "Codex", &["s"]);
        let record = |leaf: &str| {
            let mut out = Vec::new();
            encode_record(&mut out, leaf, tip(1), &one).unwrap();
            out
        };
        let index_of = |records: &[Vec<u8>]| {
            let mut out = MAGIC.to_vec();
            out.extend_from_slice(&[VERSION, SHA1.raw_len() as u8, 0, 0]);
            out.extend_from_slice(&(records.len() as u32).to_le_bytes());
            for r in records {
                out.extend_from_slice(r);
            }
            reseal(out)
        };
        let a = &name(A)[CHECKPOINT_REF_PREFIX.len()..];
        let b = &name(B)[CHECKPOINT_REF_PREFIX.len()..];
        assert!(Index::parse(index_of(&[record(a), record(b)]), SHA1).is_ok());
        let twice = Index::parse(index_of(&[record(a), record(a)]), SHA1).unwrap_err();
        assert!(matches!(twice, Damage::Order { .. }), "{twice}");
        // The same ID under both spellings of its shard is one key too.
        let canonical = &name(F)[CHECKPOINT_REF_PREFIX.len()..];
        let folded = format!("ab/{F}");
        let both = Index::parse(index_of(&[record(canonical), record(&folded)]), SHA1).unwrap_err();
        assert!(matches!(both, Damage::Order { .. }));
        let reversed = Index::parse(index_of(&[record(b), record(a)]), SHA1).unwrap_err();
        assert!(matches!(reversed, Damage::Order { .. }));
        for foreign in ["v1/main", "zz/01KVBJCWYA4YW6J5M9GP000001", "../../HEAD", ""] {
            let e = Index::parse(index_of(&[record(foreign)]), SHA1).unwrap_err();
            assert!(matches!(e, Damage::Malformed(_)), "{foreign:?}: {e}");
        }
        let mut not_utf8 = record(a);
        let at = not_utf8.len() - 1;
        not_utf8[at] = 0xff;
        let e = Index::parse(index_of(&[not_utf8]), SHA1).unwrap_err();
        assert!(matches!(e, Damage::Malformed(_)), "{e}");
    }

    #[test]
    fn load_refuses_links_and_special_files_and_reports_absence() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(INDEX_FILE);
        assert!(matches!(Index::load(&path, SHA1), Ok(None)));
        let (_, bytes) = sample();
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, &bytes).unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        assert!(matches!(Index::load(&path, SHA1), Err(Damage::NotAFile)));
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        assert!(matches!(Index::load(&path, SHA1), Err(Damage::NotAFile)));
        std::fs::remove_dir(&path).unwrap();
        store(&path, &bytes).unwrap();
        assert_eq!(Index::load(&path, SHA1).unwrap().unwrap().record_count(), 3);
    }
}
