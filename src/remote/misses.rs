//! What a remote was asked for and did not have, remembered so that a second read of the same
//! thing asks the network nothing (docs/how-it-works.md, "Reads ask the network once").
//!
//! One small file under the common dir, `entire/fetch-misses.json`: per remote (by the
//! fingerprint of its URL) the checkpoint IDs it lacked wherever reads look (its checkpoint
//! refs, its v1 branch and archived layouts), each with the time it was asked, and the tips it
//! advertised then: a digest of its checkpoint refs (when listed) and of its branch and archived
//! refs (when fetched). A miss is forgotten after `entire.fetchMissTtl` seconds (git config,
//! default [`DEFAULT_TTL`]; 0 remembers nothing), as soon as the remote is seen with other tips,
//! when the checkpoint is found, and whenever the user asks again (`--refresh`,
//! `git entire-fetch`). A cache: a file that is missing, too large or does not parse is an empty
//! memo, and a memo that cannot be written only makes the next read ask again.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::base::fs::{read_cache_file, write_cache_file};
use crate::base::id::CheckpointId;
use crate::git::repo::Repo;
use crate::git::url::Remote;

/// How long a miss is remembered when `entire.fetchMissTtl` does not say.
pub const DEFAULT_TTL: u64 = 900;
/// The largest memo read (a memo of thousands of misses is a few hundred KB).
const MAX_BYTES: u64 = 4 << 20;

/// Which tips of a remote a digest covers.
#[derive(Debug, Clone, Copy)]
pub enum Tips {
    /// Its checkpoint refs, as one listing advertised them.
    Refs,
    /// Its v1 branch and archived layouts, as one fetch found them.
    Copies,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct RemoteMisses {
    #[serde(default)]
    refs: String,
    #[serde(default)]
    copies: String,
    /// ID → when it was found missing (seconds since the epoch).
    #[serde(default)]
    ids: BTreeMap<String, u64>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    remotes: BTreeMap<String, RemoteMisses>,
}

/// The misses of one repository, loaded from its file.
pub struct Misses {
    path: PathBuf,
    ttl: u64,
    file: File,
    changed: bool,
}

/// Seconds since the epoch (0 before it).
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// `seconds` as people read a short time: `40 s`, `3 min`.
pub fn age(seconds: u64) -> String {
    match seconds {
        0..120 => format!("{seconds} s"),
        _ => format!("{} min", seconds / 60),
    }
}

/// A digest of `tips` (`(name, object)` pairs, in any order).
pub fn digest<'a>(tips: impl IntoIterator<Item = (&'a str, String)>) -> String {
    let mut all: Vec<(&str, String)> = tips.into_iter().collect();
    all.sort();
    let mut h = Sha256::new();
    for (name, oid) in all {
        h.update(name.as_bytes());
        h.update([0]);
        h.update(oid.as_bytes());
        h.update([b'\n']);
    }
    data_encoding::HEXLOWER.encode(&h.finalize())
}

impl Misses {
    /// The misses of `repo`, with its configured lifetime.
    pub fn open(repo: &Repo) -> Self {
        let path = repo.common_dir().join("entire").join("fetch-misses.json");
        let ttl = repo
            .config_string("entire.fetchMissTtl")
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_TTL);
        let file = match read_cache_file(&path, MAX_BYTES) {
            Ok(Some(bytes)) => serde_json::from_slice(&bytes).unwrap_or_default(),
            Ok(None) => File::default(),
            Err(e) => {
                log::info!("ignoring {}: {e}", path.display());
                File::default()
            }
        };
        Misses {
            path,
            ttl,
            file,
            changed: false,
        }
    }

    fn key(repo: &Repo, remote: &Remote) -> String {
        crate::remote::destination::fingerprint_of(repo, remote)
    }

    /// Whether `remote` was found lacking `id` less than the lifetime ago.
    pub fn lacks(&self, repo: &Repo, remote: &Remote, id: &CheckpointId) -> bool {
        self.asked(repo, remote, id).is_some()
    }

    /// How many seconds ago `remote` was found lacking `id`, if less than the lifetime ago.
    pub fn asked(&self, repo: &Repo, remote: &Remote, id: &CheckpointId) -> Option<u64> {
        let at = *self
            .file
            .remotes
            .get(&Self::key(repo, remote))?
            .ids
            .get(id.as_str())?;
        // A time ahead of the clock (set back since) is no memory.
        let ago = now().checked_sub(at)?;
        (ago < self.ttl).then_some(ago)
    }

    /// Records that `remote` lacks each of `ids`, now.
    pub fn record(&mut self, repo: &Repo, remote: &Remote, ids: &[CheckpointId]) {
        if self.ttl == 0 || ids.is_empty() {
            return;
        }
        let at = now();
        let entry = self
            .file
            .remotes
            .entry(Self::key(repo, remote))
            .or_default();
        for id in ids {
            entry.ids.insert(id.to_string(), at);
        }
        self.changed = true;
    }

    /// Forgets the misses of `ids` on `remote` (they were found, or are asked for again).
    pub fn forget(&mut self, repo: &Repo, remote: &Remote, ids: &[CheckpointId]) {
        if let Some(entry) = self.file.remotes.get_mut(&Self::key(repo, remote)) {
            for id in ids {
                self.changed |= entry.ids.remove(id.as_str()).is_some();
            }
        }
    }

    /// Notes the tips `remote` was just seen with: when they moved since its misses were
    /// recorded, every miss of it is forgotten (what it lacked may have arrived).
    pub fn saw(&mut self, repo: &Repo, remote: &Remote, which: Tips, digest: String) {
        let entry = self
            .file
            .remotes
            .entry(Self::key(repo, remote))
            .or_default();
        let known = match which {
            Tips::Refs => &mut entry.refs,
            Tips::Copies => &mut entry.copies,
        };
        if *known == digest {
            return;
        }
        let moved = !known.is_empty();
        *known = digest;
        if moved {
            entry.ids.clear();
        }
        self.changed = true;
    }

    /// Writes the memo when it changed (best effort: a memo that cannot be written only makes
    /// the next read ask the remote again). Misses past their lifetime are dropped.
    pub fn save(&mut self) {
        if !self.changed {
            return;
        }
        self.changed = false;
        let cutoff = now().saturating_sub(self.ttl);
        for r in self.file.remotes.values_mut() {
            r.ids.retain(|_, at| *at > cutoff);
        }
        let Ok(bytes) = serde_json::to_vec(&self.file) else {
            return;
        };
        let written = self
            .path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| write_cache_file(&self.path, &bytes));
        if let Err(e) = written {
            log::info!("could not write {}: {e}", self.path.display());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn setup() -> (tempfile::TempDir, Repo, Remote, Vec<CheckpointId>) {
        let (dir, repo) = crate::git::test_repo::open();
        let remote = Remote::parse("origin").unwrap();
        let ids = ["a1b2c3d4e5f6", "0badc0ffee00"]
            .map(|i| CheckpointId::parse(i).unwrap())
            .to_vec();
        (dir, repo, remote, ids)
    }

    #[test]
    fn a_miss_is_remembered_per_remote_until_found_or_the_tips_move() {
        let (_dir, repo, origin, ids) = setup();
        let other = Remote::parse("https://example.com/other.git").unwrap();
        let mut m = Misses::open(&repo);
        m.saw(
            &repo,
            &origin,
            Tips::Copies,
            digest([("branch", "1".into())]),
        );
        m.record(&repo, &origin, &ids);
        m.save();
        // A new command (a new memo) knows it; another remote does not.
        let mut m = Misses::open(&repo);
        assert!(m.lacks(&repo, &origin, &ids[0]) && m.lacks(&repo, &origin, &ids[1]));
        assert!(!m.lacks(&repo, &other, &ids[0]));
        m.forget(&repo, &origin, &ids[..1]);
        assert!(!m.lacks(&repo, &origin, &ids[0]) && m.lacks(&repo, &origin, &ids[1]));
        // The same tips seen again change nothing; other tips forget every miss of that remote.
        m.saw(
            &repo,
            &origin,
            Tips::Copies,
            digest([("branch", "1".into())]),
        );
        assert!(m.lacks(&repo, &origin, &ids[1]));
        m.saw(&repo, &origin, Tips::Refs, digest([("r", "1".into())]));
        assert!(m.lacks(&repo, &origin, &ids[1]), "first sight of the refs");
        m.saw(
            &repo,
            &origin,
            Tips::Copies,
            digest([("branch", "2".into())]),
        );
        assert!(!m.lacks(&repo, &origin, &ids[1]));
    }

    #[test]
    fn the_lifetime_comes_from_git_config_and_0_remembers_nothing() {
        let (_dir, repo, origin, ids) = setup();
        assert_eq!(Misses::open(&repo).ttl, DEFAULT_TTL);
        crate::git::test_repo::set_config(&repo, "entire.fetchMissTtl", "0");
        let mut m = Misses::open(&repo);
        m.record(&repo, &origin, &ids);
        assert!(!m.lacks(&repo, &origin, &ids[0]));
    }

    #[test]
    fn a_memo_that_does_not_parse_or_is_too_large_is_empty() {
        let (_dir, repo, origin, ids) = setup();
        let path = repo.common_dir().join("entire").join("fetch-misses.json");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, b"{not json").unwrap();
        let mut m = Misses::open(&repo);
        assert!(!m.lacks(&repo, &origin, &ids[0]));
        m.record(&repo, &origin, &ids);
        m.save();
        assert!(
            Misses::open(&repo).lacks(&repo, &origin, &ids[0]),
            "rewritten"
        );
        std::fs::write(&path, vec![b' '; MAX_BYTES as usize + 1]).unwrap();
        assert!(!Misses::open(&repo).lacks(&repo, &origin, &ids[0]));
        // A miss from the future (the clock was set back) is no memory.
        let future = format!(
            r#"{{"remotes":{{"{}":{{"ids":{{"{}":{}}}}}}}}}"#,
            Misses::key(&repo, &origin),
            ids[0],
            now() + 3600
        );
        std::fs::write(&path, future).unwrap();
        assert!(!Misses::open(&repo).lacks(&repo, &origin, &ids[0]));
    }
}
