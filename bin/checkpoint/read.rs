//! The read commands: `show`, `cat`, `log`, `list`.

use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use entire_checkpoints::base::error::error_chain;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::git::url::Remote;
use entire_checkpoints::ops::{resolve, sync};
use entire_checkpoints::store::{Checkpoint, CheckpointInfo, CommitInfo, StoreError};
use entire_checkpoints::topology::Topology;

use super::args::ShowArgs;
use crate::common::cli::warn;
use crate::common::context::Context;
use crate::common::error::{CliError, Result};
use crate::common::output::{print_json, write_stdout};

/// `show`: the checkpoints its target names, as documents, or the transcript of a session.
pub fn show(repo: &Repo, topo: &Topology<'_>, a: ShowArgs) -> Result<()> {
    let checkpoints = resolve::checkpoints(repo, topo, &a.target, |m| warn(false, m))?;
    let mut docs = Vec::new();
    for cp in &checkpoints {
        let slot = a.session.as_deref().map(|s| cp.slot_of(s)).transpose()?;
        if a.transcript {
            write_stdout(&transcript(topo, cp, slot)?)?;
            continue;
        }
        docs.push((cp, ShowDoc::read(topo, cp, slot)?));
    }
    if a.transcript {
        return Ok(());
    }
    if a.json {
        match docs.as_slice() {
            [(_, one)] => print_json(one),
            _ => print_json(&docs.iter().map(|(_, d)| d).collect::<Vec<_>>()),
        }
    } else {
        let text: Vec<String> = docs.iter().map(|(cp, d)| d.human(cp)).collect();
        write_stdout(text.join("\n").as_bytes())
    }
}

/// The transcript of session `slot` (default: the latest).
fn transcript(topo: &Topology<'_>, cp: &Checkpoint, slot: Option<usize>) -> Result<Vec<u8>> {
    let slot = match slot {
        Some(s) => s,
        None => cp
            .sessions
            .len()
            .checked_sub(1)
            .context("checkpoint has no sessions")?,
    };
    let dir = &cp.session_dirs[slot];
    topo.read_file(cp, &format!("{dir}/full.jsonl"))
        .map_err(|e| match e {
            StoreError::FileNotFound { id, .. } => {
                CliError::Failed(format!("checkpoint {id}: session {slot} has no transcript"))
            }
            other => other.into(),
        })
}

/// The author of a checkpoint's commit.
#[derive(Serialize)]
struct Author {
    name: String,
    email: String,
}

/// `show --json`: one checkpoint with its stored documents as they are.
#[derive(Serialize)]
struct ShowDoc {
    checkpoint_id: String,
    store: &'static str,
    #[serde(rename = "ref")]
    ref_name: String,
    commit: String,
    author: Author,
    /// `metadata.json`.
    summary: Value,
    /// Each shown session's `<slot>/metadata.json`.
    sessions: Vec<Value>,
    /// The slots of the shown sessions.
    #[serde(skip)]
    slots: Vec<usize>,
}

impl ShowDoc {
    /// Reads the documents of `cp`, of all sessions or only the one in slot `only`.
    fn read(topo: &Topology<'_>, cp: &Checkpoint, only: Option<usize>) -> Result<ShowDoc> {
        let raw = |path: &str| -> Result<Value> {
            let bytes = topo.read_file(cp, path)?;
            serde_json::from_slice(&bytes)
                .with_context(|| format!("checkpoint {}: {path} is corrupt", cp.id))
        };
        let summary = raw("metadata.json")?;
        let mut sessions = Vec::new();
        let mut slots = Vec::new();
        for (slot, dir) in cp.session_dirs.iter().enumerate() {
            if only.is_none_or(|o| o == slot) {
                sessions.push(raw(&format!("{dir}/metadata.json"))?);
                slots.push(slot);
            }
        }
        let author = topo.author(cp)?.unwrap_or_default();
        Ok(ShowDoc {
            checkpoint_id: cp.id.as_str().to_owned(),
            store: cp.store.name(),
            ref_name: cp.ref_name.clone(),
            commit: cp.commit.clone(),
            author: Author {
                name: author.name,
                email: author.email,
            },
            summary,
            sessions,
            slots,
        })
    }

    /// `show`: a header for the checkpoint and a block per session.
    fn human(&self, cp: &Checkpoint) -> String {
        let mut out = format!("Checkpoint {}\n", cp.id);
        let field = |out: &mut String, k: &str, v: &str| out.push_str(&format!("  {k:<9}{v}\n"));
        field(
            &mut out,
            "store",
            &format!("{} ({})", cp.store.name(), cp.ref_name),
        );
        field(&mut out, "commit", &cp.commit);
        let Author { name, email } = &self.author;
        if !name.is_empty() || !email.is_empty() {
            field(&mut out, "author", &format!("{name} <{email}>"));
        }
        let created = cp.created_at();
        if !created.is_empty() {
            field(&mut out, "created", &short_time(&created));
        }
        let summary = &cp.summary;
        if !summary.branch.is_empty() {
            field(&mut out, "branch", &summary.branch);
        }
        if let Some(t) = &summary.token_usage {
            field(&mut out, "tokens", &t.total().to_string());
        }
        field(&mut out, "files", &list_or_none(&summary.files_touched));
        field(&mut out, "sessions", &cp.sessions.len().to_string());
        for &slot in &self.slots {
            let s = &cp.sessions[slot];
            out.push_str(&format!("\nSession {slot}  {}\n", s.session_id));
            if !s.agent.is_empty() {
                field(&mut out, "agent", &s.agent);
            }
            if !s.model.is_empty() {
                field(&mut out, "model", &s.model);
            }
            if !s.created_at.is_empty() {
                field(&mut out, "created", &short_time(&s.created_at));
            }
            field(&mut out, "files", &list_or_none(&s.files_touched));
            if let Some(t) = &s.token_usage {
                field(&mut out, "tokens", &t.total().to_string());
            }
            if let Some(intent) = s.intent() {
                field(&mut out, "intent", intent);
            }
        }
        out
    }
}

fn list_or_none(items: &[String]) -> String {
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items.join(", ")
    }
}

fn short_time(rfc3339: &str) -> String {
    // 2026-10-01T19:12:01.19884Z -> 2026-10-01 19:12:01
    let s = rfc3339.replacen('T', " ", 1);
    s.split(['.', 'Z', '+']).next().unwrap_or("").to_owned()
}

/// `cat`: one file of a checkpoint, raw.
pub fn cat(topo: &Topology<'_>, id: &str, path: &str) -> Result<()> {
    let cp = topo.get(&topo.resolve(id)?)?;
    write_stdout(&topo.read_file(&cp, path)?)
}

/// `log`: the history of a checkpoint.
pub fn log(topo: &Topology<'_>, id: &str, json: bool) -> Result<()> {
    let history = topo.history(&topo.resolve(id)?)?;
    if json {
        print_json(&history)
    } else {
        write_stdout(log_human(&history).as_bytes())
    }
}

/// `log`: one line per commit.
fn log_human(history: &[CommitInfo]) -> String {
    history
        .iter()
        .map(|c| {
            format!(
                "{} {} {} <{}> {}\n",
                &c.commit[..c.commit.len().min(12)],
                c.time,
                c.author.name,
                c.author.email,
                c.subject
            )
        })
        .collect()
}

/// What `list` was asked.
pub struct ListArgs {
    /// `--json`.
    pub json: bool,
    /// `--ids`.
    pub ids: bool,
    /// `--limit`.
    pub limit: Option<usize>,
    /// `--remote [<R>]`.
    pub remote: Option<Option<Remote>>,
    /// `--hydrate`.
    pub hydrate: bool,
}

/// `list`: every checkpoint, newest first; with `--remote` the remote's too. Fails after the
/// list when the remote cannot be listed or a checkpoint cannot be read.
pub fn list<'r>(repo: &'r Repo, topo: &Topology<'r>, a: ListArgs) -> Result<()> {
    let mut failed = None;
    let (mut all, index_damage) = match a.remote {
        None => {
            let listing = topo.list()?;
            (listing.entries, listing.index_damage)
        }
        Some(r) => {
            let r = match r {
                Some(r) => r,
                None => sync::target(repo, None)?.target,
            };
            let listing = topo.list_with_remote(repo, &r)?;
            let mut entries = listing.entries;
            match listing.enumeration_error {
                // The local checkpoints are still listed; the command fails after.
                Some(e) => {
                    failed = Some(CliError::Failed(format!(
                        "could not list the checkpoints of {r} (local checkpoints listed only): {}",
                        e.reason()
                    )))
                }
                None if a.hydrate => {
                    topo.hydrate(repo, &r, &mut entries, std::time::Duration::from_secs(30));
                }
                None => {}
            }
            (entries, listing.index_damage)
        }
    };
    if let Some(damage) = index_damage {
        warn(false, error_chain(&damage));
    }
    if let Some(n) = a.limit {
        all.truncate(n);
    }
    // Written as it is rendered, through one buffer: no copy of the whole output in memory.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if a.json {
        serde_json::to_writer_pretty(&mut out, &ListEntries(&all))?;
        out.write_all(b"\n")?;
    } else if a.ids {
        for i in &all {
            writeln!(out, "{}", i.id.as_str())?;
        }
    } else {
        list_human(&all, &mut out)?;
    }
    out.flush()?;
    drop(out);
    let unreadable: Vec<&String> = all.iter().filter_map(|i| i.unreadable.as_ref()).collect();
    for reason in &unreadable {
        eprintln!("entire: unreadable checkpoint: {reason}");
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if !unreadable.is_empty() {
        return Err(format!("{} checkpoint(s) could not be read", unreadable.len()).into());
    }
    Ok(())
}

/// `list --json`: the stable shape of cli.md.
#[derive(Serialize)]
struct ListEntry<'a> {
    checkpoint_id: &'a str,
    store: &'static str,
    created_at: &'a str,
    session_count: usize,
    session_ids: &'a [String],
    agent: &'a str,
    remote_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

impl<'a> From<&'a CheckpointInfo> for ListEntry<'a> {
    fn from(i: &'a CheckpointInfo) -> Self {
        ListEntry {
            checkpoint_id: i.id.as_str(),
            store: i.store.name(),
            created_at: &i.created_at,
            session_count: i.session_count,
            session_ids: &i.session_ids,
            agent: &i.agent,
            remote_only: i.remote_only,
            error: i.unreadable.as_deref(),
        }
    }
}

/// `list --json`: the array of [`ListEntry`], serialized one entry at a time.
struct ListEntries<'a>(&'a [CheckpointInfo]);

impl Serialize for ListEntries<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(ListEntry::from))
    }
}

/// `list`: one line per checkpoint, written to `out`.
fn list_human(all: &[CheckpointInfo], out: &mut impl Write) -> std::io::Result<()> {
    for i in all {
        let sessions = match (i.session_count, &i.unreadable) {
            (_, Some(_)) => "unreadable".to_owned(),
            (1, None) => "1 session".to_owned(),
            (n, None) => format!("{n} sessions"),
        };
        let agent = if i.unreadable.is_some() {
            "(see stderr)"
        } else if i.remote_only {
            "(remote only)"
        } else if i.agent.is_empty() {
            "-"
        } else {
            &i.agent
        };
        writeln!(
            out,
            "{:<26}  {:<24}  {:<10}  {:<11}  {}",
            i.id.display_short(),
            short_time(&i.created_at),
            i.store.name(),
            sessions,
            agent
        )?;
    }
    Ok(())
}
