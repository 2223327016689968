//! Editing one settings file (`config set` / `config unset`): a dotted key path into the JSON
//! document, set or removed in memory, then written back atomically.
//!
//! The document keeps every key it had, in its order (serde_json's `preserve_order`); it is
//! written back pretty-printed, so only whitespace can change (JSON has no comments to keep).
//! What the edited settings mean is checked above this layer, before [`Document::save`].

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::settings::{
    local_path, shown, ForeignDir, SettingsError, LOCAL_SETTINGS_FILE, SETTINGS_DIR, SETTINGS_FILE,
};

/// Errors of an edit.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    /// The key is empty or has an empty segment (`a..b`, `.a`).
    #[error("invalid key {key:?}: empty key or key segment (expected a dotted path such as strategy_options.push_sessions)")]
    EmptyKey {
        /// The key as given.
        key: String,
    },
    /// A segment of the key names a value that is not an object, so the key cannot go inside it.
    #[error("cannot set {key}: {at} is not an object in {file} (it is {found}); nothing changed")]
    NotAnObject {
        /// The whole key.
        key: String,
        /// The prefix of the key that names the non-object.
        at: String,
        /// The file, as shown.
        file: String,
        /// What is there (`a string`, `an array`...).
        found: &'static str,
    },
    /// `unset` of a key the file does not set.
    #[error("{key} is not set in {file}; nothing changed")]
    NotSet {
        /// The key.
        key: String,
        /// The file, as shown.
        file: String,
    },
    /// The file exists but does not parse: rewriting it would lose what it says.
    #[error("{0}; fix it by hand first, nothing changed")]
    Syntax(SettingsError),
    /// The file parses but is not a JSON object.
    #[error("{file} is not a JSON object; fix it by hand first, nothing changed")]
    NotADocument {
        /// The file, as shown.
        file: String,
    },
    /// `.entire` or the file is a symbolic link: writing through it could land outside the
    /// work tree (the link may have come with a clone).
    #[error("{path} is a symbolic link; refusing to write through it, nothing changed")]
    Symlink {
        /// The link, as shown.
        path: String,
    },
    /// `.entire` is not the user's own directory (a submodule, say): what we write there would
    /// land in someone else's files.
    #[error("{why}; refusing to write {path} into it, nothing changed")]
    Foreign {
        /// The file that would have been written, as shown.
        path: String,
        /// Why `.entire` is not the user's.
        why: ForeignDir,
    },
    /// Reading or writing the file failed.
    #[error("cannot {action} {path}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file, as shown.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl crate::base::error::ExitStatus for EditError {
    /// A key that cannot be a path is a usage error; a missing key on `unset` fails (exit 1),
    /// as `git config --unset` fails (with its own code, 5) when there is nothing to remove.
    fn exit_code(&self) -> i32 {
        use crate::base::error::{FAILURE, USAGE};
        match self {
            EditError::EmptyKey { .. } | EditError::NotAnObject { .. } => USAGE,
            EditError::NotSet { .. }
            | EditError::Syntax(_)
            | EditError::NotADocument { .. }
            | EditError::Symlink { .. }
            | EditError::Foreign { .. }
            | EditError::Io { .. } => FAILURE,
        }
    }
}

/// A dotted key path into a settings document, such as `strategy_options.push_sessions`:
/// non-empty segments, each an object member (a key containing a dot cannot be named).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyPath(Vec<String>);

impl KeyPath {
    /// Parses `key`; [`EditError::EmptyKey`] for an empty key or segment.
    pub fn parse(key: &str) -> Result<KeyPath, EditError> {
        let segments: Vec<String> = key.split('.').map(str::to_owned).collect();
        if segments.iter().any(String::is_empty) {
            return Err(EditError::EmptyKey {
                key: key.to_owned(),
            });
        }
        Ok(KeyPath(segments))
    }

    /// The segments, outermost first.
    pub fn segments(&self) -> &[String] {
        &self.0
    }
}

impl std::fmt::Display for KeyPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0.join("."))
    }
}

/// A command-line VALUE: JSON when it parses as JSON (`false`, `14`, `{"url": "x"}`), else the
/// text as a JSON string (`git-refs`).
pub fn parse_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One settings file, loaded for editing.
#[derive(Debug)]
pub struct Document {
    /// The file's name ([`SETTINGS_FILE`] or [`LOCAL_SETTINGS_FILE`]).
    name: &'static str,
    /// Where it is.
    path: PathBuf,
    /// The content (an object).
    doc: Map<String, Value>,
    /// The permissions of the existing file, kept when it is replaced.
    mode: Option<u32>,
}

/// Refuses to write `path` (shown as `what`) under `.entire` of `worktree` when `.entire` is
/// not the user's own directory (`foreign`) or it or the file is a symbolic link.
fn check_in_settings_dir(
    worktree: &Path,
    foreign: Option<ForeignDir>,
    path: &Path,
    what: &str,
) -> Result<(), EditError> {
    let dir = worktree.join(SETTINGS_DIR);
    for (p, shown) in [(dir.as_path(), SETTINGS_DIR), (path, what)] {
        if std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(EditError::Symlink {
                path: shown.to_owned(),
            });
        }
    }
    match foreign {
        Some(why) => Err(EditError::Foreign {
            path: what.to_owned(),
            why,
        }),
        None => Ok(()),
    }
}

impl Document {
    /// Loads the committed `.entire/settings.json` of `worktree`; `foreign` says why `.entire`
    /// is not the user's own directory, if it is not (then nothing is loaded: see
    /// [`Document::load_at`] for the rest).
    pub fn load_committed(
        worktree: &Path,
        foreign: Option<ForeignDir>,
    ) -> Result<Document, EditError> {
        let path = worktree.join(SETTINGS_DIR).join(SETTINGS_FILE);
        check_in_settings_dir(worktree, foreign, &path, &shown(SETTINGS_FILE))?;
        Document::load_at(SETTINGS_FILE, path)
    }

    /// Loads the per-clone settings file of the repository whose git common dir is `common_dir`.
    pub fn load_local(common_dir: &Path) -> Result<Document, EditError> {
        let path = local_path(common_dir);
        if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(EditError::Symlink {
                path: shown(LOCAL_SETTINGS_FILE),
            });
        }
        Document::load_at(LOCAL_SETTINGS_FILE, path)
    }

    /// Loads the file `name` at `path`; a missing or blank file is an empty document. Refuses a
    /// file that does not parse or is not an object.
    fn load_at(name: &'static str, path: PathBuf) -> Result<Document, EditError> {
        let (bytes, mode) = match std::fs::read(&path) {
            Ok(b) => {
                let mode = std::fs::metadata(&path)
                    .map(|m| m.permissions().mode() & 0o7777)
                    .ok();
                (b, mode)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => (Vec::new(), None),
            Err(source) => {
                return Err(EditError::Io {
                    action: "read",
                    path: shown(name),
                    source,
                })
            }
        };
        let doc = if bytes.iter().all(u8::is_ascii_whitespace) {
            Map::new()
        } else {
            match serde_json::from_slice(&bytes) {
                Ok(Value::Object(m)) => m,
                Ok(_) => return Err(EditError::NotADocument { file: shown(name) }),
                Err(e) => {
                    return Err(EditError::Syntax(SettingsError::Syntax {
                        path: shown(name),
                        message: e.to_string(),
                    }))
                }
            }
        };
        Ok(Document {
            name,
            path,
            doc,
            mode,
        })
    }

    /// The file's name ([`SETTINGS_FILE`] or [`LOCAL_SETTINGS_FILE`]).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// The file as shown in messages.
    pub fn shown(&self) -> String {
        shown(self.name)
    }

    /// The document as it stands (edits included).
    pub fn value(&self) -> Value {
        Value::Object(self.doc.clone())
    }

    /// Sets `key` to `value`, creating the objects on the way; a new key goes last, an existing
    /// one keeps its place.
    pub fn set(&mut self, key: &KeyPath, value: Value) -> Result<(), EditError> {
        let file = self.shown();
        let (last, parents) = key.segments().split_last().expect("a key has a segment");
        let mut map = &mut self.doc;
        for (depth, segment) in parents.iter().enumerate() {
            let slot = map
                .entry(segment.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            map = match slot {
                Value::Object(m) => m,
                other => {
                    return Err(EditError::NotAnObject {
                        key: key.to_string(),
                        at: key.segments()[..=depth].join("."),
                        file,
                        found: kind(other),
                    })
                }
            };
        }
        map.insert(last.clone(), value);
        Ok(())
    }

    /// Removes `key`, keeping the order of the rest (objects left empty stay, as
    /// `git config --unset` leaves the section). [`EditError::NotSet`] when it is not there.
    pub fn unset(&mut self, key: &KeyPath) -> Result<(), EditError> {
        let file = self.shown();
        let not_set = || EditError::NotSet {
            key: key.to_string(),
            file,
        };
        let (last, parents) = key.segments().split_last().expect("a key has a segment");
        let mut map = &mut self.doc;
        for segment in parents {
            map = match map.get_mut(segment) {
                Some(Value::Object(m)) => m,
                _ => return Err(not_set()),
            };
        }
        match map.shift_remove(last) {
            Some(_) => Ok(()),
            None => Err(not_set()),
        }
    }

    /// Writes the document back atomically (pretty-printed, one trailing newline), creating
    /// its directory when missing; the permissions of the file it replaces are kept.
    pub fn save(&self) -> Result<(), EditError> {
        let io = |source| EditError::Io {
            action: "write",
            path: self.shown(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut text = serde_json::to_string_pretty(&self.doc).expect("a JSON value serializes");
        text.push('\n');
        crate::base::fs::write_atomic(&self.path, text.as_bytes(), self.mode.unwrap_or(0o644))
            .map_err(io)
    }
}

/// The lines of `.entire/.gitignore`, as the reference writes them: the per-clone settings file
/// and the local scratch directories are never committed.
pub const IGNORED: [&str; 4] = ["tmp/", "settings.local.json", "metadata/", "logs/"];

/// The lines of [`IGNORED`] that the `.gitignore` text `existing` lacks, in [`IGNORED`]'s order.
fn lines_missing(existing: &str) -> Vec<&'static str> {
    IGNORED
        .into_iter()
        .filter(|line| !existing.lines().any(|l| l.trim() == *line))
        .collect()
}

/// The lines of [`IGNORED`] that `.entire/.gitignore` of `worktree` lacks (all of them when it
/// is missing or cannot be read): what [`ignore_local_files`] would add.
pub fn ignored_lines_missing(worktree: &Path) -> Vec<&'static str> {
    let path = worktree.join(SETTINGS_DIR).join(".gitignore");
    lines_missing(&std::fs::read_to_string(path).unwrap_or_default())
}

/// Makes git ignore the per-clone files of `.entire/`: writes `.entire/.gitignore` with
/// [`IGNORED`], or adds to an existing one only the lines it lacks (a user's own lines and
/// their order are kept). Idempotent; creates `.entire/` when missing. Refused where `.entire`
/// is not the user's own directory (`foreign`).
pub fn ignore_local_files(worktree: &Path, foreign: Option<ForeignDir>) -> Result<(), EditError> {
    let dir = worktree.join(SETTINGS_DIR);
    let path = dir.join(".gitignore");
    let shown_path = format!("{SETTINGS_DIR}/.gitignore");
    check_in_settings_dir(worktree, foreign, &path, &shown_path)?;
    let io = |action| {
        let path = shown_path.clone();
        move |source| EditError::Io {
            action,
            path,
            source,
        }
    };
    let existing = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io("read")(e)),
    };
    let missing = lines_missing(&existing);
    if missing.is_empty() {
        return Ok(());
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    for line in missing {
        text.push_str(line);
        text.push('\n');
    }
    std::fs::create_dir_all(&dir).map_err(io("write"))?;
    crate::base::fs::write_atomic(&path, text.as_bytes(), 0o644).map_err(io("write"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(v: Value) -> Document {
        Document {
            name: "settings.json",
            path: PathBuf::new(),
            doc: match v {
                Value::Object(m) => m,
                _ => unreachable!(),
            },
            mode: None,
        }
    }

    fn key(k: &str) -> KeyPath {
        KeyPath::parse(k).unwrap()
    }

    #[test]
    fn values_are_json_when_they_parse() {
        assert_eq!(parse_value("false"), json!(false));
        assert_eq!(parse_value("14"), json!(14));
        assert_eq!(parse_value(r#"{"url": "x"}"#), json!({"url": "x"}));
        assert_eq!(parse_value("git-refs"), json!("git-refs"));
        assert_eq!(parse_value(""), json!(""));
    }

    #[test]
    fn keys_need_every_segment() {
        for bad in ["", ".", "a.", ".a", "a..b"] {
            assert!(
                matches!(KeyPath::parse(bad), Err(EditError::EmptyKey { .. })),
                "{bad:?}"
            );
        }
        assert_eq!(key("a.b").segments(), ["a", "b"]);
    }

    #[test]
    fn set_and_unset_keep_order() {
        let mut d = doc(json!({"z": 1, "s": {"b": 1, "a": 2}}));
        d.set(&key("s.c.d"), json!(true)).unwrap();
        d.set(&key("s.b"), json!(3)).unwrap();
        assert_eq!(
            serde_json::to_string(&d.value()).unwrap(),
            r#"{"z":1,"s":{"b":3,"a":2,"c":{"d":true}}}"#
        );
        d.unset(&key("s.b")).unwrap();
        assert_eq!(
            serde_json::to_string(&d.value()).unwrap(),
            r#"{"z":1,"s":{"a":2,"c":{"d":true}}}"#
        );
        assert!(matches!(
            d.unset(&key("s.b")),
            Err(EditError::NotSet { .. })
        ));
        assert!(matches!(
            d.unset(&key("z.q")),
            Err(EditError::NotSet { .. })
        ));
        let err = d.set(&key("z.q"), json!(1)).unwrap_err();
        assert_eq!(
            err.to_string(),
            "cannot set z.q: z is not an object in .entire/settings.json (it is a number); nothing changed"
        );
    }
}
