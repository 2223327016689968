//! Replaying local commits on top of the remote's: the merge step of each commit, for a
//! checkpoint ref or for the v1 branch.

use std::collections::HashMap;

use crate::git::objects::Oid;

use crate::base::id::CheckpointId;
use crate::git::repo::Repo;
use crate::store::merge;
use crate::store::StoreError;

/// The merged tree of one replayed commit: given the local commit and the current tip's tree.
pub(super) type MergeStep<'a> = dyn Fn(
        &crate::git::objects::Commit<'_>,
        &crate::git::objects::Tree<'_>,
    ) -> Result<(Oid, Vec<String>), StoreError>
    + 'a;

/// Replays the local commits since the merge base (all of them when the histories are
/// disconnected) on top of `remote`, each tree merged with the current tip by `step`. Commits
/// whose merge changes nothing are dropped (data-less ones, like an empty bootstrap). Returns
/// the new tip, a descendant of `remote`, and the merge decisions.
pub(super) fn replay(
    repo: &Repo,
    local: Oid,
    remote: Oid,
    step: &MergeStep<'_>,
) -> Result<(Oid, Vec<String>), StoreError> {
    let git = repo.objects();
    let err = crate::store::git_err;
    let base = repo.merge_base(local, remote);
    if base == Some(local) {
        return Ok((remote, Vec::new()));
    }
    let mut chain = Vec::new();
    let mut cur = Some(git.find_commit(local).map_err(err("read local tip"))?);
    while let Some(c) = cur {
        if Some(c.id()) == base {
            break;
        }
        cur = c.parents().next();
        chain.push(c);
    }
    chain.reverse();
    let mut tip = git.find_commit(remote).map_err(err("read remote tip"))?;
    let mut notes = Vec::new();
    let committer = repo.signature(&repo.identity("COMMITTER"), "COMMITTER")?;
    for c in chain {
        let theirs = tip.tree().map_err(err("read remote tree"))?;
        let (merged, step_notes) = step(&c, &theirs)?;
        notes.extend(step_notes);
        if merged == theirs.id() {
            continue;
        }
        let tree = git.find_tree(merged).map_err(err("read merged tree"))?;
        let message = String::from_utf8_lossy(c.message_bytes()).into_owned();
        let oid = git
            .commit(&c.author_signature(), &committer, &message, &tree, &[&tip])
            .map_err(err("write replayed commit"))?;
        tip = git.find_commit(oid).map_err(err("read replayed commit"))?;
    }
    notes.dedup();
    Ok((tip.id(), notes))
}

/// A replay step for one checkpoint ref: the whole tree is the checkpoint.
pub(super) fn checkpoint_step<'a>(
    repo: &'a Repo,
    id: &'a CheckpointId,
) -> impl Fn(
    &crate::git::objects::Commit<'_>,
    &crate::git::objects::Tree<'_>,
) -> Result<(Oid, Vec<String>), StoreError>
       + 'a {
    move |c, theirs| {
        let ours = c.tree().map_err(crate::store::git_err("read local tree"))?;
        let m = merge::merge_trees(
            repo.objects(),
            id,
            &ours,
            theirs,
            "",
            &repo.settings().limits(),
        )?;
        Ok((m.tree, m.notes))
    }
}

/// A replay step for the v1 branch: every checkpoint subtree the local commit changed is merged
/// into the tip's tree (a deletion is never replayed: nothing is dropped).
pub(super) fn v1_step(
    repo: &Repo,
) -> impl Fn(
    &crate::git::objects::Commit<'_>,
    &crate::git::objects::Tree<'_>,
) -> Result<(Oid, Vec<String>), StoreError>
       + '_ {
    use crate::store::branch::v1_subtrees;
    move |c, theirs| {
        let git = repo.objects();
        let err = crate::store::git_err;
        let ours = c.tree().map_err(err("read local tree"))?;
        let before: HashMap<String, Oid> = match c.parents().next() {
            Some(p) => v1_subtrees(repo, &p.tree().map_err(err("read parent tree"))?)?
                .into_iter()
                .map(|e| (e.path, e.tree))
                .collect(),
            None => HashMap::new(),
        };
        let mut update = crate::git::objects::TreeEdits::default();
        let mut notes = Vec::new();
        let mut changed = false;
        for e in v1_subtrees(repo, &ours)? {
            if before.get(&e.path) == Some(&e.tree) {
                continue;
            }
            let Ok(id) = CheckpointId::parse(&e.raw_id) else {
                continue;
            };
            let merged = match theirs.get_path(&e.path) {
                Ok(r) if r.id() != e.tree => {
                    let local = git
                        .find_tree(e.tree)
                        .map_err(err("read local checkpoint"))?;
                    let remote = git
                        .find_tree(r.id())
                        .map_err(err("read remote checkpoint"))?;
                    let m = merge::merge_trees(
                        git,
                        &id,
                        &local,
                        &remote,
                        &format!("/{}", id.v1_path()),
                        &repo.settings().limits(),
                    )?;
                    notes.extend(m.notes);
                    m.tree
                }
                Ok(_) => continue,
                Err(_) => e.tree,
            };
            update.put_tree(&e.path, merged);
            changed = true;
        }
        if !changed {
            return Ok((theirs.id(), notes));
        }
        let tree = git
            .write_edits(theirs, &mut update)
            .map_err(err("write merged v1 tree"))?;
        Ok((tree, notes))
    }
}
