//! The write commands: `write`, `backfill`, `session`.

use serde::Serialize;

use entire_checkpoints::base::json::empty_as_null;
use entire_checkpoints::base::session_id::SessionId;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::import::{self, FoundState, ImportAsk, ImportReport};
use entire_checkpoints::ops::session::{SessionState, SessionStore};
use entire_checkpoints::ops::write;
use entire_checkpoints::ops::Topology;

use super::args::{BackfillCommand, ImportArgs, SessionCommand, SessionData, WriteArgs};
use super::style::{escape, Style};
use crate::common::cli::{info, warn};
use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

impl SessionData {
    /// What `ops::write` is given of the session.
    fn input(self) -> write::SessionInput {
        write::SessionInput {
            transcript: self.transcript,
            prompts: self.prompts,
            files_touched: self.files_touched,
            agent: self.agent,
            model: self.model,
            token_usage: self.token_usage.map(|u| *u),
        }
    }
}

/// Prints what a write's mirrors said.
fn report_mirrors(warnings: &[String], quiet: bool) {
    for w in warnings {
        warn(quiet, w);
    }
}

/// `write`: prints the checkpoint ID.
pub fn write(repo: &Repo, topo: &Topology<'_>, a: WriteArgs, quiet: bool) -> Result<()> {
    let ask = write::WriteAsk {
        session: a.session,
        id: a.id,
        data: a.data.input(),
        strategy: a.strategy,
        branch: a.branch,
        commit_subject: a.commit_subject,
        created_at: a.created_at,
    };
    let written = write::write(repo, topo, ask, &|w| warn(quiet, w))?;
    report_mirrors(&written.warnings, quiet);
    println!("{}", written.id);
    Ok(())
}

/// `link`: prints the checkpoint ID; says on stderr when it named the commit already.
pub fn link(
    repo: &Repo,
    topo: &Topology<'_>,
    commit: &str,
    checkpoint: &str,
    quiet: bool,
) -> Result<()> {
    let linked = entire_checkpoints::ops::side_links::link(repo, topo, commit, checkpoint)?;
    report_mirrors(&linked.warnings, quiet);
    if !linked.changed {
        info(
            quiet,
            format!(
                "checkpoint {} already links commit {}",
                linked.id, linked.commit
            ),
        );
    }
    println!("{}", linked.id);
    Ok(())
}

/// `backfill`.
pub fn backfill(topo: &Topology<'_>, b: BackfillCommand, quiet: bool) -> Result<()> {
    let ask = match b {
        BackfillCommand::Transcript {
            id,
            session,
            transcript,
        } => write::BackfillAsk::Transcript {
            id,
            session,
            transcript,
        },
        BackfillCommand::Summary {
            id,
            session,
            summary,
        } => write::BackfillAsk::Summary {
            id,
            session,
            summary,
        },
        BackfillCommand::Attribution { id, attribution } => {
            write::BackfillAsk::Attribution { id, attribution }
        }
    };
    let written = write::backfill(topo, ask)?;
    report_mirrors(&written.warnings, quiet);
    if !written.changed {
        info(
            quiet,
            format!("checkpoint {} already up to date", written.id),
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
            let state = write::record(repo, topo, &session, data.input(), &|w| warn(quiet, w))?;
            if json {
                print_json(&StagedSession::from(&state))?;
            }
            Ok(())
        }
        SessionCommand::List { json } => {
            for u in store.unreadable()? {
                warn(quiet, u.to_string());
            }
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
        SessionCommand::Import(a) => session_import(repo, topo, a, style, quiet),
    }
}

/// `session import`.
fn session_import(
    repo: &Repo,
    topo: &Topology<'_>,
    a: ImportArgs,
    style: &Style,
    quiet: bool,
) -> Result<()> {
    let report = import::import(
        repo,
        topo,
        &ImportAsk {
            agents: a.agents,
            sessions: a.sessions,
            all: a.all,
            dry_run: a.dry_run,
        },
    )?;
    for w in &report.warnings {
        warn(quiet, w);
    }
    if a.json {
        return print_json(&report);
    }
    write_stdout(import_human(&report, style).as_bytes())?;
    let new = report
        .sessions
        .iter()
        .filter(|s| s.state == FoundState::New)
        .count();
    if new > 0 && !a.all {
        info(
            quiet,
            format!("{new} session(s) not recorded yet: `git entire-checkpoint session import --all` (or naming them) imports them"),
        );
    }
    Ok(())
}

/// The human listing of `session import` (and `enable --import-history`): one line per session
/// found, oldest first: when its transcript was last written, its agent, what became of it, its
/// ID, its prompts, the commits it is linked to and what it was about.
pub fn import_human(report: &ImportReport, style: &Style) -> String {
    let mut text = String::new();
    for s in &report.sessions {
        let state = match (s.state, &s.checkpoint_id) {
            (FoundState::New, _) => "new".to_owned(),
            (FoundState::Recorded, _) => "recorded".to_owned(),
            (FoundState::Imported, Some(id)) => format!("imported as {id}"),
            (FoundState::Imported, None) => "would be imported".to_owned(),
        };
        let when = s
            .updated_at
            .as_deref()
            .map_or("-", |t| t.get(..16).unwrap_or(t));
        let mut line = format!(
            "{}  {:<12}  {}  {}  {} prompt(s)",
            when.replace('T', " "),
            s.agent,
            escape(&s.session_id),
            state,
            s.prompt_count
        );
        if !s.commits.is_empty() {
            let short: Vec<&str> = s.commits.iter().map(|c| c.get(..12).unwrap_or(c)).collect();
            line.push_str(&format!("  commits {}", short.join(",")));
        }
        style.append_subject(&mut line, s.subject.as_deref().unwrap_or(""));
        line.push('\n');
        text.push_str(&line);
    }
    text
}
