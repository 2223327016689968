//! The checks of the checkpoint namespace (`refs/entire/checkpoints/`) and what sits beside it:
//! both case spellings of one checkpoint (`case-duplicate`, merged into one ref by `--fix`),
//! refs that are no checkpoint refs (`foreign-ref`, `malformed-ref`), checkpoints whose
//! documents are unreadable or list fewer sessions than their tree holds (`corrupt-checkpoint`,
//! `unlisted-sessions`), and another tool's policy ref (`policy-ref`).

use std::collections::{BTreeMap, HashSet};

use crate::git::objects::Oid;

use super::{git_err, scan, Code, Command, Context, DoctorError, Finding};
use crate::base::id::CheckpointId;
use crate::git::refname::{CheckpointRef, ForeignRef};
use crate::git::refs::RefEdit;
use crate::git::repo::Repo;
use crate::store::branch::V1_BRANCH_REF;
use crate::store::queue::PushQueue;
use crate::store::StoreError;

/// The policy ref other tools write next to the checkpoints; tolerated and ignored.
pub const POLICY_REF: &str = "refs/entire/policies/checkpoint";

/// `case-duplicate`: both spellings of one ID. The fix keeps the canonical ref and makes the
/// other tip its ancestor (a fast-forward when one contains the other, else a merge commit whose
/// tree is the semantic merge of both), then deletes the other spelling by compare-and-swap:
/// every commit of both stays reachable from the canonical ref, which is queued for push.
pub(super) fn case_duplicates(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let ns = scan(cx.repo)?;
    let mut by_id: BTreeMap<CheckpointId, Vec<(CheckpointRef, Oid)>> = BTreeMap::new();
    for (r, oid) in ns.refs {
        by_id.entry(r.id().clone()).or_default().push((r, oid));
    }
    let mut out = Vec::new();
    for (id, spellings) in by_id {
        let (Some(canon), Some(folded)) = (
            spellings.iter().find(|(r, _)| r.is_canonical()),
            spellings.iter().find(|(r, _)| !r.is_canonical()),
        ) else {
            continue;
        };
        let finding = Finding::new(
            Code::CaseDuplicate,
            canon.0.name(),
            format!(
                "checkpoint {id} has two refs, {} and {}; reads see only the first",
                canon.0.name(),
                folded.0.name()
            ),
        )
        .repair(Command::ours(["doctor", "--fix"]));
        let fixed = cx.fix && collapse(cx.repo, &id, canon, folded)?;
        out.push(finding.fixed_if(fixed));
    }
    Ok(out)
}

/// Makes `folded`'s tip reachable from `canon`'s ref, then deletes `folded`. `Ok(false)` when a
/// ref moved meanwhile (nothing is lost; the next run tries again).
fn collapse(
    repo: &Repo,
    id: &CheckpointId,
    canon: &(CheckpointRef, Oid),
    folded: &(CheckpointRef, Oid),
) -> Result<bool, DoctorError> {
    let git = repo.objects();
    let (c, f) = (canon.1, folded.1);
    let target = if c == f || repo.is_descendant_of(c, f).unwrap_or(false) {
        c
    } else if repo.is_descendant_of(f, c).unwrap_or(false) {
        f
    } else {
        let ours = git.find_commit(c).map_err(git_err("read canonical tip"))?;
        let theirs = git.find_commit(f).map_err(git_err("read folded tip"))?;
        let merged = crate::store::merge::merge_trees(
            git,
            id,
            &ours.tree().map_err(git_err("read canonical tree"))?,
            &theirs.tree().map_err(git_err("read folded tree"))?,
            "",
            &repo.settings().limits(),
        )?;
        let tree = git
            .find_tree(merged.tree)
            .map_err(git_err("read merged tree"))?;
        let committer = repo.signature(&repo.identity("COMMITTER"), "COMMITTER")?;
        let author = repo.signature(&repo.identity("AUTHOR"), "AUTHOR")?;
        let message = format!(
            "Checkpoint: {id}\n\nMerge {} into {} (doctor --fix)\n",
            folded.0.name(),
            canon.0.name()
        );
        git.commit(&author, &committer, &message, &tree, &[&ours, &theirs])
            .map_err(git_err("write merge commit"))?
    };
    if target != c
        && repo
            .set_ref_matching(
                canon.0.name(),
                target,
                Some(c),
                "entire: doctor --fix: collapse case spellings",
            )
            .is_err()
    {
        return Ok(false);
    }
    let delete = RefEdit::Delete {
        name: folded.0.name().to_owned(),
        old: f,
    };
    let deleted = repo.update_refs(&[delete], "entire: doctor --fix: collapse case spellings");
    // On a case-insensitive filesystem the deletion can take the canonical loose file with it:
    // put the canonical ref back (its target is known) before anything else runs.
    if crate::store::publish::tip_of(repo, canon.0.name())?.is_none() {
        repo.set_ref_matching(
            canon.0.name(),
            target,
            None,
            "entire: doctor --fix: restore",
        )
        .map_err(StoreError::from)?;
    }
    match deleted {
        Ok(()) => {}
        Err(e) if e.lost_race() => return Ok(false),
        Err(e) => return Err(StoreError::from(e).into()),
    }
    PushQueue::in_common_dir(repo.common_dir()).enqueue(canon.0.name())?;
    Ok(true)
}

/// `foreign-ref` and `malformed-ref`: refs under the namespace that are not checkpoint refs.
/// A ref whose last component is a checkpoint ID but whose path is not `<shard>/<id>` is
/// malformed (a mistake); anything else is another design's layout or an ID format this version
/// does not know. Reported only; never touched (docs/decisions.md, "Foreign refs are never
/// touched").
pub(super) fn namespace(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    Ok(scan(cx.repo)?
        .foreign
        .into_iter()
        .map(|(name, why)| {
            let leaf = name.rsplit('/').next().unwrap_or_default();
            match why {
                None => Finding::new(
                    Code::MalformedRef,
                    &name,
                    "a symbolic ref in the checkpoint namespace; ignored, never pushed",
                ),
                Some(why @ ForeignRef::BadShape(_)) if CheckpointId::parse(leaf).is_ok() => {
                    Finding::new(
                        Code::MalformedRef,
                        &name,
                        format!("{why}; ignored, never pushed or deleted"),
                    )
                }
                Some(_) => Finding::new(
                    Code::ForeignRef,
                    &name,
                    "not a checkpoint ref of this version (another layout or ID format); ignored, never pushed or deleted",
                ),
            }
            .repair_if_malformed(&name)
        })
        .collect())
}

/// `corrupt-checkpoint`: the tip commit, its tree or the documents are unreadable, or the
/// summary names another checkpoint than the ref; and `unlisted-sessions` (information): the
/// tree holds session directories `sessions[]` does not list (readers show them after the
/// listed ones), for checkpoint refs and the v1 branch (local, and each remote's copy).
pub(super) fn corrupt_checkpoints(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let mut out = Vec::new();
    for (r, oid) in scan(cx.repo)?.refs {
        match checkpoint_problem(cx.repo, r.id(), oid) {
            Err(why) => out.push(Finding::new(Code::CorruptCheckpoint, r.name(), why)),
            Ok(unlisted) => out.extend(unlisted_finding(r.name(), r.id(), &unlisted)),
        }
    }
    // The v1 branch as reads see it: the local branch and each remote's copy (a fresh clone
    // has only the latter), each checkpoint version once.
    let branches = std::iter::once(V1_BRANCH_REF.to_owned()).chain(
        cx.repo
            .remote_names()
            .iter()
            .map(|r| format!("refs/remotes/{r}/entire/checkpoints/v1")),
    );
    let git = cx.repo.objects();
    let mut seen = HashSet::new();
    for branch in branches {
        let Some(tip) = crate::store::publish::tip_of(cx.repo, &branch)? else {
            continue;
        };
        let Ok(root) = git.find_commit(tip).and_then(|c| c.tree()) else {
            continue;
        };
        for e in crate::store::branch::v1_subtrees(cx.repo, &root)? {
            let (Ok(id), Ok(tree)) = (CheckpointId::parse(&e.raw_id), git.find_tree(e.tree)) else {
                continue;
            };
            if !seen.insert(e.tree) {
                continue;
            }
            let limits = cx.repo.settings().limits();
            if let Ok(Some(docs)) = crate::store::tree::read_documents(git, &tree, &id, &limits) {
                let dirs: Vec<String> = docs.unlisted.into_iter().map(|(d, _)| d).collect();
                out.extend(unlisted_finding(
                    &format!("{branch}:{}", e.path),
                    &id,
                    &dirs,
                ));
            }
        }
    }
    Ok(out)
}

/// The `unlisted-sessions` finding of checkpoint `id` (at `subject`) whose tree holds the
/// session directories `dirs` that `sessions[]` does not list, if any.
fn unlisted_finding(subject: &str, id: &CheckpointId, dirs: &[String]) -> Option<Finding> {
    (!dirs.is_empty()).then(|| {
        let names: Vec<String> = dirs.iter().map(|d| format!("{d}/")).collect();
        Finding::new(
            Code::UnlistedSessions,
            subject,
            format!(
                "checkpoint {id} holds session directories its sessions[] does not list ({}); they are shown after the listed sessions",
                names.join(", ")
            ),
        )
    })
}

/// Why the checkpoint ref of `id` at `tip` is corrupt (`Err`), else the session directories
/// its tree holds that `sessions[]` does not list.
fn checkpoint_problem(repo: &Repo, id: &CheckpointId, tip: Oid) -> Result<Vec<String>, String> {
    if let Some(why) = crate::store::refs::shape_problem(repo, id, tip) {
        return Err(why);
    }
    let git = repo.objects();
    let Ok(tree) = git.find_commit(tip).and_then(|c| c.tree()) else {
        return Ok(Vec::new());
    };
    let Ok(Some(docs)) =
        crate::store::tree::read_documents(git, &tree, id, &repo.settings().limits())
    else {
        return Ok(Vec::new());
    };
    if docs.summary.checkpoint_id != id.as_str() {
        return Err(format!(
            "metadata.json names checkpoint {:?}, the ref names {id}",
            docs.summary.checkpoint_id
        ));
    }
    Ok(docs.unlisted.into_iter().map(|(d, _)| d).collect())
}

/// `policy-ref`: informational.
pub(super) fn policy_ref(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    Ok(crate::store::publish::tip_of(cx.repo, POLICY_REF)?
        .map(|_| {
            Finding::new(
                Code::PolicyRef,
                POLICY_REF,
                "another tool's policy ref; tolerated and ignored",
            )
        })
        .into_iter()
        .collect())
}
