//! Migration of the git-branch store, and of the layouts the reference archived, into git-refs
//! (docs/format.md, "Migration from the v1 branch").
//!
//! Every `<xx>/<rest>` checkpoint of the v1 branch (the local branch, else `origin`'s
//! remote-tracking branch), of the v1 store kept as one ref and of checkpoints v2 (each the
//! repository's own ref, else `origin`'s copy; v2 sessions gain their raw transcripts from the
//! generation that holds them) becomes the ref `RefName(<id>)` with the same subtree, except
//! that the root `metadata.json` loses `checkpoint_version` and its `sessions[]` paths lose the
//! `/<xx>/<rest>` prefix. An unchanged subtree is reused verbatim. A checkpoint whose ref already
//! has a commit with exactly that tree on its first-parent chain is up to date, so a re-run
//! writes nothing. A malformed subtree is skipped and reported; the rest still migrate.

use crate::git::objects::{Oid, Tree};

use crate::base::id::CheckpointId;
use crate::git::repo::{LibGitError, Repo};
use crate::git::url::Remote;
use crate::model::documents::CheckpointSummary;
use crate::remote::fetch::Fetcher;
use crate::store::archive;
use crate::store::branch::{v1_subtrees, V1_BRANCH_REF};
use crate::store::merge;
use crate::store::publish::{self, Located};
use crate::store::queue::QueueError;
use crate::store::refs::GitRefsStore;
use crate::store::tree::Change;
use crate::store::{git_err, StoreError};
use crate::topology::{Topology, TopologyError};

/// The remote-tracking branch read when the local v1 branch is absent.
pub const V1_TRACKING_REF: &str = "refs/remotes/origin/entire/checkpoints/v1";

/// Why a migration stopped (a checkpoint that cannot be migrated is skipped and reported
/// instead, see [`MigrateReport::skipped`]).
#[derive(Debug, thiserror::Error)]
pub enum MigrateError {
    /// The settings forbid writing checkpoints.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// Reading the branch or writing a ref failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The migrated refs could not be queued for push; nothing else would announce them.
    #[error("queue migrated refs")]
    Queue(#[source] QueueError),
}

impl crate::base::error::ExitStatus for MigrateError {
    fn exit_code(&self) -> i32 {
        match self {
            MigrateError::Topology(e) => e.exit_code(),
            MigrateError::Store(e) => e.exit_code(),
            MigrateError::Queue(_) => crate::base::error::FAILURE,
        }
    }
}

/// Why one v1 entry is not migrated: it is reported and the rest go on.
#[derive(Debug, thiserror::Error)]
enum SkipReason {
    #[error("no root metadata.json")]
    NoMetadata,
    #[error("metadata.json names checkpoint {0:?}, not {1}")]
    OtherCheckpoint(String, CheckpointId),
    #[error("metadata.json is not a JSON object")]
    NotAnObject,
    #[error(transparent)]
    Model(#[from] crate::model::documents::ModelError),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    Id(#[from] crate::base::id::InvalidIdError),
    #[error("{0}")]
    Git(#[from] LibGitError),
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// What a migration did (or, for a dry run, would do).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct MigrateReport {
    /// The first ref the checkpoints were read from; `None` when there is none.
    pub source: Option<String>,
    /// Each ref read, and what it gave.
    pub sources: Vec<SourceReport>,
    /// Checkpoints written (or that would be).
    pub migrated: Vec<CheckpointId>,
    /// Checkpoints whose ref already holds the same tree.
    pub up_to_date: Vec<CheckpointId>,
    /// Entries that could not be migrated: `(path in the v1 tree, reason)` (for an archived
    /// layout, `<ref>:<path>`).
    pub skipped: Vec<(String, String)>,
    /// The refs of every migrated or up-to-date checkpoint (to be queued for push).
    pub refs: Vec<String>,
    /// Checkpoint refs that are not checkpoints, with why (never pushed; look at them).
    pub misshapen: Vec<(String, String)>,
    /// Why the new refs could not be packed, when they could not (they still work, loose).
    pub pack_failed: Option<String>,
    /// Why the remote's copies of the archived layouts could not be fetched, when they could
    /// not (what is here was still imported).
    pub fetch_failed: Option<String>,
}

/// What one ref read by a migration gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceReport {
    /// The ref.
    pub name: String,
    /// Its layout: `v1-branch`, `v1-ref` or `checkpoints-v2`.
    pub layout: &'static str,
    /// Checkpoints it gave that were written (or would be).
    pub migrated: Vec<CheckpointId>,
    /// Checkpoints it gave that were already there.
    pub up_to_date: Vec<CheckpointId>,
    /// For checkpoints v2: each session's raw transcript imported, `(checkpoint, slot,
    /// generation ref)`.
    pub transcripts: Vec<(CheckpointId, usize, String)>,
}

impl MigrateReport {
    /// Checkpoints considered.
    pub fn total(&self) -> usize {
        self.migrated.len() + self.up_to_date.len() + self.skipped.len()
    }
}

/// The normalised root `metadata.json` bytes, or `None` when the stored ones need no change.
///
/// Works on the generic JSON value, not the typed model, so that nothing but the two allowed
/// changes happens: `checkpoint_version` is removed and every string in a `sessions[]` entry
/// loses the `/<id[:2]>/<id[2:]>` prefix. Key order, `null`s and unknown keys stay as stored.
fn normalised_summary(bytes: &[u8], id: &CheckpointId) -> Result<Option<Vec<u8>>, SkipReason> {
    // Validate as the model reads it (corrupt data is skipped, not migrated).
    let typed = CheckpointSummary::from_json(bytes)?;
    if !typed.checkpoint_id.is_empty() && typed.checkpoint_id != id.as_str() {
        return Err(SkipReason::OtherCheckpoint(typed.checkpoint_id, id.clone()));
    }
    let mut doc: serde_json::Value = serde_json::from_slice(bytes)?;
    let Some(obj) = doc.as_object_mut() else {
        return Err(SkipReason::NotAnObject);
    };
    let prefix = format!("/{}/", id.v1_path());
    let mut changed = obj.shift_remove("checkpoint_version").is_some();
    if let Some(serde_json::Value::Array(sessions)) = obj.get_mut("sessions") {
        for entry in sessions
            .iter_mut()
            .filter_map(serde_json::Value::as_object_mut)
        {
            for v in entry.values_mut() {
                if let serde_json::Value::String(s) = v {
                    if let Some(rest) = s.strip_prefix(&prefix) {
                        *s = format!("/{rest}");
                        changed = true;
                    }
                }
            }
        }
    }
    Ok(changed.then(|| crate::model::documents::to_json_bytes(&doc)))
}

/// Whether `candidate` equals `subtree` with its `metadata.json` replaced by `metadata`.
fn tree_matches(candidate: &Tree<'_>, subtree: &Tree<'_>, metadata: Option<Oid>) -> bool {
    if candidate.len() != subtree.len() {
        return false;
    }
    candidate.iter().zip(subtree.iter()).all(|(a, b)| {
        let (Some(an), Some(bn)) = (a.name(), b.name()) else {
            return false;
        };
        an == bn
            && a.filemode() == b.filemode()
            && match (an, metadata) {
                ("metadata.json", Some(m)) => a.id() == m,
                _ => a.id() == b.id(),
            }
    })
}

/// Whether a commit on the first-parent chain from `tip` already has the migrated tree.
fn already_migrated(
    repo: &Repo,
    tip: Option<Oid>,
    subtree: &Tree<'_>,
    metadata: Option<Oid>,
) -> Result<bool, StoreError> {
    let mut cur = match tip {
        Some(t) => Some(
            repo.objects()
                .find_commit(t)
                .map_err(git_err("read checkpoint ref"))?,
        ),
        None => None,
    };
    while let Some(c) = cur {
        let tree = c.tree().map_err(git_err("read checkpoint tree"))?;
        if tree_matches(&tree, subtree, metadata) {
            return Ok(true);
        }
        cur = c.parents().next();
    }
    Ok(false)
}

/// The layouts a migration reads, each from the repository's own ref, else `origin`'s copy.
const LAYOUTS: [&str; 4] = ["v1-branch", "v1-ref", "v1.1-ref", "checkpoints-v2"];

/// The ref a migration reads `layout` from: the repository's own, else `origin`'s copy.
fn source_of(repo: &Repo, layout: &str) -> Result<Option<(String, Oid)>, StoreError> {
    let copies = crate::remote::on_demand::copies_prefix(repo, "origin");
    let candidates = match layout {
        "v1-branch" => [V1_BRANCH_REF.to_owned(), V1_TRACKING_REF.to_owned()],
        "v1-ref" => [
            archive::V1_REF.to_owned(),
            archive::copy_name(&copies, archive::V1_REF),
        ],
        "v1.1-ref" => [
            archive::V1_1_REF.to_owned(),
            archive::copy_name(&copies, archive::V1_1_REF),
        ],
        _ => [
            archive::V2_MAIN.to_owned(),
            archive::copy_name(&copies, archive::V2_MAIN),
        ],
    };
    for name in candidates {
        if let Some(tip) = publish::tip_of(repo, &name)? {
            return Ok(Some((name, tip)));
        }
    }
    Ok(None)
}

/// Migrates every checkpoint of the v1 branch, of the v1 store kept as one ref (`v1` or `v1.1`)
/// and of
/// checkpoints v2 (docs/format.md, "Layouts read but never written") into git-refs, merged by
/// session with what is there; queues the refs for push and packs them (thousands of new loose
/// refs would slow every git command down). `origin`'s copies of the archived layouts are
/// fetched first (one fetch; not for a dry run). `progress(done, total)` is called after each
/// checkpoint. With `dry_run` no ref is written, and no object but those a v2 checkpoint's
/// import builds (unreachable, left to `git gc`); without it, settings that forbid writing
/// stop the migration before it reads anything.
pub fn migrate_branch_to_refs(
    repo: &Repo,
    topo: &Topology<'_>,
    dry_run: bool,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<MigrateReport, MigrateError> {
    if !dry_run {
        topo.check_writable()?;
    }
    let refs = topo.refs_store();
    let mut report = MigrateReport {
        misshapen: crate::store::refs::misshapen_refs(repo)?,
        ..Default::default()
    };
    if !dry_run && repo.remote_names().iter().any(|n| n == "origin") {
        report.fetch_failed = fetch_copies(repo).err();
    }
    let mut sources = Vec::new();
    for layout in LAYOUTS {
        if let Some((name, tip)) = source_of(repo, layout)? {
            let tip = repo
                .objects()
                .find_commit(tip)
                .map_err(git_err(format!("read {name}")))?;
            let root = tip
                .tree()
                .map_err(git_err(format!("read the tree of {name}")))?;
            sources.push((layout, name, v1_subtrees(repo, &root)?));
        }
    }
    report.source = sources.first().map(|(_, name, _)| name.clone());
    let total = sources.iter().map(|(_, _, e)| e.len()).sum();
    let author = repo.identity("AUTHOR");
    let mut done = 0;
    for (layout, name, entries) in sources {
        let mut from = SourceReport {
            name: name.clone(),
            layout,
            migrated: Vec::new(),
            up_to_date: Vec::new(),
            transcripts: Vec::new(),
        };
        let v2 = (layout == "checkpoints-v2").then_some(name.as_str());
        for entry in entries {
            match migrate_one(repo, refs, &entry.raw_id, entry.tree, dry_run, &author, v2) {
                Ok(one) => {
                    from.transcripts.extend(
                        one.transcripts
                            .into_iter()
                            .map(|(slot, g)| (one.id.clone(), slot, g)),
                    );
                    match one.wrote {
                        true => from.migrated.push(one.id.clone()),
                        false => from.up_to_date.push(one.id.clone()),
                    }
                    report.refs.push(one.ref_name);
                }
                Err(reason) => {
                    let at = match layout {
                        "v1-branch" => entry.path,
                        _ => format!("{name}:{}", entry.path),
                    };
                    report
                        .skipped
                        .push((at, crate::base::error::error_chain(&reason)));
                }
            }
            done += 1;
            progress(done, total);
        }
        // A checkpoint several layouts hold counts once: migrated if any wrote it.
        for id in &from.migrated {
            report.up_to_date.retain(|u| u != id);
            if !report.migrated.contains(id) {
                report.migrated.push(id.clone());
            }
        }
        for id in &from.up_to_date {
            if !report.migrated.contains(id) && !report.up_to_date.contains(id) {
                report.up_to_date.push(id.clone());
            }
        }
        report.sources.push(from);
    }
    report.refs.sort();
    report.refs.dedup();
    // Up-to-date refs are queued too: the earlier run may have written them without pushing.
    // Unlike a session write, a failed enqueue fails the migration, since nothing else would
    // announce these refs.
    if !dry_run {
        refs.queue()
            .enqueue_all(&report.refs)
            .map_err(MigrateError::Queue)?;
        if !report.migrated.is_empty() {
            report.pack_failed = crate::ops::gc::pack_checkpoint_refs(repo)
                .err()
                .map(|e| crate::base::error::error_chain(&e));
        }
    }
    Ok(report)
}

/// Fetches `origin`'s copies of its v1 branch and archived layouts (one fetch).
fn fetch_copies(repo: &Repo) -> Result<(), String> {
    let remote = Remote::parse("origin").map_err(|e| e.to_string())?;
    let fetcher = Fetcher::new(repo, remote);
    let mut branch = crate::store::branch::GitBranchStore::mirror(repo);
    branch.set_remote(crate::remote::on_demand::remote_copy(
        repo,
        "origin",
        Some(fetcher),
    ));
    branch
        .refresh_remote()
        .map(drop)
        .map_err(|e| crate::base::error::error_chain(&e))
}

/// What [`migrate_one`] did.
struct One {
    id: CheckpointId,
    ref_name: String,
    /// Whether it wrote the ref (or would have).
    wrote: bool,
    /// For checkpoints v2: each session's transcript imported (slot, generation).
    transcripts: Vec<(usize, String)>,
}

/// Migrates one checkpoint, whose subtree is `subtree_id` (for checkpoints v2, `v2` names the
/// documents ref its transcripts are beside).
fn migrate_one(
    repo: &Repo,
    refs: &GitRefsStore<'_>,
    raw_id: &str,
    subtree_id: Oid,
    dry_run: bool,
    author: &crate::git::repo::Identity,
    v2: Option<&str>,
) -> Result<One, SkipReason> {
    let git = repo.objects();
    let id = CheckpointId::parse(raw_id)?;
    let (subtree_id, transcripts) = match v2 {
        None => (subtree_id, Vec::new()),
        Some(main) => {
            let imported = archive::import_v2(repo, main, &id, &git.find_tree(subtree_id)?)?;
            (imported.tree, imported.transcripts)
        }
    };
    let one = |ref_name: String, wrote: bool| One {
        id: id.clone(),
        ref_name,
        wrote,
        transcripts: transcripts.clone(),
    };
    let subtree = git.find_tree(subtree_id)?;
    let meta = subtree
        .get_name("metadata.json")
        .ok_or(SkipReason::NoMetadata)?;
    let bytes = git.read_blob(meta.id())?;
    let new_meta = normalised_summary(&bytes, &id)?;
    let new_meta_oid = match &new_meta {
        Some(b) if dry_run => Some(repo.hash_blob(b)?),
        Some(b) => Some(git.write_blob(b)?),
        None => None,
    };
    let loc = refs.locate(&id)?;
    if already_migrated(repo, loc.tip, &subtree, new_meta_oid)? {
        return Ok(one(loc.name, false));
    }
    if dry_run {
        return Ok(one(loc.name, true));
    }
    let tree = match new_meta_oid {
        None => subtree_id,
        Some(m) => {
            let mut b = git.tree_builder(Some(&subtree))?;
            b.insert("metadata.json", m, 0o100644)?;
            b.write()?
        }
    };
    let message = format!("Import checkpoint {id} (migrated from git-branch)\n");
    let locate = || -> Result<Located, StoreError> { refs.locate(&id) };
    let outcome = publish::publish(repo, &locate, None, author, &mut |tip| {
        if already_migrated(repo, tip.map(|c| c.id()), &subtree, new_meta_oid)? {
            return Ok(None);
        }
        let Some(tip) = tip else {
            return Ok(Some(Change {
                tree,
                message: message.clone(),
            }));
        };
        // The ref already holds sessions written under git-refs: merge by session (as push
        // recovery does), so the import never hides one; its slots keep their place.
        let current = tip.tree().map_err(git_err("read checkpoint tree"))?;
        let imported = git.find_tree(tree).map_err(git_err("read migrated tree"))?;
        let merged =
            merge::merge_trees(git, &id, &imported, &current, "", &repo.settings().limits())?;
        Ok((merged.tree != current.id()).then(|| Change {
            tree: merged.tree,
            message: message.clone(),
        }))
    })?;
    Ok(one(outcome.ref_name, outcome.changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_paths_and_drops_format_marker() {
        let id = CheckpointId::parse("a1b2c3d4e5f6").unwrap();
        let input = br#"{"checkpoint_id":"a1b2c3d4e5f6","strategy":"manual-commit","checkpoints_count":1,"files_touched":null,"sessions":[{"metadata":"/a1/b2c3d4e5f6/0/metadata.json","transcript":"/a1/b2c3d4e5f6/0/full.jsonl","context":"/a1/b2c3d4e5f6/0/context.md","content_hash":"/a1/b2c3d4e5f6/0/content_hash.txt","prompt":""}],"checkpoint_version":"branch-v1","x":1}"#;
        let out = String::from_utf8(normalised_summary(input, &id).unwrap().unwrap()).unwrap();
        assert!(out.contains("\"metadata\": \"/0/metadata.json\""));
        assert!(out.contains("\"context\": \"/0/context.md\""));
        assert!(out.contains("\"prompt\": \"\""));
        assert!(!out.contains("checkpoint_version"));
        assert!(out.contains("\"x\": 1"));
        assert_eq!(
            normalised_summary(out.as_bytes(), &id).unwrap(),
            None,
            "idempotent"
        );
        assert!(normalised_summary(b"{", &id).is_err());
        let other = br#"{"checkpoint_id":"b1b2c3d4e5f6"}"#;
        assert!(normalised_summary(other, &id).is_err());
    }
}
