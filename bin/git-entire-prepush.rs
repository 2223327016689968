//! `git entire-prepush <remote> [<url>]`: the pre-push hook's entry point.
//!
//! Pushing checkpoint refs arrives with the push issue; until then the hook accepts git's
//! arguments and stdin and does nothing, so installing it never breaks a push.

#[path = "common/mod.rs"]
mod common;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser};

/// Push queued checkpoint refs to the remote git is pushing to (called by the pre-push hook).
#[derive(Parser)]
#[command(name = "git-entire-prepush", version, about)]
struct Cli {
    /// The remote name (or URL) git is pushing to.
    remote: Option<String>,
    /// The remote's URL.
    url: Option<String>,
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
        Ok(())
    })
}
