//! `git entire-checkpoint`: write, read and manage checkpoints.

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

use std::process::ExitCode;

use clap::Parser;

use checkpoint::args::Cli;

fn main() -> ExitCode {
    common::cli::main_with(
        || {
            let cli = Cli::parse();
            cli.global.start();
            checkpoint::run(cli)
        },
        Some(checkpoint::pager::finish),
    )
}
