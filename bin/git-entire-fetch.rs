//! `git entire-fetch`: fetch checkpoints from a remote: named IDs, every checkpoint ref, or the
//! checkpoints the `Entire-Checkpoint:` trailers of a range of commits name.

mod fetch {
    pub mod args;
}
mod common {
    pub mod args;
    pub mod cli;
    pub mod error;
    pub mod output;
}

use std::process::ExitCode;

use clap::Parser;

use common::cli::warn;
use common::error::Result;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::fetch_many::{self, Report, Request, Status};
use fetch::args::Cli;

fn main() -> ExitCode {
    common::cli::main_with(
        || {
            let cli = Cli::parse();
            cli.global.start();
            let quiet = cli.global.quiet;
            let repo = Repo::discover()?;
            common::cli::warn_unparseable_settings(&repo, quiet);
            let req = Request::from_words(&repo, &cli.args, cli.all, cli.for_range, cli.filter)?;
            let report = fetch_many::run(&repo, &req, move |m| warn(quiet, m))?;
            render(&report, cli.json, cli.all, quiet)?;
            match report.failure() {
                Some(e) => Err(e.into()),
                None => Ok(()),
            }
        },
        None,
    )
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
    if !quiet {
        eprintln!("entire: {}", report.summary());
    }
    Ok(())
}
