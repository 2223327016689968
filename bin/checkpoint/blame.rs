//! `blame` and `why`: render what `ops::blame` found, as text or JSON.

use std::fmt::Write as _;

use entire_checkpoints::base::id;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::blame::{
    self, Attribution, BlameReport, BlameRev, BlameTarget, LineRange, WhyReport,
};
use entire_checkpoints::ops::{Remote, Topology};

use super::args::{BlameArgs, DateFormat, WhyArgs};
use super::dates;
use super::style::{escape, Slot, Style};
use crate::common::cli::warn;
use crate::common::error::{CliError, Result};
use crate::common::output::{print_json, write_stdout};

/// Starts the `git blame` of `blame`'s arguments, in the current directory.
pub fn start(a: &BlameArgs) -> Result<blame::StartedBlame> {
    let cwd = std::env::current_dir()?;
    let target = BlameTarget {
        cwd: &cwd,
        path: a.file.clone(),
        range: a.lines.as_deref().map(LineRange::parse).transpose()?,
        rev: a.common.rev.as_deref().map(BlameRev::parse).transpose()?,
    };
    Ok(blame::start(&target)?)
}

/// `blame`: every line of the file with its label; fails after the output when a checkpoint or
/// transcript that exists could not be read.
pub fn blame(
    repo: &Repo,
    topo: &Topology<'_>,
    a: BlameArgs,
    started: blame::StartedBlame,
    remote: Option<Remote>,
    style: &Style,
    quiet: bool,
) -> Result<()> {
    let blamed = blame::blame(repo, topo, started, remote.as_ref(), move |m| {
        warn(quiet, m)
    })?;
    let report = &blamed.report;
    if a.common.json {
        print_json(report)?;
    } else {
        write_stdout(blame_human(report, a.common.date.date, style).as_bytes())?;
    }
    let done = finish(&report.warnings, report.damaged, quiet);
    // The process ends after this command: what the blame read is left to the exit rather than
    // freed allocation by allocation, after the output (`Blamed::read`).
    std::mem::forget(blamed);
    done
}

/// The warnings on stderr, then the failure when something that exists could not be read.
pub(super) fn finish(warnings: &[String], damaged: bool, quiet: bool) -> Result<()> {
    for w in warnings {
        warn(quiet, w);
    }
    match damaged {
        true => Err(CliError::Failed(
            "some checkpoints or transcripts could not be read (see above); their lines are commit-linked".to_owned(),
        )),
        false => Ok(()),
    }
}

/// The checkpoint column: the first linked checkpoint (short), `+N` for the others.
fn checkpoint_column(ids: &[String]) -> String {
    match ids {
        [] => "-".to_owned(),
        [one] => id::display_short(one).to_owned(),
        [first, rest @ ..] => format!("{}+{}", id::display_short(first), rest.len()),
    }
}

/// `blame`: `<commit> <label> <checkpoint> <date> <line>) <text>`, one line each. The text is
/// the file's own, shown as git blame shows it.
fn blame_human(r: &BlameReport, date: DateFormat, style: &Style) -> String {
    let now = dates::now();
    let columns: Vec<String> = r
        .lines
        .iter()
        .map(|l| checkpoint_column(&l.checkpoints))
        .collect();
    let cp_width = columns.iter().map(String::len).max().unwrap_or(1);
    let line_width = r.lines.last().map_or(1, |l| l.line.to_string().len());
    // Each commit's date once: a line looks its commit up.
    let dates: std::collections::HashMap<&str, String> = r
        .commits
        .iter()
        .map(|c| (c.commit.as_str(), date.show(&c.authored_at, now)))
        .collect();
    let mut out = String::new();
    for (l, cp) in r.lines.iter().zip(&columns) {
        let when = dates.get(l.commit.as_str()).map_or("", String::as_str);
        let label = l.attribution.name();
        let _ = writeln!(
            out,
            "{} {}{:label_pad$} {}{:cp_pad$} {when} {:>line_width$}) {}",
            style.paint(Slot::Id, &l.commit[..8.min(l.commit.len())]),
            style.paint(Slot::of(l.attribution), label),
            "",
            style.paint(Slot::Id, cp),
            "",
            l.line,
            l.text,
            label_pad = 13 - 13.min(label.len()),
            cp_pad = cp_width - cp_width.min(cp.len()),
        );
    }
    out
}

/// Starts the `git blame` of the line `why`'s arguments name, in the current directory.
pub fn start_why(a: &WhyArgs) -> Result<blame::StartedWhy> {
    let (path, line) = blame::why_target(&a.target, a.line.as_deref())?;
    let cwd = std::env::current_dir()?;
    let target = BlameTarget {
        cwd: &cwd,
        path,
        range: None,
        rev: a.common.rev.as_deref().map(BlameRev::parse).transpose()?,
    };
    Ok(blame::start_why(&target, line)?)
}

/// `why`: the line, its commit, checkpoint, session and the prompt behind it.
pub fn why(
    repo: &Repo,
    topo: &Topology<'_>,
    a: WhyArgs,
    started: blame::StartedWhy,
    remote: Option<Remote>,
    style: &Style,
    quiet: bool,
) -> Result<()> {
    let report = blame::why(repo, topo, started, remote.as_ref(), move |m| {
        warn(quiet, m)
    })?;
    if a.common.json {
        print_json(&report)?;
    } else {
        write_stdout(why_human(&report, a.common.date.date, style).as_bytes())?;
    }
    finish(&report.warnings, report.damaged, quiet)
}

/// `why`: the line, then a field per fact. What the commit and the checkpoint say is escaped.
fn why_human(r: &WhyReport, date: DateFormat, style: &Style) -> String {
    let now = dates::now();
    let mut out = format!("{}:{}  {}\n", r.file, r.line.line, r.line.text);
    let field = |out: &mut String, k: &str, v: &dyn std::fmt::Display| {
        let _ = writeln!(out, "  {k:<11}{v}");
    };
    let c = &r.commit_info;
    field(
        &mut out,
        "label",
        &style.paint(Slot::of(r.line.attribution), r.line.attribution.name()),
    );
    if r.line.attribution == Attribution::Uncommitted {
        field(&mut out, "commit", &"(not committed yet)");
        return out;
    }
    field(
        &mut out,
        "commit",
        &format_args!(
            "{} {} <{}> {}",
            style.paint(Slot::Id, &c.commit[..12.min(c.commit.len())]),
            escape(&c.author.name),
            escape(&c.author.email),
            date.show(&c.authored_at, now)
        ),
    );
    field(&mut out, "subject", &escape(&c.subject));
    if c.checkpoints.is_empty() {
        field(
            &mut out,
            "checkpoint",
            &"(none: the commit links no checkpoint)",
        );
        return out;
    }
    let ids: Vec<String> = c
        .checkpoints
        .iter()
        .map(|id| style.paint(Slot::Id, escape(id)).to_string())
        .collect();
    field(&mut out, "checkpoint", &ids.join(", "));
    match &r.agent_write {
        Some(w) => {
            let s = &w.write;
            field(
                &mut out,
                "session",
                &format_args!("{}  {}", s.session_index, escape(&s.session_id)),
            );
            field(&mut out, "agent", &agent_model(&w.agent, &w.model));
            field(
                &mut out,
                "write",
                &format_args!(
                    "{} at {} (transcript line {})",
                    escape(&s.tool),
                    shown_time(&s.timestamp, date, now),
                    s.transcript_line
                ),
            );
            match &w.prompt {
                Some(p) => {
                    field(
                        &mut out,
                        "prompt",
                        &format_args!(
                            "at {} (transcript line {})",
                            shown_time(&p.timestamp, date, now),
                            p.transcript_line
                        ),
                    );
                    for l in p.text.lines() {
                        let _ = writeln!(out, "    {}", escape(l));
                    }
                }
                None => field(&mut out, "prompt", &"(no user turn before the write)"),
            }
        }
        None => {
            field(
                &mut out,
                "write",
                &"(no transcript read shows the agent writing this line)",
            );
            for s in &r.sessions {
                let _ = writeln!(
                    out,
                    "\n  {} of {}  {}",
                    style.paint(Slot::Header, format_args!("Session {}", s.session_index)),
                    style.paint(Slot::Id, escape(&s.checkpoint_id)),
                    escape(&s.session_id)
                );
                field(&mut out, "agent", &agent_model(&s.agent, &s.model));
                if s.prompts.is_empty() {
                    field(&mut out, "prompts", &"(none read)");
                }
                for p in &s.prompts {
                    let first = p.text.lines().map(str::trim).find(|l| !l.is_empty());
                    field(
                        &mut out,
                        "prompt",
                        &format_args!(
                            "{}  {}",
                            shown_time(&p.timestamp, date, now),
                            escape(first.unwrap_or(""))
                        ),
                    );
                }
            }
        }
    }
    out
}

/// The agent and model a transcript names, escaped.
fn agent_model(agent: &str, model: &str) -> String {
    let (agent, model) = (escape(agent), escape(model));
    match (&*agent, &*model) {
        ("", "") => "(unknown)".to_owned(),
        (a, "") => a.to_owned(),
        ("", m) => format!("(unknown), model {m}"),
        (a, m) => format!("{a}, model {m}"),
    }
}

/// A transcript's time stamp as `--date` shows it (escaped: one that does not parse is shown
/// as it is).
fn shown_time(ts: &str, date: DateFormat, now: i64) -> String {
    match ts {
        "" => "(unknown time)".to_owned(),
        t => escape(&date.show(t, now)).into_owned(),
    }
}
