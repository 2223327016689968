//! `git entire-checkpoint gc`: drop local checkpoint refs their delivery remote already holds.

use std::time::SystemTime;

use anyhow::Result;
use serde_json::{json, Value};

use entire_checkpoints::git::refname::CheckpointRef;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::gc::{self, GcReport};
use entire_checkpoints::remote::checkpoint_remote;
use entire_checkpoints::topology::Topology;

use crate::common;

/// What the command was asked.
pub struct GcArgs {
    /// `--keep-days`, else the setting.
    pub keep_days: Option<u32>,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `--json`.
    pub json: bool,
    /// `--quiet`.
    pub quiet: bool,
}

fn id_of(name: &str) -> String {
    CheckpointRef::parse(name)
        .map(|r| r.id().to_string())
        .unwrap_or_else(|_| name.to_owned())
}

fn report_json(days: u32, dry_run: bool, r: &GcReport) -> Value {
    let kept: serde_json::Map<String, Value> = r
        .kept
        .iter()
        .map(|(reason, refs)| (reason.name().to_owned(), json!(refs.len())))
        .collect();
    json!({
        "enabled": true,
        "dry_run": dry_run,
        "keep_days": days,
        "remote": r.remote,
        "remote_count": r.remote_count,
        "deleted": r.deleted.iter().map(|n| id_of(n)).collect::<Vec<_>>(),
        "kept": kept,
    })
}

fn report_human(days: u32, dry_run: bool, r: &GcReport) -> String {
    let verb = if dry_run { "Would delete" } else { "Deleted" };
    let mut text = format!(
        "{verb} {} local checkpoint ref(s) confirmed on {} and older than {days} day(s).\n",
        r.deleted.len(),
        r.remote
    );
    if !r.kept.is_empty() {
        let parts: Vec<String> = r
            .kept
            .iter()
            .map(|(reason, refs)| format!("{} {}", refs.len(), reason.name().replace('_', " ")))
            .collect();
        text.push_str(&format!("Kept: {}.\n", parts.join(", ")));
    }
    text
}

/// Runs gc with the retention of `args` or the settings; off (a note, nothing deleted) when
/// neither gives one. Refused (unless a dry run) while a settings file does not parse: which
/// remote confirms a checkpoint is a setting.
pub fn run(repo: &Repo, topo: &Topology<'_>, args: GcArgs) -> Result<()> {
    if !args.dry_run {
        topo.check_writable()?;
    }
    let days = match args.keep_days {
        Some(d) => Some(d),
        None => gc::days_from_settings(repo)?,
    };
    let Some(days) = days else {
        if args.json {
            return crate::print_json(&json!({"enabled": false, "deleted": []}));
        }
        common::warn(
            args.quiet,
            format!("gc is off: pass --keep-days N or set strategy_options.{} in .entire/settings.json; nothing deleted", gc::SETTING),
        );
        return Ok(());
    };
    let target = checkpoint_remote::resolve(repo, None)?;
    let report = gc::run(
        repo,
        topo.refs_store(),
        target.as_ref(),
        days,
        SystemTime::now(),
        args.dry_run,
    )?;
    for (name, why) in &report.misshapen {
        common::warn(
            args.quiet,
            format!("{name} is not a checkpoint ({why}); kept, and never pushed: fix or delete it (git update-ref -d {name})"),
        );
    }
    if args.json {
        crate::print_json(&report_json(days, args.dry_run, &report))
    } else {
        common::write_stdout(report_human(days, args.dry_run, &report).as_bytes())
    }
}
