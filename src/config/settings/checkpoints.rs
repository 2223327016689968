//! The `checkpoints` block (the topology: a primary backend and its mirrors) as a settings file
//! or the environment gives it, and where the resolved one came from.

use serde::Deserialize;
use serde_json::Value;

use super::{SettingsError, ENV_MIRRORS, ENV_PRIMARY};

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

pub(super) fn decode_block(value: Value, path: &str) -> Result<CheckpointsConfig, SettingsError> {
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

pub(super) fn from_env() -> Option<CheckpointsConfig> {
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
