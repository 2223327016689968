//! `git entire-checkpoint`: write, read and manage checkpoints.

mod checkpoint;
mod common {
    pub mod cli;
    pub mod error;
    pub mod output;
    pub mod push;
}

use std::process::ExitCode;

use clap::{CommandFactory, Parser};

use checkpoint::args::Cli;

fn main() -> ExitCode {
    common::cli::main_with(|| {
        let cli = Cli::parse();
        if !cli.global.start(Cli::command)? {
            return Ok(());
        }
        checkpoint::run(cli)
    })
}
