//! `doctor [--fix] [--json]`: runs the library's checks and prints one line per finding (or one
//! JSON document). Exit 0 when no problem remains, 1 when one does, 128 when the repository
//! cannot be opened (an unsupported format is still reported as a finding first).

use anyhow::{bail, Result};

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::doctor::{self, Report};

use crate::common;

fn print(report: &Report, json: bool) -> Result<()> {
    if json {
        let mut text = serde_json::to_string_pretty(&report.to_json())?;
        text.push('\n');
        return common::write_stdout(text.as_bytes());
    }
    if report.findings.is_empty() {
        return common::write_stdout(b"no problems found\n");
    }
    common::write_stdout(report.to_human().as_bytes())
}

/// Runs the command.
pub fn run(fix: bool, json: bool, quiet: bool) -> Result<()> {
    let repo = match Repo::discover() {
        Ok(r) => r,
        Err(e) => {
            if let Some(report) = Report::unsupported(&e) {
                print(&report, json)?;
            }
            return Err(e.into());
        }
    };
    common::warn_unparseable_settings(&repo, quiet);
    let report = doctor::run(&repo, &doctor::default_checks(), fix);
    print(&report, json)?;
    match report.open_problems() {
        0 => Ok(()),
        n if fix => bail!("{n} problem(s) remain that doctor --fix cannot repair"),
        n => bail!("{n} problem(s) found; doctor --fix repairs what it safely can"),
    }
}
