//! What `push`, `migrate --push` and the pre-push hook say about a push (the policy is
//! `ops::sync`), and what every hook says around its work (the runner is `ops::hook_runner`).

use entire_checkpoints::base::error::error_chain;
use entire_checkpoints::ops::hook_runner::{HookOutcome, HookReport};
use entire_checkpoints::ops::hooks::{Healed, HookError};
use entire_checkpoints::ops::sync::{refusal_advice, BranchPush, Flushed, Synced, DRAIN_NOW};

use super::cli::{info, warn};

/// Prints what a hook did ([`HookReport`]) on stderr, in its order: the hooks healed, the
/// settings warnings, what awaits approval, then the outcome, rendering what the hook did with
/// `done`. Informational lines follow the quietness of the git command running the hook too.
pub fn report_hook<T>(report: &HookReport<T>, quiet: bool, done: impl FnOnce(&T)) {
    super::cli::GIT_QUIET.store(report.git_quiet, std::sync::atomic::Ordering::Relaxed);
    if let Some(healed) = &report.healed {
        report_healed(healed, quiet);
    }
    match &report.promised {
        Some(Ok(Some(h))) => {
            for (sid, e) in &h.condensed.failed {
                warn(
                    quiet,
                    format!("session {sid} was not condensed into checkpoint {} (it stays staged; the next hook tries again): {e}", h.checkpoint),
                );
            }
            if !h.condensed.sessions.is_empty() {
                info(
                    quiet,
                    format!(
                        "checkpoint {} of commit {}: {} session(s) condensed (its post-commit had not finished)",
                        h.checkpoint,
                        &h.commit[..h.commit.len().min(12)],
                        h.condensed.sessions.len()
                    ),
                );
            }
        }
        Some(Err(e)) => warn(
            quiet,
            format!(
                "the checkpoint an earlier commit links is not written yet (the next hook tries again): {}",
                error_chain(e)
            ),
        ),
        Some(Ok(None)) | None => {}
    }
    super::cli::warn_settings(&report.settings_warnings, quiet);
    if let Some(pending) = &report.pending {
        warn(quiet, pending);
    }
    match &report.outcome {
        HookOutcome::Done(t) => done(t),
        HookOutcome::Skipped(why) => info(quiet, why),
        HookOutcome::Warning(w) => warn(quiet, w),
    }
}

/// What a hook says of healing ours: one line when it put any back, a warning when it could
/// not.
fn report_healed(healed: &Result<Healed, HookError>, quiet: bool) {
    match healed {
        Ok(_) if quiet => {}
        Ok(healed) => {
            if !healed.put_back.is_empty() {
                super::cli::to_stderr(&format!(
                    "entire: put back our {} hook (another tool had replaced it; its hook is kept and runs too)\n",
                    healed.put_back.join(", ")
                ));
            }
            let mut managers: Vec<&str> = healed.run_by.iter().map(|(_, m)| *m).collect();
            managers.dedup();
            for manager in managers {
                let hooks: Vec<&str> = healed
                    .run_by
                    .iter()
                    .filter(|(_, m)| *m == manager)
                    .map(|(h, _)| h.as_str())
                    .collect();
                super::cli::to_stderr(&format!(
                    "entire: {manager} had taken the place of our {} hook; {manager} runs ours now, from its configuration, and what ours ran keeps running\n",
                    hooks.join(", ")
                ));
            }
            if !healed.lfs_removed.is_empty() {
                super::cli::to_stderr(&format!(
                    "entire: git-lfs was uninstalled; removed the hooks its uninstall left behind ours: {}\n",
                    healed.lfs_removed.join(", ")
                ));
            }
        }
        Err(e) => warn(
            quiet,
            format!(
                "our hooks could not be healed: {}; run git entire-checkpoint hooks install",
                entire_checkpoints::base::error::error_chain(e)
            ),
        ),
    }
}

/// Reports a push on stderr: one progress line, then at most one example per kind of trouble.
/// When the settings turned pushing off, `disabled` says what that means for this command after
/// the setting is named (`None`: nothing is said, as in the pre-push hook).
pub fn report(synced: &Synced, disabled: Option<&str>, quiet: bool) {
    match synced {
        Synced::Disabled(off) => {
            if let Some(then) = disabled {
                warn(quiet, format!("{off}; {then}"));
            }
        }
        Synced::Refs(flushed) => report_flush(flushed, quiet),
        Synced::Branch { remote, outcome } => match outcome {
            BranchPush::NothingToPush | BranchPush::UpToDate => {}
            // A first branch pushed to an empty repository can become the forge's default
            // branch: the v1 branch waits until the code is there, and the user is told so.
            BranchPush::Deferred => warn(
                quiet,
                format!(
                    "entire/checkpoints/v1 was not pushed: {remote} has no branches yet (it could become the default branch); \
it is pushed by your next `git push` there, or now by `git entire-checkpoint push {remote}` once your branch is there"
                ),
            ),
            BranchPush::Pushed { notes } => {
                for note in notes {
                    info(quiet, note);
                }
                info(
                    quiet,
                    format!("pushing entire/checkpoints/v1 to {remote}... done"),
                );
            }
        },
    }
}

fn report_flush(flushed: &Flushed, quiet: bool) {
    if let Some(w) = &flushed.public_remote_warning {
        warn(quiet, w);
    }
    let report = &flushed.report;
    let d = &report.destination;
    if !report.withheld.is_empty() {
        warn(
            quiet,
            format!(
                "{} checkpoint ref(s) that {} received are not pushed to {d}: what a checkpoint remote received goes to another destination only when you name it (`git entire-checkpoint push <remote>`); they stay queued",
                report.withheld.len(),
                report.withheld_for.join(" and "),
            ),
        );
    }
    if !report.held_back.is_empty() {
        info(
            quiet,
            format!(
                "{} checkpoint ref(s) not sent to {d}, which refused them before (they stay queued; `git entire-checkpoint push` sends them now, `git entire-checkpoint doctor` says why)",
                report.held_back.len()
            ),
        );
    }
    let attempted =
        report.due - report.stale.len() - report.withheld.len() - report.held_back.len();
    if attempted == 0 {
        return;
    }
    let n = report.pushed.len();
    if n == attempted {
        info(
            quiet,
            format!("pushing {attempted} checkpoint ref(s) to {d}... done"),
        );
    } else {
        info(
            quiet,
            format!("pushing {attempted} checkpoint ref(s) to {d}... pushed {n} of {attempted}"),
        );
    }
    for note in &report.merge_notes {
        info(quiet, note);
    }
    if let Some(why) = &report.refused_namespace {
        warn(
            false,
            format!(
                "{d} refuses checkpoint refs (refs/entire/*), they stay queued: {why}; {}",
                refusal_advice(d)
            ),
        );
    } else if let Some((r, why)) = report.rejected.first() {
        warn(
            false,
            format!("{d} refused {r} {why} (showing one rejection); it stays queued"),
        );
    }
    if let Some((r, why)) = report.failed.first() {
        warn(
            false,
            format!("could not push {r} (showing one failure; it stays queued): {why}"),
        );
    }
    if let Some(why) = &report.stopped {
        warn(
            false,
            format!(
                "stopped pushing ({} checkpoint ref(s) stay queued for the next push): {why}; {DRAIN_NOW}",
                report.remaining()
            ),
        );
    }
}
