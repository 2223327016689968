//! The git-refs store: one ref per checkpoint, `refs/entire/checkpoints/<shard>/<id>`, whose tip
//! commit's tree is the checkpoint. The first write is an orphan commit; later writes are
//! children of the tip, so each checkpoint has its own linear history.

use std::cell::{OnceCell, RefCell};
use std::collections::{BTreeMap, HashSet};

use crate::git::objects::{Commit, Objects, Oid, Tree};

use crate::base::id::{CheckpointId, ULID_LEN};
use crate::config::settings::Limits;
use crate::git::format::ObjectFormat;
use crate::git::refname::{parse_tail, CheckpointRef, CHECKPOINT_REF_PREFIX};
use crate::git::refs::Listed;
use crate::git::repo::{Identity, Repo};
use crate::store::on_demand::{Complete, CompletedFiles, OnDemand, PartialObjects, Wanted};
use crate::store::publish::{self, Located};
use crate::store::queue::PushQueue;
use crate::store::{
    backfill_via, git_err, write_via, Backfill, Checkpoint, CheckpointFiles, CheckpointInfo,
    CheckpointReader, CheckpointWriter, CommitInfo, Layout, ListLine, SessionWrite, StoreError,
    StoreKind, WriteOutcome,
};
use crate::store::{summary, tree};

/// The git-refs store. Every write that moves a ref enqueues it for push.
pub struct GitRefsStore<'r> {
    repo: &'r Repo,
    queue: PushQueue,
    /// The network, when the topology handed it in: fetches on a miss, and the partial cache.
    on_demand: Option<Box<dyn OnDemand<'r> + 'r>>,
    /// The partial cache, opened on the first local miss that finds one.
    partial: OnceCell<Box<dyn PartialObjects + 'r>>,
    /// What [`GitRefsStore::prefetch`] asked the remote for: a read that misses one of these
    /// does not ask again.
    prefetched: RefCell<HashSet<CheckpointId>>,
}

impl<'r> GitRefsStore<'r> {
    /// A store over `repo`, enqueueing into the repository's push queue.
    pub fn new(repo: &'r Repo) -> Self {
        GitRefsStore {
            repo,
            queue: PushQueue::in_common_dir(repo.common_dir()),
            on_demand: None,
            partial: OnceCell::new(),
            prefetched: RefCell::new(HashSet::new()),
        }
    }

    /// Makes reads and backfills of a checkpoint missing locally go through `on_demand`: the
    /// partial cache, and fetches when it has a remote (creates never fetch).
    pub fn set_on_demand(&mut self, on_demand: Box<dyn OnDemand<'r> + 'r>) {
        self.on_demand = Some(on_demand);
    }

    /// The remote a miss is fetched from (credentials redacted), if reads fetch.
    pub fn fetch_remote(&self) -> Option<String> {
        self.on_demand
            .as_ref()
            .and_then(|o| o.remote_display())
            .map(str::to_owned)
    }

    /// The name of `id`'s local ref in the spelling that exists, if it exists.
    pub fn locate_ref(&self, id: &CheckpointId) -> Result<Option<String>, StoreError> {
        let loc = self.locate(id)?;
        Ok(loc.tip.map(|_| loc.name))
    }

    /// The partial cache, if one exists (looked for again until it does). A cache that cannot
    /// be opened is left out: reads of the repository itself must not depend on it.
    fn cache(&self) -> Option<&dyn PartialObjects> {
        if let Some(cache) = self.partial.get() {
            return Some(cache.as_ref());
        }
        match self.on_demand.as_ref()?.open_partial() {
            Ok(found) => found.map(|c| self.partial.get_or_init(|| c).as_ref()),
            Err(e) => {
                log::warn!("{}", crate::base::error::error_chain(&e));
                None
            }
        }
    }

    /// Where `id` can be read without the network: the repository's ref, else the partial
    /// cache's (then the cache is returned too). Returns the object database to read it from,
    /// the ref name and the tip.
    fn find_local(&self, id: &CheckpointId) -> Result<Option<Found<'_>>, StoreError> {
        let loc = self.locate(id)?;
        if let Some(tip) = loc.tip {
            return Ok(Some((self.repo.objects(), None, loc.name, tip)));
        }
        Ok(self.cache().and_then(|c| {
            c.locate(id)
                .map(|(name, tip)| (c.objects(), Some(c), name, tip))
        }))
    }

    /// Reads `id` from the repository or the partial cache.
    pub(crate) fn read_local(&self, id: &CheckpointId) -> Result<Option<Checkpoint>, StoreError> {
        match self.find_local(id)? {
            None => Ok(None),
            Some((git, cache, name, tip)) => self.read_found(git, cache, id, name, tip),
        }
    }

    /// Reads a checkpoint found locally; one in the partial cache, or in a repository that is a
    /// partial clone, gets any document still missing fetched first.
    fn read_found(
        &self,
        git: Objects<'_>,
        cache: Option<&dyn PartialObjects>,
        id: &CheckpointId,
        name: String,
        tip: Oid,
    ) -> Result<Option<Checkpoint>, StoreError> {
        let complete = match cache {
            Some(cache) => Some(cache as &dyn Complete),
            None => self.promised(),
        };
        if let Some(complete) = complete {
            complete.ensure_for_path(&name, tip, None)?;
        }
        checkpoint_at(git, id, name, tip, &self.repo.settings().limits()).map(Some)
    }

    /// In a partial clone, fetches every object of the checkpoints of `ids` held here that the
    /// repository lacks (their transcripts included), in one batch: what a command that reads
    /// them all (`blame`) asks first. Nothing to do in any other repository.
    pub fn complete(&self, ids: &[CheckpointId]) -> Result<(), StoreError> {
        let Some(promised) = self.promised() else {
            return Ok(());
        };
        let mut refs = Vec::new();
        for id in ids {
            let located = self.locate(id)?;
            if let Some(tip) = located.tip {
                refs.push((located.name, tip));
            }
        }
        Ok(promised.ensure_many(&refs, Wanted::All)?)
    }

    /// The repository's own promisor remote, when it is a partial clone.
    fn promised(&self) -> Option<&dyn Complete> {
        self.on_demand.as_deref().and_then(|o| o.promised())
    }

    /// Fetches, in one batch, those of `ids` held neither in the repository nor in the partial
    /// cache, when reads fetch; later reads of them look here only. So a command that reads many
    /// checkpoints (a commit's trailers) asks the remote once, not once per checkpoint.
    pub fn prefetch(&self, ids: &[CheckpointId]) -> Result<(), StoreError> {
        let Some(on_demand) = self.fetching() else {
            return Ok(());
        };
        let mut missing = Vec::new();
        for id in ids {
            if self.find_local(id)?.is_none() {
                missing.push(id.clone());
            }
        }
        if missing.is_empty() {
            return Ok(());
        }
        on_demand.fetch_checkpoints(&missing)?;
        self.prefetched.borrow_mut().extend(missing);
        Ok(())
    }

    /// On a local miss, fetches the checkpoint if a fetcher is set; returns the new location.
    fn locate_or_fetch(&self, id: &CheckpointId) -> Result<Located, StoreError> {
        let loc = self.locate(id)?;
        match (&loc.tip, self.fetching()) {
            (None, Some(f)) => {
                f.fetch_checkpoints(std::slice::from_ref(id))?;
                self.locate(id)
            }
            _ => Ok(loc),
        }
    }

    /// The network, when reads fetch.
    fn fetching(&self) -> Option<&dyn OnDemand<'r>> {
        self.on_demand
            .as_deref()
            .filter(|o| o.remote_display().is_some())
    }

    /// The push queue this store enqueues into.
    pub fn queue(&self) -> &PushQueue {
        &self.queue
    }

    /// The existing spelling of `id`'s ref and its tip (canonical first, then case-folded), or
    /// the canonical name with no tip when neither exists.
    pub(crate) fn locate(&self, id: &CheckpointId) -> Result<Located, StoreError> {
        for spelling in CheckpointRef::spellings(id) {
            if let Some(tip) = publish::tip_of(self.repo, spelling.name())? {
                return Ok(Located {
                    name: spelling.name().to_owned(),
                    tip: Some(tip),
                });
            }
        }
        Ok(Located {
            name: CheckpointRef::canonical(id).name().to_owned(),
            tip: None,
        })
    }

    fn tree_of(&self, commit: Option<&Commit<'r>>) -> Result<Option<Tree<'r>>, StoreError> {
        tree_of_commit(self.repo, commit)
    }

    /// Enqueues a moved ref. Best effort: the ref is already published, so a failed enqueue is
    /// reported on the outcome (a warning), never a failed write; `push --all` and `doctor`
    /// find such refs without the queue.
    fn published(&self, mut outcome: WriteOutcome) -> WriteOutcome {
        if outcome.changed {
            if let Err(e) = self.queue.enqueue(&outcome.ref_name) {
                outcome.enqueue_error = Some(crate::base::error::error_chain(&e));
            }
        }
        outcome
    }

    /// Every checkpoint of this store, in ID order, as [`CheckpointReader::list`] says, read
    /// through the summary index (`store::summary`): a checkpoint whose ref is at the tip its
    /// record was made from is not read at all. The refs and the index are merged in one pass in
    /// ID order, building the index anew as it goes (a record copied, or made from the
    /// checkpoint read); the lines stay records of that new index, so no line is decoded before
    /// it is rendered. The file is rewritten when anything in it was missing, stale or damaged;
    /// a failed rewrite only costs speed (logged).
    pub fn list_indexed(&self) -> Result<Listing, StoreError> {
        self.list_through_index(true)
    }

    /// [`GitRefsStore::list_indexed`] that never writes the index: for `doctor`, which reports
    /// a damaged index and mends it only when asked (`--fix`).
    pub fn list_indexed_unwritten(&self) -> Result<Listing, StoreError> {
        self.list_through_index(false)
    }

    fn list_through_index(&self, write_back: bool) -> Result<Listing, StoreError> {
        let limits = self.repo.settings().limits();
        let refs = self.checkpoint_refs()?;
        let path = summary::path(self.repo.common_dir());
        let format = self.repo.object_format();
        let (old, damage) = match summary::Index::load(&path, format) {
            Ok(index) => (index, None),
            Err(damage) => (
                None,
                Some(IndexDamage {
                    path: path.clone(),
                    damage,
                }),
            ),
        };
        // In a partial clone, the documents of every checkpoint the index does not answer for
        // are fetched first, in one batch; a failure leaves those lines unreadable, saying why.
        if let Some(promised) = self.promised() {
            let mut recorded = old.as_ref().map(summary::Index::lines);
            let unindexed: Vec<(String, Oid)> = refs
                .iter()
                .filter(|r| {
                    let found = recorded
                        .as_mut()
                        .and_then(|l| l.find(r.shard(), r.id(), r.tip));
                    found.is_none()
                })
                .map(|r| (r.name(), r.tip))
                .collect();
            if let Err(e) = promised.ensure_many(&unindexed, Wanted::Documents) {
                log::warn!("{e}");
            }
        }
        let mut built = summary::Builder::new(refs.len(), format);
        let mut lines = Vec::with_capacity(refs.len());
        let (mut hits, mut recorded) = (0, 0);
        let mut old_lines = old.as_ref().map(summary::Index::lines);
        for r in &refs {
            let found = old_lines
                .as_mut()
                .and_then(|l| l.find(r.shard(), r.id(), r.tip));
            let line = match (old.as_ref(), found) {
                (Some(old), Some(no)) => {
                    hits += 1;
                    match built.copy(old, no) {
                        Some(new) => Line::Indexed(new),
                        None => Line::Read(Box::new(old.record(no).info(r.checkpoint_id()))),
                    }
                }
                _ => {
                    let (id, name) = (r.checkpoint_id(), r.name());
                    let (info, corrupt) = listed(self.repo.objects(), &id, &name, r.tip, &limits);
                    let leaf = &name[CHECKPOINT_REF_PREFIX.len()..];
                    match built.push(leaf, r.tip, &info, corrupt) {
                        Some(new) => Line::Indexed(new),
                        None => Line::Read(Box::new(info)),
                    }
                }
            };
            recorded += usize::from(matches!(line, Line::Indexed(_)));
            lines.push(line);
        }
        let records = old.as_ref().map_or(0, summary::Index::record_count);
        // Freed before the file is written: the old and new index bytes are in memory together
        // only during the pass.
        drop(old);
        drop(refs);
        let mut index = built.finish();
        // Rewritten when a line was recorded that was not there, a record is stale or gone, or
        // the file was damaged; an index that already says exactly this is left alone.
        if write_back && (damage.is_some() || hits != recorded || records != hits) {
            if let Err(e) = index.store(&path) {
                log::warn!("could not write the summary index {}: {e}", path.display());
            }
        }
        let mut listing = Listing {
            index,
            lines,
            damage,
        };
        if let Some(cache) = self.cache() {
            let mut seen = std::collections::BTreeSet::new();
            for (r, tip) in cache.refs() {
                let id = r.id();
                if listing.contains(id) || !seen.insert(id.clone()) {
                    continue;
                }
                let git = cache.objects();
                let name = r.name().to_owned();
                if let Ok(Some(cp)) = self.read_found(git, Some(cache), id, name, tip) {
                    listing
                        .lines
                        .push(Line::Read(Box::new(info_read(git, &cp))));
                }
            }
            let Listing { index, lines, .. } = &mut listing;
            lines.sort_by(|a, b| a.id(index).cmp(b.id(index)));
        }
        Ok(listing)
    }

    /// The refs whose summary-index record in `index` is for their current tip but says
    /// something else than the checkpoint (which `list` would print as it is): every such
    /// checkpoint is read.
    pub fn index_disagreements(&self, index: &summary::Index) -> Result<Vec<String>, StoreError> {
        let limits = self.repo.settings().limits();
        let mut lines = index.lines();
        let mut out = Vec::new();
        for (id, (name, tip)) in self.refs()? {
            if let Some(line) = lines.get(&name, tip, &id) {
                if listed(self.repo.objects(), &id, &name, tip, &limits).0 != line {
                    out.push(name);
                }
            }
        }
        Ok(out)
    }

    /// All parseable checkpoint refs with their tips, one per ID: when both spellings exist
    /// (a fork made before case-fold handling), the canonical one wins so list and read agree.
    pub(crate) fn refs(&self) -> Result<BTreeMap<CheckpointId, (String, Oid)>, StoreError> {
        Ok(self
            .checkpoint_refs()?
            .into_iter()
            .map(|r| (r.checkpoint_id(), (r.name(), r.tip)))
            .collect())
    }

    /// [`GitRefsStore::refs`] in ID order, compactly (in the files backend, the refs are read
    /// as one sorted stream of loose and packed refs: `Repo::for_each_ref`).
    fn checkpoint_refs(&self) -> Result<Vec<RefEntry>, StoreError> {
        let mut out = Vec::new();
        self.repo
            .for_each_ref(CHECKPOINT_REF_PREFIX, &mut |listed| match listed {
                Listed::Ref(name, Some(tip)) => out.extend(RefEntry::parse(name, tip)),
                Listed::Ref(_, None) => {}
                Listed::Restart => out.clear(),
            })?;
        // Ref order is shard order; lines and the index are in ID order. The canonical
        // spelling sorts first within an ID, and `dedup_by` keeps the first.
        // IDs compared as bytes (as `str` compares them), not read as `str` per comparison.
        out.sort_unstable_by(|a, b| {
            a.id_bytes()
                .cmp(b.id_bytes())
                .then_with(|| b.canonical.cmp(&a.canonical))
        });
        out.dedup_by(|later, first| later.id_bytes() == first.id_bytes());
        Ok(out)
    }
}

/// Why the ref of checkpoint `id` at `tip` is not a checkpoint, if it is not: its tip is not a
/// commit (a tree or a tag pushed there by hand or by another tool), or the commit's tree has no
/// readable root `metadata.json` (`doctor` checks more). Such a ref is never pushed
/// (it would break every clone's `gc`), and `migrate`, `gc` and `doctor` report it.
pub(crate) fn shape_problem(repo: &Repo, id: &CheckpointId, tip: Oid) -> Option<String> {
    let git = repo.objects();
    let commit = match git.find_commit(tip) {
        Ok(c) => c,
        Err(_) => return Some(not_a_commit(git, tip)),
    };
    let tree = match commit.tree() {
        Ok(t) => t,
        Err(e) => return Some(format!("the tree of {tip} is unreadable: {e}")),
    };
    match tree::read_documents(git, &tree, id, &repo.settings().limits()) {
        Ok(Some(_)) => None,
        Ok(None) => Some("its tree has no root metadata.json".into()),
        Err(e) => Some(crate::base::error::error_chain(&e)),
    }
}

/// What the tip `tip` of a checkpoint ref is, when it is no commit: `its tip <oid> is a blob,
/// not a commit` (a tree, a tag, an unreadable object).
pub(crate) fn not_a_commit(git: Objects<'_>, tip: Oid) -> String {
    let kind = git
        .kind_of(tip)
        .ok()
        .flatten()
        .map_or("an unreadable object".to_owned(), |k| format!("a {k}"));
    format!("its tip {tip} is {kind}, not a commit")
}

/// Every checkpoint ref that is not a checkpoint ([`shape_problem`]), with why.
pub(crate) fn misshapen_refs(repo: &Repo) -> Result<Vec<(String, String)>, StoreError> {
    let mut out = Vec::new();
    for (id, (name, tip)) in GitRefsStore::new(repo).refs()? {
        if let Some(why) = shape_problem(repo, &id, tip) {
            out.push((name, why));
        }
    }
    Ok(out)
}

/// Reads the checkpoint `id` whose ref `name` points at `tip` from the object database of `git`,
/// within `limits`.
fn checkpoint_at(
    git: Objects<'_>,
    id: &CheckpointId,
    name: String,
    tip: Oid,
    limits: &Limits,
) -> Result<Checkpoint, StoreError> {
    // The error context is formatted only on failure: `list` reads every checkpoint.
    let commit = match git.find_commit(tip) {
        Ok(c) => c,
        // Of another type than a commit: said as `doctor` says it, not in libgit2's words.
        Err(e) if e.is_not_found() && git.kind_of(tip).is_ok() => {
            return Err(StoreError::NotACommit {
                why: not_a_commit(git, tip),
                ref_name: name,
            })
        }
        Err(e) => return Err(git_err(format!("read commit of {name}"))(e)),
    };
    let tree = tree::tree_within(git, commit.tree_id(), id, "of the checkpoint", limits)?;
    let Some(docs) = tree::read_documents(git, &tree, id, limits)? else {
        return Err(StoreError::Corrupt {
            id: id.clone(),
            path: "metadata.json".into(),
            source: crate::model::documents::ModelError::Json {
                what: "root metadata.json",
                source: serde::de::Error::custom("missing from the checkpoint tree"),
            },
        });
    };
    let (summary, sessions, session_dirs, listed) = docs.into_read();
    Ok(Checkpoint {
        id: id.clone(),
        store: StoreKind::GitRefs,
        ref_name: name,
        commit: tip.to_string(),
        tree: tree.id().to_string(),
        summary,
        sessions,
        session_dirs,
        listed,
    })
}

/// A checkpoint found without the network: the object database holding it, the partial cache
/// when that is where it is, its ref name and tip.
type Found<'a> = (Objects<'a>, Option<&'a dyn PartialObjects>, String, Oid);

/// The tree of `commit`, if there is one.
pub(crate) fn tree_of_commit<'r>(
    repo: &'r Repo,
    commit: Option<&Commit<'r>>,
) -> Result<Option<Tree<'r>>, StoreError> {
    commit
        .map(|c| {
            repo.objects()
                .find_tree(c.tree_id())
                .map_err(git_err("read commit tree"))
        })
        .transpose()
}

/// The commit's author and first message line, for `log`.
pub(crate) fn commit_info(c: &Commit<'_>) -> CommitInfo {
    let (seconds, offset_minutes) = c.author_when();
    CommitInfo {
        commit: c.id().to_string(),
        authored_at: crate::base::time::rfc3339_at(seconds, offset_minutes),
        author: c.author(),
        subject: c.summary(),
    }
}

/// An object ID of a [`Checkpoint`] that is not one of the repository's.
fn oid_err(e: crate::git::format::OidError) -> StoreError {
    StoreError::Repo(e.into())
}

/// Reads the tree object of a [`Checkpoint`].
pub(crate) fn checkpoint_tree<'a>(
    git: Objects<'a>,
    cp: &Checkpoint,
    limits: &Limits,
) -> Result<Tree<'a>, StoreError> {
    // Read by this process from a repository of this format: its length says which.
    let oid = ObjectFormat::parse_any(&cp.tree).map_err(oid_err)?;
    tree::tree_within(git, oid, &cp.id, "of the checkpoint", limits)
}

impl CheckpointReader for GitRefsStore<'_> {
    fn kind(&self) -> StoreKind {
        StoreKind::GitRefs
    }

    fn read(&self, id: &CheckpointId) -> Result<Option<Checkpoint>, StoreError> {
        if let Some(cp) = self.read_local(id)? {
            return Ok(Some(cp));
        }
        let Some(on_demand) = self.fetching() else {
            return Ok(None);
        };
        if self.prefetched.borrow().contains(id) {
            return Ok(None);
        }
        on_demand.fetch_checkpoints(std::slice::from_ref(id))?;
        self.read_local(id)
    }

    fn files<'s>(&'s self, cp: &Checkpoint) -> Result<Box<dyn CheckpointFiles + 's>, StoreError> {
        // A checkpoint read from the partial cache is read from it again (its ref there still
        // points at the commit read); everything else comes from the repository.
        let limits = self.repo.settings().limits();
        let tip = self.repo.parse_oid(&cp.commit).map_err(oid_err)?;
        let cached = match publish::tip_of(self.repo, &cp.ref_name)? {
            Some(t) if t == tip => None,
            _ => self.cache().filter(|c| c.tip(&cp.ref_name) == Some(tip)),
        };
        let Some(cache) = cached else {
            let tree = checkpoint_tree(self.repo.objects(), cp, &limits)?;
            let files = Box::new(tree::TreeFiles::new(
                self.repo.objects(),
                tree,
                &cp.id,
                limits,
            ));
            return Ok(match self.promised() {
                Some(complete) => Box::new(CompletedFiles {
                    complete,
                    reference: cp.ref_name.clone(),
                    tip,
                    files,
                }),
                None => files,
            });
        };
        cache.ensure_for_path(&cp.ref_name, tip, None)?;
        let tree = checkpoint_tree(cache.objects(), cp, &limits)?;
        Ok(Box::new(CompletedFiles {
            complete: cache,
            reference: cp.ref_name.clone(),
            tip,
            files: Box::new(tree::TreeFiles::new(cache.objects(), tree, &cp.id, limits)),
        }))
    }

    fn list(&self) -> Result<Vec<CheckpointInfo>, StoreError> {
        let listing = self.list_indexed()?;
        if let Some(damage) = &listing.damage {
            log::warn!("{}", damage);
        }
        Ok((0..listing.len()).map(|i| listing.info(i)).collect())
    }

    fn ids(&self) -> Result<Vec<CheckpointId>, StoreError> {
        let mut ids: Vec<CheckpointId> = self.refs()?.into_keys().collect();
        if let Some(cache) = self.cache() {
            ids.extend(cache.refs().into_iter().map(|(r, _)| r.id().clone()));
            ids.sort();
            ids.dedup();
        }
        Ok(ids)
    }

    fn history(&self, id: &CheckpointId) -> Result<Option<Vec<CommitInfo>>, StoreError> {
        let Some((git, _, _, tip)) = self.find_local(id)? else {
            return Ok(None);
        };
        let mut out = Vec::new();
        let mut cur = Some(git.find_commit(tip).map_err(git_err("read commit"))?);
        while let Some(c) = cur {
            out.push(commit_info(&c));
            cur = c.parents().next();
        }
        Ok(Some(out))
    }

    fn author(&self, cp: &Checkpoint) -> Result<Option<Identity>, StoreError> {
        // Looked up again: the commit may be in the partial cache's repository.
        let Some((git, _, _, tip)) = self.find_local(&cp.id)? else {
            return Ok(None);
        };
        let c = git.find_commit(tip).map_err(git_err("read commit"))?;
        Ok(Some(commit_info(&c).author))
    }
}

/// The list line of a checkpoint read from `git` (its subject read there too).
pub(crate) fn info_read(git: Objects<'_>, cp: &Checkpoint) -> CheckpointInfo {
    let subject = ObjectFormat::parse_any(&cp.tree)
        .ok()
        .and_then(|t| git.find_tree(t).ok())
        .map(|tree| tree::subject(git, &tree, &cp.session_dirs))
        .unwrap_or_default();
    info_of(cp, subject)
}

/// The agents of `cp`'s sessions, each once, in the order of their last session (so the last
/// session's agent is the last), joined by [`AGENT_SEPARATOR`].
fn agents_of(cp: &Checkpoint) -> String {
    let mut agents: Vec<&str> = Vec::new();
    for s in cp.sessions.iter().filter(|s| !s.agent.is_empty()) {
        agents.retain(|a| *a != s.agent);
        agents.push(&s.agent);
    }
    agents.join(crate::store::AGENT_SEPARATOR)
}

/// The list line of a checkpoint whose subject is `subject`.
pub(crate) fn info_of(cp: &Checkpoint, subject: String) -> CheckpointInfo {
    let mut created_at = cp.created_at();
    if created_at.is_empty() {
        created_at = CheckpointInfo::remote_only(cp.id.clone()).created_at;
    }
    let links = cp.summary.linked_commits();
    CheckpointInfo {
        id: cp.id.clone(),
        store: cp.store,
        created_at,
        session_count: cp.sessions.len(),
        session_ids: cp.sessions.iter().map(|s| s.session_id.clone()).collect(),
        agent: agents_of(cp),
        subject,
        remote_only: false,
        unreadable: None,
        linked_commits: links.shas,
        refused_links: links.refused,
    }
}

/// The list line of checkpoint `id` whose ref `name` points at `tip`, read from `git`: an
/// unreadable checkpoint gets its line all the same, saying why; and whether it is unreadable
/// because a document does not parse ([`StoreError::Corrupt`]: a fact of the objects at `tip`,
/// which the summary index may record, unlike a missing blob or a limit of the settings).
pub(crate) fn listed(
    git: Objects<'_>,
    id: &CheckpointId,
    name: &str,
    tip: Oid,
    limits: &Limits,
) -> (CheckpointInfo, bool) {
    // One unreadable checkpoint must not hide the others. Reading on several threads (one
    // repository each over the shared object database) was measured slower on a busy 2-core
    // machine (docs/performance.md, note (d)), so a listing stays one pass on one thread.
    match checkpoint_at(git, id, name.to_owned(), tip, limits) {
        Ok(cp) => (info_read(git, &cp), false),
        Err(e) => {
            let corrupt = matches!(e, StoreError::Corrupt { .. });
            let reason = crate::base::error::error_chain(&e);
            let info = CheckpointInfo::unreadable(id.clone(), StoreKind::GitRefs, reason);
            (info, corrupt)
        }
    }
}

/// One checkpoint ref, compactly (no allocation): `list` holds one per checkpoint.
struct RefEntry {
    /// The checkpoint ID's bytes, `id_len` of them.
    id: [u8; ULID_LEN],
    id_len: u8,
    /// The shard in the spelling the ref has.
    shard: [u8; 2],
    canonical: bool,
    tip: Oid,
}

impl RefEntry {
    /// The entry of the ref `name` at `tip`, if it is a checkpoint ref.
    fn parse(name: &str, tip: Oid) -> Option<RefEntry> {
        // As `CheckpointRef::parse`, without building one per ref.
        let tail = name.strip_prefix(CHECKPOINT_REF_PREFIX)?;
        let (id, canonical) = parse_tail(tail)?;
        let shard = tail.split_once('/')?.0;
        let mut entry = RefEntry {
            id: [0; ULID_LEN],
            id_len: u8::try_from(id.len()).ok()?,
            shard: shard.as_bytes().try_into().ok()?,
            canonical,
            tip,
        };
        entry.id.get_mut(..id.len())?.copy_from_slice(id.as_bytes());
        Some(entry)
    }

    fn id_bytes(&self) -> &[u8] {
        &self.id[..usize::from(self.id_len)]
    }

    fn id(&self) -> &str {
        // Copied from a `&str` that was a valid checkpoint ID (ASCII).
        std::str::from_utf8(&self.id[..usize::from(self.id_len)]).unwrap_or("")
    }

    fn shard(&self) -> &str {
        std::str::from_utf8(&self.shard).unwrap_or("")
    }

    fn checkpoint_id(&self) -> CheckpointId {
        CheckpointId::parse(self.id())
            .unwrap_or_else(|_| unreachable!("parsed from a checkpoint ref"))
    }

    fn name(&self) -> String {
        format!("{CHECKPOINT_REF_PREFIX}{}/{}", self.shard(), self.id())
    }
}

/// Where a listed line is held.
#[derive(Debug)]
enum Line {
    /// A record of the listing's index.
    Indexed(summary::RecordNo),
    /// Not recorded (unreadable, from the partial cache, or not fitting the index).
    Read(Box<CheckpointInfo>),
}

impl Line {
    fn id<'a>(&'a self, index: &'a summary::Index) -> &'a str {
        match self {
            Line::Indexed(no) => index.id_and_time(*no).0,
            Line::Read(info) => info.id.as_str(),
        }
    }
}

/// A listing of the git-refs store ([`GitRefsStore::list_indexed`]): every checkpoint, in ID
/// order, each line held as a record of the summary index where it can be.
#[derive(Debug)]
pub struct Listing {
    /// The index as the listing left it: the records the lines name.
    index: summary::Index,
    lines: Vec<Line>,
    /// Set when the summary index was damaged (it was ignored and rewritten): for a warning.
    pub damage: Option<IndexDamage>,
}

impl Listing {
    /// How many checkpoints were listed.
    pub fn len(&self) -> usize {
        self.lines.len()
    }

    /// Whether no checkpoint was listed.
    pub fn is_empty(&self) -> bool {
        self.lines.is_empty()
    }

    /// The ID and `created_at` of line `i` (below [`Listing::len`]), without decoding the rest.
    pub fn id_and_time(&self, i: usize) -> (&str, &str) {
        match &self.lines[i] {
            Line::Indexed(no) => self.index.id_and_time(*no),
            Line::Read(info) => (info.id.as_str(), &info.created_at),
        }
    }

    /// Line `i` (below [`Listing::len`]).
    pub fn line(&self, i: usize) -> ListLine<'_> {
        match &self.lines[i] {
            Line::Indexed(no) => self.index.record(*no).line(),
            Line::Read(info) => info.line(),
        }
    }

    /// Line `i` (below [`Listing::len`]), owned.
    pub fn info(&self, i: usize) -> CheckpointInfo {
        match &self.lines[i] {
            Line::Indexed(no) => {
                let record = self.index.record(*no);
                let id = CheckpointId::parse(record.id())
                    .unwrap_or_else(|_| unreachable!("validated by the index"));
                record.info(id)
            }
            Line::Read(info) => (**info).clone(),
        }
    }

    /// Whether checkpoint `id` is listed (a binary search: the lines are in ID order).
    fn contains(&self, id: &CheckpointId) -> bool {
        self.lines
            .binary_search_by(|l| l.id(&self.index).cmp(id.as_str()))
            .is_ok()
    }
}

/// A summary index that was ignored because it cannot be trusted.
#[derive(Debug, thiserror::Error)]
#[error("summary index {} ignored and rebuilt", path.display())]
pub struct IndexDamage {
    /// The index file.
    pub path: std::path::PathBuf,
    /// What is wrong with it.
    #[source]
    pub damage: summary::Damage,
}

/// Where one checkpoint lives in the git-refs store: the whole tree of its own ref.
struct RefsLayout<'s, 'r> {
    store: &'s GitRefsStore<'r>,
    id: &'s CheckpointId,
}

impl<'r> Layout<'r> for RefsLayout<'_, 'r> {
    fn repo(&self) -> &'r Repo {
        self.store.repo
    }
    fn locate(&self) -> Result<Located, StoreError> {
        self.store.locate(self.id)
    }
    fn prefix(&self) -> String {
        String::new()
    }
    fn bootstrap(&self) -> Option<&'static str> {
        None
    }
    fn subtree(&self, tip: Option<&Commit<'r>>) -> Result<Option<Tree<'r>>, StoreError> {
        self.store.tree_of(tip)
    }
    fn place(
        &self,
        _tip: Option<&Commit<'r>>,
        change: tree::Change,
    ) -> Result<tree::Change, StoreError> {
        Ok(change)
    }
}

impl CheckpointWriter for GitRefsStore<'_> {
    fn name(&self) -> &str {
        StoreKind::GitRefs.name()
    }

    fn write_session(&self, w: &SessionWrite) -> Result<WriteOutcome, StoreError> {
        let layout = RefsLayout {
            store: self,
            id: &w.checkpoint_id,
        };
        Ok(self.published(write_via(&layout, w)?))
    }

    fn backfill(&self, b: &Backfill) -> Result<WriteOutcome, StoreError> {
        self.locate_or_fetch(b.id())?;
        let layout = RefsLayout {
            store: self,
            id: b.id(),
        };
        Ok(self.published(backfill_via(&layout, b)?))
    }
}
