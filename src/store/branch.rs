//! The legacy git-branch store: every checkpoint is a subtree of the one branch
//! `refs/heads/entire/checkpoints/v1`, at `id[:2]/id[2:]`. Each write is one commit on the
//! branch that replaces only that subtree; the branch starts as an empty-tree orphan commit
//! `Initialize sessions branch`.

use std::cell::{Cell, RefCell};

use crate::git::objects::Oid;
use crate::git::objects::{Commit, ObjectKind, Tree, TreeEdits};

use crate::base::id::{CheckpointId, IdKind};
use crate::git::repo::{Identity, Repo};
use crate::model::links::LinkedCommits;
use crate::store::archive;
use crate::store::author_memo::AuthorMemo;
use crate::store::link_index;
use crate::store::on_demand::{BranchFetch, Complete, CompletedFiles, Wanted};
use crate::store::publish::{self, Located};
use crate::store::refs::{checkpoint_tree, commit_info, info_read, tree_of_commit};
use crate::store::tree::{self, Change};
use crate::store::{
    backfill_via, git_err, write_via, Backfill, Checkpoint, CheckpointFiles, CheckpointInfo,
    CheckpointReader, CheckpointWriter, CommitInfo, Layout, SessionWrite, StoreError, StoreKind,
    WriteOutcome,
};

/// The branch's full ref name.
pub const V1_BRANCH_REF: &str = "refs/heads/entire/checkpoints/v1";
/// The branch's short name.
pub const V1_BRANCH: &str = "entire/checkpoints/v1";
/// Subject of the branch's first commit.
pub const BOOTSTRAP_MESSAGE: &str = "Initialize sessions branch";

/// The git-branch store.
pub struct GitBranchStore<'r> {
    repo: &'r Repo,
    accept_ulids: bool,
    remote: Option<RemoteCopy<'r>>,
    /// Other remotes' copies, read (never fetched) after the fetched remote's: a clone whose
    /// checkpoint remote is down still reads what `origin`'s copy holds.
    others: Vec<RemoteCopy<'r>>,
    /// Copies reads set aside (a ref that is not a commit), said once each.
    ignored: RefCell<Vec<String>>,
    /// What completes the objects a read needs, when the repository is a partial clone.
    promised: Option<Box<dyn Complete + 'r>>,
    /// The refs reads look at, while a batch of reads holds them ([`GitBranchStore::batch`]).
    batch: RefCell<Batch<'r>>,
}

/// Whether a batch of reads runs ([`GitBranchStore::batch`]), and the sources it resolved.
enum Batch<'r> {
    Off,
    On(Option<Vec<Source<'r>>>),
}

/// Where reads of the branch look after the local branch: a remote's copy of it, held by a
/// remote-tracking ref, and of the layouts it archived (`store::archive`), under a private
/// prefix; fetched on demand (once per command, in one fetch) when a fetcher is set. Writes
/// never look here: they extend the local branch, and a push merges it with the remote's.
pub struct RemoteCopy<'r> {
    tracking: String,
    copies: String,
    fetcher: Option<Box<dyn BranchFetch + 'r>>,
    fetched: Cell<bool>,
}

impl<'r> RemoteCopy<'r> {
    /// The copy read from the tracking ref `tracking` and the archived layouts' copies under
    /// `copies` (ending in `/`) and, with a `fetcher` for its remote, fetched on a miss (the
    /// remote layer names both).
    pub fn new(
        tracking: String,
        copies: String,
        fetcher: Option<Box<dyn BranchFetch + 'r>>,
    ) -> Self {
        RemoteCopy {
            tracking,
            copies,
            fetcher,
            fetched: Cell::new(false),
        }
    }

    /// The ref that holds the copy.
    pub fn tracking(&self) -> &str {
        &self.tracking
    }

    /// Where the copies of the remote's archived layouts are kept.
    pub fn copies(&self) -> &str {
        &self.copies
    }

    /// Whether a miss fetches the remote's branch (once per command).
    pub fn fetches(&self) -> bool {
        self.fetcher.is_some()
    }
}

/// One ref reads look at for checkpoints at `<id[:2]>/<id[2:]>/`, with its tip.
#[derive(Clone)]
struct Source<'r> {
    name: String,
    commit: Commit<'r>,
}

impl<'r> GitBranchStore<'r> {
    /// The store as a primary: ULID checkpoints are refused, since readers route ULIDs to
    /// git-refs and would never find them here.
    pub fn primary(repo: &'r Repo) -> Self {
        GitBranchStore {
            repo,
            accept_ulids: false,
            remote: None,
            others: Vec::new(),
            ignored: RefCell::new(Vec::new()),
            promised: None,
            batch: RefCell::new(Batch::Off),
        }
    }

    /// The store as a mirror of a git-refs primary, which legitimately receives ULIDs.
    pub fn mirror(repo: &'r Repo) -> Self {
        GitBranchStore {
            accept_ulids: true,
            ..Self::primary(repo)
        }
    }

    /// The remote's copy reads look at after the local branch, if any.
    pub fn remote_copy(&self) -> Option<&RemoteCopy<'r>> {
        self.remote.as_ref()
    }

    /// What reads set aside so far, one line each (a copy whose ref is not a commit).
    pub fn ignored(&self) -> Vec<String> {
        self.ignored.borrow().clone()
    }

    /// Makes reads look at `remote`'s copy of the branch after the local branch.
    pub fn set_remote(&mut self, remote: RemoteCopy<'r>) {
        self.remote = Some(remote);
    }

    /// Makes reads also look at another remote's copies (as held, never fetched), after the
    /// copies of the remote set by [`GitBranchStore::set_remote`].
    pub fn add_local_copy(&mut self, copy: RemoteCopy<'r>) {
        self.others.push(copy);
    }

    /// The branch tip, if the branch exists.
    pub fn tip(&self) -> Result<Option<Oid>, StoreError> {
        publish::tip_of(self.repo, V1_BRANCH_REF)
    }

    /// The refs reads look at, in order, each `(name, is a remote's copy)`: the local branch and
    /// the remotes' copies (the fetched remote's first), then the archived layouts (the
    /// unsharded v1 ref, the v1.1 ref, the v2 documents), the repository's own before the
    /// remotes' copies.
    fn source_names(&self) -> Vec<(String, bool)> {
        let copies: Vec<&RemoteCopy<'r>> = self.remote.iter().chain(&self.others).collect();
        let mut out = vec![(V1_BRANCH_REF.to_owned(), false)];
        out.extend(copies.iter().map(|r| (r.tracking.clone(), true)));
        for archived in [archive::V1_REF, archive::V1_1_REF, archive::V2_MAIN] {
            out.push((archived.to_owned(), false));
            out.extend(
                copies
                    .iter()
                    .map(|r| (archive::copy_name(&r.copies, archived), true)),
            );
        }
        let mut seen = std::collections::HashSet::new();
        out.retain(|(name, _)| seen.insert(name.clone()));
        out
    }

    /// Runs `reads` with the refs reads look at resolved once rather than by every read (about
    /// eight ref look-ups each): for a batch of reads of many checkpoints, in which nothing moves
    /// those refs but this store's own fetch of the remote's copies, after which they are
    /// resolved again. Writes are not for a batch.
    pub fn batch<T>(&self, reads: impl FnOnce() -> T) -> T {
        let outer = self.batch.replace(Batch::On(None));
        let out = reads();
        self.batch.replace(outer);
        out
    }

    /// [`GitBranchStore::resolve_sources`], once per batch of reads.
    fn sources(&self) -> Result<Vec<Source<'r>>, StoreError> {
        if let Batch::On(Some(held)) = &*self.batch.borrow() {
            return Ok(held.clone());
        }
        let sources = self.resolve_sources()?;
        if let Batch::On(held) = &mut *self.batch.borrow_mut() {
            *held = Some(sources.clone());
        }
        Ok(sources)
    }

    /// The refs of [`GitBranchStore::source_names`] that exist, with their tips (each commit
    /// once). Anything but the local branch that is not a commit is set aside (and said), so the
    /// rest stays readable.
    fn resolve_sources(&self) -> Result<Vec<Source<'r>>, StoreError> {
        let mut out: Vec<Source<'r>> = Vec::new();
        for (name, _) in self.source_names() {
            let Some(tip) = publish::tip_of(self.repo, &name)? else {
                continue;
            };
            if out.iter().any(|s| s.commit.id() == tip) {
                continue;
            }
            let commit = match self.repo.objects().find_commit(tip) {
                Ok(c) => c,
                Err(_) if name != V1_BRANCH_REF => {
                    let note = format!("{name} is not a commit ({tip}): the checkpoints it would hold are not read");
                    let mut ignored = self.ignored.borrow_mut();
                    if !ignored.contains(&note) {
                        ignored.push(note);
                    }
                    continue;
                }
                Err(e) => {
                    return Err(git_err(format!("{name} is not a commit"))(e));
                }
            };
            out.push(Source { name, commit });
        }
        Ok(out)
    }

    /// Fetches the remote's branch and archived layouts into their copies, the first time only;
    /// whether a copy moved.
    fn fetch_remote(&self) -> Result<bool, StoreError> {
        let Some(remote) = &self.remote else {
            return Ok(false);
        };
        let Some(fetcher) = &remote.fetcher else {
            return Ok(false);
        };
        if remote.fetched.replace(true) {
            return Ok(false);
        }
        let moved = fetcher.fetch_copies(&remote.tracking, &remote.copies)?;
        if moved {
            // A batch's sources include the copies: resolved again.
            if let Batch::On(held) = &mut *self.batch.borrow_mut() {
                *held = None;
            }
        }
        Ok(moved)
    }

    /// Fetches the remote's copy of the branch now (once per command), for `list --remote`
    /// and `git entire-fetch`: `Some(tip)` of the copy after the fetch, `None` when the remote
    /// has no such branch. The archived layouts' copies are fetched in the same fetch.
    pub fn refresh_remote(&self) -> Result<Option<Oid>, StoreError> {
        self.fetch_remote()?;
        match &self.remote {
            Some(r) => publish::tip_of(self.repo, &r.tracking),
            None => Ok(None),
        }
    }

    /// Whether the local branch, the archived layouts or the remote's copies (as fetched so
    /// far) hold `id`.
    pub fn holds(&self, id: &CheckpointId) -> Result<bool, StoreError> {
        for s in self.sources()? {
            if self.subtree_in(Some(&s.commit), id)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether the remote's copies (of the branch and its archived layouts, as fetched so far)
    /// hold `id`; unlike [`GitBranchStore::holds`], the repository's own refs are not looked at.
    pub fn remote_holds(&self, id: &CheckpointId) -> Result<bool, StoreError> {
        for (name, _) in self
            .source_names()
            .into_iter()
            .filter(|(_, remote)| *remote)
        {
            let Some(tip) = publish::tip_of(self.repo, &name)? else {
                continue;
            };
            // A copy that is not a commit holds nothing (reads set it aside and say so).
            let Ok(commit) = self.repo.objects().find_commit(tip) else {
                continue;
            };
            if self.subtree_in(Some(&commit), id)?.is_some() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn locate(&self) -> Result<Located, StoreError> {
        Ok(Located {
            name: V1_BRANCH_REF.to_owned(),
            tip: self.tip()?,
        })
    }

    fn root_of(&self, commit: Option<&Commit<'r>>) -> Result<Option<Tree<'r>>, StoreError> {
        tree_of_commit(self.repo, commit)
    }

    /// The checkpoint's subtree inside a branch commit.
    fn subtree_in(
        &self,
        commit: Option<&Commit<'r>>,
        id: &CheckpointId,
    ) -> Result<Option<Tree<'r>>, StoreError> {
        let Some(root) = self.root_of(commit)? else {
            return Ok(None);
        };
        match root.get_path(&id.v1_path()) {
            Ok(e) if e.kind() == Some(ObjectKind::Tree) => self
                .repo
                .objects()
                .find_tree(e.id())
                .map(Some)
                .map_err(git_err("read checkpoint subtree")),
            Ok(_) => Ok(None),
            Err(e) if e.is_not_found() => Ok(None),
            Err(e) => Err(git_err("look up checkpoint subtree")(e)),
        }
    }

    /// In a partial clone, fetches every object of the checkpoints of `ids` the branch (or a
    /// remote's copy) holds that the repository lacks (their transcripts included), in one batch:
    /// what a command that reads them all (`blame`) asks first. Nothing to do in any other
    /// repository.
    pub fn complete(&self, ids: &[CheckpointId]) -> Result<(), StoreError> {
        let Some(promised) = self.promised() else {
            return Ok(());
        };
        let mut subtrees = Vec::new();
        let mut found = std::collections::HashSet::new();
        for source in self.sources()? {
            promised.ensure_trees(&source.name, source.commit.tree_id())?;
            for id in ids {
                if found.contains(id) {
                    continue;
                }
                if let Some(sub) = self.subtree_in(Some(&source.commit), id)? {
                    found.insert(id.clone());
                    subtrees.push((source.name.clone(), sub.id()));
                }
            }
        }
        Ok(promised.ensure_many(&subtrees, Wanted::All)?)
    }

    /// The repository's own promisor remote, when it is a partial clone.
    fn promised(&self) -> Option<&dyn Complete> {
        self.promised.as_deref()
    }

    /// Makes reads complete the objects they need through `complete` (the repository is a
    /// partial clone).
    pub fn set_promised(&mut self, complete: Box<dyn Complete + 'r>) {
        self.promised = Some(complete);
    }

    /// Replaces the checkpoint subtree at `id[:2]/id[2:]`, leaving every other entry as it is.
    fn splice(
        &self,
        commit: Option<&Commit<'r>>,
        id: &CheckpointId,
        change: Change,
    ) -> Result<Change, StoreError> {
        let git = self.repo.objects();
        let root = match self.root_of(commit)? {
            Some(t) => t,
            None => {
                let empty = git
                    .tree_builder(None)
                    .and_then(|mut b| b.write())
                    .map_err(git_err("write empty tree"))?;
                git.find_tree(empty).map_err(git_err("read empty tree"))?
            }
        };
        let mut update = TreeEdits::default();
        update.put_tree(&id.v1_path(), change.tree);
        let tree = git
            .write_edits(&root, &mut update)
            .map_err(git_err("splice checkpoint into v1 tree"))?;
        Ok(Change {
            tree,
            message: change.message,
        })
    }

    /// The checkpoint from the first source that holds it, without fetching.
    pub(crate) fn read_held(&self, id: &CheckpointId) -> Result<Option<Checkpoint>, StoreError> {
        for s in self.sources()? {
            if let Some(cp) = self.checkpoint_in(&s.name, &s.commit, id)? {
                return Ok(Some(cp));
            }
        }
        Ok(None)
    }

    fn checkpoint_in(
        &self,
        ref_name: &str,
        commit: &Commit<'r>,
        id: &CheckpointId,
    ) -> Result<Option<Checkpoint>, StoreError> {
        let tip = commit.id();
        // In a partial clone the branch's trees (with `--filter=tree:0`) and the checkpoint's
        // documents may be missing: fetched first, the documents of this checkpoint only.
        let promised = self.promised();
        if let Some(complete) = promised {
            complete.ensure_trees(ref_name, commit.tree_id())?;
        }
        let Some(sub) = self.subtree_in(Some(commit), id)? else {
            return Ok(None);
        };
        if let Some(complete) = promised {
            complete.ensure_for_path(ref_name, sub.id(), None)?;
        }
        let Some(docs) = tree::read_documents(
            self.repo.objects(),
            &sub,
            id,
            &self.repo.settings().limits(),
        )?
        else {
            return Ok(None);
        };
        let (summary, sessions, session_dirs, listed) = docs.into_read();
        Ok(Some(Checkpoint {
            id: id.clone(),
            store: StoreKind::GitBranch,
            ref_name: ref_name.to_owned(),
            commit: tip.to_string(),
            tree: sub.id().to_string(),
            summary,
            sessions,
            session_dirs,
            listed,
        }))
    }

    /// Every `<xx>/<rest>` directory of a branch commit that is a valid checkpoint ID, with the
    /// subtree's object ID.
    /// Every checkpoint of this store whose root's `linked_commits` names commits (or holds
    /// entries it refuses), one per ID as [`CheckpointReader::list`] picks it, read through the
    /// link index ([`link_index`]): only the roots of checkpoints that changed since the last
    /// command are read.
    pub fn linked_commits(&self) -> Result<Vec<(CheckpointId, LinkedCommits)>, StoreError> {
        let mut seen = std::collections::HashSet::new();
        let mut subtrees = Vec::new();
        for Source { name, commit, .. } in self.sources()? {
            if let Some(Err(e)) = self
                .promised()
                .map(|c| c.ensure_trees(&name, commit.tree_id()))
            {
                log::warn!("{e}");
            }
            for (id, sub) in self.entries_at(&commit)? {
                if seen.insert(id.clone()) {
                    subtrees.push((id, sub));
                }
            }
        }
        Ok(link_index::linked(
            self.repo.objects(),
            &link_index::path(self.repo.common_dir()),
            &subtrees,
            &self.repo.settings().limits(),
        ))
    }

    fn entries_at(&self, commit: &Commit<'_>) -> Result<Vec<(CheckpointId, Oid)>, StoreError> {
        let root = commit.tree().map_err(git_err("read v1 tree"))?;
        Ok(v1_subtrees(self.repo, &root)?
            .into_iter()
            .filter_map(|e| CheckpointId::parse(&e.raw_id).ok().map(|id| (id, e.tree)))
            .collect())
    }
}

/// One `<xx>/<rest>` directory of a v1 tree, whether or not it names a valid ID.
pub(crate) struct V1Entry {
    /// `<xx>/<rest>`.
    pub path: String,
    /// `<xx><rest>`.
    pub raw_id: String,
    /// The subtree.
    pub tree: Oid,
}

/// Every `<xx>/<rest>` entry of a v1 root tree (two-character shard directories only), trees or
/// not.
pub(crate) fn v1_subtrees(repo: &Repo, root: &Tree<'_>) -> Result<Vec<V1Entry>, StoreError> {
    let mut out = Vec::new();
    for shard in root.iter() {
        let (Some(prefix), Some(ObjectKind::Tree)) = (shard.name(), shard.kind()) else {
            continue;
        };
        if prefix.len() != 2 {
            continue;
        }
        let sub = repo
            .objects()
            .find_tree(shard.id())
            .map_err(git_err("read v1 shard"))?;
        for e in sub.iter() {
            // Every entry, not only trees: a blob where a checkpoint belongs is reported by
            // list and migrate, never silently skipped.
            if let Some(rest) = e.name() {
                out.push(V1Entry {
                    path: format!("{prefix}/{rest}"),
                    raw_id: format!("{prefix}{rest}"),
                    tree: e.id(),
                });
            }
        }
    }
    Ok(out)
}

impl CheckpointReader for GitBranchStore<'_> {
    fn kind(&self) -> StoreKind {
        StoreKind::GitBranch
    }

    fn read(&self, id: &CheckpointId) -> Result<Option<Checkpoint>, StoreError> {
        if let Some(cp) = self.read_held(id)? {
            return Ok(Some(cp));
        }
        // A miss everywhere local: the remote may have moved on since the copies were last
        // updated (or there are none, as in a single-branch clone).
        match self.fetch_remote()? {
            true => self.read_held(id),
            false => Ok(None),
        }
    }

    fn files<'s>(&'s self, cp: &Checkpoint) -> Result<Box<dyn CheckpointFiles + 's>, StoreError> {
        let limits = self.repo.settings().limits();
        let tree = checkpoint_tree(self.repo.objects(), cp, &limits)?;
        let subtree = tree.id();
        let files = tree::TreeFiles::new(self.repo.objects(), tree, &cp.id, limits);
        // A checkpoints-v2 session keeps its raw transcript and hash in a generation.
        let files: Box<dyn CheckpointFiles + 's> = match archive::generations_of(&cp.ref_name) {
            Some(_) => Box::new(archive::V2Files::new(
                self.repo,
                &cp.ref_name,
                &cp.id,
                files,
            )),
            None => Box::new(files),
        };
        Ok(match self.promised() {
            Some(complete) => Box::new(CompletedFiles {
                complete,
                reference: cp.ref_name.clone(),
                tip: subtree,
                files,
            }),
            None => files,
        })
    }

    fn list(&self) -> Result<Vec<CheckpointInfo>, StoreError> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::new();
        for Source { name, commit, .. } in self.sources()? {
            let name = name.as_str();
            // In a partial clone, the documents of every checkpoint of this source are fetched
            // first, in one batch; a failure leaves their lines unreadable, saying why.
            let promised = self.promised();
            if let Some(Err(e)) = promised.map(|c| c.ensure_trees(name, commit.tree_id())) {
                log::warn!("{e}");
            }
            let entries = self.entries_at(&commit)?;
            if let Some(complete) = promised {
                let subtrees: Vec<(String, Oid)> = entries
                    .iter()
                    .filter(|(id, _)| !seen.contains(id))
                    .map(|(_, sub)| (name.to_owned(), *sub))
                    .collect();
                if let Err(e) = complete.ensure_many(&subtrees, Wanted::Documents) {
                    log::warn!("{e}");
                }
            }
            for (id, _) in entries {
                if !seen.insert(id.clone()) {
                    continue;
                }
                let unreadable =
                    |reason| CheckpointInfo::unreadable(id.clone(), StoreKind::GitBranch, reason);
                out.push(match self.checkpoint_in(name, &commit, &id) {
                    Ok(Some(cp)) => info_read(self.repo.objects(), &cp),
                    Ok(None) => unreadable(format!(
                        "{} on {name} is not a checkpoint (no tree with a metadata.json)",
                        id.v1_path()
                    )),
                    Err(e) => unreadable(crate::base::error::error_chain(&e)),
                });
            }
        }
        Ok(out)
    }

    fn ids(&self) -> Result<Vec<CheckpointId>, StoreError> {
        let mut ids = Vec::new();
        for s in self.sources()? {
            ids.extend(self.entries_at(&s.commit)?.into_iter().map(|(id, _)| id));
        }
        ids.sort();
        ids.dedup();
        Ok(ids)
    }

    fn history(&self, id: &CheckpointId) -> Result<Option<Vec<CommitInfo>>, StoreError> {
        let Some(tip) = self.tip_holding(id)? else {
            return Ok(None);
        };
        let path = id.v1_path();
        let subtree_id =
            |c: &Commit<'_>| -> Option<Oid> { c.tree().ok()?.get_path(&path).ok().map(|e| e.id()) };
        let mut out = Vec::new();
        let mut cur = Some(tip);
        while let Some(c) = cur {
            let parent = c.parents().next();
            let here = subtree_id(&c);
            if here.is_some() && here != parent.as_ref().and_then(&subtree_id) {
                out.push(commit_info(&c));
            }
            cur = parent;
        }
        Ok((!out.is_empty()).then_some(out))
    }

    /// The author of the newest commit whose subject is exactly `Checkpoint: <id>`, else of the
    /// oldest commit that changed the checkpoint since it last appeared on the branch.
    ///
    /// One first-parent walk from the tip `cp` was read from, which stops at the first
    /// subject that matches (the reference writes one per checkpoint, so a recent checkpoint is
    /// found in a few steps) or where the checkpoint is absent. Each step reads the commit and
    /// the root tree; the shard tree only when its entry changed. The answer is remembered for
    /// that tip ([`AuthorMemo`]), so the walk runs once per checkpoint until the branch moves.
    fn author(&self, cp: &Checkpoint) -> Result<Option<Identity>, StoreError> {
        let id = &cp.id;
        let read_from = self
            .repo
            .parse_oid(&cp.commit)
            .ok()
            .and_then(|oid| self.repo.objects().find_commit(oid).ok());
        let Some(tip) = read_from.map_or_else(|| self.tip_holding(id), |c| Ok(Some(c)))? else {
            return Ok(None);
        };
        let memo = AuthorMemo::in_common_dir(self.repo.common_dir());
        if let Some(known) = memo.get(tip.id(), id) {
            return Ok(Some(known));
        }
        let tip_id = tip.id();
        let found = self.walk_for_author(tip, id);
        if let Some(author) = &found {
            memo.put(tip_id, id, author);
        }
        Ok(found)
    }
}

impl<'r> GitBranchStore<'r> {
    /// The first tip of the branch's copies (the local branch, then the remote's) that holds
    /// checkpoint `id`.
    fn tip_holding(&self, id: &CheckpointId) -> Result<Option<Commit<'r>>, StoreError> {
        for s in self.sources()? {
            if self.subtree_in(Some(&s.commit), id)?.is_some() {
                return Ok(Some(s.commit));
            }
        }
        Ok(None)
    }

    /// The walk behind [`GitBranchStore::author`], from `tip`, which holds the checkpoint.
    fn walk_for_author(&self, tip: Commit<'r>, id: &CheckpointId) -> Option<Identity> {
        let subject = format!("Checkpoint: {id}");
        let git = self.repo.objects();
        let (shard, rest) = id.as_str().split_at(2);
        // The (shard tree, checkpoint subtree) ids at a commit; the subtree is looked up only
        // when the shard tree differs from `known`'s.
        let at =
            |c: &Commit<'_>, known: Option<(Oid, Option<Oid>)>| -> Option<(Oid, Option<Oid>)> {
                let shard_id = c.tree().ok()?.get_name(shard)?.id();
                if let Some((k, sub)) = known.filter(|(k, _)| *k == shard_id) {
                    return Some((k, sub));
                }
                let sub = git.find_tree(shard_id).ok()?.get_name(rest).map(|e| e.id());
                Some((shard_id, sub))
            };
        let mut here = at(&tip, None);
        let mut oldest = None;
        let mut cur = Some(tip);
        while let Some(c) = cur {
            if c.summary_bytes() == Some(subject.as_bytes()) {
                return Some(commit_info(&c).author);
            }
            let parent = c.parents().next();
            let there = parent.as_ref().and_then(|p| at(p, here));
            let sub_here = here.and_then(|(_, sub)| sub);
            let sub_there = there.and_then(|(_, sub)| sub);
            if sub_here.is_some() && sub_here != sub_there {
                oldest = Some(commit_info(&c).author);
            }
            if sub_there.is_none() {
                break;
            }
            here = there;
            cur = parent;
        }
        oldest
    }
}

/// Where one checkpoint lives in the git-branch store: a subtree of the v1 branch.
struct BranchLayout<'s, 'r> {
    store: &'s GitBranchStore<'r>,
    id: &'s CheckpointId,
}

impl<'r> Layout<'r> for BranchLayout<'_, 'r> {
    fn repo(&self) -> &'r Repo {
        self.store.repo
    }
    fn locate(&self) -> Result<Located, StoreError> {
        self.store.locate()
    }
    fn prefix(&self) -> String {
        format!("/{}", self.id.v1_path())
    }
    fn bootstrap(&self) -> Option<&'static str> {
        Some(BOOTSTRAP_MESSAGE)
    }
    fn subtree(&self, tip: Option<&Commit<'r>>) -> Result<Option<Tree<'r>>, StoreError> {
        self.store.subtree_in(tip, self.id)
    }
    fn place(&self, tip: Option<&Commit<'r>>, change: Change) -> Result<Change, StoreError> {
        self.store.splice(tip, self.id, change)
    }
}

impl CheckpointWriter for GitBranchStore<'_> {
    fn name(&self) -> &str {
        StoreKind::GitBranch.name()
    }

    fn write_session(&self, w: &SessionWrite) -> Result<WriteOutcome, StoreError> {
        let id = &w.checkpoint_id;
        if id.kind() == IdKind::Ulid && !self.accept_ulids {
            return Err(StoreError::UlidOnBranch { id: id.clone() });
        }
        write_via(&BranchLayout { store: self, id }, w)
    }

    fn backfill(&self, b: &Backfill) -> Result<WriteOutcome, StoreError> {
        backfill_via(
            &BranchLayout {
                store: self,
                id: b.id(),
            },
            b,
        )
    }
}
