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
use crate::git::url::Remote;
use crate::remote::fetch::{fetch_spellings, Fetcher};
use crate::remote::partial::{missing_for_path, PartialCache};
use crate::store::branch::{RemoteCopy, V1_BRANCH};
use crate::store::on_demand::{
    BranchFetch, Complete, FetchError, OnDemand, PartialObjects, Wanted,
};

/// The git-refs store's network: the partial cache of a repository, and a fetcher when reads
/// fetch.
pub struct Network<'r> {
    repo: &'r Repo,
    /// The fetcher and its remote as shown (credentials redacted once, not per miss).
    fetcher: Option<(Fetcher<'r>, String)>,
    /// The promisor remote's fetcher, when the repository is a partial clone ([`promisor`]).
    promisor: Option<Fetcher<'r>>,
}

impl<'r> Network<'r> {
    /// Reads that never fetch (the partial cache is still read, and completes what it lacks).
    pub fn offline(repo: &'r Repo) -> Self {
        Network {
            repo,
            fetcher: None,
            promisor: promisor(repo),
        }
    }

    /// Reads that fetch a miss through `fetcher` (partially when it has a filter).
    pub fn fetching(fetcher: Fetcher<'r>) -> Self {
        Network {
            repo: fetcher.repo(),
            promisor: promisor(fetcher.repo()),
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

    fn promised(&self) -> Option<&dyn Complete> {
        self.promisor.as_ref().map(|f| f as &dyn Complete)
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
}

impl Complete for PartialCache<'_> {
    fn ensure_for_path(
        &self,
        reference: &str,
        tip: Oid,
        path: Option<&str>,
    ) -> Result<(), FetchError> {
        PartialCache::ensure_for_path(self, reference, tip, path)
    }
}

/// The repository itself, a partial clone: what a read needs and it lacks is fetched from the
/// fetcher's remote by object ID, one `git fetch` per read (git's own lazy fetch would ask once
/// per object).
impl Complete for Fetcher<'_> {
    fn ensure_for_path(
        &self,
        reference: &str,
        tip: Oid,
        path: Option<&str>,
    ) -> Result<(), FetchError> {
        let wanted = Wanted::documents_and(path);
        self.ensure_wanted(&[(reference.to_owned(), tip)], wanted)
    }

    fn ensure_many(&self, refs: &[(String, Oid)], wanted: Wanted<'_>) -> Result<(), FetchError> {
        self.ensure_wanted(refs, wanted)
    }

    fn ensure_trees(&self, reference: &str, tree: Oid) -> Result<(), FetchError> {
        if self.whole_trees.borrow().contains(&tree) {
            return Ok(());
        }
        let whole = self
            .repo()
            .objects()
            .find_tree(tree)
            .and_then(|t| t.blobs().map(drop));
        if whole.is_err() {
            self.fetch_objects(reference, &[tree])?;
        }
        self.whole_trees.borrow_mut().push(tree);
        Ok(())
    }
}

/// How many rounds completing a read takes at most: with `--filter=tree:0` the first brings the
/// checkpoints' trees, the second their blobs.
const COMPLETE_ROUNDS: usize = 2;

trait CompleteHere {
    /// Fetches what `wanted` names of the checkpoints of `refs` (a name and its commit or tree)
    /// that the repository lacks, in one fetch per round.
    fn ensure_wanted(&self, refs: &[(String, Oid)], wanted: Wanted<'_>) -> Result<(), FetchError>;
}

impl CompleteHere for Fetcher<'_> {
    fn ensure_wanted(&self, refs: &[(String, Oid)], wanted: Wanted<'_>) -> Result<(), FetchError> {
        let Some((first, _)) = refs.first() else {
            return Ok(());
        };
        let objects = self.repo().objects();
        for _ in 0..COMPLETE_ROUNDS {
            let mut missing = Vec::new();
            for (name, tip) in refs {
                let unreadable = |e| Fetcher::local(name, format!("read {name}: {e}"));
                missing.extend(missing_for_path(objects, *tip, wanted).map_err(unreadable)?);
            }
            if missing.is_empty() {
                return Ok(());
            }
            missing.sort_unstable();
            missing.dedup();
            self.fetch_objects(first, &missing)?;
        }
        Ok(())
    }
}

impl BranchFetch for Fetcher<'_> {
    fn fetch_copies(&self, tracking: &str, copies: &str) -> Result<bool, FetchError> {
        Fetcher::fetch_copies(self, tracking, copies)
    }
}

/// The fetcher of `repo`'s promisor remote, when it is a partial clone: what completes the
/// objects reads of its checkpoints need ([`Complete`]).
pub fn promisor(repo: &Repo) -> Option<Fetcher<'_>> {
    let remote = Remote::parse(repo.promisor_remote()?).ok()?;
    Some(Fetcher::new(repo, remote))
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
