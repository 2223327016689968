//! Semantic merge of two versions of one checkpoint (docs/decisions.md, "Divergence is merged by
//! session").
//!
//! When a push is refused because the remote's ref moved on (the same checkpoint was written on
//! two machines), the local commits are replayed on top of the remote tip. Each replayed tree is
//! the union of both sides by `session_id` instead of the reference's file-level last writer
//! wins:
//! - the remote's sessions keep their slots, in order; sessions only the local side has are
//!   appended in local order, so the result is deterministic;
//! - a session on both sides keeps the version whose transcript extends the other (the longer
//!   one), else the local one; the choice is reported; a `summary` or an `entity_deltas.json`
//!   only the other version has is carried over;
//! - the root summary is recomputed from the merged sessions, its `linked_commits` the union of
//!   both sides' by sha (`model::links`); other root entries (`tasks/`) are unioned.
//!
//! The result is a fast-forward of the remote tip, so the retry is still not a forced push.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use crate::git::objects::Oid;
use crate::git::objects::{ObjectKind, Objects, Tree};
use crate::git::repo::LibGitError;

use crate::base::id::CheckpointId;
use crate::config::settings::Limits;
use crate::model::documents::{CheckpointSummary, SessionMetadata};
use crate::store::tree::{self, Documents};
use crate::store::CheckpointFiles;
use crate::store::{git_err, StoreError};

/// The file a companion tool of the reference writes into a session directory after the
/// session (docs/format.md): kept by a merge whichever version of the session wins.
const ENTITY_DELTAS: &str = "entity_deltas.json";

/// The merged tree and what was decided on the way.
pub(crate) struct Merged {
    /// The merged checkpoint tree.
    pub tree: Oid,
    /// One line per decision worth reporting (a session present on both sides that differed).
    pub notes: Vec<String>,
}

struct Slot {
    meta: Arc<SessionMetadata>,
    tree: Oid,
}

fn slots(root: &Tree<'_>, docs: &Documents) -> Result<Vec<Slot>, StoreError> {
    let mut out = Vec::new();
    for (meta, dir) in docs.sessions.iter().zip(&docs.dirs) {
        let entry = root
            .get_name(dir)
            .filter(|e| e.kind() == Some(ObjectKind::Tree))
            .ok_or_else(|| {
                git_err("read session slot")(LibGitError::new("slot directory missing"))
            })?;
        out.push(Slot {
            meta: Arc::clone(meta),
            tree: entry.id(),
        });
    }
    Ok(out)
}

fn transcript_of(
    repo: Objects<'_>,
    id: &CheckpointId,
    slot: Oid,
    limits: &Limits,
) -> Result<Vec<u8>, StoreError> {
    let t = tree::tree_within(repo, slot, id, "a session slot", limits)?;
    match tree::TreeFiles::new(repo, t, id, *limits).read(crate::model::transcript::TRANSCRIPT_FILE)
    {
        Err(StoreError::FileNotFound { .. }) => Ok(Vec::new()),
        other => other,
    }
}

/// Picks between the local and remote versions of one session.
fn choose(
    repo: Objects<'_>,
    id: &CheckpointId,
    local: Slot,
    remote: Slot,
    notes: &mut Vec<String>,
    limits: &Limits,
) -> Result<Slot, StoreError> {
    if local.tree == remote.tree {
        return Ok(local);
    }
    let lt = transcript_of(repo, id, local.tree, limits)?;
    let rt = transcript_of(repo, id, remote.tree, limits)?;
    let sid = local.meta.session_id.clone();
    let (mut keep, other, why) = if rt.len() > lt.len() && rt.starts_with(&lt) {
        (remote, local, "the remote transcript extends the local one")
    } else if lt.len() >= rt.len() && lt.starts_with(&rt) {
        (
            local,
            remote,
            "the local transcript extends or equals the remote one",
        )
    } else {
        (
            local,
            remote,
            "the transcripts diverged; kept the local one",
        )
    };
    notes.push(format!("checkpoint {id}: session {sid}: {why}"));
    let find = |t: Oid| repo.find_tree(t).map_err(git_err("read session slot"));
    // Carried from the other version when only it has them: a summary (e.g. a backfill there),
    // and the entity deltas a companion tool writes into the session after the fact.
    let carry_summary = keep.meta.summary.is_none() && other.meta.summary.is_some();
    let deltas = match find(keep.tree)?.get_name(ENTITY_DELTAS) {
        Some(_) => None,
        None => find(other.tree)?
            .get_name(ENTITY_DELTAS)
            .map(|e| (e.id(), e.filemode())),
    };
    if carry_summary || deltas.is_some() {
        let mut b = repo
            .tree_builder(Some(&find(keep.tree)?))
            .map_err(git_err("start session tree"))?;
        if carry_summary {
            Arc::make_mut(&mut keep.meta).summary = other.meta.summary.clone();
            tree::insert_blob(repo, &mut b, "metadata.json", &keep.meta.to_json())?;
        }
        if let Some((oid, mode)) = deltas {
            b.insert(ENTITY_DELTAS, oid, mode)
                .map_err(git_err("insert entity deltas"))?;
        }
        keep.tree = b.write().map_err(git_err("write session tree"))?;
    }
    Ok(keep)
}

fn is_slot_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_digit())
}

/// Merges two checkpoint trees of `id`; `prefix` is the `sessions[]` path prefix of the store
/// (`""` for git-refs, `/<id[:2]>/<id[2:]>` on the v1 branch). A side without a readable root summary contributes
/// nothing (data-less commits, e.g. an empty bootstrap, are dropped). Both sides are read within
/// `limits`; linear in the number of sessions.
pub(crate) fn merge_trees(
    repo: Objects<'_>,
    id: &CheckpointId,
    local: &Tree<'_>,
    remote: &Tree<'_>,
    prefix: &str,
    limits: &Limits,
) -> Result<Merged, StoreError> {
    let (Some(ld), Some(rd)) = (
        tree::read_documents(repo, local, id, limits)?,
        tree::read_documents(repo, remote, id, limits)?,
    ) else {
        let keep = if tree::read_documents(repo, local, id, limits)?.is_some() {
            local
        } else {
            remote
        };
        return Ok(Merged {
            tree: keep.id(),
            notes: Vec::new(),
        });
    };
    let mut notes = Vec::new();
    let mut local_slots: Vec<Option<Slot>> = slots(local, &ld)?.into_iter().map(Some).collect();
    // Where each session ID is among the local slots, first first.
    let mut by_session: HashMap<String, VecDeque<usize>> = HashMap::new();
    for (i, l) in local_slots.iter().enumerate() {
        if let Some(l) = l {
            by_session
                .entry(l.meta.session_id.clone())
                .or_default()
                .push_back(i);
        }
    }
    let mut merged: Vec<Slot> = Vec::new();
    for r in slots(remote, &rd)? {
        let pos = by_session
            .get_mut(&r.meta.session_id)
            .and_then(VecDeque::pop_front);
        match pos.and_then(|p| local_slots[p].take()) {
            Some(l) => merged.push(choose(repo, id, l, r, &mut notes, limits)?),
            None => merged.push(r),
        }
    }
    merged.extend(local_slots.into_iter().flatten());

    // Sticky root fields: set on either side survives; local wins where both set one; the
    // commit links of both are unioned by sha (the remote's first).
    let mut prev: CheckpointSummary = rd.summary.clone();
    for (k, v) in &ld.summary.extra {
        prev.extra.entry(k.clone()).or_insert_with(|| v.clone());
    }
    prev.union_links(ld.summary.link_entries());
    if ld.summary.combined_attribution.is_some() {
        prev.combined_attribution = ld.summary.combined_attribution.clone();
    }
    prev.has_review |= ld.summary.has_review;
    prev.has_investigation |= ld.summary.has_investigation;
    prev.imported |= ld.summary.imported;
    let metas: Vec<Arc<SessionMetadata>> = merged.iter().map(|s| Arc::clone(&s.meta)).collect();
    let mut entries = Vec::new();
    for (i, s) in merged.iter().enumerate() {
        let t = repo
            .find_tree(s.tree)
            .map_err(git_err("read session slot"))?;
        entries.push(tree::entry_paths_of(&t, prefix, &i.to_string()));
    }
    let summary = tree::recompute_summary(Some(&prev), id, &metas, entries, None);

    let mut root = repo
        .tree_builder(None)
        .map_err(git_err("start checkpoint tree"))?;
    // Other root entries: the remote's, then the local ones it lacks; `tasks/` unioned by name.
    for side in [remote, local] {
        for e in side.iter() {
            let Some(name) = e.name() else { continue };
            if name == "metadata.json" || is_slot_name(name) || root.get_id(name).is_some() {
                if name == "tasks" && side.id() == local.id() {
                    if let Some(existing) = root.get_id(name) {
                        let union = union_dirs(repo, existing, e.id())?;
                        root.insert(name, union, 0o040000)
                            .map_err(git_err("insert tasks"))?;
                    }
                }
                continue;
            }
            root.insert(name, e.id(), e.filemode())
                .map_err(git_err("insert entry"))?;
        }
    }
    tree::insert_blob(repo, &mut root, "metadata.json", &summary.to_json())?;
    for (i, s) in merged.iter().enumerate() {
        root.insert(&i.to_string(), s.tree, 0o040000)
            .map_err(git_err("insert slot"))?;
    }
    let tree = root.write().map_err(git_err("write merged tree"))?;
    Ok(Merged { tree, notes })
}

/// The union of two directories by entry name (entries of `a` win).
fn union_dirs(repo: Objects<'_>, a: Oid, b: Oid) -> Result<Oid, StoreError> {
    let a = repo.find_tree(a).map_err(git_err("read tree"))?;
    let b = repo.find_tree(b).map_err(git_err("read tree"))?;
    let mut out = repo.tree_builder(Some(&a)).map_err(git_err("start tree"))?;
    for e in b.iter() {
        let Some(name) = e.name() else { continue };
        if out.get_id(name).is_none() {
            out.insert(name, e.id(), e.filemode())
                .map_err(git_err("insert entry"))?;
        }
    }
    out.write().map_err(git_err("write tree"))
}
