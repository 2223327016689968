//! The user's approval of the committed settings file (`trust`): what needs it, the digest
//! recorded for it, and what only git knows of the files ([`SettingsContext`]).

use serde_json::Value;

use super::Tracked;

/// The key of the repository's local git config that records the user's approval of the
/// committed settings file (`git entire-checkpoint trust`): the digest of what the file asks
/// for that needs approval ([`asks_digest`]), so that a change of where checkpoints go (a pull
/// that edits the checkpoint remote or a mirror) needs approval again, and a change of
/// anything else (redaction rules, the hook budget) does not.
pub const TRUST_KEY: &str = "entire.trustedSettings";

/// The `strategy_options` key of the dedicated checkpoint remote.
pub const CHECKPOINT_REMOTE_SETTING: &str = "checkpoint_remote";

/// The keys of `strategy_options` the committed file sets only with the user's approval: they
/// decide where checkpoints go.
pub(super) const NEEDS_APPROVAL: [&str; 1] = [CHECKPOINT_REMOTE_SETTING];

/// What only git knows about the settings files: whether the user approved the committed one,
/// and what git tracks. The git layer implements it for a repository.
pub trait SettingsContext {
    /// The digest [`TRUST_KEY`] records, if any.
    fn approved_digest(&self) -> Option<String>;
    /// How git tracks `path` (relative to the work tree, `/`-separated) in its index or in
    /// `HEAD`, if it does (an entry of the index wins).
    fn tracked_kind(&self, path: &str) -> Option<Tracked>;
    /// The bytes git holds for the file `path` (relative to the work tree, `/`-separated) when a
    /// sparse checkout leaves it out of the work tree (its index entry has the skip-worktree
    /// bit): at most `max` bytes, else `Err(size)`. `None` when the work tree is meant to have it.
    fn sparse_file(&self, path: &str, max: u64) -> Option<Result<Vec<u8>, u64>>;
}

/// No repository behind the files: nothing approved, nothing tracked.
pub struct NoContext;

impl SettingsContext for NoContext {
    fn approved_digest(&self) -> Option<String> {
        None
    }
    fn tracked_kind(&self, _: &str) -> Option<Tracked> {
        None
    }
    fn sparse_file(&self, _: &str, _: u64) -> Option<Result<Vec<u8>, u64>> {
        None
    }
}

/// Whether the committed settings file has the user's approval.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Approval {
    /// There is no committed file to approve (missing, empty, unreadable or not JSON).
    #[default]
    NoFile,
    /// The user approved what this file asks for.
    Approved {
        /// The file's [`asks_digest`].
        digest: String,
        /// The approval recorded is an older version's digest of the file's bytes: the
        /// repository records [`asks_digest`] instead the next time it reads the settings.
        by_bytes: bool,
    },
    /// The user has not approved what this file asks for: the settings that need approval are
    /// not used.
    NotApproved {
        /// The file's [`asks_digest`]: what `trust` records.
        digest: String,
        /// The user approved what an earlier version of the file asked for (a pull changed
        /// where it sends checkpoints).
        lapsed: bool,
    },
}

impl Approval {
    /// Whether the committed file's settings that need approval are used.
    pub fn approved(&self) -> bool {
        matches!(self, Approval::Approved { .. })
    }

    /// The digest of what the committed file asks for, if there is one.
    pub fn digest(&self) -> Option<&str> {
        match self {
            Approval::NoFile => None,
            Approval::Approved { digest, .. } | Approval::NotApproved { digest, .. } => {
                Some(digest)
            }
        }
    }
}

/// The SHA-256 of `bytes` in hex.
pub fn digest(bytes: &[u8]) -> String {
    use sha2::Digest;
    data_encoding::HEXLOWER.encode(&sha2::Sha256::digest(bytes))
}

/// The digest [`TRUST_KEY`] records for the committed document `doc`: of what it asks for that
/// needs approval (its checkpoint remote and its mirrors, as written), in a canonical form
/// (keys sorted, no white space), so that editing anything else, or re-indenting, keeps the
/// approval.
pub fn asks_digest(doc: &Value) -> String {
    fn canonical(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<&String> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), canonical(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
            other => other.clone(),
        }
    }
    let asks = serde_json::json!({
        "approval": 2,
        "checkpoint_remote": doc.pointer(&format!("/strategy_options/{CHECKPOINT_REMOTE_SETTING}")),
        "mirrors": doc.pointer("/checkpoints/mirrors"),
    });
    digest(canonical(&asks).to_string().as_bytes())
}
