//! Listing: every checkpoint of both stores as routing shows them, newest first and one line per
//! ID, borrowed from where the stores hold it; with a remote's, fetched or named only; remote-only
//! entries filled in within a budget; and how many checkpoints a remote holds that are not
//! here.

use std::collections::HashMap;

use super::Topology;
use crate::base::id::{self, CheckpointId, IdKind};
use crate::git::repo::Repo;
use crate::git::url::Remote;
use crate::store::branch::GitBranchStore;
use crate::store::refs::{self, IndexDamage};
use crate::store::{CheckpointInfo, CheckpointReader, ListLine, StoreError, StoreKind};

/// The result of `list`: the local checkpoints, newest first, each line borrowed from where the
/// stores hold it ([`Listing::lines`]).
#[derive(Debug)]
pub struct Listing {
    refs: refs::Listing,
    branch: Vec<CheckpointInfo>,
    /// The lines shown, newest first.
    order: Vec<Pick>,
    /// Set when the summary index was damaged (ignored and rebuilt): for a warning.
    pub index_damage: Option<IndexDamage>,
}

/// A line of a [`Listing`]: its number in the git-refs listing or among the branch's entries.
#[derive(Debug, Clone, Copy)]
enum Pick {
    Refs(u32),
    Branch(u32),
}

impl Listing {
    /// The lines, newest first.
    pub fn lines(&self) -> impl Iterator<Item = ListLine<'_>> + '_ {
        self.order.iter().map(|&p| self.line(p))
    }

    /// The lines, newest first, owned.
    pub fn into_entries(self) -> Vec<CheckpointInfo> {
        let mut branch: Vec<Option<CheckpointInfo>> = self.branch.into_iter().map(Some).collect();
        self.order
            .iter()
            .filter_map(|p| match *p {
                Pick::Refs(i) => Some(self.refs.info(i as usize)),
                Pick::Branch(i) => branch[i as usize].take(),
            })
            .collect()
    }

    /// The lines keyed by their ID, for looking many up; a line is decoded only when asked for.
    pub fn by_id(&self) -> ListingById<'_> {
        ListingById {
            picks: self
                .order
                .iter()
                .map(|&p| (self.id_and_time(p).0, p))
                .collect(),
            listing: self,
        }
    }

    fn line(&self, p: Pick) -> ListLine<'_> {
        match p {
            Pick::Refs(i) => self.refs.line(i as usize),
            Pick::Branch(i) => self.branch[i as usize].line(),
        }
    }

    /// The ID and `created_at` of a line.
    fn id_and_time(&self, p: Pick) -> (&str, &str) {
        match p {
            Pick::Refs(i) => self.refs.id_and_time(i as usize),
            Pick::Branch(i) => {
                let info = &self.branch[i as usize];
                (info.id.as_str(), &info.created_at)
            }
        }
    }
}

/// The lines of a [`Listing`] by ID ([`Listing::by_id`]).
pub struct ListingById<'l> {
    listing: &'l Listing,
    picks: HashMap<&'l str, Pick>,
}

impl<'l> ListingById<'l> {
    /// The line of checkpoint `id`, when listed.
    pub fn get(&self, id: &str) -> Option<ListLine<'l>> {
        self.picks.get(id).map(|&p| self.listing.line(p))
    }
}

/// The result of `list --remote`.
#[derive(Debug)]
pub struct RemoteListing {
    /// Local checkpoints plus remote-only ones, newest first.
    pub entries: Vec<CheckpointInfo>,
    /// Set when the remote could not be enumerated (the entries are then local only).
    pub enumeration_error: Option<crate::store::on_demand::FetchError>,
    /// As [`Listing::index_damage`].
    pub index_damage: Option<IndexDamage>,
}

impl<'r> Topology<'r> {
    /// Every checkpoint of both stores, newest first, one entry per ID (the most recent wins).
    /// The git-refs store is read through its summary index; a damaged index is reported on the
    /// listing (it was ignored and rebuilt), never an error.
    pub fn list(&self) -> Result<Listing, StoreError> {
        let mut refs = self.refs.list_indexed()?;
        let index_damage = refs.damage.take();
        let branch: Vec<CheckpointInfo> = self
            .branch
            .list()?
            .into_iter()
            .filter(|i| self.visible(&i.id, StoreKind::GitBranch))
            .collect();
        let mut listing = Listing {
            order: Vec::with_capacity(refs.len() + branch.len()),
            refs,
            branch,
            index_damage,
        };
        // Visibility depends on the ID's kind only: decided once per kind, not per line.
        let shown_kind = |kind| self.read_order(kind).contains(&StoreKind::GitRefs);
        let (ulid, hex) = (shown_kind(IdKind::Ulid), shown_kind(IdKind::Hex));
        for i in 0..listing.refs.len() {
            // Every listed ID is valid: its kind is its length (as `CheckpointId::kind`).
            let shown = if listing.refs.id_and_time(i).0.len() == id::HEX_LEN {
                hex
            } else {
                ulid
            };
            if shown {
                listing.order.push(Pick::Refs(i as u32));
            }
        }
        listing
            .order
            .extend((0..listing.branch.len()).map(|i| Pick::Branch(i as u32)));
        let order = std::mem::take(&mut listing.order);
        listing.order = newest_first(&listing, order);
        log::info!(
            "listed {} checkpoints of the git-refs store ({}*, through its summary index) and {} of the git-branch store ({} and the copies of it fetched from remotes)",
            listing.refs.len(),
            crate::git::refname::CHECKPOINT_REF_PREFIX,
            listing.branch.len(),
            crate::store::branch::V1_BRANCH
        );
        Ok(listing)
    }

    /// [`Topology::list`] plus the checkpoints only `remote` has: its checkpoint refs from one
    /// `ls-remote` (names only, marked remote-only) and its v1 branch, fetched into its tracking
    /// ref (one fetch) and listed whole. A failing enumeration leaves the local list and the
    /// error.
    pub fn list_with_remote(
        &self,
        repo: &'r Repo,
        remote: &Remote,
    ) -> Result<RemoteListing, StoreError> {
        let mut listing = self.list()?;
        let index_damage = listing.index_damage.take();
        let mut local = listing.into_entries();
        let fetcher = crate::remote::fetch::Fetcher::new(repo, remote.clone());
        let mut branch = GitBranchStore::mirror(repo);
        branch.set_remote(crate::remote::on_demand::remote_copy(
            repo,
            remote,
            Some(fetcher.sibling()),
        ));
        match branch.refresh_remote() {
            Ok(_) => {
                let known: std::collections::HashSet<CheckpointId> =
                    local.iter().map(|i| i.id.clone()).collect();
                local.extend(branch.list()?.into_iter().filter(|i| {
                    !known.contains(&i.id) && self.visible(&i.id, StoreKind::GitBranch)
                }));
            }
            Err(StoreError::Fetch(e)) => {
                return Ok(RemoteListing {
                    entries: local,
                    enumeration_error: Some(e),
                    index_damage,
                })
            }
            Err(e) => return Err(e),
        }
        let remote_refs = match fetcher.list_remote() {
            Ok(r) => r,
            Err(e) => {
                return Ok(RemoteListing {
                    entries: local,
                    enumeration_error: Some(e),
                    index_damage,
                })
            }
        };
        let mut known: std::collections::HashSet<CheckpointId> =
            local.iter().map(|i| i.id.clone()).collect();
        let mut all = local;
        for r in remote_refs {
            if known.insert(r.id().clone()) {
                all.push(CheckpointInfo::remote_only(r.id().clone()));
            }
        }
        Ok(RemoteListing {
            entries: dedup_newest_first(all),
            enumeration_error: None,
            index_damage,
        })
    }

    /// Fills in remote-only entries by fetching each checkpoint (which makes it local) and reading
    /// it, until `budget` runs out; an entry that cannot be fetched stays a bare remote-only
    /// entry. Returns how many were hydrated. `progress` is told `(entries tried, remote-only
    /// entries)` before each fetch.
    pub fn hydrate(
        &self,
        repo: &'r Repo,
        remote: &Remote,
        entries: &mut [CheckpointInfo],
        budget: std::time::Duration,
        progress: &dyn Fn(usize, usize),
    ) -> usize {
        let deadline = std::time::Instant::now() + budget;
        let fetcher = crate::remote::fetch::Fetcher::new(repo, remote.clone());
        let total = entries.iter().filter(|e| e.remote_only).count();
        let mut done = 0;
        for (n, e) in entries.iter_mut().filter(|e| e.remote_only).enumerate() {
            progress(n, total);
            if std::time::Instant::now() >= deadline {
                break;
            }
            if fetcher
                .fetch_checkpoints(std::slice::from_ref(&e.id))
                .is_err()
            {
                continue;
            }
            if let Ok(Some(cp)) = self.refs.read(&e.id) {
                *e = self.info(&cp);
                done += 1;
            }
        }
        done
    }
}

/// Sorts by creation time, newest first, and keeps the first entry of each ID.
/// The lines `order` of `listing` sorted as [`dedup_newest_first`] sorts entries, one per ID
/// (the first, that is the newest, wins), sorting compact (time, line) keys.
fn newest_first(listing: &Listing, order: Vec<Pick>) -> Vec<Pick> {
    // Each key is read once per line, not once per comparison (100,000 lines: 1.7 M
    // comparisons).
    let mut keyed: Vec<_> = order
        .into_iter()
        .map(|p| {
            let (id, time) = listing.id_and_time(p);
            (crate::base::time::parse_rfc3339(time).ok(), id, p)
        })
        .collect();
    keyed.sort_by(|(ta, a, _), (tb, b, _)| tb.cmp(ta).then_with(|| b.cmp(a)));
    // The git-refs lines are one per ID already: only the branch's can repeat one.
    if !listing.branch.is_empty() {
        let mut seen = std::collections::HashSet::new();
        keyed.retain(|(_, id, _)| seen.insert(*id));
    }
    keyed.into_iter().map(|(_, _, p)| p).collect()
}

fn dedup_newest_first(all: Vec<CheckpointInfo>) -> Vec<CheckpointInfo> {
    // Each time is parsed once, not once per comparison (100,000 entries: 3.4 M parses).
    let mut keyed: Vec<_> = all
        .into_iter()
        .map(|i| (crate::base::time::parse_rfc3339(&i.created_at).ok(), i))
        .collect();
    keyed.sort_by(|(ta, a), (tb, b)| tb.cmp(ta).then_with(|| b.id.cmp(&a.id)));
    let mut all: Vec<CheckpointInfo> = keyed.into_iter().map(|(_, i)| i).collect();
    let mut seen = std::collections::HashSet::new();
    all.retain(|i| seen.insert(i.id.clone()));
    all
}

/// How many checkpoints `remote` holds that are not here ([`crate::remote::held`]) (`is_local` says which are), as its
/// last listing showed, and how many seconds ago it was listed. When nothing is remembered (or
/// only a failure older than [`crate::remote::misses::DEFAULT_TTL`]) and `ask`, the remote is
/// listed now (one `ls-remote`, bounded by the read deadline) and that is remembered, a failure
/// too, so an unreachable remote is not asked again at every call. `None` when nothing is
/// known.
pub fn remote_not_here(
    repo: &Repo,
    remote: &Remote,
    is_local: impl Fn(&str) -> bool,
    ask: bool,
) -> Option<(usize, u64)> {
    let known = match crate::remote::held::last(repo, remote) {
        Some(crate::remote::held::Held::Failed { age })
            if age >= crate::remote::misses::DEFAULT_TTL =>
        {
            None
        }
        known => known,
    };
    let (age, ids) = match known {
        Some(crate::remote::held::Held::Listed { age, ids }) => (age, ids),
        Some(crate::remote::held::Held::Failed { .. }) => return None,
        None if ask => {
            let fetcher = crate::remote::fetch::Fetcher::new(repo, remote.clone());
            match fetcher.list_remote() {
                Ok(refs) => (0, refs.iter().map(|r| r.id().to_string()).collect()),
                Err(e) => {
                    log::info!("{e}");
                    crate::remote::held::record_failure(repo, remote);
                    return None;
                }
            }
        }
        None => return None,
    };
    Some((ids.iter().filter(|id| !is_local(id)).count(), age))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(id: &str, at: &str, store: StoreKind) -> CheckpointInfo {
        CheckpointInfo {
            id: CheckpointId::parse(id).unwrap(),
            store,
            created_at: at.into(),
            session_count: 1,
            session_ids: vec![],
            agent: String::new(),
            subject: String::new(),
            remote_only: false,
            unreadable: None,
            linked_commits: Vec::new(),
            refused_links: Vec::new(),
        }
    }

    #[test]
    fn dedup_keeps_most_recent() {
        let all = vec![
            info("a1b2c3d4e5f6", "2026-01-01T00:00:00Z", StoreKind::GitBranch),
            info("a1b2c3d4e5f6", "2026-02-01T00:00:00Z", StoreKind::GitRefs),
            info("b1b2c3d4e5f6", "2026-03-01T00:00:00Z", StoreKind::GitBranch),
        ];
        let out = dedup_newest_first(all);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0].id.as_str(), "b1b2c3d4e5f6");
        assert_eq!(out[1].store, StoreKind::GitRefs);
    }
}
