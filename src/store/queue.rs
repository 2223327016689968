//! The push-discovery queue (docs/format.md, "The push queue"): which checkpoint refs changed
//! since they were last pushed. It lives in the git common dir, so every worktree shares one queue.
//!
//! - `entire-checkpoint-push-queue.jsonl`: one `{"ref":"refs/entire/checkpoints/<shard>/<id>"}`
//!   per line, mode 0600. Duplicates are allowed on disk.
//! - `entire-checkpoint-push-queue.lock`: every operation holds an advisory lock on this sidecar,
//!   never on the data file (a lock on the data file would be lost by the rename of a rewrite).
//!
//! Entries are removed only after a confirmed push, so an interrupted or failed push leaves them
//! queued: the queue degrades toward "will retry", never toward loss. A torn last line or a
//! garbage line is skipped (and dropped at the next compaction), never fatal. Lines whose ref is
//! not a checkpoint ref are garbage too, so the queue can never make us push a foreign ref.

use crate::base::error::{io_context, IoError};
use std::fs;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::base::crashpoint;
use crate::base::fs::{open_append, read_owned, write_atomic, FileLock};

/// The largest queue file read: about four million refs.
const MAX_QUEUE_BYTES: u64 = 256 << 20;
use crate::git::refname::CheckpointRef;

/// The queue file's name in the common dir.
pub const QUEUE_FILE: &str = "entire-checkpoint-push-queue.jsonl";
/// The lock file's name in the common dir.
pub const QUEUE_LOCK_FILE: &str = "entire-checkpoint-push-queue.lock";

/// A queue operation failed: the queue file and what was being done, with the I/O error.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct QueueError(#[from] IoError);

impl crate::base::error::ExitStatus for QueueError {
    fn exit_code(&self) -> i32 {
        crate::base::error::FAILURE
    }
}

/// The push-discovery queue of one repository.
#[derive(Debug, Clone)]
pub struct PushQueue {
    path: PathBuf,
    lock_path: PathBuf,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Record {
    #[serde(rename = "ref")]
    name: String,
}

/// The checkpoint ref one queue line records, or `None` for a line every queue operation skips:
/// blank, not a `{"ref": ...}` record, or naming anything but a checkpoint ref. Public so tools
/// and the fuzz targets apply exactly the queue's own rule.
pub fn parse_line(line: &str) -> Option<CheckpointRef> {
    let line = line.trim();
    if line.is_empty() {
        return None;
    }
    let rec = serde_json::from_str::<Record>(line).ok()?;
    CheckpointRef::parse(&rec.name).ok()
}

/// The newline-terminated queue line that records `r`; [`parse_line`] reads it back as `r`.
pub fn encode_line(r: &CheckpointRef) -> String {
    line_for(r.name())
}

/// The queued refs of a file's text, de-duplicated in first-seen order, and the number of
/// non-blank lines (so callers can tell whether the file holds redundancy).
fn parse(text: &str) -> (Vec<String>, usize) {
    let mut seen = std::collections::HashSet::new();
    let mut refs = Vec::new();
    let mut raw = 0;
    for line in text.lines() {
        if line.trim().is_empty() {
            continue;
        }
        raw += 1;
        if let Some(r) = parse_line(line) {
            if seen.insert(r.name().to_owned()) {
                refs.push(r.name().to_owned());
            }
        }
    }
    (refs, raw)
}

fn line_for(r: &str) -> String {
    let mut s =
        serde_json::to_string(&Record { name: r.to_owned() }).expect("a string record serializes");
    s.push('\n');
    s
}

impl PushQueue {
    /// The queue of the repository whose git common dir is `common_dir`.
    pub fn in_common_dir(common_dir: &Path) -> Self {
        PushQueue {
            path: common_dir.join(QUEUE_FILE),
            lock_path: common_dir.join(QUEUE_LOCK_FILE),
        }
    }

    /// A queue in the same format at another path (the per-destination queues), locked by
    /// `<path>.lock`.
    pub fn at(path: PathBuf) -> Self {
        let mut lock = path.clone().into_os_string();
        lock.push(".lock");
        PushQueue {
            path,
            lock_path: PathBuf::from(lock),
        }
    }

    /// The queue file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn err(&self, op: &'static str) -> impl FnOnce(std::io::Error) -> QueueError + '_ {
        move |source| {
            QueueError(io_context(format!(
                "push queue {}: {op}",
                self.path.display()
            ))(source))
        }
    }

    fn lock(&self, exclusive: bool) -> Result<FileLock, QueueError> {
        if exclusive {
            FileLock::exclusive(&self.lock_path)
        } else {
            FileLock::shared(&self.lock_path)
        }
        .map_err(self.err("lock"))
    }

    fn read_text(&self) -> Result<String, QueueError> {
        match read_owned(&self.path, MAX_QUEUE_BYTES) {
            Ok(Some(bytes)) => Ok(String::from_utf8_lossy(&bytes).into_owned()),
            Ok(None) => Ok(String::new()),
            Err(e) => Err(self.err("read")(e)),
        }
    }

    /// Replaces the file with `refs` (temp file + fsync + rename); an empty set deletes it.
    fn rewrite(&self, refs: &[String]) -> Result<(), QueueError> {
        crashpoint::crashpoint("queue.before-rewrite");
        if refs.is_empty() {
            return match fs::remove_file(&self.path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(self.err("delete")(e)),
                _ => Ok(()),
            };
        }
        let text: String = refs.iter().map(|r| line_for(r)).collect();
        write_atomic(&self.path, text.as_bytes(), 0o600).map_err(self.err("rewrite"))
    }

    /// Appends one ref.
    pub fn enqueue(&self, r: &str) -> Result<(), QueueError> {
        self.enqueue_all(&[r.to_owned()])
    }

    /// Appends refs in order; an empty slice is a no-op.
    pub fn enqueue_all(&self, refs: &[String]) -> Result<(), QueueError> {
        if refs.is_empty() {
            return Ok(());
        }
        let _guard = self.lock(true)?;
        let mut f = open_append(&self.path, 0o600).map_err(self.err("open"))?;
        let mut text = String::new();
        // A torn last line (a writer killed mid-append) must not swallow the next record.
        let len = f.metadata().map_err(self.err("stat"))?.len();
        if len > 0 {
            let mut last = [0u8; 1];
            f.seek(SeekFrom::Start(len - 1)).map_err(self.err("read"))?;
            f.read_exact(&mut last).map_err(self.err("read"))?;
            if last[0] != b'\n' {
                text.push('\n');
            }
        }
        for r in refs {
            text.push_str(&line_for(r));
        }
        crashpoint::write_or_tear("queue.mid-append", &mut f, text.as_bytes())
            .map_err(self.err("append"))
    }

    /// The queued refs, de-duplicated in first-seen order, without removing them. A file with
    /// duplicate or garbage lines is compacted.
    pub fn drain(&self) -> Result<Vec<String>, QueueError> {
        let _guard = self.lock(true)?;
        let (refs, raw) = parse(&self.read_text()?);
        if raw > refs.len() {
            self.rewrite(&refs)?;
        }
        Ok(refs)
    }

    /// Like [`PushQueue::drain`] but never rewrites (for counters).
    pub fn peek(&self) -> Result<Vec<String>, QueueError> {
        if !self.path.exists() {
            return Ok(Vec::new());
        }
        let _guard = self.lock(false)?;
        Ok(parse(&self.read_text()?).0)
    }

    /// Removes exactly `refs` (after a confirmed push); entries appended meanwhile survive.
    /// An empty slice is a no-op and takes no lock.
    pub fn remove(&self, refs: &[String]) -> Result<(), QueueError> {
        if refs.is_empty() {
            return Ok(());
        }
        let _guard = self.lock(true)?;
        let (current, _) = parse(&self.read_text()?);
        let gone: std::collections::HashSet<&String> = refs.iter().collect();
        let kept: Vec<String> = current.into_iter().filter(|r| !gone.contains(r)).collect();
        self.rewrite(&kept)
    }

    /// Moves `refs` to the back of the queue (fair scheduling after a cut-short flush), dropping
    /// nothing.
    pub fn rotate(&self, refs: &[String]) -> Result<(), QueueError> {
        if refs.is_empty() {
            return Ok(());
        }
        let _guard = self.lock(true)?;
        let (current, _) = parse(&self.read_text()?);
        let moved: std::collections::HashSet<&String> = refs.iter().collect();
        let (back, mut front): (Vec<String>, Vec<String>) =
            current.into_iter().partition(|r| moved.contains(r));
        front.extend(back);
        self.rewrite(&front)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const A: &str = "refs/entire/checkpoints/f6/a1b2c3d4e5f6";
    const B: &str = "refs/entire/checkpoints/a1/f6e5d4c3b2a1";
    const C: &str = "refs/entire/checkpoints/ZN/01KVBJCWYA4YW6J5M9GP655HZN";

    fn queue() -> (tempfile::TempDir, PushQueue) {
        let dir = tempfile::tempdir().unwrap();
        let q = PushQueue::in_common_dir(dir.path());
        (dir, q)
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    fn lines(q: &PushQueue) -> usize {
        fs::read_to_string(q.path())
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }

    #[test]
    fn drain_does_not_consume_and_remove_deletes_file() {
        let (_d, q) = queue();
        assert!(q.drain().unwrap().is_empty());
        q.enqueue(A).unwrap();
        q.enqueue(B).unwrap();
        assert_eq!(q.drain().unwrap(), s(&[A, B]));
        assert_eq!(q.drain().unwrap(), s(&[A, B]));
        let mode = fs::metadata(q.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        q.remove(&s(&[A])).unwrap();
        assert_eq!(q.drain().unwrap(), s(&[B]));
        q.remove(&s(&[B])).unwrap();
        assert!(q.drain().unwrap().is_empty());
        assert!(!q.path().exists());
    }

    #[test]
    fn duplicates_compacted_once() {
        let (_d, q) = queue();
        for r in [A, A, B, A] {
            q.enqueue(r).unwrap();
        }
        assert_eq!(lines(&q), 4);
        assert_eq!(q.drain().unwrap(), s(&[A, B]));
        assert_eq!(lines(&q), 2);
        let before = fs::metadata(q.path()).unwrap().modified().unwrap();
        let ino = std::os::unix::fs::MetadataExt::ino(&fs::metadata(q.path()).unwrap());
        assert_eq!(q.drain().unwrap(), s(&[A, B]));
        let after = fs::metadata(q.path()).unwrap();
        assert_eq!(
            std::os::unix::fs::MetadataExt::ino(&after),
            ino,
            "no rewrite"
        );
        assert_eq!(after.modified().unwrap(), before);
    }

    #[test]
    fn garbage_blank_and_foreign_lines_skipped() {
        let (_d, q) = queue();
        fs::write(
            q.path(),
            format!(
                "{}\nnot json\n\n{{\"ref\":\"\"}}\n{{\"ref\":\"refs/heads/main\"}}\n",
                line_for(A).trim()
            ),
        )
        .unwrap();
        assert_eq!(q.drain().unwrap(), s(&[A]));
        assert_eq!(lines(&q), 1);
    }

    #[test]
    fn torn_last_line_does_not_swallow_next_append() {
        let (_d, q) = queue();
        fs::write(q.path(), format!("{}{{\"ref\":\"refs/ent", line_for(A))).unwrap();
        assert_eq!(q.peek().unwrap(), s(&[A]));
        q.enqueue(B).unwrap();
        assert_eq!(q.drain().unwrap(), s(&[A, B]));
    }

    #[test]
    fn remove_keeps_entries_enqueued_after_drain() {
        let (_d, q) = queue();
        q.enqueue(A).unwrap();
        let drained = q.drain().unwrap();
        q.enqueue(B).unwrap();
        q.remove(&drained).unwrap();
        assert_eq!(q.drain().unwrap(), s(&[B]));
    }

    #[test]
    fn peek_never_rewrites() {
        let (_d, q) = queue();
        for r in [A, A] {
            q.enqueue(r).unwrap();
        }
        assert_eq!(q.peek().unwrap(), s(&[A]));
        assert_eq!(lines(&q), 2);
    }

    #[test]
    fn enqueue_all_and_empty_ops() {
        let (_d, q) = queue();
        q.enqueue_all(&[]).unwrap();
        assert!(!q.path().exists());
        q.enqueue(B).unwrap();
        q.enqueue_all(&s(&[A, B, C])).unwrap();
        assert_eq!(q.drain().unwrap(), s(&[B, A, C]));
        q.remove(&[]).unwrap();
        assert!(!q.lock_path.exists() || q.drain().is_ok());
    }

    #[test]
    fn remove_of_nothing_takes_no_lock() {
        let (_d, q) = queue();
        q.remove(&[]).unwrap();
        assert!(!q.lock_path.exists());
    }

    #[test]
    fn rotate_moves_to_back() {
        let (_d, q) = queue();
        q.enqueue_all(&s(&[A, B, C])).unwrap();
        q.rotate(&s(&[A])).unwrap();
        assert_eq!(q.drain().unwrap(), s(&[B, C, A]));
    }

    #[test]
    fn concurrent_enqueues_lose_nothing() {
        let (_d, q) = queue();
        let ids: Vec<String> = (0..8 * 50)
            .map(|i| {
                let id = format!("{i:012x}");
                format!("refs/entire/checkpoints/{}/{id}", &id[10..])
            })
            .collect();
        std::thread::scope(|scope| {
            for chunk in ids.chunks(50) {
                let q = q.clone();
                scope.spawn(move || {
                    for r in chunk {
                        q.enqueue(r).unwrap();
                    }
                });
            }
        });
        let mut got = q.drain().unwrap();
        got.sort();
        let mut want = ids.clone();
        want.sort();
        assert_eq!(got, want);
    }
}
