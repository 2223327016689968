//! `doctor [--fix] [--json]`: runs the library's checks and prints one line per finding (or one
//! JSON document). Exit 0 when no problem remains, 1 when one does, 128 when the repository
//! cannot be opened (an unsupported format is still reported as a finding first).

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::doctor::{self, Report};

use crate::common::cli::warn_settings;
use crate::common::error::Result;
use crate::common::output::write_stdout;

fn print(report: &Report, json: bool) -> Result<()> {
    if json {
        return crate::common::output::print_json(&report.to_json());
    }
    if report.findings.is_empty() {
        return write_stdout(b"no problems found\n");
    }
    write_stdout(report.to_human().as_bytes())
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
    warn_settings(&entire_checkpoints::ops::settings::warnings(&repo), quiet);
    let report = doctor::run(&repo, &doctor::default_checks(), fix);
    print(&report, json)?;
    match report.open_problems() {
        0 => Ok(()),
        n if fix => Err(format!("{n} problem(s) remain that doctor --fix cannot repair").into()),
        n => Err(format!("{n} problem(s) found; doctor --fix repairs what it safely can").into()),
    }
}
