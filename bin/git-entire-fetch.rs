//! `git entire-fetch`: fetch checkpoints from a remote: named IDs, every checkpoint ref, or the
//! checkpoints the `Entire-Checkpoint:` trailers of a range of commits name.

mod common {
    pub mod cli;
    pub mod error;
    pub mod output;
}

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use common::cli::{warn, GlobalArgs};
use common::error::Result;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::fetch_many::{self, Report, Request};
use entire_checkpoints::remote::fetch::FetchFilter;

/// Fetch checkpoints from a remote: named IDs, all of them, or those a revision range links to.
#[derive(Parser)]
#[command(name = "git-entire-fetch", version, about, max_term_width = 100)]
struct Cli {
    /// `[<remote>] [<ID>...]`: the remote (default: the checkpoint remote, else origin, else the
    /// only remote), then checkpoint IDs. A first word that is a configured remote, a URL or a
    /// path is the remote.
    args: Vec<String>,
    /// Fetch every checkpoint ref of the remote.
    #[arg(long)]
    all: bool,
    /// Fetch the checkpoints named by Entire-Checkpoint trailers of the commits in a range
    /// (e.g. `origin/main..HEAD`, or `@{upstream}` for everything it reaches).
    #[arg(long = "for", value_name = "REV-RANGE")]
    for_range: Option<String>,
    /// Fetch checkpoints without their transcripts into the partial cache, where the server
    /// supports it (only `blob:none`); transcripts are fetched when read. A server without
    /// filter support gets a warning and whole checkpoints.
    #[arg(long, value_name = "SPEC")]
    filter: Option<FetchFilter>,
    /// Print JSON: one entry per checkpoint with its status.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    global: GlobalArgs,
}

fn main() -> ExitCode {
    common::cli::main_with(|| {
        let cli = Cli::parse();
        if !cli.global.start(Cli::command)? {
            return Ok(());
        }
        let quiet = cli.global.quiet;
        let repo = Repo::discover()?;
        common::cli::warn_unparseable_settings(&repo, quiet);
        let req = Request::from_words(&repo, &cli.args, cli.all, cli.for_range, cli.filter)?;
        let report = fetch_many::run(&repo, &req, move |m| warn(quiet, m))?;
        render(&report, cli.json, quiet)?;
        match report.failure() {
            Some(e) => Err(e.into()),
            None => Ok(()),
        }
    })
}

/// Prints the outcomes: JSON, or one line per checkpoint and a warning about diverged ones.
fn render(report: &Report, json: bool, quiet: bool) -> Result<()> {
    if json {
        return common::output::print_json(&report.outcomes);
    }
    let mut text = String::new();
    for o in &report.outcomes {
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
    Ok(())
}
