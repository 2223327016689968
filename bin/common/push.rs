//! What `push`, `migrate --push` and the pre-push hook say about a push (the policy is
//! `ops::sync`), the hook budget, and what a hook says when it heals the others.

use entire_checkpoints::ops::sync::{BranchPush, Flushed, Synced};

use super::cli::{info, warn};

/// Starts a hook: its informational lines follow the quietness of the git command that runs it
/// (`cli::GIT_QUIET`), and its network work is bounded: no network git call of this process
/// runs past the hook budget (`push::hook_budget`) counted from `started`, so a stalled remote
/// cannot hold the user's git command. Returns the budget.
pub fn bound_hook(
    repo: &entire_checkpoints::git::repo::Repo,
    started: std::time::Instant,
) -> std::time::Duration {
    let quiet = entire_checkpoints::base::invoker::invoking_git()
        .is_some_and(|args| entire_checkpoints::base::invoker::is_quiet(&args));
    super::cli::GIT_QUIET.store(quiet, std::sync::atomic::Ordering::Relaxed);
    let budget = entire_checkpoints::remote::push::hook_budget(repo);
    log::debug!("hook budget: {}s", budget.as_secs());
    entire_checkpoints::git::subprocess::set_network_deadline(started + budget);
    budget
}

/// Puts back those of our hooks another tool displaced ([`heal`]), from one of ours that runs:
/// one line when it put any back, a warning when it could not.
///
/// [`heal`]: entire_checkpoints::ops::hooks::heal
pub fn heal_hooks(repo: &entire_checkpoints::git::repo::Repo, quiet: bool) {
    match entire_checkpoints::ops::hooks::heal(repo) {
        Ok(_) if quiet => {}
        Ok(healed) => {
            if !healed.put_back.is_empty() {
                eprintln!(
                    "entire: put back our {} hook (another tool had replaced it; its hook is kept and runs too)",
                    healed.put_back.join(", ")
                );
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
                eprintln!(
                    "entire: {manager} had taken the place of our {} hook; {manager} runs ours now, from its configuration, and what ours ran keeps running",
                    hooks.join(", ")
                );
            }
            if !healed.lfs_removed.is_empty() {
                eprintln!(
                    "entire: git-lfs was uninstalled; removed the hooks its uninstall left behind ours: {}",
                    healed.lfs_removed.join(", ")
                );
            }
        }
        Err(e) => warn(
            quiet,
            format!(
                "our hooks could not be healed: {}; run git entire-checkpoint hooks install",
                entire_checkpoints::base::error::error_chain(&e)
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
    let attempted = report.due - report.stale.len() - report.withheld.len();
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
    if let Some((r, why)) = report.rejected.first() {
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
                "stopped pushing ({} checkpoint ref(s) stay queued for the next push): {why}",
                report.remaining()
            ),
        );
    }
}
