//! The network as the stores see it: the remote layer's implementations of the traits in
//! [`crate::store::on_demand`], handed to the stores by the topology.
//!
//! [`Network`] fetches missing checkpoints whole into the repository, or, with a filter, into
//! the partial cache (created on first use); offline it only opens the cache. The partial cache
//! and the fetcher implement the store's traits directly.

use crate::git::objects::{Objects, Oid};

use crate::base::id::CheckpointId;
use crate::git::refname::CheckpointRef;
use crate::git::repo::Repo;
use crate::remote::fetch::{fetch_spellings, Fetcher};
use crate::remote::partial::PartialCache;
use crate::store::branch::{RemoteCopy, V1_BRANCH};
use crate::store::on_demand::{BranchFetch, FetchError, OnDemand, PartialObjects};

/// The git-refs store's network: the partial cache of a repository, and a fetcher when reads
/// fetch.
pub struct Network<'r> {
    repo: &'r Repo,
    /// The fetcher and its remote as shown (credentials redacted once, not per miss).
    fetcher: Option<(Fetcher<'r>, String)>,
}

impl<'r> Network<'r> {
    /// Reads that never fetch (the partial cache is still read, and completes what it lacks).
    pub fn offline(repo: &'r Repo) -> Self {
        Network {
            repo,
            fetcher: None,
        }
    }

    /// Reads that fetch a miss through `fetcher` (partially when it has a filter).
    pub fn fetching(fetcher: Fetcher<'r>) -> Self {
        Network {
            repo: fetcher.repo(),
            fetcher: Some({
                let shown = fetcher.remote_display();
                (fetcher, shown)
            }),
        }
    }
}

impl<'r> OnDemand<'r> for Network<'r> {
    fn remote_display(&self) -> Option<&str> {
        self.fetcher.as_ref().map(|(_, shown)| shown.as_str())
    }

    fn fetch_checkpoints(&self, ids: &[CheckpointId]) -> Result<(), FetchError> {
        let Some((fetcher, _)) = &self.fetcher else {
            return Ok(());
        };
        match fetcher.filter() {
            None => fetcher.fetch_checkpoints(ids).map(drop),
            Some(filter) => {
                let cache = PartialCache::create(self.repo)?;
                fetch_spellings(ids, |names| {
                    Ok(cache.fetch_refs(fetcher, names, filter)?.results)
                })
                .map(drop)
            }
        }
    }

    fn open_partial(&self) -> Result<Option<Box<dyn PartialObjects + 'r>>, FetchError> {
        Ok(PartialCache::open(self.repo)?.map(|c| Box::new(c) as Box<dyn PartialObjects + 'r>))
    }
}

impl PartialObjects for PartialCache<'_> {
    fn objects(&self) -> Objects<'_> {
        PartialCache::objects(self)
    }

    fn tip(&self, name: &str) -> Option<Oid> {
        PartialCache::tip(self, name)
    }

    fn locate(&self, id: &CheckpointId) -> Option<(String, Oid)> {
        PartialCache::locate(self, id)
    }

    fn refs(&self) -> Vec<(CheckpointRef, Oid)> {
        PartialCache::refs(self)
    }

    fn ensure_for_path(
        &self,
        reference: &str,
        tip: Oid,
        path: Option<&str>,
    ) -> Result<(), FetchError> {
        PartialCache::ensure_for_path(self, reference, tip, path)
    }
}

impl BranchFetch for Fetcher<'_> {
    fn fetch_copies(&self, tracking: &str, copies: &str) -> Result<bool, FetchError> {
        Fetcher::fetch_copies(self, tracking, copies)
    }
}

/// The ref that holds `remote`'s copy of the v1 branch: for a configured remote its
/// remote-tracking ref, named as `git fetch` names it (docs/format.md, "The v1 branch"); for a URL a
/// private ref keyed by the URL's fingerprint, outside every namespace that is pushed.
pub fn tracking_ref(repo: &Repo, remote: &str) -> String {
    if repo.remote_names().iter().any(|n| n == remote) {
        format!("refs/remotes/{remote}/{V1_BRANCH}")
    } else {
        format!(
            "refs/entire-remote/{}/{V1_BRANCH}",
            crate::remote::destination::fingerprint_of(repo, remote)
        )
    }
}

/// Where the copies of `remote`'s archived layouts (`store::archive`: the unsharded v1 ref, the
/// checkpoints-v2 refs) are kept: `refs/entire-remote/<remote name, or the URL's
/// fingerprint>/archive/`, outside every namespace that is pushed or read as checkpoints, and
/// apart from the v1 branch's copy (the unsharded ref has the branch's last name).
pub fn copies_prefix(repo: &Repo, remote: &str) -> String {
    let key = match repo.remote_names().iter().any(|n| n == remote) {
        true => remote.to_owned(),
        false => crate::remote::destination::fingerprint_of(repo, remote),
    };
    format!("refs/entire-remote/{key}/archive/")
}

/// The copy of the v1 branch on `remote` (a configured remote's name or a URL), read from its
/// [`tracking_ref`], and of its archived layouts (under [`copies_prefix`]); with a `fetcher`
/// for that remote, fetched on a miss.
pub fn remote_copy<'r>(repo: &Repo, remote: &str, fetcher: Option<Fetcher<'r>>) -> RemoteCopy<'r> {
    RemoteCopy::new(
        tracking_ref(repo, remote),
        copies_prefix(repo, remote),
        fetcher.map(|f| Box::new(f) as Box<dyn BranchFetch + 'r>),
    )
}
