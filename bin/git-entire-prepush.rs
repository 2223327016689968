//! `git entire-prepush <remote> [<url>]`: the pre-push hook's entry point.
//!
//! Pushes the checkpoint refs queued for that remote before git sends the user's refs. It never
//! fails the user's push: checkpoint trouble is a warning and the refs stay queued.

#[path = "common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{CommandFactory, Parser};

/// Push queued checkpoint refs to the remote git is pushing to (called by the pre-push hook).
#[derive(Parser)]
#[command(name = "git-entire-prepush", version, about)]
struct Cli {
    /// The remote name (or URL) git is pushing to.
    remote: Option<String>,
    /// The remote's URL.
    url: Option<String>,
    /// Silence warnings and progress.
    #[arg(short, long)]
    quiet: bool,
    /// More diagnostics on stderr (repeatable).
    #[arg(short, long, action = clap::ArgAction::Count)]
    verbose: u8,
    /// Write man pages into DIR and exit (used by install.sh).
    #[arg(long, value_name = "DIR", hide = true)]
    generate_man: Option<PathBuf>,
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

fn main() -> ExitCode {
    // The hook budget counts from here: it bounds all the time this hook adds to `git push`.
    let started = Instant::now();
    common::main_with(|| {
        let cli = Cli::parse();
        common::init_logging(cli.verbose);
        if let Some(dir) = &cli.generate_man {
            return common::generate_man(Cli::command(), dir);
        }
        // git writes the refs it is pushing on stdin (`<local ref> <sha> <remote ref> <sha>`);
        // read it all, so git never sees a broken pipe.
        let mut input = String::new();
        let _ = std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut input);
        let quiet = cli.quiet;
        // A push that names checkpoint refs itself (`git push origin entire/checkpoints/v1`):
        // pushing them too would race git for the same remote refs and fail its push.
        if pushes_checkpoint_refs(&input) {
            common::warn(
                quiet,
                "this push sends checkpoint refs itself; the queued ones go with the next push",
            );
            return Ok(());
        }
        let Some(remote) = cli.remote.or(cli.url) else {
            // git always names the remote; a hook manager's configuration may not pass it on
            // (pre-commit hands a hook neither git's arguments nor its input).
            common::warn(
                quiet,
                "no remote given, so no checkpoint was pushed: call git entire-prepush with the remote git is pushing to (docs/hooks.md)",
            );
            return Ok(());
        };
        // git does not tell a pre-push hook about `--dry-run`; its own arguments do, where the
        // platform shows them (docs/how-it-works.md: elsewhere a dry run pushes them).
        if entire_checkpoints::base::invoker::invoking_git()
            .is_some_and(|args| entire_checkpoints::base::invoker::is_dry_run_push(&args))
        {
            common::warn(
                quiet,
                "dry run: checkpoint refs were not pushed (they stay queued)",
            );
            return Ok(());
        }
        let mut budget = None;
        let result = entire_checkpoints::git::repo::Repo::discover()
            .map_err(anyhow::Error::from)
            .and_then(|repo| {
                budget = Some(common::bound_hook(&repo, started));
                common::warn_unparseable_settings(&repo, quiet);
                let topo = entire_checkpoints::topology::Topology::open(&repo)?;
                common::push_and_report(&repo, &topo, Some(&remote), false, quiet)
            });
        match result {
            Ok(()) => {}
            Err(e) => match e.downcast_ref::<common::NotPushed>() {
                Some(n) if n.timed_out => common::warn(
                    quiet,
                    format!(
                        "{e:#} (hook budget {}s: set {} or strategy_options.{} to change it)",
                        budget.unwrap_or_default().as_secs(),
                        entire_checkpoints::remote::push::HOOK_BUDGET_ENV,
                        entire_checkpoints::config::settings::HOOK_BUDGET_SETTING
                    ),
                ),
                Some(_) => common::warn(quiet, format!("{e:#}")),
                None => common::warn(
                    quiet,
                    format!(
                        "checkpoints were not pushed: {e:#}; they stay queued for the next push"
                    ),
                ),
            },
        }
        Ok(())
    })
}
