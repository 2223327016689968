//! `hook ...` (the entry points the installed hook scripts call) and `hooks ...` (install,
//! uninstall, status).

use entire_checkpoints::base::error::error_chain;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::hook_runner::{self, GitHook, GitHookDone};
use entire_checkpoints::ops::{commit_hooks, hooks, Topology};

use super::args::{HookCommand, HooksCommand};
use super::gc;
use crate::common::cli::{info, warn};
use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

/// `hook ...` ([`hook_runner::git_hook`]): never fails the user's git command; every problem
/// is a warning.
pub fn hook(repo: &Repo, topo: &Topology<'_>, h: HookCommand, quiet: bool) {
    let mut stdin = std::io::stdin().lock();
    let hook = match &h {
        HookCommand::PrepareCommitMsg { file, source, .. } => GitHook::PrepareCommitMsg {
            file,
            source: source.as_deref(),
        },
        HookCommand::PostCommit => GitHook::PostCommit,
        HookCommand::PreAutoGc => GitHook::PreAutoGc,
        HookCommand::PostRewrite { .. } => GitHook::PostRewrite { input: &mut stdin },
    };
    let report = hook_runner::git_hook(repo, topo, hook);
    crate::common::push::report_hook(&report, quiet, |done| match done {
        GitHookDone::Prepared | GitHookDone::Collected(None) => {}
        GitHookDone::Committed(report) => committed(report, quiet),
        // As `gc --quiet` says it: what it deleted and kept, on stdout.
        GitHookDone::Collected(Some((days, report))) => {
            let text = gc::report_human(*days, false, report);
            if let Err(e) = write_stdout(text.as_bytes()) {
                warn(quiet, format!("checkpoint hook: {}", error_chain(&e)));
            }
        }
        GitHookDone::Rewritten(kept) => {
            for (commit, id) in kept {
                info(
                    quiet,
                    format!("{commit} keeps its link to checkpoint {id} in the rewrite map"),
                );
            }
        }
    });
}

/// What `post-commit` says of the staged sessions it condensed.
fn committed(report: &commit_hooks::Condensed, quiet: bool) {
    for tok in &report.malformed {
        warn(
            quiet,
            format!("ignoring malformed Entire-Checkpoint trailer {tok:?}"),
        );
    }
    for w in &report.warnings {
        warn(quiet, w);
    }
    for u in &report.unreadable {
        warn(quiet, u.to_string());
    }
    for (sid, e) in &report.failed {
        warn(
            quiet,
            format!("session {sid} was not condensed (it stays staged): {e}"),
        );
    }
    if let (Some(id), false) = (&report.checkpoint, report.sessions.is_empty()) {
        // A commit says one line of ours; which recorded files it left out (a list that
        // grows with everything the session ever touched) is a diagnostic (`-v`,
        // `ENTIRE_LOG=info`).
        info(
            quiet,
            format!(
                "checkpoint {id}: {} session(s) condensed",
                report.sessions.len()
            ),
        );
        for (sid, files) in &report.left_out {
            log::info!(
                "session {sid}: left out of the checkpoint, not changed by this commit: {}",
                files.join(", ")
            );
        }
    }
}

/// `hooks ...`: does what is asked, then shows every hook's state; `uninstall` says what it
/// removed instead.
pub fn hooks(repo: &Repo, h: HooksCommand, quiet: bool) -> Result<()> {
    let json = matches!(h, HooksCommand::Status { json: true });
    let before = hooks::status(repo);
    let uninstall = matches!(h, HooksCommand::Uninstall);
    let done = match h {
        HooksCommand::Install { force, shared } => {
            hooks::install(repo, hooks::InstallOptions { force, shared })?
        }
        HooksCommand::Uninstall => hooks::uninstall(repo)?,
        HooksCommand::Status { .. } => hooks::Installed {
            states: before.clone(),
            ..Default::default()
        },
    };
    for w in &done.warnings {
        warn(quiet, w);
    }
    for d in &done.done {
        info(quiet, d);
    }
    let dir = hooks::hooks_dir(repo);
    if uninstall {
        let removed = removed_hooks(&before, &done.states);
        let line = if removed.is_empty() && done.done.is_empty() {
            "no hook of ours was installed\n".to_owned()
        } else if removed.is_empty() {
            String::new()
        } else {
            format!("removed our hooks: {}\n", removed.join(", "))
        };
        return write_stdout(line.as_bytes());
    }
    let doc = HooksDoc::of(&dir, hooks::sharing(repo, &dir), &done.states);
    if json {
        print_json(&doc)
    } else {
        write_stdout(doc.human().as_bytes())
    }
}

/// The hooks that were ours (installed, chained, run by a manager) in `before` and are not in
/// `after`: what an uninstall removed.
pub(super) fn removed_hooks(
    before: &[(String, hooks::HookState)],
    after: &[(String, hooks::HookState)],
) -> Vec<String> {
    let ours = |s: &hooks::HookState| {
        matches!(
            s,
            hooks::HookState::Installed
                | hooks::HookState::Chained(_)
                | hooks::HookState::Managed(_)
        )
    };
    before
        .iter()
        .filter(|(name, state)| ours(state) && !after.iter().any(|(n, s)| n == name && ours(s)))
        .map(|(name, _)| name.clone())
        .collect()
}

/// `hooks status --json`.
#[derive(serde::Serialize)]
pub(super) struct HooksDoc {
    /// The directory git runs hooks from.
    directory: String,
    /// Why it is shared with other repositories, or null.
    shared: Option<String>,
    hooks: Vec<HookDoc>,
}

/// A hook's state as `hooks status --json` names it.
#[derive(Clone, Copy, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub(super) enum StateName {
    Installed,
    Chained,
    Managed,
    Chain,
    Foreign,
    Missing,
}

impl StateName {
    /// The name of `state`, with the hooks it chains and the manager that runs ours.
    pub(super) fn of(state: &hooks::HookState) -> (StateName, Vec<String>, Option<String>) {
        match state {
            hooks::HookState::Installed => (StateName::Installed, Vec::new(), None),
            hooks::HookState::Chained(c) => (StateName::Chained, c.clone(), None),
            hooks::HookState::Managed(m) => (StateName::Managed, Vec::new(), Some((*m).to_owned())),
            hooks::HookState::Chain(c) => (StateName::Chain, c.clone(), None),
            hooks::HookState::Foreign => (StateName::Foreign, Vec::new(), None),
            hooks::HookState::Missing => (StateName::Missing, Vec::new(), None),
        }
    }

    /// The state in words, as `hooks status` shows it.
    pub(super) fn words(self, chains: &[String], manager: Option<&str>) -> String {
        match self {
            StateName::Installed => "installed".to_owned(),
            StateName::Chained => format!("installed (chains {})", chains.join(", ")),
            StateName::Managed => format!("installed (run by {})", manager.unwrap_or_default()),
            StateName::Chain => format!(
                "not installed (a chain left by hooks uninstall runs {})",
                chains.join(", ")
            ),
            StateName::Foreign => "foreign hook (not ours)".to_owned(),
            StateName::Missing => "missing".to_owned(),
        }
    }
}

/// One hook of [`HooksDoc`].
#[derive(serde::Serialize)]
struct HookDoc {
    name: String,
    state: StateName,
    /// The hooks ours runs first (for `chained`), or the chain runs (for `chain`).
    chains: Vec<String>,
    /// The hook manager that runs ours (for `managed`).
    manager: Option<String>,
    path: String,
}

impl HooksDoc {
    /// The document of the hooks directory `dir` (shared for `shared`) holding `states`.
    pub(super) fn of(
        dir: &std::path::Path,
        shared: Option<String>,
        states: &[(String, hooks::HookState)],
    ) -> Self {
        let hooks = states
            .iter()
            .map(|(name, state)| {
                let (state, chains, manager) = StateName::of(state);
                HookDoc {
                    name: name.clone(),
                    state,
                    chains,
                    manager,
                    path: dir.join(name).display().to_string(),
                }
            })
            .collect();
        HooksDoc {
            directory: dir.display().to_string(),
            shared,
            hooks,
        }
    }
    /// One line: each hook, installed (ours runs, also chained or through a manager) or
    /// missing, as `status` shows them.
    pub(super) fn summary(&self) -> String {
        let each: Vec<String> = self
            .hooks
            .iter()
            .map(|h| {
                let ours = matches!(
                    h.state,
                    StateName::Installed | StateName::Chained | StateName::Managed
                );
                format!("{} {}", h.name, if ours { "installed" } else { "missing" })
            })
            .collect();
        each.join(", ")
    }

    /// The human form: the directory and whether it is shared, then one line per hook.
    pub(super) fn human(&self) -> String {
        let mut text = format!(
            "{:<20}{} ({})\n",
            "directory",
            self.directory,
            match &self.shared {
                Some(why) => format!("shared: {why}"),
                None => "this repository only".to_owned(),
            }
        );
        for h in &self.hooks {
            let what = h.state.words(&h.chains, h.manager.as_deref());
            text.push_str(&format!("{:<20}{what}  ({})\n", h.name, h.path));
        }
        text
    }
}
