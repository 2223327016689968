//! The checks of this clone's own files and setup: ref lock files a crashed process left
//! (`stale-lock`, removed by `--fix`), the summary index `list` reads (`summary-index`, deleted
//! by `--fix`), our hooks (`hook-missing`, `hook-foreign`, `hooks-path-shadowed`, installed by
//! `--fix` where none is foreign), and the committed settings awaiting approval
//! (`settings-unapproved`).

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::{Code, Command, Context, DoctorError, Finding};
use crate::base::error::io_context as io_err;
use crate::git::refname::CHECKPOINT_REF_PREFIX;
use crate::ops::commit_hooks;
use crate::ops::hooks::{self, HookState};
use crate::store::branch::V1_BRANCH_REF;
use crate::store::refs::GitRefsStore;
use crate::store::summary;

/// A git ref lock file at least this old is left over by a crashed process: git holds one for
/// the milliseconds of a ref update.
pub const STALE_AFTER: Duration = Duration::from_secs(15 * 60);

/// `session-unreadable`: a staged session whose state cannot be read (a damaged `state.json`),
/// which every command passes over. Never removed by `--fix`: its repair (`session discard`)
/// loses what it staged, which is the user's call.
pub(super) fn unreadable_sessions(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let unreadable = crate::ops::session::SessionStore::new(cx.repo).unreadable()?;
    Ok(unreadable
        .into_iter()
        .map(|u| {
            Finding::new(
                Code::SessionUnreadable,
                u.session.clone(),
                format!(
                    "a staged session that cannot be read, passed over by every commit: {}",
                    u.error
                ),
            )
            .repair(Command::ours(["session", "discard", u.session.as_str()]))
        })
        .collect())
}

/// `checkpoint-unwritten`: a commit's trailer names a checkpoint its `post-commit` did not write
/// (killed, a full disk, a read-only `.git/entire`), so the checkpoint never existed here; the
/// staged sessions it was to hold are still staged. The fix writes it for that commit, as the
/// next commit's or push's hook would ([`commit_hooks::heal_promised`]).
pub(super) fn unwritten_checkpoint(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let (true, Some(topo)) = (commit_hooks::promised(cx.repo), cx.topology.as_ref()) else {
        return Ok(Vec::new());
    };
    let finding = |subject: String, message: String| {
        Finding::new(Code::CheckpointUnwritten, subject, message)
            .repair(Command::ours(["doctor", "--fix"]))
    };
    let failed = |e: &commit_hooks::CommitHookError| {
        finding(
            commit_hooks::PROMISE_FILE.to_owned(),
            format!(
                "a commit links a checkpoint its post-commit hook did not write, and it could not be read or written: {}",
                crate::base::error::error_chain(e)
            ),
        )
    };
    if !cx.fix {
        return Ok(match commit_hooks::unkept_promise(cx.repo) {
            Ok(None) => Vec::new(),
            Ok(Some(u)) => vec![finding(
                u.checkpoint.to_string(),
                "a commit links this checkpoint, which its post-commit hook did not write (it was stopped or failed): it never existed here; its sessions are still staged, and the next commit or push writes it".to_owned(),
            )],
            Err(e) => vec![failed(&e)],
        });
    }
    Ok(match commit_hooks::heal_promised(cx.repo, topo) {
        None | Some(Ok(None)) => Vec::new(),
        Some(Ok(Some(h))) => vec![finding(
            h.checkpoint.to_string(),
            format!(
                "commit {} links this checkpoint, which its post-commit hook did not write; written now with {} session(s)",
                h.commit,
                h.condensed.sessions.len()
            ),
        )
        .fixed_if(h.condensed.failed.is_empty())],
        Some(Err(e)) => vec![failed(&e)],
    })
}

/// What the committed settings ask for that awaits the user's approval (`trust`): information
/// and the command, never a problem (a contributor may rightly never approve an upstream's
/// checkpoint remote).
pub(super) fn settings_approval(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    Ok(crate::ops::trust::pending(cx.repo)
        .into_iter()
        .map(|p| {
            Finding::new(Code::SettingsUnapproved, p.file.clone(), p.to_string()).advise(
                "review what it asks for with `git entire-checkpoint trust --dry-run`, approve it with `git entire-checkpoint trust`",
            )
        })
        .collect())
}

/// `agent-wired`, `agent-partly-wired`, `agent-hook-failed`: which agents' configuration files
/// hold our hooks (`enable --agent`), one with only some of them, and the last agent hook that
/// failed with none of that agent's succeeding since.
pub(super) fn agent_hooks(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    use crate::ops::agent_hooks::{wiring, WiringState};
    let mut out: Vec<Finding> = wiring(cx.repo)
        .into_iter()
        .map(|w| match w.state {
            WiringState::Partial => Finding::new(
                Code::AgentPartlyWired,
                w.file.to_owned(),
                format!(
                    "{} holds some of our hooks for {}, not all: some of its events are not recorded",
                    w.file, w.agent
                ),
            )
            .advise(format!(
                "git entire-checkpoint enable --agent {} puts back the rest",
                w.agent
            )),
            WiringState::Wired | WiringState::NotWired => Finding::new(
                Code::AgentWired,
                w.file.to_owned(),
                format!("{}'s sessions are recorded by our hooks in {}", w.agent, w.file),
            ),
        })
        .collect();
    if let Some(f) = crate::ops::capture::last_failure(cx.repo.common_dir()) {
        out.push(
            Finding::new(
                Code::AgentHookFailed,
                format!("{} {}", f.agent, f.event),
                format!(
                    "the {} hook {} failed at {}, so that event was not recorded: {}",
                    f.agent, f.event, f.at, f.message
                ),
            )
            .advise("the next hook of that agent that succeeds clears it; the session's next events are recorded as usual"),
        );
    }
    Ok(out)
}

/// `summary-index`: the summary index (`store::summary`) is damaged, which `list` notices,
/// ignores and repairs by itself, or holds records for current tips that disagree with their
/// checkpoints, which `list` would print. The fix deletes the file: it holds nothing that is
/// not recomputed, and the next `list` writes it again.
pub(super) fn summary_index(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let path = summary::path(cx.repo.common_dir());
    let message = match summary::Index::load(&path, cx.repo.object_format()) {
        Ok(None) => return Ok(Vec::new()),
        Err(damage) => format!(
            "damaged ({}); list ignores it and writes it again",
            crate::base::error::error_chain(&damage)
        ),
        Ok(Some(index)) => {
            let wrong = GitRefsStore::new(cx.repo).index_disagreements(&index)?;
            let Some(first) = wrong.first() else {
                return Ok(Vec::new());
            };
            format!(
                "{} record(s) differ from their checkpoints (first: {first}); list shows them as recorded",
                wrong.len()
            )
        }
    };
    let fixed = cx.fix && remove_index(&path);
    let subject = path
        .strip_prefix(cx.repo.common_dir())
        .unwrap_or(&path)
        .display()
        .to_string();
    Ok(vec![Finding::new(Code::SummaryIndex, subject, message)
        .repair(Command::ours(["doctor", "--fix"]))
        .fixed_if(fixed)])
}

/// Removes the summary index (a file, a link or a special file; a directory in its place is
/// left to its owner).
fn remove_index(path: &Path) -> bool {
    std::fs::remove_file(path).is_ok()
}

/// `stale-lock`: git ref lock files (`<ref>.lock`) under the checkpoint namespace and of the v1
/// branch, older than [`STALE_AFTER`]: git holds one only during a ref update, and a leftover
/// blocks every later update of that ref. The fix removes them, re-checking the age first.
/// Our own sidecar locks are advisory locks the kernel releases when their holder dies, so they
/// are never stale and never reported.
pub(super) fn stale_locks(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let common = cx.repo.common_dir();
    let mut locks = Vec::new();
    collect_locks(&common.join(CHECKPOINT_REF_PREFIX), &mut locks)?;
    // git locks packed-refs to delete or pack refs: a leftover blocks every deletion, ours
    // (gc) and the user's (`git branch -d`, `git gc`).
    for lock in [
        common.join(format!("{V1_BRANCH_REF}.lock")),
        common.join("packed-refs.lock"),
    ] {
        if lock.is_file() {
            locks.push(lock);
        }
    }
    let mut out = Vec::new();
    for path in locks {
        if !is_stale(&path) {
            continue;
        }
        let fixed = cx.fix && is_stale(&path) && std::fs::remove_file(&path).is_ok();
        let subject = path
            .strip_prefix(common)
            .unwrap_or(&path)
            .display()
            .to_string();
        out.push(
            Finding::new(
                Code::StaleLock,
                subject,
                format!(
                    "a ref lock file older than {} minutes, left by a crashed process; it blocks updates of that ref",
                    STALE_AFTER.as_secs() / 60
                ),
            )
            .repair(Command::ours(["doctor", "--fix"]))
            .fixed_if(fixed),
        );
    }
    Ok(out)
}

fn collect_locks(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), DoctorError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(io_err(format!("read {}", dir.display()))(e).into()),
    };
    for entry in entries {
        let entry = entry.map_err(io_err(format!("read {}", dir.display())))?;
        let path = entry.path();
        let kind = entry
            .file_type()
            .map_err(io_err(format!("stat {}", path.display())))?;
        if kind.is_dir() {
            collect_locks(&path, out)?;
        } else if path.extension().is_some_and(|x| x == "lock") {
            out.push(path);
        }
    }
    Ok(())
}

fn is_stale(path: &Path) -> bool {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age >= STALE_AFTER)
}

/// `hook-missing`, `hook-foreign` and `hooks-path-shadowed`, where checkpoints are on. The fix installs our hooks when
/// none of the hook files is foreign, no hook manager owns the directory and it is not shared
/// (what `hooks install` does without `--force` or `--shared`); a foreign hook is only reported,
/// since installing would move it aside to chain it. Each repair is the `hooks install` command
/// that works here as given.
pub(super) fn hook_checks(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let repo = cx.repo;
    let dir = hooks::hooks_dir(repo);
    let default_dir = repo.common_dir().join("hooks");
    let states = hooks::status(repo);
    // Hooks are only missing where checkpoints are on: `"enabled": true` in the settings, or
    // ours installed. A repository that never enabled them, or where `disable` recorded
    // `"enabled": false`, is healthy without them.
    // Ours in the default directory while git runs hooks from elsewhere, where ours are not.
    let shadowed: Vec<&str> = hooks::HOOK_NAMES
        .iter()
        .copied()
        .filter(|n| hooks::is_ours(&default_dir.join(n)))
        .collect();
    let ours = !shadowed.is_empty()
        || states.iter().any(|(_, s)| {
            matches!(
                s,
                HookState::Installed | HookState::Chained(_) | HookState::Managed(_)
            )
        });
    match repo.settings().enabled() {
        Some(false) => return Ok(Vec::new()),
        None if !ours => return Ok(Vec::new()),
        _ => {}
    }
    let any_foreign = states.iter().any(|(_, s)| *s == HookState::Foreign);
    // A chain `hooks uninstall` left is no foreign hook: an install replaces it and runs what it
    // ran.
    let any_missing = states
        .iter()
        .any(|(_, s)| matches!(s, HookState::Missing | HookState::Chain(_)));
    let installed = cx.fix
        && any_missing
        && !any_foreign
        && hooks::install(repo, hooks::InstallOptions::default()).is_ok();
    let repair = Command::ours(hooks::install_args(repo));
    let mut out = Vec::new();
    if dir != default_dir && any_missing && !shadowed.is_empty() {
        out.push(
            Finding::new(
                Code::HooksPathShadowed,
                dir.display().to_string(),
                format!(
                    "core.hooksPath makes git run hooks from here, so ours in {} ({}) never run",
                    default_dir.display(),
                    shadowed.join(", ")
                ),
            )
            .repair(repair.clone())
            .fixed_if(installed),
        );
    }
    // A clone that never ran `enable` (its settings, committed, turn checkpoints on) has none
    // of our hooks: one finding says so, not one per hook.
    if shadowed.is_empty() && states.iter().all(|(_, s)| *s == HookState::Missing) {
        out.push(
            Finding::new(
                Code::HookMissing,
                dir.display().to_string(),
                "this clone has no hooks: run `git entire-checkpoint enable`".to_owned(),
            )
            .repair(repair)
            .fixed_if(installed),
        );
        return Ok(out);
    }
    for (name, state) in states {
        let path = dir.join(&name).display().to_string();
        match state {
            HookState::Missing | HookState::Chain(_) => {
                let chain = match &state {
                    HookState::Chain(runs) => {
                        format!(" (a chain `hooks uninstall` left runs {})", runs.join(", "))
                    }
                    _ => String::new(),
                };
                out.push(
                    Finding::new(
                        Code::HookMissing,
                        path,
                        format!("the {name} hook is not installed{chain}"),
                    )
                    .repair(repair.clone())
                    .fixed_if(installed),
                )
            }
            HookState::Foreign => out.push(
                Finding::new(
                    Code::HookForeign,
                    path,
                    format!("another tool's {name} hook is installed instead of ours"),
                )
                .repair(repair.clone()),
            ),
            HookState::Installed | HookState::Chained(_) | HookState::Managed(_) => {}
        }
    }
    Ok(out)
}
