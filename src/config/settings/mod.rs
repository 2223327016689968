//! The `checkpoints` and `redaction` blocks of the committed `.entire/settings.json` and of the
//! per-clone `<git-common-dir>/entire/settings.local.json`, the environment override
//! (docs/configuration.md, "The topology"), and the `strategy_options` keys.
//!
//! A missing, unreadable or empty file, a symbolic link (never followed), or a file without the
//! block mean "no config" (the git-branch default, the built-in redaction rules). A present block that
//! is itself invalid is an error, so typos surface instead of silently selecting the default.
//!
//! Only files the user made decide where checkpoints go or whether they are redacted
//! (docs/security.md): the per-clone file lives in the git common dir, which no checkout can
//! write and every worktree shares. Its old place, `.entire/settings.local.json` in the work
//! tree, is read only to move it there, and only when it is the user's own file: a regular
//! file, untracked, in a real `.entire` directory that is neither a symbolic link, nor a
//! submodule, nor tracked by git as anything but a directory ([`ForeignDir`]).
//!
//! A file that exists but is not valid JSON is not "no config": what it says about the store and
//! the redaction rules is unknown. [`SettingsFiles`] reports it ([`SettingsError::Syntax`]);
//! reads go on with the other file, and writes refuse ([`SettingsFiles::refuse_writes`]), since
//! writing with the defaults could store secrets its rules would have caught, in a store it may
//! not have chosen. (The reference is fail-soft here; this is where we differ.)

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::model::redact::{RedactionSettings, Redactor};

mod approval;
mod checkpoints;
mod files;
mod limits;
#[cfg(test)]
mod tests;

pub use approval::CHECKPOINT_REMOTE_SETTING;
pub use approval::{asks_digest, digest, Approval, NoContext, SettingsContext, TRUST_KEY};
pub use checkpoints::{BackendSpec, CheckpointsConfig, ConfigSource, ResolvedConfig};
pub use files::{foreign_settings_dir, ForeignDir, Tracked, MAX_SETTINGS_BYTES};
pub use limits::{
    Limits, LIMIT_BLOB_BYTES, LIMIT_DOCUMENT_BYTES, LIMIT_SESSIONS, LIMIT_TREE_ENTRIES,
};

use approval::NEEDS_APPROVAL;
use checkpoints::{decode_block, from_env};
use files::{move_legacy_local, read_committed, read_file, ReadFile};

/// Environment variable naming the primary backend; replaces any settings file.
pub const ENV_PRIMARY: &str = "ENTIRE_CHECKPOINTS_PRIMARY";
/// Comma-separated mirror backends, used only with [`ENV_PRIMARY`].
pub const ENV_MIRRORS: &str = "ENTIRE_CHECKPOINTS_MIRRORS";

/// The settings directory inside the work tree.
pub const SETTINGS_DIR: &str = ".entire";
/// The committed settings file.
pub const SETTINGS_FILE: &str = "settings.json";
/// The per-clone settings file; its `checkpoints` block replaces the committed one wholesale.
/// It lives in `<git-common-dir>/entire/` ([`local_path`]).
pub const LOCAL_SETTINGS_FILE: &str = "settings.local.json";

/// How messages show the per-clone settings file ([`local_path`]), as it is in a clone whose
/// git dir is `.git`.
pub const LOCAL_SHOWN: &str = ".git/entire/settings.local.json";

/// The per-clone settings file's old place in the work tree, as shown: read only to move it to
/// [`local_path`].
pub const LEGACY_LOCAL_SHOWN: &str = ".entire/settings.local.json";

/// Where the per-clone settings file of the repository whose git common dir is `common_dir` is.
pub fn local_path(common_dir: &Path) -> PathBuf {
    common_dir.join("entire").join(LOCAL_SETTINGS_FILE)
}

/// Errors of the settings files: a file that does not parse, or a present but invalid block.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsError {
    /// A settings file exists but is not valid JSON.
    #[error("{path} is not valid JSON: {message}")]
    Syntax {
        /// The file.
        path: String,
        /// The parser's message (with line and column).
        message: String,
    },
    /// A settings file is larger than [`MAX_SETTINGS_BYTES`]: it is not read.
    #[error("{path} is too large to be a settings file ({size} bytes, at most {max})")]
    TooLarge {
        /// The file.
        path: String,
        /// Its size.
        size: u64,
        /// The limit.
        max: u64,
    },
    /// A write was refused because settings files do not parse ([`SettingsError::Syntax`]).
    #[error("refusing to write checkpoints: {paths} cannot be parsed, so the redaction rules and the checkpoint store are unknown; fix it first")]
    Unparseable {
        /// The files, as shown.
        paths: String,
    },
    /// A user redaction rule is refused (it does not compile, or can match the empty string).
    #[error("{path}")]
    Rule {
        /// The file.
        path: String,
        /// Why.
        #[source]
        source: crate::model::redact::RedactError,
    },
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

/// The file's path as shown in messages: `.entire/<name>` for the committed file,
/// [`LOCAL_SHOWN`] for the per-clone one.
pub fn shown(name: &str) -> String {
    if name == LOCAL_SETTINGS_FILE {
        return LOCAL_SHOWN.to_owned();
    }
    let path: PathBuf = [SETTINGS_DIR, name].iter().collect();
    path.to_string_lossy().into_owned()
}

/// Something in the settings files that is set aside, for one warning each.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SettingsWarning {
    /// The per-clone file at its old place is tracked by git, so whoever can push wrote it.
    #[error("{path} is tracked by git, so it is not trusted and is ignored: untrack it with `git rm --cached {path}` and commit (this clone's own settings are in {LOCAL_SHOWN})")]
    TrackedLocalFile {
        /// The file, as shown.
        path: String,
    },
    /// The per-clone file at its old place is under a `.entire` that is not the user's.
    #[error("{path} is ignored: {why}, so whoever can push wrote what is under it (this clone's own settings are in {LOCAL_SHOWN})")]
    ForeignLocalFile {
        /// The file, as shown.
        path: String,
        /// Why `.entire` is not the user's.
        why: ForeignDir,
    },
    /// A settings file is a symbolic link, which is never followed.
    #[error(
        "{path} is ignored: it is a symbolic link, and settings files are never read through one"
    )]
    Link {
        /// The file, as shown.
        path: String,
    },
    /// The per-clone file was moved from its old place in the work tree.
    #[error("moved {LEGACY_LOCAL_SHOWN} to {LOCAL_SHOWN}, where this clone's settings live now (no checkout can change them, and every worktree reads them){}", if *.replacing { "; the file that was there is kept as settings.local.json.replaced beside it" } else { "" })]
    Moved {
        /// A per-clone file was already there (kept beside it).
        replacing: bool,
    },
    /// The per-clone file could not be moved from its old place: it is read there this time.
    #[error("could not move {LEGACY_LOCAL_SHOWN} to {LOCAL_SHOWN} ({reason}); it is read where it is for now")]
    NotMoved {
        /// Why.
        reason: String,
    },
    /// The committed file turns redaction off, which only the user's own settings may do.
    #[error("{path}: \"redaction\": {{\"enabled\": false}} is ignored: the committed settings cannot turn redaction off (set it in {LOCAL_SHOWN} for this clone)")]
    RedactionOff {
        /// The committed file, as shown.
        path: String,
    },
    /// A user rule of the committed file is refused; the other rules apply.
    #[error("{path}: {source}; the rule is ignored, the other rules apply")]
    RuleRefused {
        /// The committed file, as shown.
        path: String,
        /// Why.
        source: crate::model::redact::RedactError,
    },
}

/// The two settings files of a work tree, each read once: what each says, and which exist but
/// do not parse.
///
/// The committed file is untrusted input (docs/security.md): it can only make things safer.
/// Its settings that decide where checkpoints go ([`NEEDS_APPROVAL`], and the mirrors outside
/// git the topology sets aside) are used only once the user approved its content
/// ([`Approval`]); it cannot turn redaction off, and a user rule of it that does not compile,
/// can match the empty string or would replace most of a transcript is set aside with a
/// warning rather than failing the command. A per-clone file that git tracks is not read.
#[derive(Debug, Clone, Default)]
pub struct SettingsFiles {
    /// The parsed files, the local one first (it wins).
    parsed: Vec<(&'static str, ConfigSource, Value)>,
    /// One [`SettingsError::Syntax`] (or [`SettingsError::TooLarge`]) per file that cannot be
    /// read as settings, the local one first.
    unparseable: Vec<SettingsError>,
    /// The committed file's approval.
    approval: Approval,
    /// What was set aside while reading.
    warnings: Vec<SettingsWarning>,
}

impl SettingsFiles {
    /// Reads the per-clone file of the repository whose git common dir is `common_dir` (moved
    /// there first from its old place in `worktree` when that is the user's file) and the
    /// committed file of `worktree` (`None` in a bare repository); `context` says what git knows
    /// of them.
    pub fn read(
        worktree: Option<&Path>,
        common_dir: Option<&Path>,
        context: &dyn SettingsContext,
    ) -> SettingsFiles {
        let mut files = SettingsFiles::default();
        if let Some(common) = common_dir {
            let unmoved = worktree.and_then(|w| move_legacy_local(w, common, context, &mut files));
            let local = match unmoved {
                Some(bytes) => serde_json::from_slice(&bytes)
                    .map(|value| Some(ReadFile { bytes, value }))
                    .map_err(|e| SettingsError::Syntax {
                        path: LEGACY_LOCAL_SHOWN.to_owned(),
                        message: e.to_string(),
                    }),
                None => read_file(&local_path(common), LOCAL_SHOWN),
            };
            files.take(LOCAL_SETTINGS_FILE, ConfigSource::SettingsLocal, local);
        }
        if let Some(root) = worktree {
            let committed = read_committed(root, &mut files.warnings);
            if let Ok(Some(file)) = &committed {
                let asks = asks_digest(&file.value);
                files.approval = match context.approved_digest() {
                    Some(recorded) if recorded == asks => Approval::Approved {
                        digest: asks,
                        by_bytes: false,
                    },
                    Some(recorded) if recorded == digest(&file.bytes) => Approval::Approved {
                        digest: asks,
                        by_bytes: true,
                    },
                    recorded => Approval::NotApproved {
                        digest: asks,
                        lapsed: recorded.is_some(),
                    },
                };
            }
            files.take(SETTINGS_FILE, ConfigSource::Settings, committed);
        }
        files
    }

    /// Keeps what reading one file gave: its document, or why it cannot be read as settings.
    fn take(
        &mut self,
        name: &'static str,
        source: ConfigSource,
        read: Result<Option<ReadFile>, SettingsError>,
    ) {
        match read {
            Ok(Some(file)) => self.parsed.push((name, source, file.value)),
            Ok(None) => {}
            Err(e) => self.unparseable.push(e),
        }
    }

    /// Whether the committed file's content has the user's approval.
    pub fn approval(&self) -> &Approval {
        &self.approval
    }

    /// What was set aside while reading the files, one warning each (a refused redaction rule
    /// is reported by [`SettingsFiles::redaction_warnings`]).
    pub fn warnings(&self) -> &[SettingsWarning] {
        &self.warnings
    }

    /// The committed file's document, when it parses.
    pub fn committed(&self) -> Option<&Value> {
        self.parsed
            .iter()
            .find(|(_, source, _)| *source == ConfigSource::Settings)
            .map(|(_, _, v)| v)
    }

    /// The per-clone file's document, when it parses.
    pub fn local(&self) -> Option<&Value> {
        self.parsed
            .iter()
            .find(|(_, source, _)| *source == ConfigSource::SettingsLocal)
            .map(|(_, _, v)| v)
    }

    /// The files that exist but do not parse ([`SettingsError::Syntax`] each).
    pub fn unparseable(&self) -> &[SettingsError] {
        &self.unparseable
    }

    /// `Ok` when every settings file parses, else the [`SettingsError::Unparseable`] a write
    /// (or a push, which the settings also steer) must fail with.
    pub fn refuse_writes(&self) -> Result<(), SettingsError> {
        if self.unparseable.is_empty() {
            return Ok(());
        }
        let paths: Vec<&str> = self
            .unparseable
            .iter()
            .filter_map(|e| match e {
                SettingsError::Syntax { path, .. } | SettingsError::TooLarge { path, .. } => {
                    Some(path.as_str())
                }
                _ => None,
            })
            .collect();
        Err(SettingsError::Unparseable {
            paths: paths.join(" and "),
        })
    }

    /// A block of the first parsed file (local first) that has it, not `null`, with the file.
    fn block(&self, key: &str) -> Option<(&'static str, ConfigSource, &Value)> {
        self.parsed.iter().find_map(|(name, source, v)| {
            v.get(key)
                .filter(|b| !b.is_null())
                .map(|b| (*name, *source, b))
        })
    }

    /// The checkpoints config: the environment override, else the local file's block, else the
    /// committed file's, else the default.
    pub fn checkpoints_config(&self) -> Result<ResolvedConfig, SettingsError> {
        if let Some(config) = from_env() {
            return Ok(ResolvedConfig {
                config: Some(config),
                source: ConfigSource::Env,
            });
        }
        self.files_checkpoints_config()
    }

    /// The checkpoints config of the files alone, the environment override left out: what
    /// `config set` validates, since the files outlive the variables of one shell.
    pub fn files_checkpoints_config(&self) -> Result<ResolvedConfig, SettingsError> {
        match self.block("checkpoints") {
            Some((name, source, block)) => Ok(ResolvedConfig {
                config: Some(decode_block(block.clone(), &shown(name))?),
                source,
            }),
            None => Ok(ResolvedConfig {
                config: None,
                source: ConfigSource::Default,
            }),
        }
    }

    /// The redactor of the `redaction` block: the local file's, else the committed file's; none
    /// means the built-in rules. A present block that does not decode is an error, and so is a
    /// refused user rule of the local file, since silently dropping a user's rules would write
    /// the secrets they meant to catch. The committed file can only add rules: its
    /// `"enabled": false` is ignored and its refused rules are left out
    /// ([`SettingsFiles::redaction_warnings`] names them). While a file does not parse,
    /// redaction is never off (the block that turned it off, or back on, may be the one that
    /// cannot be read).
    pub fn redactor(&self) -> Result<Redactor, SettingsError> {
        let Some((settings, source, path)) = self.redaction()? else {
            return Ok(Redactor::builtin());
        };
        if source == ConfigSource::Settings {
            return Ok(Redactor::untrusted(&settings).0);
        }
        Redactor::new(&settings).map_err(|source| SettingsError::Rule { path, source })
    }

    /// Fails with the first rule [`SettingsFiles::redactor`] would refuse or set aside, whichever
    /// file it is in: what `config set` checks before writing a rule.
    pub fn check_redaction(&self) -> Result<(), SettingsError> {
        let Some((settings, source, path)) = self.redaction()? else {
            return Ok(());
        };
        let refused = match source {
            ConfigSource::Settings => Redactor::untrusted(&settings).1.into_iter().next(),
            _ => Redactor::new(&settings).err(),
        };
        match refused {
            Some(source) => Err(SettingsError::Rule { path, source }),
            None => Ok(()),
        }
    }

    /// What [`SettingsFiles::redactor`] sets aside of the committed file's `redaction` block,
    /// one warning each: `"enabled": false`, and each refused rule.
    pub fn redaction_warnings(&self) -> Vec<SettingsWarning> {
        let Ok(Some((settings, ConfigSource::Settings, path))) = self.redaction() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let turned_off = self
            .block("redaction")
            .and_then(|(_, _, b)| b.get("enabled"))
            .is_some_and(|v| v == &Value::Bool(false));
        if turned_off {
            out.push(SettingsWarning::RedactionOff { path: path.clone() });
        }
        out.extend(Redactor::untrusted(&settings).1.into_iter().map(|source| {
            SettingsWarning::RuleRefused {
                path: path.clone(),
                source,
            }
        }));
        out
    }

    /// The effective `redaction` block as [`SettingsFiles::redactor`] uses it (`enabled`
    /// cleared when the committed file or a file that does not parse would turn it off), where
    /// it came from and its file as shown; `None` without a block (the built-in rules).
    pub fn redaction(
        &self,
    ) -> Result<Option<(RedactionSettings, ConfigSource, String)>, SettingsError> {
        let Some((name, source, block)) = self.block("redaction") else {
            return Ok(None);
        };
        let mut settings: RedactionSettings =
            serde_json::from_value(block.clone()).map_err(|e| SettingsError::Block {
                block: "redaction",
                path: shown(name),
                message: e.to_string(),
            })?;
        if !self.unparseable.is_empty() || source == ConfigSource::Settings {
            settings.enabled = None;
        }
        Ok(Some((settings, source, shown(name))))
    }

    /// These files with the one named `name` ([`SETTINGS_FILE`] or [`LOCAL_SETTINGS_FILE`])
    /// replaced by `doc`: the settings an edit would leave, to validate before anything is
    /// written.
    pub fn with_document(&self, name: &'static str, doc: Value) -> SettingsFiles {
        let source = match name {
            LOCAL_SETTINGS_FILE => ConfigSource::SettingsLocal,
            _ => ConfigSource::Settings,
        };
        let mut parsed: Vec<_> = self
            .parsed
            .iter()
            .filter(|(n, _, _)| *n != name)
            .cloned()
            .collect();
        parsed.push((name, source, doc));
        // The local file comes first: it wins.
        parsed.sort_by_key(|(n, _, _)| *n != LOCAL_SETTINGS_FILE);
        let path = shown(name);
        let unparseable = self
            .unparseable
            .iter()
            .filter(|e| {
                !matches!(e, SettingsError::Syntax { path: p, .. } | SettingsError::TooLarge { path: p, .. } if *p == path)
            })
            .cloned()
            .collect();
        SettingsFiles {
            parsed,
            unparseable,
            approval: self.approval.clone(),
            warnings: self.warnings.clone(),
        }
    }
}

/// The `strategy_options` key of the hook budget in seconds.
pub const HOOK_BUDGET_SETTING: &str = "hook_budget_seconds";

impl SettingsFiles {
    /// One key of `strategy_options`: the local file's if that file sets the key (to anything
    /// but `null`), else the committed file's, unless the key needs approval
    /// ([`NEEDS_APPROVAL`]) and the user has not approved that file. Returns the value, where it
    /// came from and the file's path as shown in messages. Unreadable files count as absent
    /// (fail-soft), and so do files that do not parse: commands report those, and writes and
    /// pushes refuse while they remain.
    pub fn strategy_option(&self, key: &str) -> Option<(Value, ConfigSource, String)> {
        self.strategy_option_as_written(key)
            .filter(|(_, source, _)| {
                *source != ConfigSource::Settings
                    || !NEEDS_APPROVAL.contains(&key)
                    || self.approval.approved()
            })
    }

    /// One key of `strategy_options` as the files write it, approved or not: what `trust`
    /// shows.
    pub fn strategy_option_as_written(&self, key: &str) -> Option<(Value, ConfigSource, String)> {
        self.parsed.iter().find_map(|(name, source, v)| {
            v.get("strategy_options")?
                .get(key)
                .filter(|v| !v.is_null())
                .map(|v| (v.clone(), *source, shown(name)))
        })
    }

    /// A boolean key of `strategy_options`, resolved like every key by
    /// [`SettingsFiles::strategy_option`]; a non-boolean value counts as unset.
    fn bool_option(&self, key: &str) -> Option<bool> {
        self.strategy_option(key).and_then(|(v, _, _)| v.as_bool())
    }

    /// The top-level `enabled` key (`enable` sets it true, `disable` false in the per-clone
    /// file): the local file's when it sets a boolean, else the committed file's; `None` when
    /// neither does.
    pub fn enabled(&self) -> Option<bool> {
        self.parsed
            .iter()
            .find_map(|(_, _, v)| v.get("enabled").and_then(Value::as_bool))
    }

    /// Whether checkpoint pushing is enabled: `strategy_options.push_sessions`; default true.
    pub fn push_sessions_enabled(&self) -> bool {
        self.bool_option("push_sessions").unwrap_or(true)
    }

    /// Whether reads fetch missing checkpoints partially (`--filter=blob:none`, transcripts on
    /// read): `strategy_options.filtered_fetches`; default false.
    pub fn filtered_fetches_enabled(&self) -> bool {
        self.bool_option("filtered_fetches").unwrap_or(false)
    }

    /// `strategy_options.hook_budget_seconds` when it is a whole number of seconds, and where
    /// it came from (callers clamp it, and let the committed file only shorten the budget).
    pub fn hook_budget_seconds(&self) -> Option<(u64, ConfigSource)> {
        self.strategy_option(HOOK_BUDGET_SETTING)
            .and_then(|(v, source, _)| Some((v.as_u64()?, source)))
    }
}

impl crate::base::error::ExitStatus for SettingsError {
    /// A settings file that is wrong fails the command; it is not a usage error.
    fn exit_code(&self) -> i32 {
        match self {
            SettingsError::Syntax { .. }
            | SettingsError::TooLarge { .. }
            | SettingsError::Unparseable { .. }
            | SettingsError::Rule { .. }
            | SettingsError::Decode { .. }
            | SettingsError::Block { .. }
            | SettingsError::Required(_) => crate::base::error::FAILURE,
        }
    }
}
