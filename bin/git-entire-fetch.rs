//! `git entire-fetch`: fetch checkpoints from a remote: named IDs, every checkpoint ref, or the
//! checkpoints the `Entire-Checkpoint:` trailers of a range of commits name.
#![cfg_attr(not(test), no_main)]

mod fetch {
    pub mod args;
}
mod common {
    pub mod args;
    pub mod cli;
    pub mod error;
    pub mod output;
    pub mod progress;
    pub mod text;
}

use common::cli::warn;
use common::error::Result;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::fetch_many::{self, Phase, Progress, Report, Request, Status};
use fetch::args::Cli;

common::cli::entry!(run);

/// The binary's main (its C entry point is `common::cli::entry`): the exit code.
fn run() -> u8 {
    common::cli::main_with(
        || {
            let cli = common::cli::parse::<Cli>().unwrap_or_else(|e| e.exit());
            cli.global.start();
            let quiet = cli.global.quiet;
            entire_checkpoints::ops::process::require_supported()?;
            let repo = Repo::discover()?;
            common::cli::warn_settings(&entire_checkpoints::ops::settings::warnings(&repo), quiet);
            let req = Request::from_words(&repo, &cli.args, cli.all, cli.for_range, cli.filter)?;
            let report = fetch(&repo, &req, quiet)?;
            render(&report, cli.json, cli.all, quiet)?;
            match report.failure() {
                Some(e) => Err(e.into()),
                None => Ok(()),
            }
        },
        None,
    )
}

/// Runs the fetch with a progress bar on stderr when it is a terminal and `-q` was not given
/// (warnings are printed above the bar).
fn fetch(repo: &Repo, req: &Request, quiet: bool) -> Result<Report> {
    let bar = common::progress::Bar::new("fetching checkpoints", quiet);
    let notices = bar.clone();
    // Warnings are printed above the bar.
    let notice = move |m: &str| match &notices.0 {
        Some(b) => b.suspend(|| warn(quiet, m)),
        None => warn(quiet, m),
    };
    let progress = |p: Progress| {
        let label = match p.phase {
            Phase::Fetching => "fetching checkpoints",
            Phase::WritingRefs => "writing checkpoint refs",
        };
        if let Some(b) = bar.0.as_ref().filter(|b| b.message() != label) {
            b.set_message(label);
        }
        bar.set(p.done, p.total);
    };
    let report = fetch_many::run(repo, req, notice, &progress);
    bar.finish();
    Ok(report?)
}

/// Prints the outcomes: JSON, or one line per checkpoint (with `--all`, only those that were
/// not already present), a warning about diverged ones and a summary line.
fn render(report: &Report, json: bool, all: bool, quiet: bool) -> Result<()> {
    if json {
        return common::output::print_json(&report.outcomes);
    }
    let mut text = String::new();
    for o in &report.outcomes {
        if all && o.status == Status::Present {
            continue;
        }
        let note = if o.partial {
            " (without transcripts)"
        } else {
            ""
        };
        let status = o.status.name().replace('_', " ");
        text.push_str(&format!("{}  {status}{note}\n", o.checkpoint_id));
    }
    common::output::write_stdout(text.as_bytes())?;
    let diverged = report.diverged();
    if diverged > 0 {
        warn(
            quiet,
            format!("{diverged} checkpoint(s) diverged from the remote and were left as they are; the next push merges them"),
        );
    }
    common::cli::info(quiet, report.summary());
    Ok(())
}
