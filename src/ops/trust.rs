//! Consent to the committed settings file (`git entire-checkpoint trust`): what it asks for
//! that decides where checkpoints go (a checkpoint remote, a mirror outside git), what else it
//! changes (redaction rules, the hook budget), and the approval of what it asks for, recorded
//! in the repository's local git config ([`crate::config::settings::TRUST_KEY`]). Until the
//! user approves the file, a checkpoint remote it asks for holds every push (checkpoints stay
//! queued: they go to no other destination) and a mirror it asks for is not written; a change
//! of where it sends checkpoints (a pull that edits the checkpoint remote or a mirror) needs
//! approval again, a change of anything else does not.

use serde::Serialize;
use serde_json::Value;

use crate::base::error::{ExitStatus, FAILURE};
use crate::base::fs::{read_cache_file, write_atomic};
use crate::config::settings::{shown, Approval, ConfigSource, HOOK_BUDGET_SETTING, SETTINGS_FILE};
use crate::git::repo::{Repo, RepoError};
use crate::remote::checkpoint_remote::{self, CheckpointRemoteError};
use crate::remote::push;
use crate::topology::{self, TopologyError};

/// Errors of `trust`.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// There is no committed settings file to approve.
    #[error("there is no {file} to approve (nothing is committed there, or it does not parse)")]
    NoFile {
        /// The file, as shown.
        file: String,
    },
    /// What the file asks for is invalid: it cannot be approved until it is fixed.
    #[error("{file} is not approved")]
    Remote {
        /// The file, as shown.
        file: String,
        /// Why.
        #[source]
        source: CheckpointRemoteError,
    },
    /// The file's store settings are invalid.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The approval could not be recorded.
    #[error(transparent)]
    Repo(#[from] RepoError),
}

impl ExitStatus for TrustError {
    fn exit_code(&self) -> i32 {
        match self {
            TrustError::NoFile { .. } => FAILURE,
            TrustError::Remote { source, .. } => source.exit_code(),
            TrustError::Topology(e) => e.exit_code(),
            TrustError::Repo(e) => e.exit_code(),
        }
    }
}

/// Whether the committed file is approved, as `trust` and `status` report it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrustState {
    /// No committed settings file.
    NoFile,
    /// Its content is approved.
    Approved,
    /// Its content is not approved: what it asks for that needs approval is not used.
    NotApproved,
}

/// A mirror the committed file asks for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MirrorAsk {
    /// The backend type.
    #[serde(rename = "type")]
    pub kind: String,
    /// Its `config`, as written.
    pub config: Option<Value>,
}

/// What the committed settings file asks for, as `trust` shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TrustReport {
    /// The file, as shown.
    pub file: String,
    /// The digest of what it asks for that needs approval, in hex (what the approval records;
    /// `config::settings::asks_digest`); null without a file.
    pub digest: Option<String>,
    /// Whether it is approved (after the command).
    pub state: TrustState,
    /// The checkpoint remote it asks for, as checkpoints would be pushed there (credentials
    /// redacted): needs approval. Null when it asks for none (or the local file sets one).
    pub checkpoint_remote: Option<String>,
    /// Why the checkpoint remote it asks for is invalid (then it cannot be approved).
    pub refused: Option<String>,
    /// The mirrors outside git it asks for: need approval.
    pub mirrors: Vec<MirrorAsk>,
    /// The redaction rules it adds (names), which apply whether approved or not.
    pub redaction_rules: Vec<String>,
    /// What it says about redaction that is ignored, one message each (turning it off, rules
    /// refused): these never apply from the committed file.
    pub redaction_ignored: Vec<String>,
    /// The hook budget it asks for, in seconds; it can only shorten the default.
    pub hook_budget_seconds: Option<u64>,
    /// The hook budget that applies, in seconds.
    pub effective_hook_budget_seconds: u64,
}

impl TrustReport {
    /// Whether the file asks for anything that needs approval.
    pub fn needs_approval(&self) -> bool {
        self.checkpoint_remote.is_some() || self.refused.is_some() || !self.mirrors.is_empty()
    }
}

/// Whether the committed settings file is approved.
pub fn state(repo: &Repo) -> TrustState {
    match repo.settings().approval() {
        Approval::NoFile => TrustState::NoFile,
        Approval::Approved { .. } => TrustState::Approved,
        Approval::NotApproved { .. } => TrustState::NotApproved,
    }
}

/// What the committed settings file asks for and whether it is approved.
pub fn report(repo: &Repo) -> Result<TrustReport, TrustError> {
    let files = repo.settings();
    let file = shown(SETTINGS_FILE);
    let state = state(repo);
    let (checkpoint_remote, refused) = match asked_remote(repo) {
        None => (None, None),
        Some(Ok(url)) => (Some(url), None),
        Some(Err(e)) => (None, Some(e.to_string())),
    };
    let mirrors = topology::mirrors_needing_approval(files)?
        .into_iter()
        .map(|m| MirrorAsk {
            kind: m.kind,
            config: m.config,
        })
        .collect();
    let redaction_rules = match files.redaction() {
        Ok(Some((settings, ConfigSource::Settings, _))) => {
            settings.rules.into_iter().map(|r| r.name).collect()
        }
        _ => Vec::new(),
    };
    let hook_budget_seconds = files
        .strategy_option(HOOK_BUDGET_SETTING)
        .filter(|(_, source, _)| *source == ConfigSource::Settings)
        .and_then(|(v, _, _)| v.as_u64());
    Ok(TrustReport {
        file,
        digest: files.approval().digest().map(str::to_owned),
        state,
        checkpoint_remote,
        refused,
        mirrors,
        redaction_rules,
        redaction_ignored: files
            .redaction_warnings()
            .iter()
            .map(ToString::to_string)
            .collect(),
        hook_budget_seconds,
        effective_hook_budget_seconds: push::hook_budget(repo).as_secs(),
    })
}

/// The checkpoint remote the committed file asks for (approved or not), as its URL would be
/// shown; `None` when it asks for none or the local file's key wins.
fn asked_remote(repo: &Repo) -> Option<Result<String, CheckpointRemoteError>> {
    checkpoint_remote::asked(repo).map(|(url, _)| url)
}

/// `trust`: approves the committed settings file as it is now, after checking that what it
/// asks for is valid; with `dry_run`, only reports. The report says what is approved.
pub fn approve(repo: &Repo, dry_run: bool) -> Result<TrustReport, TrustError> {
    let mut report = report(repo)?;
    let Some(digest) = report.digest.clone() else {
        return Err(TrustError::NoFile { file: report.file });
    };
    if let Some(Err(source)) = asked_remote(repo) {
        return Err(TrustError::Remote {
            file: report.file,
            source,
        });
    }
    if !dry_run {
        repo.approve_settings(&digest)?;
        report.state = TrustState::Approved;
    }
    Ok(report)
}

/// `trust --revoke`: removes the approval; the report says what is no longer used. Whether
/// there was an approval to remove.
pub fn revoke(repo: &Repo) -> Result<(TrustReport, bool), TrustError> {
    let removed = repo.revoke_settings()?;
    let mut report = report(repo)?;
    if report.state == TrustState::Approved {
        report.state = TrustState::NotApproved;
    }
    Ok((report, removed))
}

/// What the committed file asks for that awaits the user's approval: for `enable`, `status`,
/// `doctor` and the pre-push hook to say so.
#[derive(Debug, Clone, PartialEq)]
pub struct Pending {
    /// The file, as shown.
    pub file: String,
    /// The digest of what it asks for (what `trust` records).
    pub digest: String,
    /// The checkpoint remote it asks for (as shown), or why its value is invalid.
    pub checkpoint_remote: Option<String>,
    /// The mirrors outside git it asks for (types).
    pub mirrors: Vec<String>,
}

impl std::fmt::Display for Pending {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut asks = Vec::new();
        if let Some(remote) = &self.checkpoint_remote {
            asks.push(format!("to push checkpoints to {remote}"));
        }
        for kind in &self.mirrors {
            asks.push(format!("to mirror checkpoints with the {kind} backend"));
        }
        let until = if self.checkpoint_remote.is_some() {
            "until then checkpoints stay queued and go nowhere else"
        } else {
            "until then checkpoints go where they would go without it"
        };
        write!(
            f,
            "{} asks {}; that is not used until you approve it: run `git entire-checkpoint trust` to see what it asks for and approve it ({until})",
            self.file,
            asks.join(" and ")
        )
    }
}

/// What awaits approval, if anything.
pub fn pending(repo: &Repo) -> Option<Pending> {
    let files = repo.settings();
    let Approval::NotApproved { digest, .. } = files.approval() else {
        return None;
    };
    let checkpoint_remote = asked_remote(repo).map(|r| match r {
        Ok(url) => url,
        Err(e) => format!("an invalid checkpoint remote ({e})"),
    });
    let mirrors: Vec<String> = topology::mirrors_needing_approval(files)
        .unwrap_or_default()
        .into_iter()
        .map(|m| m.kind)
        .collect();
    (checkpoint_remote.is_some() || !mirrors.is_empty()).then(|| Pending {
        file: shown(SETTINGS_FILE),
        digest: digest.clone(),
        checkpoint_remote,
        mirrors,
    })
}

/// The marker in `<common>/entire/` that remembers which content the pre-push hook last said
/// awaits approval.
const PENDING_TOLD_MARKER: &str = "trust-pending-told";

/// [`pending`], once per clone and content of the file: the pre-push hook says it on the first
/// push after the file (or its content) arrived, not on every push.
pub fn pending_once(repo: &Repo) -> Option<Pending> {
    let pending = pending(repo)?;
    let dir = repo.common_dir().join("entire");
    let marker = dir.join(PENDING_TOLD_MARKER);
    if read_cache_file(&marker, 256).ok().flatten().as_deref() == Some(pending.digest.as_bytes()) {
        return None;
    }
    let written = std::fs::create_dir_all(&dir)
        .and_then(|()| write_atomic(&marker, pending.digest.as_bytes(), 0o644));
    if let Err(e) = written {
        log::info!("could not remember the approval notice: {e}");
    }
    Some(pending)
}
