//! `push` and `migrate [--push]`.

use serde::Serialize;

use entire_checkpoints::base::id::CheckpointId;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::migrate::{self, MigrateReport};
use entire_checkpoints::ops::sync::{self, BranchPush, Synced};
use entire_checkpoints::ops::{Remote, Topology};

use crate::common::cli::warn;
use crate::common::error::Result;
use crate::common::output::print_json;
use crate::common::progress::Bar;

/// `push`: the push of the refs due (`--all`: of every ref the remote lacks), reported on
/// stderr, or as one [`PushDoc`] on stdout with `json`.
pub fn push(
    repo: &Repo,
    topo: &Topology<'_>,
    remote: Option<Remote>,
    all: bool,
    json: bool,
    quiet: bool,
) -> Result<()> {
    let bar = Bar::new("pushing checkpoint refs", quiet);
    let ask = sync::PushAsk {
        via: remote.as_deref(),
        named: remote.is_some(),
        reconcile: all,
        retry_refused: true,
    };
    let synced = sync::push(repo, topo, ask, &|done, total| bar.set(done, total))?;
    bar.finish();
    crate::common::push::report(
        &synced,
        Some("nothing pushed, checkpoints stay queued"),
        quiet || json,
    );
    if json {
        print_json(&PushDoc::from(&synced))?;
    }
    // Refused refs stay queued; a script must not take the push for a success.
    match &synced {
        Synced::Refs(flushed) if !flushed.report.rejected.is_empty() => Err(format!(
            "{} refused {} checkpoint ref(s); they stay queued",
            flushed.report.destination,
            flushed.report.rejected.len()
        )
        .into()),
        _ => Ok(()),
    }
}

/// `migrate`, then with `--push` the push of the migrated refs.
pub fn migrate(
    repo: &Repo,
    topo: &Topology<'_>,
    dry_run: bool,
    push: Option<Option<Remote>>,
    json: bool,
    quiet: bool,
) -> Result<()> {
    let bar = Bar::new("migrating checkpoints", quiet);
    let report = migrate::migrate_branch_to_refs(repo, topo, dry_run, &mut |done, total| {
        bar.set(done, total)
    })?;
    bar.finish();
    if !json {
        tell_migrated(&report, dry_run, quiet);
    }
    let synced = match push {
        Some(remote) if !dry_run => {
            let bar = Bar::new("pushing checkpoint refs", quiet);
            let ask = sync::PushAsk {
                via: remote.as_deref(),
                named: remote.is_some(),
                reconcile: false,
                retry_refused: true,
            };
            let synced = sync::flush(repo, topo, ask, &|done, total| bar.set(done, total))?;
            bar.finish();
            crate::common::push::report(
                &synced,
                Some("refs stay queued for the next push"),
                quiet || json,
            );
            Some(synced)
        }
        _ => None,
    };
    if json {
        print_json(&MigrateDoc::new(&report, dry_run, synced.as_ref()))?;
    }
    if !report.skipped.is_empty() {
        return Err(format!(
            "{} v1 entr(ies) could not be migrated",
            report.skipped.len()
        )
        .into());
    }
    Ok(())
}

/// What a migration did, for people: warnings on stderr, one summary line on stdout.
fn tell_migrated(report: &MigrateReport, dry_run: bool, quiet: bool) {
    for (name, why) in &report.misshapen {
        warn(
            quiet,
            format!("{name} is not a checkpoint ({why}); it is never pushed: fix or delete it (git update-ref -d {name})"),
        );
    }
    if let Some(why) = &report.fetch_failed {
        warn(
            quiet,
            format!("could not fetch origin's archived checkpoint layouts: {why}; migrating what is here"),
        );
    }
    if report.source.is_none() {
        println!("No checkpoints found on the v1 branch \u{2014} nothing to migrate.");
        return;
    }
    if let Some(why) = &report.pack_failed {
        warn(quiet, format!("could not pack the checkpoint refs: {why}"));
    }
    // Where each checkpoint came from, when more than the v1 branch gave some.
    if report.sources.iter().any(|s| s.layout != "v1-branch") {
        for s in &report.sources {
            let verb = if dry_run { "would take" } else { "took" };
            let mut line = format!(
                "{} ({}): {verb} {} checkpoint(s), {} already up to date",
                s.name,
                s.layout,
                s.migrated.len(),
                s.up_to_date.len()
            );
            let mut generations: Vec<&str> =
                s.transcripts.iter().map(|(_, _, g)| g.as_str()).collect();
            generations.sort_unstable();
            generations.dedup();
            if !generations.is_empty() {
                line.push_str(&format!(
                    "; {} raw transcript(s) from {}",
                    s.transcripts.len(),
                    generations.join(", ")
                ));
            }
            crate::common::cli::to_stderr(&format!("{line}\n"));
        }
    }
    for (path, reason) in &report.skipped {
        warn(quiet, format!("skipped v1 entry {path}: {reason}"));
    }
    let verb = if dry_run { "Would migrate" } else { "Migrated" };
    println!(
        "{verb} {} checkpoint(s) to refs ({} already up to date, {} total).",
        report.migrated.len(),
        report.up_to_date.len(),
        report.total()
    );
}

/// A ref and why it did not land, or a path and why it was skipped.
#[derive(Serialize)]
struct Refusal<'a> {
    #[serde(rename = "ref")]
    name: &'a str,
    reason: &'a str,
}

fn refusals(list: &[(String, String)]) -> Vec<Refusal<'_>> {
    list.iter()
        .map(|(name, reason)| Refusal { name, reason })
        .collect()
}

/// `push --json`: one shape whatever the store and the settings.
#[derive(Serialize)]
struct PushDoc<'a> {
    /// `git-refs` (checkpoint refs) or `git-branch` (the v1 branch).
    store: &'static str,
    /// Where the checkpoints went, credentials redacted; `null` when pushing is off.
    destination: Option<String>,
    /// The settings file that turned pushing off (`strategy_options.push_sessions: false`).
    disabled_by: Option<&'a str>,
    /// Refs due for the destination.
    due: usize,
    pushed: &'a [String],
    /// How many of `pushed` are new on the remote.
    created: usize,
    /// Refs merged with the remote's version, then pushed.
    recovered: &'a [String],
    rejected: Vec<Refusal<'a>>,
    failed: Vec<Refusal<'a>>,
    /// Refs still queued for the destination.
    remaining: usize,
    /// Why the push stopped early.
    stopped: Option<&'a str>,
    /// The v1 branch's push (git-branch primary): `pushed`, `up-to-date`, `nothing-to-push`,
    /// `deferred`.
    branch: Option<&'static str>,
    /// Merge decisions made on the way.
    notes: &'a [String],
}

impl<'a> From<&'a Synced> for PushDoc<'a> {
    fn from(synced: &'a Synced) -> Self {
        let empty = PushDoc {
            store: "git-refs",
            destination: None,
            disabled_by: None,
            due: 0,
            pushed: &[],
            created: 0,
            recovered: &[],
            rejected: Vec::new(),
            failed: Vec::new(),
            remaining: 0,
            stopped: None,
            branch: None,
            notes: &[],
        };
        match synced {
            Synced::Disabled(off) => PushDoc {
                disabled_by: Some(&off.file),
                ..empty
            },
            Synced::Refs(flushed) => {
                let r = &flushed.report;
                PushDoc {
                    destination: Some(r.destination.clone()),
                    due: r.due,
                    pushed: &r.pushed,
                    created: r.created,
                    recovered: &r.recovered,
                    rejected: refusals(&r.rejected),
                    failed: refusals(&r.failed),
                    remaining: r.remaining(),
                    stopped: r.stopped.as_deref(),
                    notes: &r.merge_notes,
                    ..empty
                }
            }
            Synced::Branch { remote, outcome } => PushDoc {
                store: "git-branch",
                destination: Some(remote.to_string()),
                branch: Some(match outcome {
                    BranchPush::NothingToPush => "nothing-to-push",
                    BranchPush::UpToDate => "up-to-date",
                    BranchPush::Deferred => "deferred",
                    BranchPush::Pushed { .. } => "pushed",
                }),
                notes: match outcome {
                    BranchPush::Pushed { notes } => notes,
                    _ => &[],
                },
                ..empty
            },
        }
    }
}

/// `migrate --json`.
#[derive(Serialize)]
struct MigrateDoc<'a> {
    dry_run: bool,
    /// The v1 branch read; `null` when there is none.
    source: Option<&'a str>,
    migrated: &'a [CheckpointId],
    up_to_date: &'a [CheckpointId],
    /// v1 entries that could not be migrated, by path in the v1 tree.
    skipped: Vec<Refusal<'a>>,
    /// Checkpoint refs that are not checkpoints.
    misshapen: Vec<Refusal<'a>>,
    pack_failed: Option<&'a str>,
    /// Each ref read and what it gave.
    sources: Vec<SourceDoc<'a>>,
    /// Why origin's copies of the archived layouts could not be fetched.
    fetch_failed: Option<&'a str>,
    /// The push of `--push` (`null` without it, or with `--dry-run`).
    push: Option<PushDoc<'a>>,
}

/// One ref a migration read.
#[derive(Serialize)]
struct SourceDoc<'a> {
    #[serde(rename = "ref")]
    name: &'a str,
    layout: &'a str,
    migrated: &'a [CheckpointId],
    up_to_date: &'a [CheckpointId],
    transcripts: Vec<TranscriptDoc<'a>>,
}

/// A v2 session's raw transcript a migration imported, and where from.
#[derive(Serialize)]
struct TranscriptDoc<'a> {
    checkpoint_id: &'a CheckpointId,
    session_index: usize,
    from: &'a str,
}

impl<'a> MigrateDoc<'a> {
    fn new(report: &'a MigrateReport, dry_run: bool, synced: Option<&'a Synced>) -> Self {
        MigrateDoc {
            dry_run,
            source: report.source.as_deref(),
            migrated: &report.migrated,
            up_to_date: &report.up_to_date,
            skipped: refusals(&report.skipped),
            misshapen: refusals(&report.misshapen),
            pack_failed: report.pack_failed.as_deref(),
            sources: report
                .sources
                .iter()
                .map(|s| SourceDoc {
                    name: &s.name,
                    layout: s.layout,
                    migrated: &s.migrated,
                    up_to_date: &s.up_to_date,
                    transcripts: s
                        .transcripts
                        .iter()
                        .map(|(id, session, from)| TranscriptDoc {
                            checkpoint_id: id,
                            session_index: *session,
                            from,
                        })
                        .collect(),
                })
                .collect(),
            fetch_failed: report.fetch_failed.as_deref(),
            push: synced.map(PushDoc::from),
        }
    }
}
