//! Checkpoint-side commit links: which checkpoints name a commit in their root's
//! `linked_commits` ([`crate::model::links`]), the links a commit has without carrying an
//! `Entire-Checkpoint` trailer (a squash merge drops trailers; `link` and the reference's repair
//! write such links). The commits of a checkpoint are its trailers ∪ these links, so `show
//! <commit>`, `list <range>`, `blame`, `why` and `doctor` add them to what a commit's message
//! (and the rewrite map) says.
//!
//! The links are read through caches, never by reading every checkpoint per command: the
//! git-refs store's through its summary index (`store::summary`, which records each
//! checkpoint's links), the v1 branch's through its link index (`store::link_index`).

use std::collections::HashMap;

use crate::base::id::CheckpointId;
use crate::git::repo::Repo;
use crate::store::{Backfill, StoreError};
use crate::topology::{Listing, Topology, TopologyError};

/// Every checkpoint-side link of the checkpoints held here, by commit.
#[derive(Debug, Default)]
pub struct SideLinks {
    by_commit: HashMap<String, Vec<CheckpointId>>,
    /// One diagnostic per `linked_commits` entry skipped (not a full object ID).
    pub refused: Vec<String>,
}

impl SideLinks {
    /// The links of every checkpoint `listing` shows.
    pub fn of_listing(listing: &Listing) -> SideLinks {
        let mut out = SideLinks::default();
        for line in listing.lines() {
            out.add(line.id, &line.linked_commits, &line.refused_links);
        }
        out
    }

    /// The links of every checkpoint held here: the git-refs store's through its summary index,
    /// the v1 branch's through its link index (`store::link_index`).
    pub fn load(topo: &Topology<'_>) -> Result<SideLinks, StoreError> {
        SideLinks::read(topo, true)
    }

    /// [`SideLinks::load`] that leaves the summary index as it is, damaged or stale (for
    /// `doctor`, which reports it and mends it only with `--fix`).
    pub fn load_unwritten(topo: &Topology<'_>) -> Result<SideLinks, StoreError> {
        SideLinks::read(topo, false)
    }

    fn read(topo: &Topology<'_>, write_index: bool) -> Result<SideLinks, StoreError> {
        let mut out = SideLinks::default();
        let store = topo.refs_store();
        let refs = match write_index {
            true => store.list_indexed()?,
            false => store.list_indexed_unwritten()?,
        };
        for i in 0..refs.len() {
            let line = refs.line(i);
            out.add(line.id, &line.linked_commits, &line.refused_links);
        }
        for (id, links) in topo.branch_store().linked_commits()? {
            let shas: Vec<&str> = links.shas.iter().map(String::as_str).collect();
            let refused: Vec<&str> = links.refused.iter().map(String::as_str).collect();
            out.add(id.as_str(), &shas, &refused);
        }
        Ok(out)
    }

    /// Records that checkpoint `id` names each of `shas`, and refused `refused`.
    fn add(&mut self, id: &str, shas: &[&str], refused: &[&str]) {
        let Ok(id) = CheckpointId::parse(id) else {
            return;
        };
        for entry in refused {
            self.refused
                .push(format!("checkpoint {id}: ignoring a link: {entry}"));
        }
        for sha in shas {
            let ids = self.by_commit.entry((*sha).to_owned()).or_default();
            if !ids.contains(&id) {
                ids.push(id.clone());
            }
        }
    }

    /// The checkpoints that name `commit` (a full object ID), in ID order.
    pub fn get(&self, commit: &str) -> &[CheckpointId] {
        self.by_commit.get(commit).map_or(&[], Vec::as_slice)
    }

    /// Appends to `ids` (a commit's links through its message) each checkpoint that names
    /// `commit` and is not there yet: trailers first, then these.
    pub fn add_to(&self, commit: &str, ids: &mut Vec<CheckpointId>) {
        for id in self.get(commit) {
            if !ids.contains(id) {
                ids.push(id.clone());
            }
        }
    }
}

/// What [`link`] did.
#[derive(Debug)]
pub struct Linked {
    /// The commit linked (its full object ID).
    pub commit: String,
    /// The checkpoint it was linked to.
    pub id: CheckpointId,
    /// Whether the checkpoint changed (it did not when it named the commit already).
    pub changed: bool,
    /// What the mirrors said, and a failed enqueue.
    pub warnings: Vec<String>,
}

/// `link <commit> <checkpoint>`: adds the commit `commit` names (any commit-ish) to the root
/// `linked_commits` of the checkpoint `checkpoint` names (an ID or unique prefix), in the
/// reference's format (`{"sha": ...}`, after the entries there, none dropped): a checkpoint
/// update written as a backfill is (the primary, then the mirrors, queued for push). Linking a
/// commit the checkpoint names already changes nothing. Not found (exit 3): a name that is no
/// commit here, a checkpoint held nowhere.
pub fn link(
    repo: &Repo,
    topo: &Topology<'_>,
    commit: &str,
    checkpoint: &str,
) -> Result<Linked, TopologyError> {
    let (oid, _) = repo
        .commit_and_message(commit)
        .ok_or_else(|| TopologyError::NoMatch {
            name: commit.to_owned(),
            why: Some("not a commit of this repository"),
        })?;
    let id = topo.resolve(checkpoint)?;
    let commit = oid.to_string();
    let report = topo.backfill(&Backfill::Links {
        id: id.clone(),
        commits: vec![commit.clone()],
    })?;
    Ok(Linked {
        commit,
        id,
        changed: report.outcome.changed,
        warnings: report.warnings(),
    })
}
