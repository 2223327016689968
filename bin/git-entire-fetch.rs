//! `git entire-fetch`: fetch checkpoints from a remote.
//!
//! Fetching arrives with the fetch issue; this entry point already parses the contract's
//! arguments.

#[path = "common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

/// Fetch checkpoints from a remote: named IDs, all of them, or those a revision range links to.
#[derive(Parser)]
#[command(name = "git-entire-fetch", version, about)]
struct Cli {
    /// The remote (default: the sync remote, else origin).
    remote: Option<String>,
    /// Checkpoint IDs to fetch.
    ids: Vec<String>,
    /// Fetch every checkpoint ref.
    #[arg(long)]
    all: bool,
    /// Fetch the checkpoints named by Entire-Checkpoint trailers of the commits in a range.
    #[arg(long = "for", value_name = "REV-RANGE")]
    for_range: Option<String>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
    /// Write man pages into DIR and exit (used by install.sh).
    #[arg(long, value_name = "DIR", hide = true)]
    generate_man: Option<PathBuf>,
}

fn main() -> ExitCode {
    common::main_with(|| {
        let cli = Cli::parse();
        if let Some(dir) = &cli.generate_man {
            return common::generate_man(Cli::command(), dir);
        }
        anyhow::bail!("git entire-fetch is not implemented yet")
    })
}
