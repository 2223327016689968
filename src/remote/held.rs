//! What a remote held, as its last listing of checkpoint refs showed: so that `list` can say
//! how many checkpoints the remote has that are not here (a fresh clone fetches none) without
//! asking the network each time.
//!
//! One file per remote (by the fingerprint of its URL) under the common dir,
//! `entire/remote-held/<fingerprint>`: a first line `<seconds since the epoch> ok` (or `failed`
//! when the listing failed), then the IDs listed, one per line. Written by every listing of the
//! remote's checkpoint refs (`list --remote`, `git entire-fetch --all`, a batch fetch, `list`
//! itself when nothing was remembered). A cache: a file that is missing, too large or malformed
//! is no memory, and one that cannot be written only makes the next `list` ask again.

use std::path::PathBuf;

use crate::base::fs::{read_cache_file, write_cache_file};
use crate::base::id::CheckpointId;
use crate::git::repo::Repo;
use crate::git::url::Remote;
use crate::remote::misses::now;

/// The largest memo read (a million ULIDs is 27 MB).
const MAX_BYTES: u64 = 64 << 20;

/// What a remote's last listing showed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Held {
    /// It listed these checkpoint IDs, `age` seconds ago.
    Listed {
        /// Seconds since the listing.
        age: u64,
        /// The IDs it listed.
        ids: Vec<String>,
    },
    /// The listing failed, `age` seconds ago.
    Failed {
        /// Seconds since the attempt.
        age: u64,
    },
}

fn path(repo: &Repo, remote: &Remote) -> PathBuf {
    repo.common_dir()
        .join("entire")
        .join("remote-held")
        .join(crate::remote::destination::fingerprint_of(repo, remote))
}

fn write(repo: &Repo, remote: &Remote, text: &str) {
    let path = path(repo, remote);
    let written = path
        .parent()
        .map_or(Ok(()), std::fs::create_dir_all)
        .and_then(|()| write_cache_file(&path, text.as_bytes()));
    if let Err(e) = written {
        log::info!("could not write {}: {e}", path.display());
    }
}

/// Records that `remote` listed `ids` just now.
pub fn record<'a>(repo: &Repo, remote: &Remote, ids: impl IntoIterator<Item = &'a CheckpointId>) {
    let mut text = format!("{} ok\n", now());
    for id in ids {
        text.push_str(id.as_str());
        text.push('\n');
    }
    write(repo, remote, &text);
}

/// Records that a listing of `remote` failed just now.
pub fn record_failure(repo: &Repo, remote: &Remote) {
    write(repo, remote, &format!("{} failed\n", now()));
}

/// What `remote` held at its last listing from this repository, if one is remembered.
pub fn last(repo: &Repo, remote: &Remote) -> Option<Held> {
    let bytes = read_cache_file(&path(repo, remote), MAX_BYTES).ok()??;
    let text = std::str::from_utf8(&bytes).ok()?;
    let mut lines = text.lines();
    let (at, state) = lines.next()?.split_once(' ')?;
    // A time ahead of the clock (set back since) is no memory.
    let age = now().checked_sub(at.parse().ok()?)?;
    match state {
        "ok" => Some(Held::Listed {
            age,
            ids: lines
                .filter(|l| CheckpointId::parse(l).is_ok())
                .map(str::to_owned)
                .collect(),
        }),
        "failed" => Some(Held::Failed { age }),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_listing_or_a_failure_is_remembered_per_remote() {
        let (_dir, repo) = crate::git::test_repo::open();
        let origin = Remote::parse("origin").unwrap();
        let other = Remote::parse("https://example.com/other.git").unwrap();
        assert_eq!(last(&repo, &origin), None);
        let ids = [CheckpointId::parse("a1b2c3d4e5f6").unwrap()];
        record(&repo, &origin, &ids);
        assert_eq!(
            last(&repo, &origin),
            Some(Held::Listed {
                age: 0,
                ids: vec!["a1b2c3d4e5f6".into()]
            })
        );
        assert_eq!(last(&repo, &other), None);
        record_failure(&repo, &other);
        assert_eq!(last(&repo, &other), Some(Held::Failed { age: 0 }));
        // Malformed: no memory.
        std::fs::write(path(&repo, &origin), "soon ok\na1b2c3d4e5f6\n").unwrap();
        assert_eq!(last(&repo, &origin), None);
    }
}
