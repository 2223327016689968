//! What `show`, `cat` and `log` name: a checkpoint ID or unique prefix, else a commit-ish whose
//! `Entire-Checkpoint:` trailers (and the rewrite map), and the checkpoints that name it in
//! their `linked_commits` ([`crate::ops::side_links`]), link it to checkpoints.

use crate::base::id::CheckpointId;
use crate::git::repo::{Repo, RepoError};
use crate::ops::rewrites::{self, RewriteMap};
use crate::ops::side_links::SideLinks;
use crate::store::{Checkpoint, StoreError};
use crate::topology::{Topology, TopologyError};

/// The checkpoints `target` names: the checkpoint of an ID or unique prefix, else those the
/// commit `target` links that can be read. `notice` gets the warnings (a rewrite map that cannot
/// be read, malformed trailers, each linked checkpoint found nowhere while another was found).
/// Not found (exit 3): an ID no store holds and no commit names, a name that is neither, a
/// commit without trailers that no checkpoint names, a commit none of whose linked checkpoints
/// is found.
pub fn checkpoints(
    repo: &Repo,
    topo: &Topology<'_>,
    target: &str,
    notice: impl Fn(&str),
) -> Result<Vec<Checkpoint>, TopologyError> {
    // Every linked checkpoint that can be read; those found nowhere are named through `notice`,
    // and only when none is found is the commit's link "not found".
    let by_trailers = |ids: Vec<CheckpointId>| -> Result<Vec<Checkpoint>, TopologyError> {
        // Those missing here are asked for together: one fetch, not one per trailer.
        topo.prefetch(&ids)?;
        let mut found = Vec::new();
        let mut absent = Vec::new();
        for id in &ids {
            match topo.get(id) {
                Ok(cp) => found.push(cp),
                Err(e) if e.is_not_found() => absent.push(e),
                Err(e) => return Err(e.into()),
            }
        }
        let first = match found.is_empty() {
            true => Some(absent.remove(0)),
            false => None,
        };
        for e in &absent {
            notice(&format!("{target}: {e}"));
        }
        // `first` is one of `absent`: not found anywhere this command looked.
        match (first, topo.fetches_from()) {
            (Some(error), Some(remote)) => Err(TopologyError::LinkedButNotPushed {
                rev: target.to_owned(),
                remote,
                awaiting: crate::remote::checkpoint_remote::awaiting_approval(repo)
                    .map(|a| a.remote),
                error: Box::new(error),
            }),
            (Some(e), None) => Err(e.into()),
            (None, _) => Ok(found),
        }
    };
    match topo.resolve(target) {
        Ok(id) => {
            if let Some(cp) = topo.read(&id)? {
                return Ok(vec![cp]);
            }
            if let Some(ids) = commit_ids(repo, topo, target, &notice)? {
                return by_trailers(ids);
            }
            Err(StoreError::NotFoundAnywhere {
                places: topo.places(&id).join(", "),
                id,
            }
            .into())
        }
        Err(TopologyError::NoMatch { .. } | TopologyError::InvalidId(_)) => {
            match commit_ids(repo, topo, target, &notice)? {
                Some(ids) => by_trailers(ids),
                // A full object ID of the other format is named as such.
                None => match repo.foreign_oid(target) {
                    Some(e) => Err(StoreError::Repo(RepoError::Oid(e)).into()),
                    None => Err(TopologyError::NoMatch {
                        name: target.to_owned(),
                        why: Some("neither a checkpoint ID nor a commit"),
                    }),
                },
            }
        }
        Err(e) => Err(e),
    }
}

/// The one checkpoint `target` names, as [`checkpoints`]; a commit that links several is a
/// usage error naming them ([`TopologyError::SeveralLinked`]).
pub fn checkpoint(
    repo: &Repo,
    topo: &Topology<'_>,
    target: &str,
    notice: impl Fn(&str),
) -> Result<Checkpoint, TopologyError> {
    let mut found = checkpoints(repo, topo, target, notice)?;
    if found.len() == 1 {
        return Ok(found.remove(0));
    }
    Err(TopologyError::SeveralLinked {
        rev: target.to_owned(),
        ids: found.iter().map(|cp| cp.id.to_string()).collect(),
    })
}

/// The checkpoints the commit `rev` links: its trailers, the rewrite map's, then the
/// checkpoints that name it; `None` when `rev` names no commit.
fn commit_ids(
    repo: &Repo,
    topo: &Topology<'_>,
    rev: &str,
    notice: &impl Fn(&str),
) -> Result<Option<Vec<CheckpointId>>, TopologyError> {
    let map = RewriteMap::load(repo)
        .map_err(|e| notice(&crate::base::error::error_chain(&e)))
        .ok();
    let Some(mut links) = rewrites::commit_links(repo, map.as_ref(), rev) else {
        return Ok(None);
    };
    // A listing that fails loses only the checkpoint-side links: say so and use the trailers.
    match SideLinks::load(topo) {
        Ok(side) => {
            for refused in &side.refused {
                notice(refused);
            }
            side.add_to(&links.sha, &mut links.ids);
        }
        Err(e) => notice(&format!(
            "{rev}: the checkpoints that name it could not be listed: {}",
            crate::base::error::error_chain(&e)
        )),
    }
    for tok in &links.malformed {
        notice(&format!(
            "{rev}: ignoring malformed Entire-Checkpoint trailer {tok:?}"
        ));
    }
    if let Some(ignored) = &links.ignored {
        notice(&format!("{rev}: {ignored}"));
    }
    if links.ids.is_empty() {
        return Err(TopologyError::NoMatch {
            name: rev.to_owned(),
            why: Some("the commit has no Entire-Checkpoint trailer and no checkpoint names it"),
        });
    }
    Ok(Some(links.ids))
}
