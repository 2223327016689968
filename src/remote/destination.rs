//! Where checkpoints are delivered, and what each destination confirmed: a destination's
//! stable key (a hash of its push URL), the default remote, and the per-destination
//! bookkeeping under `<common>/entire/` (one push queue per destination, the delivery record
//! of what it confirmed, and the registry of known destinations). Below push, fetch and scale,
//! which all keep these books; it does no network work itself.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use crate::git::objects::Oid;
use sha2::{Digest, Sha256};

use crate::base::fs::{open_append, read_owned, write_atomic, FileLock};

/// The largest delivery record read: about two million refs.
const MAX_RECORD_BYTES: u64 = 256 << 20;
use crate::git::repo::Repo;
use crate::git::url::Remote;
use crate::store::queue::{PushQueue, QueueError};
use crate::store::refs::GitRefsStore;

/// Where a push goes.
#[derive(Debug, Clone)]
pub struct Destination {
    /// What git is given: a remote name or a URL.
    pub target: Remote,
    /// How it is shown: the remote name, or the URL with credentials redacted.
    pub display: String,
    /// A stable key of the push URL.
    pub fingerprint: String,
}

pub(crate) fn fingerprint(url: &str) -> String {
    let d = Sha256::digest(url.as_bytes());
    data_encoding::HEXLOWER.encode(&d[..10])
}

/// Resolves a remote name (its push URL) or a raw URL.
pub fn destination(repo: &Repo, target: &Remote) -> Destination {
    let (display, url) = match configured_url(repo, target) {
        Some(url) => (target.as_str().to_owned(), url),
        None => (crate::git::url::redact(target), target.as_str().to_owned()),
    };
    Destination {
        target: target.clone(),
        display,
        fingerprint: fingerprint(&url),
    }
}

/// The push URL of a configured remote named `target`, if it is one.
fn configured_url(repo: &Repo, target: &str) -> Option<String> {
    repo.push_url(target)
}

/// The stable bookkeeping key of a remote name (its push URL) or a raw URL.
pub fn fingerprint_of(repo: &Repo, target: &str) -> String {
    fingerprint(&configured_url(repo, target).unwrap_or_else(|| target.to_owned()))
}

/// The per-destination bookkeeping under `<common>/entire/`.
pub(crate) struct Delivery {
    dir: PathBuf,
}

/// The destinations pushes have registered: fingerprint -> how the destination is shown.
#[derive(serde::Serialize, serde::Deserialize, Default)]
pub(crate) struct KnownDestinations {
    pub(crate) destinations: BTreeMap<String, String>,
    /// The destinations ever pushed to as a dedicated checkpoint remote (fingerprint -> how
    /// shown), kept when they are no longer configured: what they confirmed goes nowhere else
    /// unasked (`push::FlushOptions::named`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub(crate) checkpoint_remotes: BTreeMap<String, String>,
}

impl Delivery {
    pub(crate) fn new(common: &Path) -> Self {
        Delivery {
            dir: common.join("entire"),
        }
    }

    pub(crate) fn queue(&self, fp: &str) -> PushQueue {
        PushQueue::at(self.dir.join("push-queues").join(format!("{fp}.jsonl")))
    }

    pub(crate) fn ledger(&self, fp: &str) -> PathBuf {
        self.dir.join("push-delivered").join(format!("{fp}.jsonl"))
    }

    /// Runs `f` on the record of `fp` under its lock. Best effort (see the module docs).
    fn with_record(&self, fp: &str, f: impl FnOnce(&Path) -> std::io::Result<()>) {
        let path = self.ledger(fp);
        let mut lock = path.clone().into_os_string();
        lock.push(".lock");
        if let Err(e) = FileLock::exclusive(Path::new(&lock)).and_then(|_guard| f(&path)) {
            log::warn!("delivery record {}: {e}", path.display());
        }
    }

    /// Appends `refs` to the delivery record of `fp`.
    pub(crate) fn record(&self, fp: &str, refs: &[(String, Oid)]) {
        if refs.is_empty() {
            return;
        }
        // The leading newline ends a line torn by a crash; blank lines are skipped.
        let text = format!("\n{}", record_lines(refs));
        self.with_record(fp, |path| {
            use std::io::Write;
            open_append(path, 0o644)?.write_all(text.as_bytes())
        });
    }

    /// Rewrites the record of `fp` to one line per ref once it holds far more lines than refs
    /// (it grows by one line per delivered update).
    pub(crate) fn compact(&self, fp: &str) {
        self.with_record(fp, |path| {
            let Some(bytes) = read_owned(path, MAX_RECORD_BYTES)? else {
                return Ok(());
            };
            let text = String::from_utf8_lossy(&bytes);
            let entries = parse_record(&text);
            let lines = text.lines().filter(|l| !l.trim().is_empty()).count();
            if lines <= 2 * entries.len() + 64 {
                return Ok(());
            }
            let mut sorted: Vec<(String, Oid)> = entries.into_iter().collect();
            sorted.sort();
            let text = record_lines(&sorted);
            write_atomic(path, text.as_bytes(), 0o644)
        });
    }

    /// The delivery record of `fp` (ref -> last delivered commit); `None` when there is none.
    pub(crate) fn delivered(&self, fp: &str) -> Option<HashMap<String, Oid>> {
        read_owned(&self.ledger(fp), MAX_RECORD_BYTES)
            .ok()
            .flatten()
            .map(|b| parse_record(&String::from_utf8_lossy(&b)))
    }

    /// Every ref a checkpoint remote other than `except` confirmed, and those remotes as shown
    /// (the ones that confirmed any).
    pub(crate) fn confirmed_by_checkpoint_remotes(
        &self,
        except: &str,
    ) -> (std::collections::HashSet<String>, Vec<String>) {
        let mut refs = std::collections::HashSet::new();
        let mut by = Vec::new();
        for (fp, display) in &self.load().checkpoint_remotes {
            if fp == except {
                continue;
            }
            let confirmed = self.delivered(fp).unwrap_or_default();
            if !confirmed.is_empty() {
                by.push(display.clone());
                refs.extend(confirmed.into_keys());
            }
        }
        (refs, by)
    }

    pub(crate) fn registry_path(&self) -> PathBuf {
        self.dir.join("push-destinations.json")
    }

    pub(crate) fn load(&self) -> KnownDestinations {
        read_owned(&self.registry_path(), 1 << 20)
            .ok()
            .flatten()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default()
    }

    /// Replaces the registry of known destinations (hold [`Delivery::lock`]).
    pub(crate) fn save(&self, reg: &KnownDestinations) -> std::io::Result<()> {
        write_atomic(
            &self.registry_path(),
            &crate::model::documents::to_json_bytes(reg),
            0o644,
        )
    }

    /// The registry lock, held while the known destinations are read and rewritten.
    pub(crate) fn lock(&self) -> std::io::Result<FileLock> {
        FileLock::exclusive(&self.dir.join("push-destinations.lock"))
    }
}

/// Delivery-record lines, `{"ref","oid"}` each.
fn record_lines(refs: &[(String, Oid)]) -> String {
    refs.iter()
        .map(|(name, oid)| {
            let mut l = serde_json::json!({"ref": name, "oid": oid.to_string()}).to_string();
            l.push('\n');
            l
        })
        .collect()
}

/// A delivery record's text as ref -> commit, the last line of a ref winning; lines that do not
/// parse are skipped.
fn parse_record(text: &str) -> HashMap<String, Oid> {
    let mut out = HashMap::new();
    for line in text.lines() {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if let (Some(name), Some(oid)) = (
            v["ref"].as_str(),
            v["oid"]
                .as_str()
                .and_then(|o| crate::git::format::ObjectFormat::parse_any(o).ok()),
        ) {
            out.insert(name.to_owned(), oid);
        }
    }
    out
}

/// Records that the destination `target` (a remote name or URL) has `refs` at these commits
/// (a fetch that published the remote's tips). Best effort.
pub(crate) fn record_delivered(repo: &Repo, target: &str, refs: &[(String, Oid)]) {
    Delivery::new(repo.common_dir()).record(&fingerprint_of(repo, target), refs);
}

/// One known destination's bookkeeping, for `doctor`.
pub(crate) struct DestinationBook {
    /// The destination as shown.
    pub display: String,
    /// Its bookkeeping key (a hash of its push URL).
    pub fingerprint: String,
    /// Its queue of refs not yet confirmed.
    pub queue: PushQueue,
    /// What it confirmed (ref -> commit); `None` when it has no delivery record (pushed only
    /// by a version that kept none).
    pub delivered: Option<HashMap<String, Oid>>,
}

/// Every destination a push has registered, with its queue and delivery record.
pub(crate) fn destination_books(repo: &Repo) -> Vec<DestinationBook> {
    let delivery = Delivery::new(repo.common_dir());
    delivery
        .load()
        .destinations
        .into_iter()
        .map(|(fp, display)| DestinationBook {
            display,
            queue: delivery.queue(&fp),
            delivered: delivery.delivered(&fp),
            fingerprint: fp,
        })
        .collect()
}

/// Every queued or pending ref for any destination, for `status`.
pub fn pending_count(repo: &Repo, refs_store: &GitRefsStore<'_>) -> usize {
    pending_refs(repo, refs_store).map_or(0, |all| all.len())
}

/// Every ref waiting in the shared queue or in any destination's queue. A queue that cannot be
/// read is an error (`gc` must not treat it as empty).
pub fn pending_refs(
    repo: &Repo,
    refs_store: &GitRefsStore<'_>,
) -> Result<std::collections::HashSet<String>, QueueError> {
    let delivery = Delivery::new(repo.common_dir());
    let mut all: std::collections::HashSet<String> =
        refs_store.queue().peek()?.into_iter().collect();
    for fp in delivery.load().destinations.keys() {
        all.extend(delivery.queue(fp).peek()?);
    }
    Ok(all)
}

/// The remote checkpoints sync with by default: `origin`, else the only remote.
pub fn default_remote(repo: &Repo) -> Option<String> {
    let names = repo.remote_names();
    if names.iter().any(|n| n == "origin") {
        return Some("origin".into());
    }
    (names.len() == 1).then(|| names[0].clone())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivery_record_last_wins_survives_a_torn_line_and_compacts() {
        let dir = tempfile::tempdir().unwrap();
        let d = Delivery::new(dir.path());
        assert!(d.delivered("fp").is_none(), "no record yet");
        let (a, b) = ("refs/entire/checkpoints/f6/a1b2c3d4e5f6", "x");
        let o1 = Oid::from_str("1111111111111111111111111111111111111111").unwrap();
        let o2 = Oid::from_str("2222222222222222222222222222222222222222").unwrap();
        d.record("fp", &[(a.into(), o1)]);
        // A crash mid-append leaves a torn line; the next record still parses.
        let path = d.ledger("fp");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"ref\":\"refs/ent");
        std::fs::write(&path, text).unwrap();
        d.record("fp", &[(a.into(), o2), (b.into(), o1)]);
        let got = d.delivered("fp").unwrap();
        assert_eq!(got.get(a), Some(&o2), "the last line wins");
        assert_eq!(got.get(b), Some(&o1));
        assert_eq!(got.len(), 2);
        // Many updates of one ref: compaction keeps one line per ref and the same answer.
        for _ in 0..100 {
            d.record("fp", &[(a.into(), o1), (a.into(), o2)]);
        }
        d.compact("fp");
        let lines = std::fs::read_to_string(&path).unwrap().lines().count();
        assert_eq!(lines, 2);
        assert_eq!(d.delivered("fp").unwrap(), got);
    }

    #[test]
    fn fingerprints_differ_by_url() {
        assert_ne!(fingerprint("/a.git"), fingerprint("/b.git"));
        assert_eq!(fingerprint("/a.git").len(), 20);
    }
}
