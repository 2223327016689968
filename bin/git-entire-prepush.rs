//! `git entire-prepush <remote> [<url>]`: the pre-push hook's entry point.
//!
//! Pushes the checkpoint refs queued for that remote before git sends the user's refs. It never
//! fails the user's push: checkpoint trouble is a warning and the refs stay queued.

mod prepush {
    pub mod args;
}
mod common {
    pub mod args;
    pub mod cli;
    pub mod error;
    pub mod push;
    pub mod text;
}

use std::process::ExitCode;
use std::time::Instant;

use common::cli::warn;
use common::error::{CliError, Result};
use entire_checkpoints::ops::sync::{self, SyncError};
use prepush::args::Cli;

fn main() -> ExitCode {
    // The hook budget counts from here: it bounds all the time this hook adds to `git push`.
    let started = Instant::now();
    common::cli::main_with(
        || {
            let cli = common::cli::parse::<Cli>().unwrap_or_else(|e| e.exit());
            cli.global.start();
            // git writes the refs it is pushing on stdin (`<local ref> <sha> <remote ref> <sha>`);
            // read it all, so git never sees a broken pipe.
            let mut input = String::new();
            let _ = std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut input);
            prepush(cli.remote, cli.url, &input, started, cli.global.quiet);
            Ok(())
        },
        None,
    )
}

/// Whether git's pre-push input names a remote ref of ours (the v1 branch or a checkpoint ref).
fn pushes_checkpoint_refs(input: &str) -> bool {
    input.lines().any(|line| {
        line.split(' ').nth(2).is_some_and(|r| {
            r == entire_checkpoints::store::branch::V1_BRANCH_REF
                || r.starts_with(entire_checkpoints::git::refname::CHECKPOINT_REF_PREFIX)
        })
    })
}

/// Pushes to `remote` and warns about whatever went wrong.
fn prepush(
    remote: Option<String>,
    url: Option<String>,
    input: &str,
    started: Instant,
    quiet: bool,
) {
    // A push that names checkpoint refs itself (`git push origin entire/checkpoints/v1`,
    // `git push --mirror`): pushing them too would race git for the same remote refs and fail
    // its push. Nothing is wrong: information, not a warning.
    if pushes_checkpoint_refs(input) {
        common::cli::info(
            quiet,
            "this push sends checkpoint refs itself; the queued ones go with the next push",
        );
        return;
    }
    // As git names them to the hook: the pushed-to remote (or URL) and its URL.
    let given = remote.clone().zip(url.clone());
    let Some(remote) = remote.or(url) else {
        // git always names the remote; a hook manager's configuration may not pass it on
        // (pre-commit hands a hook neither git's arguments nor its input).
        warn(
            quiet,
            "no remote given, so no checkpoint was pushed: call git entire-prepush with the remote git is pushing to (docs/hooks.md)",
        );
        return;
    };
    // git does not tell a pre-push hook about `--dry-run`; its own arguments do, where the
    // platform shows them (docs/how-it-works.md: elsewhere a dry run pushes them). Nothing is
    // wrong: the user asked for a dry run, so this is information, not a warning.
    if entire_checkpoints::base::invoker::invoking_git()
        .is_some_and(|args| entire_checkpoints::base::invoker::is_dry_run_push(&args))
    {
        common::cli::info(
            quiet,
            "dry run: checkpoint refs were not pushed (they stay queued)",
        );
        return;
    }
    let mut budget = None;
    let result = (|| -> Result<()> {
        let repo = entire_checkpoints::git::repo::Repo::discover()?;
        budget = Some(common::push::bound_hook(&repo, started));
        common::push::heal_hooks(&repo, quiet);
        common::cli::warn_settings(&repo, quiet);
        // A checkpoint remote awaiting approval holds the push, which says so on every push;
        // what else awaits approval is said once.
        let holding = entire_checkpoints::remote::checkpoint_remote::awaiting_approval(&repo);
        if let Some(pending) = holding
            .is_none()
            .then(|| entire_checkpoints::ops::trust::pending_once(&repo))
            .flatten()
        {
            warn(quiet, pending);
        }
        let topo = entire_checkpoints::topology::Topology::open(&repo)?;
        let v1 = entire_checkpoints::ops::hooks::fast::v1_file(&repo);
        let ask = sync::PushAsk {
            via: Some(&remote),
            named: false,
            reconcile: false,
        };
        let synced = sync::push(&repo, &topo, ask, &|_, _| {})?;
        if let (true, Some((remote, url))) = (synced.nothing_left_due(), &given) {
            entire_checkpoints::ops::hooks::fast::push_was_idle(&repo, remote, url, v1);
        }
        common::push::report(&synced, None, quiet);
        Ok(())
    })();
    let Err(e) = result else { return };
    let chain = entire_checkpoints::base::error::error_chain(&e);
    match e {
        CliError::Sync(SyncError::NotPushed(n)) if n.timed_out => warn(
            quiet,
            format!(
                "{chain} (hook budget {}s: set {} or strategy_options.{} to change it)",
                budget.unwrap_or_default().as_secs(),
                entire_checkpoints::remote::push::HOOK_BUDGET_ENV,
                entire_checkpoints::config::settings::HOOK_BUDGET_SETTING
            ),
        ),
        CliError::Sync(SyncError::NotPushed(_) | SyncError::AwaitingApproval(_)) => {
            warn(quiet, chain)
        }
        _ => warn(
            quiet,
            format!("checkpoints not pushed (they stay queued for the next push): {chain}"),
        ),
    }
}
