//! The settings as a user sees and sets them: every effective setting with its value and
//! origin (`config`), and the edits of `config set` / `config unset`, validated by the parsers
//! the commands use before anything is written.

use serde_json::{json, Value};

use crate::config::edit::{Document, EditError, KeyPath};
use crate::config::settings::{ConfigSource, SettingsError, SettingsFiles, HOOK_BUDGET_SETTING};
use crate::git::repo::Repo;
use crate::git::subprocess as git;
use crate::remote::checkpoint_remote::{self, CheckpointRemote, CheckpointRemoteError};
use crate::remote::{push, scale};
use crate::topology::{Topology, TopologyError};

/// How `config set` reads a value from the command line (JSON, else a string).
pub use crate::config::edit::parse_value;

/// What every command warns about the settings files of `repo`: each file that does not parse,
/// and each thing the files ask for that is set aside (a tracked per-clone file, the committed
/// file turning redaction off or a redaction rule of it refused).
pub fn warnings(repo: &Repo) -> Vec<String> {
    let files = repo.settings();
    let mut said: Vec<String> = files
        .unparseable()
        .iter()
        .map(|e| format!("{e}; it is ignored, and nothing is written or pushed until it is fixed"))
        .collect();
    said.extend(files.warnings().iter().map(ToString::to_string));
    said.extend(files.redaction_warnings().iter().map(ToString::to_string));
    said
}

/// One effective setting.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// Its dotted key in the settings document (`network_timeout_seconds` is environment-only).
    pub key: &'static str,
    /// The value the commands use (defaults filled in, clamped where the commands clamp).
    pub value: Value,
    /// Where it came from.
    pub origin: ConfigSource,
}

/// Errors of listing or editing the settings.
#[derive(Debug, thiserror::Error)]
pub enum SettingsOpError {
    /// The settings live in the work tree; a bare repository has none.
    #[error("a bare repository has no settings files (.entire/ lives in the work tree)")]
    Bare,
    /// The edit itself failed (key, file).
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The edit would leave settings the commands refuse; nothing was written.
    #[error("refusing to {action} {key}: {}; nothing changed", crate::base::error::error_chain(.reason.as_ref()))]
    Invalid {
        /// `set` or `unset`.
        action: &'static str,
        /// The key being set or unset.
        key: String,
        /// Why the result is invalid, with its sources (in the message, not a source: it is
        /// the point of the message, before "nothing changed").
        reason: Box<Invalid>,
    },
    /// The settings as they are cannot be listed.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The checkpoint remote as it is cannot be listed.
    #[error(transparent)]
    Remote(#[from] CheckpointRemoteError),
    /// The gc retention as it is cannot be listed.
    #[error(transparent)]
    Gc(#[from] crate::ops::gc::GcError),
    /// The approval of the edited file could not be recorded.
    #[error(transparent)]
    Repo(#[from] crate::git::repo::RepoError),
    /// `config set` of a key no command reads (a misspelling, most likely), without `--force`.
    #[error("unknown settings key {key}; nothing changed")]
    UnknownKey {
        /// The key as given.
        key: String,
        /// The known keys closest to it, closest first (empty when none is close).
        close: Vec<&'static str>,
    },
}

impl SettingsOpError {
    /// The next step after an unknown key: the closest known keys, and `--force`.
    pub fn hint(&self) -> Option<String> {
        let SettingsOpError::UnknownKey { close, .. } = self else {
            return None;
        };
        let force = "`config set --force` sets it anyway";
        Some(match close.as_slice() {
            [] => format!("`git entire-checkpoint config` lists the settings; {force}"),
            [one] => format!("did you mean {one}? {force}"),
            many => format!("did you mean one of {}? {force}", many.join(", ")),
        })
    }
}

/// Why edited settings are invalid: the error the commands would fail with.
#[derive(Debug, thiserror::Error)]
pub enum Invalid {
    /// The checkpoints or redaction blocks.
    #[error(transparent)]
    Topology(TopologyError),
    /// `strategy_options.checkpoint_remote`.
    #[error(transparent)]
    Remote(CheckpointRemoteError),
    /// `strategy_options.checkpoint_gc_days`.
    #[error(transparent)]
    Gc(crate::ops::gc::GcError),
    /// A key of `strategy_options` the commands read fail-soft (ignoring a wrong type), which
    /// `config set` refuses instead so the setting cannot be silently without effect.
    #[error("strategy_options.{key} must be {expected}")]
    Type {
        /// The key under `strategy_options`.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
    },
}

impl crate::base::error::ExitStatus for SettingsOpError {
    /// An invalid value is a usage error (exit 2); the rest are the wrapped errors' codes.
    fn exit_code(&self) -> i32 {
        match self {
            SettingsOpError::Bare => crate::base::error::FAILURE,
            SettingsOpError::Edit(e) => e.exit_code(),
            SettingsOpError::Invalid { .. } | SettingsOpError::UnknownKey { .. } => {
                crate::base::error::USAGE
            }
            SettingsOpError::Settings(e) => e.exit_code(),
            SettingsOpError::Remote(e) => e.exit_code(),
            SettingsOpError::Gc(e) => e.exit_code(),
            SettingsOpError::Repo(e) => e.exit_code(),
        }
    }
}

/// A key of `strategy_options`, the test of the JSON type it must have, and that type in words.
type TypedOption = (&'static str, fn(&Value) -> bool, &'static str);

/// The `strategy_options` keys the commands read fail-soft, with the JSON type each must have.
const TYPED_OPTIONS: [TypedOption; 5] = [
    ("push_sessions", Value::is_boolean, "true or false"),
    ("filtered_fetches", Value::is_boolean, "true or false"),
    (
        HOOK_BUDGET_SETTING,
        Value::is_u64,
        "a whole number of seconds",
    ),
    (
        crate::ops::doctor::TRAILER_DEPTH_SETTING,
        Value::is_u64,
        "a whole number of commits",
    ),
    (
        scale::THRESHOLD_SETTING,
        Value::is_u64,
        "a whole number of refs",
    ),
];

/// Where a `strategy_options` key comes from when it is of the type the commands use.
fn option_origin(files: &SettingsFiles, key: &str, valid: fn(&Value) -> bool) -> ConfigSource {
    match files.strategy_option(key) {
        Some((v, source, _)) if valid(&v) => source,
        _ => ConfigSource::Default,
    }
}

/// Every effective setting, in a fixed order: the store, the strategy options, redaction, the
/// network timeout. An invalid checkpoints, redaction, checkpoint remote or gc setting is an
/// error, as in the commands that read it.
pub fn effective(repo: &Repo) -> Result<Vec<Setting>, SettingsOpError> {
    let files = repo.settings();
    let resolved = files.checkpoints_config()?;
    let (primary, mirrors) = match &resolved.config {
        Some(c) => (
            json!(c.primary.kind),
            c.mirrors
                .iter()
                .map(|m| match &m.config {
                    Some(config) => json!({"type": m.kind, "config": config}),
                    None => json!({"type": m.kind}),
                })
                .collect(),
        ),
        None => (json!("git-branch"), Vec::new()),
    };
    let store = resolved.source;
    let mut out = vec![
        Setting {
            key: "checkpoints.primary.type",
            value: primary,
            origin: store,
        },
        Setting {
            key: "checkpoints.mirrors",
            value: Value::Array(mirrors),
            origin: store,
        },
    ];
    // The booleans as the commands read them (`push_sessions_enabled`,
    // `filtered_fetches_enabled`): a value of another type counts as unset.
    let bool_option = |key: &'static str, short: &str, value: bool| Setting {
        key,
        value: json!(value),
        origin: option_origin(files, short, Value::is_boolean),
    };
    out.push(bool_option(
        "strategy_options.push_sessions",
        "push_sessions",
        files.push_sessions_enabled(),
    ));
    let remote = checkpoint_remote::configured(repo)?;
    out.push(Setting {
        key: "strategy_options.checkpoint_remote",
        value: files
            .strategy_option(checkpoint_remote::SETTING)
            .map_or(Value::Null, |(v, _, _)| v),
        origin: remote.map_or(ConfigSource::Default, |(_, source)| source),
    });
    let days = crate::ops::gc::days_from_settings(repo)?;
    out.push(Setting {
        key: "strategy_options.checkpoint_gc_days",
        value: json!(days),
        origin: option_origin(files, crate::ops::gc::SETTING, Value::is_u64),
    });
    out.push(bool_option(
        "strategy_options.filtered_fetches",
        "filtered_fetches",
        files.filtered_fetches_enabled(),
    ));
    let budget_from_env = git::env_seconds(push::HOOK_BUDGET_ENV, push::HOOK_BUDGET_RANGE);
    out.push(Setting {
        key: "strategy_options.hook_budget_seconds",
        value: json!(push::hook_budget(repo).as_secs()),
        origin: match budget_from_env {
            Some(_) => ConfigSource::Env,
            None => option_origin(files, HOOK_BUDGET_SETTING, Value::is_u64),
        },
    });
    out.push(Setting {
        key: "strategy_options.checkpoint_ref_warn_threshold",
        value: json!(scale::threshold(repo)),
        origin: option_origin(files, scale::THRESHOLD_SETTING, Value::is_u64),
    });
    out.push(Setting {
        key: "strategy_options.doctor_trailer_depth",
        value: json!(crate::ops::doctor::trailer_depth(repo)),
        origin: option_origin(
            files,
            crate::ops::doctor::TRAILER_DEPTH_SETTING,
            Value::is_u64,
        ),
    });
    let redaction = files.redaction()?;
    let (enabled, rules, origin) = match &redaction {
        Some((s, source, _)) => (s.enabled != Some(false), s.rules.len(), *source),
        None => (true, 0, ConfigSource::Default),
    };
    out.push(Setting {
        key: "redaction.enabled",
        value: json!(enabled),
        origin,
    });
    out.push(Setting {
        key: "redaction.rules",
        value: json!(rules),
        origin,
    });
    out.push(Setting {
        key: "network_timeout_seconds",
        value: json!(git::network_timeout().as_secs()),
        origin: match git::env_seconds(git::ENV_NETWORK_TIMEOUT, git::NETWORK_TIMEOUT_RANGE) {
            Some(_) => ConfigSource::Env,
            None => ConfigSource::Default,
        },
    });
    Ok(out)
}

/// What an edit changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edited {
    /// The key.
    pub key: String,
    /// The file, as shown.
    pub file: String,
}

/// Every key a settings file is read for, ours and those the reference writes (kept, not
/// read: `strategy`, `telemetry`, ...). A key below one of them is known too: the blocks
/// under `checkpoints` and `strategy_options.checkpoint_remote` have parsers of their own that
/// refuse fields they do not know, and `redaction.rules` is a list.
const KNOWN_KEYS: [&str; 22] = [
    "enabled",
    "checkpoints",
    "strategy_options.push_sessions",
    "strategy_options.checkpoint_remote",
    "strategy_options.checkpoint_gc_days",
    "strategy_options.filtered_fetches",
    "strategy_options.hook_budget_seconds",
    "strategy_options.checkpoint_ref_warn_threshold",
    "strategy_options.doctor_trailer_depth",
    "redaction.enabled",
    "redaction.rules",
    "limits.sessions_per_checkpoint",
    "limits.tree_entries",
    "limits.blob_bytes",
    "limits.document_bytes",
    // The reference's own.
    "strategy",
    "telemetry",
    "external_agents",
    "log_level",
    "strategy_options.checkpoints_v2",
    "strategy_options.push_v2_refs",
    "strategy_options.checkpoints_version",
];

/// Whether `key` is a known key, a block that holds known keys (`strategy_options`), or below a
/// known key.
fn is_known(key: &str) -> bool {
    KNOWN_KEYS.iter().any(|k| {
        k == &key
            || k.strip_prefix(key)
                .is_some_and(|rest| rest.starts_with('.'))
            || key
                .strip_prefix(k)
                .is_some_and(|rest| rest.starts_with('.'))
    })
}

/// The known keys close to `key` (a misspelling, a key given without its block), closest first:
/// those as close as the closest, at most three.
fn close_keys(key: &str) -> Vec<&'static str> {
    let mut scored: Vec<(f64, &'static str)> = KNOWN_KEYS
        .iter()
        .map(|k| {
            // A key given without its block (`push_sessions`) is compared with the last segment.
            let against = match key.contains('.') {
                true => k,
                false => k.rsplit('.').next().unwrap_or(k),
            };
            (strsim::normalized_damerau_levenshtein(key, against), *k)
        })
        .filter(|(score, _)| *score >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let best = scored.first().map_or(0.0, |s| s.0);
    scored
        .into_iter()
        .take_while(|(score, _)| *score >= best - 0.05)
        .take(3)
        .map(|(_, k)| k)
        .collect()
}

/// `config set [--local] [--force] KEY VALUE`: sets `key` in `.entire/settings.json` (or the
/// per-clone `.git/entire/settings.local.json` with `local`), after checking that the settings it leaves are
/// valid for every command; otherwise nothing is written ([`SettingsOpError::Invalid`]). A key
/// no command reads is refused with the closest known ones ([`SettingsOpError::UnknownKey`])
/// unless `force`.
pub fn set(
    repo: &Repo,
    local: bool,
    force: bool,
    key: &str,
    value: Value,
) -> Result<Edited, SettingsOpError> {
    let path = KeyPath::parse(key)?;
    if !force && !is_known(&path.to_string()) {
        return Err(SettingsOpError::UnknownKey {
            key: path.to_string(),
            close: close_keys(&path.to_string()),
        });
    }
    edit(repo, local, ("set", key), |doc, path| doc.set(path, value))
}

/// `config unset [--local] KEY`: removes `key`, validated like [`set`];
/// [`EditError::NotSet`] when the file does not set it.
pub fn unset(repo: &Repo, local: bool, key: &str) -> Result<Edited, SettingsOpError> {
    edit(repo, local, ("unset", key), |doc, path| doc.unset(path))
}

fn edit(
    repo: &Repo,
    local: bool,
    (action, key): (&'static str, &str),
    change: impl FnOnce(&mut Document, &KeyPath) -> Result<(), EditError>,
) -> Result<Edited, SettingsOpError> {
    let path = KeyPath::parse(key)?;
    let worktree = repo.workdir().ok_or(SettingsOpError::Bare)?;
    // Read first: a per-clone file at its old place in the work tree moves now, before the
    // edit loads the file it moved to.
    let files = repo.settings();
    let mut doc = if local {
        Document::load_local(repo.common_dir())?
    } else {
        Document::load_committed(worktree, repo.foreign_settings_dir())?
    };
    change(&mut doc, &path)?;
    let candidate = files.with_document(doc.name(), doc.value());
    validate(repo, &candidate, &path).map_err(|reason| SettingsOpError::Invalid {
        action,
        key: path.to_string(),
        reason: Box::new(reason),
    })?;
    // The user's own edit of the committed file is theirs to use: approved, unless the file
    // held something awaiting their approval, which an edit of another key does not give.
    let approve = !local && crate::ops::trust::pending(repo).is_none();
    doc.save()?;
    if approve {
        let saved = SettingsFiles::read(Some(worktree), None, repo);
        if let Some(digest) = saved.approval().digest() {
            repo.approve_settings(digest)?;
        }
    }
    Ok(Edited {
        key: path.to_string(),
        file: doc.shown(),
    })
}

/// Fails with what a command would fail with under `files`, and, when the edit of `key` is in
/// the redaction block, with a rule the commands would set aside.
fn validate(repo: &Repo, files: &SettingsFiles, key: &KeyPath) -> Result<(), Invalid> {
    Topology::validate_files(repo, files).map_err(Invalid::Topology)?;
    if key.segments().first().map(String::as_str) == Some("redaction") {
        files
            .check_redaction()
            .map_err(|e| Invalid::Topology(TopologyError::Redaction(e)))?;
    }
    if let Some((value, _, file)) = files.strategy_option_as_written(checkpoint_remote::SETTING) {
        CheckpointRemote::parse(&value, &file).map_err(Invalid::Remote)?;
    }
    crate::ops::gc::days_in(files).map_err(Invalid::Gc)?;
    for (key, valid, expected) in TYPED_OPTIONS {
        if let Some((value, _, _)) = files.strategy_option(key) {
            if !valid(&value) {
                return Err(Invalid::Type { key, expected });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_keys_their_blocks_and_what_is_below_them() {
        for key in [
            "enabled",
            "strategy_options",
            "strategy_options.push_sessions",
            "checkpoints.primary.type",
            "checkpoints.mirrors",
            "strategy_options.checkpoint_remote.provider",
            "limits",
            "telemetry",
        ] {
            assert!(is_known(key), "{key}");
        }
        for key in [
            "strategy_options.push_session",
            "push_sessions",
            "strategy_option",
            "enabledx",
            "redaction.rule",
        ] {
            assert!(!is_known(key), "{key}");
        }
    }

    #[test]
    fn the_closest_known_keys_are_offered() {
        assert_eq!(
            close_keys("strategy_options.push_session")[0],
            "strategy_options.push_sessions"
        );
        assert_eq!(
            close_keys("push_sessions")[0],
            "strategy_options.push_sessions"
        );
        assert_eq!(close_keys("redaction.rule")[0], "redaction.rules");
        assert!(close_keys("zzz").is_empty());
    }
}
