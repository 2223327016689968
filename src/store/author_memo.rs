//! The v1 branch's author memo: who wrote each checkpoint of the git-branch store, remembered
//! for one tip of the branch, so that `show` walks the branch history once per checkpoint and
//! tip instead of on every call (docs/format.md, "The v1 author memo").
//!
//! A cache, never the source of truth: it is used only while the tip it names is the tip the
//! checkpoint is read from, anything else (another tip, another version, a file that does not
//! parse, a link or special file in its place, more than [`MAX_BYTES`]) is ignored and
//! replaced, and it may be deleted at any time. Writers replace it atomically and take no lock;
//! a lost race only loses a remembered author.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::git::objects::Oid;
use serde::{Deserialize, Serialize};

use crate::base::fs::{read_cache_file, write_atomic};
use crate::base::id::CheckpointId;
use crate::git::repo::Identity;

/// The memo's file name, in `<git common dir>/entire/`.
pub const MEMO_FILE: &str = "branch-authors.json";
/// The format version this code reads and writes.
const VERSION: u32 = 1;
/// The largest memo read or written (about 10,000 authors); a full memo takes no new entries.
const MAX_BYTES: u64 = 1 << 20;

#[derive(Serialize, Deserialize)]
struct MemoFile {
    version: u32,
    /// The branch tip the authors were found from (hex).
    tip: String,
    /// Checkpoint ID → `[name, email]`.
    authors: BTreeMap<String, (String, String)>,
}

/// The memo of one repository.
pub struct AuthorMemo {
    path: PathBuf,
}

impl AuthorMemo {
    /// The memo under `common_dir`.
    pub fn in_common_dir(common_dir: &Path) -> Self {
        AuthorMemo {
            path: common_dir.join("entire").join(MEMO_FILE),
        }
    }

    /// The memo's contents, when they are for `tip`.
    fn load(&self, tip: Oid) -> Option<MemoFile> {
        let bytes = match read_cache_file(&self.path, MAX_BYTES) {
            Ok(b) => b?,
            Err(e) => {
                log::info!("ignoring the v1 author memo {}: {e}", self.path.display());
                return None;
            }
        };
        let memo: MemoFile = serde_json::from_slice(&bytes).ok()?;
        (memo.version == VERSION && memo.tip == tip.to_string()).then_some(memo)
    }

    /// The remembered author of `id` at `tip`.
    pub fn get(&self, tip: Oid, id: &CheckpointId) -> Option<Identity> {
        let (name, email) = self.load(tip)?.authors.remove(id.as_str())?;
        Some(Identity { name, email })
    }

    /// Remembers `author` for `id` at `tip`, dropping what was remembered for another tip. Best
    /// effort: a memo that cannot be written is only a slower next `show`.
    pub fn put(&self, tip: Oid, id: &CheckpointId, author: &Identity) {
        let mut memo = self.load(tip).unwrap_or_else(|| MemoFile {
            version: VERSION,
            tip: tip.to_string(),
            authors: BTreeMap::new(),
        });
        memo.authors.insert(
            id.as_str().to_owned(),
            (author.name.clone(), author.email.clone()),
        );
        let Ok(bytes) = serde_json::to_vec(&memo) else {
            return;
        };
        if bytes.len() as u64 > MAX_BYTES {
            return;
        }
        let written = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| write_atomic(&self.path, &bytes, 0o644));
        if let Err(e) = written {
            log::info!(
                "could not write the v1 author memo {}: {e}",
                self.path.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(name: &str) -> Identity {
        Identity {
            name: name.into(),
            email: format!("{name}@example.com"),
        }
    }

    #[test]
    fn remembers_per_tip_and_ignores_anything_else() {
        let dir = tempfile::tempdir().unwrap();
        let memo = AuthorMemo::in_common_dir(dir.path());
        let (t1, t2) = (Oid::from_str("11").unwrap(), Oid::from_str("22").unwrap());
        let (a, b) = (
            CheckpointId::parse("a1b2c3d4e5f6").unwrap(),
            CheckpointId::parse("0123456789ab").unwrap(),
        );
        assert_eq!(memo.get(t1, &a), None);
        memo.put(t1, &a, &who("ann"));
        memo.put(t1, &b, &who("bob"));
        assert_eq!(memo.get(t1, &a), Some(who("ann")));
        assert_eq!(memo.get(t1, &b), Some(who("bob")));
        assert_eq!(memo.get(t2, &a), None, "another tip");
        memo.put(t2, &b, &who("cy"));
        assert_eq!(memo.get(t2, &b), Some(who("cy")));
        assert_eq!(memo.get(t1, &a), None, "the old tip's authors are dropped");
        let path = dir.path().join("entire").join(MEMO_FILE);
        for bad in [
            &b"{"[..],
            b"[]",
            b"{\"version\":2,\"tip\":\"x\",\"authors\":{}}",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert_eq!(memo.get(t2, &b), None);
        }
        std::fs::remove_file(&path).unwrap();
        let elsewhere = dir.path().join("elsewhere");
        std::fs::write(&elsewhere, b"{}").unwrap();
        std::os::unix::fs::symlink(&elsewhere, &path).unwrap();
        memo.put(t1, &a, &who("ann"));
        assert_eq!(
            std::fs::read(&elsewhere).unwrap(),
            b"{}",
            "a link is replaced, never written through"
        );
        assert_eq!(memo.get(t1, &a), Some(who("ann")));
    }
}
