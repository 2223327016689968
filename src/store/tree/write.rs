//! Building a checkpoint subtree: a session written into its slot (a new one, or the one that
//! holds the session), a backfill of a transcript, a summary or the attribution, and the root
//! summary recomputed from every session. Blobs are written only when the object database lacks
//! them.

use std::collections::HashSet;
use std::sync::Arc;

use super::read::{blob_at, read_documents, read_session, subtree, Documents};
use super::{
    CLI_VERSION, COMPACT_TRANSCRIPT, CONTENT_HASH, METADATA, MODE_BLOB, MODE_TREE, PROMPT,
    PROMPT_SEPARATOR, REDACTIONS_KEY,
};
use crate::base::id::CheckpointId;
use crate::base::threads::join;
use crate::config::settings::Limits;
use crate::git::objects::Oid;
use crate::git::objects::{Objects, Tree, TreeBuilder};
use crate::model::documents::{CheckpointSummary, SessionFilePaths, SessionMetadata, TokenUsage};
use crate::model::transcript;
use crate::store::{git_err, Backfill, SessionWrite, StoreError};

/// A new checkpoint subtree and the commit message that goes with it.
pub(crate) struct Change {
    /// The new checkpoint subtree.
    pub tree: Oid,
    /// The full commit message.
    pub message: String,
}

/// Writes `data` as a blob ([`Objects::write_blob`], which writes nothing when the object is
/// already there: a mirror in the same repository, a transcript written again).
fn write_blob(repo: Objects<'_>, data: &[u8]) -> Result<Oid, StoreError> {
    repo.write_blob(data).map_err(git_err("write blob"))
}

/// Normalises paths to `/` and drops duplicates, keeping first-seen order.
fn dedup_paths(paths: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    paths
        .iter()
        .map(|p| p.replace('\\', "/"))
        .filter(|p| !p.is_empty() && seen.insert(p.clone()))
        .collect()
}

/// Who the summary's writer-owned fields come from: a session write sets them, a backfill keeps
/// the previous summary's.
pub(crate) struct Writer<'a> {
    strategy: &'a str,
    branch: &'a str,
    commit_sha: &'a str,
}

/// Recomputes the root summary from all sessions (docs/format.md, "Session slots and the root
/// summary"). Unknown keys and the sticky fields of the previous summary are kept.
pub(crate) fn recompute_summary(
    prev: Option<&CheckpointSummary>,
    id: &CheckpointId,
    sessions: &[Arc<SessionMetadata>],
    entries: Vec<SessionFilePaths>,
    writer: Option<Writer<'_>>,
) -> CheckpointSummary {
    let mut s = prev.cloned().unwrap_or_default();
    s.cli_version = CLI_VERSION.to_owned();
    s.checkpoint_id = id.to_string();
    if let Some(w) = writer {
        s.strategy = w.strategy.to_owned();
        s.branch = w.branch.to_owned();
        if !w.commit_sha.is_empty() {
            s.commit_sha = w.commit_sha.to_owned();
        }
    }
    s.checkpoints_count = sessions.iter().map(|m| m.checkpoints_count).sum();
    let mut files: Vec<String> = sessions
        .iter()
        .flat_map(|m| m.files_touched.iter().map(|f| f.replace('\\', "/")))
        .collect();
    files.sort();
    files.dedup();
    s.files_touched = files;
    s.sessions = entries;
    let mut usage: Option<TokenUsage> = None;
    for m in sessions {
        if let Some(u) = &m.token_usage {
            usage.get_or_insert_with(Default::default).add(u);
        }
    }
    s.token_usage = usage;
    s.has_review |= sessions.iter().any(|m| m.kind == "agent_review");
    s.has_investigation |= sessions.iter().any(|m| m.kind == "agent_investigate");
    s.imported |= sessions.iter().any(|m| m.kind == "imported");
    // The legacy format marker is not part of the baseline format; migration deletes it.
    s
}

/// The `sessions[]` entry of a session directory, derived from which files its tree holds.
pub(crate) fn entry_paths_of(slot_tree: &Tree, prefix: &str, dir: &str) -> SessionFilePaths {
    let has = |name: &str| slot_tree.get_name(name).is_some();
    let mut e = entry_paths(prefix, dir, has(transcript::TRANSCRIPT_FILE), has(PROMPT));
    if has(COMPACT_TRANSCRIPT) {
        e.compact_transcript = format!("{prefix}/{dir}/{COMPACT_TRANSCRIPT}");
    }
    e
}

fn entry_paths(
    prefix: &str,
    dir: &str,
    has_transcript: bool,
    has_prompt: bool,
) -> SessionFilePaths {
    let p = |name: &str| format!("{prefix}/{dir}/{name}");
    SessionFilePaths {
        metadata: p(METADATA),
        transcript: if has_transcript {
            p(transcript::TRANSCRIPT_FILE)
        } else {
            String::new()
        },
        compact_transcript: String::new(),
        content_hash: if has_transcript {
            p(CONTENT_HASH)
        } else {
            String::new()
        },
        prompt: if has_prompt { p(PROMPT) } else { String::new() },
        assets_manifest: String::new(),
        extra: Default::default(),
    }
}

/// From this size a transcript's content hash, when the caller has none, is computed on a
/// thread of its own while the chunks are written: below it, the thread costs about what the
/// hash does.
const HASH_APART_FROM: usize = 1 << 20;

/// Inserts the chunks of transcript `data` and its content hash: `hash` when the caller has it
/// ([`transcript::content_hash`] of `data`), else computed here.
fn insert_transcript(
    repo: Objects<'_>,
    builder: &mut TreeBuilder<'_>,
    id: &CheckpointId,
    data: &[u8],
    hash: Option<&str>,
) -> Result<(), StoreError> {
    let chunks = transcript::split(data, transcript::MAX_CHUNK_SIZE).map_err(|source| {
        StoreError::Transcript {
            id: id.clone(),
            source,
        }
    })?;
    let mut insert_chunks = || {
        chunks.iter().enumerate().try_for_each(|(n, chunk)| {
            insert_blob(repo, builder, &transcript::chunk_name(n), chunk)
        })
    };
    let hash = match hash {
        None if data.len() >= HASH_APART_FROM => {
            let (written, hash) = join(insert_chunks, &|| transcript::content_hash(data));
            written?;
            hash
        }
        _ => {
            insert_chunks()?;
            hash.map_or_else(|| transcript::content_hash(data), str::to_owned)
        }
    };
    insert_blob(repo, builder, CONTENT_HASH, hash.as_bytes())
}

pub(crate) fn insert_blob(
    repo: Objects<'_>,
    builder: &mut TreeBuilder<'_>,
    name: &str,
    data: &[u8],
) -> Result<(), StoreError> {
    let oid = write_blob(repo, data)?;
    builder
        .insert(name, oid, MODE_BLOB)
        .map(|_| ())
        .map_err(git_err(format!("insert {name}")))
}

/// Writes the root tree: the base subtree's entries with `metadata.json` and the given session
/// directories replaced.
fn write_root(
    repo: Objects<'_>,
    base: Option<&Tree>,
    summary: &CheckpointSummary,
    slots: &[(&str, Oid)],
) -> Result<Oid, StoreError> {
    let mut root = repo
        .tree_builder(base)
        .map_err(git_err("start checkpoint tree"))?;
    insert_blob(repo, &mut root, METADATA, &summary.to_json())?;
    for (dir, oid) in slots {
        root.insert(dir, *oid, MODE_TREE)
            .map_err(git_err("insert session slot"))?;
    }
    root.write().map_err(git_err("write checkpoint tree"))
}

/// The directory of a checkpoint that holds its subagent tasks.
const TASKS: &str = "tasks";

/// The `tasks/` tree of a checkpoint: the one of `base` with each task of `w` written into its
/// `<tool-use-id>/` (its `task.json`, and its transcript when read), next to what is there.
fn write_tasks(
    repo: Objects<'_>,
    base: Option<&Tree>,
    w: &SessionWrite,
    limits: &Limits,
) -> Result<Oid, StoreError> {
    let id = &w.checkpoint_id;
    let existing = match base {
        Some(b) => subtree(repo, b, id, TASKS, limits)?,
        None => None,
    };
    let mut all = repo
        .tree_builder(existing.as_ref())
        .map_err(git_err("start tasks tree"))?;
    for task in &w.tasks {
        let name = task.tool_use_id.as_str();
        let previous = match &existing {
            Some(t) => subtree(repo, t, id, name, limits)?,
            None => None,
        };
        let mut dir = repo
            .tree_builder(previous.as_ref())
            .map_err(git_err("start task tree"))?;
        if let Some(t) = &task.transcript {
            let file = format!("agent-{}.jsonl", task.agent_id.as_str());
            insert_blob(repo, &mut dir, &file, t)?;
        }
        let mut meta = serde_json::Map::new();
        meta.insert("tool_use_id".into(), name.into());
        meta.insert("agent_id".into(), task.agent_id.as_str().into());
        if let Some(kind) = &task.subagent_type {
            meta.insert("subagent_type".into(), kind.as_str().into());
        }
        if task.transcript.is_none() {
            meta.insert(
                "transcript_unavailable_reason".into(),
                "transcript unreadable".into(),
            );
        }
        let json = crate::model::documents::to_json_bytes(&serde_json::Value::Object(meta));
        insert_blob(repo, &mut dir, "task.json", &json)?;
        let oid = dir.write().map_err(git_err("write task tree"))?;
        all.insert(name, oid, MODE_TREE)
            .map_err(git_err("insert task tree"))?;
    }
    all.write().map_err(git_err("write tasks tree"))
}

/// The commit message of a session write (docs/format.md, "Commit messages").
fn session_message(w: &SessionWrite) -> String {
    let mut m = format!("Checkpoint: {}\n\n", w.checkpoint_id);
    if let Some(subject) = w
        .commit_subject
        .as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        m.push_str(subject);
        m.push_str("\n\n");
    }
    m.push_str(&format!("Entire-Session: {}\n", w.session_id));
    m.push_str(&format!("Entire-Strategy: {}\n", w.strategy));
    if !w.agent.is_empty() {
        m.push_str(&format!("Entire-Agent: {}\n", w.agent));
    }
    m
}

/// Builds the subtree for a session write on top of `base` (the checkpoint's current subtree,
/// `None` for a new checkpoint), and names the session's directory in it. `prefix` is the
/// summary path prefix (`""` or `/ab/cdef...`).
pub(crate) fn build_session(
    repo: Objects<'_>,
    base: Option<&Tree>,
    prefix: &str,
    w: &SessionWrite,
    limits: &Limits,
) -> Result<(Change, String), StoreError> {
    let id = &w.checkpoint_id;
    let docs = match base {
        Some(tree) => read_documents(repo, tree, id, limits)?,
        None => None,
    };
    if let (Some(tree), None) = (base, &docs) {
        if !tree.is_empty() && read_session(repo, tree, id, "0", limits)?.is_none() {
            return Err(StoreError::Corrupt {
                id: id.clone(),
                path: METADATA.to_owned(),
                source: crate::model::documents::ModelError::Json {
                    what: "root metadata.json",
                    source: serde::de::Error::custom(
                        "existing checkpoint tree has no root metadata",
                    ),
                },
            });
        }
    }
    let (prev_summary, mut sessions, dirs) = match docs {
        Some(d) => (Some(d.summary), d.sessions, d.dirs),
        None => (None, Vec::new(), Vec::new()),
    };
    let slot = sessions
        .iter()
        .position(|s| s.session_id == w.session_id.as_str())
        .unwrap_or(sessions.len());
    let dir = match dirs.get(slot) {
        Some(d) => d.clone(),
        None => free_dir(base, &dirs),
    };
    if slot == 0 {
        if let Some(tree) = base {
            if let Some(existing) = read_session(repo, tree, id, &dir, limits)? {
                if existing.session_id != w.session_id.as_str() {
                    return Err(StoreError::SlotConflict {
                        id: id.clone(),
                        existing: existing.session_id,
                        incoming: w.session_id.to_string(),
                        tree: tree.id().to_string(),
                    });
                }
            }
        }
    }

    let mut slot_tree = repo
        .tree_builder(None)
        .map_err(git_err("start session tree"))?;
    if let Some(data) = &w.transcript {
        insert_transcript(repo, &mut slot_tree, id, data, w.transcript_hash.as_deref())?;
    }
    if !w.prompts.is_empty() {
        insert_blob(
            repo,
            &mut slot_tree,
            PROMPT,
            w.prompts.join(PROMPT_SEPARATOR).as_bytes(),
        )?;
    }
    let previous = sessions.get(slot);
    let meta = SessionMetadata {
        cli_version: CLI_VERSION.to_owned(),
        checkpoint_id: id.to_string(),
        session_id: w.session_id.to_string(),
        strategy: w.strategy.clone(),
        created_at: w.created_at.clone(),
        branch: w.branch.clone(),
        commit_sha: w.commit_sha.clone(),
        checkpoints_count: w.checkpoints_count,
        files_touched: dedup_paths(&w.files_touched),
        agent: w.agent.clone(),
        model: w.model.clone(),
        checkpoint_transcript_start: w.checkpoint_transcript_start,
        transcript_lines_at_start: w.checkpoint_transcript_start,
        token_usage: w.token_usage.clone(),
        kind: w.kind.clone(),
        extra: previous.map(|p| p.extra.clone()).unwrap_or_default(),
        ..Default::default()
    };
    let mut meta = meta;
    if w.redactions > 0 {
        meta.extra
            .insert(REDACTIONS_KEY.to_owned(), w.redactions.into());
    } else {
        meta.extra.shift_remove(REDACTIONS_KEY);
    }
    insert_blob(repo, &mut slot_tree, METADATA, &meta.to_json())?;
    let slot_oid = slot_tree.write().map_err(git_err("write session tree"))?;

    if slot == sessions.len() {
        sessions.push(Arc::new(meta));
    } else {
        sessions[slot] = Arc::new(meta);
    }
    let mut entries = prev_summary
        .as_ref()
        .map(|s| s.sessions.clone())
        .unwrap_or_default();
    let mut entry = entry_paths(prefix, &dir, w.transcript.is_some(), !w.prompts.is_empty());
    if let Some(old) = entries.get(slot) {
        entry.extra = old.extra.clone();
    }
    if slot < entries.len() {
        entries[slot] = entry;
    } else {
        entries.push(entry);
    }
    let mut summary = recompute_summary(
        prev_summary.as_ref(),
        id,
        &sessions,
        entries,
        Some(Writer {
            strategy: &w.strategy,
            branch: &w.branch,
            commit_sha: &w.commit_sha,
        }),
    );
    summary.link_commits(&w.linked_commits);
    let mut slots = vec![(dir.as_str(), slot_oid)];
    if !w.tasks.is_empty() {
        slots.push((TASKS, write_tasks(repo, base, w, limits)?));
    }
    let tree = write_root(repo, base, &summary, &slots)?;
    let change = Change {
        tree,
        message: session_message(w),
    };
    Ok((change, dir))
}

/// The directory a new session goes to: the first number from the count of entries up that no
/// entry names and the tree does not hold (so a slot gap never leads to overwriting a live or an
/// orphaned directory).
fn free_dir(base: Option<&Tree>, dirs: &[String]) -> String {
    let named: HashSet<&str> = dirs.iter().map(String::as_str).collect();
    (dirs.len()..)
        .map(|n| n.to_string())
        .find(|n| !named.contains(n.as_str()) && base.is_none_or(|t| t.get_name(n).is_none()))
        .expect("an unbounded range has a free number")
}

/// The tree of session `slot`, which lives in `dirs[slot]`.
fn session_tree<'r>(
    repo: Objects<'r>,
    tree: &Tree,
    id: &CheckpointId,
    dirs: &[String],
    slot: usize,
    limits: &Limits,
) -> Result<Tree<'r>, StoreError> {
    let dir = &dirs[slot];
    subtree(repo, tree, id, dir, limits)?.ok_or_else(|| StoreError::MissingSession {
        id: id.clone(),
        slot,
        dir: dir.clone(),
    })
}

/// How a backfill picks its session slot.
pub(crate) enum SlotTarget<'a> {
    /// The slot holding this session; falls back to the latest when `fallback_latest`.
    Session { id: &'a str, fallback_latest: bool },
    /// The latest slot.
    Latest,
}

fn pick_slot(
    id: &CheckpointId,
    sessions: &[Arc<SessionMetadata>],
    target: &SlotTarget<'_>,
) -> Result<usize, StoreError> {
    let latest = sessions
        .len()
        .checked_sub(1)
        .ok_or(StoreError::NotFound { id: id.clone() })?;
    match target {
        SlotTarget::Latest => Ok(latest),
        SlotTarget::Session {
            id: sid,
            fallback_latest,
        } => match sessions.iter().position(|s| s.session_id == *sid) {
            Some(i) => Ok(i),
            None if *fallback_latest => Ok(latest),
            None => Err(StoreError::SessionNotFound {
                id: id.clone(),
                session: (*sid).to_owned(),
            }),
        },
    }
}

/// Builds the subtree for a backfill. `Ok(None)` when the backfill changes nothing (same
/// transcript hash and no new prompts). [`StoreError::NotFound`] when `base` is `None` or holds
/// no session. `target` is the slot choice for transcript and summary backfills; the caller pins
/// it to a session ID across retries.
pub(crate) fn build_backfill(
    repo: Objects<'_>,
    base: Option<&Tree>,
    prefix: &str,
    b: &Backfill,
    target: &SlotTarget<'_>,
    limits: &Limits,
) -> Result<Option<(Change, String)>, StoreError> {
    let id = b.id();
    let not_found = || StoreError::NotFound { id: id.clone() };
    let tree = base.ok_or_else(not_found)?;
    let docs = read_documents(repo, tree, id, limits)?.ok_or_else(not_found)?;
    if docs.sessions.is_empty() {
        return Err(not_found());
    }
    let Documents {
        summary: prev,
        mut sessions,
        dirs,
        ..
    } = docs;
    match b {
        Backfill::Attribution { attribution, .. } => {
            let mut summary =
                recompute_summary(Some(&prev), id, &sessions, prev.sessions.clone(), None);
            summary.combined_attribution = Some(attribution.clone());
            let tree = write_root(repo, Some(tree), &summary, &[])?;
            let message = format!("Update checkpoint summary for {id}\n");
            Ok(Some((Change { tree, message }, String::new())))
        }
        Backfill::Links { commits, .. } => {
            let mut summary = prev.clone();
            // Already listed, every one: nothing to write (a second `link` is no new commit).
            if summary.link_commits(commits) == 0 {
                return Ok(None);
            }
            let tree = write_root(repo, Some(tree), &summary, &[])?;
            let message = format!("Link commits to checkpoint {id}\n");
            Ok(Some((Change { tree, message }, String::new())))
        }
        Backfill::Summary { summary: value, .. } => {
            let slot = pick_slot(id, &sessions, target)?;
            let dir = dirs[slot].as_str();
            let slot_tree = session_tree(repo, tree, id, &dirs, slot, limits)?;
            Arc::make_mut(&mut sessions[slot]).summary = Some(value.clone());
            let mut builder = repo
                .tree_builder(Some(&slot_tree))
                .map_err(git_err("start session tree"))?;
            insert_blob(repo, &mut builder, METADATA, &sessions[slot].to_json())?;
            let slot_oid = builder.write().map_err(git_err("write session tree"))?;
            let summary =
                recompute_summary(Some(&prev), id, &sessions, prev.sessions.clone(), None);
            let tree = write_root(repo, Some(tree), &summary, &[(dir, slot_oid)])?;
            let sid = sessions[slot].session_id.clone();
            let message = format!("Update summary for checkpoint {id} (session: {sid})\n");
            Ok(Some((Change { tree, message }, sid)))
        }
        Backfill::Transcript {
            transcript: data,
            prompts,
            ..
        } => {
            let slot = pick_slot(id, &sessions, target)?;
            let dir = dirs[slot].as_str();
            let slot_tree = session_tree(repo, tree, id, &dirs, slot, limits)?;
            let hash = transcript::content_hash(data);
            let same_transcript = blob_at(repo, &slot_tree, id, CONTENT_HASH, limits)?.as_deref()
                == Some(hash.as_bytes());
            let joined = prompts.join(PROMPT_SEPARATOR);
            let prompts_change = !prompts.is_empty()
                && blob_at(repo, &slot_tree, id, PROMPT, limits)?.as_deref()
                    != Some(joined.as_bytes());
            let sid = sessions[slot].session_id.clone();
            if same_transcript && !prompts_change {
                return Ok(None);
            }
            let mut builder = repo
                .tree_builder(Some(&slot_tree))
                .map_err(git_err("start session tree"))?;
            let stale: Vec<String> = slot_tree
                .iter()
                .filter_map(|e| e.name().map(str::to_owned))
                .filter(|n| transcript::chunk_index(n).is_some() || n == COMPACT_TRANSCRIPT)
                .collect();
            if !same_transcript {
                for name in &stale {
                    builder
                        .remove(name)
                        .map_err(git_err("remove old transcript"))?;
                }
                insert_transcript(repo, &mut builder, id, data, Some(&hash))?;
                // We do not derive compact transcripts; a replaced transcript must not keep a
                // stale one (docs/format.md, "One checkpoint").
                Arc::make_mut(&mut sessions[slot]).compact_transcript_start = None;
            }
            if prompts_change {
                insert_blob(repo, &mut builder, PROMPT, joined.as_bytes())?;
            }
            insert_blob(repo, &mut builder, METADATA, &sessions[slot].to_json())?;
            let slot_oid = builder.write().map_err(git_err("write session tree"))?;
            let mut entries = prev.sessions.clone();
            if let Some(e) = entries.get_mut(slot) {
                let p = |name: &str| format!("{prefix}/{dir}/{name}");
                e.transcript = p(transcript::TRANSCRIPT_FILE);
                e.content_hash = p(CONTENT_HASH);
                if !same_transcript {
                    e.compact_transcript.clear();
                }
                if prompts_change {
                    e.prompt = p(PROMPT);
                }
            }
            let summary = recompute_summary(Some(&prev), id, &sessions, entries, None);
            let tree = write_root(repo, Some(tree), &summary, &[(dir, slot_oid)])?;
            let message = format!("Finalize transcript for Checkpoint: {id}\n");
            Ok(Some((Change { tree, message }, sid)))
        }
    }
}
