//! The flags every binary takes. Kept apart from the rest of `common` so that the man page
//! generator (`bin/man.rs`) can read the binaries' arguments without their commands.

/// The flags of every binary.
#[derive(clap::Args)]
pub struct GlobalArgs {
    /// Silence warnings and progress.
    #[arg(short, long, global = true)]
    pub quiet: bool,
    /// More diagnostics on stderr (repeatable).
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
}
