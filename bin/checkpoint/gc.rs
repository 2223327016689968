//! `git entire-checkpoint gc`: drop local checkpoint refs their delivery remote already holds.

use serde::Serialize;

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::gc::{self, GcOutcome, GcReport, KeepReason};
use entire_checkpoints::ops::Topology;

use crate::common::cli::warn;
use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

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

/// `gc --json`: one shape, whether gc ran or is off (then `keep_days`, `remote` and
/// `remote_count` are null and nothing was deleted or kept).
#[derive(Serialize)]
struct GcDoc {
    enabled: bool,
    dry_run: bool,
    keep_days: Option<u32>,
    remote: Option<String>,
    remote_count: Option<usize>,
    /// The checkpoint IDs of the refs deleted.
    deleted: Vec<String>,
    /// For every reason, how many refs were kept (0 included).
    #[serde(serialize_with = "as_map")]
    kept: Vec<(&'static str, usize)>,
}

fn as_map<S: serde::Serializer>(pairs: &[(&str, usize)], s: S) -> Result<S::Ok, S::Error> {
    s.collect_map(pairs.iter().map(|(k, v)| (k, v)))
}

impl GcDoc {
    fn of(days: u32, dry_run: bool, r: &GcReport) -> GcDoc {
        GcDoc {
            enabled: true,
            dry_run,
            keep_days: Some(days),
            remote: Some(r.remote.clone()),
            remote_count: Some(r.remote_count),
            deleted: r.deleted_ids(),
            kept: KeepReason::ALL
                .iter()
                .map(|reason| (reason.name(), r.kept.get(reason).map_or(0, Vec::len)))
                .collect(),
        }
    }

    fn off(dry_run: bool) -> GcDoc {
        GcDoc {
            enabled: false,
            dry_run,
            keep_days: None,
            remote: None,
            remote_count: None,
            deleted: Vec::new(),
            kept: KeepReason::ALL.iter().map(|r| (r.name(), 0)).collect(),
        }
    }
}

/// gc's run with a retention of `days`, in words: what it deleted and kept.
pub(super) fn report_human(days: u32, dry_run: bool, r: &GcReport) -> String {
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

/// Runs gc ([`gc::collect`]) and renders what it did; off is a note.
pub fn run(repo: &Repo, topo: &Topology<'_>, args: GcArgs) -> Result<()> {
    let bar = crate::common::progress::Bar::new("examining checkpoint refs", args.quiet);
    let collected = gc::collect(repo, topo, args.keep_days, args.dry_run, &|done, total| {
        bar.set(done, total)
    });
    bar.finish();
    let (days, report) = match collected? {
        GcOutcome::Ran { keep_days, report } => (keep_days, report),
        GcOutcome::Off => {
            if args.json {
                return print_json(&GcDoc::off(args.dry_run));
            }
            let note = format!(
                "gc is off: pass --keep-days N or set strategy_options.{} in .entire/settings.json; nothing deleted",
                gc::SETTING
            );
            warn(args.quiet, note);
            return Ok(());
        }
    };
    for (name, why) in &report.misshapen {
        warn(
            args.quiet,
            format!("{name} is not a checkpoint ({why}); kept, and never pushed: fix or delete it (git update-ref -d {name})"),
        );
    }
    if args.json {
        print_json(&GcDoc::of(days, args.dry_run, &report))
    } else {
        write_stdout(report_human(days, args.dry_run, &report).as_bytes())
    }
}
