//! The pager git would use for a command, by git's own rules.

use std::path::Path;
use std::time::Duration;

use super::{Git, Output};

/// The pager git would start for `git <command>` run in `dir`, by git's rules:
/// `pager.<command>` (`false` turns paging off, `true` keeps the default, any other value is the
/// pager), else `git var GIT_PAGER` (`GIT_PAGER`, `core.pager`, `PAGER`, else `less`). `None`
/// when that is no pager (`false`, empty, `cat`) or git cannot say.
pub fn pager_for(dir: &Path, command: &str) -> Option<String> {
    let budget = Duration::from_secs(10);
    let key = format!("pager.{command}");
    let configured = Git::new(dir)
        .args(["config", "--type=bool-or-str", "--get", &key])
        .run(budget)
        .ok()
        .filter(Output::success)
        .map(|o| o.stdout.trim().to_owned());
    let pager = match configured.as_deref() {
        Some("false") => return None,
        Some("true") | None => Git::new(dir)
            .args(["var", "GIT_PAGER"])
            .run(budget)
            .ok()
            .filter(Output::success)?
            .stdout
            .trim()
            .to_owned(),
        Some(other) => other.to_owned(),
    };
    (!pager.is_empty() && pager != "cat").then_some(pager)
}
