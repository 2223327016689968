//! Reading a checkpoint subtree back: the documents (the summary, the sessions `sessions[]`
//! lists and those it does not), each session's directory, the subject, and the files through the
//! tree opened once ([`TreeFiles`]: transcripts joined from their chunks or streamed), every read
//! within the caps of [`Limits`].

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::io::Read;
use std::sync::Arc;

use super::{METADATA, PROMPT};
use crate::base::id::{CheckpointId, IdKind};
use crate::config::settings::{
    Limits, LIMIT_BLOB_BYTES, LIMIT_DOCUMENT_BYTES, LIMIT_SESSIONS, LIMIT_TREE_ENTRIES,
};
use crate::git::objects::Oid;
use crate::git::objects::{ObjectKind, Objects, Tree};
use crate::git::repo::LibGitError;
use crate::model::documents::{CheckpointSummary, ModelError, SessionMetadata};
use crate::model::transcript;
use crate::store::{git_err, CheckpointFiles, StoreError};

/// The decoded documents of a checkpoint subtree.
pub(crate) struct Documents {
    pub summary: CheckpointSummary,
    /// The sessions `sessions[]` lists, in its order; entries naming one document share it.
    pub sessions: Vec<Arc<SessionMetadata>>,
    /// The directory of each session, in `sessions` order (see [`read_documents`]).
    pub dirs: Vec<String>,
    /// Session directories the tree holds that `sessions[]` does not list (numbered
    /// directories with a readable `metadata.json`), in numeric order: readers show them after
    /// the listed ones; writers leave them as they are.
    pub unlisted: Vec<(String, Arc<SessionMetadata>)>,
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
pub(super) fn blob_at(
    repo: Objects<'_>,
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
    match tree.get_path(path) {
        Ok(e) if e.kind() == Some(ObjectKind::Blob) => Ok(Some(e.id())),
        Ok(_) => Ok(None),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(git_err(format!("look up {path}"))(e)),
    }
}

/// The bytes of blob `oid` (`path` of checkpoint `id`); one over [`Limits::blob_bytes`] is
/// [`StoreError::OverLimit`], and is not inflated.
fn read_blob(
    repo: Objects<'_>,
    oid: Oid,
    id: &CheckpointId,
    path: &str,
    limits: &Limits,
) -> Result<Vec<u8>, StoreError> {
    let cap = (limits.blob_bytes, LIMIT_BLOB_BYTES);
    read_within(repo, oid, id, path, cap)
}

/// The bytes of blob `oid` (`path` of checkpoint `id`) when its header says it holds at most
/// `cap.0` bytes; else [`StoreError::OverLimit`] naming the setting `cap.1`, and nothing is
/// inflated.
fn read_within(
    repo: Objects<'_>,
    oid: Oid,
    id: &CheckpointId,
    path: &str,
    cap: (u64, &'static str),
) -> Result<Vec<u8>, StoreError> {
    check_size(blob_size(repo, oid, id, path)?, id, path, cap)?;
    repo.read_blob(oid)
        .map_err(|e| absent_or(e, id, path, oid, "read"))
}

/// The most documents [`parse_document`] remembers as unparsable in one process.
const UNPARSABLE_MAX: usize = 4096;

thread_local! {
    /// Documents found not to parse, by object ID, with which document and why: a blob's bytes
    /// never change, so one found corrupt is corrupt for the rest of the process whichever
    /// checkpoints name it. Hostile refs may all point at one costly document; it is inflated
    /// and parsed once per command, not once per ref.
    static UNPARSABLE: RefCell<HashMap<Oid, (&'static str, String)>> = RefCell::new(HashMap::new());
}

/// The JSON document `oid` (`path` of checkpoint `id`) read when within
/// [`Limits::document_bytes`] (else [`StoreError::OverLimit`], nothing inflated) and decoded with
/// `parse`; one that does not decode is
/// [`StoreError::Corrupt`], and is remembered so that it is neither read nor parsed again.
fn parse_document<T>(
    repo: Objects<'_>,
    oid: Oid,
    id: &CheckpointId,
    path: &str,
    limits: &Limits,
    parse: fn(&[u8]) -> Result<T, ModelError>,
) -> Result<T, StoreError> {
    let corrupt = |source| StoreError::Corrupt {
        id: id.clone(),
        path: path.to_owned(),
        source,
    };
    if let Some((what, message)) = UNPARSABLE.with(|m| m.borrow().get(&oid).cloned()) {
        let source = serde::de::Error::custom(message);
        return Err(corrupt(ModelError::Json { what, source }));
    }
    let cap = (limits.document_bytes, LIMIT_DOCUMENT_BYTES);
    let bytes = read_within(repo, oid, id, path, cap)?;
    parse(&bytes).map_err(|e| {
        if let ModelError::Json { what, source } = &e {
            UNPARSABLE.with(|m| {
                let mut m = m.borrow_mut();
                if m.len() < UNPARSABLE_MAX {
                    m.insert(oid, (what, source.to_string()));
                }
            });
        }
        corrupt(e)
    })
}

/// The size of object `oid` (of `path` in checkpoint `id`), from its header: nothing is
/// inflated.
fn blob_size(
    repo: Objects<'_>,
    oid: Oid,
    id: &CheckpointId,
    path: &str,
) -> Result<u64, StoreError> {
    repo.header(oid)
        .map(|(size, _)| size as u64)
        .map_err(|e| absent_or(e, id, path, oid, "read"))
}

/// [`StoreError::OverLimit`] when `size` bytes of `path` are more than a file read into memory
/// may hold ([`Limits::blob_bytes`]).
fn check_blob_size(
    size: u64,
    id: &CheckpointId,
    path: &str,
    limits: &Limits,
) -> Result<(), StoreError> {
    check_size(size, id, path, (limits.blob_bytes, LIMIT_BLOB_BYTES))
}

/// [`StoreError::OverLimit`] when `size` bytes of `path` are more than `cap.0`, the limit the
/// setting `cap.1` sets.
fn check_size(
    size: u64,
    id: &CheckpointId,
    path: &str,
    (max, setting): (u64, &'static str),
) -> Result<(), StoreError> {
    if size <= max {
        return Ok(());
    }
    Err(StoreError::OverLimit {
        id: id.clone(),
        what: path.to_owned(),
        size,
        unit: "bytes",
        max,
        setting,
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
    repo: Objects<'r>,
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
pub(crate) fn subject(repo: Objects<'_>, tree: &Tree, dirs: &[String]) -> String {
    let read = |dir: &String| -> Option<Vec<u8>> {
        let entry = tree.get_path(&format!("{dir}/{PROMPT}")).ok()?;
        if entry.kind() != Some(ObjectKind::Blob) {
            return None;
        }
        let (size, _) = repo.header(entry.id()).ok()?;
        if size > SUBJECT_BLOB_MAX {
            return None;
        }
        repo.read_blob(entry.id()).ok()
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
fn absent_or(e: LibGitError, id: &CheckpointId, path: &str, oid: Oid, what: &str) -> StoreError {
    if e.is_not_found() {
        StoreError::AbsentBlob {
            id: id.clone(),
            path: path.to_owned(),
            oid: oid.to_string(),
        }
    } else {
        git_err(format!("{what} {path}"))(e)
    }
}

pub(super) fn subtree<'r>(
    repo: Objects<'r>,
    tree: &Tree,
    id: &CheckpointId,
    path: &str,
    limits: &Limits,
) -> Result<Option<Tree<'r>>, StoreError> {
    match tree.get_path(path) {
        Ok(e) if e.kind() == Some(ObjectKind::Tree) => {
            tree_within(repo, e.id(), id, path, limits).map(Some)
        }
        Ok(_) => Ok(None),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(git_err(format!("look up {path}"))(e)),
    }
}

/// The root summary of the checkpoint tree `tree` alone (none of its sessions' documents);
/// `None` when it holds no `metadata.json`.
pub(crate) fn read_summary(
    repo: Objects<'_>,
    tree: &Tree,
    id: &CheckpointId,
    limits: &Limits,
) -> Result<Option<CheckpointSummary>, StoreError> {
    blob_id(tree, METADATA)?
        .map(|oid| {
            parse_document(
                repo,
                oid,
                id,
                METADATA,
                limits,
                CheckpointSummary::from_json,
            )
        })
        .transpose()
}

/// Reads the summary and every listed session of a checkpoint subtree. `Ok(None)` when the
/// subtree has no root `metadata.json`.
pub(crate) fn read_documents(
    repo: Objects<'_>,
    tree: &Tree,
    id: &CheckpointId,
    limits: &Limits,
) -> Result<Option<Documents>, StoreError> {
    let Some(summary) = read_summary(repo, tree, id, limits)? else {
        return Ok(None);
    };
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
    let mut sessions: Vec<Arc<SessionMetadata>> = Vec::with_capacity(dirs.len());
    // Each distinct document is read and decoded once, and held once: sessions may share one
    // (many entries naming copies of one directory cost one read and one copy in memory, not
    // one each).
    let mut decoded: HashMap<Oid, usize> = HashMap::new();
    for (slot, dir) in dirs.iter().enumerate() {
        let path = format!("{dir}/{METADATA}");
        let oid = blob_id(tree, &path)?.ok_or_else(|| StoreError::MissingSession {
            id: id.clone(),
            slot,
            dir: dir.clone(),
        })?;
        let session = match decoded.get(&oid) {
            Some(&earlier) => Arc::clone(&sessions[earlier]),
            None => {
                decoded.insert(oid, slot);
                let parse = SessionMetadata::from_json;
                Arc::new(parse_document(repo, oid, id, &path, limits, parse)?)
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
    pub(crate) fn into_read(
        self,
    ) -> (
        CheckpointSummary,
        Vec<Arc<SessionMetadata>>,
        Vec<String>,
        usize,
    ) {
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
    repo: Objects<'_>,
    tree: &Tree,
    id: &CheckpointId,
    dirs: &[String],
    limits: &Limits,
) -> Vec<(String, Arc<SessionMetadata>)> {
    let listed: HashSet<&str> = dirs.iter().map(String::as_str).collect();
    let mut found: Vec<(u64, String)> = tree
        .iter()
        .filter(|e| e.kind() == Some(ObjectKind::Tree))
        .filter_map(|e| e.name().map(str::to_owned))
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
                Ok(Some(meta)) => Some((dir, Arc::new(meta))),
                Ok(None) => None,
                Err(e) => {
                    log::info!("checkpoint {id}: unlisted session {dir}/ is unreadable: {e}");
                    None
                }
            },
        )
        .collect()
}

pub(super) fn read_session(
    repo: Objects<'_>,
    tree: &Tree,
    id: &CheckpointId,
    dir: &str,
    limits: &Limits,
) -> Result<Option<SessionMetadata>, StoreError> {
    let path = format!("{dir}/{METADATA}");
    let Some(oid) = blob_id(tree, &path)? else {
        return Ok(None);
    };
    parse_document(repo, oid, id, &path, limits, SessionMetadata::from_json).map(Some)
}

/// The files of one checkpoint subtree, read through the tree opened once
/// ([`CheckpointFiles`]): what both git stores serve their files with.
pub(crate) struct TreeFiles<'r> {
    repo: Objects<'r>,
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
        repo: Objects<'r>,
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
    repo: Objects<'_>,
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
    repo: Objects<'_>,
    slot: &Tree,
    id: &CheckpointId,
    path: &str,
    base: &str,
) -> Result<Option<Vec<(Oid, u64)>>, StoreError> {
    let mut chunks: Vec<(usize, Oid)> = slot
        .iter()
        .filter_map(|e| {
            let n = transcript::chunk_index_of(base, e.name()?)?;
            (e.kind() == Some(ObjectKind::Blob)).then_some((n, e.id()))
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
    repo: Objects<'_>,
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
            .read_blob(oid)
            .map_err(|e| absent_or(e, id, path, oid, "read a transcript chunk of"))?;
        parts.push(blob);
    }
    Ok(Some(transcript::join(&parts)))
}

/// The blob `name` of a session slot tree (`path` names it in errors), `None` when absent.
pub(crate) fn read_blob_in(
    repo: Objects<'_>,
    slot: &Tree,
    id: &CheckpointId,
    path: &str,
    name: &str,
    limits: &Limits,
) -> Result<Option<Vec<u8>>, StoreError> {
    match slot.get_name(name) {
        Some(e) if e.kind() == Some(ObjectKind::Blob) => {
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
                .read_blob(oid)
                .map_err(|e| absent_or(e, &self.id, clean, oid, "read a transcript chunk of"))?;
            parts.push(blob);
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
                    .get_path(clean)
                    .ok()
                    .filter(|e| e.kind() == Some(ObjectKind::Blob))
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
    repo: Objects<'r>,
    oid: Oid,
    size: u64,
    open: Option<Box<dyn Read + 'r>>,
}

impl<'r> BlobReader<'r> {
    fn new(repo: Objects<'r>, oid: Oid, size: u64) -> Self {
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
                .read_blob(self.oid)
                .map_err(std::io::Error::other)?;
            return Ok(Box::new(std::io::Cursor::new(blob)));
        }
        crate::git::objects::stream_blob(self.repo.git_dir(), &self.oid.to_string())
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
