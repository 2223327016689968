//! Reading the linked checkpoints and their sessions' writes: from the writes cache, else from
//! each transcript, on two threads.

use std::collections::{HashMap, VecDeque};
use std::sync::{Condvar, Mutex, PoisonError};

use crate::agents::{self, AgentWrites};
use crate::base::error::error_chain;
use crate::base::id::CheckpointId;
use crate::git::repo::RepoLocation;
use crate::model::transcript;
use crate::ops::writes_cache::{LinesOf, WritesCache};
use crate::store::content::ContentReader;
use crate::store::{Checkpoint, StoreError};
use crate::topology::Topology;

use super::CheckpointStatus;

/// A checkpoint as read (with what its sessions gave), or why it could not be.
pub(super) type CheckpointRead<S = Vec<Extracted>> =
    Result<(Checkpoint, S), (CheckpointStatus, String)>;

/// One session's writes, or why its transcript gave none.
type Extracted = Result<AgentWrites, TranscriptMiss>;

/// Reads the checkpoints of `ids` (`missing`: those known to be absent, with the reason), and,
/// with `transcripts`, each session's writes once (with the lines of the files it names): from
/// the writes cache, else from its transcript (then cached). Without, a checkpoint read has no
/// session's writes (none listed).
///
/// This thread reads the checkpoints' documents and queues each session; a second thread reads
/// their writes as they come (a cache entry, else the transcript, extracted), and this one joins
/// in once the documents are read: a warm cache's entries are parsed on both threads, while the
/// documents are read. Both read transcripts through repository handles of their own, opened
/// from `location` (a store's handle cannot be shared between threads; and in a packed
/// repository a fresh handle read the benchmark's transcripts about four times faster than the
/// store's, which has read the documents before), by tree id, so the bytes are those the store
/// would give. A transcript they cannot read is read at the end through the store, which knows
/// the partial cache and what a missing blob means. Each thread holds one transcript at a time.
pub(super) fn read_all(
    topo: &Topology<'_>,
    location: &RepoLocation,
    cache: &WritesCache,
    ids: &[CheckpointId],
    missing: &HashMap<CheckpointId, (CheckpointStatus, String)>,
    transcripts: Option<LinesOf<'_>>,
) -> Vec<CheckpointRead> {
    /// A session's writes to read.
    struct Job {
        /// Its number, in queueing order.
        n: usize,
        /// The checkpoint, an index into `checkpoints`.
        at: usize,
        id: CheckpointId,
        tree: String,
        dir: String,
    }
    let queue: JobQueue<Job> = JobQueue::default();
    let extract = |bytes: &[u8], job: &Job| {
        let writes = agents::extract(bytes);
        cache.put(&job.tree, &job.dir, &writes);
        writes
    };
    let lines = transcripts.unwrap_or(LinesOf::All);
    // Takes jobs until `take` has none; a job whose transcript it cannot read is handed back.
    let work = |take: &dyn Fn() -> Option<Job>| {
        // Opened with the first transcript the cache lacks: a warm cache needs none.
        let mut reader = None;
        let mut done = Vec::new();
        while let Some(job) = take() {
            // The cache answers for exactly these transcript bytes: it is keyed by the tree.
            if let Some(writes) = cache.get(&job.tree, &job.dir, lines) {
                done.push((job.n, Ok(writes)));
                continue;
            }
            let reader = reader.get_or_insert_with(|| {
                ContentReader::open(location)
                    .map_err(|e| log::info!("reading transcripts through the store: {e}"))
                    .ok()
            });
            match reader
                .as_ref()
                .map(|r| r.read_file(&job.id, &job.tree, &transcript_path(&job.dir)))
            {
                Some(Ok(bytes)) => done.push((job.n, Ok(extract(&bytes, &job)))),
                _ => done.push((job.n, Err(job))),
            }
        }
        done
    };
    std::thread::scope(|scope| {
        let helper = scope.spawn(|| work(&|| queue.pop_front()));
        // Closes the queue however this thread leaves (a panic included), which ends the helper.
        let closing = queue.closing();
        let mut checkpoints = Vec::with_capacity(ids.len());
        let mut queued = 0;
        for id in ids {
            let found = match missing.get(id) {
                Some((status, why)) => Err((*status, why.clone())),
                None => match topo.read(id) {
                    Ok(Some(cp)) => Ok(cp),
                    Ok(None) => Err((CheckpointStatus::NotFound, "not found locally".to_owned())),
                    Err(e) => Err((CheckpointStatus::Unreadable, error_chain(&e))),
                },
            };
            let cp = match found {
                Ok(cp) => cp,
                Err(why) => {
                    checkpoints.push(Err(why));
                    continue;
                }
            };
            let mut pending = Vec::with_capacity(cp.session_dirs.len());
            for dir in cp.session_dirs.iter().filter(|_| transcripts.is_some()) {
                queue.push(Job {
                    n: queued,
                    at: checkpoints.len(),
                    id: cp.id.clone(),
                    tree: cp.tree.clone(),
                    dir: dir.clone(),
                });
                pending.push(queued);
                queued += 1;
            }
            checkpoints.push(Ok((cp, pending)));
        }
        drop(closing);
        let mine = work(&|| queue.pop_back());
        let helped = match helper.join() {
            Ok(helped) => helped,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let mut done: Vec<Option<Extracted>> = (0..queued).map(|_| None).collect();
        for (n, extracted) in mine.into_iter().chain(helped) {
            done[n] = Some(extracted.or_else(|job| {
                let Ok((cp, _)) = &checkpoints[job.at] else {
                    unreachable!("only a checkpoint that was read queues its transcripts")
                };
                read_transcript(topo, cp, &job.dir).map(|bytes| extract(&bytes, &job))
            }));
        }
        checkpoints
            .into_iter()
            .map(|read| {
                read.map(|(cp, pending)| {
                    let extracted = pending
                        .into_iter()
                        .map(|n| done[n].take().expect("every queued job is done"))
                        .collect();
                    (cp, extracted)
                })
            })
            .collect()
    })
}

/// The transcripts [`read_all`] queues: one thread pushes, the second takes from the front as
/// they come, and the first, once it has queued everything, from the back; so each reads a run
/// of neighbouring transcripts (in a pack they are often deltas of one another, and a handle
/// keeps the bases it has read).
struct JobQueue<T> {
    state: Mutex<(VecDeque<T>, bool)>,
    changed: Condvar,
}

impl<T> Default for JobQueue<T> {
    fn default() -> Self {
        JobQueue {
            state: Mutex::new((VecDeque::new(), false)),
            changed: Condvar::new(),
        }
    }
}

impl<T> JobQueue<T> {
    fn state(&self) -> std::sync::MutexGuard<'_, (VecDeque<T>, bool)> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn push(&self, job: T) {
        self.state().0.push_back(job);
        self.changed.notify_one();
    }

    /// The first job, waiting for one; `None` once the queue is empty and closed.
    fn pop_front(&self) -> Option<T> {
        let mut state = self.state();
        loop {
            if let Some(job) = state.0.pop_front() {
                return Some(job);
            }
            if state.1 {
                return None;
            }
            state = self
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// The last job, without waiting (for the thread that pushes, once it has closed the queue).
    fn pop_back(&self) -> Option<T> {
        self.state().0.pop_back()
    }

    /// A guard that closes the queue when dropped: no job comes any more.
    fn closing(&self) -> impl Drop + '_ {
        struct Closing<'q, T>(&'q JobQueue<T>);
        impl<T> Drop for Closing<'_, T> {
            fn drop(&mut self) {
                self.0.state().1 = true;
                self.0.changed.notify_all();
            }
        }
        Closing(self)
    }
}

pub(super) enum TranscriptMiss {
    Absent(String),
    /// The transcript's blob `oid` is absent from the object store, for the reason `why`.
    AbsentBlob {
        oid: String,
        why: String,
    },
    Unreadable(String),
}

/// The path of the transcript of the session in `dir`, inside its checkpoint.
pub(super) fn transcript_path(dir: &str) -> String {
    format!("{dir}/{}", transcript::TRANSCRIPT_FILE)
}

/// The whole transcript of the session in `dir` (the store joins its chunks).
fn read_transcript(
    topo: &Topology<'_>,
    cp: &Checkpoint,
    dir: &str,
) -> Result<Vec<u8>, TranscriptMiss> {
    match topo.read_file(cp, &transcript_path(dir)) {
        Ok(bytes) => Ok(bytes),
        Err(StoreError::FileNotFound { .. }) => {
            Err(TranscriptMiss::Absent("no transcript is stored".to_owned()))
        }
        Err(e) => Err(match &e {
            StoreError::AbsentBlob { oid, .. } => TranscriptMiss::AbsentBlob {
                oid: oid.clone(),
                why: error_chain(&e),
            },
            _ => TranscriptMiss::Unreadable(error_chain(&e)),
        }),
    }
}
