//! The commit hooks: `prepare-commit-msg` links a commit to a new checkpoint with an
//! `Entire-Checkpoint:` trailer, and `post-commit` condenses this worktree's staged sessions
//! into it. Neither ever fails the commit; the binary turns their errors into warnings. While a
//! settings file does not parse, neither writes anything: the commit is not linked and the staged
//! sessions stay staged until the file is fixed (a later commit condenses them).

use std::path::Path;

use crate::agents;
use crate::base::error::{io_context, IoError};
use crate::base::id::CheckpointId;
use crate::base::session_id::SessionId;
use crate::config::settings::SettingsError;
use crate::git::plumbing::{self, PlumbingError};
use crate::git::repo::{LibGitError, Repo};
use crate::git::subprocess::GitError;
use crate::model::documents::DEFAULT_STRATEGY;
use crate::model::trailers::{checkpoint_trailers, TrailerValue, CHECKPOINT_TRAILER};
use crate::ops::rewrites::{commit_links, links, Rewrite, RewriteMap, RewriteMapError};
use crate::ops::session::{SessionError, SessionStore};
use crate::store::SessionWrite;
use crate::topology::{Topology, TopologyError};

/// Errors of the commit hooks (reported as warnings).
#[derive(Debug, thiserror::Error)]
pub enum CommitHookError {
    /// The commit message file could not be read or written.
    #[error(transparent)]
    Message(IoError),
    /// `git interpret-trailers` could not run (or git is too old).
    #[error(
        "add the Entire-Checkpoint trailer (the commit is not linked; staged sessions stay staged)"
    )]
    TrailerGit(#[source] GitError),
    /// `git interpret-trailers` failed: its stderr.
    #[error("add the Entire-Checkpoint trailer: {0}")]
    Trailer(String),
    /// The staged sessions could not be read.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The new commit could not be read.
    #[error("read the new commit")]
    Commit(#[source] LibGitError),
    /// The rewrite map could not be updated.
    #[error(transparent)]
    RewriteMap(#[from] RewriteMapError),
    /// A settings file does not parse, so the commit is not linked to a checkpoint.
    #[error("not linking this commit to a checkpoint (the staged sessions stay staged)")]
    NotLinked(#[source] SettingsError),
    /// Our post-commit hook is displaced and could not be put back: a trailer would link a
    /// checkpoint that is never written.
    #[error("not linking this commit to a checkpoint: our post-commit hook does not run, so the checkpoint would never be written (the staged sessions stay staged)")]
    PostCommitDisplaced,
    /// A settings file does not parse, so nothing is condensed.
    #[error("not condensing the staged sessions (they stay staged)")]
    NotCondensed(#[source] TopologyError),
}

/// What `prepare-commit-msg` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prepared {
    /// Added `Entire-Checkpoint: <id>`.
    Added(CheckpointId),
    /// The message already links a checkpoint; kept as it is.
    Kept,
    /// Added the trailers of the commits this one replaces (amend, fixup, squash).
    Carried(Vec<CheckpointId>),
    /// Nothing to link (no staged activity here, or a merge).
    Nothing,
}

/// `prepare-commit-msg <file> [<source> [<sha>]]`.
///
/// A commit that replaces others keeps their links: an amend (git passes `-m`/`-F` amends as
/// a plain `message`, so the invoking `git` process is asked, see [`invoked_by_amend`]) gets
/// every checkpoint the amended commit links, and a commit a rebase folds fixups or squashes
/// into gets theirs, each added as a trailer the message lacks. Only then, when the message
/// links nothing, a staged session with new activity gets a new checkpoint.
pub fn prepare_commit_msg(
    repo: &Repo,
    msg_file: &Path,
    source: Option<&str>,
) -> Result<Prepared, CommitHookError> {
    let prepared = prepare(repo, msg_file, source);
    let linked_none = matches!(prepared, Ok(Prepared::Nothing));
    crate::ops::hooks::fast::prepare_commit_msg_ran(repo, msg_file, linked_none);
    prepared
}

fn prepare(
    repo: &Repo,
    msg_file: &Path,
    source: Option<&str>,
) -> Result<Prepared, CommitHookError> {
    // A merge records other people's commits; their checkpoints are linked by their own trailers.
    if source == Some("merge") {
        return Ok(Prepared::Nothing);
    }
    let text = std::fs::read_to_string(msg_file).map_err(|source| {
        CommitHookError::Message(
            io_context(format!("commit message {}", msg_file.display()))(source),
        )
    })?;
    let message = without_comments(repo, &text);
    let present = links(&message, None);
    // A replaced commit's link counts as carried only on a line of its own: `git merge
    // --squash` quotes the squashed commits' trailers indented, where git sees no trailer.
    let key = format!("{CHECKPOINT_TRAILER}:");
    let own_lines: String = message
        .split_inclusive('\n')
        .filter(|l| l.starts_with(&key))
        .collect();
    let carried = links(&own_lines, None);
    let missing: Vec<CheckpointId> = replaced_links(repo)
        .into_iter()
        .filter(|id| !carried.contains(id))
        .collect();
    if !missing.is_empty() {
        add_trailers(repo, msg_file, &missing, "addIfDifferent")?;
        return Ok(Prepared::Carried(missing));
    }
    if !present.is_empty() {
        return Ok(Prepared::Kept);
    }
    if recreated_by_git(repo) {
        return Ok(Prepared::Nothing);
    }
    // An agent that commits by itself does so before its turn ends: its transcript as it is now
    // is what this commit condenses.
    for problem in crate::ops::capture::refresh_live(repo) {
        log::warn!("the agent's transcript could not be read again: {problem}");
    }
    let pending = SessionStore::new(repo).pending_here()?;
    if pending.is_empty() {
        return Ok(Prepared::Nothing);
    }
    // A trailer now would link a checkpoint that post-commit then refuses to write, or that no
    // post-commit of ours writes (the hooks heal before this runs; this is where they could not).
    repo.settings()
        .refuse_writes()
        .map_err(CommitHookError::NotLinked)?;
    if crate::ops::hooks::displaced(repo)
        .iter()
        .any(|h| h == "post-commit")
    {
        return Err(CommitHookError::PostCommitDisplaced);
    }
    let id = crate::topology::mint_checkpoint_id(repo);
    // Kept before the trailer is written: whatever stops post-commit, the next hook (or
    // `doctor --fix`) writes this checkpoint for the commit that names it (`heal_promised`).
    Promise {
        checkpoint: id.to_string(),
        sessions: pending.iter().map(|s| s.session_id.clone()).collect(),
    }
    .keep(repo)?;
    add_trailers(repo, msg_file, std::slice::from_ref(&id), "doNothing")?;
    Ok(Prepared::Added(id))
}

/// The file, in this worktree's git dir, of the checkpoint its last `prepare-commit-msg` linked
/// ([`Promise`]).
pub const PROMISE_FILE: &str = "entire-promised-checkpoint";

/// How far back from `HEAD` (first parents) the commit a [`Promise`] names is looked for: its
/// post-commit was stopped, and the user may have committed since with our hooks off.
const PROMISE_DEPTH: usize = 64;

/// A checkpoint `prepare-commit-msg` linked with a trailer and `post-commit` has not written
/// yet, with the sessions it is to hold. Written before the trailer, removed once post-commit
/// wrote every one of them: one left behind means post-commit was killed or failed (a full
/// disk, a read-only `.git/entire`), and the trailer names a checkpoint that does not exist.
/// The next hook run writes it, for the commit that names it ([`heal_promised`]), before
/// anything else, so the sessions never go to the next commit's checkpoint instead.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
struct Promise {
    checkpoint: String,
    sessions: Vec<String>,
}

impl Promise {
    fn path(repo: &Repo) -> std::path::PathBuf {
        repo.git_dir().join(PROMISE_FILE)
    }

    /// Writes it; a promise that cannot be kept links nothing.
    fn keep(&self, repo: &Repo) -> Result<(), CommitHookError> {
        let path = Self::path(repo);
        let text = serde_json::to_vec(self).expect("a promise serializes");
        crate::base::fs::write_atomic(&path, &text, 0o644).map_err(|e| {
            CommitHookError::Message(io_context(format!("write {}", path.display()))(e))
        })
    }

    /// The promise left in `repo`'s git dir, if any (one that does not parse is dropped: it
    /// cannot name a checkpoint).
    fn read(repo: &Repo) -> Option<Promise> {
        let path = Self::path(repo);
        let bytes = std::fs::read(&path).ok()?;
        let promise = serde_json::from_slice(&bytes).ok();
        if promise.is_none() {
            let _ = std::fs::remove_file(&path);
        }
        promise
    }

    /// Removes the promise of checkpoint `id`, which is kept; another is left alone.
    fn kept(repo: &Repo, id: &CheckpointId) {
        if Promise::read(repo).is_some_and(|p| p.checkpoint == id.as_str()) {
            let _ = std::fs::remove_file(Self::path(repo));
        }
    }
}

/// A checkpoint a commit linked whose `post-commit` did not write it, written now.
#[derive(Debug)]
pub struct Healed {
    /// The checkpoint.
    pub checkpoint: CheckpointId,
    /// The commit that links it.
    pub commit: String,
    /// What writing it did.
    pub condensed: Condensed,
}

/// Whether a [`Promise`] is left in `repo` (cheap: one file test).
pub fn promised(repo: &Repo) -> bool {
    Promise::path(repo).exists()
}

/// A [`Promise`] not kept: the commit whose trailer names its checkpoint, and the promised
/// sessions still staged.
pub struct Unkept {
    /// The checkpoint the commit links.
    pub checkpoint: CheckpointId,
    /// The revision (`HEAD~<n>`) of the commit.
    rev: String,
    sessions: Vec<crate::ops::session::SessionState>,
}

/// The promise a stopped `post-commit` left, if one is left to keep: a commit whose message
/// names its checkpoint (`HEAD` or, within [`PROMISE_DEPTH`] first parents, an older one), and
/// promised sessions still staged. Changes nothing.
pub fn unkept_promise(repo: &Repo) -> Result<Option<Unkept>, CommitHookError> {
    let Some(promise) = Promise::read(repo) else {
        return Ok(None);
    };
    let Ok(id) = CheckpointId::parse(&promise.checkpoint) else {
        return Ok(None);
    };
    let rev = (0..PROMISE_DEPTH)
        .map(|n| format!("HEAD~{n}"))
        .map_while(|rev| Some((repo.commit_message(&rev)?, rev)))
        .find(|(message, _)| links(message, None).contains(&id))
        .map(|(_, rev)| rev);
    let Some(rev) = rev else {
        return Ok(None);
    };
    let sessions: Vec<_> = SessionStore::new(repo)
        .pending_here()?
        .into_iter()
        .filter(|s| promise.sessions.contains(&s.session_id))
        .collect();
    Ok((!sessions.is_empty()).then_some(Unkept {
        checkpoint: id,
        rev,
        sessions,
    }))
}

/// Keeps the promise a stopped `post-commit` left ([`Promise`], [`unkept_promise`]): condenses
/// the promised sessions still staged into its checkpoint, for the commit that names it. A
/// promise with nothing left to keep goes (no commit names its checkpoint: the commit was
/// abandoned after its message was prepared, and the sessions stay staged for the next commit;
/// or no promised session is staged any more). The promise stays while writing fails (the next
/// run tries again). `None` when nothing was promised.
pub fn heal_promised(
    repo: &Repo,
    topo: &Topology<'_>,
) -> Option<Result<Option<Healed>, CommitHookError>> {
    if !promised(repo) {
        return None;
    }
    let unkept = match unkept_promise(repo) {
        Ok(Some(unkept)) => unkept,
        Ok(None) => {
            let _ = std::fs::remove_file(Promise::path(repo));
            return Some(Ok(None));
        }
        Err(e) => return Some(Err(e)),
    };
    Some(heal(repo, topo, unkept).map(Some))
}

fn heal(repo: &Repo, topo: &Topology<'_>, unkept: Unkept) -> Result<Healed, CommitHookError> {
    let commit = changed_files(repo, &unkept.rev).map_err(CommitHookError::Commit)?;
    let id = unkept.checkpoint;
    let report = Condensed {
        checkpoint: Some(id.clone()),
        ..Condensed::default()
    };
    let condensed = condense_into(repo, topo, &commit, &id, unkept.sessions, report)?;
    if condensed.failed.is_empty() {
        Promise::kept(repo, &id);
    }
    Ok(Healed {
        checkpoint: id,
        commit: commit.0,
        condensed,
    })
}

/// The message as git will record it, as far as links go: without its comment lines (git's
/// `core.commentChar`, `#` unless set; with `auto`, any line starting with one of the characters
/// git may pick), which a squash fills with the folded commits' messages. The trailer rule finds
/// links anywhere, so a link only shown in a comment would count as kept, then vanish.
fn without_comments(repo: &Repo, text: &str) -> String {
    // `core.commentString` (git 2.45) and `core.commentChar` are the same setting.
    let configured = repo
        .config_string("core.commentString")
        .or_else(|| repo.config_string("core.commentChar"));
    let prefixes: Vec<String> = match configured.as_deref() {
        None | Some("") => vec!["#".to_owned()],
        Some("auto") => "#;@!$%^&|:".chars().map(String::from).collect(),
        Some(c) => vec![c.to_owned()],
    };
    text.split_inclusive('\n')
        .filter(|l| !prefixes.iter().any(|p| l.starts_with(p.as_str())))
        .collect()
}

/// Adds `Entire-Checkpoint: <id>` for each of `ids` to the message file (`if_exists` as
/// `git interpret-trailers --if-exists` takes it).
fn add_trailers(
    repo: &Repo,
    msg_file: &Path,
    ids: &[CheckpointId],
    if_exists: &str,
) -> Result<(), CommitHookError> {
    let cwd = repo.workdir().unwrap_or(repo.git_dir());
    let trailers: Vec<String> = ids
        .iter()
        .map(|id| format!("{CHECKPOINT_TRAILER}: {id}"))
        .collect();
    plumbing::add_trailers(cwd, msg_file, &trailers, if_exists).map_err(|e| match e {
        PlumbingError::Git(e) => CommitHookError::TrailerGit(e),
        PlumbingError::Failed { stderr, .. } => CommitHookError::Trailer(stderr),
    })
}

/// The checkpoints of the commits the commit being prepared replaces: `HEAD` when amending,
/// the fixups and squashes an interactive rebase is folding into it
/// (`<git dir>/rebase-merge/current-fixups`, one `<command> <commit>` a line), and the commits
/// `git merge --squash` squashed (oldest first, as git lists them newest first: reversed). A rewrite map
/// that cannot be read only loses what it alone records; the trailers still count.
fn replaced_links(repo: &Repo) -> Vec<CheckpointId> {
    let map = RewriteMap::load(repo).ok();
    let mut commits = Vec::new();
    if invoked_by_amend() {
        commits.push("HEAD".to_owned());
    }
    let fixups = repo.git_dir().join("rebase-merge").join("current-fixups");
    if let Ok(text) = std::fs::read_to_string(fixups) {
        commits.extend(
            text.lines()
                .filter_map(|l| l.split_whitespace().last())
                .map(str::to_owned),
        );
    }
    // `git merge --squash` lists the squashed commits in `SQUASH_MSG` (`commit <sha>` lines);
    // their trailers reach the message only indented, where they link nothing.
    if let Ok(text) = std::fs::read_to_string(repo.git_dir().join("SQUASH_MSG")) {
        let squashed: Vec<String> = text
            .lines()
            .filter_map(|l| l.strip_prefix("commit "))
            .filter(|sha| sha.len() >= 40 && sha.bytes().all(|b| b.is_ascii_hexdigit()))
            .map(str::to_owned)
            .collect();
        commits.extend(squashed.into_iter().rev());
    }
    let mut out: Vec<CheckpointId> = Vec::new();
    for rev in commits {
        for id in commit_links(repo, map.as_ref(), &rev).map_or_else(Vec::new, |c| c.ids) {
            if !out.contains(&id) {
                out.push(id);
            }
        }
    }
    out
}

/// Whether git is making this commit out of an existing one (a pick, reword or squash of
/// `rebase`, `pull --rebase`, `cherry-pick`, `revert`), not the user committing their work. The
/// staged sessions are the user's next own commit's: a re-created commit keeps the links it
/// carries (its trailers, and the rewrite map `post-rewrite` writes) and gets no new one. git's
/// signs, any of which counts: the picked or reverted commit in the git dir (`CHERRY_PICK_HEAD`,
/// `REVERT_HEAD`, also while the user concludes a stopped pick with `git commit`),
/// `GIT_REFLOG_ACTION` (set for the `git commit` a reword or squash runs, and by `pull`), and the
/// invoking git's subcommand. A user's own commit while a rebase stopped (`edit`, `exec`) shows
/// none of them.
fn recreated_by_git(repo: &Repo) -> bool {
    use crate::base::invoker::{invoking_git, recreates_commits, RECREATING};
    ["CHERRY_PICK_HEAD", "REVERT_HEAD"]
        .iter()
        .any(|f| repo.git_dir().join(f).exists())
        || std::env::var("GIT_REFLOG_ACTION").is_ok_and(|action| {
            action
                .split_whitespace()
                .next()
                .is_some_and(|c| RECREATING.contains(&c))
        })
        || invoking_git().is_some_and(|args| recreates_commits(&args))
}

/// Whether the `git` process running this hook is a `git commit --amend`. git tells
/// `prepare-commit-msg` only where the message came from, and an amend with `-m` or `-F` looks
/// like any other commit, so the invoking `git` is asked for its arguments.
fn invoked_by_amend() -> bool {
    crate::base::invoker::invoking_git().is_some_and(|args| amends(&args))
}

/// Whether git arguments include `--amend` as an option (not as the value of `-m` and the
/// like, nor after `--`).
fn amends(args: &[String]) -> bool {
    const TAKES_VALUE: [&str; 14] = [
        "-m",
        "-F",
        "-c",
        "-C",
        "-t",
        "--message",
        "--file",
        "--author",
        "--date",
        "--template",
        "--reuse-message",
        "--reedit-message",
        "--cleanup",
        "--trailer",
    ];
    let mut value_next = false;
    for arg in args.iter().skip(1) {
        if value_next {
            value_next = false;
            continue;
        }
        if arg == "--" {
            return false;
        }
        if arg == "--amend" {
            return true;
        }
        // A short-option cluster such as `-am` takes its last letter's value.
        value_next = TAKES_VALUE.contains(&arg.as_str())
            || (arg.starts_with('-')
                && !arg.starts_with("--")
                && arg.ends_with(['m', 'F', 'c', 'C', 't']));
    }
    false
}

/// What `post-commit` did for each session.
#[derive(Debug, Default)]
pub struct Condensed {
    /// The checkpoint written, if the commit links one.
    pub checkpoint: Option<CheckpointId>,
    /// Sessions condensed into it.
    pub sessions: Vec<String>,
    /// Sessions that failed: `(session, error)`. They stay staged for the next commit.
    pub failed: Vec<(String, String)>,
    /// Malformed trailer values on the commit (ignored).
    pub malformed: Vec<String>,
    /// Mirror failures and queue warnings of the writes.
    pub warnings: Vec<String>,
    /// Files a session recorded as touched that the commit did not change, left out of the
    /// checkpoint: `(session, files)`.
    pub left_out: Vec<(String, Vec<String>)>,
    /// Staged sessions whose state cannot be read, passed over.
    pub unreadable: Vec<crate::ops::session::Unreadable>,
}

/// The commit `rev` names: its ID, its message, and the files it changed (against its first
/// parent).
fn changed_files(repo: &Repo, rev: &str) -> Result<(String, String, Vec<String>), LibGitError> {
    let c = repo.commit_change(rev)?;
    Ok((c.id.to_string(), c.message, c.paths))
}

/// `post-commit`: condenses every staged session of this worktree with new activity into the
/// checkpoint the new commit's trailer names.
pub fn post_commit(repo: &Repo, topo: &Topology<'_>) -> Result<Condensed, CommitHookError> {
    let condensed = condense(repo, topo);
    if let Ok(report) = &condensed {
        if report.failed.is_empty() {
            if let Some(id) = &report.checkpoint {
                Promise::kept(repo, id);
            }
        }
    }
    crate::ops::hooks::fast::post_commit_ran(repo);
    condensed
}

fn condense(repo: &Repo, topo: &Topology<'_>) -> Result<Condensed, CommitHookError> {
    let commit = changed_files(repo, "HEAD").map_err(CommitHookError::Commit)?;
    let store = SessionStore::new(repo);
    // Named on every commit, linked or not, until it is repaired.
    let mut report = Condensed {
        unreadable: store.unreadable()?,
        ..Condensed::default()
    };
    let mut ids = Vec::new();
    for t in checkpoint_trailers(&commit.1) {
        match t {
            TrailerValue::Valid(id) => ids.push(id),
            TrailerValue::Malformed(tok) => report.malformed.push(tok),
        }
    }
    let Some(id) = ids.into_iter().next() else {
        return Ok(report);
    };
    report.checkpoint = Some(id.clone());
    if recreated_by_git(repo) {
        return Ok(report);
    }
    let pending = store.pending_here()?;
    crate::base::crashpoint::crashpoint("post-commit.before-condense");
    condense_into(repo, topo, &commit, &id, pending, report)
}

/// Condenses the staged sessions `pending` into checkpoint `id`, linked by `commit` (its ID,
/// message and changed files), adding what happened to `report`.
fn condense_into(
    repo: &Repo,
    topo: &Topology<'_>,
    commit: &(String, String, Vec<String>),
    id: &CheckpointId,
    pending: Vec<crate::ops::session::SessionState>,
    mut report: Condensed,
) -> Result<Condensed, CommitHookError> {
    let (sha, message, commit_files) = commit;
    let store = SessionStore::new(repo);
    if !pending.is_empty() {
        topo.check_writable()
            .map_err(CommitHookError::NotCondensed)?;
    }
    let subject = message.lines().next().unwrap_or("").trim().to_owned();
    let branch = repo.current_branch().unwrap_or_default();
    // Each session's file writes, read from its transcript as written while the stores wrote
    // it, for the writes cache once all are in.
    let mut written_writes = Vec::new();
    for state in pending {
        let Ok(sid) = SessionId::parse(&state.session_id) else {
            continue;
        };
        let mut stored_tasks: Vec<String> = Vec::new();
        let result = store.condense(
            &sid,
            id.as_str(),
            |st, transcript| -> Result<usize, TopologyError> {
                let (prompt_start, line_start) = st.window_for(id.as_str());
                let files = if st.files_touched.is_empty() {
                    commit_files.clone()
                } else {
                    commit_files
                        .iter()
                        .filter(|f| st.files_touched.contains(f))
                        .cloned()
                        .collect()
                };
                // Only what the commit changed is the checkpoint's; say what that leaves out.
                let dropped: Vec<String> = st
                    .files_touched
                    .iter()
                    .filter(|f| !commit_files.contains(f))
                    .cloned()
                    .collect();
                if !dropped.is_empty() {
                    report.left_out.push((sid.to_string(), dropped));
                }
                let prompts: Vec<String> =
                    st.prompts.get(prompt_start..).unwrap_or_default().to_vec();
                let lines = transcript.map_or(0, agents::entry_count);
                // A --token-usage given to `session record` wins over what the transcript says.
                let token_usage = st
                    .token_usage
                    .clone()
                    .or_else(|| transcript.and_then(|t| agents::token_usage(t, line_start)));
                let hash = transcript.map(crate::model::transcript::content_hash);
                let tasks =
                    crate::ops::capture::subagent_tasks(repo, st, transcript.unwrap_or_default());
                stored_tasks = tasks
                    .iter()
                    .map(|t| t.agent_id.as_str().to_owned())
                    .collect();
                let w = SessionWrite {
                    checkpoint_id: id.clone(),
                    session_id: sid.clone(),
                    strategy: DEFAULT_STRATEGY.to_owned(),
                    branch: branch.clone(),
                    commit_sha: sha.clone(),
                    created_at: crate::base::time::now_rfc3339_nano(),
                    transcript: transcript.map(<[u8]>::to_vec),
                    // `session record` redacted it; the write skips a second pass with the same
                    // rules over the same bytes (and hashes them once).
                    transcript_redacted_by: hash
                        .as_deref()
                        .and_then(|h| st.transcript_redacted_by(h))
                        .map(str::to_owned),
                    transcript_hash: hash,
                    checkpoints_count: prompts.len().max(1) as i64,
                    prompts,
                    files_touched: files,
                    agent: st.agent.clone(),
                    model: st.model.clone(),
                    token_usage,
                    checkpoint_transcript_start: line_start as i64,
                    commit_subject: (!subject.is_empty()).then(|| subject.clone()),
                    author: None,
                    redactions: st.redactions,
                    tasks,
                    kind: String::new(),
                    linked_commits: Vec::new(),
                };
                let (written, writes) = topo.write_session_beside(w, agents::extract)?;
                report.warnings.extend(written.warnings());
                if let Some(writes) = writes {
                    written_writes.push((sid.to_string(), writes));
                }
                Ok(lines)
            },
        )?;
        match result {
            Ok(()) => {
                if let Err(e) = store.subagents_stored(&sid, &stored_tasks) {
                    log::warn!("session {sid}: its stored subagents stay listed: {e}");
                }
                report.sessions.push(sid.to_string())
            }
            Err(e) => report
                .failed
                .push((sid.to_string(), crate::base::error::error_chain(&e))),
        }
    }
    crate::ops::writes_cache::WritesCache::in_common_dir(repo.common_dir()).remember_written(
        topo,
        id,
        &written_writes,
    );
    Ok(report)
}

/// `post-rewrite <amend|rebase>`: records in the [`RewriteMap`] which commit replaced which, for
/// every line `<old> <new> [<extra>]` of git's `input`, so a checkpoint a replaced commit linked
/// stays linked (and findable) even where the new message lost its trailer. Returns the links
/// that live on only through the map: `(new commit, id)`.
pub fn post_rewrite(
    repo: &Repo,
    input: &str,
) -> Result<Vec<(String, CheckpointId)>, CommitHookError> {
    crate::ops::hooks::fast::post_rewrite_ran(repo);
    let map = RewriteMap::load(repo)?;
    let rewrites: Vec<Rewrite> = input
        .lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (old, new) = (words.next()?, words.next()?);
            let old = commit_links(repo, Some(&map), old)?;
            let new = commit_links(repo, None, new)?;
            Some(Rewrite {
                old: old.sha,
                new: new.sha,
                old_links: old.ids,
                new_trailers: new.ids,
            })
        })
        .collect();
    Ok(crate::ops::rewrites::record(repo, &rewrites)?)
}

impl crate::base::error::ExitStatus for CommitHookError {
    fn exit_code(&self) -> i32 {
        match self {
            CommitHookError::Message(_)
            | CommitHookError::Trailer(_)
            | CommitHookError::TrailerGit(_)
            | CommitHookError::Commit(_)
            | CommitHookError::PostCommitDisplaced => crate::base::error::FAILURE,
            CommitHookError::Session(e) => e.exit_code(),
            CommitHookError::RewriteMap(e) => e.exit_code(),
            CommitHookError::NotLinked(e) => e.exit_code(),
            CommitHookError::NotCondensed(e) => e.exit_code(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::amends;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn amend_is_found_as_an_option_only() {
        assert!(amends(&args("git commit --amend -m x")));
        assert!(amends(&args("git -c a=b commit -q -F f --amend")));
        assert!(amends(&args("git ci --amend")), "an alias");
        assert!(!amends(&args("git commit -m --amend")), "a message");
        assert!(
            !amends(&args("git commit -am --amend")),
            "a cluster's value"
        );
        assert!(!amends(&args("git commit -- --amend")), "a path");
        assert!(!amends(&args("git commit -m x")));
    }
}
