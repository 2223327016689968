//! `doctor`: checks of the checkpoint namespace, the push bookkeeping, the v1 branch, lock files
//! and hooks, each finding reported with a stable [`Code`], and the repairs `--fix` can make
//! safely.
//!
//! The checks are data: [`default_checks`] returns a list of named functions over a
//! [`Context`], and [`run`] runs any such list, so another check is plugged in by appending one
//! entry. A check that cannot complete reports a [`Code::CheckFailed`] finding instead of
//! stopping the others.
//!
//! What `--fix` may do, and nothing else: enqueue refs for push, drop queue entries whose ref is
//! gone, merge the two case spellings of one checkpoint into one ref (every commit of both stays
//! reachable), replay a disconnected v1 branch onto the push remote's remote-tracking branch
//! (the push recovery, run locally), remove git ref lock files older than [`STALE_AFTER`],
//! install hooks where none is foreign, record a squash's lost links in the local rewrite map,
//! acknowledge dangling links nothing can repair ([`crate::ops::lost_links`]). It never deletes
//! checkpoint data, never rewrites a commit, never uses the network and never pushes, let alone
//! forces. Every check runs offline but the trailer check, which asks
//! the checkpoint remote once (see [`trailers`]); a remote that cannot be asked is a finding,
//! never a failed run.
//!
//! ## "Unpushed" without the network
//! A checkpoint ref is *unqueued and unpushed* when it is not in the shared queue (which every
//! push fans out to every destination) and some destination a push registered has neither the
//! ref in its own queue nor a delivery record listing the ref at its current tip (the record is
//! kept by [`crate::remote::push`]). A destination that no push registered yet is reconciled against
//! the remote's listing at its first push, so it loses nothing; a registered destination without
//! any delivery record (pushed by a version that kept none) is reported once as
//! [`Code::DeliveryUnrecorded`], with `push --all` as the repair.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use git2::Oid;
use serde_json::{json, Value};

use crate::base::error::io_context as io_err;
use crate::base::id::{CheckpointId, IdKind};
use crate::git::refname::{CheckpointRef, ForeignRef, CHECKPOINT_REF_PREFIX};
use crate::git::refs::RefEdit;
use crate::git::repo::{Repo, RepoError};
use crate::model::trailers::{checkpoint_trailers, TrailerValue};
use crate::ops::hooks::{self, HookState};
use crate::ops::lost_links::Acknowledged;
use crate::ops::rewrites::RewriteMap;
use crate::remote::fetch::Fetcher;
use crate::store::branch::{GitBranchStore, V1_BRANCH_REF};
use crate::store::queue::{PushQueue, QueueError};
use crate::store::refs::GitRefsStore;
use crate::store::summary;
use crate::store::{StoreError, StoreKind};
use crate::topology::Topology;

/// A git ref lock file at least this old is left over by a crashed process: git holds one for
/// the milliseconds of a ref update.
pub const STALE_AFTER: Duration = Duration::from_secs(15 * 60);

/// The policy ref other tools write next to the checkpoints; tolerated and ignored.
pub const POLICY_REF: &str = "refs/entire/policies/checkpoint";

/// What a finding is about. The kebab-case names ([`Code::as_str`]) are the stable codes of
/// the JSON output and `docs/doctor.md`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Code {
    /// The repository's format (reftable refs, sha256 objects) is not supported.
    UnsupportedRepo,
    /// The checkpoint settings do not resolve to a topology.
    TopologyInvalid,
    /// A check could not complete.
    CheckFailed,
    /// Both case spellings of one checkpoint's ref exist.
    CaseDuplicate,
    /// A ref under the checkpoint namespace of another design (e.g. `v1/main`, `v2/full/...`).
    ForeignRef,
    /// A `<shard>/<leaf>` ref whose shard does not match its leaf or whose leaf is no ID.
    MalformedRef,
    /// A checkpoint ref whose commit, tree or documents are unreadable or inconsistent.
    CorruptCheckpoint,
    /// A queue entry whose ref no longer exists.
    QueueOrphan,
    /// A checkpoint ref in no queue that a known destination has not confirmed.
    UnqueuedUnpushed,
    /// A destination registered by a push that kept no delivery record.
    DeliveryUnrecorded,
    /// A ULID-named checkpoint on the v1 branch while git-branch is the primary.
    UlidOnV1,
    /// The local v1 branch shares no history with the remote's.
    V1Disconnected,
    /// The policy ref exists (tolerated, ignored).
    PolicyRef,
    /// A git ref lock file under our refs, left by a crashed process.
    StaleLock,
    /// One of our hooks is not installed.
    HookMissing,
    /// Another tool's hook sits where ours should be.
    HookForeign,
    /// `core.hooksPath` points away from the directory our hooks are installed in.
    HooksPathShadowed,
    /// The checkpoint remote also carries code and held more checkpoint refs than the
    /// threshold at its last listing or push (issue 9: every push to it pays for them).
    RemoteRefCount,
    /// `strategy_options.checkpoint_remote` is invalid.
    CheckpointRemoteInvalid,
    /// A commit of the current branch links a checkpoint held neither locally nor on the
    /// remote.
    TrailerDangling,
    /// A commit of the current branch has an `Entire-Checkpoint` trailer that is no ID.
    TrailerMalformed,
    /// A commit of the current branch squashes another branch's commits without the checkpoint
    /// links they carry.
    SquashUnlinked,
    /// A commit of the current branch links a checkpoint held locally that the remote lacks.
    CheckpointUnpushed,
    /// The remote could not be asked which linked checkpoints it holds.
    TrailersUnverified,
    /// The summary index `list` reads is damaged, or holds a record that disagrees with its
    /// checkpoint.
    SummaryIndex,
    /// The committed settings ask for a checkpoint remote or a mirror outside git that the
    /// user has not approved (`trust`): not used until then.
    SettingsUnapproved,
    /// A checkpoint's tree holds session directories its `sessions[]` does not list.
    UnlistedSessions,
}

impl Code {
    /// The stable code.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::UnsupportedRepo => "unsupported-repo",
            Code::TopologyInvalid => "topology-invalid",
            Code::CheckFailed => "check-failed",
            Code::CaseDuplicate => "case-duplicate",
            Code::ForeignRef => "foreign-ref",
            Code::MalformedRef => "malformed-ref",
            Code::CorruptCheckpoint => "corrupt-checkpoint",
            Code::QueueOrphan => "queue-orphan",
            Code::UnqueuedUnpushed => "unqueued-unpushed",
            Code::DeliveryUnrecorded => "delivery-unrecorded",
            Code::UlidOnV1 => "ulid-on-v1",
            Code::V1Disconnected => "v1-disconnected",
            Code::PolicyRef => "policy-ref",
            Code::StaleLock => "stale-lock",
            Code::HookMissing => "hook-missing",
            Code::HookForeign => "hook-foreign",
            Code::HooksPathShadowed => "hooks-path-shadowed",
            Code::RemoteRefCount => "remote-ref-count",
            Code::CheckpointRemoteInvalid => "checkpoint-remote-invalid",
            Code::TrailerDangling => "trailer-dangling",
            Code::TrailerMalformed => "trailer-malformed",
            Code::SquashUnlinked => "squash-unlinked",
            Code::CheckpointUnpushed => "checkpoint-unpushed",
            Code::TrailersUnverified => "trailers-unverified",
            Code::SummaryIndex => "summary-index",
            Code::SettingsUnapproved => "settings-unapproved",
            Code::UnlistedSessions => "unlisted-sessions",
        }
    }

    /// How serious a finding of this code is.
    pub fn severity(self) -> Severity {
        match self {
            Code::UnsupportedRepo
            | Code::TopologyInvalid
            | Code::CheckpointRemoteInvalid
            | Code::CheckFailed
            | Code::CorruptCheckpoint
            | Code::UnqueuedUnpushed
            | Code::V1Disconnected => Severity::Error,
            Code::CaseDuplicate
            | Code::MalformedRef
            | Code::QueueOrphan
            | Code::UlidOnV1
            | Code::StaleLock
            | Code::HookMissing
            | Code::HookForeign
            | Code::HooksPathShadowed
            | Code::RemoteRefCount
            | Code::TrailerDangling
            | Code::TrailerMalformed
            | Code::SquashUnlinked
            | Code::CheckpointUnpushed
            | Code::TrailersUnverified
            | Code::SummaryIndex => Severity::Warning,
            Code::ForeignRef
            | Code::DeliveryUnrecorded
            | Code::PolicyRef
            | Code::SettingsUnapproved
            | Code::UnlistedSessions => Severity::Info,
        }
    }
}

/// How serious a finding is. Errors and warnings are problems (exit 1 while one is unfixed);
/// information is not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// Data is at risk or unreadable.
    Error,
    /// Something will go wrong or is degraded.
    Warning,
    /// Worth knowing; nothing to do.
    Info,
}

impl Severity {
    /// `error`, `warning` or `info`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

/// A command that runs as is: the program and its arguments, never a shell line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command(Vec<String>);

impl Command {
    /// `git entire-checkpoint` followed by `args`.
    pub fn ours<S: Into<String>>(args: impl IntoIterator<Item = S>) -> Self {
        let mut argv = vec!["git".to_owned(), "entire-checkpoint".to_owned()];
        argv.extend(args.into_iter().map(Into::into));
        Command(argv)
    }

    /// `git` followed by `args`.
    pub fn git<S: Into<String>>(args: impl IntoIterator<Item = S>) -> Self {
        Command(
            std::iter::once("git".to_owned())
                .chain(args.into_iter().map(Into::into))
                .collect(),
        )
    }

    /// The program and its arguments.
    pub fn argv(&self) -> &[String] {
        &self.0
    }

    /// The command as a line a POSIX shell runs as is (each word quoted where it must be).
    pub fn shell_line(&self) -> String {
        self.0
            .iter()
            .map(|w| shlex::try_quote(w).map_or_else(|_| w.clone(), |q| q.into_owned()))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// What repairs a finding that `--fix` leaves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Repair {
    /// A command that repairs it, run as is.
    Run(Command),
    /// What a person has to decide or edit: no command repairs it safely.
    Advice(String),
}

/// One thing a check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What it is.
    pub code: Code,
    /// The ref, path or hook it is about.
    pub subject: String,
    /// One line for people.
    pub message: String,
    /// What repairs it when `--fix` does not.
    pub repair: Option<Repair>,
    /// Whether `--fix` repaired it in this run.
    pub fixed: bool,
}

impl Finding {
    /// A finding of `code` about `subject`.
    pub fn new(code: Code, subject: impl Into<String>, message: impl Into<String>) -> Self {
        Finding {
            code,
            subject: subject.into(),
            message: message.into(),
            repair: None,
            fixed: false,
        }
    }

    /// With the command that repairs it.
    pub fn repair(mut self, command: Command) -> Self {
        self.repair = Some(Repair::Run(command));
        self
    }

    /// With what a person must decide or do to repair it: no command does it safely.
    fn advise(mut self, advice: impl Into<String>) -> Self {
        self.repair = Some(Repair::Advice(advice.into()));
        self
    }

    /// A malformed ref's repair is a human decision: say how to look and how to delete.
    fn repair_if_malformed(self, name: &str) -> Self {
        if self.code != Code::MalformedRef {
            return self;
        }
        self.advise(format!(
            "inspect it (git log {name}); delete it with git update-ref -d {name} if it is not needed"
        ))
    }

    /// Marked as repaired when `fixed`.
    pub fn fixed_if(mut self, fixed: bool) -> Self {
        self.fixed = fixed;
        self
    }

    /// Whether this is a problem still present.
    pub fn is_open_problem(&self) -> bool {
        !self.fixed && self.code.severity() != Severity::Info
    }
}

/// Everything one run found.
#[derive(Debug, Default)]
pub struct Report {
    /// In check order.
    pub findings: Vec<Finding>,
}

impl Report {
    /// Problems still present (after fixes).
    pub fn open_problems(&self) -> usize {
        self.findings.iter().filter(|f| f.is_open_problem()).count()
    }

    /// The `--json` document: `{"healthy", "problems", "fixed", "findings": [{"code",
    /// "severity", "subject", "message", "repair", "fixed"}]}`.
    pub fn to_json(&self) -> Value {
        json!({
            "healthy": self.open_problems() == 0,
            "problems": self.open_problems(),
            "fixed": self.findings.iter().filter(|f| f.fixed).count(),
            "findings": self.findings.iter().map(|f| json!({
                "code": f.code.as_str(),
                "severity": f.code.severity().as_str(),
                "subject": f.subject,
                "message": f.message,
                "repair": match &f.repair {
                    Some(Repair::Run(c)) => json!(c.argv()),
                    _ => Value::Null,
                },
                "advice": match &f.repair {
                    Some(Repair::Advice(a)) => json!(a),
                    _ => Value::Null,
                },
                "fixed": f.fixed,
            })).collect::<Vec<_>>(),
        })
    }

    /// One line per finding: `<severity> <code> <subject>: <message>`, then `fixed` or the
    /// repair command.
    pub fn to_human(&self) -> String {
        let mut out = String::new();
        for f in &self.findings {
            out.push_str(&format!(
                "{:<7} {} {}: {}",
                f.code.severity().as_str(),
                f.code.as_str(),
                f.subject,
                f.message
            ));
            if f.fixed {
                out.push_str(" (fixed)");
            } else {
                match &f.repair {
                    Some(Repair::Run(c)) => out.push_str(&format!(" (repair: {})", c.shell_line())),
                    Some(Repair::Advice(a)) => out.push_str(&format!(" (to repair: {a})")),
                    None => {}
                }
            }
            out.push('\n');
        }
        out
    }

    /// The report of a repository that cannot be opened because of its format, if that is why.
    pub fn unsupported(err: &RepoError) -> Option<Report> {
        match err {
            RepoError::Unsupported(why) => Some(Report {
                findings: vec![Finding::new(Code::UnsupportedRepo, ".", why.clone())],
            }),
            _ => None,
        }
    }
}

/// Why a check could not complete (reported as [`Code::CheckFailed`]).
#[derive(Debug, thiserror::Error)]
pub enum DoctorError {
    /// Reading or writing the repository failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A queue file failed.
    #[error(transparent)]
    Queue(#[from] QueueError),
    /// The repository failed underneath.
    #[error(transparent)]
    Repo(#[from] RepoError),
    /// git could not be run.
    #[error(transparent)]
    Git(#[from] crate::git::subprocess::GitError),
    /// Installing hooks failed.
    #[error(transparent)]
    Hooks(#[from] hooks::HookError),
    /// A file operation failed.
    #[error(transparent)]
    Io(#[from] crate::base::error::IoError),
    /// The rewrite map could not be read or written.
    #[error(transparent)]
    RewriteMap(#[from] crate::ops::rewrites::RewriteMapError),
}

/// What every check sees.
pub struct Context<'r> {
    /// The repository.
    pub repo: &'r Repo,
    /// The topology, when the settings resolve.
    pub topology: Option<Topology<'r>>,
    /// Whether to repair what can be repaired safely.
    pub fix: bool,
}

/// A check: findings about the repository, repaired first when `cx.fix` allows it.
pub type CheckFn = fn(&Context<'_>) -> Result<Vec<Finding>, DoctorError>;

/// A named check.
#[derive(Clone, Copy)]
pub struct Check {
    /// Shown when the check fails to complete.
    pub name: &'static str,
    /// The check.
    pub run: CheckFn,
}

/// The built-in checks, in the order they run: repairs of refs come before the queue checks
/// that depend on which refs exist.
pub fn default_checks() -> Vec<Check> {
    vec![
        Check {
            name: "case duplicates",
            run: case_duplicates,
        },
        Check {
            name: "namespace",
            run: namespace,
        },
        Check {
            name: "checkpoint documents",
            run: corrupt_checkpoints,
        },
        Check {
            name: "queue orphans",
            run: queue_orphans,
        },
        Check {
            name: "unqueued refs",
            run: unqueued_unpushed,
        },
        Check {
            name: "v1 branch",
            run: v1_branch,
        },
        Check {
            name: "policy ref",
            run: policy_ref,
        },
        Check {
            name: "lock files",
            run: stale_locks,
        },
        Check {
            name: "hooks",
            run: hook_checks,
        },
        Check {
            name: "checkpoint remote",
            run: remote_ref_count,
        },
        Check {
            name: "summary index",
            run: summary_index,
        },
        Check {
            name: "settings approval",
            run: settings_approval,
        },
        // Before the trailers: a squash re-linked by --fix is checked like any other link.
        Check {
            name: "squashes",
            run: squashes,
        },
        // Last: its fetch moves the remote-tracking v1 branch the v1 check compares with.
        Check {
            name: "trailers",
            run: trailers,
        },
    ]
}

/// Runs `checks` over `repo` (repairing when `fix`), in order.
pub fn run(repo: &Repo, checks: &[Check], fix: bool) -> Report {
    let mut report = Report::default();
    let topology = match Topology::open(repo) {
        Ok(t) => Some(t),
        Err(e) => {
            report.findings.push(
                Finding::new(
                    Code::TopologyInvalid,
                    ".entire/settings.json",
                    crate::base::error::error_chain(&e),
                )
                .advise("fix the checkpoints block of .entire/settings.json"),
            );
            None
        }
    };
    let cx = Context {
        repo,
        topology,
        fix,
    };
    for check in checks {
        match (check.run)(&cx) {
            Ok(found) => report.findings.extend(found),
            Err(e) => report.findings.push(Finding::new(
                Code::CheckFailed,
                check.name,
                crate::base::error::error_chain(&e),
            )),
        }
    }
    report
}

fn git_err(context: impl Into<String>) -> impl FnOnce(git2::Error) -> DoctorError {
    let f = crate::store::git_err(context);
    move |e| DoctorError::Store(f(e))
}

/// Every ref under the checkpoint namespace: the parsed ones with their tips, and the others
/// with why they do not parse (`None` for a symbolic ref).
struct Namespace {
    refs: Vec<(CheckpointRef, Oid)>,
    foreign: Vec<(String, Option<ForeignRef>)>,
}

fn scan(repo: &Repo) -> Result<Namespace, DoctorError> {
    let mut ns = Namespace {
        refs: Vec::new(),
        foreign: Vec::new(),
    };
    for (name, target) in repo.refs_under(CHECKPOINT_REF_PREFIX)? {
        match (CheckpointRef::parse(&name), target) {
            (Ok(parsed), Some(oid)) => ns.refs.push((parsed, oid)),
            (Ok(_), None) => ns.foreign.push((name, None)),
            (Err(why), _) => ns.foreign.push((name, Some(why))),
        }
    }
    Ok(ns)
}

/// `case-duplicate`: both spellings of one ID. The fix keeps the canonical ref and makes the
/// other tip its ancestor (a fast-forward when one contains the other, else a merge commit whose
/// tree is the semantic merge of both), then deletes the other spelling by compare-and-swap:
/// every commit of both stays reachable from the canonical ref, which is queued for push.
fn case_duplicates(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let ns = scan(cx.repo)?;
    let mut by_id: BTreeMap<CheckpointId, Vec<(CheckpointRef, Oid)>> = BTreeMap::new();
    for (r, oid) in ns.refs {
        by_id.entry(r.id().clone()).or_default().push((r, oid));
    }
    let mut out = Vec::new();
    for (id, spellings) in by_id {
        let (Some(canon), Some(folded)) = (
            spellings.iter().find(|(r, _)| r.is_canonical()),
            spellings.iter().find(|(r, _)| !r.is_canonical()),
        ) else {
            continue;
        };
        let finding = Finding::new(
            Code::CaseDuplicate,
            canon.0.name(),
            format!(
                "checkpoint {id} has two refs, {} and {}; reads see only the first",
                canon.0.name(),
                folded.0.name()
            ),
        )
        .repair(Command::ours(["doctor", "--fix"]));
        let fixed = cx.fix && collapse(cx.repo, &id, canon, folded)?;
        out.push(finding.fixed_if(fixed));
    }
    Ok(out)
}

/// Makes `folded`'s tip reachable from `canon`'s ref, then deletes `folded`. `Ok(false)` when a
/// ref moved meanwhile (nothing is lost; the next run tries again).
fn collapse(
    repo: &Repo,
    id: &CheckpointId,
    canon: &(CheckpointRef, Oid),
    folded: &(CheckpointRef, Oid),
) -> Result<bool, DoctorError> {
    let git = &repo.git;
    let (c, f) = (canon.1, folded.1);
    let target = if c == f || git.graph_descendant_of(c, f).unwrap_or(false) {
        c
    } else if git.graph_descendant_of(f, c).unwrap_or(false) {
        f
    } else {
        let ours = git.find_commit(c).map_err(git_err("read canonical tip"))?;
        let theirs = git.find_commit(f).map_err(git_err("read folded tip"))?;
        let merged = crate::store::merge::merge_trees(
            git,
            id,
            &ours.tree().map_err(git_err("read canonical tree"))?,
            &theirs.tree().map_err(git_err("read folded tree"))?,
            "",
            &repo.settings().limits(),
        )?;
        let tree = git
            .find_tree(merged.tree)
            .map_err(git_err("read merged tree"))?;
        let committer = repo.signature(&repo.identity("COMMITTER"), "COMMITTER")?;
        let author = repo.signature(&repo.identity("AUTHOR"), "AUTHOR")?;
        let message = format!(
            "Checkpoint: {id}\n\nMerge {} into {} (doctor --fix)\n",
            folded.0.name(),
            canon.0.name()
        );
        git.commit(
            None,
            &author,
            &committer,
            &message,
            &tree,
            &[&ours, &theirs],
        )
        .map_err(git_err("write merge commit"))?
    };
    if target != c
        && repo
            .set_ref_matching(
                canon.0.name(),
                target,
                Some(c),
                "entire: doctor --fix: collapse case spellings",
            )
            .is_err()
    {
        return Ok(false);
    }
    let delete = RefEdit::Delete {
        name: folded.0.name().to_owned(),
        old: f,
    };
    let deleted = repo.update_refs(&[delete], "entire: doctor --fix: collapse case spellings");
    // On a case-insensitive filesystem the deletion can take the canonical loose file with it:
    // put the canonical ref back (its target is known) before anything else runs.
    if crate::store::publish::tip_of(repo, canon.0.name())?.is_none() {
        repo.set_ref_matching(
            canon.0.name(),
            target,
            None,
            "entire: doctor --fix: restore",
        )
        .map_err(StoreError::from)?;
    }
    match deleted {
        Ok(()) => {}
        Err(e) if e.lost_race() => return Ok(false),
        Err(e) => return Err(StoreError::from(e).into()),
    }
    PushQueue::in_common_dir(repo.common_dir()).enqueue(canon.0.name())?;
    Ok(true)
}

/// `foreign-ref` and `malformed-ref`: refs under the namespace that are not checkpoint refs.
/// A ref whose last component is a checkpoint ID but whose path is not `<shard>/<id>` is
/// malformed (a mistake); anything else is another design's layout or an ID format this version
/// does not know. Reported only; never touched (docs/decisions.md, "Foreign refs are never
/// touched").
fn namespace(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    Ok(scan(cx.repo)?
        .foreign
        .into_iter()
        .map(|(name, why)| {
            let leaf = name.rsplit('/').next().unwrap_or_default();
            match why {
                None => Finding::new(
                    Code::MalformedRef,
                    &name,
                    "a symbolic ref in the checkpoint namespace; ignored, never pushed",
                ),
                Some(why @ ForeignRef::BadShape(_)) if CheckpointId::parse(leaf).is_ok() => {
                    Finding::new(
                        Code::MalformedRef,
                        &name,
                        format!("{why}; ignored, never pushed or deleted"),
                    )
                }
                Some(_) => Finding::new(
                    Code::ForeignRef,
                    &name,
                    "not a checkpoint ref of this version (another layout or ID format); ignored, never pushed or deleted",
                ),
            }
            .repair_if_malformed(&name)
        })
        .collect())
}

/// `corrupt-checkpoint`: the tip commit, its tree or the documents are unreadable, or the
/// summary names another checkpoint than the ref; and `unlisted-sessions` (information): the
/// tree holds session directories `sessions[]` does not list (readers show them after the
/// listed ones), for checkpoint refs and the v1 branch (local, and each remote's copy).
fn corrupt_checkpoints(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let mut out = Vec::new();
    for (r, oid) in scan(cx.repo)?.refs {
        match checkpoint_problem(cx.repo, r.id(), oid) {
            Err(why) => out.push(Finding::new(Code::CorruptCheckpoint, r.name(), why)),
            Ok(unlisted) => out.extend(unlisted_finding(r.name(), r.id(), &unlisted)),
        }
    }
    // The v1 branch as reads see it: the local branch and each remote's copy (a fresh clone
    // has only the latter), each checkpoint version once.
    let branches = std::iter::once(V1_BRANCH_REF.to_owned()).chain(
        cx.repo
            .remote_names()
            .iter()
            .map(|r| format!("refs/remotes/{r}/entire/checkpoints/v1")),
    );
    let git = &cx.repo.git;
    let mut seen = HashSet::new();
    for branch in branches {
        let Some(tip) = crate::store::publish::tip_of(cx.repo, &branch)? else {
            continue;
        };
        let Ok(root) = git.find_commit(tip).and_then(|c| c.tree()) else {
            continue;
        };
        for e in crate::store::branch::v1_subtrees(cx.repo, &root)? {
            let (Ok(id), Ok(tree)) = (CheckpointId::parse(&e.raw_id), git.find_tree(e.tree)) else {
                continue;
            };
            if !seen.insert(e.tree) {
                continue;
            }
            let limits = cx.repo.settings().limits();
            if let Ok(Some(docs)) = crate::store::tree::read_documents(git, &tree, &id, &limits) {
                let dirs: Vec<String> = docs.unlisted.into_iter().map(|(d, _)| d).collect();
                out.extend(unlisted_finding(
                    &format!("{branch}:{}", e.path),
                    &id,
                    &dirs,
                ));
            }
        }
    }
    Ok(out)
}

/// The `unlisted-sessions` finding of checkpoint `id` (at `subject`) whose tree holds the
/// session directories `dirs` that `sessions[]` does not list, if any.
fn unlisted_finding(subject: &str, id: &CheckpointId, dirs: &[String]) -> Option<Finding> {
    (!dirs.is_empty()).then(|| {
        let names: Vec<String> = dirs.iter().map(|d| format!("{d}/")).collect();
        Finding::new(
            Code::UnlistedSessions,
            subject,
            format!(
                "checkpoint {id} holds session directories its sessions[] does not list ({}); they are shown after the listed sessions",
                names.join(", ")
            ),
        )
    })
}

/// Why the checkpoint ref of `id` at `tip` is corrupt (`Err`), else the session directories
/// its tree holds that `sessions[]` does not list.
fn checkpoint_problem(repo: &Repo, id: &CheckpointId, tip: Oid) -> Result<Vec<String>, String> {
    if let Some(why) = crate::store::refs::shape_problem(repo, id, tip) {
        return Err(why);
    }
    let git = &repo.git;
    let Ok(tree) = git.find_commit(tip).and_then(|c| c.tree()) else {
        return Ok(Vec::new());
    };
    let Ok(Some(docs)) =
        crate::store::tree::read_documents(git, &tree, id, &repo.settings().limits())
    else {
        return Ok(Vec::new());
    };
    if docs.summary.checkpoint_id != id.as_str() {
        return Err(format!(
            "metadata.json names checkpoint {:?}, the ref names {id}",
            docs.summary.checkpoint_id
        ));
    }
    Ok(docs.unlisted.into_iter().map(|(d, _)| d).collect())
}

/// Every queue doctor knows: the shared one, then each registered destination's.
fn queues(repo: &Repo) -> Vec<(String, PushQueue)> {
    let mut out = vec![(
        "the shared queue".to_owned(),
        PushQueue::in_common_dir(repo.common_dir()),
    )];
    out.extend(
        crate::remote::destination::destination_books(repo)
            .into_iter()
            .map(|b| (format!("the queue of {}", b.display), b.queue)),
    );
    out
}

/// `queue-orphan`: queued refs that no longer exist. The fix drops exactly those entries.
fn queue_orphans(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let mut out = Vec::new();
    for (what, queue) in queues(cx.repo) {
        let mut gone = Vec::new();
        for name in queue.peek()? {
            if crate::store::publish::tip_of(cx.repo, &name)?.is_none() {
                gone.push(name);
            }
        }
        if cx.fix {
            queue.remove(&gone)?;
        }
        out.extend(gone.into_iter().map(|name| {
            Finding::new(
                Code::QueueOrphan,
                &name,
                format!("queued in {what} but the ref no longer exists"),
            )
            .repair(Command::ours(["doctor", "--fix"]))
            .fixed_if(cx.fix)
        }));
    }
    Ok(out)
}

/// `unqueued-unpushed` and `delivery-unrecorded` (see the module docs for what "unpushed" means
/// offline). The fix enqueues the refs in the shared queue, which the next push fans out to every
/// destination.
fn unqueued_unpushed(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let books = crate::remote::destination::destination_books(cx.repo);
    let mut out = Vec::new();
    // The shared queue is fanned out to every destination; a destination's own queue and
    // record cover that destination only.
    let announced: HashSet<String> = PushQueue::in_common_dir(cx.repo.common_dir())
        .peek()?
        .into_iter()
        .collect();
    let mut recorded: Vec<(&str, HashSet<String>, &HashMap<String, Oid>)> = Vec::new();
    for b in &books {
        match &b.delivered {
            Some(d) => recorded.push((&b.display, b.queue.peek()?.into_iter().collect(), d)),
            None => out.push(
                Finding::new(
                    Code::DeliveryUnrecorded,
                    &b.display,
                    "pushed to before deliveries were recorded; doctor cannot tell what it lacks",
                )
                .repair(Command::ours(["push", b.display.as_str(), "--all"])),
            ),
        }
    }
    let mut missing: Vec<(String, Vec<&str>)> = Vec::new();
    for (r, oid) in scan(cx.repo)?.refs {
        if announced.contains(r.name()) {
            continue;
        }
        let lacking: Vec<&str> = recorded
            .iter()
            .filter(|(_, queued, d)| !queued.contains(r.name()) && d.get(r.name()) != Some(&oid))
            .map(|(display, _, _)| *display)
            .collect();
        if !lacking.is_empty() {
            missing.push((r.name().to_owned(), lacking));
        }
    }
    if cx.fix {
        let names: Vec<String> = missing.iter().map(|(n, _)| n.clone()).collect();
        PushQueue::in_common_dir(cx.repo.common_dir()).enqueue_all(&names)?;
    }
    out.extend(missing.into_iter().map(|(name, lacking)| {
        Finding::new(
            Code::UnqueuedUnpushed,
            name,
            format!(
                "in no push queue and not delivered to {}",
                lacking.join(", ")
            ),
        )
        .repair(Command::ours(["push", "--all"]))
        .fixed_if(cx.fix)
    }));
    Ok(out)
}

/// `ulid-on-v1` (under a git-branch primary) and `v1-disconnected` (the local branch and a
/// remote-tracking one share no commit). The fix replays the local commits onto the
/// remote-tracking tip of the push remote with the push recovery's merge, locally (no network,
/// no push, no force), so the next push is a fast-forward; other remotes are only reported, as
/// the branch can descend from one unrelated history at a time.
fn v1_branch(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let repo = cx.repo;
    let Some(local) = crate::store::publish::tip_of(repo, V1_BRANCH_REF)? else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    if cx
        .topology
        .as_ref()
        .is_some_and(|t| t.primary() == StoreKind::GitBranch)
    {
        let commit = repo
            .git
            .find_commit(local)
            .map_err(git_err("read the v1 tip"))?;
        let tree = commit.tree().map_err(git_err("read the v1 tree"))?;
        for e in crate::store::branch::v1_subtrees(repo, &tree)? {
            if crate::base::id::kind_of(&e.raw_id) == Some(IdKind::Ulid) {
                out.push(Finding::new(
                    Code::UlidOnV1,
                    format!("{V1_BRANCH_REF}:{}", e.path),
                    format!(
                        "checkpoint {} is a ULID on the v1 branch, which the git-branch primary never writes; clients that only know hex IDs cannot read it",
                        e.raw_id
                    ),
                ));
            }
        }
    }
    let push_remote = crate::remote::destination::default_remote(repo);
    for remote in repo.remote_names() {
        let tracking = format!("refs/remotes/{remote}/entire/checkpoints/v1");
        let Some(theirs) = crate::store::publish::tip_of(repo, &tracking)? else {
            continue;
        };
        if repo.git.merge_base(local, theirs).is_ok() {
            continue;
        }
        let fixed = cx.fix
            && push_remote.as_deref() == Some(remote.as_str())
            && crate::remote::push::replay_v1_onto(repo, local, theirs)?.is_ok();
        out.push(
            Finding::new(
                Code::V1Disconnected,
                V1_BRANCH_REF,
                format!("shares no history with {tracking}; a plain push would be refused"),
            )
            .repair(Command::ours(["push", remote.as_str()]))
            .fixed_if(fixed),
        );
    }
    Ok(out)
}

/// `policy-ref`: informational.
fn policy_ref(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    Ok(crate::store::publish::tip_of(cx.repo, POLICY_REF)?
        .map(|_| {
            Finding::new(
                Code::PolicyRef,
                POLICY_REF,
                "another tool's policy ref; tolerated and ignored",
            )
        })
        .into_iter()
        .collect())
}

/// `remote-ref-count` (from [`crate::remote::scale::warning`], offline: the count recorded at the last
/// listing or push) and `checkpoint-remote-invalid`. Nothing to fix locally: the advice names
/// the settings and server options that remove the cost.
fn remote_ref_count(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let target = match crate::remote::checkpoint_remote::resolve(cx.repo, None) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(Vec::new()),
        Err(e) => {
            // The file that sets it: the per-clone one wins over the committed one.
            let file = cx
                .repo
                .settings()
                .strategy_option(crate::remote::checkpoint_remote::SETTING)
                .map_or_else(|| ".entire/settings.json".to_owned(), |(_, _, file)| file);
            return Ok(vec![Finding::new(
                Code::CheckpointRemoteInvalid,
                file,
                crate::base::error::error_chain(&e),
            )]);
        }
    };
    Ok(crate::remote::scale::warning(cx.repo, &target)
        .map(|message| Finding::new(Code::RemoteRefCount, target.display.clone(), message))
        .into_iter()
        .collect())
}

/// What the committed settings ask for that awaits the user's approval (`trust`): information
/// and the command, never a problem (a contributor may rightly never approve an upstream's
/// checkpoint remote).
fn settings_approval(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    Ok(crate::ops::trust::pending(cx.repo)
        .into_iter()
        .map(|p| {
            Finding::new(Code::SettingsUnapproved, p.file.clone(), p.to_string()).advise(
                "review what it asks for with `git entire-checkpoint trust --dry-run`, approve it with `git entire-checkpoint trust`",
            )
        })
        .collect())
}

/// `summary-index`: the summary index (`store::summary`) is damaged, which `list` notices,
/// ignores and repairs by itself, or holds records for current tips that disagree with their
/// checkpoints, which `list` would print. The fix deletes the file: it holds nothing that is
/// not recomputed, and the next `list` writes it again.
fn summary_index(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
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
fn stale_locks(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let common = cx.repo.common_dir();
    let mut locks = Vec::new();
    collect_locks(&common.join(CHECKPOINT_REF_PREFIX), &mut locks)?;
    let v1_lock = common.join(format!("{V1_BRANCH_REF}.lock"));
    if v1_lock.is_file() {
        locks.push(v1_lock);
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
fn hook_checks(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
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

/// The `strategy_options` key bounding how many commits of the current branch the trailer check
/// reads.
pub const TRAILER_DEPTH_SETTING: &str = "doctor_trailer_depth";

/// How many commits the trailer check reads without the setting.
pub const DEFAULT_TRAILER_DEPTH: usize = 1000;

/// The most commits the trailer check reads whatever the setting says: a committed settings
/// file is untrusted and must not make doctor read an unbounded history.
pub const MAX_TRAILER_DEPTH: usize = 100_000;

/// `strategy_options.doctor_trailer_depth` clamped to [`MAX_TRAILER_DEPTH`] when it is a whole
/// number (0 reads no commit), else [`DEFAULT_TRAILER_DEPTH`].
pub fn trailer_depth(repo: &Repo) -> usize {
    repo.settings()
        .strategy_option(TRAILER_DEPTH_SETTING)
        .and_then(|(v, _, _)| v.as_u64())
        .map_or(DEFAULT_TRAILER_DEPTH, |n| {
            usize::try_from(n).map_or(MAX_TRAILER_DEPTH, |n| n.min(MAX_TRAILER_DEPTH))
        })
}

/// One commit's link to one checkpoint.
struct Link {
    /// The commit's full SHA.
    sha: String,
    /// The commit's short SHA.
    commit: String,
    /// Its subject line.
    subject: String,
    id: CheckpointId,
    /// Whether the commit is `HEAD`, whose post-commit hook can still run.
    head: bool,
}

/// The links of the last `depth` commits of the current branch (newest first), through their
/// trailers and the rewrite map as `show <commit>` reads them, and a `trailer-malformed`
/// finding for each trailer that is no ID. An unborn branch has none.
fn history_links(repo: &Repo, depth: usize) -> Result<(Vec<Link>, Vec<Finding>), DoctorError> {
    let mut findings = Vec::new();
    // A map that cannot be read loses only the links it holds: say so and read the trailers.
    let map = RewriteMap::load(repo)
        .map_err(|e| {
            findings.push(Finding::new(
                Code::CheckFailed,
                "trailers",
                crate::base::error::error_chain(&e),
            ))
        })
        .ok();
    let mut links = Vec::new();
    let mut walk = repo.git.revwalk().map_err(git_err("walk the branch"))?;
    let Some(head) = repo.resolve_commit("HEAD") else {
        return Ok((links, findings));
    };
    walk.push(head).map_err(git_err("walk the branch"))?;
    walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)
        .map_err(git_err("walk the branch"))?;
    for (n, oid) in walk.take(depth).enumerate() {
        let oid = oid.map_err(git_err("walk the branch"))?;
        let commit = repo
            .git
            .find_commit(oid)
            .map_err(git_err("read a commit"))?;
        let message = String::from_utf8_lossy(commit.message_bytes());
        let short = commit.as_object().short_id().map_or_else(
            |_| oid.to_string(),
            |b| String::from_utf8_lossy(&b).into_owned(),
        );
        let subject = String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default());
        let trailers = checkpoint_trailers(&message);
        for t in &trailers {
            if let TrailerValue::Malformed(token) = t {
                findings.push(Finding::new(
                    Code::TrailerMalformed,
                    &short,
                    format!("{subject:?} has the Entire-Checkpoint trailer {token:?}, which is no checkpoint ID; readers ignore it"),
                ));
            }
        }
        let inherited = map.as_ref().and_then(|m| m.get(&oid.to_string()));
        links.extend(
            crate::ops::rewrites::links_of(trailers, inherited)
                .into_iter()
                .map(|id| Link {
                    sha: oid.to_string(),
                    commit: short.clone(),
                    subject: subject.clone().into_owned(),
                    id,
                    head: n == 0,
                }),
        );
    }
    Ok((links, findings))
}

/// Whether a remote-tracking branch holds `commit`: it was pushed, and rewriting it would need
/// a force-push.
fn published(repo: &Repo, commit: Oid) -> bool {
    let Ok(refs) = repo.refs_under("refs/remotes/") else {
        return true;
    };
    refs.into_iter()
        .filter_map(|(_, tip)| tip)
        .any(|tip| tip == commit || repo.git.graph_descendant_of(tip, commit).unwrap_or(true))
}

/// `squash-unlinked`: commits of the current branch's last commits ([`TRAILER_DEPTH_SETTING`])
/// that squash a branch's commits without their links ([`crate::ops::lost_links`]). `--fix`
/// records the links in the local rewrite map, as `post-rewrite` does for a rewrite our hooks
/// see, so `show` and `blame` of the squash read them here; the repair that reaches every clone
/// is carrying them in the commit, which is only offered while it is `HEAD` and unpushed.
fn squashes(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let depth = trailer_depth(cx.repo);
    let (links, _) = history_links(cx.repo, depth)?;
    let linked: HashSet<CheckpointId> = links.into_iter().map(|l| l.id).collect();
    let map = RewriteMap::load(cx.repo).ok();
    let found = crate::ops::lost_links::lost_squashes(cx.repo, map.as_ref(), &linked, depth)?;
    let head = cx.repo.resolve_commit("HEAD");
    let mut out = Vec::new();
    for squash in found {
        let commit = cx
            .repo
            .git
            .find_commit(squash.commit)
            .map_err(git_err("read a commit"))?;
        let subject = String::from_utf8_lossy(commit.summary_bytes().unwrap_or_default());
        let short = commit.as_object().short_id().map_or_else(
            |_| squash.commit.to_string(),
            |b| String::from_utf8_lossy(&b).into_owned(),
        );
        let ids: Vec<&str> = squash.lost.iter().map(CheckpointId::as_str).collect();
        let mut finding = Finding::new(
            Code::SquashUnlinked,
            &short,
            format!(
                "{subject:?} squashes {} linked commit(s) of {} without their links: it drops checkpoint(s) {}",
                squash.squashed.len(),
                squash.branch,
                ids.join(", ")
            ),
        );
        if cx.fix {
            let trailers =
                crate::ops::rewrites::links(&String::from_utf8_lossy(commit.message_bytes()), None);
            let rewrites: Vec<crate::ops::rewrites::Rewrite> = squash
                .squashed
                .iter()
                .map(|(old, old_links)| crate::ops::rewrites::Rewrite {
                    old: old.to_string(),
                    new: squash.commit.to_string(),
                    old_links: old_links.clone(),
                    new_trailers: trailers.clone(),
                })
                .collect();
            crate::ops::rewrites::record(cx.repo, &rewrites)?;
            finding.message +=
                "; re-linked in this clone's rewrite map, which show and blame follow";
            out.push(finding.fixed_if(true));
            continue;
        }
        finding = if head == Some(squash.commit) && !published(cx.repo, squash.commit) {
            let mut argv = vec!["commit".to_owned(), "--amend".into(), "--no-edit".into()];
            for id in &ids {
                argv.push("--trailer".into());
                argv.push(format!("Entire-Checkpoint: {id}"));
            }
            finding.repair(Command::git(argv))
        } else {
            finding.advise(format!(
                "git entire-checkpoint doctor --fix re-links them in this clone (show and blame follow the rewrite map); elsewhere each is read by its ID (git entire-checkpoint show {})",
                ids[0]
            ))
        };
        out.push(finding);
    }
    Ok(out)
}

/// The repair of a `trailer-dangling` link. The link dangles when the commit's post-commit hook
/// did not run (a hook manager or another tool displaced ours) or the checkpoint was lost. For
/// `HEAD` with sessions still staged, running the post-commit hook writes them under the
/// trailer's ID; an older commit's sessions went into a later commit's checkpoint (or were never
/// staged), so what is left to repair is the hook that did not run: re-installing ours.
struct DanglingRepair {
    /// Sessions are staged in this work tree.
    staged: bool,
    /// Our post-commit hook is not the one git runs.
    hook_displaced: bool,
    /// The command that re-installs ours.
    install: Command,
}

impl DanglingRepair {
    fn new(repo: &Repo) -> Self {
        let staged = crate::ops::session::SessionStore::new(repo)
            .pending_here()
            .is_ok_and(|p| !p.is_empty());
        // Only a foreign hook displaced ours; with none at all, the trailer came from elsewhere.
        let hook_displaced = crate::ops::hooks::status(repo).iter().any(|(name, state)| {
            name == "post-commit" && *state == crate::ops::hooks::HookState::Foreign
        });
        DanglingRepair {
            staged,
            hook_displaced,
            install: Command::ours(crate::ops::hooks::install_args(repo)),
        }
    }

    fn apply(&self, mut finding: Finding, link: &Link) -> Finding {
        if link.head && self.staged {
            finding.message += "; its sessions are still staged, and the post-commit hook writes them under that ID";
            return finding.repair(Command::ours(["hook", "post-commit"]));
        }
        if self.hook_displaced {
            finding.message += ": our post-commit hook is not the one git runs, so the commit's sessions went into a later checkpoint or were not recorded";
            return finding.repair(self.install.clone());
        }
        finding.message += ": the sessions it recorded cannot be read from it";
        finding.advise(ACKNOWLEDGE_ADVICE)
    }
}

/// The advice on a dangling link nothing here can repair; `--fix` acknowledges it.
const ACKNOWLEDGE_ADVICE: &str = "push it from a clone that holds it, or acknowledge it as lost with git entire-checkpoint doctor --fix";

/// What the remote holds, as far as one listing and one branch fetch could tell.
struct RemoteHoldings<'r> {
    /// The remote as shown.
    display: String,
    /// The IDs of its checkpoint refs; `None` when the listing failed or was not needed.
    refs: Option<HashSet<CheckpointId>>,
    /// Its v1 branch as fetched; `None` when the fetch failed or was not needed.
    branch: Option<GitBranchStore<'r>>,
    /// Why the remote could not be asked.
    failure: Option<String>,
}

impl RemoteHoldings<'_> {
    /// Whether the remote holds `id` wherever routing would look for it (`order`); `None` when
    /// a place that could hold it could not be asked.
    fn holds(&self, id: &CheckpointId, order: &[StoreKind]) -> Result<Option<bool>, DoctorError> {
        let mut unknown = false;
        for kind in order {
            let held = match kind {
                StoreKind::GitRefs => self.refs.as_ref().map(|r| r.contains(id)),
                StoreKind::GitBranch => self
                    .branch
                    .as_ref()
                    .map(|b| b.remote_holds(id))
                    .transpose()?,
            };
            match held {
                Some(true) => return Ok(Some(true)),
                Some(false) => {}
                None => unknown = true,
            }
        }
        Ok((!unknown).then_some(false))
    }
}

/// Asks the checkpoint remote about the places `orders` route to: one `ls-remote` when an ID
/// routes to refs, one fetch of its v1 branch into the remote-tracking ref when one routes to
/// the branch (skipped once the remote failed, so an unreachable remote costs one deadline).
fn ask_remote<'r>(
    repo: &'r Repo,
    target: &crate::remote::checkpoint_remote::CheckpointTarget,
    orders: &[Vec<StoreKind>],
) -> Result<RemoteHoldings<'r>, DoctorError> {
    let needs = |kind| orders.iter().any(|o| o.contains(&kind));
    let mut out = RemoteHoldings {
        display: target.display.clone(),
        refs: None,
        branch: None,
        failure: None,
    };
    let fetcher = Fetcher::new(repo, target.target.clone());
    if needs(StoreKind::GitRefs) {
        match fetcher.list_remote() {
            Ok(refs) => out.refs = Some(refs.into_iter().map(|r| r.id().clone()).collect()),
            Err(e) => out.failure = Some(e.reason()),
        }
    }
    if needs(StoreKind::GitBranch) && out.failure.is_none() {
        let mut branch = GitBranchStore::mirror(repo);
        branch.set_remote(crate::remote::on_demand::remote_copy(
            repo,
            &target.target,
            Some(fetcher.sibling()),
        ));
        match branch.refresh_remote() {
            Ok(_) => out.branch = Some(branch),
            Err(StoreError::Fetch(e)) => out.failure = Some(e.reason()),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

/// `trailer-malformed`, `trailer-dangling`, `checkpoint-unpushed` and `trailers-unverified`:
/// the links of the current branch's last commits ([`TRAILER_DEPTH_SETTING`]) checked against
/// what is held locally (read through the topology's routing: refs, the local v1 branch, the
/// remote's copy of it) and what the checkpoint remote holds (asked once, see [`ask_remote`]).
/// The remote is asked first, so a local copy it no longer has is not counted. A link the
/// remote could not be asked about is neither dangling nor unpushed: one `trailers-unverified`
/// finding counts them. A dangling link cannot be brought back: `--fix` acknowledges those with
/// no repair to run (recorded locally, never reported again), and pushing is the named repair of
/// an unpushed one.
fn trailers(cx: &Context<'_>) -> Result<Vec<Finding>, DoctorError> {
    let Some(topology) = &cx.topology else {
        return Ok(Vec::new());
    };
    let (links, mut out) = history_links(cx.repo, trailer_depth(cx.repo))?;
    if links.is_empty() {
        return Ok(out);
    }
    let mut ids: Vec<&CheckpointId> = links.iter().map(|l| &l.id).collect();
    ids.sort();
    ids.dedup();
    let orders: Vec<Vec<StoreKind>> = ids
        .iter()
        .map(|id| topology.read_order(id.kind()))
        .collect();
    let remote = match crate::remote::checkpoint_remote::resolve(cx.repo, None) {
        Ok(Some(target)) => Some(ask_remote(cx.repo, &target, &orders)?),
        Ok(None) => None,
        Err(e) => Some(RemoteHoldings {
            display: ".entire/settings.json".into(),
            refs: None,
            branch: None,
            failure: Some(crate::base::error::error_chain(&e)),
        }),
    };
    let mut status: HashMap<&CheckpointId, (bool, Option<bool>)> = HashMap::new();
    for (id, order) in ids.into_iter().zip(&orders) {
        // Held but unreadable is still held: corrupt, not dangling.
        let local = !matches!(topology.read(id), Ok(None));
        let on_remote = match &remote {
            Some(r) => r.holds(id, order)?,
            None => Some(false),
        };
        status.insert(id, (local, on_remote));
    }
    let shown = remote.as_ref().map(|r| r.display.as_str());
    // Looked up only when a link dangles: it reads the hooks and the staged sessions.
    let repair = std::cell::OnceCell::new();
    let repair = || repair.get_or_init(|| DanglingRepair::new(cx.repo));
    let (mut unverified_here, mut unverified_nowhere) = (0, 0);
    let acknowledged = Acknowledged::load(cx.repo);
    // Dangling links --fix acknowledges: their findings' places in `out`.
    let mut acknowledging: Vec<(usize, (String, CheckpointId))> = Vec::new();
    for link in &links {
        let (id, what) = (&link.id, &link.subject);
        let dangling = match (status[id], shown) {
            ((false, Some(false)), Some(remote)) => Finding::new(
                Code::TrailerDangling,
                &link.commit,
                format!("{what:?} links checkpoint {id}, which neither this repository nor {remote} holds"),
            ),
            ((false, Some(false)), None) => Finding::new(
                Code::TrailerDangling,
                &link.commit,
                format!("{what:?} links checkpoint {id}, which this repository does not hold (and there is no remote)"),
            ),
            ((true, Some(false)), Some(remote)) => {
                out.push(
                Finding::new(
                    Code::CheckpointUnpushed,
                    &link.commit,
                    format!("{what:?} links checkpoint {id}, which is held here but not on {remote}"),
                )
                .repair(Command::ours(["push"])),
                );
                continue;
            }
            ((true, None), _) => {
                unverified_here += 1;
                continue;
            }
            ((false, None), _) => {
                unverified_nowhere += 1;
                continue;
            }
            _ => continue,
        };
        if acknowledged.contains(&link.sha, id) {
            continue;
        }
        let dangling = repair().apply(dangling, link);
        if cx.fix && !matches!(dangling.repair, Some(Repair::Run(_))) {
            acknowledging.push((out.len(), (link.sha.clone(), id.clone())));
        }
        out.push(dangling);
    }
    if !acknowledging.is_empty() {
        let links: Vec<_> = acknowledging.iter().map(|(_, l)| l.clone()).collect();
        Acknowledged::add(cx.repo, &links)?;
        for (at, _) in acknowledging {
            out[at].message +=
                "; acknowledged as lost in this clone, so doctor no longer reports it";
            out[at].fixed = true;
        }
    }
    if let Some(r) = &remote {
        if unverified_here + unverified_nowhere > 0 {
            out.push(Finding::new(
                Code::TrailersUnverified,
                &r.display,
                format!(
                    "could not ask {} which checkpoints it holds ({}): {unverified_here} link(s) held here may be unpushed and {unverified_nowhere} held nowhere here may be dangling",
                    r.display,
                    r.failure.as_deref().unwrap_or("not asked"),
                ),
            ));
        }
    }
    Ok(out)
}

impl crate::base::error::ExitStatus for DoctorError {
    fn exit_code(&self) -> i32 {
        match self {
            DoctorError::Store(e) => e.exit_code(),
            DoctorError::Queue(e) => e.exit_code(),
            DoctorError::Repo(e) => e.exit_code(),
            DoctorError::Git(e) => e.exit_code(),
            DoctorError::Hooks(e) => e.exit_code(),
            DoctorError::Io(_) => crate::base::error::FAILURE,
            DoctorError::RewriteMap(e) => e.exit_code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_follow_the_wrapped_error() {
        use crate::base::error::{ExitStatus, FAILURE, NOT_A_REPOSITORY, NOT_FOUND};
        use crate::base::id::CheckpointId;
        use crate::git::repo::RepoError;
        use crate::remote::push::PushError;
        use crate::store::StoreError;
        use crate::topology::TopologyError;
        let id = CheckpointId::parse("a1b2c3d4e5f6").unwrap();
        let nf = TopologyError::Store(StoreError::NotFound { id: id.clone() });
        assert_eq!(nf.exit_code(), NOT_FOUND);
        let repo = StoreError::Repo(RepoError::NotARepository("x".into()));
        assert_eq!(repo.exit_code(), NOT_A_REPOSITORY);
        let other = StoreError::Repo(RepoError::Git {
            context: "c".into(),
            source: git2::Error::from_str("m").into(),
        });
        assert_eq!(other.exit_code(), FAILURE);
        // Transparent wrappers follow the error they wrap.
        let push = PushError::Store(StoreError::NotFound { id });
        assert_eq!(push.exit_code(), NOT_FOUND);
        let doctor = DoctorError::Repo(RepoError::Unsupported("x".into()));
        assert_eq!(doctor.exit_code(), NOT_A_REPOSITORY);
    }

    #[test]
    fn codes_are_unique_and_kebab_case() {
        let all = [
            Code::UnsupportedRepo,
            Code::TopologyInvalid,
            Code::CheckFailed,
            Code::CaseDuplicate,
            Code::ForeignRef,
            Code::MalformedRef,
            Code::CorruptCheckpoint,
            Code::QueueOrphan,
            Code::UnqueuedUnpushed,
            Code::DeliveryUnrecorded,
            Code::UlidOnV1,
            Code::V1Disconnected,
            Code::PolicyRef,
            Code::StaleLock,
            Code::HookMissing,
            Code::HookForeign,
            Code::HooksPathShadowed,
            Code::RemoteRefCount,
            Code::CheckpointRemoteInvalid,
            Code::TrailerDangling,
            Code::TrailerMalformed,
            Code::SquashUnlinked,
            Code::CheckpointUnpushed,
            Code::TrailersUnverified,
            Code::UnlistedSessions,
        ];
        let names: HashSet<&str> = all.iter().map(|c| c.as_str()).collect();
        assert_eq!(names.len(), all.len());
        // The codes are a stable contract documented one row each in docs/doctor.md.
        let doc = include_str!("../../docs/doctor.md");
        for n in names {
            assert!(
                n.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{n}"
            );
            assert!(
                doc.contains(&format!("| `{n}` |")),
                "{n} is not in docs/doctor.md"
            );
        }
    }

    #[test]
    fn info_is_never_a_problem_and_fixed_ones_are_not_either() {
        let info = Finding::new(Code::PolicyRef, "r", "m");
        assert!(!info.is_open_problem());
        let warn = Finding::new(Code::QueueOrphan, "r", "m");
        assert!(warn.is_open_problem());
        assert!(!warn.clone().fixed_if(true).is_open_problem());
        let report = Report {
            findings: vec![info, warn],
        };
        assert_eq!(report.open_problems(), 1);
        assert_eq!(report.to_json()["healthy"], json!(false));
    }
}
