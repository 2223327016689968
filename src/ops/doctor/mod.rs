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
//! the checkpoint remote once (see [`links::trailers`]); a remote that cannot be asked is a finding,
//! never a failed run.

mod links;
mod local;
mod namespace;
mod push;

use crate::git::objects::Oid;
use serde_json::{json, Value};

use crate::git::refname::{CheckpointRef, ForeignRef, CHECKPOINT_REF_PREFIX};
use crate::git::repo::{LibGitError, Repo, RepoError};
use crate::ops::hooks;
use crate::store::queue::QueueError;
use crate::store::StoreError;
use crate::topology::Topology;

pub use links::{trailer_depth, DEFAULT_TRAILER_DEPTH, MAX_TRAILER_DEPTH, TRAILER_DEPTH_SETTING};
pub use local::STALE_AFTER;
pub use namespace::POLICY_REF;

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
    /// A staged session whose state cannot be read: every command passes over it.
    SessionUnreadable,
    /// A commit links a checkpoint its `post-commit` did not write (it was killed or failed):
    /// the checkpoint never existed here, and the next commit or push writes it.
    CheckpointUnwritten,
    /// One of our hooks is not installed.
    HookMissing,
    /// Another tool's hook sits where ours should be.
    HookForeign,
    /// `core.hooksPath` points away from the directory our hooks are installed in.
    HooksPathShadowed,
    /// The checkpoint remote also carries code and held more checkpoint refs than the
    /// threshold at its last listing or push (issue 9: every push to it pays for them).
    RemoteRefCount,
    /// A destination's server refused checkpoint refs (all of them, or some as too large):
    /// hooks hold them back for a while.
    PushRefused,
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
    /// An agent's configuration holds our hooks (`enable --agent`): its sessions are recorded.
    AgentWired,
    /// An agent's configuration holds some of our hooks, not all: some of its events are not
    /// recorded.
    AgentPartlyWired,
    /// An agent's hook failed, and no later hook of that agent succeeded.
    AgentHookFailed,
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
            Code::CheckpointUnwritten => "checkpoint-unwritten",
            Code::SessionUnreadable => "session-unreadable",
            Code::HookMissing => "hook-missing",
            Code::HookForeign => "hook-foreign",
            Code::HooksPathShadowed => "hooks-path-shadowed",
            Code::RemoteRefCount => "remote-ref-count",
            Code::PushRefused => "push-refused",
            Code::CheckpointRemoteInvalid => "checkpoint-remote-invalid",
            Code::TrailerDangling => "trailer-dangling",
            Code::TrailerMalformed => "trailer-malformed",
            Code::SquashUnlinked => "squash-unlinked",
            Code::CheckpointUnpushed => "checkpoint-unpushed",
            Code::TrailersUnverified => "trailers-unverified",
            Code::SummaryIndex => "summary-index",
            Code::SettingsUnapproved => "settings-unapproved",
            Code::UnlistedSessions => "unlisted-sessions",
            Code::AgentWired => "agent-wired",
            Code::AgentPartlyWired => "agent-partly-wired",
            Code::AgentHookFailed => "agent-hook-failed",
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
            | Code::CheckpointUnwritten
            | Code::SessionUnreadable
            | Code::HookMissing
            | Code::HookForeign
            | Code::HooksPathShadowed
            | Code::RemoteRefCount
            | Code::PushRefused
            | Code::TrailerDangling
            | Code::TrailerMalformed
            | Code::SquashUnlinked
            | Code::CheckpointUnpushed
            | Code::TrailersUnverified
            | Code::SummaryIndex
            | Code::AgentPartlyWired
            | Code::AgentHookFailed => Severity::Warning,
            Code::ForeignRef
            | Code::DeliveryUnrecorded
            | Code::PolicyRef
            | Code::SettingsUnapproved
            | Code::UnlistedSessions
            | Code::AgentWired => Severity::Info,
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
    /// The staged sessions could not be listed.
    #[error(transparent)]
    Sessions(#[from] crate::ops::session::SessionError),
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
            run: namespace::case_duplicates,
        },
        Check {
            name: "namespace",
            run: namespace::namespace,
        },
        Check {
            name: "checkpoint documents",
            run: namespace::corrupt_checkpoints,
        },
        Check {
            name: "queue orphans",
            run: push::queue_orphans,
        },
        Check {
            name: "unqueued refs",
            run: push::unqueued_unpushed,
        },
        Check {
            name: "push refusals",
            run: push::push_refused,
        },
        Check {
            name: "v1 branch",
            run: push::v1_branch,
        },
        Check {
            name: "policy ref",
            run: namespace::policy_ref,
        },
        Check {
            name: "lock files",
            run: local::stale_locks,
        },
        Check {
            name: "staged sessions",
            run: local::unreadable_sessions,
        },
        Check {
            name: "unwritten checkpoint",
            run: local::unwritten_checkpoint,
        },
        Check {
            name: "hooks",
            run: local::hook_checks,
        },
        Check {
            name: "checkpoint remote",
            run: push::remote_ref_count,
        },
        Check {
            name: "summary index",
            run: local::summary_index,
        },
        Check {
            name: "settings approval",
            run: local::settings_approval,
        },
        Check {
            name: "agent hooks",
            run: local::agent_hooks,
        },
        // Before the trailers: a squash re-linked by --fix is checked like any other link.
        Check {
            name: "squashes",
            run: links::squashes,
        },
        // Last: its fetch moves the remote-tracking v1 branch the v1 check compares with.
        Check {
            name: "trailers",
            run: links::trailers,
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

fn git_err<E: Into<LibGitError>>(context: impl Into<String>) -> impl FnOnce(E) -> DoctorError {
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
            DoctorError::Sessions(e) => e.exit_code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

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
            source: LibGitError::new("m"),
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
            Code::CheckpointUnwritten,
            Code::SessionUnreadable,
            Code::HookMissing,
            Code::HookForeign,
            Code::HooksPathShadowed,
            Code::RemoteRefCount,
            Code::PushRefused,
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
        let doc = include_str!("../../../docs/doctor.md");
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
