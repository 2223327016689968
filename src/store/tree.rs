//! Building and reading one checkpoint's subtree, shared by both git-backed stores.
//!
//! A checkpoint subtree holds `metadata.json` (the root summary) and one directory per session
//! slot (`0/`, `1/`, ...). The git-refs store commits it as the whole tree of a ref; the
//! git-branch store splices it into the v1 branch at `id[:2]/id[2:]`. The only difference
//! visible inside is the prefix of the paths in the summary's `sessions[]` entries, which is
//! `""` for git-refs and `/<id[:2]>/<id[2:]>` on the branch (docs/format.md, "One checkpoint").

use std::collections::HashSet;
use std::io::Read;

use crate::base::id::{CheckpointId, IdKind};
use crate::config::settings::{Limits, LIMIT_BLOB_BYTES, LIMIT_SESSIONS, LIMIT_TREE_ENTRIES};
use crate::model::documents::{CheckpointSummary, SessionFilePaths, SessionMetadata, TokenUsage};
use crate::model::transcript;
use crate::store::{git_err, Backfill, CheckpointFiles, SessionWrite, StoreError};
use git2::{ObjectType, Oid, Repository, Tree};

/// The version string written into `cli_version`: ours, marked as this implementation in the
/// SemVer build metadata so a reader can tell writers apart.
pub const CLI_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+entire-checkpoints-rs");

const METADATA: &str = "metadata.json";
const CONTENT_HASH: &str = "content_hash.txt";
const PROMPT: &str = "prompt.txt";
const COMPACT_TRANSCRIPT: &str = "transcript.jsonl";
const PROMPT_SEPARATOR: &str = "\n\n---\n\n";
/// Session metadata key (ours; readers ignore unknown keys) counting redacted secrets.
pub const REDACTIONS_KEY: &str = "redactions";

const MODE_BLOB: i32 = 0o100644;
const MODE_TREE: i32 = 0o040000;

/// A new checkpoint subtree and the commit message that goes with it.
pub(crate) struct Change {
    /// The new checkpoint subtree.
    pub tree: Oid,
    /// The full commit message.
    pub message: String,
}

/// The decoded documents of a checkpoint subtree.
pub(crate) struct Documents {
    pub summary: CheckpointSummary,
    /// The sessions `sessions[]` lists, in its order.
    pub sessions: Vec<SessionMetadata>,
    /// The directory of each session, in `sessions` order (see [`read_documents`]).
    pub dirs: Vec<String>,
    /// Session directories the tree holds that `sessions[]` does not list (numbered
    /// directories with a readable `metadata.json`), in numeric order: readers show them after
    /// the listed ones; writers leave them as they are.
    pub unlisted: Vec<(String, SessionMetadata)>,
}

/// The directory each `sessions[]` entry of `summary` names: the directory of its `metadata`
/// path (an entry without one is read from `<index>/`, as the earliest writers left them). The
/// entries are authoritative: older reference versions left gaps (`0/`, `2/`, `3/`) after
/// merges, so entry `i` need not live in `i/`. A path that leaves the checkpoint (`..`, another
/// checkpoint's prefix) or names a directory an earlier entry named is
/// [`StoreError::BadSessionPath`]. The prefix may be this checkpoint's own v1 path (once or
/// repeated) or, for a ULID, a hex one: the reference's hex→ULID re-stamp keeps the old paths.
///
/// More entries than [`Limits::sessions_per_checkpoint`] is [`StoreError::OverLimit`]. Linear in
/// the number of entries.
pub(crate) fn session_dirs(
    summary: &CheckpointSummary,
    id: &CheckpointId,
    limits: &Limits,
) -> Result<Vec<String>, StoreError> {
    let count = summary.sessions.len();
    if count > limits.sessions_per_checkpoint {
        return Err(StoreError::OverLimit {
            id: id.clone(),
            what: format!("{METADATA} sessions[]"),
            size: count as u64,
            unit: "sessions",
            max: limits.sessions_per_checkpoint as u64,
            setting: LIMIT_SESSIONS,
        });
    }
    let mut dirs: Vec<String> = Vec::with_capacity(count);
    let mut seen: HashSet<String> = HashSet::with_capacity(count);
    for (entry, paths) in summary.sessions.iter().enumerate() {
        let bad = |reason: &'static str| StoreError::BadSessionPath {
            id: id.clone(),
            entry,
            path: paths.metadata.clone(),
            reason,
        };
        let dir = if paths.metadata.is_empty() {
            entry.to_string()
        } else {
            let parts: Vec<&str> = paths.metadata.trim_start_matches('/').split('/').collect();
            if parts
                .iter()
                .any(|p| p.is_empty() || *p == "." || *p == "..")
            {
                return Err(bad("points outside the checkpoint"));
            }
            let [prefix @ .., dir, file] = parts.as_slice() else {
                return Err(bad("names no session directory"));
            };
            if *file != METADATA {
                return Err(bad("does not name a metadata.json"));
            }
            // This checkpoint's own v1 path, or for a ULID a hex one (the reference's
            // hex→ULID re-stamp keeps the old paths); some reference versions wrote it twice
            // (`/f3/df91827bd6/f3/df91827bd6/0/metadata.json`), which still names `0/` here.
            let own = |a: &str, b: &str| {
                let named = format!("{a}{b}");
                named == id.as_str()
                    || (id.kind() == IdKind::Ulid
                        && a.len() == 2
                        && crate::base::id::kind_of(&named) == Some(IdKind::Hex))
            };
            let mut rest = prefix;
            while let [a, b, tail @ ..] = rest {
                if !own(a, b) {
                    break;
                }
                rest = tail;
            }
            if !rest.is_empty() {
                return Err(bad("points outside the checkpoint"));
            }
            (*dir).to_owned()
        };
        if !seen.insert(dir.clone()) {
            return Err(bad("names the same directory as an earlier entry"));
        }
        dirs.push(dir);
    }
    Ok(dirs)
}

/// The blob at `path` of `tree`, `None` when there is none; one over
/// [`Limits::blob_bytes`] is [`StoreError::OverLimit`], and is not read.
fn blob_at(
    repo: &Repository,
    tree: &Tree,
    id: &CheckpointId,
    path: &str,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, StoreError> {
    blob_id(tree, path)?
        .map(|oid| read_blob(repo, oid, id, path, limits))
        .transpose()
}

/// The id of the blob at `path` of `tree`, `None` when there is none.
fn blob_id(tree: &Tree, path: &str) -> Result<Option<Oid>, StoreError> {
    match tree.get_path(std::path::Path::new(path)) {
        Ok(e) if e.kind() == Some(ObjectType::Blob) => Ok(Some(e.id())),
        Ok(_) => Ok(None),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(git_err(format!("look up {path}"))(e)),
    }
}

/// The bytes of blob `oid` (`path` of checkpoint `id`); one over [`Limits::blob_bytes`] is
/// [`StoreError::OverLimit`], and is not inflated.
fn read_blob(
    repo: &Repository,
    oid: Oid,
    id: &CheckpointId,
    path: &str,
    limits: &Limits,
) -> Result<Vec<u8>, StoreError> {
    check_blob_size(blob_size(repo, oid, id, path)?, id, path, limits)?;
    let blob = repo
        .find_blob(oid)
        .map_err(|e| absent_or(e, id, path, oid, "read"))?;
    Ok(blob.content().to_vec())
}

/// The size of object `oid` (of `path` in checkpoint `id`), from its header: nothing is
/// inflated.
fn blob_size(
    repo: &Repository,
    oid: Oid,
    id: &CheckpointId,
    path: &str,
) -> Result<u64, StoreError> {
    let odb = repo.odb().map_err(git_err("open the object database"))?;
    odb.read_header(oid)
        .map(|(size, _)| size as u64)
        .map_err(|e| absent_or(e, id, path, oid, "read"))
}

/// [`StoreError::OverLimit`] when `size` bytes of `path` are more than a read may hold.
fn check_blob_size(
    size: u64,
    id: &CheckpointId,
    path: &str,
    limits: &Limits,
) -> Result<(), StoreError> {
    if size <= limits.blob_bytes {
        return Ok(());
    }
    Err(StoreError::OverLimit {
        id: id.clone(),
        what: path.to_owned(),
        size,
        unit: "bytes",
        max: limits.blob_bytes,
        setting: LIMIT_BLOB_BYTES,
    })
}

/// Bytes a tree object may take per entry [`Limits::tree_entries`] allows (a checkpoint's
/// entries have short names: slot numbers, file names, ID remainders), so that a tree far over
/// the limit is refused before it is parsed.
const TREE_BYTES_PER_ENTRY: u64 = 96;

/// The tree `oid` (`what` of checkpoint `id`): one with more entries than
/// [`Limits::tree_entries`] is [`StoreError::OverLimit`]; one whose object is much larger than
/// that allows is refused unparsed.
pub(crate) fn tree_within<'r>(
    repo: &'r Repository,
    oid: Oid,
    id: &CheckpointId,
    what: &str,
    limits: &Limits,
) -> Result<Tree<'r>, StoreError> {
    let over = |size: u64| StoreError::OverLimit {
        id: id.clone(),
        what: format!("tree {what}"),
        size,
        unit: "entries",
        max: limits.tree_entries as u64,
        setting: LIMIT_TREE_ENTRIES,
    };
    let bytes = blob_size(repo, oid, id, what)?;
    if bytes > (limits.tree_entries as u64).saturating_mul(TREE_BYTES_PER_ENTRY) {
        // At least this many entries: a short-named entry takes 28 bytes or more.
        return Err(over(bytes / 28));
    }
    let tree = repo
        .find_tree(oid)
        .map_err(git_err(format!("read tree {what}")))?;
    if tree.len() > limits.tree_entries {
        return Err(over(tree.len() as u64));
    }
    Ok(tree)
}

/// The subject of a checkpoint subtree ([`crate::model::documents::prompt_subject`]): from the
/// `prompt.txt` of the first of `dirs` that has one, "" when none has. Only for people: a prompt
/// that cannot be read, or is larger than [`SUBJECT_BLOB_MAX`], gives no subject, never an error.
pub(crate) fn subject(repo: &Repository, tree: &Tree, dirs: &[String]) -> String {
    let read = |dir: &String| -> Option<Vec<u8>> {
        let entry = tree
            .get_path(std::path::Path::new(&format!("{dir}/{PROMPT}")))
            .ok()?;
        if entry.kind() != Some(ObjectType::Blob) {
            return None;
        }
        let (size, _) = repo.odb().ok()?.read_header(entry.id()).ok()?;
        if size > SUBJECT_BLOB_MAX {
            return None;
        }
        Some(repo.find_blob(entry.id()).ok()?.content().to_vec())
    };
    dirs.iter()
        .find_map(read)
        .and_then(|p| crate::model::documents::prompt_subject(&p))
        .unwrap_or_default()
}

/// The largest `prompt.txt` read for a subject: listing must not read a huge blob a remote
/// planted to find one line.
const SUBJECT_BLOB_MAX: usize = 1 << 20;

/// [`StoreError::AbsentBlob`] when git could not find blob `oid` (of `path` in checkpoint `id`)
/// at all, as in a partial clone; else the git error.
fn absent_or(e: git2::Error, id: &CheckpointId, path: &str, oid: Oid, what: &str) -> StoreError {
    if e.code() == git2::ErrorCode::NotFound {
        StoreError::AbsentBlob {
            id: id.clone(),
            path: path.to_owned(),
            oid: oid.to_string(),
        }
    } else {
        git_err(format!("{what} {path}"))(e)
    }
}

fn subtree<'r>(
    repo: &'r Repository,
    tree: &Tree,
    id: &CheckpointId,
    path: &str,
    limits: &Limits,
) -> Result<Option<Tree<'r>>, StoreError> {
    match tree.get_path(std::path::Path::new(path)) {
        Ok(e) if e.kind() == Some(ObjectType::Tree) => {
            tree_within(repo, e.id(), id, path, limits).map(Some)
        }
        Ok(_) => Ok(None),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
        Err(e) => Err(git_err(format!("look up {path}"))(e)),
    }
}

/// Reads the summary and every listed session of a checkpoint subtree. `Ok(None)` when the
/// subtree has no root `metadata.json`.
pub(crate) fn read_documents(
    repo: &Repository,
    tree: &Tree,
    id: &CheckpointId,
    limits: &Limits,
) -> Result<Option<Documents>, StoreError> {
    let Some(bytes) = blob_at(repo, tree, id, METADATA, limits)? else {
        return Ok(None);
    };
    let summary = CheckpointSummary::from_json(&bytes).map_err(|source| StoreError::Corrupt {
        id: id.clone(),
        path: METADATA.to_owned(),
        source,
    })?;
    let mut dirs = session_dirs(&summary, id, limits)?;
    // An entry whose directory is not there is read from `<slot>/`, as the reference reads
    // every entry (when no other entry names that directory).
    let named: HashSet<String> = dirs.iter().cloned().collect();
    for (slot, dir) in dirs.iter_mut().enumerate() {
        let own = slot.to_string();
        if *dir != own
            && !named.contains(&own)
            && subtree(repo, tree, id, dir, limits)?.is_none()
            && subtree(repo, tree, id, &own, limits)?.is_some()
        {
            *dir = own;
        }
    }
    let mut sessions: Vec<SessionMetadata> = Vec::with_capacity(dirs.len());
    // Each distinct document is read and decoded once: sessions may share one (many entries
    // naming copies of one directory cost one read, not one each).
    let mut decoded: std::collections::HashMap<Oid, usize> = std::collections::HashMap::new();
    for (slot, dir) in dirs.iter().enumerate() {
        let path = format!("{dir}/{METADATA}");
        let oid = blob_id(tree, &path)?.ok_or_else(|| StoreError::MissingSession {
            id: id.clone(),
            slot,
            dir: dir.clone(),
        })?;
        let session = match decoded.get(&oid) {
            Some(&earlier) => sessions[earlier].clone(),
            None => {
                decoded.insert(oid, slot);
                decode_session(&read_blob(repo, oid, id, &path, limits)?, id, path)?
            }
        };
        sessions.push(session);
    }
    let unlisted = unlisted_sessions(repo, tree, id, &dirs, limits);
    Ok(Some(Documents {
        summary,
        sessions,
        dirs,
        unlisted,
    }))
}

impl Documents {
    /// The summary, every session (listed, then unlisted) with its directory, and how many of
    /// them `sessions[]` lists: what a [`crate::store::Checkpoint`] holds.
    pub(crate) fn into_read(self) -> (CheckpointSummary, Vec<SessionMetadata>, Vec<String>, usize) {
        let listed = self.sessions.len();
        let (mut sessions, mut dirs) = (self.sessions, self.dirs);
        for (dir, meta) in self.unlisted {
            dirs.push(dir);
            sessions.push(meta);
        }
        (self.summary, sessions, dirs, listed)
    }
}

/// The numbered session directories of `tree` that `dirs` does not name and that hold a
/// readable `metadata.json`, in numeric order. One that cannot be read is left out (and logged):
/// it is listed nowhere, and must not stop the listed sessions from being read.
fn unlisted_sessions(
    repo: &Repository,
    tree: &Tree,
    id: &CheckpointId,
    dirs: &[String],
    limits: &Limits,
) -> Vec<(String, SessionMetadata)> {
    let listed: HashSet<&str> = dirs.iter().map(String::as_str).collect();
    let mut found: Vec<(u64, String)> = tree
        .iter()
        .filter(|e| e.kind() == Some(ObjectType::Tree))
        .filter_map(|e| e.name().ok().map(str::to_owned))
        .filter(|n| !listed.contains(n.as_str()))
        .filter_map(|n| Some((n.parse::<u64>().ok()?, n)))
        .filter(|(_, n)| n.bytes().all(|b| b.is_ascii_digit()))
        .collect();
    found.sort();
    // Listed and unlisted together stay within the cap on sessions.
    found.truncate(limits.sessions_per_checkpoint.saturating_sub(dirs.len()));
    found
        .into_iter()
        .filter_map(
            |(_, dir)| match read_session(repo, tree, id, &dir, limits) {
                Ok(Some(meta)) => Some((dir, meta)),
                Ok(None) => None,
                Err(e) => {
                    log::info!("checkpoint {id}: unlisted session {dir}/ is unreadable: {e}");
                    None
                }
            },
        )
        .collect()
}

fn read_session(
    repo: &Repository,
    tree: &Tree,
    id: &CheckpointId,
    dir: &str,
    limits: &Limits,
) -> Result<Option<SessionMetadata>, StoreError> {
    let path = format!("{dir}/{METADATA}");
    let Some(bytes) = blob_at(repo, tree, id, &path, limits)? else {
        return Ok(None);
    };
    decode_session(&bytes, id, path).map(Some)
}

fn decode_session(
    bytes: &[u8],
    id: &CheckpointId,
    path: String,
) -> Result<SessionMetadata, StoreError> {
    SessionMetadata::from_json(bytes).map_err(|source| StoreError::Corrupt {
        id: id.clone(),
        path,
        source,
    })
}

/// The files of one checkpoint subtree, read through the tree opened once
/// ([`CheckpointFiles`]): what both git stores serve their files with.
pub(crate) struct TreeFiles<'r> {
    repo: &'r Repository,
    tree: Tree<'r>,
    id: CheckpointId,
    limits: Limits,
    /// Small blobs already read, by id: sessions may share documents, and `show` reads every
    /// session's (at most [`CACHED_BYTES`] in all).
    cache: std::cell::RefCell<BlobCache>,
}

/// Blobs read, by id, and how many bytes they hold in all.
type BlobCache = (usize, std::collections::HashMap<Oid, std::rc::Rc<[u8]>>);

/// The most bytes [`TreeFiles`] keeps of blobs it read, each at most [`CACHED_BLOB`].
const CACHED_BYTES: usize = 32 << 20;
/// See [`CACHED_BYTES`].
const CACHED_BLOB: usize = 64 << 10;

impl<'r> TreeFiles<'r> {
    /// The files of the checkpoint `id` whose subtree is `tree` in `repo`.
    pub(crate) fn new(
        repo: &'r Repository,
        tree: Tree<'r>,
        id: &CheckpointId,
        limits: Limits,
    ) -> Self {
        TreeFiles {
            repo,
            tree,
            id: id.clone(),
            limits,
            cache: Default::default(),
        }
    }

    fn not_found(&self, path: &str) -> StoreError {
        StoreError::FileNotFound {
            id: self.id.clone(),
            path: path.to_owned(),
        }
    }

    /// The chunks of the transcript at `path` (`<slot>/full.jsonl`), in order, with their
    /// sizes; `None` when `path` is no transcript, or its slot holds none.
    fn chunks(&self, path: &str) -> Result<Option<Vec<(Oid, u64)>>, StoreError> {
        let Some((slot, name)) = path.rsplit_once('/') else {
            return Ok(None);
        };
        if name != transcript::TRANSCRIPT_FILE {
            return Ok(None);
        }
        let Some(slot_tree) = subtree(self.repo, &self.tree, &self.id, slot, &self.limits)? else {
            return Ok(None);
        };
        transcript_chunks(self.repo, &slot_tree, &self.id, path)
    }
}

/// The chunks of the transcript of `slot`, in order, with their sizes; `None` without one.
fn transcript_chunks(
    repo: &Repository,
    slot: &Tree,
    id: &CheckpointId,
    path: &str,
) -> Result<Option<Vec<(Oid, u64)>>, StoreError> {
    file_chunks(repo, slot, id, path, transcript::TRANSCRIPT_FILE)
}

/// The chunks of the file of `slot` whose chunk 0 is named `base` (`base.001`, ... follow), in
/// order, with their sizes (`path` names the file in errors); `None` without chunk 0. A chunk
/// missing from the middle of the sequence is [`StoreError::ChunkGap`]: joining around it
/// would hand out a transcript with a hole.
fn file_chunks(
    repo: &Repository,
    slot: &Tree,
    id: &CheckpointId,
    path: &str,
    base: &str,
) -> Result<Option<Vec<(Oid, u64)>>, StoreError> {
    let mut chunks: Vec<(usize, Oid)> = slot
        .iter()
        .filter_map(|e| {
            let n = transcript::chunk_index_of(base, e.name().ok()?)?;
            (e.kind() == Some(ObjectType::Blob)).then_some((n, e.id()))
        })
        .collect();
    if !chunks.iter().any(|(n, _)| *n == 0) {
        return Ok(None);
    }
    chunks.sort_unstable_by_key(|(n, _)| *n);
    if let Some(missing) = (0..)
        .zip(&chunks)
        .find(|(i, (n, _))| i != n)
        .map(|(i, _)| i)
    {
        return Err(StoreError::ChunkGap {
            id: id.clone(),
            path: path.to_owned(),
            missing: format!("{base}.{missing:03}"),
        });
    }
    chunks
        .into_iter()
        .map(|(_, oid)| Ok((oid, blob_size(repo, oid, id, path)?)))
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

/// The file of a session slot tree whose chunk 0 is named `base`, its chunks joined as
/// transcripts are (`path` names it in errors; over `limits`, [`StoreError::OverLimit`]);
/// `None` when there is no chunk 0.
pub(crate) fn read_chunks(
    repo: &Repository,
    slot: &Tree,
    id: &CheckpointId,
    path: &str,
    base: &str,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, StoreError> {
    let Some(chunks) = file_chunks(repo, slot, id, path, base)? else {
        return Ok(None);
    };
    let total = chunks.iter().map(|(_, size)| size).sum::<u64>() + chunks.len() as u64 - 1;
    check_blob_size(total, id, path, limits)?;
    let mut parts = Vec::with_capacity(chunks.len());
    for (oid, _) in chunks {
        let blob = repo
            .find_blob(oid)
            .map_err(|e| absent_or(e, id, path, oid, "read a transcript chunk of"))?;
        parts.push(blob.content().to_vec());
    }
    Ok(Some(transcript::join(&parts)))
}

/// The blob `name` of a session slot tree (`path` names it in errors), `None` when absent.
pub(crate) fn read_blob_in(
    repo: &Repository,
    slot: &Tree,
    id: &CheckpointId,
    path: &str,
    name: &str,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, StoreError> {
    match slot.get_name(name) {
        Some(e) if e.kind() == Some(ObjectType::Blob) => {
            read_blob(repo, e.id(), id, path, limits).map(Some)
        }
        _ => Ok(None),
    }
}

impl CheckpointFiles for TreeFiles<'_> {
    fn read(&self, path: &str) -> Result<Vec<u8>, StoreError> {
        let clean = path.trim_start_matches('/');
        let Some(chunks) = self.chunks(clean)? else {
            let oid = blob_id(&self.tree, clean)?.ok_or_else(|| self.not_found(path))?;
            if let Some(bytes) = self.cache.borrow().1.get(&oid) {
                return Ok(bytes.to_vec());
            }
            let bytes = read_blob(self.repo, oid, &self.id, clean, &self.limits)?;
            let (held, cache) = &mut *self.cache.borrow_mut();
            if bytes.len() <= CACHED_BLOB && *held + bytes.len() <= CACHED_BYTES {
                *held += bytes.len();
                cache.insert(oid, bytes.as_slice().into());
            }
            return Ok(bytes);
        };
        let total = chunks.iter().map(|(_, size)| size).sum::<u64>() + chunks.len() as u64 - 1;
        check_blob_size(total, &self.id, clean, &self.limits)?;
        let mut parts = Vec::with_capacity(chunks.len());
        for (oid, _) in chunks {
            let blob = self
                .repo
                .find_blob(oid)
                .map_err(|e| absent_or(e, &self.id, clean, oid, "read a transcript chunk of"))?;
            parts.push(blob.content().to_vec());
        }
        Ok(transcript::join(&parts))
    }

    fn stream(&self, path: &str) -> Result<Box<dyn Read + '_>, StoreError> {
        let clean = path.trim_start_matches('/');
        let chunks = match self.chunks(clean)? {
            Some(chunks) => chunks,
            None => {
                let entry = self
                    .tree
                    .get_path(std::path::Path::new(clean))
                    .ok()
                    .filter(|e| e.kind() == Some(ObjectType::Blob))
                    .ok_or_else(|| self.not_found(path))?;
                vec![(
                    entry.id(),
                    blob_size(self.repo, entry.id(), &self.id, clean)?,
                )]
            }
        };
        let mut out: Box<dyn Read + '_> = Box::new(std::io::empty());
        for (n, (oid, size)) in chunks.into_iter().enumerate() {
            if n > 0 {
                out = Box::new(out.chain(&b"\n"[..]));
            }
            out = Box::new(out.chain(BlobReader::new(self.repo, oid, size)));
        }
        Ok(out)
    }
}

/// Blobs up to this size are read whole through libgit2; larger ones are streamed from
/// `git cat-file`, so memory stays bounded whatever their size.
const STREAM_FROM: u64 = 8 << 20;

/// The bytes of one blob, opened on the first read: small ones read whole, large ones streamed.
struct BlobReader<'r> {
    repo: &'r Repository,
    oid: Oid,
    size: u64,
    open: Option<Box<dyn Read + 'r>>,
}

impl<'r> BlobReader<'r> {
    fn new(repo: &'r Repository, oid: Oid, size: u64) -> Self {
        BlobReader {
            repo,
            oid,
            size,
            open: None,
        }
    }

    fn open(&self) -> std::io::Result<Box<dyn Read + 'r>> {
        if self.size <= STREAM_FROM {
            let blob = self
                .repo
                .find_blob(self.oid)
                .map_err(std::io::Error::other)?;
            return Ok(Box::new(std::io::Cursor::new(blob.content().to_vec())));
        }
        crate::git::objects::stream_blob(self.repo.path(), &self.oid.to_string())
            .map(|s| Box::new(s) as Box<dyn Read + 'r>)
            .map_err(std::io::Error::other)
    }
}

impl Read for BlobReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.open.is_none() {
            self.open = Some(self.open()?);
        }
        self.open.as_mut().expect("opened above").read(buf)
    }
}

/// Writes `data` as a blob. Through the object database's write, which hashes the data first
/// and writes nothing when the object is already there (a mirror in the same repository, a
/// transcript written again), rather than `Repository::blob`, whose stream compresses and
/// writes every byte before it knows the ID.
fn write_blob(repo: &Repository, data: &[u8]) -> Result<Oid, StoreError> {
    repo.odb()
        .and_then(|odb| odb.write(ObjectType::Blob, data))
        .map_err(git_err("write blob"))
}

/// Normalises paths to `/` and drops duplicates, keeping first-seen order.
fn dedup_paths(paths: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    paths
        .iter()
        .map(|p| p.replace('\\', "/"))
        .filter(|p| !p.is_empty() && seen.insert(p.clone()))
        .collect()
}

/// Who the summary's writer-owned fields come from: a session write sets them, a backfill keeps
/// the previous summary's.
pub(crate) struct Writer<'a> {
    strategy: &'a str,
    branch: &'a str,
    commit_sha: &'a str,
}

/// Recomputes the root summary from all sessions (docs/format.md, "Session slots and the root
/// summary"). Unknown keys and the sticky fields of the previous summary are kept.
pub(crate) fn recompute_summary(
    prev: Option<&CheckpointSummary>,
    id: &CheckpointId,
    sessions: &[SessionMetadata],
    entries: Vec<SessionFilePaths>,
    writer: Option<Writer<'_>>,
) -> CheckpointSummary {
    let mut s = prev.cloned().unwrap_or_default();
    s.cli_version = CLI_VERSION.to_owned();
    s.checkpoint_id = id.to_string();
    if let Some(w) = writer {
        s.strategy = w.strategy.to_owned();
        s.branch = w.branch.to_owned();
        if !w.commit_sha.is_empty() {
            s.commit_sha = w.commit_sha.to_owned();
        }
    }
    s.checkpoints_count = sessions.iter().map(|m| m.checkpoints_count).sum();
    let mut files: Vec<String> = sessions
        .iter()
        .flat_map(|m| m.files_touched.iter().map(|f| f.replace('\\', "/")))
        .collect();
    files.sort();
    files.dedup();
    s.files_touched = files;
    s.sessions = entries;
    let mut usage: Option<TokenUsage> = None;
    for m in sessions {
        if let Some(u) = &m.token_usage {
            usage.get_or_insert_with(Default::default).add(u);
        }
    }
    s.token_usage = usage;
    s.has_review |= sessions.iter().any(|m| m.kind == "agent_review");
    s.has_investigation |= sessions.iter().any(|m| m.kind == "agent_investigate");
    s.imported |= sessions.iter().any(|m| m.kind == "imported");
    // The legacy format marker is not part of the baseline format; migration deletes it.
    s
}

/// The `sessions[]` entry of a session directory, derived from which files its tree holds.
pub(crate) fn entry_paths_of(slot_tree: &Tree, prefix: &str, dir: &str) -> SessionFilePaths {
    let has = |name: &str| slot_tree.get_name(name).is_some();
    let mut e = entry_paths(prefix, dir, has(transcript::TRANSCRIPT_FILE), has(PROMPT));
    if has(COMPACT_TRANSCRIPT) {
        e.compact_transcript = format!("{prefix}/{dir}/{COMPACT_TRANSCRIPT}");
    }
    e
}

fn entry_paths(
    prefix: &str,
    dir: &str,
    has_transcript: bool,
    has_prompt: bool,
) -> SessionFilePaths {
    let p = |name: &str| format!("{prefix}/{dir}/{name}");
    SessionFilePaths {
        metadata: p(METADATA),
        transcript: if has_transcript {
            p(transcript::TRANSCRIPT_FILE)
        } else {
            String::new()
        },
        compact_transcript: String::new(),
        content_hash: if has_transcript {
            p(CONTENT_HASH)
        } else {
            String::new()
        },
        prompt: if has_prompt { p(PROMPT) } else { String::new() },
        assets_manifest: String::new(),
        extra: Default::default(),
    }
}

/// Inserts the chunks of transcript `data` and its content hash `hash`
/// ([`transcript::content_hash`] of `data`, computed once by the caller).
fn insert_transcript(
    repo: &Repository,
    builder: &mut git2::TreeBuilder<'_>,
    id: &CheckpointId,
    data: &[u8],
    hash: &str,
) -> Result<(), StoreError> {
    let chunks = transcript::split(data, transcript::MAX_CHUNK_SIZE).map_err(|source| {
        StoreError::Transcript {
            id: id.clone(),
            source,
        }
    })?;
    for (n, chunk) in chunks.iter().enumerate() {
        insert_blob(repo, builder, &transcript::chunk_name(n), chunk)?;
    }
    insert_blob(repo, builder, CONTENT_HASH, hash.as_bytes())
}

pub(crate) fn insert_blob(
    repo: &Repository,
    builder: &mut git2::TreeBuilder<'_>,
    name: &str,
    data: &[u8],
) -> Result<(), StoreError> {
    let oid = write_blob(repo, data)?;
    builder
        .insert(name, oid, MODE_BLOB)
        .map(|_| ())
        .map_err(git_err(format!("insert {name}")))
}

/// Writes the root tree: the base subtree's entries with `metadata.json` and the given session
/// directories replaced.
fn write_root(
    repo: &Repository,
    base: Option<&Tree>,
    summary: &CheckpointSummary,
    slots: &[(&str, Oid)],
) -> Result<Oid, StoreError> {
    let mut root = repo
        .treebuilder(base)
        .map_err(git_err("start checkpoint tree"))?;
    insert_blob(repo, &mut root, METADATA, &summary.to_json())?;
    for (dir, oid) in slots {
        root.insert(dir, *oid, MODE_TREE)
            .map_err(git_err("insert session slot"))?;
    }
    root.write().map_err(git_err("write checkpoint tree"))
}

/// The commit message of a session write (docs/format.md, "Commit messages").
fn session_message(w: &SessionWrite) -> String {
    let mut m = format!("Checkpoint: {}\n\n", w.checkpoint_id);
    if let Some(subject) = w
        .commit_subject
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        m.push_str(subject);
        m.push_str("\n\n");
    }
    m.push_str(&format!("Entire-Session: {}\n", w.session_id));
    m.push_str(&format!("Entire-Strategy: {}\n", w.strategy));
    if !w.agent.is_empty() {
        m.push_str(&format!("Entire-Agent: {}\n", w.agent));
    }
    m
}

/// Builds the subtree for a session write on top of `base` (the checkpoint's current subtree,
/// `None` for a new checkpoint). `prefix` is the summary path prefix (`""` or `/ab/cdef...`).
pub(crate) fn build_session(
    repo: &Repository,
    base: Option<&Tree>,
    prefix: &str,
    w: &SessionWrite,
    limits: &Limits,
) -> Result<Change, StoreError> {
    let id = &w.checkpoint_id;
    let docs = match base {
        Some(tree) => read_documents(repo, tree, id, limits)?,
        None => None,
    };
    if let (Some(tree), None) = (base, &docs) {
        if !tree.is_empty() && read_session(repo, tree, id, "0", limits)?.is_none() {
            return Err(StoreError::Corrupt {
                id: id.clone(),
                path: METADATA.to_owned(),
                source: crate::model::documents::ModelError::Json {
                    what: "root metadata.json",
                    source: serde::de::Error::custom(
                        "existing checkpoint tree has no root metadata",
                    ),
                },
            });
        }
    }
    let (prev_summary, mut sessions, dirs) = match docs {
        Some(d) => (Some(d.summary), d.sessions, d.dirs),
        None => (None, Vec::new(), Vec::new()),
    };
    let slot = sessions
        .iter()
        .position(|s| s.session_id == w.session_id.as_str())
        .unwrap_or(sessions.len());
    let dir = match dirs.get(slot) {
        Some(d) => d.clone(),
        None => free_dir(base, &dirs),
    };
    if slot == 0 {
        if let Some(tree) = base {
            if let Some(existing) = read_session(repo, tree, id, &dir, limits)? {
                if existing.session_id != w.session_id.as_str() {
                    return Err(StoreError::SlotConflict {
                        id: id.clone(),
                        existing: existing.session_id,
                        incoming: w.session_id.to_string(),
                        tree: tree.id().to_string(),
                    });
                }
            }
        }
    }

    let mut slot_tree = repo
        .treebuilder(None)
        .map_err(git_err("start session tree"))?;
    if let Some(data) = &w.transcript {
        insert_transcript(
            repo,
            &mut slot_tree,
            id,
            data,
            &w.transcript_hash
                .clone()
                .unwrap_or_else(|| transcript::content_hash(data)),
        )?;
    }
    if !w.prompts.is_empty() {
        insert_blob(
            repo,
            &mut slot_tree,
            PROMPT,
            w.prompts.join(PROMPT_SEPARATOR).as_bytes(),
        )?;
    }
    let previous = sessions.get(slot);
    let meta = SessionMetadata {
        cli_version: CLI_VERSION.to_owned(),
        checkpoint_id: id.to_string(),
        session_id: w.session_id.to_string(),
        strategy: w.strategy.clone(),
        created_at: w.created_at.clone(),
        branch: w.branch.clone(),
        commit_sha: w.commit_sha.clone(),
        checkpoints_count: w.checkpoints_count,
        files_touched: dedup_paths(&w.files_touched),
        agent: w.agent.clone(),
        model: w.model.clone(),
        checkpoint_transcript_start: w.checkpoint_transcript_start,
        transcript_lines_at_start: w.checkpoint_transcript_start,
        token_usage: w.token_usage.clone(),
        extra: previous.map(|p| p.extra.clone()).unwrap_or_default(),
        ..Default::default()
    };
    let mut meta = meta;
    if w.redactions > 0 {
        meta.extra
            .insert(REDACTIONS_KEY.to_owned(), w.redactions.into());
    } else {
        meta.extra.shift_remove(REDACTIONS_KEY);
    }
    insert_blob(repo, &mut slot_tree, METADATA, &meta.to_json())?;
    let slot_oid = slot_tree.write().map_err(git_err("write session tree"))?;

    if slot == sessions.len() {
        sessions.push(meta);
    } else {
        sessions[slot] = meta;
    }
    let mut entries = prev_summary
        .as_ref()
        .map(|s| s.sessions.clone())
        .unwrap_or_default();
    let mut entry = entry_paths(prefix, &dir, w.transcript.is_some(), !w.prompts.is_empty());
    if let Some(old) = entries.get(slot) {
        entry.extra = old.extra.clone();
    }
    if slot < entries.len() {
        entries[slot] = entry;
    } else {
        entries.push(entry);
    }
    let summary = recompute_summary(
        prev_summary.as_ref(),
        id,
        &sessions,
        entries,
        Some(Writer {
            strategy: &w.strategy,
            branch: &w.branch,
            commit_sha: &w.commit_sha,
        }),
    );
    let tree = write_root(repo, base, &summary, &[(&dir, slot_oid)])?;
    Ok(Change {
        tree,
        message: session_message(w),
    })
}

/// The directory a new session goes to: the first number from the count of entries up that no
/// entry names and the tree does not hold (so a slot gap never leads to overwriting a live or an
/// orphaned directory).
fn free_dir(base: Option<&Tree>, dirs: &[String]) -> String {
    let named: HashSet<&str> = dirs.iter().map(String::as_str).collect();
    (dirs.len()..)
        .map(|n| n.to_string())
        .find(|n| !named.contains(n.as_str()) && base.is_none_or(|t| t.get_name(n).is_none()))
        .expect("an unbounded range has a free number")
}

/// The tree of session `slot`, which lives in `dirs[slot]`.
fn session_tree<'r>(
    repo: &'r Repository,
    tree: &Tree,
    id: &CheckpointId,
    dirs: &[String],
    slot: usize,
    limits: &Limits,
) -> Result<Tree<'r>, StoreError> {
    let dir = &dirs[slot];
    subtree(repo, tree, id, dir, limits)?.ok_or_else(|| StoreError::MissingSession {
        id: id.clone(),
        slot,
        dir: dir.clone(),
    })
}

/// How a backfill picks its session slot.
pub(crate) enum SlotTarget<'a> {
    /// The slot holding this session; falls back to the latest when `fallback_latest`.
    Session { id: &'a str, fallback_latest: bool },
    /// The latest slot.
    Latest,
}

fn pick_slot(
    id: &CheckpointId,
    sessions: &[SessionMetadata],
    target: &SlotTarget<'_>,
) -> Result<usize, StoreError> {
    let latest = sessions
        .len()
        .checked_sub(1)
        .ok_or(StoreError::NotFound { id: id.clone() })?;
    match target {
        SlotTarget::Latest => Ok(latest),
        SlotTarget::Session {
            id: sid,
            fallback_latest,
        } => match sessions.iter().position(|s| s.session_id == *sid) {
            Some(i) => Ok(i),
            None if *fallback_latest => Ok(latest),
            None => Err(StoreError::SessionNotFound {
                id: id.clone(),
                session: (*sid).to_owned(),
            }),
        },
    }
}

/// Builds the subtree for a backfill. `Ok(None)` when the backfill changes nothing (same
/// transcript hash and no new prompts). [`StoreError::NotFound`] when `base` is `None` or holds
/// no session. `target` is the slot choice for transcript and summary backfills; the caller pins
/// it to a session ID across retries.
pub(crate) fn build_backfill(
    repo: &Repository,
    base: Option<&Tree>,
    prefix: &str,
    b: &Backfill,
    target: &SlotTarget<'_>,
    limits: &Limits,
) -> Result<Option<(Change, String)>, StoreError> {
    let id = b.id();
    let not_found = || StoreError::NotFound { id: id.clone() };
    let tree = base.ok_or_else(not_found)?;
    let docs = read_documents(repo, tree, id, limits)?.ok_or_else(not_found)?;
    if docs.sessions.is_empty() {
        return Err(not_found());
    }
    let Documents {
        summary: prev,
        mut sessions,
        dirs,
        ..
    } = docs;
    match b {
        Backfill::Attribution { attribution, .. } => {
            let mut summary =
                recompute_summary(Some(&prev), id, &sessions, prev.sessions.clone(), None);
            summary.combined_attribution = Some(attribution.clone());
            let tree = write_root(repo, Some(tree), &summary, &[])?;
            let message = format!("Update checkpoint summary for {id}\n");
            Ok(Some((Change { tree, message }, String::new())))
        }
        Backfill::Summary { summary: value, .. } => {
            let slot = pick_slot(id, &sessions, target)?;
            let dir = dirs[slot].as_str();
            let slot_tree = session_tree(repo, tree, id, &dirs, slot, limits)?;
            sessions[slot].summary = Some(value.clone());
            let mut builder = repo
                .treebuilder(Some(&slot_tree))
                .map_err(git_err("start session tree"))?;
            insert_blob(repo, &mut builder, METADATA, &sessions[slot].to_json())?;
            let slot_oid = builder.write().map_err(git_err("write session tree"))?;
            let summary =
                recompute_summary(Some(&prev), id, &sessions, prev.sessions.clone(), None);
            let tree = write_root(repo, Some(tree), &summary, &[(dir, slot_oid)])?;
            let sid = sessions[slot].session_id.clone();
            let message = format!("Update summary for checkpoint {id} (session: {sid})\n");
            Ok(Some((Change { tree, message }, sid)))
        }
        Backfill::Transcript {
            transcript: data,
            prompts,
            ..
        } => {
            let slot = pick_slot(id, &sessions, target)?;
            let dir = dirs[slot].as_str();
            let slot_tree = session_tree(repo, tree, id, &dirs, slot, limits)?;
            let hash = transcript::content_hash(data);
            let same_transcript = blob_at(repo, &slot_tree, id, CONTENT_HASH, limits)?.as_deref()
                == Some(hash.as_bytes());
            let joined = prompts.join(PROMPT_SEPARATOR);
            let prompts_change = !prompts.is_empty()
                && blob_at(repo, &slot_tree, id, PROMPT, limits)?.as_deref()
                    != Some(joined.as_bytes());
            let sid = sessions[slot].session_id.clone();
            if same_transcript && !prompts_change {
                return Ok(None);
            }
            let mut builder = repo
                .treebuilder(Some(&slot_tree))
                .map_err(git_err("start session tree"))?;
            let stale: Vec<String> = slot_tree
                .iter()
                .filter_map(|e| e.name().ok().map(str::to_owned))
                .filter(|n| transcript::chunk_index(n).is_some() || n == COMPACT_TRANSCRIPT)
                .collect();
            if !same_transcript {
                for name in &stale {
                    builder
                        .remove(name)
                        .map_err(git_err("remove old transcript"))?;
                }
                insert_transcript(repo, &mut builder, id, data, &hash)?;
                // We do not derive compact transcripts; a replaced transcript must not keep a
                // stale one (docs/format.md, "One checkpoint").
                sessions[slot].compact_transcript_start = None;
            }
            if prompts_change {
                insert_blob(repo, &mut builder, PROMPT, joined.as_bytes())?;
            }
            insert_blob(repo, &mut builder, METADATA, &sessions[slot].to_json())?;
            let slot_oid = builder.write().map_err(git_err("write session tree"))?;
            let mut entries = prev.sessions.clone();
            if let Some(e) = entries.get_mut(slot) {
                let p = |name: &str| format!("{prefix}/{dir}/{name}");
                e.transcript = p(transcript::TRANSCRIPT_FILE);
                e.content_hash = p(CONTENT_HASH);
                if !same_transcript {
                    e.compact_transcript.clear();
                }
                if prompts_change {
                    e.prompt = p(PROMPT);
                }
            }
            let summary = recompute_summary(Some(&prev), id, &sessions, entries, None);
            let tree = write_root(repo, Some(tree), &summary, &[(dir, slot_oid)])?;
            let message = format!("Finalize transcript for Checkpoint: {id}\n");
            Ok(Some((Change { tree, message }, sid)))
        }
    }
}
