//! Bounding the local checkpoint namespace: `git entire-checkpoint gc`.
//!
//! Every local ref costs every `git fetch` of the clone (about 10 µs per ref, measured with git
//! 2.47). A checkpoint ref can be dropped locally once its delivery remote has it at the same
//! commit: reads fetch it back on demand. So gc deletes a local checkpoint ref only when all of
//! these hold, judged against one `ls-remote` of the checkpoint prefix:
//!
//! - no push queue holds it (shared or per destination);
//! - the remote has it, at exactly the local commit (never an unpushed, ahead, behind or
//!   diverged one);
//! - its tip commit is older than the retention period.
//!
//! Deletion is a compare-and-swap against the commit that was checked (`git update-ref --stdin`
//! with the old value), so a ref that moves meanwhile survives. The namespace is packed
//! afterwards, which is what keeps the many survivors cheap for git.

use std::collections::{BTreeMap, HashMap};
use std::time::{SystemTime, UNIX_EPOCH};

use crate::git::objects::Oid;

use crate::config::settings::SettingsFiles;
use crate::git::refname::{CheckpointRef, CHECKPOINT_REF_PREFIX};
use crate::git::refs::{RefEdit, RefUpdateError};
use crate::git::repo::{Repo, RepoError};
use crate::remote::checkpoint_remote::{CheckpointRemoteError, CheckpointTarget};
use crate::remote::fetch::Fetcher;
use crate::store::on_demand::FetchError;
use crate::store::queue::QueueError;
use crate::store::refs::GitRefsStore;
use crate::store::StoreError;
use crate::topology::{Topology, TopologyError};

/// The settings key (under `strategy_options`) of the default retention in days.
pub const SETTING: &str = "checkpoint_gc_days";

/// Errors of a gc run. Every one of them means nothing was deleted (or, for
/// [`GcError::Delete`], only what the report says).
#[derive(Debug, thiserror::Error)]
pub enum GcError {
    /// No remote to confirm the checkpoints against.
    #[error("no remote to confirm checkpoints against, so none was deleted: add a remote or set strategy_options.checkpoint_remote")]
    NoRemote,
    /// The remote could not be listed.
    #[error("could not list the checkpoints of {remote}, so none was deleted")]
    Listing {
        /// The remote, credentials redacted.
        remote: String,
        /// The fetch error.
        #[source]
        source: FetchError,
    },
    /// `strategy_options.checkpoint_gc_days` is not a whole number of days.
    #[error("invalid strategy_options.{SETTING} in {file}: {value} is not a whole number of days (0 or more)")]
    BadSetting {
        /// The settings file.
        file: String,
        /// The value found.
        value: String,
    },
    /// A push queue could not be read: nothing is deleted, since a queued ref must survive.
    #[error(transparent)]
    Queue(#[from] QueueError),
    /// The repository failed underneath.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A settings file does not parse, so nothing is deleted: which remote confirms a
    /// checkpoint is a setting.
    #[error(transparent)]
    Settings(#[from] TopologyError),
    /// The checkpoint remote of the settings is invalid.
    #[error(transparent)]
    Remote(#[from] CheckpointRemoteError),
    /// The deletion failed (for another reason than refs moving meanwhile, which keeps them).
    #[error("could not delete the checkpoint refs")]
    Refs(#[source] RefUpdateError),
    /// The packing failed.
    #[error("could not pack the checkpoint refs")]
    Pack(#[source] RepoError),
}

/// Why a local checkpoint ref was kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeepReason {
    /// A push queue holds it.
    Queued,
    /// The remote does not have it.
    Unpushed,
    /// The local commit descends from the remote's.
    Ahead,
    /// The remote has another commit (behind, or diverged).
    Diverged,
    /// Its tip is newer than the retention period.
    TooNew,
    /// It moved between the check and the deletion.
    Moved,
    /// It is not a checkpoint (a tree or tag, or a commit without one): never deleted by gc,
    /// reported for the user to look at.
    NotACheckpoint,
}

impl KeepReason {
    /// Every reason, in the order reports list them.
    pub const ALL: [KeepReason; 7] = [
        KeepReason::Queued,
        KeepReason::Unpushed,
        KeepReason::Ahead,
        KeepReason::Diverged,
        KeepReason::TooNew,
        KeepReason::Moved,
        KeepReason::NotACheckpoint,
    ];

    /// The name used in `--json`.
    pub fn name(self) -> &'static str {
        match self {
            KeepReason::Queued => "queued",
            KeepReason::Unpushed => "unpushed",
            KeepReason::Ahead => "ahead",
            KeepReason::Diverged => "diverged",
            KeepReason::TooNew => "too_new",
            KeepReason::Moved => "moved",
            KeepReason::NotACheckpoint => "not_a_checkpoint",
        }
    }
}

/// What a gc run did (or, dry, would do).
#[derive(Debug, Default)]
pub struct GcReport {
    /// The remote the checkpoints were confirmed on, as shown.
    pub remote: String,
    /// How many checkpoint refs the remote listed.
    pub remote_count: usize,
    /// The refs deleted (or to delete, dry).
    pub deleted: Vec<String>,
    /// The refs kept, by reason.
    pub kept: BTreeMap<KeepReason, Vec<String>>,
    /// The refs that are not checkpoints, with why (also kept as [`KeepReason::NotACheckpoint`]).
    pub misshapen: Vec<(String, String)>,
}

impl GcReport {
    /// The checkpoint IDs of the refs deleted, in order (a ref that names none, whole).
    pub fn deleted_ids(&self) -> Vec<String> {
        self.deleted
            .iter()
            .map(|name| {
                CheckpointRef::parse(name)
                    .map(|r| r.id().to_string())
                    .unwrap_or_else(|_| name.to_owned())
            })
            .collect()
    }
}

/// The retention in days from settings (`None`: gc is off by default).
pub fn days_from_settings(repo: &Repo) -> Result<Option<u32>, GcError> {
    days_in(repo.settings())
}

/// The retention in days that `files` set, parsed as [`days_from_settings`] parses it.
pub fn days_in(files: &SettingsFiles) -> Result<Option<u32>, GcError> {
    let Some((value, _, file)) = files.strategy_option(SETTING) else {
        return Ok(None);
    };
    value
        .as_u64()
        .and_then(|d| u32::try_from(d).ok())
        .map(Some)
        .ok_or(GcError::BadSetting {
            file,
            value: value.to_string(),
        })
}

/// Whether gc is enabled in settings (a valid retention is set), for `hooks install`.
pub fn enabled_in_settings(repo: &Repo) -> bool {
    matches!(days_from_settings(repo), Ok(Some(_)))
}

fn seconds_since_epoch(t: SystemTime) -> i64 {
    t.duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

/// What `gc` did.
#[derive(Debug)]
pub enum GcOutcome {
    /// No retention was given and none is set: gc is off, nothing was deleted.
    Off,
    /// gc ran with this retention.
    Ran {
        /// The retention in days.
        keep_days: u32,
        /// What it deleted and kept.
        report: GcReport,
    },
}

/// gc as a command asks it: with `keep_days`, else the retention of the settings (off when
/// neither gives one), against the delivery remote of the settings, at the current time.
/// Refused unless `dry_run` while a settings file does not parse.
pub fn collect(
    repo: &Repo,
    topo: &Topology<'_>,
    keep_days: Option<u32>,
    dry_run: bool,
    progress: &dyn Fn(usize, usize),
) -> Result<GcOutcome, GcError> {
    if !dry_run {
        topo.check_writable()?;
    }
    let Some(keep_days) = keep_days.map_or_else(|| days_from_settings(repo), |d| Ok(Some(d)))?
    else {
        return Ok(GcOutcome::Off);
    };
    let target = crate::remote::checkpoint_remote::resolve(repo, None)?;
    let report = run(
        repo,
        topo.refs_store(),
        target.as_ref(),
        keep_days,
        SystemTime::now(),
        dry_run,
        progress,
    )?;
    Ok(GcOutcome::Ran { keep_days, report })
}

/// Deletes (unless `dry_run`) the local checkpoint refs confirmed on `target` at the same commit,
/// queued nowhere, and older than `keep_days` at `now`; then packs the namespace. `progress` is
/// told `(refs examined, local refs)` as the refs are examined.
pub fn run(
    repo: &Repo,
    refs_store: &GitRefsStore<'_>,
    target: Option<&CheckpointTarget>,
    keep_days: u32,
    now: SystemTime,
    dry_run: bool,
    progress: &dyn Fn(usize, usize),
) -> Result<GcReport, GcError> {
    let target = target.ok_or(GcError::NoRemote)?;
    let queued = crate::remote::destination::pending_refs(repo, refs_store)?;
    let local = refs_store.refs()?;
    let listed = Fetcher::new(repo, target.target.clone())
        .list_remote_tips()
        .map_err(|source| GcError::Listing {
            remote: target.display.clone(),
            source,
        })?;
    let remote: HashMap<&str, Oid> = listed
        .iter()
        .filter_map(|(r, oid)| Some((r.name(), repo.parse_oid(oid).ok()?)))
        .collect();
    let cutoff = seconds_since_epoch(now) - i64::from(keep_days) * 86_400;
    let mut report = GcReport {
        remote: target.display.clone(),
        remote_count: listed.len(),
        ..Default::default()
    };
    let mut doomed: Vec<(String, Oid)> = Vec::new();
    let total = local.len();
    for (n, (id, (name, oid))) in local.into_iter().enumerate() {
        progress(n, total);
        if let Some(why) = crate::store::refs::shape_problem(repo, &id, oid) {
            report.misshapen.push((name.clone(), why));
            report
                .kept
                .entry(KeepReason::NotACheckpoint)
                .or_default()
                .push(name);
            continue;
        }
        let reason = if queued.contains(&name) {
            Some(KeepReason::Queued)
        } else {
            match remote.get(name.as_str()) {
                None => Some(KeepReason::Unpushed),
                Some(theirs) if *theirs != oid => {
                    if repo.is_descendant_of(oid, *theirs).unwrap_or(false) {
                        Some(KeepReason::Ahead)
                    } else {
                        Some(KeepReason::Diverged)
                    }
                }
                Some(_) => {
                    let time = repo
                        .commit_time(oid)
                        .map_err(|e| StoreError::Repo(e.context("read checkpoint tip")))?;
                    (time > cutoff).then_some(KeepReason::TooNew)
                }
            }
        };
        match reason {
            Some(r) => report.kept.entry(r).or_default().push(name),
            None => doomed.push((name, oid)),
        }
    }
    progress(total, total);
    if dry_run {
        report.deleted = doomed.into_iter().map(|(n, _)| n).collect();
        return Ok(report);
    }
    let (deleted, moved) = delete_matching(repo, doomed)?;
    report.deleted = deleted;
    if !moved.is_empty() {
        report.kept.insert(KeepReason::Moved, moved);
    }
    pack_checkpoint_refs(repo)?;
    Ok(report)
}

/// Deletes each ref only if it still points at the commit checked: one `update-ref --stdin`
/// transaction; if a ref moved meanwhile (the transaction fails as a whole), the moved ones are
/// set aside and the rest tried again. Returns `(deleted, moved)`.
fn delete_matching(
    repo: &Repo,
    mut refs: Vec<(String, Oid)>,
) -> Result<(Vec<String>, Vec<String>), GcError> {
    let mut moved = Vec::new();
    for attempt in 0..2 {
        if refs.is_empty() {
            break;
        }
        let edits: Vec<RefEdit> = refs
            .iter()
            .map(|(name, oid)| RefEdit::Delete {
                name: name.clone(),
                old: *oid,
            })
            .collect();
        match repo.update_refs(&edits, "entire: gc") {
            Ok(()) => return Ok((refs.into_iter().map(|(n, _)| n).collect(), moved)),
            Err(e) if attempt == 1 || !e.lost_race() => return Err(GcError::Refs(e)),
            Err(_) => {}
        }
        let (same, changed): (Vec<_>, Vec<_>) = refs.into_iter().partition(|(name, oid)| {
            crate::store::publish::tip_of(repo, name).ok().flatten() == Some(*oid)
        });
        moved.extend(changed.into_iter().map(|(n, _)| n));
        refs = same;
    }
    Ok((Vec::new(), moved))
}

/// Packs the checkpoint namespace (`Repo::pack_refs`). Bulk writers call this when they are
/// done: thousands of loose ref files are what makes every git command slow.
pub fn pack_checkpoint_refs(repo: &Repo) -> Result<(), GcError> {
    repo.pack_refs(CHECKPOINT_REF_PREFIX).map_err(GcError::Pack)
}

impl crate::base::error::ExitStatus for GcError {
    fn exit_code(&self) -> i32 {
        match self {
            GcError::NoRemote | GcError::Listing { .. } | GcError::BadSetting { .. } => {
                crate::base::error::FAILURE
            }
            GcError::Refs(e) => e.exit_code(),
            GcError::Pack(e) => e.exit_code(),
            GcError::Queue(e) => e.exit_code(),
            GcError::Store(e) => e.exit_code(),
            GcError::Settings(e) => e.exit_code(),
            GcError::Remote(e) => e.exit_code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deletion_is_a_compare_and_swap_against_the_checked_commit() {
        let (dir, raw) = crate::git::test_repo::init();
        let one = crate::git::test_repo::empty_commit(&raw, "one");
        let two = crate::git::test_repo::empty_commit(&raw, "two");
        let a = "refs/entire/checkpoints/f6/a1b2c3d4e5f6";
        let b = "refs/entire/checkpoints/a1/f6e5d4c3b2a1";
        raw.reference(a, one, true, "t").unwrap();
        raw.reference(b, two, true, "t").unwrap();
        let repo = Repo::open(dir.path()).unwrap();

        // `b` moved after it was checked at `one`: it survives, `a` goes.
        let (deleted, moved) =
            delete_matching(&repo, vec![(a.to_owned(), one), (b.to_owned(), one)]).unwrap();
        assert_eq!(deleted, vec![a.to_owned()]);
        assert_eq!(moved, vec![b.to_owned()]);
        assert!(raw.find_reference(a).is_err());
        assert_eq!(raw.refname_to_id(b).unwrap(), two);
    }
}
