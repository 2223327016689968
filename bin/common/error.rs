//! The binaries' error type, and the one place that maps it to an exit code: every variant is
//! a library error (whose `ExitStatus` decides), an I/O or JSON failure, or a failure of the
//! command itself, with context added on the way up.

use entire_checkpoints::base::error::{ExitStatus, FAILURE};

/// Any error a command ends with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// The repository cannot be opened.
    #[error(transparent)]
    Repo(#[from] entire_checkpoints::git::repo::RepoError),
    /// The topology, or a checkpoint named on the command line.
    #[error(transparent)]
    Topology(#[from] entire_checkpoints::ops::TopologyError),
    /// Reading or writing a checkpoint.
    #[error(transparent)]
    Store(#[from] entire_checkpoints::ops::StoreError),
    /// A settings file.
    #[error(transparent)]
    Settings(#[from] entire_checkpoints::ops::SettingsError),
    /// The checkpoint remote.
    #[error(transparent)]
    CheckpointRemote(#[from] entire_checkpoints::ops::CheckpointRemoteError),
    /// A checkpoint ID argument.
    #[error(transparent)]
    InvalidId(#[from] entire_checkpoints::base::id::InvalidIdError),
    /// A session ID argument.
    #[error(transparent)]
    InvalidSessionId(#[from] entire_checkpoints::base::session_id::InvalidSessionIdError),
    /// A time argument.
    #[error(transparent)]
    InvalidTime(#[from] entire_checkpoints::base::time::InvalidTimeError),
    /// A document argument (token usage).
    #[error(transparent)]
    Model(#[from] entire_checkpoints::model::documents::ModelError),
    /// Staged sessions.
    #[error(transparent)]
    Session(#[from] entire_checkpoints::ops::session::SessionError),
    /// A commit hook.
    #[error(transparent)]
    CommitHook(#[from] entire_checkpoints::ops::commit_hooks::CommitHookError),
    /// Installing or removing the hooks.
    #[error(transparent)]
    Hooks(#[from] entire_checkpoints::ops::hooks::HookError),
    /// The rewrite map.
    #[error(transparent)]
    RewriteMap(#[from] entire_checkpoints::ops::rewrites::RewriteMapError),
    /// `migrate`.
    #[error(transparent)]
    Migrate(#[from] entire_checkpoints::ops::migrate::MigrateError),
    /// gc.
    #[error(transparent)]
    Gc(#[from] entire_checkpoints::ops::gc::GcError),
    /// Listing or editing the settings (`config`).
    #[error(transparent)]
    SettingsOp(#[from] entire_checkpoints::ops::settings::SettingsOpError),
    /// Pushing checkpoints.
    #[error(transparent)]
    Sync(#[from] entire_checkpoints::ops::sync::SyncError),
    /// `entire-fetch`.
    #[error(transparent)]
    FetchMany(#[from] entire_checkpoints::ops::fetch_many::FetchManyError),
    /// `blame`.
    #[error(transparent)]
    Blame(#[from] entire_checkpoints::ops::blame::BlameError),
    /// `why`.
    #[error(transparent)]
    Why(#[from] entire_checkpoints::ops::blame::WhyError),
    /// `stats` and `verify`: the range.
    #[error(transparent)]
    Stats(#[from] entire_checkpoints::ops::stats::StatsError),
    /// `enable` / `disable`.
    #[error(transparent)]
    Enable(#[from] entire_checkpoints::ops::enable::EnableError),
    /// `list <revision-range>`.
    #[error(transparent)]
    Range(#[from] entire_checkpoints::ops::range::RangeError),
    /// `trust`.
    #[error(transparent)]
    Trust(#[from] entire_checkpoints::ops::trust::TrustError),
    /// `session import`.
    #[error(transparent)]
    Import(#[from] entire_checkpoints::ops::import::ImportError),
    /// git cannot run, or is older than we support.
    #[error(transparent)]
    Git(#[from] entire_checkpoints::ops::process::GitError),
    /// Reading input or writing output.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// Rendering JSON.
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The command failed for a reason of its own (exit 1).
    #[error("{0}")]
    Failed(String),
    /// An error with what was being done when it happened.
    #[error("{context}")]
    Context {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: Box<CliError>,
    },
}

impl From<String> for CliError {
    fn from(message: String) -> CliError {
        CliError::Failed(message)
    }
}

/// An error with what was being done when it happened (see `common::context`).
impl<E: Into<CliError>> From<(String, E)> for CliError {
    fn from((context, error): (String, E)) -> CliError {
        CliError::Context {
            context,
            source: Box::new(error.into()),
        }
    }
}

/// A read's error is the error of the layer it comes from, so that its exit code and hint are.
impl From<entire_checkpoints::ops::read::ReadError> for CliError {
    fn from(e: entire_checkpoints::ops::read::ReadError) -> Self {
        match e {
            entire_checkpoints::ops::read::ReadError::Topology(e) => CliError::Topology(e),
            entire_checkpoints::ops::read::ReadError::Store(e) => CliError::Store(e),
            entire_checkpoints::ops::read::ReadError::Sync(e) => CliError::Sync(e),
            entire_checkpoints::ops::read::ReadError::Corrupt { context, source } => {
                CliError::from((context, source))
            }
            entire_checkpoints::ops::read::ReadError::Missing(what) => CliError::Failed(what),
        }
    }
}

/// A write's error is the error of the layer it comes from, so that its exit code and hint
/// are; a file argument that cannot be read is what it was reading, with why.
impl From<entire_checkpoints::ops::write::WriteError> for CliError {
    fn from(e: entire_checkpoints::ops::write::WriteError) -> Self {
        use entire_checkpoints::ops::write::WriteError;
        match e {
            WriteError::Input { context, source } => CliError::from((context, source)),
            WriteError::NotJson { context, source } => CliError::from((context, source)),
            e @ WriteError::NotObject(_) => CliError::Failed(e.to_string()),
            WriteError::InvalidId(e) => CliError::InvalidId(e),
            WriteError::InvalidSessionId(e) => CliError::InvalidSessionId(e),
            WriteError::InvalidTime(e) => CliError::InvalidTime(e),
            WriteError::Topology(e) => CliError::Topology(e),
            WriteError::Session(e) => CliError::Session(e),
        }
    }
}

impl ExitStatus for CliError {
    fn exit_code(&self) -> i32 {
        match self {
            CliError::Repo(e) => e.exit_code(),
            CliError::Topology(e) => e.exit_code(),
            CliError::Store(e) => e.exit_code(),
            CliError::Settings(e) => e.exit_code(),
            CliError::CheckpointRemote(e) => e.exit_code(),
            CliError::InvalidId(e) => e.exit_code(),
            CliError::InvalidSessionId(e) => e.exit_code(),
            CliError::InvalidTime(e) => e.exit_code(),
            CliError::Model(e) => e.exit_code(),
            CliError::Session(e) => e.exit_code(),
            CliError::CommitHook(e) => e.exit_code(),
            CliError::Hooks(e) => e.exit_code(),
            CliError::RewriteMap(e) => e.exit_code(),
            CliError::Migrate(e) => e.exit_code(),
            CliError::Gc(e) => e.exit_code(),
            CliError::SettingsOp(e) => e.exit_code(),
            CliError::Sync(e) => e.exit_code(),
            CliError::FetchMany(e) => e.exit_code(),
            CliError::Blame(e) => e.exit_code(),
            CliError::Stats(e) => e.exit_code(),
            CliError::Why(e) => e.exit_code(),
            CliError::Enable(e) => e.exit_code(),
            CliError::Range(e) => e.exit_code(),
            CliError::Trust(e) => e.exit_code(),
            CliError::Import(e) => e.exit_code(),
            CliError::Git(e) => e.exit_code(),
            CliError::Io(_) | CliError::Json(_) | CliError::Failed(_) => FAILURE,
            CliError::Context { source, .. } => source.exit_code(),
        }
    }
}

impl CliError {
    /// Whether this is a closed stdout (`| head`), which is not an error worth a message.
    pub fn is_broken_pipe(&self) -> bool {
        match self {
            CliError::Io(e) => e.kind() == std::io::ErrorKind::BrokenPipe,
            CliError::Context { source, .. } => source.is_broken_pipe(),
            _ => false,
        }
    }
}

/// A command's result.
pub type Result<T, E = CliError> = std::result::Result<T, E>;

impl CliError {
    /// The next step to take, shown after `hint:` below the error (docs/cli.md, "Messages"),
    /// where there is one the user can take.
    pub fn hint(&self) -> Option<String> {
        match self {
            CliError::Context { source, .. } => source.hint(),
            CliError::SettingsOp(e) => e.hint(),
            CliError::Settings(
                entire_checkpoints::ops::SettingsError::Unparseable { .. },
            ) => Some(
                "fix the file (the warning above gives the line and column); `git entire-checkpoint config` checks it"
                    .to_owned(),
            ),
            CliError::Topology(entire_checkpoints::ops::TopologyError::LinkedButNotPushed {
                rev,
                remote,
                awaiting,
                ..
            }) => Some(match awaiting {
                Some(checkpoints) => format!(
                    "{rev} names it; the settings keep checkpoints at {checkpoints}, which awaits your approval: approve it with `git entire-checkpoint trust` (it shows what it asks for), then read again"
                ),
                None => format!(
                    "{rev} names it, but {remote} does not hold it: its author may not have pushed it yet (their next `git push` sends it; then `--refresh` reads it)"
                ),
            }),
            e if e.exit_code() == entire_checkpoints::base::error::NOT_FOUND => Some(
                "`git entire-checkpoint list` lists the checkpoints held here; `list --remote` adds the remote's"
                    .to_owned(),
            ),
            _ => None,
        }
    }
}
