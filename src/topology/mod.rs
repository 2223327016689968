//! The checkpoint topology: one git-backed primary that takes every write, best-effort mirrors,
//! and kind-based read routing across both git stores (docs/how-it-works.md, "Where reads
//! look").
//!
//! | ID kind | git-branch primary | git-refs primary |
//! |---|---|---|
//! | ULID | refs only | refs only |
//! | hex | branch only | refs, then branch |

mod list;
mod mint;
mod open;
mod read;
mod redaction;
mod write;

use crate::base::id::{CheckpointId, IdKind};
use crate::config::settings::{ConfigSource, SettingsError};
use crate::git::repo::Repo;
use crate::git::url::Remote;
use crate::model::redact::Redactor;
use crate::store::branch::GitBranchStore;
use crate::store::refs::GitRefsStore;
use crate::store::registry::MirrorConfigError;
use crate::store::{CheckpointReader, CheckpointWriter, StoreError, StoreKind};

pub use list::{remote_not_here, Listing, ListingById, RemoteListing};
pub use mint::mint_checkpoint_id;
pub use open::mirrors_needing_approval;
pub use write::WriteReport;

/// Errors resolving the topology or a checkpoint name.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// The redaction settings are invalid (a block that does not decode, a refused user rule).
    /// The reason is the source, not repeated in the message (error chains print both).
    #[error("redaction settings")]
    Redaction(#[source] SettingsError),
    /// The settings block is invalid; the reason is the source, as above.
    #[error("resolve checkpoints config")]
    Config(#[from] SettingsError),
    /// A write refused because a settings file does not parse
    /// ([`SettingsError::Unparseable`]).
    #[error(transparent)]
    WritesRefused(SettingsError),
    /// An unknown backend type was configured.
    #[error("{location}: unknown checkpoint backend type {kind:?} (registered: {registered})")]
    UnknownBackend {
        /// `checkpoints.primary` or `checkpoints.mirrors[<i>]`.
        location: String,
        /// The configured type.
        kind: String,
        /// The registered types, sorted, comma-separated.
        registered: String,
    },
    /// A mirror-only backend was configured as the primary.
    #[error("checkpoints.primary: checkpoint backend {kind:?} cannot be the primary: only git-backed backends (e.g. \"git-branch\", \"git-refs\") may be the primary")]
    NotGitBacked {
        /// The configured type.
        kind: String,
    },
    /// A backend type appears twice.
    #[error("checkpoints.mirrors[{index}]: backend type {kind:?} is already used by the primary or another mirror; each backend type may appear at most once")]
    DuplicateType {
        /// The mirror's index.
        index: usize,
        /// The type.
        kind: String,
    },
    /// A mirror backend could not be built from its config.
    #[error("checkpoints.mirrors[{index}]: construct {kind:?} checkpoint backend")]
    Construct {
        /// The mirror's index.
        index: usize,
        /// The type.
        kind: String,
        /// Why.
        #[source]
        source: MirrorConfigError,
    },
    /// A prefix matched several checkpoints.
    #[error("checkpoint prefix {prefix:?} is ambiguous: it matches {}", .candidates.join(", "))]
    Ambiguous {
        /// The prefix.
        prefix: String,
        /// The matching IDs.
        candidates: Vec<String>,
    },
    /// Nothing matched `name`; `why` says what was tried, when more than a prefix was.
    #[error("no checkpoint matches {name:?}{}", .why.map(|w| format!(": {w}")).unwrap_or_default())]
    NoMatch {
        /// What was named.
        name: String,
        /// Why nothing matched.
        why: Option<&'static str>,
    },
    /// None of the checkpoints the commit `rev` links is held here, and `remote` (which reads
    /// fetch from) was asked for them or lacked them a moment ago: the commit's author may not
    /// have pushed them yet. The message is `error`'s; the hint says so.
    #[error("{error}")]
    LinkedButNotPushed {
        /// The commit as named.
        rev: String,
        /// The remote that lacks the checkpoint, as shown to the user.
        remote: String,
        /// The checkpoint remote the committed settings name, as shown, when it awaits the
        /// user's approval: reads fetch from it only once it is approved.
        awaiting: Option<String>,
        /// The first linked checkpoint's absence (boxed: a rare error keeps every result small).
        error: Box<StoreError>,
    },
    /// A commit named where one checkpoint is needed links several.
    #[error("{rev} links {} checkpoints ({}): name one of them", .ids.len(), .ids.join(", "))]
    SeveralLinked {
        /// The commit as named.
        rev: String,
        /// The checkpoints it links.
        ids: Vec<String>,
    },
    /// The name is neither a checkpoint ID nor a prefix of one.
    #[error(transparent)]
    InvalidId(#[from] crate::base::id::InvalidIdError),
    /// A store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The named rollout states (docs/configuration.md, "The topology").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rollout {
    /// git-branch alone: the legacy behaviour.
    Default,
    /// git-refs primary with a git-branch mirror: downgrade-safe.
    Parallel,
    /// git-refs alone.
    RefsOnly,
    /// Anything else.
    Custom,
}

impl Rollout {
    /// The name used by `config --json`.
    pub fn name(self) -> &'static str {
        match self {
            Rollout::Default => "default",
            Rollout::Parallel => "parallel",
            Rollout::RefsOnly => "refs-only",
            Rollout::Custom => "custom",
        }
    }
}

/// An opened topology.
pub struct Topology<'r> {
    primary: StoreKind,
    source: ConfigSource,
    redactor: Redactor,
    /// Set when a settings file does not parse: writes fail with it.
    refused: Option<SettingsError>,
    refs: GitRefsStore<'r>,
    branch: GitBranchStore<'r>,
    mirrors: Vec<Box<dyn CheckpointWriter + 'r>>,
    /// The remote reads fetch from, when they do: what it lacked a moment ago is not asked for
    /// again (`remote::misses`) unless `refresh`.
    fetching: Option<(&'r Repo, Remote)>,
    refresh: bool,
    /// What this process asked the remote for and it lacked (for "not found" to say so).
    asked_now: std::sync::Mutex<Vec<CheckpointId>>,
}

impl<'r> Topology<'r> {
    /// The primary store's kind.
    pub fn primary(&self) -> StoreKind {
        self.primary
    }

    /// Makes reads ask the remote again for checkpoints it lacked a moment ago (`--refresh`).
    pub fn set_refresh(&mut self, refresh: bool) {
        self.refresh = refresh;
    }

    /// Whether reads ask the remote again for what it lacked a moment ago.
    pub fn asks_again(&self) -> bool {
        self.refresh
    }

    /// The git-refs store (used by migration, push and fetch whatever the primary is).
    pub fn refs_store(&self) -> &GitRefsStore<'r> {
        &self.refs
    }

    /// Runs `reads`, a batch of reads of many checkpoints, with what each read of the git-branch
    /// store would resolve again resolved once ([`GitBranchStore::batch`]). Writes are not for
    /// a batch.
    pub fn batch<T>(&self, reads: impl FnOnce() -> T) -> T {
        self.branch.batch(reads)
    }

    /// The git-branch store (the checkpoints' own commit links are read from it whatever the
    /// primary is).
    pub fn branch_store(&self) -> &GitBranchStore<'r> {
        &self.branch
    }

    /// The mirrors' type names, in order.
    pub fn mirror_names(&self) -> Vec<String> {
        self.mirrors.iter().map(|m| m.name().to_owned()).collect()
    }

    /// Where the configuration came from.
    pub fn source(&self) -> ConfigSource {
        self.source
    }

    /// The rollout state this topology is in.
    pub fn rollout(&self) -> Rollout {
        let mirrors = self.mirror_names();
        match (self.primary, mirrors.as_slice()) {
            (StoreKind::GitBranch, []) => Rollout::Default,
            (StoreKind::GitRefs, []) => Rollout::RefsOnly,
            (StoreKind::GitRefs, [m]) if m == "git-branch" => Rollout::Parallel,
            _ => Rollout::Custom,
        }
    }

    fn primary_writer(&self) -> &dyn CheckpointWriter {
        match self.primary {
            StoreKind::GitRefs => &self.refs,
            StoreKind::GitBranch => &self.branch,
        }
    }

    fn reader(&self, kind: StoreKind) -> &dyn CheckpointReader {
        match kind {
            StoreKind::GitRefs => &self.refs,
            StoreKind::GitBranch => &self.branch,
        }
    }

    /// The stores a read of an ID of `kind` consults, in order.
    pub fn read_order(&self, kind: IdKind) -> Vec<StoreKind> {
        match (kind, self.primary) {
            (IdKind::Ulid, _) => vec![StoreKind::GitRefs],
            (IdKind::Hex, StoreKind::GitBranch) => vec![StoreKind::GitBranch],
            (IdKind::Hex, StoreKind::GitRefs) => vec![StoreKind::GitRefs, StoreKind::GitBranch],
        }
    }

    /// Whether routing would read `id` from `store` (a ULID is never read from the branch;
    /// a hex ID is read from refs only under a git-refs primary).
    fn visible(&self, id: &CheckpointId, store: StoreKind) -> bool {
        self.read_order(id.kind()).contains(&store)
    }
}

impl crate::base::error::ExitStatus for TopologyError {
    fn exit_code(&self) -> i32 {
        use crate::base::error::{FAILURE, NOT_FOUND, USAGE};
        match self {
            TopologyError::Redaction(e)
            | TopologyError::Config(e)
            | TopologyError::WritesRefused(e) => e.exit_code(),
            TopologyError::UnknownBackend { .. }
            | TopologyError::NotGitBacked { .. }
            | TopologyError::DuplicateType { .. }
            | TopologyError::Construct { .. } => FAILURE,
            TopologyError::Ambiguous { .. } | TopologyError::SeveralLinked { .. } => USAGE,
            TopologyError::NoMatch { .. } | TopologyError::LinkedButNotPushed { .. } => NOT_FOUND,
            TopologyError::InvalidId(e) => e.exit_code(),
            TopologyError::Store(e) => e.exit_code(),
        }
    }
}
