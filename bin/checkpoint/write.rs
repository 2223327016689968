//! The write commands: `write`, `backfill`, `session`.

use std::io::Read;

use serde::Serialize;
use serde_json::Value;

use entire_checkpoints::agents;
use entire_checkpoints::base::id::CheckpointId;
use entire_checkpoints::base::json::empty_as_null;
use entire_checkpoints::base::session_id::SessionId;
use entire_checkpoints::base::time as timefmt;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::model::documents::TokenUsage;
use entire_checkpoints::ops::session::{Record, SessionState, SessionStore};
use entire_checkpoints::store::{Backfill, SessionWrite};
use entire_checkpoints::topology::{Topology, WriteReport};

use super::args::{BackfillCommand, SessionCommand, SessionData, WriteArgs};
use super::style::{escape, Style};
use crate::common::cli::{info, warn};
use crate::common::context::Context;
use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

/// Reads a file argument, or standard input for `-`.
fn read_input(path: &str) -> Result<Vec<u8>> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .context("read standard input")?;
        Ok(buf)
    } else {
        std::fs::read(path).with_context(|| format!("read {path}"))
    }
}

impl SessionData {
    /// Reads the transcript file, and the token usage given. A transcript in no shape an agent
    /// writes (not JSON lines, nor one JSON document of an agent that stores one) is accepted
    /// as it is, with one warning: nothing can be read from it.
    fn load(&self, quiet: bool) -> Result<(Option<Vec<u8>>, Option<TokenUsage>)> {
        let transcript = self.transcript.as_deref().map(read_input).transpose()?;
        if let (Some(t), Some(name)) = (&transcript, &self.transcript) {
            if !agents::is_transcript_shaped(t) {
                let name = if name == "-" { "standard input" } else { name };
                warn(
                    quiet,
                    format!(
                        "the transcript ({name}) is not JSON lines, nor one JSON document of Gemini CLI, OpenCode or Kiro: it is stored as given, but no prompt, file write or token usage can be read from it"
                    ),
                );
            }
        }
        Ok((transcript, self.token_usage.as_deref().cloned()))
    }
}

fn report_mirrors(report: &WriteReport, quiet: bool) {
    for w in report.warnings() {
        warn(quiet, w);
    }
}

/// `write`: prints the checkpoint ID.
pub fn write(repo: &Repo, topo: &Topology<'_>, a: WriteArgs, quiet: bool) -> Result<()> {
    // Validate everything before writing anything.
    let id = match &a.id {
        Some(raw) => CheckpointId::parse(raw)?,
        None => topo.mint_id(),
    };
    let session_id = SessionId::parse(&a.session)?;
    let (transcript, token_usage) = a.data.load(quiet)?;
    let token_usage = token_usage.or_else(|| {
        transcript
            .as_deref()
            .and_then(|t| agents::token_usage(t, 0))
    });
    let created_at = match &a.created_at {
        Some(t) => timefmt::rfc3339_nano_utc(timefmt::parse_rfc3339(t)?),
        None => timefmt::now_rfc3339_nano(),
    };
    let w = SessionWrite {
        checkpoint_id: id.clone(),
        session_id,
        strategy: a.strategy,
        branch: a
            .branch
            .or_else(|| repo.current_branch())
            .unwrap_or_default(),
        commit_sha: String::new(),
        created_at,
        transcript,
        transcript_redacted_by: None,
        transcript_hash: None,
        checkpoints_count: a.data.prompts.len().max(1) as i64,
        prompts: a.data.prompts,
        files_touched: a.data.files_touched,
        agent: a.data.agent.unwrap_or_default(),
        model: a.data.model.unwrap_or_default(),
        token_usage,
        checkpoint_transcript_start: 0,
        commit_subject: a.commit_subject,
        author: None,
        redactions: 0,
        tasks: Vec::new(),
    };
    let report = topo.write_session(w)?;
    report_mirrors(&report, quiet);
    println!("{id}");
    Ok(())
}

fn read_json_object(path: &str, what: &str) -> Result<Value> {
    let bytes = read_input(path)?;
    let v: Value =
        serde_json::from_slice(&bytes).with_context(|| format!("{what} is not valid JSON"))?;
    if !v.is_object() {
        return Err(format!("{what} must be a JSON object").into());
    }
    Ok(v)
}

/// `backfill`.
pub fn backfill(topo: &Topology<'_>, b: BackfillCommand, quiet: bool) -> Result<()> {
    let backfill = match b {
        BackfillCommand::Transcript {
            id,
            session,
            transcript,
        } => Backfill::Transcript {
            id: topo.resolve(&id)?,
            session_id: Some(SessionId::parse(&session)?),
            transcript: read_input(&transcript)?,
            prompts: Vec::new(),
        },
        BackfillCommand::Summary {
            id,
            session,
            summary,
        } => Backfill::Summary {
            id: topo.resolve(&id)?,
            session_id: session.as_deref().map(SessionId::parse).transpose()?,
            summary: read_json_object(&summary, "--summary")?,
        },
        BackfillCommand::Attribution { id, attribution } => Backfill::Attribution {
            id: topo.resolve(&id)?,
            attribution: read_json_object(&attribution, "--attribution")?,
        },
    };
    let report = topo.backfill(&backfill)?;
    report_mirrors(&report, quiet);
    if !report.outcome.changed {
        info(
            quiet,
            format!("checkpoint {} already up to date", backfill.id()),
        );
    }
    Ok(())
}

/// `session list --json`: one staged session; what is not known (no agent named, no checkpoint
/// yet) is `null`, as in every output.
#[derive(Serialize)]
struct StagedSession<'a> {
    session_id: &'a str,
    worktree: &'a str,
    #[serde(serialize_with = "empty_as_null")]
    agent: &'a str,
    #[serde(serialize_with = "empty_as_null")]
    model: &'a str,
    prompt_count: usize,
    files_touched: &'a [String],
    pending: bool,
    #[serde(serialize_with = "empty_as_null")]
    last_checkpoint: &'a str,
    #[serde(serialize_with = "empty_as_null")]
    updated_at: &'a str,
}

impl<'a> From<&'a SessionState> for StagedSession<'a> {
    fn from(s: &'a SessionState) -> Self {
        StagedSession {
            session_id: &s.session_id,
            worktree: &s.worktree,
            agent: &s.agent,
            model: &s.model,
            prompt_count: s.prompts.len(),
            files_touched: &s.files_touched,
            pending: s.pending(),
            last_checkpoint: &s.last_checkpoint,
            updated_at: &s.updated_at,
        }
    }
}

impl StagedSession<'_> {
    /// The session's line: ID, state, prompts, agent, and what it is about (the first line of
    /// its first prompt, cut to the terminal's width).
    fn human(&self, first_prompt: Option<&str>, style: &Style) -> String {
        let state = if self.pending { "pending" } else { "condensed" };
        let agent = if self.agent.is_empty() {
            "-"
        } else {
            self.agent
        };
        let mut line = format!(
            "{:<40}  {:<9}  {} prompt(s)  {:<12}",
            escape(self.session_id),
            state,
            self.prompt_count,
            escape(agent)
        );
        style.append_subject(&mut line, first_prompt.unwrap_or(""));
        line.push('\n');
        line
    }
}

/// `session`.
pub fn session(
    repo: &Repo,
    topo: &Topology<'_>,
    c: SessionCommand,
    style: &Style,
    quiet: bool,
) -> Result<()> {
    let store = SessionStore::new(repo);
    match c {
        SessionCommand::Record {
            session,
            data,
            json,
        } => {
            let sid = SessionId::parse(&session)?;
            let (transcript, token_usage) = data.load(quiet)?;
            // Staging is local and must not lose the agent's step: it goes on while a settings
            // file does not parse (with the built-in rules at least; the commit redacts again).
            let state = store.record(
                &sid,
                Record {
                    transcript,
                    prompts: data.prompts,
                    files_touched: data.files_touched,
                    agent: data.agent,
                    model: data.model,
                    token_usage,
                    ..Record::default()
                },
                topo.redactor(),
            )?;
            if json {
                print_json(&StagedSession::from(&state))?;
            }
            Ok(())
        }
        SessionCommand::List { json } => {
            let all = store.list()?;
            let staged: Vec<StagedSession<'_>> = all.iter().map(StagedSession::from).collect();
            if json {
                print_json(&staged)
            } else {
                let text: String = staged
                    .iter()
                    .zip(&all)
                    .map(|(s, state)| s.human(state.prompts.first().map(String::as_str), style))
                    .collect();
                write_stdout(text.as_bytes())
            }
        }
        SessionCommand::Discard { session } => {
            store.discard(&SessionId::parse(&session)?)?;
            Ok(())
        }
    }
}
