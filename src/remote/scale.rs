//! Cost awareness: how many checkpoint refs a remote holds, as last seen, and a warning when a
//! remote that also carries code holds so many that every developer's `git push` pays for them.
//!
//! Every `git push` downloads the remote's whole ref advertisement (protocol v2 does not cover
//! push): about 99 bytes per ref, measured with git 2.47 (100,000 checkpoint refs: 9.9 MB, a
//! one-branch push took 0.83–1.37 s instead of 0.02 s). The count is never fetched for its own
//! sake: it is recorded whenever a listing happens anyway (`list --remote`, `git entire-fetch
//! --all`, `gc`, the first push to a destination) and advanced by the refs a push creates, in
//! `<common>/entire/remote-checkpoint-counts.json`, keyed by the destination's fingerprint.

use std::collections::BTreeMap;

use crate::base::fs::{write_atomic, FileLock};
use crate::git::refs::Listed;
use crate::git::repo::Repo;
use crate::remote::checkpoint_remote::CheckpointTarget;

/// The settings key (under `strategy_options`) of the warning threshold.
pub const THRESHOLD_SETTING: &str = "checkpoint_ref_warn_threshold";
/// The default threshold: above this many checkpoint refs on a remote that also carries code,
/// [`warning`] speaks.
pub const DEFAULT_THRESHOLD: u64 = 5_000;

const COUNTS_FILE: &str = "remote-checkpoint-counts.json";

/// A remote's checkpoint-ref count as last seen.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RemoteCount {
    /// The remote as shown (credentials redacted).
    pub remote: String,
    /// How many checkpoint refs it held.
    pub count: u64,
    /// When (RFC 3339).
    pub at: String,
}

type Counts = BTreeMap<String, RemoteCount>;

fn path(repo: &Repo) -> std::path::PathBuf {
    repo.common_dir().join("entire").join(COUNTS_FILE)
}

fn load(repo: &Repo) -> Counts {
    crate::base::fs::read_owned(&path(repo), 1 << 20)
        .ok()
        .flatten()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

/// Applies `f` to the record of `target` under the file's lock. Best effort: the counts are
/// advisory, so a failure is logged and otherwise ignored.
fn update(repo: &Repo, target: &str, f: impl FnOnce(Option<u64>) -> Option<u64>) {
    let fingerprint = crate::remote::destination::fingerprint_of(repo, target);
    let display = crate::git::url::redact(target);
    let result = (|| -> std::io::Result<()> {
        let dir = repo.common_dir().join("entire");
        std::fs::create_dir_all(&dir)?;
        let _lock = FileLock::exclusive(&dir.join(format!("{COUNTS_FILE}.lock")))?;
        let mut counts = load(repo);
        let Some(count) = f(counts.get(&fingerprint).map(|c| c.count)) else {
            return Ok(());
        };
        counts.insert(
            fingerprint.clone(),
            RemoteCount {
                remote: display.clone(),
                count,
                at: crate::base::time::now_rfc3339_nano(),
            },
        );
        write_atomic(
            &path(repo),
            &crate::model::documents::to_json_bytes(&counts),
            0o644,
        )
    })();
    if let Err(e) = result {
        log::info!(
            "could not record the checkpoint-ref count of {}: {e}",
            display
        );
    }
}

/// Records that `target` (a remote name or URL) listed `count` checkpoint refs just now.
pub fn record_remote_count(repo: &Repo, target: &str, count: usize) {
    update(repo, target, |_| Some(count as u64));
}

/// Advances the known count of `target` by `created` refs a push just created there (only when
/// a count is known: an unknown count stays unknown until the next listing).
pub fn record_created(repo: &Repo, target: &str, created: usize) {
    if created > 0 {
        update(repo, target, |old| old.map(|c| c + created as u64));
    }
}

/// How many checkpoint refs the repository holds locally (names only; nothing is read).
pub fn local_count(repo: &Repo) -> usize {
    let mut count = 0;
    let counted = repo.for_each_ref(
        crate::git::refname::CHECKPOINT_REF_PREFIX,
        &mut |r| match r {
            Listed::Ref(name, _) => {
                count += usize::from(crate::git::refname::CheckpointRef::parse(name).is_ok())
            }
            Listed::Restart => count = 0,
        },
    );
    counted.map_or(0, |_| count)
}

/// The last known count of `target`, if any.
pub fn last_remote_count(repo: &Repo, target: &str) -> Option<RemoteCount> {
    load(repo).remove(&crate::remote::destination::fingerprint_of(repo, target))
}

/// The warning threshold: `strategy_options.checkpoint_ref_warn_threshold` when it is a
/// non-negative integer, else [`DEFAULT_THRESHOLD`].
pub fn threshold(repo: &Repo) -> u64 {
    repo.settings()
        .strategy_option(THRESHOLD_SETTING)
        .and_then(|(v, _, _)| v.as_u64())
        .unwrap_or(DEFAULT_THRESHOLD)
}

/// The cost warning for `target`: `Some` when it also carries code (no dedicated checkpoint
/// remote) and its last known checkpoint-ref count is above the threshold.
pub fn warning(repo: &Repo, target: &CheckpointTarget) -> Option<String> {
    if !target.carries_code() {
        return None;
    }
    let known = last_remote_count(repo, &target.target)?;
    let limit = threshold(repo);
    (known.count > limit).then(|| {
        format!(
            "{} holds {} checkpoint refs (more than {limit}) next to the code: every git push to it downloads about 99 bytes per ref before sending anything. \
Move checkpoints to a dedicated checkpoint remote (strategy_options.checkpoint_remote), and on a self-hosted server hide them from code pushes and fetches \
with receive.hideRefs=refs/entire/ and uploadpack.hideRefs=refs/entire/ plus uploadpack.allowTipSHA1InWant=true (see docs/scaling.md).",
            target.display, known.count
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::settings::ConfigSource;

    fn target(dedicated: Option<ConfigSource>) -> CheckpointTarget {
        CheckpointTarget {
            target: crate::git::url::Remote::parse("origin").unwrap(),
            display: "origin".into(),
            dedicated,
        }
    }

    #[test]
    fn warns_above_the_threshold_only_on_a_remote_that_carries_code() {
        let (dir, repo) = crate::git::test_repo::open();
        assert_eq!(warning(&repo, &target(None)), None, "nothing known yet");
        record_remote_count(&repo, "origin", 5_000);
        assert_eq!(warning(&repo, &target(None)), None, "at the threshold");
        record_created(&repo, "origin", 1);
        assert_eq!(last_remote_count(&repo, "origin").unwrap().count, 5_001);
        let w = warning(&repo, &target(None)).expect("above the threshold");
        assert!(
            w.contains("5001 checkpoint refs") && w.contains("receive.hideRefs"),
            "{w}"
        );
        assert!(w.contains("uploadpack.allowTipSHA1InWant"), "{w}");
        assert_eq!(warning(&repo, &target(Some(ConfigSource::Settings))), None);

        std::fs::create_dir(dir.path().join(".entire")).unwrap();
        std::fs::write(
            dir.path().join(".entire/settings.json"),
            r#"{"strategy_options": {"checkpoint_ref_warn_threshold": 10000}}"#,
        )
        .unwrap();
        // Settings are read once per command: a new command (a new handle) sees the file.
        let repo = Repo::open(dir.path()).unwrap();
        assert_eq!(threshold(&repo), 10_000);
        assert_eq!(warning(&repo, &target(None)), None);
        record_created(&repo, "elsewhere", 3);
        assert_eq!(
            last_remote_count(&repo, "elsewhere"),
            None,
            "unknown stays unknown"
        );
    }
}
