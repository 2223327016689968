//! `verify`: render what `ops::verify` found, and exit 1 when a commit fails.

use std::fmt::Write as _;

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::stats;
use entire_checkpoints::ops::verify::{self, Problem, VerifyReport};
use entire_checkpoints::ops::{Remote, Topology};

use super::args::VerifyArgs;
use super::style::escape;
use crate::common::cli::warn;
use crate::common::error::{CliError, Result};

/// `verify`: one line per failing commit and problem (or JSON), the warnings, then exit 1 when
/// any commit fails.
pub fn run(
    repo: &Repo,
    topo: &Topology<'_>,
    a: VerifyArgs,
    remote: Option<Remote>,
    quiet: bool,
) -> Result<()> {
    let cwd = std::env::current_dir()?;
    let range = stats::range_args(&cwd, &a.range, &|m| warn(quiet, m))?;
    let report = verify::verify(
        repo,
        topo,
        &cwd,
        &range,
        a.require,
        remote.as_ref(),
        move |m| warn(quiet, m),
    )?;
    super::stats::print(&report, a.json, human)?;
    for w in &report.warnings {
        warn(quiet, w);
    }
    match report.ok {
        true => Ok(()),
        false => Err(CliError::Failed(format!(
            "{} of {} commit(s) fail verification",
            report.failures.len(),
            report.commit_count
        ))),
    }
}

/// `<commit> <subject>` then an indented line per problem; a summary line when all pass.
fn human(r: &VerifyReport) -> String {
    let mut out = String::new();
    for f in &r.failures {
        let _ = writeln!(
            out,
            "{} {}",
            &f.commit[..12.min(f.commit.len())],
            escape(&f.subject)
        );
        for p in &f.problems {
            let _ = match p {
                Problem::NotFound { checkpoint_id } => writeln!(
                    out,
                    "  checkpoint {} is held neither here nor on the remote",
                    escape(checkpoint_id)
                ),
                Problem::FetchFailed {
                    checkpoint_id,
                    error,
                } => writeln!(
                    out,
                    "  checkpoint {} could not be fetched: {}",
                    escape(checkpoint_id),
                    escape(error)
                ),
                Problem::Unreadable {
                    checkpoint_id,
                    error,
                } => writeln!(
                    out,
                    "  checkpoint {} cannot be read: {}",
                    escape(checkpoint_id),
                    escape(error)
                ),
                Problem::MalformedTrailer { value } => writeln!(
                    out,
                    "  Entire-Checkpoint trailer {:?} names no checkpoint",
                    escape(value)
                ),
                Problem::Unlinked { lines, written_in } => writeln!(
                    out,
                    "  links no checkpoint, but {lines} added line(s) were written by a session of {}",
                    written_in.join(", ")
                ),
            };
        }
    }
    if r.ok {
        let _ = writeln!(
            out,
            "ok: {} commit(s), {} linking checkpoints, every linked checkpoint can be fetched{}",
            r.commit_count,
            r.linked_commit_count,
            match r.require {
                true => "; no commit carries lines a session wrote without linking it",
                false => "",
            }
        );
    }
    out
}
