//! The writes cache: what [`agents::extract`] found in each session transcript, kept
//! locally so that a repeated `blame` or `why` reads one small file per session instead of
//! inflating and scanning the transcript (docs/format.md, "The writes cache").
//!
//! Entries are made where a transcript passes anyway, so that the first `blame` after a
//! checkpoint arrives costs what the next does: when a session is written (from the transcript
//! in hand: [`WritesCache::remember_written`]), when checkpoints are fetched
//! ([`WritesCache::fill`], bounded by a byte budget), and by `blame` and `why` themselves for
//! what neither made.
//!
//! A cache, never the source of truth. An entry is named by a hash of the checkpoint's tree id
//! and the session's directory, so it is only ever found for exactly the transcript bytes it was
//! computed from (a tree id names its whole content). An entry of another
//! [`agents::EXTRACT_VERSION`], for another tree or directory, that does not parse, is
//! larger than [`MAX_BYTES`], or is a link or special file is ignored (and replaced). Entries
//! are written atomically (renamed into place, not flushed to disk: a torn entry fails to parse),
//! without a lock, and may be deleted at any time.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::agents::{self, AgentWrites};
use crate::base::fs::{read_cache_file, write_cache_file};
use crate::base::id::CheckpointId;
use crate::git::repo::RepoLocation;
use crate::model::transcript::TRANSCRIPT_FILE;
use crate::store::content::ContentReader;
use crate::store::{Checkpoint, CheckpointFiles, SessionWrite, StoreError};
use crate::topology::{Topology, TopologyError, WriteReport};

/// The cache's directory, in `<git common dir>/entire/`.
pub const CACHE_DIR: &str = "writes-cache";
/// The largest entry read or written; the writes of a larger one are extracted every time.
const MAX_BYTES: u64 = 16 << 20;

/// The most transcript bytes one fetch reads to fill the cache ([`WritesCache::fill`]): about
/// 0.1 s of inflating and extracting on this project's benchmark machine. What a larger fetch
/// brings beyond it is extracted by the first `blame` that needs it, as before.
pub const FETCH_FILL_BUDGET: u64 = 64 << 20;

/// The most checkpoints one fetch fills the cache for (each is read: its documents and tree);
/// a larger fetch (`--all` of a busy remote) leaves the rest to the first `blame`.
pub const FETCH_FILL_CHECKPOINTS: usize = 1000;

/// The file, in the cache's directory, naming the checkpoints (one ID a line) a fetch found with
/// an entry for every session: `entire-fetch --all` looks again only at the others
/// ([`WritesCache::not_known_complete`]), instead of reading every checkpoint here on each run.
const COMPLETE_FILE: &str = "complete";
/// The largest [`COMPLETE_FILE`] read: about 250,000 IDs.
const COMPLETE_MAX_BYTES: u64 = 8 << 20;

/// What [`WritesCache::fill`] did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Filled {
    /// Entries made (each written unless the cache directory cannot be).
    pub entries: usize,
    /// Transcript bytes read for them.
    pub bytes: u64,
    /// Whether the budget ran out before every session had an entry.
    pub stopped: bool,
}

/// Whose written lines a read of the cache parses ([`WritesCache::get`]). An entry holds the
/// lines of every file the session wrote; `blame` asks about one file (under the names it had),
/// and parsing every line of the others was most of its cost once the cache was warm.
#[derive(Debug, Clone, Copy)]
pub enum LinesOf<'a> {
    /// Every file's.
    All,
    /// Only those of the files [`agents::same_file`] finds to be one of these paths (relative
    /// to the top of the repository); the other writes are read with no lines.
    Files(&'a [String]),
}

impl LinesOf<'_> {
    /// Whether the lines written to `file` (as a tool call names it) are wanted.
    fn holds(self, file: &str) -> bool {
        match self {
            LinesOf::All => true,
            LinesOf::Files(paths) => paths.iter().any(|p| agents::same_file(file, p)),
        }
    }
}

/// One entry's header: borrowed when written (`Entry<&str>`), owned when read. The file is
/// the header's JSON, a newline, then the lines of every write, each ended by a newline, where
/// the header's [`Span`]s say: so a reader takes the lines of the files it asks about and skips
/// the others without reading them (JSON would have to be scanned to its end, escape by escape).
#[derive(Serialize, Deserialize)]
struct Entry<S> {
    version: u32,
    /// The checkpoint's tree (hex).
    tree: S,
    /// The session's directory in it.
    dir: S,
    writes: AgentWrites<Span>,
}

/// Where one write's lines are in the text after an entry's header: `.1` bytes from byte `.0`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
struct Span(usize, usize);

/// The writes cache of one repository.
pub struct WritesCache {
    dir: PathBuf,
}

impl WritesCache {
    /// The cache under `common_dir`.
    pub fn in_common_dir(common_dir: &Path) -> Self {
        WritesCache {
            dir: common_dir.join("entire").join(CACHE_DIR),
        }
    }

    /// The entry's file: named by a hash, so that nothing read from a checkpoint (the
    /// directory is) becomes part of a path.
    fn path(&self, tree: &str, dir: &str) -> PathBuf {
        let mut h = Sha256::new();
        h.update(tree.as_bytes());
        h.update([0]);
        h.update(dir.as_bytes());
        self.dir.join(data_encoding::HEXLOWER.encode(&h.finalize()))
    }

    /// The writes of the transcript of session directory `dir` of the checkpoint whose tree is
    /// `tree`, when cached by this version of the extractor; with the written lines of the
    /// files `lines` names only.
    pub fn get(&self, tree: &str, dir: &str, lines: LinesOf<'_>) -> Option<AgentWrites> {
        let path = self.path(tree, dir);
        let bytes = match read_cache_file(&path, MAX_BYTES) {
            Ok(b) => b?,
            Err(e) => {
                log::info!("ignoring the writes cache entry {}: {e}", path.display());
                return None;
            }
        };
        let header_end = memchr::memchr(b'\n', &bytes)?;
        let entry: Entry<String> = serde_json::from_slice(&bytes[..header_end]).ok()?;
        if entry.version != agents::EXTRACT_VERSION || entry.tree != tree || entry.dir != dir {
            return None;
        }
        let text = &bytes[header_end + 1..];
        let writes = entry.writes.map_lines(|file, &Span(at, len)| {
            if !lines.holds(file) {
                return Ok(Vec::new());
            }
            let span = at.checked_add(len).and_then(|end| text.get(at..end));
            match span.map(std::str::from_utf8) {
                Some(Ok(span)) => Ok(span.split_terminator('\n').map(str::to_owned).collect()),
                _ => Err(()),
            }
        });
        writes.ok()
    }

    /// The writes of the transcript of the session in directory `dir` of `cp`: cached, else
    /// read through `files` (the checkpoint's, opened once for all its sessions) and extracted
    /// (then cached). `Ok(None)` when no transcript is stored.
    pub fn session_writes(
        &self,
        files: &dyn CheckpointFiles,
        cp: &Checkpoint,
        dir: &str,
    ) -> Result<Option<AgentWrites>, StoreError> {
        if let Some(writes) = self.get(&cp.tree, dir, LinesOf::All) {
            return Ok(Some(writes));
        }
        let bytes = match files.read(&format!("{dir}/{TRANSCRIPT_FILE}")) {
            Ok(bytes) => bytes,
            Err(StoreError::FileNotFound { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        let writes = agents::extract(&bytes);
        self.put(&cp.tree, dir, &writes);
        Ok(Some(writes))
    }

    /// Makes the entries of the sessions just written to checkpoint `id`, each
    /// `(session ID, file writes)`, read from the transcript as written (redacted, the bytes a
    /// reader gets; [`Topology::write_session_beside`]). Called once
    /// after every session of one write is written, since each write changes the checkpoint's
    /// tree, which names the entries. Best effort, like [`WritesCache::put`]: a checkpoint that
    /// cannot be read back leaves the entries to the first `blame`. Other sessions of the
    /// checkpoint, written before, lose their entries (the tree changed) until `blame` or a
    /// fetch makes them again.
    pub fn remember_written(
        &self,
        topo: &Topology<'_>,
        id: &CheckpointId,
        written: &[(String, AgentWrites)],
    ) {
        if written.is_empty() {
            return;
        }
        let Some(cp) = read_logged(topo, id) else {
            return;
        };
        for (session_id, writes) in written {
            if let Some(slot) = cp.sessions.iter().position(|s| s.session_id == *session_id) {
                self.put(&cp.tree, &cp.session_dirs[slot], writes);
            }
        }
    }

    /// Writes the session `w` through `topo` and makes the entry of the session it wrote: its
    /// writes read from the transcript as stored (redacted) on a second thread while the stores
    /// write it ([`Topology::write_session_beside`]), the entry named by where the write says it
    /// put the session, so nothing is read back. The entry is best effort, like
    /// [`WritesCache::put`].
    pub fn write_session(
        &self,
        topo: &Topology<'_>,
        w: SessionWrite,
    ) -> Result<WriteReport, TopologyError> {
        let (report, writes) = topo.write_session_beside(w, agents::extract)?;
        if let (Some(writes), Some(session)) = (writes, &report.outcome.session) {
            self.put(&session.tree, &session.dir, &writes);
        }
        Ok(report)
    }

    /// Makes the entries the sessions of the checkpoints `ids` lack (those just fetched), until
    /// `budget` bytes of transcripts have been read. Transcripts are read from the objects held
    /// here, through a handle of their own opened at `location`, never from the network: a blob
    /// a partial clone lacks is skipped, as is anything that cannot be read (logged). Never
    /// fails: the cache only saves later work.
    ///
    /// The checkpoints found with an entry for every session, or given them, are added to the
    /// list [`WritesCache::not_known_complete`] reads.
    pub fn fill(
        &self,
        topo: &Topology<'_>,
        location: &RepoLocation,
        ids: &[CheckpointId],
        budget: u64,
    ) -> Filled {
        let mut complete = Vec::new();
        let filled = self.fill_each(topo, location, ids, budget, &mut complete);
        self.add_complete(&complete);
        filled
    }

    /// [`WritesCache::fill`], adding to `complete` each checkpoint that ends with an entry for
    /// every session that has a transcript here.
    fn fill_each<'i>(
        &self,
        topo: &Topology<'_>,
        location: &RepoLocation,
        ids: &'i [CheckpointId],
        budget: u64,
        complete: &mut Vec<&'i CheckpointId>,
    ) -> Filled {
        let mut filled = Filled::default();
        let mut reader = None;
        for id in ids {
            let Some(cp) = read_logged(topo, id) else {
                continue;
            };
            let mut whole = true;
            for dir in &cp.session_dirs {
                // Only whether an entry is there: parsing every entry would cost each fetch of a
                // filled repository what a warm `blame` costs (an entry of another extractor
                // version is made again by `blame`).
                if self.path(&cp.tree, dir).exists() {
                    continue;
                }
                if filled.bytes >= budget {
                    filled.stopped = true;
                    return filled;
                }
                let reader = reader.get_or_insert_with(|| ContentReader::open(location));
                let bytes = match reader {
                    Ok(r) => r.read_file(id, &cp.tree, &format!("{dir}/{TRANSCRIPT_FILE}")),
                    Err(e) => {
                        log::info!("writes cache: not filled: {e}");
                        return filled;
                    }
                };
                match bytes {
                    Ok(bytes) => {
                        filled.bytes += bytes.len() as u64;
                        filled.entries += 1;
                        self.put(&cp.tree, dir, &agents::extract(&bytes));
                    }
                    Err(e) => {
                        // No transcript, or its blob absent (not a partial clone: no fetch of
                        // ours brings it): nothing for a later fetch to make either.
                        let lasting = matches!(
                            e,
                            StoreError::FileNotFound { .. } | StoreError::AbsentBlob { .. }
                        );
                        whole &= lasting;
                        log::info!("writes cache: {id} session {dir} not filled: {e}");
                    }
                }
            }
            if whole {
                complete.push(id);
            }
        }
        filled
    }

    /// Those of `ids` no fetch found (or made) whole: with an entry for every session. A
    /// checkpoint that changes here afterwards is written (its entries made then) or fetched
    /// (looked at again whatever this says); an entry deleted since is made by the first
    /// `blame` that needs it.
    pub fn not_known_complete<'i>(&self, ids: impl Iterator<Item = &'i str>) -> Vec<&'i str> {
        let text = self.complete_ids();
        let known = known_ids(&text);
        ids.filter(|id| !known.contains(id.as_bytes())).collect()
    }

    /// The text of [`COMPLETE_FILE`]; empty when it is missing or cannot be read.
    fn complete_ids(&self) -> Vec<u8> {
        read_cache_file(&self.dir.join(COMPLETE_FILE), COMPLETE_MAX_BYTES)
            .ok()
            .flatten()
            .unwrap_or_default()
    }

    /// Adds to [`COMPLETE_FILE`] those of `ids` it does not name yet (a checkpoint fetched again
    /// after a change is found whole again). Best effort, like every write of the cache.
    fn add_complete(&self, ids: &[&CheckpointId]) {
        let mut text = self.complete_ids();
        let known = known_ids(&text);
        let new: Vec<&[u8]> = ids
            .iter()
            .map(|id| id.as_str().as_bytes())
            .filter(|id| !known.contains(id))
            .collect();
        if new.is_empty() {
            return;
        }
        for id in new {
            text.extend_from_slice(id);
            text.push(b'\n');
        }
        if text.len() as u64 > COMPLETE_MAX_BYTES {
            return;
        }
        let path = self.dir.join(COMPLETE_FILE);
        if let Err(e) =
            std::fs::create_dir_all(&self.dir).and_then(|()| write_cache_file(&path, &text))
        {
            log::info!("could not write {}: {e}", path.display());
        }
    }

    /// Remembers `writes` for that transcript. Best effort: an entry that cannot be written only
    /// makes the next read slower.
    pub fn put(&self, tree: &str, dir: &str, writes: &AgentWrites) {
        let mut text = String::new();
        let spans = writes.map_lines(|_, lines| {
            let at = text.len();
            for line in lines {
                // Never from a transcript's lines (split at newlines); not kept if it were.
                if line.contains('\n') {
                    return Err(());
                }
                text.push_str(line);
                text.push('\n');
            }
            Ok(Span(at, text.len() - at))
        });
        let Ok(writes) = spans else {
            return;
        };
        let entry = Entry {
            version: agents::EXTRACT_VERSION,
            tree,
            dir,
            writes,
        };
        let Ok(mut bytes) = serde_json::to_vec(&entry) else {
            return;
        };
        // JSON's own text holds no raw newline: the first one ends the header.
        bytes.push(b'\n');
        bytes.extend_from_slice(text.as_bytes());
        if bytes.len() as u64 > MAX_BYTES {
            return;
        }
        let path = self.path(tree, dir);
        let written =
            std::fs::create_dir_all(&self.dir).and_then(|()| write_cache_file(&path, &bytes));
        if let Err(e) = written {
            log::info!(
                "could not write the writes cache entry {}: {e}",
                path.display()
            );
        }
    }
}

/// The IDs [`COMPLETE_FILE`]'s `text` names, one a line.
fn known_ids(text: &[u8]) -> std::collections::HashSet<&[u8]> {
    text.split(|&b| b == b'\n').collect()
}

/// Checkpoint `id`, when it can be read; why not is only logged (the cache is best effort).
fn read_logged(topo: &Topology<'_>, id: &CheckpointId) -> Option<Checkpoint> {
    topo.read(id)
        .map_err(|e| log::info!("writes cache: checkpoint {id} not read: {e}"))
        .ok()
        .flatten()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writes() -> AgentWrites {
        agents::extract(
            concat!(
                r#"{"type":"user","message":{"role":"user","content":"add it"},"timestamp":"t1"}"#,
                "\n",
                r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"Write","input":{"file_path":"/w/a.go","content":"package a\nfunc A() {}\n"}}]},"timestamp":"t2"}"#,
                "\n"
            )
            .as_bytes(),
        )
    }

    #[test]
    fn a_checkpoint_found_whole_is_named_once() {
        let dir = tempfile::tempdir().unwrap();
        let cache = WritesCache::in_common_dir(dir.path());
        let a = CheckpointId::parse("01KDYD118RC43K8WPNZ4PBWXPY").unwrap();
        let b = CheckpointId::parse("0123456789ab").unwrap();
        let ids = [a.as_str(), b.as_str()];
        assert_eq!(cache.not_known_complete(ids.into_iter()), ids);
        cache.add_complete(&[&a]);
        cache.add_complete(&[&a, &b]);
        assert!(cache.not_known_complete(ids.into_iter()).is_empty());
        let text = std::fs::read_to_string(cache.dir.join(COMPLETE_FILE)).unwrap();
        assert_eq!(text, format!("{a}\n{b}\n"), "each ID once");
    }

    #[test]
    fn an_entry_is_found_only_for_its_tree_and_directory() {
        let dir = tempfile::tempdir().unwrap();
        let cache = WritesCache::in_common_dir(dir.path());
        let w = writes();
        assert_eq!(w.writes.len(), 1, "{w:?}");
        assert_eq!(cache.get("t1", "0", LinesOf::All), None);
        cache.put("t1", "0", &w);
        assert_eq!(cache.get("t1", "0", LinesOf::All), Some(w.clone()));
        assert_eq!(cache.get("t1", "1", LinesOf::All), None);
        assert_eq!(cache.get("t2", "0", LinesOf::All), None);
        // A directory read from a checkpoint never becomes a path.
        cache.put("t1", "../../escape", &w);
        assert!(!dir.path().join("escape").exists());
        assert_eq!(cache.get("t1", "../../escape", LinesOf::All), Some(w));
    }

    #[test]
    fn only_the_lines_of_the_files_asked_about_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let cache = WritesCache::in_common_dir(dir.path());
        let mut w = writes();
        let mut b = w.writes[0].clone();
        b.file = "./src/b \"q\".go".to_owned();
        b.lines = ["", "  b\ttab \u{e9}", "\\ \"x\"", ""]
            .map(str::to_owned)
            .to_vec();
        w.writes.push(b);
        let mut empty = w.writes[0].clone();
        empty.lines.clear();
        w.writes.push(empty);
        cache.put("t", "0", &w);
        assert_eq!(cache.get("t", "0", LinesOf::All), Some(w.clone()));
        let only_b = [r#"src/b "q".go"#.to_owned()];
        let mut expected = w.clone();
        expected.writes[0].lines.clear();
        assert_eq!(cache.get("t", "0", LinesOf::Files(&only_b)), Some(expected));
        // A line holding a newline cannot be kept apart: no entry is made.
        w.writes[1].lines[1].push_str("\nmore");
        cache.put("t", "1", &w);
        assert_eq!(cache.get("t", "1", LinesOf::All), None);
    }

    #[test]
    fn entries_of_another_version_or_that_do_not_parse_are_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let cache = WritesCache::in_common_dir(dir.path());
        let w = writes();
        cache.put("t", "0", &w);
        let path = cache.path("t", "0");
        let text = std::fs::read_to_string(&path).unwrap();
        let older = text.replacen(
            &format!("\"version\":{}", agents::EXTRACT_VERSION),
            "\"version\":0",
            1,
        );
        assert_ne!(older, text);
        std::fs::write(&path, older).unwrap();
        assert_eq!(cache.get("t", "0", LinesOf::All), None);
        std::fs::write(&path, &text[..text.len() / 2]).unwrap();
        assert_eq!(cache.get("t", "0", LinesOf::All), None);
        // A link in an entry's place is not followed.
        std::fs::remove_file(&path).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, text).unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        assert_eq!(cache.get("t", "0", LinesOf::All), None);
    }
}
