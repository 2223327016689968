//! The read use cases: one file of a checkpoint (`cat`), its history (`log`), what `list`
//! shows (the stores' listing, with `--remote` the remote's too) and how many checkpoints the
//! checkpoint remote holds that are not here.

use crate::base::error::ExitStatus;
use crate::git::repo::Repo;
use crate::git::url::Remote;
use crate::ops::resolve;
use crate::ops::sync::{self, SyncError};
use crate::store::StoreError;
use crate::topology::{Topology, TopologyError};

pub use crate::remote::misses::age;
pub use crate::store::refs::IndexDamage;
pub use crate::store::{CheckpointInfo, CommitInfo, ListLine};
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
        }
    }
}
