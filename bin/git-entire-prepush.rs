//! `git entire-prepush <remote> [<url>]`: the pre-push hook's entry point.
//!
//! Pushes the checkpoint refs queued for that remote before git sends the user's refs. It never
//! fails the user's push: checkpoint trouble is a warning and the refs stay queued.
#![cfg_attr(not(test), no_main)]

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

use std::time::Instant;

use entire_checkpoints::ops::hook_runner::{self, PrePush};
use prepush::args::Cli;

common::cli::entry!(run);

/// The binary's main (its C entry point is `common::cli::entry`): the exit code.
fn run() -> u8 {
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
            let quiet = cli.global.quiet;
            let report = hook_runner::pre_push(PrePush {
                remote: cli.remote,
                url: cli.url,
                input: &input,
                started,
            });
            common::push::report_hook(&report, quiet, |synced| {
                common::push::report(synced, None, quiet)
            });
            Ok(())
        },
        None,
    )
}
