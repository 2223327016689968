//! `session import`: the sessions agents ran in this work tree before their hooks recorded them,
//! found in each agent's own store (the path rules of [`crate::agents::histories`], or the
//! agent's own command where only it reads its store), listed, and written as checkpoints
//! (docs/agents.md, "Importing the sessions that came before").
//!
//! An imported session is read as the agent hook reads a transcript (its prompts, the files it
//! wrote, its agent, its token usage) and written as `write` writes a session, redacted by the
//! topology. Its commit already exists and cannot carry a trailer, so a session whose transcript
//! shows the agent's `git commit` output (`[<branch> <hash>] <subject>`) naming a commit of this
//! repository is linked from the checkpoint's side, as the reference links one: the root's
//! `linked_commits` lists every such commit and `commit_sha` the last one. The checkpoint is
//! marked `imported` (the session's `kind`), as the reference's import marks its own. A session
//! whose transcript shows no such commit is written unlinked. A session whose ID a checkpoint or
//! a staged session already holds is recorded already: importing again writes nothing.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::agents::{self, CommandHistory, History, TranscriptFormat};
use crate::base::error::{ExitStatus, FAILURE, USAGE};
use crate::base::session_id::{InvalidSessionIdError, SessionId};
use crate::git::repo::{Repo, RepoError};
use crate::model::documents::{TokenUsage, DEFAULT_STRATEGY};
use crate::model::redact;
use crate::ops::capture::{agent_command_output, export_of, LiveRead};
use crate::ops::session::{SessionError, SessionStore};
use crate::ops::writes_cache::WritesCache;
use crate::store::{SessionWrite, StoreError};
use crate::topology::{Topology, TopologyError};

/// The most bytes of a file's start read to tell whether it is a session of this work tree.
const HEAD_BYTES: u64 = 64 << 10;

/// Errors of `session import`.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    /// No agent of that name has a store we read.
    #[error("no past sessions of agent {0:?} can be imported (known: {known})", known = known())]
    UnknownAgent(String),
    /// A session named is not among the work tree's past sessions.
    #[error("no past session of this work tree matches {0:?}")]
    NoSuchSession(String),
    /// A bare repository has no work tree whose sessions could be found.
    #[error("a bare repository has no work tree: its agents' sessions cannot be found")]
    Bare,
    /// No home directory, under which the agents keep their sessions.
    #[error("HOME is not set: the agents' stores of sessions cannot be found")]
    NoHome,
    /// The session ID the agent's store gives cannot name a session.
    #[error(transparent)]
    SessionId(#[from] InvalidSessionIdError),
    /// The staged sessions could not be read.
    #[error(transparent)]
    Session(#[from] SessionError),
    /// The checkpoints could not be listed.
    #[error(transparent)]
    List(#[from] StoreError),
    /// A checkpoint could not be written.
    #[error(transparent)]
    Write(#[from] TopologyError),
    /// The repository could not be opened again.
    #[error(transparent)]
    Repo(#[from] RepoError),
}

impl ExitStatus for ImportError {
    fn exit_code(&self) -> i32 {
        match self {
            ImportError::UnknownAgent(_) | ImportError::Bare => USAGE,
            ImportError::NoSuchSession(_) | ImportError::SessionId(_) | ImportError::NoHome => {
                FAILURE
            }
            ImportError::Session(e) => e.exit_code(),
            ImportError::List(e) => e.exit_code(),
            ImportError::Write(e) => e.exit_code(),
            ImportError::Repo(e) => e.exit_code(),
        }
    }
}

/// The agents whose past sessions are found, by their `--agent` names.
fn agents_known() -> Vec<&'static str> {
    let files = agents::histories::all().into_iter().map(|h| h.agent);
    files
        .chain(agents::histories::by_command().into_iter().map(|h| h.agent))
        .collect()
}

/// The agents whose past sessions are found, for messages.
fn known() -> String {
    agents_known().join(", ")
}

/// What `session import` is asked.
#[derive(Debug, Default)]
pub struct ImportAsk {
    /// Only these agents' stores (by `--agent` name); empty: every agent's.
    pub agents: Vec<String>,
    /// The sessions to import, by ID.
    pub sessions: Vec<String>,
    /// Import every session found that is not recorded yet.
    pub all: bool,
    /// Say what would be imported, writing nothing.
    pub dry_run: bool,
}

/// Whether a session found is recorded already.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FoundState {
    /// No checkpoint and no staged session holds it.
    New,
    /// A checkpoint or a staged session holds it: it is not imported again.
    Recorded,
    /// Written now as a checkpoint (or, with `--dry-run`, it would be).
    Imported,
}

/// A past session found in an agent's store (`session import --json`, one element of
/// `sessions`).
#[derive(Debug, Clone, Serialize)]
pub struct FoundSession {
    /// The agent, by its `--agent` name.
    pub agent: &'static str,
    /// The session's ID, as the agent names it (and its hooks would have).
    pub session_id: String,
    /// The agent's transcript file, or the command that prints the transcript
    /// (`opencode export <session ID>`).
    pub transcript: String,
    /// When the transcript was last written (RFC 3339), `null` when not known.
    pub updated_at: Option<String>,
    /// How many prompts the transcript shows.
    pub prompt_count: usize,
    /// The first line of its first prompt.
    pub subject: Option<String>,
    /// The commits of this repository its transcript shows the agent making, in order.
    pub commits: Vec<String>,
    /// Whether it is new, recorded already, or imported now.
    pub state: FoundState,
    /// The checkpoint written for it now; absent otherwise (a checkpoint ID is never `null`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub checkpoint_id: Option<String>,
}

/// What `session import` found and did.
#[derive(Debug, Serialize)]
pub struct ImportReport {
    /// Nothing was written (`--dry-run`, or nothing asked to import).
    pub dry_run: bool,
    /// Every past session of this work tree found, oldest first.
    pub sessions: Vec<FoundSession>,
    /// What went wrong on the way: an agent's command that failed (its sessions are not
    /// listed), the mirrors' failures of the writes.
    #[serde(skip)]
    pub warnings: Vec<String>,
}

/// A past session found, read.
struct Candidate {
    found: FoundSession,
    /// The format of the agent's transcripts.
    format: TranscriptFormat,
    bytes: Vec<u8>,
    /// The token usage the agent keeps beside the transcript, where the transcript records none.
    usage_beside: Option<TokenUsage>,
}

/// `enable --import-history`: [`import`] with the topology the settings `enable` just wrote
/// give (read anew: `repo` read them once, before).
pub fn import_after_enable(repo: &Repo, ask: &ImportAsk) -> Result<ImportReport, ImportError> {
    let repo = repo.location().open()?;
    let topo = Topology::open(&repo)?;
    import(&repo, &topo, ask)
}

/// `session import`: finds this work tree's past sessions in the agents' stores under the home
/// directory (`HOME`), or as the agent's own command lists and exports them (an agent not
/// installed has none), and imports those `ask` names (none, when it names none: a listing).
pub fn import(
    repo: &Repo,
    topo: &Topology<'_>,
    ask: &ImportAsk,
) -> Result<ImportReport, ImportError> {
    let home = PathBuf::from(
        std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .ok_or(ImportError::NoHome)?,
    );
    let home = home.as_path();
    if let Some(name) = ask
        .agents
        .iter()
        .find(|a| !agents_known().contains(&a.as_str()))
    {
        return Err(ImportError::UnknownAgent(name.clone()));
    }
    let wanted = |agent: &str| ask.agents.is_empty() || ask.agents.iter().any(|a| a == agent);
    let worktrees = worktree_paths(repo)?;
    let recorded = recorded_sessions(repo, topo)?;
    let mut warnings = Vec::new();
    let mut candidates = Vec::new();
    let mut seen = HashSet::new();
    for history in agents::histories::all() {
        if !wanted(history.agent) {
            continue;
        }
        for file in session_files(history, home, &worktrees) {
            let Some(c) = candidate(repo, history, &file, &worktrees, &recorded) else {
                continue;
            };
            if seen.insert((history.agent, c.found.session_id.clone())) {
                candidates.push(c);
            }
        }
    }
    for history in agents::histories::by_command() {
        if wanted(history.agent) {
            candidates.extend(listed_by_command(
                repo,
                history,
                &worktrees,
                &recorded,
                &mut warnings,
            ));
        }
    }
    candidates.sort_by(|a, b| a.found.updated_at.cmp(&b.found.updated_at));
    for sid in &ask.sessions {
        if !candidates.iter().any(|c| &c.found.session_id == sid) {
            return Err(ImportError::NoSuchSession(sid.clone()));
        }
    }
    let chosen = |c: &Candidate| {
        c.found.state == FoundState::New && (ask.all || ask.sessions.contains(&c.found.session_id))
    };
    let mut report = ImportReport {
        dry_run: ask.dry_run || (!ask.all && ask.sessions.is_empty()),
        sessions: Vec::new(),
        warnings,
    };
    for c in candidates {
        let mut found = c.found.clone();
        if chosen(&c) {
            found.state = FoundState::Imported;
            if !ask.dry_run {
                let (id, warnings) = write(repo, topo, c)?;
                found.checkpoint_id = Some(id);
                report.warnings.extend(warnings);
            }
        }
        report.sessions.push(found);
    }
    Ok(report)
}

/// The work tree's path as git gives it and its real path: an agent names the directory it
/// ran in one way or the other.
fn worktree_paths(repo: &Repo) -> Result<Vec<PathBuf>, ImportError> {
    let dir: PathBuf = repo
        .workdir()
        .ok_or(ImportError::Bare)?
        .components()
        .collect();
    let mut paths = vec![dir.clone()];
    if let Ok(real) = std::fs::canonicalize(&dir) {
        if real != dir {
            paths.push(real);
        }
    }
    Ok(paths)
}

/// The IDs of the sessions the checkpoints and the staged sessions hold.
fn recorded_sessions(repo: &Repo, topo: &Topology<'_>) -> Result<HashSet<String>, ImportError> {
    let mut ids: HashSet<String> = topo
        .list()?
        .into_entries()
        .into_iter()
        .flat_map(|c| c.session_ids)
        .collect();
    ids.extend(
        SessionStore::new(repo)
            .list()?
            .into_iter()
            .map(|s| s.session_id),
    );
    Ok(ids)
}

/// The files at most `history.depth` levels below the places of `history` for each of
/// `worktrees` (no symbolic link followed), in name order.
fn session_files(history: &History, home: &Path, worktrees: &[PathBuf]) -> Vec<PathBuf> {
    let mut places: Vec<PathBuf> = worktrees
        .iter()
        .flat_map(|w| (history.places)(home, w))
        .collect();
    places.dedup();
    let mut files = Vec::new();
    let mut dirs: Vec<(PathBuf, usize)> = places.into_iter().map(|p| (p, 1)).collect();
    while let Some((dir, level)) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_file() {
                files.push(e.path());
            } else if kind.is_dir() && level < history.depth {
                dirs.push((e.path(), level + 1));
            }
        }
    }
    files.sort();
    files.dedup();
    files
}

/// The session the file at `path` holds, read, when it is one of the work tree's; `None` when
/// it is not one, or cannot be read (an agent's store holds what it likes).
fn candidate(
    repo: &Repo,
    history: &'static History,
    path: &Path,
    worktrees: &[PathBuf],
    recorded: &HashSet<String>,
) -> Option<Candidate> {
    let mut head = Vec::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(HEAD_BYTES).read_to_end(&mut head))
        .ok()?;
    let sid = worktrees
        .iter()
        .find_map(|w| (history.session)(path, &head, w))?;
    let sid = redact::session_id(&sid).ok()?;
    let cap = repo.settings().limits().blob_bytes;
    let mut bytes = Vec::new();
    let meta = std::fs::File::open(path)
        .and_then(|f| {
            let meta = f.metadata()?;
            f.take(cap).read_to_end(&mut bytes)?;
            Ok(meta)
        })
        .ok()?;
    let updated_at = meta
        .modified()
        .ok()
        .map(|t| crate::base::time::rfc3339_nano_utc(t.into()));
    let transcript = path.display().to_string();
    let mut c = read(
        repo,
        (history.agent, history.format),
        sid,
        transcript,
        updated_at,
        bytes,
        recorded,
    );
    c.usage_beside = history.usage_beside.and_then(|beside| {
        let mut bytes = Vec::new();
        std::fs::File::open((beside.file)(path)?)
            .and_then(|f| f.take(cap).read_to_end(&mut bytes))
            .ok()?;
        (beside.read)(&bytes)
    });
    Some(c)
}

/// The past sessions of the work tree that `history`'s command lists, each exported; none when
/// the agent is not installed. A command that fails is said in `warnings`, and its session, or
/// the listing, left out.
fn listed_by_command(
    repo: &Repo,
    history: &'static CommandHistory,
    worktrees: &[PathBuf],
    recorded: &HashSet<String>,
    warnings: &mut Vec<String>,
) -> Vec<Candidate> {
    let program = history.program;
    let mut failed = |what: String, left_out: &str, e: std::io::Error| {
        warnings.push(format!(
            "`{program} {what}` failed, so {left_out} not listed: {e}"
        ));
    };
    let listing = match agent_command_output(repo, program, history.list) {
        Ok(listing) => listing,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            failed(history.list.join(" "), "its sessions are", e);
            return Vec::new();
        }
    };
    let mut ids = HashSet::new();
    let listed = worktrees
        .iter()
        .flat_map(|w| (history.sessions)(&listing, w))
        .filter(|s| ids.insert(s.id.clone()));
    let mut out = Vec::new();
    for s in listed.collect::<Vec<_>>() {
        let Ok(sid) = redact::session_id(&s.id) else {
            continue;
        };
        match export_of(repo, program, &sid) {
            Ok(Some(bytes)) => out.push(read(
                repo,
                (history.agent, history.format),
                sid,
                format!("{program} export {}", s.id),
                s.updated_at,
                bytes,
                recorded,
            )),
            Ok(None) => {}
            Err(e) => failed(format!("export {}", s.id), "that session is", e),
        }
    }
    out
}

/// The past session `sid` of `agent` (its `--agent` name, the format of its transcripts), read
/// from `bytes`, its transcript (the file, or the command, `transcript`).
fn read(
    repo: &Repo,
    agent: (&'static str, TranscriptFormat),
    sid: SessionId,
    transcript: String,
    updated_at: Option<String>,
    bytes: Vec<u8>,
    recorded: &HashSet<String>,
) -> Candidate {
    let writes = agents::extract(&bytes);
    Candidate {
        found: FoundSession {
            agent: agent.0,
            session_id: sid.to_string(),
            transcript,
            updated_at,
            prompt_count: writes.prompts.len(),
            subject: writes
                .prompts
                .first()
                .and_then(|p| crate::model::documents::prompt_subject(p.text.as_bytes())),
            commits: commits_shown(repo, &bytes),
            state: if recorded.contains(sid.as_str()) {
                FoundState::Recorded
            } else {
                FoundState::New
            },
            checkpoint_id: None,
        },
        format: agent.1,
        bytes,
        usage_beside: None,
    }
}

/// The commits of this repository a transcript shows `git commit` reporting, in order: the
/// hash in its summary line `[<branch> <hash>] <subject>` (`[<branch> (root-commit) <hash>]`
/// for a first commit), as a tool's output records it.
fn commits_shown(repo: &Repo, transcript: &[u8]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for hex in commit_summary_hashes(transcript) {
        if let Some(sha) = repo.commit_with_prefix(&hex) {
            if !out.contains(&sha) {
                out.push(sha);
            }
        }
    }
    out
}

/// The hashes of the `git commit` summary lines in `text`, as written (abbreviated).
fn commit_summary_hashes(text: &[u8]) -> Vec<String> {
    static SUMMARY: std::sync::LazyLock<regex::bytes::Regex> = std::sync::LazyLock::new(|| {
        regex::bytes::Regex::new(r#"\[[^\[\]"\\]{1,256}? ([0-9a-f]{7,64})\] "#)
            .expect("a valid pattern")
    });
    SUMMARY
        .captures_iter(text)
        .map(|c| String::from_utf8_lossy(&c[1]).into_owned())
        .collect()
}

/// Writes the session of `c` as a new checkpoint; returns its ID and the mirrors' warnings.
fn write(
    repo: &Repo,
    topo: &Topology<'_>,
    c: Candidate,
) -> Result<(String, Vec<String>), ImportError> {
    let sid = redact::session_id(&c.found.session_id)?;
    let rec = LiveRead {
        path: String::new(),
        bytes: c.bytes,
    }
    .into_record(repo, c.format);
    let token_usage = rec
        .transcript
        .as_deref()
        .and_then(|t| agents::token_usage(t, 0))
        .or(c.usage_beside);
    let id = topo.mint_id();
    let w = SessionWrite {
        checkpoint_id: id.clone(),
        session_id: sid,
        strategy: DEFAULT_STRATEGY.to_owned(),
        branch: repo.current_branch().unwrap_or_default(),
        commit_sha: c.found.commits.last().cloned().unwrap_or_default(),
        created_at: c
            .found
            .updated_at
            .unwrap_or_else(crate::base::time::now_rfc3339_nano),
        transcript: rec.transcript,
        transcript_redacted_by: None,
        transcript_hash: None,
        checkpoints_count: rec.prompts.len().max(1) as i64,
        prompts: rec.prompts,
        files_touched: rec.files_touched,
        agent: rec.agent.unwrap_or_default(),
        model: String::new(),
        token_usage,
        checkpoint_transcript_start: 0,
        commit_subject: None,
        author: None,
        redactions: 0,
        tasks: Vec::new(),
        kind: "imported".to_owned(),
        linked_commits: c.found.commits,
    };
    let report = WritesCache::in_common_dir(repo.common_dir()).write_session(topo, w)?;
    Ok((id.to_string(), report.warnings()))
}

#[cfg(test)]
mod tests {
    use super::commit_summary_hashes;

    #[test]
    fn commit_summary_lines_are_found_in_a_tool_output() {
        let text = br#"{"content":"[main 1a2b3c4] add notes\n 1 file changed"} {"output":"[main (root-commit) 0123456789abcdef] first\n"} {"x":"[detached HEAD abcdef0] y"} [not a commit] [main zzzzzzz] "#;
        assert_eq!(
            commit_summary_hashes(text),
            ["1a2b3c4", "0123456789abcdef", "abcdef0"]
        );
    }
}
