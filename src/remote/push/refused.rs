//! What a destination's server refused, remembered so that hooks stop sending what it will
//! refuse again: a server that refuses `refs/entire/*` (a `pre-receive` hook, a hosting rule)
//! would otherwise be sent the whole growing queue by every `git push`, and a checkpoint larger
//! than the server accepts would be sent by every push too.
//!
//! One file per destination, `<common>/entire/push-refused/<fingerprint>.json`, keyed by the
//! fingerprint of its push URL (a hash: no credentials at rest), so a changed URL starts
//! afresh. A refusal holds the hooks' pushes back for [`HOLD`]; `git entire-checkpoint push`
//! sends regardless, and forgets what lands. A cache: a missing, oversized or malformed file is
//! no memory, and one that cannot be written only costs the next push a refusal.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::base::fs::{read_cache_file, write_cache_file};
use crate::git::objects::Oid;
use crate::remote::misses::now;

/// How long a refusal holds the hooks' pushes back; then they try again.
pub const HOLD: Duration = Duration::from_secs(24 * 60 * 60);

/// The largest memory read.
const MAX_BYTES: u64 = 16 << 20;

/// What a destination's server refused, as remembered.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Refused {
    /// The server refused every checkpoint ref it was sent, and took none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<Refusal>,
    /// Refs larger than the server accepts, by name.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub too_large: BTreeMap<String, Refusal>,
}

/// One refusal: the server's reason and when.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Refusal {
    /// Why, in the server's words where it gave some.
    pub reason: String,
    /// Seconds since the epoch.
    pub at: u64,
    /// The commit refused (a ref too large): a checkpoint that moves is sent again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oid: Option<String>,
}

impl Refusal {
    /// A refusal of now.
    pub(super) fn now(reason: String, oid: Option<Oid>) -> Self {
        Refusal {
            reason,
            at: now(),
            oid: oid.map(|o| o.to_string()),
        }
    }

    /// Whether it still holds the hooks' pushes back: younger than [`HOLD`] (a time ahead of
    /// the clock, set back since, holds nothing).
    pub fn holds(&self) -> bool {
        now()
            .checked_sub(self.at)
            .is_some_and(|age| age < HOLD.as_secs())
    }

    /// Whether it holds `oid` back: it holds, and refused that very commit.
    pub(super) fn holds_oid(&self, oid: Oid) -> bool {
        self.holds() && self.oid.as_deref() == Some(oid.to_string().as_str())
    }
}

/// What to do about a server that refuses `refs/entire/*`, said once when it is learned and by
/// `doctor`.
pub fn advice(destination: &str) -> String {
    format!(
        "hooks send {destination} no checkpoint for a day, or until its URL changes or you run \
         `git entire-checkpoint push`; ask its admin to allow refs/entire/*, set \
         strategy_options.checkpoint_remote to a remote that takes them, or stop pushing \
         sessions (strategy_options.push_sessions: false)"
    )
}

fn path(common: &Path, fingerprint: &str) -> PathBuf {
    common
        .join("entire")
        .join("push-refused")
        .join(format!("{fingerprint}.json"))
}

/// What the destination of `fingerprint` refused, as remembered (nothing when nothing is).
pub fn load(common: &Path, fingerprint: &str) -> Refused {
    read_cache_file(&path(common, fingerprint), MAX_BYTES)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

/// Remembers `refused` for the destination of `fingerprint` (nothing refused: the file goes).
pub(super) fn save(common: &Path, fingerprint: &str, refused: &Refused) {
    let path = path(common, fingerprint);
    let written = if *refused == Refused::default() {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
            _ => Ok(()),
        }
    } else {
        let text = serde_json::to_vec(refused).expect("a refusal serializes");
        path.parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| write_cache_file(&path, &text))
    };
    if let Err(e) = written {
        log::info!("could not write {}: {e}", path.display());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refusal_is_remembered_per_destination_and_holds_a_day() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(load(dir.path(), "aa"), Refused::default());
        let oid = Oid::from_str("0123456789abcdef0123456789abcdef01234567").unwrap();
        let mut refused = Refused {
            namespace: Some(Refusal::now("hook declined".into(), None)),
            ..Default::default()
        };
        refused.too_large.insert(
            "refs/entire/checkpoints/ab/0123456789ab".into(),
            Refusal::now("too large".into(), Some(oid)),
        );
        save(dir.path(), "aa", &refused);
        assert_eq!(load(dir.path(), "aa"), refused);
        assert_eq!(load(dir.path(), "bb"), Refused::default());
        let big = &refused.too_large["refs/entire/checkpoints/ab/0123456789ab"];
        assert!(big.holds_oid(oid));
        let old = Refusal {
            at: now() - HOLD.as_secs(),
            ..big.clone()
        };
        assert!(!old.holds());
        save(dir.path(), "aa", &Refused::default());
        assert!(!path(dir.path(), "aa").exists());
    }
}
