//! `blame` and `why`: each line of a file labelled with the checkpoints of the commit that last
//! changed it, and with whether a transcript of those checkpoints records the agent writing
//! that exact line.
//!
//! The labels ([`Attribution`]): `agent` when a session of a checkpoint linked to the line's
//! commit (trailers, then the rewrite map) has a transcript whose file-writing tool call for
//! this file wrote the line's text (trailing whitespace trimmed) and the line is evidence on
//! its own ([`agent_writes::is_evidence`]: at least one letter or digit); `commit-linked` when
//! the commit links a checkpoint but no transcript shows that (or none could be read: the
//! checkpoint says why); `human` when the commit links no checkpoint; `uncommitted` for lines
//! of the working tree not committed yet. Each checkpoint and transcript is read once however
//! many lines point at it; checkpoints missing locally are fetched first, in one batch.

use std::collections::HashMap;
use std::collections::VecDeque;
use std::path::Path;
use std::sync::{Condvar, Mutex, PoisonError};

use serde::Serialize;

use crate::base::error::{error_chain, ExitStatus};
use crate::base::id::CheckpointId;
use crate::git::blame::{self as git_blame, BlameCommit, BlameError, BlameRev, LineRange};
use crate::git::repo::{Repo, RepoLocation};
use crate::git::url::Remote;
use crate::model::agent_writes::{self, AgentWrites, TranscriptFormat};
use crate::model::transcript;
use crate::ops::fetch_many::{self, Status};
use crate::ops::rewrites::{self, RewriteMap};
use crate::ops::writes_cache::WritesCache;
use crate::store::content::ContentReader;
use crate::store::{Checkpoint, StoreError};
use crate::topology::Topology;

/// What to blame.
#[derive(Debug, Clone)]
pub struct BlameTarget<'a> {
    /// The directory the path is relative to (the caller's working directory), where git
    /// blame runs and finds the repository as the command does.
    pub cwd: &'a Path,
    /// The file, as the user named it.
    pub path: String,
    /// The lines (default: all).
    pub range: Option<LineRange>,
    /// The revision (default: the working tree).
    pub rev: Option<BlameRev>,
}

/// A `git blame` started by [`start`]: it runs while the caller opens the repository and its
/// stores, then [`blame`] labels its lines.
pub struct StartedBlame(git_blame::PendingBlame);

/// A `git blame` of one line started by [`start_why`], for [`why`].
pub struct StartedWhy {
    blame: StartedBlame,
    line: usize,
}

/// Starts blaming `target`.
pub fn start(target: &BlameTarget<'_>) -> Result<StartedBlame, BlameError> {
    Ok(StartedBlame(git_blame::start(
        target.cwd,
        &target.path,
        target.range,
        target.rev.as_ref(),
    )?))
}

/// Starts blaming line `line` of `target` (whose range is ignored) for [`why`].
pub fn start_why(target: &BlameTarget<'_>, line: usize) -> Result<StartedWhy, BlameError> {
    let target = BlameTarget {
        range: Some(LineRange::single(line)),
        ..target.clone()
    };
    Ok(StartedWhy {
        blame: start(&target)?,
        line,
    })
}

/// Why `why` cannot answer.
#[derive(Debug, thiserror::Error)]
pub enum WhyError {
    /// Blaming the file failed.
    #[error(transparent)]
    Blame(#[from] BlameError),
    /// The target is not `FILE:LINE` (or the `-L` value not a line number).
    #[error("{0}")]
    BadTarget(String),
    /// The line is past the end of the file.
    #[error("{path}: line {line} is out of range (the file has {lines} lines)")]
    OutOfRange {
        /// The file.
        path: String,
        /// The line asked for.
        line: usize,
        /// How many lines the file has.
        lines: usize,
    },
}

impl ExitStatus for WhyError {
    fn exit_code(&self) -> i32 {
        match self {
            WhyError::Blame(e) => e.exit_code(),
            WhyError::BadTarget(_) | WhyError::OutOfRange { .. } => crate::base::error::USAGE,
        }
    }
}

/// How a line came to be, as far as the checkpoints show.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attribution {
    /// A transcript of a linked checkpoint records the agent writing this line.
    Agent,
    /// The commit links checkpoints, but no transcript read shows this line written.
    CommitLinked,
    /// The commit links no checkpoint.
    Human,
    /// Not committed yet.
    Uncommitted,
}

impl Attribution {
    /// The label, as in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Attribution::Agent => "agent",
            Attribution::CommitLinked => "commit-linked",
            Attribution::Human => "human",
            Attribution::Uncommitted => "uncommitted",
        }
    }
}

/// The tool call that wrote a line.
#[derive(Debug, Clone, Serialize)]
pub struct WriteRef {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// The session's slot in it.
    pub session_index: usize,
    /// The session's ID.
    pub session_id: String,
    /// The tool.
    pub tool: String,
    /// When the call was made (the entry's timestamp, "" when unknown).
    pub timestamp: String,
    /// The entry's line in the transcript (1-based).
    pub transcript_line: usize,
    #[serde(skip)]
    prompt: Option<usize>,
}

/// One line of the file.
#[derive(Debug, Clone, Serialize)]
pub struct LineEntry {
    /// Its number.
    pub line: usize,
    /// Its text.
    pub text: String,
    /// The commit that last changed it.
    pub commit: String,
    /// Its label.
    pub attribution: Attribution,
    /// The checkpoints the commit links.
    pub checkpoints: Vec<String>,
    /// For `agent` lines, the write that shows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write: Option<WriteRef>,
}

/// A commit some line points at.
#[derive(Debug, Clone, Serialize)]
pub struct CommitEntry {
    /// Its full SHA.
    pub sha: String,
    /// The author's name.
    pub author: String,
    /// The author's email.
    pub author_email: String,
    /// The author time, seconds since the epoch.
    pub author_time: i64,
    /// The subject line.
    pub summary: String,
    /// The file's path in that commit.
    pub filename: String,
    /// The checkpoints it links (trailers, then the rewrite map).
    pub checkpoints: Vec<String>,
}

/// Whether a checkpoint could be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckpointStatus {
    /// Read.
    Read,
    /// Neither here nor (when fetching) on the remote.
    NotFound,
    /// It exists but cannot be read (a corrupt document, a session pointing at a missing
    /// directory).
    Unreadable,
}

/// Whether a session's transcript could be used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TranscriptStatus {
    /// Read, in a known format.
    Read,
    /// Not there: none stored, or its blob is absent (a partial clone, a filtered fetch).
    Absent,
    /// Not JSONL.
    NotJsonl,
    /// JSONL of a format whose writes are not read (another agent).
    UnknownFormat,
    /// It could not be read.
    Unreadable,
}

/// A session of a checkpoint and what its transcript gave.
#[derive(Debug, Clone, Serialize)]
pub struct SessionEntry {
    /// The slot.
    pub index: usize,
    /// The session ID.
    pub session_id: String,
    /// The agent, from its metadata.
    pub agent: String,
    /// The model, from its metadata.
    pub model: String,
    /// The transcript's state.
    pub transcript: TranscriptStatus,
    /// The format read (`claude-code`, `codex`), when read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<&'static str>,
    /// How many file-writing tool calls it holds.
    pub writes: usize,
    /// Lines of the transcript that are not JSON (skipped).
    pub skipped_lines: usize,
    /// Why the transcript gave nothing, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A checkpoint some commit links.
#[derive(Debug, Clone, Serialize)]
pub struct CheckpointEntry {
    /// Its ID.
    pub checkpoint_id: String,
    /// Whether it was read.
    pub status: CheckpointStatus,
    /// Why not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its sessions.
    pub sessions: Vec<SessionEntry>,
}

/// How many lines got each label.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Counts {
    /// `agent`.
    pub agent: usize,
    /// `commit-linked`.
    pub commit_linked: usize,
    /// `human`.
    pub human: usize,
    /// `uncommitted`.
    pub uncommitted: usize,
}

/// The result of `blame`.
#[derive(Debug, Clone, Serialize)]
pub struct BlameReport {
    /// The file as named.
    pub file: String,
    /// The revision blamed (`None`: the working tree).
    pub rev: Option<String>,
    /// The lines.
    pub lines: Vec<LineEntry>,
    /// The commits they point at, once each.
    pub commits: Vec<CommitEntry>,
    /// The checkpoints those commits link, once each.
    pub checkpoints: Vec<CheckpointEntry>,
    /// Lines per label.
    pub counts: Counts,
    /// What the user should hear of (also on stderr): checkpoints not found or unreadable,
    /// transcripts absent or not JSONL, skipped lines, a failed fetch.
    pub warnings: Vec<String>,
    /// Whether something that should be readable was not (a checkpoint that cannot be read, a
    /// transcript that is not JSONL): the command fails after its output.
    #[serde(skip)]
    pub damaged: bool,
}

/// A loaded checkpoint: its sessions' writes, where the transcript could be read.
struct Loaded {
    cp: Option<Checkpoint>,
    sessions: Vec<Option<AgentWrites>>,
}

/// The index of one session's writes to one file: line text → the last write holding it.
type FileIndex = HashMap<String, usize>;

/// Everything `blame` computed, kept for `why`.
struct Attributed {
    report: BlameReport,
    loaded: Vec<Loaded>,
}

/// Labels every line of the blame `started`; the checkpoints missing locally are fetched from
/// `remote` first, in one batch (`None`: not fetched).
pub fn blame(
    repo: &Repo,
    topo: &Topology<'_>,
    started: StartedBlame,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
) -> Result<BlameReport, BlameError> {
    Ok(attribute(repo, topo, started, remote, notice)?.report)
}

fn attribute(
    repo: &Repo,
    topo: &Topology<'_>,
    started: StartedBlame,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
) -> Result<Attributed, BlameError> {
    let StartedBlame(pending) = started;
    let (path, rev) = (pending.path().to_owned(), pending.rev().cloned());
    // While git blame runs: what does not depend on its answer.
    let mut warnings = Vec::new();
    let map = match RewriteMap::load(repo) {
        Ok(m) => Some(m),
        Err(e) => {
            warnings.push(error_chain(&e));
            None
        }
    };
    let blamed = pending.finish()?;
    // Commit → its checkpoints (indices into `ids`).
    let mut ids: Vec<CheckpointId> = Vec::new();
    let mut commit_cps: Vec<Vec<usize>> = Vec::new();
    for c in &blamed.commits {
        let links = match c.is_uncommitted() {
            true => None,
            false => rewrites::commit_links(repo, map.as_ref(), &c.sha),
        };
        let mut mine = Vec::new();
        for id in links.map(|l| l.ids).unwrap_or_default() {
            let at = match ids.iter().position(|i| *i == id) {
                Some(at) => at,
                None => {
                    ids.push(id);
                    ids.len() - 1
                }
            };
            mine.push(at);
        }
        commit_cps.push(mine);
    }
    let missing = fetch_batch(repo, remote, &ids, notice, &mut warnings);
    let mut entries = Vec::new();
    let mut loaded = Vec::new();
    let mut damaged = false;
    let cache = WritesCache::in_common_dir(repo.common_dir());
    let read = read_all(topo, &repo.location(), &cache, &ids, &missing);
    for (id, read) in ids.iter().zip(read) {
        let (entry, l, bad) = settle(id, read, &mut warnings);
        damaged |= bad;
        entries.push(entry);
        loaded.push(l);
    }

    let mut indexes: HashMap<(usize, usize, usize), FileIndex> = HashMap::new();
    let mut counts = Counts::default();
    let mut lines = Vec::with_capacity(blamed.lines.len());
    for l in &blamed.lines {
        let commit = &blamed.commits[l.commit];
        let cps = &commit_cps[l.commit];
        let mut write = None;
        if agent_writes::is_evidence(&l.text) {
            let text = l.text.trim_end();
            for &c in cps {
                for (s, writes) in loaded[c].sessions.iter().enumerate() {
                    let Some(writes) = writes else { continue };
                    let index = indexes
                        .entry((c, s, l.commit))
                        .or_insert_with(|| file_index(writes, &commit.filename));
                    if let Some(&w) = index.get(text) {
                        write = Some(write_ref(&loaded[c], &ids[c], s, writes, w));
                    }
                }
            }
        }
        let attribution = match (commit.is_uncommitted(), cps.is_empty(), &write) {
            (true, _, _) => Attribution::Uncommitted,
            (false, true, _) => Attribution::Human,
            (false, false, Some(_)) => Attribution::Agent,
            (false, false, None) => Attribution::CommitLinked,
        };
        match attribution {
            Attribution::Agent => counts.agent += 1,
            Attribution::CommitLinked => counts.commit_linked += 1,
            Attribution::Human => counts.human += 1,
            Attribution::Uncommitted => counts.uncommitted += 1,
        }
        lines.push(LineEntry {
            line: l.line,
            text: l.text.clone(),
            commit: commit.sha.clone(),
            attribution,
            checkpoints: cps.iter().map(|&c| ids[c].to_string()).collect(),
            write,
        });
    }
    let commits = blamed
        .commits
        .iter()
        .zip(&commit_cps)
        .map(|(c, cps)| commit_entry(c, cps.iter().map(|&i| ids[i].to_string()).collect()))
        .collect();
    Ok(Attributed {
        report: BlameReport {
            file: path,
            rev: rev.map(|r| r.as_str().to_owned()),
            lines,
            commits,
            checkpoints: entries,
            counts,
            warnings,
            damaged,
        },
        loaded,
    })
}

/// Fetches the checkpoints of `ids` missing locally from `remote`, in one batch; returns
/// those still missing with the reason, so that reads do not ask the remote again.
fn fetch_batch(
    repo: &Repo,
    remote: Option<&Remote>,
    ids: &[CheckpointId],
    notice: impl Fn(&str) + Clone + 'static,
    warnings: &mut Vec<String>,
) -> HashMap<CheckpointId, String> {
    let mut missing = HashMap::new();
    let Some(remote) = remote else {
        return missing;
    };
    if ids.is_empty() {
        return missing;
    }
    let request = fetch_many::Request {
        remote: remote.clone(),
        ids: ids.to_vec(),
        all: false,
        range: None,
        filter: None,
        list_first: true,
    };
    let report = match fetch_many::run(repo, &request, notice, &|_| {}) {
        Ok(r) => r,
        Err(e) => {
            warnings.push(format!(
                "could not fetch the missing checkpoints: {}",
                error_chain(&e)
            ));
            return missing;
        }
    };
    for o in &report.outcomes {
        let Ok(id) = CheckpointId::parse(&o.checkpoint_id) else {
            continue;
        };
        let why = match o.status {
            Status::NotFound => format!("not found locally or on {remote}"),
            Status::Failed => format!(
                "could not be fetched from {remote}: {}",
                o.error.as_deref().unwrap_or("the fetch failed")
            ),
            Status::Present | Status::Fetched | Status::Diverged => continue,
        };
        missing.insert(id, why);
    }
    missing
}

/// A checkpoint as read (with what its sessions gave), or why it could not be.
type CheckpointRead<S = Vec<Extracted>> = Result<(Checkpoint, S), (CheckpointStatus, String)>;

/// One session's writes, or why its transcript gave none.
type Extracted = Result<AgentWrites, TranscriptMiss>;

/// Reads the checkpoints of `ids` (`missing`: those known to be absent, with the reason), and
/// each session's writes once: from the writes cache, else from its transcript (then cached).
///
/// This thread reads the checkpoints' documents and queues each transcript the cache lacks; a
/// second thread reads and extracts them as they come, and this one joins in once the documents
/// are read. Both read transcripts through repository handles of their own, opened from
/// `location` (a store's handle cannot be shared between threads; and in a packed repository a
/// fresh handle read the benchmark's transcripts about four times faster than the store's,
/// which has read the documents before), by tree id, so the bytes are those the store would
/// give. A transcript they cannot read is read at the end through the store, which knows the
/// partial cache and what a missing blob means. Each thread holds one transcript at a time.
fn read_all(
    topo: &Topology<'_>,
    location: &RepoLocation,
    cache: &WritesCache,
    ids: &[CheckpointId],
    missing: &HashMap<CheckpointId, String>,
) -> Vec<CheckpointRead> {
    /// A session whose transcript is queued, by job number.
    enum Pending {
        Done(Extracted),
        Job(usize),
    }
    /// A transcript to read and extract.
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
        let writes = agent_writes::extract(bytes);
        cache.put(&job.tree, &job.dir, &writes);
        writes
    };
    // Takes jobs until `take` has none; a job whose transcript it cannot read is handed back.
    let work = |take: &dyn Fn() -> Option<Job>| {
        // Opened with the first job: a warm cache queues none.
        let mut reader = None;
        let mut done = Vec::new();
        while let Some(job) = take() {
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
                Some(why) => Err((CheckpointStatus::NotFound, why.clone())),
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
            for dir in &cp.session_dirs {
                // The cache answers for exactly these transcript bytes: it is keyed by the tree.
                pending.push(match cache.get(&cp.tree, dir) {
                    Some(writes) => Pending::Done(Ok(writes)),
                    None => {
                        queue.push(Job {
                            n: queued,
                            at: checkpoints.len(),
                            id: cp.id.clone(),
                            tree: cp.tree.clone(),
                            dir: dir.clone(),
                        });
                        queued += 1;
                        Pending::Job(queued - 1)
                    }
                });
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
                        .map(|p| match p {
                            Pending::Done(e) => e,
                            Pending::Job(n) => done[n].take().expect("every queued job is done"),
                        })
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

/// Settles what was read of checkpoint `id` into its entry: each session's status and
/// warnings. The flag says whether something that exists could not be read (the command then
/// fails after its output).
fn settle(
    id: &CheckpointId,
    read: CheckpointRead,
    warnings: &mut Vec<String>,
) -> (CheckpointEntry, Loaded, bool) {
    let entry = |status, error: Option<String>| CheckpointEntry {
        checkpoint_id: id.to_string(),
        status,
        error,
        sessions: Vec::new(),
    };
    let none = || Loaded {
        cp: None,
        sessions: Vec::new(),
    };
    let (cp, extracted) = match read {
        Ok(read) => read,
        Err((status, why)) => {
            let unreadable = status == CheckpointStatus::Unreadable;
            // A store error names the checkpoint itself.
            warnings.push(match unreadable {
                true => format!("{why}; its lines are commit-linked"),
                false => format!("checkpoint {id}: {why}; its lines are commit-linked"),
            });
            return (entry(status, Some(why)), none(), unreadable);
        }
    };
    let mut e = entry(CheckpointStatus::Read, None);
    let mut damaged = false;
    let mut sessions = Vec::new();
    for (slot, extracted) in extracted.into_iter().enumerate() {
        let meta = &cp.sessions[slot];
        let mut s = SessionEntry {
            index: slot,
            session_id: meta.session_id.clone(),
            agent: meta.agent.clone(),
            model: meta.model.clone(),
            transcript: TranscriptStatus::Read,
            format: None,
            writes: 0,
            skipped_lines: 0,
            reason: None,
        };
        let mut fail = |s: &mut SessionEntry, status, why: String| {
            warnings.push(format!(
                "checkpoint {id} session {slot}: {why}; its lines are commit-linked"
            ));
            s.transcript = status;
            s.reason = Some(why);
        };
        match extracted {
            Err(TranscriptMiss::Absent(why)) => fail(&mut s, TranscriptStatus::Absent, why),
            Err(TranscriptMiss::Unreadable(why)) => {
                damaged = true;
                fail(&mut s, TranscriptStatus::Unreadable, why)
            }
            Ok(writes) => {
                s.skipped_lines = writes.skipped_lines;
                if !writes.is_jsonl() {
                    damaged = true;
                    fail(
                        &mut s,
                        TranscriptStatus::NotJsonl,
                        "the transcript is not JSONL".to_owned(),
                    );
                } else if writes.format == TranscriptFormat::Unknown {
                    let agent = match meta.agent.as_str() {
                        "" => "an unnamed agent".to_owned(),
                        a => a.to_owned(),
                    };
                    fail(
                        &mut s,
                        TranscriptStatus::UnknownFormat,
                        format!("the transcript of {agent} is not in a format whose writes are read (Claude Code, Codex)"),
                    );
                } else {
                    if writes.skipped_lines > 0 {
                        warnings.push(format!(
                            "checkpoint {id} session {slot}: skipped {} transcript line(s) that are not JSON",
                            writes.skipped_lines
                        ));
                    }
                    s.format = Some(writes.format.name());
                    s.writes = writes.writes.len();
                    sessions.push(Some(writes));
                    e.sessions.push(s);
                    continue;
                }
            }
        }
        sessions.push(None);
        e.sessions.push(s);
    }
    let l = Loaded {
        cp: Some(cp),
        sessions,
    };
    (e, l, damaged)
}

enum TranscriptMiss {
    Absent(String),
    Unreadable(String),
}

/// The path of the transcript of the session in `dir`, inside its checkpoint.
fn transcript_path(dir: &str) -> String {
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
        Err(e @ StoreError::AbsentBlob { .. }) => Err(TranscriptMiss::Absent(error_chain(&e))),
        Err(e) => Err(TranscriptMiss::Unreadable(error_chain(&e))),
    }
}

/// The lines `writes` wrote to `file`, each mapped to the last write that holds it.
fn file_index(writes: &AgentWrites, file: &str) -> FileIndex {
    let mut index = FileIndex::new();
    for (i, w) in writes.writes.iter().enumerate() {
        if agent_writes::same_file(&w.file, file) {
            for line in &w.lines {
                index.insert(line.clone(), i);
            }
        }
    }
    index
}

fn write_ref(
    l: &Loaded,
    id: &CheckpointId,
    slot: usize,
    writes: &AgentWrites,
    w: usize,
) -> WriteRef {
    let write = &writes.writes[w];
    WriteRef {
        checkpoint_id: id.to_string(),
        session_index: slot,
        session_id: l
            .cp
            .as_ref()
            .map(|cp| cp.sessions[slot].session_id.clone())
            .unwrap_or_default(),
        tool: write.tool.clone(),
        timestamp: write.timestamp.clone(),
        transcript_line: write.entry,
        prompt: write.prompt,
    }
}

fn commit_entry(c: &BlameCommit, checkpoints: Vec<String>) -> CommitEntry {
    CommitEntry {
        sha: c.sha.clone(),
        author: c.author.clone(),
        author_email: c.author_mail.clone(),
        author_time: c.author_time,
        summary: c.summary.clone(),
        filename: c.filename.clone(),
        checkpoints,
    }
}

/// A prompt as `why` shows it.
#[derive(Debug, Clone, Serialize)]
pub struct PromptEntry {
    /// What the user typed.
    pub text: String,
    /// When (the entry's timestamp, "" when unknown).
    pub timestamp: String,
    /// The entry's line in the transcript (1-based).
    pub transcript_line: usize,
}

/// The session that wrote the line, and the prompt before the write.
#[derive(Debug, Clone, Serialize)]
pub struct WhyWrite {
    /// The write.
    #[serde(flatten)]
    pub write: WriteRef,
    /// The agent, from the session's metadata.
    pub agent: String,
    /// The model, from the session's metadata.
    pub model: String,
    /// The user turn before the write (`None` when the transcript has none before it).
    pub prompt: Option<PromptEntry>,
}

/// The prompts of a session of a linked checkpoint (for lines no write shows).
#[derive(Debug, Clone, Serialize)]
pub struct SessionPrompts {
    /// The checkpoint.
    pub checkpoint_id: String,
    /// The session's slot.
    pub session_index: usize,
    /// The session ID.
    pub session_id: String,
    /// The agent.
    pub agent: String,
    /// The model.
    pub model: String,
    /// Its prompts, in order (empty when its transcript could not be read).
    pub prompts: Vec<PromptEntry>,
}

/// The result of `why`.
#[derive(Debug, Clone, Serialize)]
pub struct WhyReport {
    /// The file as named.
    pub file: String,
    /// The revision (`None`: the working tree).
    pub rev: Option<String>,
    /// The line, as `blame` labels it.
    #[serde(flatten)]
    pub line: LineEntry,
    /// The commit.
    pub commit_info: CommitEntry,
    /// For `agent` lines: the session and the prompt that led to the write.
    pub agent_write: Option<WhyWrite>,
    /// For other lines with checkpoints: every session's prompts.
    pub sessions: Vec<SessionPrompts>,
    /// The linked checkpoints as `blame` read them (`checkpoints` is the line's list of IDs).
    pub checkpoints_read: Vec<CheckpointEntry>,
    /// As for [`BlameReport::warnings`].
    pub warnings: Vec<String>,
    /// As for [`BlameReport::damaged`].
    #[serde(skip)]
    pub damaged: bool,
}

/// The file and line `why` is asked about: `target` is `FILE:LINE`, or `FILE` when `line`
/// (`-L`) is given; lines count from 1.
pub fn why_target(target: &str, line: Option<&str>) -> Result<(String, usize), WhyError> {
    let (path, line) = match line {
        Some(l) => (target, l),
        None => target.rsplit_once(':').ok_or_else(|| {
            WhyError::BadTarget(format!("{target}: expected FILE:LINE, or FILE -L LINE"))
        })?,
    };
    let n = line
        .parse::<usize>()
        .ok()
        .filter(|&n| n > 0 && !path.is_empty())
        .ok_or_else(|| {
            WhyError::BadTarget(format!("{target}: {line:?} is not a line number (from 1)"))
        })?;
    Ok((path.to_owned(), n))
}

/// `why`: the line of the blame `started`, with the write and the prompt behind it; `remote`
/// as for [`blame`].
pub fn why(
    repo: &Repo,
    topo: &Topology<'_>,
    started: StartedWhy,
    remote: Option<&Remote>,
    notice: impl Fn(&str) + Clone + 'static,
) -> Result<WhyReport, WhyError> {
    let StartedWhy { blame, line } = started;
    let path = blame.0.path().to_owned();
    let out_of_range = |lines| WhyError::OutOfRange {
        path: path.clone(),
        line,
        lines,
    };
    let a = match attribute(repo, topo, blame, remote, notice) {
        Ok(a) => a,
        Err(BlameError::Rejected { message, .. }) if message.contains("has only") => {
            // git: "file <path> has only <n> lines".
            let lines = message
                .rsplit_once("has only ")
                .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
                .unwrap_or(0);
            return Err(out_of_range(lines));
        }
        Err(e) => return Err(e.into()),
    };
    let Attributed { report, loaded } = a;
    let Some(entry) = report.lines.into_iter().next() else {
        return Err(out_of_range(0));
    };
    let commit_info = report
        .commits
        .into_iter()
        .next()
        .expect("a blamed line has its commit");
    let cp_index = |id: &str| {
        report
            .checkpoints
            .iter()
            .position(|c| c.checkpoint_id == id)
    };
    let agent_write = entry.write.as_ref().and_then(|w| {
        let l = &loaded[cp_index(&w.checkpoint_id)?];
        let meta = &l.cp.as_ref()?.sessions[w.session_index];
        let writes = l.sessions[w.session_index].as_ref()?;
        Some(WhyWrite {
            write: w.clone(),
            agent: meta.agent.clone(),
            model: meta.model.clone(),
            prompt: w.prompt.map(|p| prompt_entry(&writes.prompts[p])),
        })
    });
    let mut sessions = Vec::new();
    if agent_write.is_none() {
        for (c, l) in report.checkpoints.iter().zip(&loaded) {
            let Some(cp) = &l.cp else { continue };
            for (slot, meta) in cp.sessions.iter().enumerate() {
                let prompts = l.sessions[slot]
                    .as_ref()
                    .map(|w| w.prompts.iter().map(prompt_entry).collect())
                    .unwrap_or_default();
                sessions.push(SessionPrompts {
                    checkpoint_id: c.checkpoint_id.clone(),
                    session_index: slot,
                    session_id: meta.session_id.clone(),
                    agent: meta.agent.clone(),
                    model: meta.model.clone(),
                    prompts,
                });
            }
        }
    }
    Ok(WhyReport {
        file: report.file,
        rev: report.rev,
        line: entry,
        commit_info,
        agent_write,
        sessions,
        checkpoints_read: report.checkpoints,
        warnings: report.warnings,
        damaged: report.damaged,
    })
}

fn prompt_entry(p: &agent_writes::Prompt) -> PromptEntry {
    PromptEntry {
        text: p.text.clone(),
        timestamp: p.timestamp.clone(),
        transcript_line: p.entry,
    }
}
