//! The arguments of `git entire-fetch`.

use clap::Parser;

use entire_checkpoints::ops::fetch_many::FetchFilter;

use crate::common::args::GlobalArgs;

/// Fetch checkpoints from a remote: named IDs, all of them, or those a revision range links to.
#[derive(Parser)]
#[command(name = "git-entire-fetch", version, max_term_width = 100)]
pub struct Cli {
    /// `[<remote>] [<ID>...]`: the remote (default: the checkpoint remote, else origin, else the
    /// only remote), then checkpoint IDs. A first word that is a configured remote, a URL or a
    /// path is the remote.
    pub args: Vec<String>,
    /// Fetch every checkpoint ref of the remote.
    #[arg(long)]
    pub all: bool,
    /// Fetch the checkpoints named by Entire-Checkpoint trailers of the commits in a range
    /// (e.g. `origin/main..HEAD`, or `@{upstream}` for everything it reaches).
    #[arg(long = "for", value_name = "REV-RANGE")]
    pub for_range: Option<String>,
    /// Fetch checkpoints without their transcripts into the partial cache, where the server
    /// supports it (only `blob:none`); transcripts are fetched when read. A server without
    /// filter support gets a warning and whole checkpoints.
    #[arg(long, value_name = "SPEC")]
    pub filter: Option<FetchFilter>,
    /// Print JSON: one entry per checkpoint with its status.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub global: GlobalArgs,
}
