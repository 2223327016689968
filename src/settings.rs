//! The `checkpoints` block of `.entire/settings.json` and `.entire/settings.local.json`, and the
//! environment override (anchor-behaviour §10).
//!
//! Loading is fail-soft: a missing or unreadable file, a whole-file syntax error, a symlink that
//! escapes `.entire/`, or a file without the block all mean "no config" (the git-branch default).
//! Only a present block that is itself invalid is an error, so typos surface instead of silently
//! selecting the default.

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

/// Environment variable naming the primary backend; replaces any settings file.
pub const ENV_PRIMARY: &str = "ENTIRE_CHECKPOINTS_PRIMARY";
/// Comma-separated mirror backends, used only with [`ENV_PRIMARY`].
pub const ENV_MIRRORS: &str = "ENTIRE_CHECKPOINTS_MIRRORS";

/// The settings directory inside the work tree.
pub const SETTINGS_DIR: &str = ".entire";
/// The committed settings file.
pub const SETTINGS_FILE: &str = "settings.json";
/// The per-clone settings file; its `checkpoints` block replaces the committed one wholesale.
pub const LOCAL_SETTINGS_FILE: &str = "settings.local.json";

/// Errors of a present but invalid `checkpoints` block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// The block does not decode (unknown field, wrong type).
    #[error("invalid checkpoints config in {path}: {message}; an unrecognized field can also mean this file was written by a newer CLI \u{2014} confirm you are on the latest version")]
    Decode {
        /// The file.
        path: String,
        /// The decoder's message.
        message: String,
    },
    /// Another settings block (e.g. `redaction`) does not decode.
    #[error("invalid {block} settings in {path}: {message}")]
    Block {
        /// The block's key.
        block: &'static str,
        /// The file.
        path: String,
        /// The decoder's message.
        message: String,
    },
    /// A required field is missing.
    #[error("invalid checkpoints config: {0} is required")]
    Required(String),
}

/// One backend of the topology: its type and its opaque per-backend config.
#[derive(Debug, Clone, PartialEq)]
pub struct BackendSpec {
    /// The backend type (`git-refs`, `git-branch`, `fs`, ...).
    pub kind: String,
    /// The backend's own `config` object, passed through untouched.
    pub config: Option<Value>,
}

/// The `checkpoints` block.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckpointsConfig {
    /// The primary backend.
    pub primary: BackendSpec,
    /// The mirrors, in order.
    pub mirrors: Vec<BackendSpec>,
}

/// Where the effective config came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigSource {
    /// Nothing configured: the git-branch default.
    Default,
    /// `.entire/settings.json`.
    Settings,
    /// `.entire/settings.local.json`.
    SettingsLocal,
    /// `ENTIRE_CHECKPOINTS_PRIMARY` / `ENTIRE_CHECKPOINTS_MIRRORS`.
    Env,
}

impl ConfigSource {
    /// Whether values from here are the user's own: the environment and the per-clone local
    /// file are; the committed file is written by whoever can push to the repository and is
    /// untrusted input (docs/security.md).
    pub fn trusted(self) -> bool {
        !matches!(self, ConfigSource::Settings)
    }

    /// The name used by `config --json`.
    pub fn name(self) -> &'static str {
        match self {
            ConfigSource::Default => "default",
            ConfigSource::Settings => "settings",
            ConfigSource::SettingsLocal => "settings.local",
            ConfigSource::Env => "env",
        }
    }
}

/// The resolved checkpoints config.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedConfig {
    /// `None` = the default (git-branch, no mirrors).
    pub config: Option<CheckpointsConfig>,
    /// Where it came from.
    pub source: ConfigSource,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBlock {
    primary: Option<RawBackend>,
    #[serde(default)]
    mirrors: Option<Vec<RawBackend>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawBackend {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    config: Option<Value>,
}

fn decode_block(value: Value, path: &str) -> Result<CheckpointsConfig, SettingsError> {
    let raw: RawBlock = serde_json::from_value(value).map_err(|e| SettingsError::Decode {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    let primary = raw
        .primary
        .and_then(|p| {
            p.kind
                .filter(|k| !k.trim().is_empty())
                .map(|k| (k, p.config))
        })
        .ok_or_else(|| SettingsError::Required("checkpoints.primary.type".into()))?;
    let mut mirrors = Vec::new();
    for (i, m) in raw.mirrors.unwrap_or_default().into_iter().enumerate() {
        let kind = m
            .kind
            .filter(|k| !k.trim().is_empty())
            .ok_or_else(|| SettingsError::Required(format!("checkpoints.mirrors[{i}].type")))?;
        mirrors.push(BackendSpec {
            kind,
            config: m.config,
        });
    }
    Ok(CheckpointsConfig {
        primary: BackendSpec {
            kind: primary.0,
            config: primary.1,
        },
        mirrors,
    })
}

/// Reads a settings file as a JSON value, confined to `.entire/`; `None` on any failure (the
/// fail-soft cases).
pub fn read_settings_file(worktree: &Path, name: &str) -> Option<Value> {
    let dir = worktree.join(SETTINGS_DIR);
    let path = dir.join(name);
    let real = std::fs::canonicalize(&path).ok()?;
    let real_dir = std::fs::canonicalize(&dir).ok()?;
    if !real.starts_with(&real_dir) {
        log::warn!(
            "ignoring {}: it points outside {SETTINGS_DIR}/",
            path.display()
        );
        return None;
    }
    let bytes = match std::fs::read(&real) {
        Ok(b) => b,
        Err(e) => {
            log::info!("ignoring unreadable {}: {e}", path.display());
            return None;
        }
    };
    match serde_json::from_slice(&bytes) {
        Ok(v) => Some(v),
        Err(e) => {
            log::warn!("ignoring {}: not valid JSON ({e})", path.display());
            None
        }
    }
}

/// The `checkpoints` block of a parsed settings file, if present and not `null`.
fn block_of(v: Option<Value>) -> Option<Value> {
    match v? {
        Value::Object(mut m) => m.remove("checkpoints").filter(|b| !b.is_null()),
        _ => None,
    }
}

fn from_env() -> Option<CheckpointsConfig> {
    let primary = std::env::var(ENV_PRIMARY).ok()?;
    let primary = primary.trim();
    if primary.is_empty() {
        return None;
    }
    let mirrors = std::env::var(ENV_MIRRORS)
        .unwrap_or_default()
        .split(',')
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(|m| BackendSpec {
            kind: m.to_owned(),
            config: None,
        })
        .collect();
    Some(CheckpointsConfig {
        primary: BackendSpec {
            kind: primary.to_owned(),
            config: None,
        },
        mirrors,
    })
}

/// A boolean key of `strategy_options`, resolved like every key by [`strategy_option`] (the
/// local file's value wins over the committed one); a non-boolean value counts as unset.
fn bool_option(worktree: Option<&Path>, key: &str) -> Option<bool> {
    strategy_option(worktree, key).and_then(|(v, _, _)| v.as_bool())
}

/// Whether checkpoint pushing is enabled: `strategy_options.push_sessions`; default true.
pub fn push_sessions_enabled(worktree: Option<&Path>) -> bool {
    bool_option(worktree, "push_sessions").unwrap_or(true)
}

/// Whether reads fetch missing checkpoints partially (`--filter=blob:none`, transcripts on
/// read): `strategy_options.filtered_fetches`; default false.
pub fn filtered_fetches_enabled(worktree: Option<&Path>) -> bool {
    bool_option(worktree, "filtered_fetches").unwrap_or(false)
}

/// The `strategy_options` key of the hook budget in seconds.
pub const HOOK_BUDGET_SETTING: &str = "hook_budget_seconds";

/// `strategy_options.hook_budget_seconds` when it is a whole number of seconds (callers clamp
/// it: the committed file is untrusted).
pub fn hook_budget_seconds(worktree: Option<&Path>) -> Option<u64> {
    strategy_option(worktree, HOOK_BUDGET_SETTING).and_then(|(v, _, _)| v.as_u64())
}

/// One key of `strategy_options`: the local file's if that file sets the key (to anything but
/// `null`), else the committed file's. Returns the value, where it came from and the file's
/// path as shown in messages. Unreadable files count as absent (fail-soft).
pub fn strategy_option(
    worktree: Option<&Path>,
    key: &str,
) -> Option<(Value, ConfigSource, String)> {
    let root = worktree?;
    for (name, source) in [
        (LOCAL_SETTINGS_FILE, ConfigSource::SettingsLocal),
        (SETTINGS_FILE, ConfigSource::Settings),
    ] {
        let value = read_settings_file(root, name)
            .and_then(|v| v.get("strategy_options")?.get(key).cloned())
            .filter(|v| !v.is_null());
        if let Some(v) = value {
            let path: PathBuf = [SETTINGS_DIR, name].iter().collect();
            return Some((v, source, path.to_string_lossy().into_owned()));
        }
    }
    None
}

/// The `redaction` block: the local file's, else the committed file's; none means the built-in
/// rules. A present block that does not decode is an error, since silently dropping a user's
/// rules would write the secrets they meant to catch.
pub fn load_redaction_settings(
    worktree: Option<&Path>,
) -> Result<crate::redact::RedactionSettings, SettingsError> {
    let Some(root) = worktree else {
        return Ok(Default::default());
    };
    for name in [LOCAL_SETTINGS_FILE, SETTINGS_FILE] {
        let block = read_settings_file(root, name).and_then(|v| v.get("redaction").cloned());
        if let Some(b) = block.filter(|b| !b.is_null()) {
            let path: PathBuf = [SETTINGS_DIR, name].iter().collect();
            return serde_json::from_value(b).map_err(|e| SettingsError::Block {
                block: "redaction",
                path: path.to_string_lossy().into_owned(),
                message: e.to_string(),
            });
        }
    }
    Ok(Default::default())
}

/// Resolves the checkpoints config: the environment override, else the local file's block,
/// else the committed file's block, else the default. `worktree` is `None` in a bare repository.
pub fn load_checkpoints_config(worktree: Option<&Path>) -> Result<ResolvedConfig, SettingsError> {
    if let Some(config) = from_env() {
        return Ok(ResolvedConfig {
            config: Some(config),
            source: ConfigSource::Env,
        });
    }
    if let Some(root) = worktree {
        for (name, source) in [
            (LOCAL_SETTINGS_FILE, ConfigSource::SettingsLocal),
            (SETTINGS_FILE, ConfigSource::Settings),
        ] {
            if let Some(block) = block_of(read_settings_file(root, name)) {
                let path: PathBuf = [SETTINGS_DIR, name].iter().collect();
                return Ok(ResolvedConfig {
                    config: Some(decode_block(block, &path.to_string_lossy())?),
                    source,
                });
            }
        }
    }
    Ok(ResolvedConfig {
        config: None,
        source: ConfigSource::Default,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decode(v: Value) -> Result<CheckpointsConfig, SettingsError> {
        decode_block(v, ".entire/settings.json")
    }

    #[test]
    fn primary_and_mirrors_with_config_kept_verbatim() {
        let c = decode(json!({"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": "/x", "n": [1]}}]})).unwrap();
        assert_eq!(c.primary.kind, "git-refs");
        assert_eq!(c.mirrors[0].config, Some(json!({"dir": "/x", "n": [1]})));
    }

    #[test]
    fn strict_block() {
        let err = decode(json!({"primary": {"type": "git-refs"}, "mirorrs": []})).unwrap_err();
        assert!(
            err.to_string().starts_with(
                "invalid checkpoints config in .entire/settings.json: unknown field `mirorrs`"
            ),
            "{err}"
        );
        assert!(err.to_string().contains("newer CLI"));
        assert_eq!(
            decode(json!({"primary": {}})).unwrap_err().to_string(),
            "invalid checkpoints config: checkpoints.primary.type is required"
        );
        assert_eq!(
            decode(json!({"primary": {"type": "git-refs"}, "mirrors": [{"config": {}}]}))
                .unwrap_err()
                .to_string(),
            "invalid checkpoints config: checkpoints.mirrors[0].type is required"
        );
        assert!(decode(json!({"primary": {"type": 7}})).is_err());
        assert!(decode(json!({"primary": "git-refs"})).is_err());
    }

    #[test]
    fn files_fail_soft_and_local_wins() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        assert_eq!(
            load_checkpoints_config(Some(root)).unwrap().source,
            ConfigSource::Default
        );
        std::fs::create_dir(root.join(".entire")).unwrap();
        std::fs::write(root.join(".entire/settings.json"), "{not json").unwrap();
        assert_eq!(load_checkpoints_config(Some(root)).unwrap().config, None);
        std::fs::write(
            root.join(".entire/settings.json"),
            r#"{"enabled": "yes", "checkpoints": null}"#,
        )
        .unwrap();
        assert_eq!(load_checkpoints_config(Some(root)).unwrap().config, None);
        std::fs::write(
            root.join(".entire/settings.json"),
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}], "bogus": 1}}"#,
        )
        .unwrap();
        assert!(
            load_checkpoints_config(Some(root)).is_err(),
            "invalid base block is an error"
        );
        std::fs::write(
            root.join(".entire/settings.local.json"),
            r#"{"checkpoints": {"primary": {"type": "git-branch"}}}"#,
        )
        .unwrap();
        let r = load_checkpoints_config(Some(root)).unwrap();
        assert_eq!(r.source, ConfigSource::SettingsLocal);
        let c = r.config.unwrap();
        assert_eq!(c.primary.kind, "git-branch");
        assert!(
            c.mirrors.is_empty(),
            "the local block replaces the base block wholesale"
        );
    }

    #[test]
    fn escaping_symlink_is_ignored() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("outside.json");
        std::fs::write(
            &outside,
            r#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#,
        )
        .unwrap();
        let root = dir.path().join("wt");
        std::fs::create_dir_all(root.join(".entire")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".entire/settings.json")).unwrap();
        assert_eq!(read_settings_file(&root, SETTINGS_FILE), None);
        std::fs::create_dir(root.join(".entire/settings.local.json")).unwrap();
        assert_eq!(
            read_settings_file(&root, LOCAL_SETTINGS_FILE),
            None,
            "a directory is unreadable"
        );
    }
}
