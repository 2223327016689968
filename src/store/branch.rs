//! The legacy git-branch store: every checkpoint is a subtree of the one branch
//! `refs/heads/entire/checkpoints/v1`, at `id[:2]/id[2:]`. Each write is one commit on the
//! branch that replaces only that subtree; the branch starts as an empty-tree orphan commit
//! `Initialize sessions branch`.

use std::path::Path;

use git2::{build::TreeUpdateBuilder, FileMode, ObjectType, Oid};

use crate::id::{CheckpointId, IdKind};
use crate::publish::{self, Located};
use crate::repo::{Identity, Repo};
use crate::store::refs::{checkpoint_tree, commit_info, info_of, tree_of_commit};
use crate::store::{
    backfill_via, git_err, write_via, Backfill, Checkpoint, CheckpointInfo, CheckpointReader,
    CheckpointWriter, CommitInfo, Layout, SessionWrite, StoreError, StoreKind, WriteOutcome,
};
use crate::tree::{self, Change};

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
}

impl<'r> GitBranchStore<'r> {
    /// The store as a primary: ULID checkpoints are refused, since readers route ULIDs to
    /// git-refs and would never find them here.
    pub fn primary(repo: &'r Repo) -> Self {
        GitBranchStore {
            repo,
            accept_ulids: false,
        }
    }

    /// The store as a mirror of a git-refs primary, which legitimately receives ULIDs.
    pub fn mirror(repo: &'r Repo) -> Self {
        GitBranchStore {
            repo,
            accept_ulids: true,
        }
    }

    /// The branch tip, if the branch exists.
    pub fn tip(&self) -> Result<Option<Oid>, StoreError> {
        publish::tip_of(self.repo, V1_BRANCH_REF)
    }

    fn locate(&self) -> Result<Located, StoreError> {
        Ok(Located {
            name: V1_BRANCH_REF.to_owned(),
            tip: self.tip()?,
        })
    }

    fn root_of(
        &self,
        commit: Option<&git2::Commit<'r>>,
    ) -> Result<Option<git2::Tree<'r>>, StoreError> {
        tree_of_commit(self.repo, commit)
    }

    /// The checkpoint's subtree inside a branch commit.
    fn subtree_in(
        &self,
        commit: Option<&git2::Commit<'r>>,
        id: &CheckpointId,
    ) -> Result<Option<git2::Tree<'r>>, StoreError> {
        let Some(root) = self.root_of(commit)? else {
            return Ok(None);
        };
        match root.get_path(Path::new(&id.v1_path())) {
            Ok(e) if e.kind() == Some(ObjectType::Tree) => self
                .repo
                .git
                .find_tree(e.id())
                .map(Some)
                .map_err(git_err("read checkpoint subtree")),
            Ok(_) => Ok(None),
            Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(e) => Err(git_err("look up checkpoint subtree")(e)),
        }
    }

    /// Replaces the checkpoint subtree at `id[:2]/id[2:]`, leaving every other entry as it is.
    fn splice(
        &self,
        commit: Option<&git2::Commit<'r>>,
        id: &CheckpointId,
        change: Change,
    ) -> Result<Change, StoreError> {
        let git = &self.repo.git;
        let root = match self.root_of(commit)? {
            Some(t) => t,
            None => {
                let empty = git
                    .treebuilder(None)
                    .and_then(|b| b.write())
                    .map_err(git_err("write empty tree"))?;
                git.find_tree(empty).map_err(git_err("read empty tree"))?
            }
        };
        let mut update = TreeUpdateBuilder::new();
        update.upsert(id.v1_path(), change.tree, FileMode::Tree);
        let tree = update
            .create_updated(git, &root)
            .map_err(git_err("splice checkpoint into v1 tree"))?;
        Ok(Change {
            tree,
            message: change.message,
        })
    }

    fn checkpoint_in(
        &self,
        tip: Oid,
        commit: &git2::Commit<'r>,
        id: &CheckpointId,
    ) -> Result<Option<Checkpoint>, StoreError> {
        let Some(sub) = self.subtree_in(Some(commit), id)? else {
            return Ok(None);
        };
        let Some(docs) = tree::read_documents(&self.repo.git, &sub, id)? else {
            return Ok(None);
        };
        Ok(Some(Checkpoint {
            id: id.clone(),
            store: StoreKind::GitBranch,
            ref_name: V1_BRANCH_REF.to_owned(),
            commit: tip.to_string(),
            tree: sub.id().to_string(),
            summary: docs.summary,
            sessions: docs.sessions,
            session_dirs: docs.dirs,
        }))
    }

    fn tip_commit(&self) -> Result<Option<(Oid, git2::Commit<'r>)>, StoreError> {
        let Some(tip) = self.tip()? else {
            return Ok(None);
        };
        let c = self
            .repo
            .git
            .find_commit(tip)
            .map_err(git_err("read v1 tip"))?;
        Ok(Some((tip, c)))
    }

    /// Every `<xx>/<rest>` directory of the branch tip that is a valid checkpoint ID, with the
    /// subtree's object ID.
    pub(crate) fn entries(&self) -> Result<Vec<(CheckpointId, Oid)>, StoreError> {
        let Some((_, commit)) = self.tip_commit()? else {
            return Ok(Vec::new());
        };
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

/// Every `<xx>/<rest>` directory of a v1 root tree (two-character shard directories only).
pub(crate) fn v1_subtrees(repo: &Repo, root: &git2::Tree<'_>) -> Result<Vec<V1Entry>, StoreError> {
    let mut out = Vec::new();
    for shard in root.iter() {
        let (Ok(prefix), Some(ObjectType::Tree)) = (shard.name(), shard.kind()) else {
            continue;
        };
        if prefix.len() != 2 {
            continue;
        }
        let sub = repo
            .git
            .find_tree(shard.id())
            .map_err(git_err("read v1 shard"))?;
        for e in sub.iter() {
            if let (Ok(rest), Some(ObjectType::Tree)) = (e.name(), e.kind()) {
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
        match self.tip_commit()? {
            None => Ok(None),
            Some((tip, c)) => self.checkpoint_in(tip, &c, id),
        }
    }

    fn read_file(&self, cp: &Checkpoint, path: &str) -> Result<Vec<u8>, StoreError> {
        let tree = checkpoint_tree(self.repo, cp)?;
        tree::read_path(&self.repo.git, &tree, &cp.id, path)
    }

    fn list(&self) -> Result<Vec<CheckpointInfo>, StoreError> {
        let Some((tip, commit)) = self.tip_commit()? else {
            return Ok(Vec::new());
        };
        let mut out = Vec::new();
        for (id, _) in self.entries()? {
            let unreadable =
                |reason| CheckpointInfo::unreadable(id.clone(), StoreKind::GitBranch, reason);
            out.push(match self.checkpoint_in(tip, &commit, &id) {
                Ok(Some(cp)) => info_of(&cp),
                Ok(None) => unreadable(format!(
                    "{} on {V1_BRANCH_REF} is not a checkpoint (no tree with a metadata.json)",
                    id.v1_path()
                )),
                Err(e) => unreadable(crate::exit::error_chain(&e)),
            });
        }
        Ok(out)
    }

    fn ids(&self) -> Result<Vec<CheckpointId>, StoreError> {
        Ok(self.entries()?.into_iter().map(|(id, _)| id).collect())
    }

    fn history(&self, id: &CheckpointId) -> Result<Option<Vec<CommitInfo>>, StoreError> {
        let Some((_, tip)) = self.tip_commit()? else {
            return Ok(None);
        };
        let path = id.v1_path();
        let subtree_id = |c: &git2::Commit<'_>| -> Option<Oid> {
            c.tree()
                .ok()?
                .get_path(Path::new(&path))
                .ok()
                .map(|e| e.id())
        };
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

    fn author(&self, id: &CheckpointId) -> Result<Option<Identity>, StoreError> {
        // The author of the newest commit whose subject is exactly `Checkpoint: <id>`.
        let Some(history) = self.history(id)? else {
            return Ok(None);
        };
        let subject = format!("Checkpoint: {id}");
        Ok(history
            .iter()
            .find(|c| c.subject == subject)
            .or(history.last())
            .map(|c| c.author.clone()))
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
    fn subtree(
        &self,
        tip: Option<&git2::Commit<'r>>,
    ) -> Result<Option<git2::Tree<'r>>, StoreError> {
        self.store.subtree_in(tip, self.id)
    }
    fn place(&self, tip: Option<&git2::Commit<'r>>, change: Change) -> Result<Change, StoreError> {
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
