//! `trust`: what the committed settings file asks for, and its approval, as lines or one JSON
//! document.

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::trust::{self, TrustReport, TrustState};

use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

/// `trust [--revoke] [--dry-run] [--json]`.
pub fn run(repo: &Repo, revoke: bool, dry_run: bool, json: bool) -> Result<()> {
    let (report, then) = if revoke {
        let (report, removed) = trust::revoke(repo)?;
        let then = if removed {
            "approval revoked: checkpoints go where they would go without these settings"
        } else {
            "nothing to revoke: the file was not approved"
        };
        (report, then)
    } else {
        let report = trust::approve(repo, dry_run)?;
        let then = match (dry_run, report.state) {
            (true, TrustState::Approved) => "already approved",
            (true, _) => "not approved (dry run): `git entire-checkpoint trust` approves it",
            (false, _) => {
                "approved: these settings are used from now on; a change to the file needs approval again, and `git entire-checkpoint trust --revoke` takes it back"
            }
        };
        (report, then)
    };
    if json {
        return print_json(&report);
    }
    write_stdout(human(&report, then).as_bytes())
}

fn human(r: &TrustReport, then: &str) -> String {
    let mut out = match &r.digest {
        Some(d) => format!("{} (sha256 {})\n", r.file, &d[..d.len().min(16)]),
        None => format!("{} (none)\n", r.file),
    };
    if let Some(remote) = &r.checkpoint_remote {
        out.push_str(&format!(
            "  checkpoint remote  {remote}: checkpoints are pushed there (and fetched from there) instead of your code remote\n"
        ));
    }
    if let Some(why) = &r.refused {
        out.push_str(&format!("  checkpoint remote  refused: {why}\n"));
    }
    for m in &r.mirrors {
        let config = m
            .config
            .as_ref()
            .map(|c| format!(" {c}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  mirror             {}{config}: every checkpoint is also written there\n",
            m.kind
        ));
    }
    if !r.needs_approval() {
        out.push_str("  asks for no checkpoint remote and no mirror outside git\n");
    }
    if !r.redaction_rules.is_empty() {
        out.push_str(&format!(
            "  redaction rules    {} (added to the built-in rules, approved or not)\n",
            r.redaction_rules.join(", ")
        ));
    }
    for ignored in &r.redaction_ignored {
        out.push_str(&format!("  ignored            {ignored}\n"));
    }
    if let Some(asked) = r.hook_budget_seconds {
        out.push_str(&format!(
            "  hook budget        {asked}s asked, {}s applies (a committed file can only shorten it)\n",
            r.effective_hook_budget_seconds
        ));
    }
    out.push_str(then);
    out.push('\n');
    out
}
