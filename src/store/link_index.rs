//! The link index of the v1 branch: the commits each checkpoint of the branch names in its
//! root's `linked_commits` ([`crate::model::links`]), by the checkpoint's subtree, so that the
//! commands that map a commit to its checkpoints (`show <commit>`, `blame`, `why`, `doctor`)
//! read the root `metadata.json` only of the checkpoints that changed since the last command,
//! not of every one (the git-refs store's links are in its summary index, `store::summary`).
//!
//! Like the summary index it is a cache, never the source of truth: an entry is used only for
//! exactly the subtree it was read from (any change to a checkpoint is a new subtree). A file
//! that is missing, unreadable, too large, not a regular file or of another version is ignored
//! and rebuilt. A checkpoint whose root cannot be read (a blob not fetched into a partial clone
//! yet, a document that does not parse) names no commit and is not recorded, so it is read
//! again next time. Writers replace the file atomically and take no lock.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::base::fs::{read_cache_file, write_atomic};
use crate::base::id::CheckpointId;
use crate::config::settings::Limits;
use crate::git::objects::{Objects, Oid};
use crate::model::links::LinkedCommits;
use crate::store::tree;

/// The index's file name, in `<git common dir>/entire/`.
pub const INDEX_FILE: &str = "branch-links";
/// The format version this code reads and writes.
const VERSION: u32 = 1;
/// The largest index read: about a million checkpoints without links.
const MAX_BYTES: u64 = 64 << 20;

/// The index file.
#[derive(Debug, Default, Serialize, Deserialize)]
struct IndexFile {
    version: u32,
    /// By checkpoint subtree (hex): what its root names.
    trees: BTreeMap<String, Entry>,
}

/// What one checkpoint's root names.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    links: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    refused: Vec<String>,
}

/// The index of the repository whose git common dir is `common`.
pub fn path(common: &Path) -> PathBuf {
    common.join("entire").join(INDEX_FILE)
}

/// The index at `path`: empty when there is none or it cannot be trusted.
fn load(path: &Path) -> IndexFile {
    let parsed = read_cache_file(path, MAX_BYTES)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice::<IndexFile>(&bytes).ok());
    match parsed {
        Some(file) if file.version == VERSION => file,
        _ => IndexFile {
            version: VERSION,
            trees: BTreeMap::new(),
        },
    }
}

/// The links of each of `checkpoints` (ID and subtree) with links or refused entries, through
/// the index at `path` (see the module documentation); the file is rewritten when it lacked a
/// subtree or held one no longer given (a failed rewrite only costs reading again: logged).
pub(crate) fn linked(
    git: Objects<'_>,
    path: &Path,
    checkpoints: &[(CheckpointId, Oid)],
    limits: &Limits,
) -> Vec<(CheckpointId, LinkedCommits)> {
    let old = load(path);
    let mut new = IndexFile {
        version: VERSION,
        trees: BTreeMap::new(),
    };
    let mut out = Vec::new();
    for (id, sub) in checkpoints {
        let key = sub.to_string();
        let entry = match old.trees.get(&key) {
            Some(entry) => entry.clone(),
            None => {
                let summary = git
                    .find_tree(*sub)
                    .ok()
                    .and_then(|t| tree::read_summary(git, &t, id, limits).ok());
                // Unreadable here and now: read again next time.
                let Some(summary) = summary else { continue };
                let links = summary.map(|s| s.linked_commits()).unwrap_or_default();
                Entry {
                    links: links.shas,
                    refused: links.refused,
                }
            }
        };
        if !entry.links.is_empty() || !entry.refused.is_empty() {
            let links = LinkedCommits {
                shas: entry.links.clone(),
                refused: entry.refused.clone(),
            };
            out.push((id.clone(), links));
        }
        new.trees.insert(key, entry);
    }
    if new.trees != old.trees {
        if let Err(e) = store(path, &new) {
            log::warn!("could not write the link index {}: {e}", path.display());
        }
    }
    out
}

/// Replaces the index at `path`, atomically; its directory is created when missing.
fn store(path: &Path, file: &IndexFile) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let bytes = serde_json::to_vec(file).map_err(std::io::Error::other)?;
    write_atomic(path, &bytes, 0o644)
}
