//! `push` and `migrate [--push]`.

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::git::url::Remote;
use entire_checkpoints::ops::{migrate, sync};
use entire_checkpoints::topology::Topology;

use crate::common::cli::warn;
use crate::common::error::Result;

/// `push`.
pub fn push(
    repo: &Repo,
    topo: &Topology<'_>,
    remote: Option<Remote>,
    all: bool,
    quiet: bool,
) -> Result<()> {
    let synced = sync::push(repo, topo, remote.as_deref(), all)?;
    crate::common::push::report(
        &synced,
        Some("nothing pushed, checkpoints stay queued"),
        quiet,
    );
    Ok(())
}

/// `migrate`, then with `--push` the push of the migrated refs.
pub fn migrate(
    repo: &Repo,
    topo: &Topology<'_>,
    dry_run: bool,
    push: Option<Option<Remote>>,
    quiet: bool,
) -> Result<()> {
    if !dry_run {
        topo.check_writable()?;
    }
    run_migrate(repo, topo, dry_run, quiet)?;
    match push {
        Some(_) if dry_run => Ok(()),
        Some(remote) => {
            let synced = sync::flush(repo, topo.refs_store(), remote.as_deref(), false)?;
            crate::common::push::report(&synced, Some("refs stay queued for the next push"), quiet);
            Ok(())
        }
        None => Ok(()),
    }
}

fn run_migrate(repo: &Repo, topo: &Topology<'_>, dry_run: bool, quiet: bool) -> Result<()> {
    use std::io::IsTerminal;
    let show_progress = !quiet && std::io::stderr().is_terminal();
    let mut progress = |done: usize, total: usize| {
        if show_progress {
            eprint!("\rentire: migrating checkpoints {done}/{total}");
            if done == total {
                eprintln!();
            }
        }
    };
    let report = migrate::migrate_branch_to_refs(repo, topo.refs_store(), dry_run, &mut progress)?;
    for (name, why) in &report.misshapen {
        warn(
            quiet,
            format!("{name} is not a checkpoint ({why}); it is never pushed: fix or delete it (git update-ref -d {name})"),
        );
    }
    if report.source.is_none() {
        println!("No checkpoints found on the v1 branch \u{2014} nothing to migrate.");
        return Ok(());
    }
    if let Some(why) = &report.pack_failed {
        warn(quiet, format!("could not pack the checkpoint refs: {why}"));
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
    if !report.skipped.is_empty() {
        return Err(format!(
            "{} v1 entr(ies) could not be migrated",
            report.skipped.len()
        )
        .into());
    }
    Ok(())
}
