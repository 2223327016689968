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

use serde::Deserialize;
use serde_json::Value;

use crate::base::fs::{read_cache_file, CacheFileError};
use crate::model::redact::{RedactionSettings, Redactor};

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

/// The file's path as shown in messages: `.entire/<name>` for the committed file,
/// [`LOCAL_SHOWN`] for the per-clone one.
pub fn shown(name: &str) -> String {
    if name == LOCAL_SETTINGS_FILE {
        return LOCAL_SHOWN.to_owned();
    }
    let path: PathBuf = [SETTINGS_DIR, name].iter().collect();
    path.to_string_lossy().into_owned()
}

/// The largest settings file read: a larger one is not read at all (a committed 1 GB file would
/// otherwise cost 1 GB of memory in every command), and counts as a file that does not parse.
pub const MAX_SETTINGS_BYTES: u64 = 1 << 20;

/// A settings file as read: its bytes (for the approval of a committed file recorded by an
/// older version, a digest of the bytes) and its JSON.
struct ReadFile {
    bytes: Vec<u8>,
    value: Value,
}

/// The bytes of the settings file at `path` (shown as `shown`), never through a symbolic link
/// at the file: `None` when it is missing, unreadable, not a regular file or empty (or only
/// whitespace: it says nothing, so nothing is lost); [`SettingsError::TooLarge`] over
/// [`MAX_SETTINGS_BYTES`].
fn read_bytes(path: &Path, shown: &str) -> Result<Option<Vec<u8>>, SettingsError> {
    let bytes = match read_cache_file(path, MAX_SETTINGS_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return Ok(None),
        Err(CacheFileError::TooLarge { size, max }) => {
            return Err(SettingsError::TooLarge {
                path: shown.to_owned(),
                size,
                max,
            })
        }
        Err(e) => {
            log::info!("ignoring {}: {e}", path.display());
            return Ok(None);
        }
    };
    Ok((!bytes.iter().all(u8::is_ascii_whitespace)).then_some(bytes))
}

/// [`read_bytes`], parsed: [`SettingsError::Syntax`] when it is not valid JSON.
fn read_file(path: &Path, shown: &str) -> Result<Option<ReadFile>, SettingsError> {
    let Some(bytes) = read_bytes(path, shown)? else {
        return Ok(None);
    };
    let value = serde_json::from_slice(&bytes).map_err(|e| SettingsError::Syntax {
        path: shown.to_owned(),
        message: e.to_string(),
    })?;
    Ok(Some(ReadFile { bytes, value }))
}

/// Whether `path` is a symbolic link (not followed).
fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// How git tracks a path, as [`SettingsContext::tracked_kind`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tracked {
    /// A regular file.
    File,
    /// A symbolic link.
    Symlink,
    /// A gitlink: a submodule.
    Submodule,
    /// A directory (of `HEAD`'s tree).
    Directory,
}

/// Why the work tree's `.entire` is not a directory of the user's own, so that whoever can
/// push wrote what is under it: its files are read as the committed file is (untrusted), and
/// nothing of ours is written into it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForeignDir {
    /// `.entire` is a symbolic link (a checkout makes one where git tracks one).
    #[error("{SETTINGS_DIR} is a symbolic link")]
    Symlink,
    /// `.entire` holds a `.git`: it is a repository of its own (a submodule).
    #[error("{SETTINGS_DIR} is a submodule (a repository of its own)")]
    Submodule,
    /// git tracks `.entire` itself as something other than a directory.
    #[error("git tracks {SETTINGS_DIR} as {}", match .0 {
        Tracked::Symlink => "a symbolic link",
        Tracked::Submodule => "a submodule",
        Tracked::File | Tracked::Directory => "a file",
    })]
    Tracked(Tracked),
}

/// Why `.entire` of `worktree` is not the user's own directory, if it is not (see
/// [`ForeignDir`]); `None` also when there is no `.entire`.
pub fn foreign_settings_dir(worktree: &Path, context: &dyn SettingsContext) -> Option<ForeignDir> {
    let dir = worktree.join(SETTINGS_DIR);
    let meta = std::fs::symlink_metadata(&dir).ok();
    if meta.as_ref().is_some_and(|m| m.file_type().is_symlink()) {
        return Some(ForeignDir::Symlink);
    }
    if meta.is_some() && std::fs::symlink_metadata(dir.join(".git")).is_ok() {
        return Some(ForeignDir::Submodule);
    }
    match context.tracked_kind(SETTINGS_DIR) {
        None | Some(Tracked::Directory) => None,
        Some(kind) => Some(ForeignDir::Tracked(kind)),
    }
}

/// The committed settings file of `worktree`. The file itself is never read through a link
/// (one warning says so); `.entire` may be one (its files are untrusted like the committed
/// file) only while it resolves inside the work tree.
fn read_committed(
    worktree: &Path,
    warnings: &mut Vec<SettingsWarning>,
) -> Result<Option<ReadFile>, SettingsError> {
    let dir = worktree.join(SETTINGS_DIR);
    let path = dir.join(SETTINGS_FILE);
    if is_link(&dir) {
        let inside = std::fs::canonicalize(&dir)
            .ok()
            .zip(std::fs::canonicalize(worktree).ok())
            .is_some_and(|(real, root)| real.starts_with(root));
        if !inside {
            log::warn!(
                "ignoring {}: it points outside the work tree",
                dir.display()
            );
            return Ok(None);
        }
    }
    if is_link(&path) {
        warnings.push(SettingsWarning::Link {
            path: shown(SETTINGS_FILE),
        });
        return Ok(None);
    }
    read_file(&path, &shown(SETTINGS_FILE))
}

/// The per-clone file as found at its old place, `.entire/settings.local.json` of `worktree`,
/// when it is the user's own (see the module docs): moved to [`local_path`] (a file already
/// there is kept beside it as `settings.local.json.replaced`: the one in the work tree is the
/// newer word). Otherwise it stays where it is, unread, with one warning saying why. Returns
/// the bytes when the move failed, to be read where they are for this command.
fn move_legacy_local(
    worktree: &Path,
    common_dir: &Path,
    context: &dyn SettingsContext,
    files: &mut SettingsFiles,
) -> Option<Vec<u8>> {
    let legacy = worktree.join(SETTINGS_DIR).join(LOCAL_SETTINGS_FILE);
    let meta = std::fs::symlink_metadata(&legacy).ok()?;
    let path = LEGACY_LOCAL_SHOWN.to_owned();
    if let Some(why) = foreign_settings_dir(worktree, context) {
        files
            .warnings
            .push(SettingsWarning::ForeignLocalFile { path, why });
        return None;
    }
    if meta.file_type().is_symlink() {
        files.warnings.push(SettingsWarning::Link { path });
        return None;
    }
    if !meta.is_file() {
        return None;
    }
    if context
        .tracked_kind(&format!("{SETTINGS_DIR}/{LOCAL_SETTINGS_FILE}"))
        .is_some()
    {
        files
            .warnings
            .push(SettingsWarning::TrackedLocalFile { path });
        return None;
    }
    let bytes = match read_cache_file(&legacy, MAX_SETTINGS_BYTES) {
        Ok(Some(b)) => b,
        Ok(None) => return None,
        Err(CacheFileError::TooLarge { size, max }) => {
            files
                .unparseable
                .push(SettingsError::TooLarge { path, size, max });
            return None;
        }
        Err(e) => {
            log::info!("ignoring {}: {e}", legacy.display());
            return None;
        }
    };
    let target = local_path(common_dir);
    let replaced = target.with_extension("json.replaced");
    let moved = (|| -> std::io::Result<bool> {
        std::fs::create_dir_all(common_dir.join("entire"))?;
        let replacing = std::fs::symlink_metadata(&target).is_ok();
        if replacing {
            std::fs::rename(&target, &replaced)?;
        }
        crate::base::fs::write_atomic(&target, &bytes, 0o644)?;
        match std::fs::remove_file(&legacy) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(replacing),
        }
    })();
    match moved {
        Ok(replacing) => {
            files.warnings.push(SettingsWarning::Moved { replacing });
            None
        }
        Err(e) => {
            files.warnings.push(SettingsWarning::NotMoved {
                reason: e.to_string(),
            });
            Some(bytes)
        }
    }
}

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
const NEEDS_APPROVAL: [&str; 1] = [CHECKPOINT_REMOTE_SETTING];

/// What only git knows about the settings files: whether the user approved the committed one,
/// and what git tracks. The git layer implements it for a repository.
pub trait SettingsContext {
    /// The digest [`TRUST_KEY`] records, if any.
    fn approved_digest(&self) -> Option<String>;
    /// How git tracks `path` (relative to the work tree, `/`-separated) in its index or in
    /// `HEAD`, if it does (an entry of the index wins).
    fn tracked_kind(&self, path: &str) -> Option<Tracked>;
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

/// The caps on what a read of hostile checkpoint data may cost (docs/configuration.md,
/// "Limits"): set in the per-clone file's `limits` block only (the committed file's is
/// ignored: the data and the settings may come from the same stranger).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The most sessions one checkpoint may list (`limits.sessions_per_checkpoint`).
    pub sessions_per_checkpoint: usize,
    /// The most entries one tree of a checkpoint may hold (`limits.tree_entries`).
    pub tree_entries: usize,
    /// The most bytes one file of a checkpoint (a transcript: all its chunks) may hold to be
    /// read into memory (`limits.blob_bytes`); larger ones are only streamed.
    pub blob_bytes: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            sessions_per_checkpoint: 100_000,
            tree_entries: 1_000_000,
            blob_bytes: 512 << 20,
        }
    }
}

/// The names of the keys of the `limits` block, as messages name them.
pub const LIMIT_SESSIONS: &str = "limits.sessions_per_checkpoint";
/// See [`LIMIT_SESSIONS`].
pub const LIMIT_TREE_ENTRIES: &str = "limits.tree_entries";
/// See [`LIMIT_SESSIONS`].
pub const LIMIT_BLOB_BYTES: &str = "limits.blob_bytes";

impl SettingsFiles {
    /// The caps of the per-clone file's `limits` block, each key a whole number (at least 1;
    /// anything else, and a key it does not set, is the default).
    pub fn limits(&self) -> Limits {
        let block = self
            .parsed
            .iter()
            .find(|(_, source, _)| *source == ConfigSource::SettingsLocal)
            .and_then(|(_, _, v)| v.get("limits"));
        let get = |key: &str| {
            block
                .and_then(|b| b.get(key))
                .and_then(Value::as_u64)
                .filter(|&n| n > 0)
        };
        let d = Limits::default();
        let size = |key: &str, default: usize| {
            get(key).map_or(default, |n| usize::try_from(n).unwrap_or(usize::MAX))
        };
        Limits {
            sessions_per_checkpoint: size("sessions_per_checkpoint", d.sessions_per_checkpoint),
            tree_entries: size("tree_entries", d.tree_entries),
            blob_bytes: get("blob_bytes").unwrap_or(d.blob_bytes),
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

    /// A work tree (with a `.git` common dir) holding `.entire/<name>` for each of `files`;
    /// the settings files as read (the per-clone one moved into the common dir).
    fn work_tree(files: &[(&str, &str)]) -> (tempfile::TempDir, SettingsFiles) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(SETTINGS_DIR)).unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        for (name, text) in files {
            std::fs::write(dir.path().join(SETTINGS_DIR).join(name), text).unwrap();
        }
        let read = read_again(dir.path());
        (dir, read)
    }

    /// The settings files of the work tree [`work_tree`] made, read again.
    fn read_again(root: &Path) -> SettingsFiles {
        SettingsFiles::read(Some(root), Some(&root.join(".git")), &NoContext)
    }

    #[test]
    fn files_fail_soft_and_local_wins() {
        let (dir, files) = work_tree(&[]);
        let root = dir.path();
        assert_eq!(
            files.checkpoints_config().unwrap().source,
            ConfigSource::Default
        );
        let resolved = || read_again(root).checkpoints_config();
        std::fs::write(root.join(".entire/settings.json"), "{not json").unwrap();
        assert_eq!(resolved().unwrap().config, None);
        std::fs::write(
            root.join(".entire/settings.json"),
            r#"{"enabled": "yes", "checkpoints": null}"#,
        )
        .unwrap();
        assert_eq!(resolved().unwrap().config, None);
        std::fs::write(
            root.join(".entire/settings.json"),
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}], "bogus": 1}}"#,
        )
        .unwrap();
        assert!(resolved().is_err(), "invalid base block is an error");
        std::fs::write(
            root.join(".entire/settings.local.json"),
            r#"{"checkpoints": {"primary": {"type": "git-branch"}}}"#,
        )
        .unwrap();
        let r = resolved().unwrap();
        assert_eq!(r.source, ConfigSource::SettingsLocal);
        let c = r.config.unwrap();
        assert_eq!(c.primary.kind, "git-branch");
        assert!(
            c.mirrors.is_empty(),
            "the local block replaces the base block wholesale"
        );
    }

    #[test]
    fn settings_files_are_never_read_through_a_link() {
        let (dir, _) = work_tree(&[]);
        let root = dir.path();
        let outside = root.join("outside.json");
        std::fs::write(
            &outside,
            r#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#,
        )
        .unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".entire/settings.json")).unwrap();
        std::fs::create_dir(root.join(".git/entire")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join(".git/entire/settings.local.json")).unwrap();
        let files = read_again(root);
        assert_eq!(files.checkpoints_config().unwrap().config, None);
        assert_eq!(
            files.warnings(),
            [SettingsWarning::Link {
                path: ".entire/settings.json".into()
            }]
        );
    }

    #[test]
    fn the_users_per_clone_file_moves_into_the_common_dir() {
        let local = r#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#;
        let (dir, files) = work_tree(&[(LOCAL_SETTINGS_FILE, local)]);
        let root = dir.path();
        assert_eq!(
            files.warnings(),
            [SettingsWarning::Moved { replacing: false }]
        );
        assert!(!root.join(".entire/settings.local.json").exists());
        assert_eq!(
            std::fs::read_to_string(root.join(".git/entire/settings.local.json")).unwrap(),
            local
        );
        assert_eq!(files.local(), Some(&serde_json::from_str(local).unwrap()));
        // Written again at the old place, it is the newer word: it replaces the one moved, which
        // is kept beside it.
        let newer = r#"{"checkpoints": {"primary": {"type": "git-branch"}}}"#;
        std::fs::write(root.join(".entire/settings.local.json"), newer).unwrap();
        let files = read_again(root);
        assert_eq!(
            files.warnings(),
            [SettingsWarning::Moved { replacing: true }]
        );
        assert_eq!(
            files
                .checkpoints_config()
                .unwrap()
                .config
                .unwrap()
                .primary
                .kind,
            "git-branch"
        );
        assert_eq!(
            std::fs::read_to_string(root.join(".git/entire/settings.local.json.replaced")).unwrap(),
            local
        );
        assert!(read_again(root).warnings().is_empty(), "moved once");
    }

    #[test]
    fn a_per_clone_file_under_a_foreign_settings_dir_stays_unread() {
        let local = r#"{"redaction": {"enabled": false}}"#;
        // .entire a link to a directory of the work tree.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("conf")).unwrap();
        std::fs::create_dir(root.join(".git")).unwrap();
        std::fs::write(root.join("conf/settings.local.json"), local).unwrap();
        std::fs::write(
            root.join("conf/settings.json"),
            r#"{"redaction": {"enabled": false}}"#,
        )
        .unwrap();
        std::os::unix::fs::symlink("conf", root.join(".entire")).unwrap();
        let files = read_again(root);
        assert!(files.redactor().unwrap().is_enabled());
        assert_eq!(files.local(), None);
        assert!(files.committed().is_some(), "read as the committed file is");
        assert!(matches!(
            files.warnings(),
            [SettingsWarning::ForeignLocalFile {
                why: ForeignDir::Symlink,
                ..
            }]
        ));
        assert!(root.join("conf/settings.local.json").exists(), "left alone");
        // .entire a repository of its own (a submodule).
        let (dir, files) = work_tree(&[]);
        std::fs::remove_dir(dir.path().join(".entire")).unwrap();
        std::fs::create_dir_all(dir.path().join(".entire/.git")).unwrap();
        std::fs::write(dir.path().join(".entire/settings.local.json"), local).unwrap();
        drop(files);
        let files = read_again(dir.path());
        assert!(files.redactor().unwrap().is_enabled());
        assert!(matches!(
            files.warnings(),
            [SettingsWarning::ForeignLocalFile {
                why: ForeignDir::Submodule,
                ..
            }]
        ));
    }

    #[test]
    fn approval_is_of_what_the_file_asks_for() {
        let doc = |v: &str| -> Value { serde_json::from_str(v).unwrap() };
        let remote = r#"{"strategy_options": {"checkpoint_remote": {"url": "https://a/b"}, "push_sessions": true}, "redaction": {"rules": []}}"#;
        let a = asks_digest(&doc(remote));
        // Other keys, their order and white space do not change it.
        assert_eq!(
            a,
            asks_digest(&doc(
                r#"{"redaction": {"rules": [{"name": "x", "pattern": "y"}]},
                    "strategy_options": {"push_sessions": false, "checkpoint_remote": {"url": "https://a/b"}}}"#
            ))
        );
        // Where checkpoints go does.
        assert_ne!(
            a,
            asks_digest(&doc(
                r#"{"strategy_options": {"checkpoint_remote": {"url": "https://a/c"}}}"#
            ))
        );
        assert_ne!(
            a,
            asks_digest(&doc(
                r#"{"strategy_options": {"checkpoint_remote": {"url": "https://a/b"}}, "checkpoints": {"mirrors": [{"type": "fs"}]}}"#
            ))
        );
        assert_ne!(a, asks_digest(&doc("{}")));
    }

    #[test]
    fn a_file_that_does_not_parse_is_reported_and_refuses_writes() {
        for (_dir, files) in [work_tree(&[]), work_tree(&[(SETTINGS_FILE, " \n")])] {
            assert!(files.unparseable().is_empty());
            assert_eq!(files.refuse_writes(), Ok(()));
        }
        let (_dir, files) = work_tree(&[
            (
                SETTINGS_FILE,
                r#"{"checkpoints": {"primary": {"type": "git-refs"}},}"#,
            ),
            (LOCAL_SETTINGS_FILE, "{"),
        ]);
        let paths: Vec<String> = files
            .unparseable()
            .iter()
            .map(|e| match e {
                SettingsError::Syntax { path, message } => {
                    assert!(message.contains("line 1"), "{message}");
                    path.clone()
                }
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            paths,
            [".git/entire/settings.local.json", ".entire/settings.json"]
        );
        assert!(files.unparseable()[1]
            .to_string()
            .starts_with(".entire/settings.json is not valid JSON: trailing comma"));
        let refused = files.refuse_writes().unwrap_err();
        assert!(
            refused.to_string().starts_with(
                "refusing to write checkpoints: .git/entire/settings.local.json and .entire/settings.json cannot be parsed"
            ),
            "{refused}"
        );
        // Reads go on without them: the default store.
        assert_eq!(files.checkpoints_config().unwrap().config, None);
    }

    #[test]
    fn redaction_is_never_off_while_a_file_does_not_parse() {
        let off = r#"{"redaction": {"enabled": false, "rules": [{"name": "corp", "pattern": "CORPSECRET-[0-9]+"}]}}"#;
        let (_dir, files) = work_tree(&[(LOCAL_SETTINGS_FILE, off)]);
        assert!(!files.redactor().unwrap().is_enabled());
        let (_dir, files) = work_tree(&[(LOCAL_SETTINGS_FILE, off), (SETTINGS_FILE, "{,}")]);
        let r = files.redactor().unwrap();
        assert!(r.is_enabled());
        assert_eq!(
            r.redact_str("CORPSECRET-42 and AKIAIOSFODNN7EXAMPLE").0,
            "REDACTED and REDACTED"
        );
    }

    #[test]
    fn the_committed_file_cannot_turn_redaction_off_nor_fail_on_a_rule() {
        let committed = r#"{"redaction": {"enabled": false, "rules": [{"name": "corp", "pattern": "CORPSECRET-[0-9]+"}, {"name": "all", "pattern": ".*"}]}}"#;
        let (_dir, files) = work_tree(&[(SETTINGS_FILE, committed)]);
        let r = files.redactor().unwrap();
        assert!(r.is_enabled());
        assert_eq!(r.redact_str("CORPSECRET-42 x").0, "REDACTED x");
        let warnings: Vec<String> = files
            .redaction_warnings()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(warnings[0].contains("cannot turn redaction off"));
        assert!(warnings[1].contains("\"all\"") && warnings[1].contains("empty string"));
    }

    #[test]
    fn a_refused_rule_names_its_file() {
        let (_dir, files) = work_tree(&[(
            LOCAL_SETTINGS_FILE,
            r#"{"redaction": {"rules": [{"name": "greedy", "pattern": ".*"}]}}"#,
        )]);
        let err = files.redactor().err().unwrap();
        assert_eq!(
            err,
            SettingsError::Rule {
                path: ".git/entire/settings.local.json".into(),
                source: crate::model::redact::RedactError::MatchesEmpty {
                    name: "greedy".into()
                }
            }
        );
    }
}
