//! The read use cases: the remote reads fetch missing checkpoints from, what `show` reads of a
//! checkpoint (its documents, a session's transcript, the commits that link it), one file of it
//! (`cat`), its history (`log`), what `list` shows (the stores' listing, with `--remote` the
//! remote's too) and how many checkpoints the checkpoint remote holds that are not here.

use serde_json::Value;

use crate::base::error::{error_chain, ExitStatus, FAILURE};
use crate::git::repo::{Identity, Repo};
use crate::git::url::Remote;
use crate::model::documents::prompt_subject;
use crate::ops::sync::{self, SyncError};
use crate::ops::writes_cache::WritesCache;
use crate::ops::{resolve, rewrites};
use crate::remote::checkpoint_remote::CheckpointRemoteError;
use crate::store::{StoreError, TaskName};
use crate::topology::{Topology, TopologyError};

pub use crate::agents::{conversation, AgentWrites, TranscriptFormat};
pub use crate::remote::misses::age;
pub use crate::store::archive::layout_of;
pub use crate::store::refs::IndexDamage;
pub use crate::store::{
    Checkpoint, CheckpointFiles, CheckpointInfo, CommitInfo, ListLine, StoreKind,
};
pub use crate::topology::Listing;

/// How long `list --remote --hydrate` fetches remote-only checkpoints before it lists the rest
/// bare.
const HYDRATE_BUDGET: std::time::Duration = std::time::Duration::from_secs(30);

/// Errors of the read commands.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// What was named could not be resolved or read.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// A store could not be read.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// There is no checkpoint remote to list.
    #[error(transparent)]
    Sync(#[from] SyncError),
    /// A stored document does not parse.
    #[error("{context}")]
    Corrupt {
        /// Which checkpoint and file.
        context: String,
        /// Why it does not parse.
        #[source]
        source: serde_json::Error,
    },
    /// What was asked for is not there (a session's transcript, any session).
    #[error("{0}")]
    Missing(String),
}

/// The remote reads fetch missing checkpoints from: none with `no_fetch`, else `remote`, else
/// the checkpoint remote, else origin, else the only remote (none without remotes).
pub fn fetch_remote(
    repo: &Repo,
    no_fetch: bool,
    remote: Option<&Remote>,
) -> Result<Option<Remote>, CheckpointRemoteError> {
    if no_fetch {
        return Ok(None);
    }
    Ok(match remote {
        Some(r) => Some(r.clone()),
        None => crate::remote::checkpoint_remote::resolve(repo, None)?.map(|t| t.target),
    })
}

/// The remote reads fetch from ([`fetch_remote`]); with `refresh`, what is held locally is read
/// again from it. The on-demand fetch is not turned on (`list <range>` fetches the range's
/// checkpoints itself; [`enable_fetch`] turns it on for the other reads).
pub fn choose_remote<'r>(
    repo: &'r Repo,
    topo: &mut Topology<'r>,
    (no_fetch, remote, refresh): (bool, Option<&Remote>, bool),
) -> Result<Option<Remote>, CheckpointRemoteError> {
    topo.set_refresh(refresh);
    fetch_remote(repo, no_fetch, remote)
}

/// Turns on the on-demand fetch of checkpoints missing locally from the remote
/// [`choose_remote`] gives (nothing without one: a miss is simply "not found"), its notices
/// told to `notice`. Returns the remote fetched from.
pub fn enable_fetch<'r>(
    repo: &'r Repo,
    topo: &mut Topology<'r>,
    ask: (bool, Option<&Remote>, bool),
    notice: impl Fn(&str) + 'static,
) -> Result<Option<Remote>, CheckpointRemoteError> {
    let remote = choose_remote(repo, topo, ask)?;
    if let Some(remote) = &remote {
        let fetcher = crate::remote::fetch::Fetcher::new(repo, remote.clone()).on_notice(notice);
        topo.enable_fetch_with(fetcher);
    }
    Ok(remote)
}

/// `show`: the checkpoints `target` names (an ID, a prefix, a commit with trailers), what is
/// not found told to `notice`.
pub fn checkpoints(
    repo: &Repo,
    topo: &Topology<'_>,
    target: &str,
    notice: impl Fn(&str),
) -> Result<Vec<Checkpoint>, ReadError> {
    Ok(resolve::checkpoints(repo, topo, target, notice)?)
}

/// What `show` reads of one checkpoint, through its tree opened once (a checkpoint may list
/// many sessions).
pub struct Documents<'t> {
    /// The tree, for the shown sessions' `metadata.json` read as they are written out
    /// (`--json` only).
    pub files: Option<Box<dyn CheckpointFiles + 't>>,
    /// `metadata.json` as stored (`--json`; null otherwise).
    pub summary: Value,
    /// The shown sessions' directories (`--json` only).
    pub dirs: Vec<String>,
    /// The slots of the shown sessions.
    pub slots: Vec<usize>,
    /// The first line of each shown session's first prompt, where it has one (human form).
    pub prompts: Vec<Option<String>>,
    /// What each shown session's transcript shows (human form): its writes, or why they could
    /// not be read; `None` when no transcript is stored.
    pub transcripts: Vec<Option<Result<AgentWrites, String>>>,
    /// The author of the checkpoint's commit.
    pub author: Identity,
}

/// Reads the documents of `cp`, of all sessions or only the one in slot `only`: as stored for
/// `--json` (without a writes `cache`); with a writes `cache` (the human form), the prompts and
/// what each session's transcript shows, beside what `cp` holds decoded.
pub fn documents<'t>(
    topo: &'t Topology<'_>,
    cp: &Checkpoint,
    only: Option<usize>,
    cache: Option<&WritesCache>,
) -> Result<Documents<'t>, ReadError> {
    let json = cache.is_none();
    let files = topo.files(cp)?;
    let summary = if json {
        let path = "metadata.json";
        let bytes = files.read(path)?;
        serde_json::from_slice(&bytes).map_err(|source| ReadError::Corrupt {
            context: format!("checkpoint {}: {path} is corrupt", cp.id),
            source,
        })?
    } else {
        Value::Null
    };
    let (mut dirs, mut slots, mut prompts, mut transcripts) = (vec![], vec![], vec![], vec![]);
    for (slot, dir) in cp.session_dirs.iter().enumerate() {
        if only.is_none_or(|o| o == slot) {
            slots.push(slot);
            if let Some(cache) = cache {
                // Only for people: a prompt that cannot be read is left out, never an error.
                let prompt = files.read(&format!("{dir}/prompt.txt")).ok();
                prompts.push(prompt.and_then(|p| prompt_subject(&p)));
                let writes = cache.session_writes(files.as_ref(), cp, dir);
                transcripts.push(writes.map_err(|e| error_chain(&e)).transpose());
            } else {
                dirs.push(dir.clone());
            }
        }
    }
    let author = topo.author(cp)?.unwrap_or_default();
    Ok(Documents {
        files: json.then_some(files),
        summary,
        dirs,
        slots,
        prompts,
        transcripts,
        author,
    })
}

/// The commits that link `cp`: the one its summary records, else those found by their trailers
/// (a checkpoint written by the reference records none). A failed search shows none: the rest
/// of `show` stands without it.
pub fn code_commits(
    repo: &Repo,
    map: Option<&rewrites::RewriteMap>,
    cp: &Checkpoint,
) -> Vec<String> {
    if !cp.summary.commit_sha.is_empty() {
        return vec![cp.summary.commit_sha.clone()];
    }
    rewrites::linking_commits(repo, map, &cp.id).unwrap_or_default()
}

/// The transcript of session `slot` of `cp` (default: the latest), handed to `read` as a
/// stream so that memory stays bounded whatever its size.
pub fn transcript<T>(
    topo: &Topology<'_>,
    cp: &Checkpoint,
    slot: Option<usize>,
    read: impl for<'s> FnOnce(Box<dyn std::io::Read + 's>) -> T,
) -> Result<T, ReadError> {
    let slot = match slot {
        Some(s) => s,
        None => cp
            .sessions
            .len()
            .checked_sub(1)
            .ok_or_else(|| ReadError::Missing("checkpoint has no sessions".to_owned()))?,
    };
    let dir = &cp.session_dirs[slot];
    let files = topo.files(cp)?;
    let stream = files
        .stream(&format!("{dir}/full.jsonl"))
        .map_err(|e| match e {
            StoreError::FileNotFound { id, .. } => {
                ReadError::Missing(format!("checkpoint {id}: session {slot} has no transcript"))
            }
            other => other.into(),
        })?;
    Ok(read(stream))
}

/// A subagent's task a checkpoint keeps: `tasks/<tool-use-id>/` (docs/format.md, "Subagent
/// tasks").
pub struct Task {
    /// The subagent's type, when its record says.
    pub subagent_type: Option<String>,
    /// Its transcript, or why there is none (the record's own reason, or the read's error).
    pub transcript: Result<Vec<u8>, String>,
}

/// The tasks `cp` keeps for the tool calls `calls` (the IDs a transcript gives them), by call
/// ID. A call whose ID could not be a task's directory, or for which `cp` keeps no task, has
/// none; a task's record is `task.json`, else the legacy `checkpoint.json`.
pub fn tasks<'c>(
    topo: &Topology<'_>,
    cp: &Checkpoint,
    calls: impl IntoIterator<Item = &'c str>,
) -> Result<std::collections::BTreeMap<String, Task>, ReadError> {
    let mut out = std::collections::BTreeMap::new();
    let mut calls = calls.into_iter().filter_map(TaskName::parse).peekable();
    if calls.peek().is_none() {
        return Ok(out);
    }
    let files = topo.files(cp)?;
    let absent = |e: &StoreError| matches!(e, StoreError::FileNotFound { .. });
    for call in calls {
        let dir = format!("tasks/{}", call.as_str());
        let record = match files.read(&format!("{dir}/task.json")) {
            Err(e) if absent(&e) => files.read(&format!("{dir}/checkpoint.json")),
            read => read,
        };
        let record = match record {
            Err(e) if absent(&e) => continue,
            Err(e) => Err(error_chain(&e)),
            Ok(bytes) => serde_json::from_slice::<Value>(&bytes)
                .map_err(|e| format!("{dir}: its record does not parse: {e}")),
        };
        let task = match record {
            Err(why) => Task {
                subagent_type: None,
                transcript: Err(why),
            },
            Ok(record) => {
                let text = |k: &str| record.get(k).and_then(Value::as_str).map(str::to_owned);
                let agent = text("agent_id").as_deref().and_then(TaskName::parse);
                let transcript = match agent {
                    Some(agent) => files
                        .read(&format!("{dir}/agent-{}.jsonl", agent.as_str()))
                        .map_err(|e| match absent(&e) {
                            true => text("transcript_unavailable_reason")
                                .unwrap_or_else(|| "no transcript was kept".to_owned()),
                            false => error_chain(&e),
                        }),
                    None => Err(text("transcript_unavailable_reason")
                        .unwrap_or_else(|| "its record names no agent".to_owned())),
                };
                Task {
                    subagent_type: text("subagent_type"),
                    transcript,
                }
            }
        };
        out.insert(call.as_str().to_owned(), task);
    }
    Ok(out)
}

/// `cat`: the file `path` of the checkpoint `target` names (as for `show`, what is not found
/// told to `notice`), as stored, handed to `read` as a stream so that memory stays bounded.
pub fn cat<T>(
    repo: &Repo,
    topo: &Topology<'_>,
    target: &str,
    path: &str,
    notice: impl Fn(&str),
    read: impl for<'s> FnOnce(Box<dyn std::io::Read + 's>) -> T,
) -> Result<T, ReadError> {
    let cp = resolve::checkpoint(repo, topo, target, notice)?;
    let files = topo.files(&cp)?;
    let stream = files.stream(path)?;
    Ok(read(stream))
}

/// `log`: the history of the checkpoint `target` names (as for `show`), newest first.
pub fn log(
    repo: &Repo,
    topo: &Topology<'_>,
    target: &str,
    notice: impl Fn(&str),
) -> Result<Vec<CommitInfo>, ReadError> {
    let cp = resolve::checkpoint(repo, topo, target, notice)?;
    Ok(topo.history(&cp)?)
}

/// What `list` is asked.
pub struct ListAsk {
    /// `--remote [<R>]`: list this remote's checkpoints too, or (`Some(None)`) the checkpoint
    /// remote's.
    pub remote: Option<Option<Remote>>,
    /// `--hydrate`: fetch the remote-only checkpoints' summaries (for a bounded time).
    pub hydrate: bool,
}

/// What `list` shows: the local listing as the stores hold it, or, with `--remote`, owned
/// entries.
pub enum Shown {
    /// The stores' listing.
    Local(Listing),
    /// The local and the remote's checkpoints.
    Remote(Vec<CheckpointInfo>),
}

impl Shown {
    /// Every line, newest first.
    pub fn lines(&self) -> Box<dyn Iterator<Item = ListLine<'_>> + '_> {
        match self {
            Shown::Local(listing) => Box::new(listing.lines()),
            Shown::Remote(entries) => Box::new(entries.iter().map(CheckpointInfo::line)),
        }
    }
}

/// What `list` found.
pub struct Listed {
    /// The checkpoints.
    pub shown: Shown,
    /// The summary index was damaged (and rebuilt).
    pub index_damage: Option<IndexDamage>,
    /// The remote that could not be listed, and why: the local checkpoints are listed only.
    pub remote_failure: Option<(Remote, String)>,
}

/// `list`: every checkpoint, newest first; with `ask.remote` the remote's too (with
/// `ask.hydrate` their summaries fetched for a bounded time, `progress` told
/// `(done, total)`).
pub fn list<'r>(
    repo: &'r Repo,
    topo: &Topology<'r>,
    ask: ListAsk,
    progress: &dyn Fn(usize, usize),
) -> Result<Listed, ReadError> {
    let Some(remote) = ask.remote else {
        let mut listing = topo.list()?;
        let index_damage = listing.index_damage.take();
        return Ok(Listed {
            shown: Shown::Local(listing),
            index_damage,
            remote_failure: None,
        });
    };
    let remote = match remote {
        Some(r) => r,
        None => sync::target(repo, None)?.target,
    };
    let listing = topo.list_with_remote(repo, &remote)?;
    let mut entries = listing.entries;
    let remote_failure = match listing.enumeration_error {
        Some(e) => Some((remote, e.reason())),
        None => {
            if ask.hydrate {
                topo.hydrate(repo, &remote, &mut entries, HYDRATE_BUDGET, progress);
            }
            None
        }
    };
    Ok(Listed {
        shown: Shown::Remote(entries),
        index_damage: listing.index_damage,
        remote_failure,
    })
}

/// Checkpoints the checkpoint remote holds that are not here.
pub struct RemoteOnly {
    /// The checkpoint remote, as shown.
    pub remote: String,
    /// How many.
    pub count: usize,
    /// How many seconds ago the remote was listed.
    pub age: u64,
}

/// How many checkpoints the checkpoint remote holds that `shown` does not (a fresh clone fetches
/// none), as its last listing showed, or one made now when none is remembered and `ask`.
/// `None` when there is no remote, it holds nothing more, or nothing is known.
pub fn remote_only(repo: &Repo, shown: &Shown, ask: bool) -> Option<RemoteOnly> {
    let Ok(Some(target)) = crate::remote::checkpoint_remote::resolve(repo, None) else {
        return None;
    };
    let local: std::collections::HashSet<&str> = shown.lines().map(|l| l.id).collect();
    let known =
        crate::topology::remote_not_here(repo, &target.target, |id| local.contains(id), ask);
    let (count, age) = known.filter(|(count, _)| *count > 0)?;
    Some(RemoteOnly {
        remote: target.display,
        count,
        age,
    })
}

impl ExitStatus for ReadError {
    fn exit_code(&self) -> i32 {
        match self {
            ReadError::Topology(e) => e.exit_code(),
            ReadError::Store(e) => e.exit_code(),
            ReadError::Sync(e) => e.exit_code(),
            ReadError::Corrupt { .. } | ReadError::Missing(_) => FAILURE,
        }
    }
}
