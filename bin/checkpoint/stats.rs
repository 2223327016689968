//! `stats`: render what `ops::stats` measured, as a table like `git diff --stat` or as JSON.

use std::fmt::Write as _;

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::stats::{self, GroupBy, Lines, StatsReport};
use entire_checkpoints::ops::{Remote, Topology};

use super::args::{StatsArgs, StatsBy};
use super::style::escape;
use crate::common::cli::warn;
use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

/// The widest subject shown; longer ones are cut.
const SUBJECT_WIDTH: usize = 50;

/// `stats`: the table (or JSON), then the warnings; fails after the output when a checkpoint or
/// transcript that exists could not be read (as `blame` does).
pub fn run(
    repo: &Repo,
    topo: &Topology<'_>,
    a: StatsArgs,
    remote: Option<Remote>,
    quiet: bool,
) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let range = stats::range_args(&cwd, &a.range, &|m| warn(quiet, m))?;
    let by = a.by.map(|b| match b {
        StatsBy::File => GroupBy::File,
        StatsBy::Author => GroupBy::Author,
        StatsBy::Agent => GroupBy::Agent,
    });
    let report = stats::stats(repo, topo, &cwd, &range, by, remote.as_ref(), move |m| {
        warn(quiet, m)
    })?;
    print(&report, a.json, human)?;
    super::blame::finish(&report.warnings, report.damaged, quiet)
}

/// `report` as JSON, or as `human` renders it.
pub fn print<R: serde::Serialize>(report: &R, json: bool, human: fn(&R) -> String) -> Result<()> {
    match json {
        true => print_json(report),
        false => write_stdout(human(report).as_bytes()),
    }
}

/// One row's counts: `+A -R  agent N/A  P%`.
fn counts(l: &Lines, width: usize) -> String {
    format!(
        "{:>width$} + {:>width$} -  agent {:>width$}/{:<width$} {:>4}",
        l.added,
        l.removed,
        l.agent_written,
        l.added,
        percent(l.ai_share),
    )
}

/// The share as a whole percentage.
pub(super) fn percent(share: f64) -> String {
    format!("{:.0}%", share * 100.0)
}

/// `s` cut to `width` characters, the last of them `…` when it was longer.
pub(super) fn cut_chars(s: &str, width: usize) -> String {
    match s.chars().count() > width {
        true => format!("{}…", s.chars().take(width - 1).collect::<String>()),
        false => s.to_owned(),
    }
}

/// The subject, escaped and cut to [`SUBJECT_WIDTH`] characters.
fn subject(s: &str) -> String {
    cut_chars(&escape(s), SUBJECT_WIDTH)
}

/// The table: a row per commit, the total, the agents, then the groups of `--by`.
fn human(r: &StatsReport) -> String {
    let width = r.total.added.max(r.total.removed).to_string().len();
    let subjects: Vec<String> = r.commits.iter().map(|c| subject(&c.subject)).collect();
    let name_width = subjects
        .iter()
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (c, s) in r.commits.iter().zip(&subjects) {
        let pad = name_width - s.chars().count();
        let _ = writeln!(
            out,
            " {} {s}{:pad$} | {}{}",
            &c.commit[..12.min(c.commit.len())],
            "",
            counts(&c.lines, width),
            match (c.merge, c.checkpoints.is_empty()) {
                (true, _) => "  (merge: no diff)",
                (false, true) => "  (no checkpoint)",
                (false, false) => "",
            }
        );
    }
    let t = &r.total;
    let _ = writeln!(
        out,
        " {} commit(s), {} line(s) added, {} removed; {} by agents ({}), {} in linked commits without a transcript showing them, {} in commits linking no checkpoint",
        r.commits.len(),
        t.added,
        t.removed,
        t.agent_written,
        percent(t.ai_share),
        t.commit_linked,
        t.human,
    );
    for a in &r.agents {
        let name = match (a.agent.as_str(), a.model.as_str()) {
            ("", "") => "(unknown agent)".to_owned(),
            (agent, "") => escape(agent).into_owned(),
            ("", model) => format!("(unknown agent), model {}", escape(model)),
            (agent, model) => format!("{}, model {}", escape(agent), escape(model)),
        };
        let _ = writeln!(out, "   {name}: {} line(s)", a.lines);
    }
    if let Some(groups) = &r.groups {
        let keys: Vec<String> = groups.iter().map(|g| escape(&g.key).into_owned()).collect();
        let key_width = keys.iter().map(|k| k.chars().count()).max().unwrap_or(0);
        let _ = writeln!(out);
        for (g, k) in groups.iter().zip(&keys) {
            let pad = key_width - k.chars().count();
            let _ = writeln!(out, " {k}{:pad$} | {}", "", counts(&g.lines, width));
        }
    }
    out
}
