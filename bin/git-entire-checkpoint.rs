//! `git entire-checkpoint`: write, read and manage checkpoints.
#![cfg_attr(not(test), no_main)]

mod checkpoint;
// The completion scripts cover git-entire-fetch too, from its own definitions.
mod fetch {
    pub mod args;
}
mod common {
    pub mod args;
    pub mod cli;
    pub mod context;
    pub mod error;
    pub mod output;
    pub mod progress;
    pub mod push;
    pub mod text;
}

use checkpoint::args::Cli;

common::cli::entry!(run);

/// The binary's main (its C entry point is `common::cli::entry`): the exit code.
fn run() -> u8 {
    let cli = match common::cli::parse::<Cli>() {
        Ok(cli) => cli,
        // No command, as `git` alone: a short usage on stdout and exit 1, as git does.
        Err(e)
            if e.kind() == clap::error::ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
                || e.kind() == clap::error::ErrorKind::MissingSubcommand =>
        {
            print!("{}", checkpoint::usage());
            return 1;
        }
        Err(e) => e.exit(),
    };
    common::cli::main_with(
        || {
            cli.global.start();
            checkpoint::run(cli)
        },
        Some(checkpoint::pager::finish),
    )
}
