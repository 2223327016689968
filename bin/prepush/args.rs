//! The arguments of `git entire-prepush`.

use clap::Parser;

use crate::common::args::GlobalArgs;

/// Push queued checkpoint refs to the remote git is pushing to (called by the pre-push hook).
#[derive(Parser)]
#[command(name = "git-entire-prepush", version)]
pub struct Cli {
    /// The remote name (or URL) git is pushing to.
    pub remote: Option<String>,
    /// The remote's URL.
    pub url: Option<String>,
    #[command(flatten)]
    pub global: GlobalArgs,
}
