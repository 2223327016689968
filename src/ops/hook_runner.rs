//! The one hook runner: what every hook of ours shares, whichever tool runs it (git's commit
//! and maintenance hooks, the pre-push hook, an agent's hook).
//!
//! A hook runs inside someone else's command, so the runner owns the rules that keep that
//! command safe: a time budget bounds its network work, it puts back those of our hooks another
//! tool displaced, it says once what awaits the user's approval, and it never fails: every
//! problem becomes a warning in the [`HookReport`] it returns, which the binary prints.

use std::io::Read;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::base::error::error_chain;
use crate::base::id::CheckpointId;
use crate::base::invoker;
use crate::git::refname::CHECKPOINT_REF_PREFIX;
use crate::git::repo::Repo;
use crate::git::subprocess::set_network_deadline;
use crate::ops::capture::{self, Captured};
use crate::ops::commit_hooks::{self, CommitHookError, Condensed};
use crate::ops::gc::{self, GcOutcome, GcReport};
use crate::ops::hooks::{self, Healed, HookError};
use crate::ops::sync::{self, SyncError, Synced};
use crate::ops::trust::{self, Pending};
use crate::remote::checkpoint_remote;
use crate::remote::push::{hook_budget, DRAIN_NOW, HOOK_BUDGET_ENV};
use crate::store::branch::V1_BRANCH_REF;
use crate::topology::Topology;

/// What a hook did, for the binary to print on stderr in this order: the healing, the settings
/// warnings, what awaits approval, then the hook's own outcome. A hook has no error: a failure
/// is [`HookOutcome::Warning`] and the user's command goes on.
pub struct HookReport<T> {
    /// Whether the git command running the hook was given `-q`: the hook's informational lines
    /// are silenced too (its warnings are not).
    pub git_quiet: bool,
    /// Our hooks put back, or why they could not be (`None`: the hook does not heal, or no
    /// repository was found).
    pub healed: Option<Result<Healed, HookError>>,
    /// The checkpoint an earlier commit links that its stopped `post-commit` did not write,
    /// written now ([`commit_hooks::heal_promised`]; `None`: nothing was promised, or this hook
    /// does not heal).
    pub promised: Option<Result<Option<commit_hooks::Healed>, CommitHookError>>,
    /// The settings files' warnings, when this hook opened the repository itself.
    pub settings_warnings: Vec<String>,
    /// What awaits the user's approval, said once.
    pub pending: Option<Pending>,
    /// What the hook did.
    pub outcome: HookOutcome<T>,
}

/// The end of a hook.
pub enum HookOutcome<T> {
    /// It did its work.
    Done(T),
    /// It had nothing to do, for a reason that is information and no problem.
    Skipped(&'static str),
    /// It could not do its work: the warning to print.
    Warning(String),
}

impl<T> HookReport<T> {
    fn new(outcome: HookOutcome<T>) -> Self {
        HookReport {
            git_quiet: false,
            healed: None,
            promised: None,
            settings_warnings: Vec::new(),
            pending: None,
            outcome,
        }
    }
}

/// Bounds a hook's network work: no network git call of this process runs past the hook budget
/// ([`hook_budget`]) counted from `started`, so a stalled remote cannot hold the user's git
/// command. Returns the budget.
fn bound(repo: &Repo, started: Instant) -> Duration {
    let budget = hook_budget(repo);
    log::debug!("hook budget: {}s", budget.as_secs());
    set_network_deadline(started + budget);
    budget
}

/// Whether the git command running this hook was given `-q` (git passes no flag to hooks; its
/// arguments tell).
fn git_quiet() -> bool {
    invoker::invoking_git().is_some_and(|args| invoker::is_quiet(&args))
}

/// The git hooks the installed scripts run, with what each is given.
pub enum GitHook<'a> {
    /// `prepare-commit-msg <file> [<source>]`.
    PrepareCommitMsg {
        /// The commit message file.
        file: &'a Path,
        /// What the message comes from, as git names it.
        source: Option<&'a str>,
    },
    /// `post-commit`.
    PostCommit,
    /// `pre-auto-gc`.
    PreAutoGc,
    /// `post-rewrite`, reading git's list of rewritten commits from `input`.
    PostRewrite {
        /// git's input (`<old> <new>` lines).
        input: &'a mut dyn Read,
    },
}

/// What a git hook did.
pub enum GitHookDone {
    /// The commit message was prepared.
    Prepared,
    /// The commit's staged sessions were condensed.
    Committed(Condensed),
    /// gc ran with this retention in days (`None`: gc is off in the settings).
    Collected(Option<(u32, GcReport)>),
    /// The rewritten commits that keep their link to a checkpoint in the rewrite map.
    Rewritten(Vec<(String, CheckpointId)>),
}

/// Runs the git hook `hook` in `repo`: bounded by the hook budget from now, after healing our
/// hooks. A failure is a warning (`checkpoint hook: <why>`).
pub fn git_hook(repo: &Repo, topo: &Topology<'_>, hook: GitHook<'_>) -> HookReport<GitHookDone> {
    let git_quiet = git_quiet();
    bound(repo, Instant::now());
    let healed = Some(hooks::heal(repo));
    // Before a new commit's message is prepared: the sessions an earlier commit's trailer
    // promised go to that commit's checkpoint, not to this one.
    let promised = matches!(hook, GitHook::PrepareCommitMsg { .. })
        .then(|| commit_hooks::heal_promised(repo, topo))
        .flatten();
    let outcome = match run_git_hook(repo, topo, hook) {
        Ok(done) => HookOutcome::Done(done),
        Err(e) => HookOutcome::Warning(format!("checkpoint hook: {}", error_chain(&*e))),
    };
    HookReport {
        git_quiet,
        healed,
        promised,
        ..HookReport::new(outcome)
    }
}

fn run_git_hook(
    repo: &Repo,
    topo: &Topology<'_>,
    hook: GitHook<'_>,
) -> Result<GitHookDone, Box<dyn std::error::Error>> {
    Ok(match hook {
        GitHook::PrepareCommitMsg { file, source } => {
            commit_hooks::prepare_commit_msg(repo, file, source)?;
            GitHookDone::Prepared
        }
        GitHook::PostCommit => GitHookDone::Committed(commit_hooks::post_commit(repo, topo)?),
        GitHook::PreAutoGc if gc::enabled_in_settings(repo) => {
            match gc::collect(repo, topo, None, false, &|_, _| {})? {
                GcOutcome::Ran { keep_days, report } => {
                    GitHookDone::Collected(Some((keep_days, report)))
                }
                GcOutcome::Off => GitHookDone::Collected(None),
            }
        }
        GitHook::PreAutoGc => GitHookDone::Collected(None),
        GitHook::PostRewrite { input } => {
            let mut text = String::new();
            input.read_to_string(&mut text)?;
            GitHookDone::Rewritten(commit_hooks::post_rewrite(repo, &text)?)
        }
    })
}

/// What the pre-push hook is given: git's arguments and its input.
pub struct PrePush<'a> {
    /// The remote pushed to, as git names it.
    pub remote: Option<String>,
    /// Its URL.
    pub url: Option<String>,
    /// git's input (`<local ref> <sha> <remote ref> <sha>` lines).
    pub input: &'a str,
    /// When the hook started: its budget counts from there.
    pub started: Instant,
}

/// Whether git's pre-push input names a remote ref of ours (the v1 branch or a checkpoint ref).
fn pushes_checkpoint_refs(input: &str) -> bool {
    input.lines().any(|line| {
        line.split(' ')
            .nth(2)
            .is_some_and(|r| r == V1_BRANCH_REF || r.starts_with(CHECKPOINT_REF_PREFIX))
    })
}

/// The pre-push hook: pushes the checkpoint refs queued for the remote git pushes to, before git
/// sends the user's refs. Nothing is pushed when git's push sends checkpoint refs itself, when
/// no remote is named, or on a dry run; trouble is a warning and the refs stay queued.
pub fn pre_push(hook: PrePush<'_>) -> HookReport<Synced> {
    // A push that names checkpoint refs itself (`git push origin entire/checkpoints/v1`,
    // `git push --mirror`): pushing them too would race git for the same remote refs and fail
    // its push. Nothing is wrong: information, not a warning.
    if pushes_checkpoint_refs(hook.input) {
        return HookReport::new(HookOutcome::Skipped(
            "this push sends checkpoint refs itself; the queued ones go with the next push",
        ));
    }
    // As git names them to the hook: the pushed-to remote (or URL) and its URL.
    let given = hook.remote.clone().zip(hook.url.clone());
    let Some(remote) = hook.remote.or(hook.url) else {
        // git always names the remote; a hook manager's configuration may not pass it on
        // (pre-commit hands a hook neither git's arguments nor its input).
        return HookReport::new(HookOutcome::Warning(
            "no remote given, so no checkpoint was pushed: call git entire-prepush with the remote git is pushing to (docs/hooks.md)".to_owned(),
        ));
    };
    // git does not tell a pre-push hook about `--dry-run`; its own arguments do, where the
    // platform shows them (docs/how-it-works.md: elsewhere a dry run pushes them). Nothing is
    // wrong: the user asked for a dry run, so this is information, not a warning.
    if invoker::invoking_git().is_some_and(|args| invoker::is_dry_run_push(&args)) {
        return HookReport::new(HookOutcome::Skipped(
            "dry run: checkpoint refs were not pushed (they stay queued)",
        ));
    }
    let repo = match Repo::discover() {
        Ok(repo) => repo,
        Err(e) => return HookReport::new(HookOutcome::Warning(not_pushed(&e))),
    };
    let git_quiet = git_quiet();
    let budget = bound(&repo, hook.started);
    let healed = Some(hooks::heal(&repo));
    // Before the push: the checkpoint a pushed commit links is written, and goes with it.
    let promised = commit_hooks::promised(&repo)
        .then(|| Topology::open(&repo).ok())
        .flatten()
        .and_then(|topo| commit_hooks::heal_promised(&repo, &topo));
    let settings_warnings = crate::ops::settings::warnings(&repo);
    // A checkpoint remote awaiting approval holds the push, which says so on every push;
    // what else awaits approval is said once.
    let pending = checkpoint_remote::awaiting_approval(&repo)
        .is_none()
        .then(|| trust::pending_once(&repo))
        .flatten();
    let outcome = match push(&repo, &remote, given.as_ref()) {
        Ok(synced) => HookOutcome::Done(synced),
        Err(Failure::Sync(SyncError::NotPushed(n))) if n.timed_out => {
            HookOutcome::Warning(format!(
                "{} (hook budget {}s: set {HOOK_BUDGET_ENV} or strategy_options.{} to change it); {DRAIN_NOW}",
                error_chain(&n),
                budget.as_secs(),
                crate::config::settings::HOOK_BUDGET_SETTING
            ))
        }
        Err(Failure::Sync(e @ (SyncError::NotPushed(_) | SyncError::AwaitingApproval(_)))) => {
            HookOutcome::Warning(error_chain(&e))
        }
        Err(Failure::Sync(e)) => HookOutcome::Warning(not_pushed(&e)),
        Err(Failure::Topology(e)) => HookOutcome::Warning(not_pushed(&e)),
    };
    HookReport {
        git_quiet,
        healed,
        promised,
        settings_warnings,
        pending,
        outcome,
    }
}

/// The warning of a pre-push hook that pushed nothing because of `e`.
fn not_pushed(e: &(dyn std::error::Error + 'static)) -> String {
    format!(
        "checkpoints not pushed (they stay queued for the next push): {}",
        error_chain(e)
    )
}

/// Why the pre-push hook's push failed.
enum Failure {
    Topology(crate::topology::TopologyError),
    Sync(SyncError),
}

/// Pushes what is due for `remote`; when nothing is left due, notes that the push to `given`
/// (remote and URL) was idle, so the next one is quick.
fn push(repo: &Repo, remote: &str, given: Option<&(String, String)>) -> Result<Synced, Failure> {
    let topo = Topology::open(repo).map_err(Failure::Topology)?;
    let v1 = hooks::fast::v1_file(repo);
    let ask = sync::PushAsk {
        via: Some(remote),
        named: false,
        reconcile: false,
        retry_refused: false,
    };
    let synced = sync::push(repo, &topo, ask, &|_, _| {}).map_err(Failure::Sync)?;
    if let (true, Some((remote, url))) = (synced.nothing_left_due(), given) {
        hooks::fast::push_was_idle(repo, remote, url, v1);
    }
    Ok(synced)
}

/// `agent-hook <agent> <event>` ([`capture::run_hook`]): never disturbs the agent; a failure is
/// a warning that says the session is not recorded.
pub fn agent_hook(agent: &str, event: &str, input: impl Read) -> HookReport<Captured> {
    let outcome = match capture::run_hook(agent, event, input) {
        Ok(captured) => HookOutcome::Done(captured),
        Err(e) => HookOutcome::Warning(format!(
            "agent hook {agent} {event}: {}; the session is not recorded (git entire-checkpoint status shows this)",
            error_chain(&e)
        )),
    };
    HookReport::new(outcome)
}
