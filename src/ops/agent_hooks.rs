//! Wiring agents' own hooks (`enable --agent`, `disable --agent`, `status`): our entries in each
//! agent's configuration file of the work tree, merged into what is there
//! ([`crate::agents::AgentHooks::install`]), taken out again exactly. Where `enable --agent`
//! changed a file that existed, the file as it was is kept in `<git-common-dir>/entire/agents/`,
//! and `disable` writes it back byte for byte while what is left of the file means the same.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::agents::{self, AgentHooks, ConfigFileError, Edit, Layout, Wiring};
use crate::base::error::{ExitStatus, FAILURE, USAGE};
use crate::base::fs::{read_owned, write_atomic};
use crate::git::repo::Repo;

/// The largest agent configuration file read.
const MAX_CONFIG_BYTES: u64 = 4 << 20;

/// Errors of wiring an agent.
#[derive(Debug, thiserror::Error)]
pub enum AgentHooksError {
    /// No agent of that name.
    #[error("unknown agent {0:?} (known: {known}, or all)", known = crate::ops::capture::known_agents())]
    Unknown(String),
    /// A bare repository has no work tree for the agents' files.
    #[error("this is a bare repository: agents' configuration lives in a work tree")]
    Bare,
    /// The configuration file cannot be edited.
    #[error("{file}: {source}; nothing changed")]
    Config {
        /// The file, as shown.
        file: String,
        /// Why.
        #[source]
        source: ConfigFileError,
    },
    /// The file or a directory on its way is a symbolic link (it may have come with a clone).
    #[error("{file}: {link} is a symbolic link; refusing to write through it, nothing changed")]
    Link {
        /// The file, as shown.
        file: String,
        /// The link.
        link: String,
    },
    /// Reading or writing failed.
    #[error("cannot {action} {file}")]
    Io {
        /// `read` or `write`.
        action: &'static str,
        /// The file, as shown.
        file: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl ExitStatus for AgentHooksError {
    fn exit_code(&self) -> i32 {
        match self {
            AgentHooksError::Unknown(_) => USAGE,
            AgentHooksError::Bare
            | AgentHooksError::Config { .. }
            | AgentHooksError::Link { .. }
            | AgentHooksError::Io { .. } => FAILURE,
        }
    }
}

/// The agents `names` name (`all`: every agent used here, by its configuration directory in
/// the work tree or its command on `PATH`).
pub fn chosen(repo: &Repo, names: &[String]) -> Result<Vec<&'static AgentHooks>, AgentHooksError> {
    let mut out: Vec<&'static AgentHooks> = Vec::new();
    for name in names {
        let more = if name == "all" {
            agents::hooks::all()
                .into_iter()
                .filter(|a| used_here(repo, a))
                .collect()
        } else {
            vec![agents::hooks::by_name(name)
                .ok_or_else(|| AgentHooksError::Unknown(name.clone()))?]
        };
        for a in more {
            if !out.iter().any(|o| o.name == a.name) {
                out.push(a);
            }
        }
    }
    Ok(out)
}

/// Whether the agent is used here: its configuration directory is in the work tree, or its
/// command is on `PATH`.
fn used_here(repo: &Repo, agent: &AgentHooks) -> bool {
    repo.workdir().is_some_and(|w| w.join(agent.dir).is_dir())
        || std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|d| d.join(agent.binary).is_file())
        })
}

/// One agent's wiring in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AgentWiring {
    /// The agent.
    pub agent: &'static str,
    /// The file (for hook scripts, their directory), relative to the work tree.
    pub file: String,
    /// `wired`, `partial` or `not_wired`.
    pub state: WiringState,
}

/// [`Wiring`], as JSON shows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum WiringState {
    /// Every event we hook.
    Wired,
    /// Some of them.
    Partial,
    /// None.
    NotWired,
}

impl From<Wiring> for WiringState {
    fn from(w: Wiring) -> Self {
        match w {
            Wiring::Wired => WiringState::Wired,
            Wiring::Partial => WiringState::Partial,
            Wiring::NotWired => WiringState::NotWired,
        }
    }
}

/// A change `enable --agent` or `disable` made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentChange {
    /// The agent.
    pub agent: &'static str,
    /// The file, relative to the work tree.
    pub file: String,
    /// Whether our hooks went in (or came out).
    pub wired: bool,
}

/// Every agent's wiring in each of its files that holds any of our hooks; an agent's hook
/// scripts are one row, their directory, wired when every script is there.
pub fn wiring(repo: &Repo) -> Vec<AgentWiring> {
    let Some(root) = repo.workdir() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for agent in agents::hooks::all() {
        let states: Vec<(String, Wiring)> = agent
            .all_files()
            .into_iter()
            .map(|file| {
                let text = read_text(&root.join(&file), &file).ok().flatten();
                let state = agent.wiring(&file, text.as_deref());
                (file, state)
            })
            .collect();
        let rows = match agent.layout {
            Layout::Scripts(_) => {
                let wired = states.iter().filter(|(_, s)| *s == Wiring::Wired).count();
                let state = match wired {
                    0 => Wiring::NotWired,
                    n if n == states.len() => Wiring::Wired,
                    _ => Wiring::Partial,
                };
                vec![(agent.config.to_owned(), state)]
            }
            _ => states,
        };
        for (file, state) in rows {
            if state != Wiring::NotWired {
                out.push(AgentWiring {
                    agent: agent.name,
                    file,
                    state: state.into(),
                });
            }
        }
    }
    out
}

/// An edit of an agent's configuration, checked and ready to write ([`plan`], [`apply`]).
#[derive(Debug)]
pub struct Planned {
    agent: &'static AgentHooks,
    file: String,
    path: PathBuf,
    before: Option<String>,
    text: String,
}

/// What putting our hooks into `agent`'s configuration would write (with `local`, its local,
/// uncommitted file where it has one; each of its hook scripts), checked: nothing where they
/// are all there. Nothing is written, so every agent's file can be checked before anything
/// changes.
pub fn plan(
    repo: &Repo,
    agent: &'static AgentHooks,
    local: bool,
) -> Result<Vec<Planned>, AgentHooksError> {
    let root = repo.workdir().ok_or(AgentHooksError::Bare)?;
    let mut planned = Vec::new();
    for file in agent.files(local) {
        let path = root.join(&file);
        refuse_links(root, &file)?;
        let before = read_text(&path, &file)?;
        let edit =
            agent
                .install(&file, before.as_deref())
                .map_err(|source| AgentHooksError::Config {
                    file: file.clone(),
                    source,
                })?;
        if let Edit::Write(text) = edit {
            planned.push(Planned {
                agent,
                file,
                path,
                before,
                text,
            });
        }
    }
    Ok(planned)
}

/// Writes a [`plan`]ned edit, keeping the file as it was for `disable`.
pub fn apply(repo: &Repo, planned: Planned) -> Result<AgentChange, AgentHooksError> {
    if let Some(before) = &planned.before {
        keep_original(repo, planned.agent, &planned.file, before)?;
    }
    let executable = matches!(planned.agent.layout, Layout::Scripts(_));
    write_text(&planned.path, &planned.file, &planned.text, executable)?;
    Ok(AgentChange {
        agent: planned.agent.name,
        file: planned.file,
        wired: true,
    })
}

/// Takes our hooks out of `agent`'s files (its configuration and its local one).
pub fn unwire(
    repo: &Repo,
    agent: &'static AgentHooks,
) -> Result<Vec<AgentChange>, AgentHooksError> {
    let root = repo.workdir().ok_or(AgentHooksError::Bare)?;
    let mut changes = Vec::new();
    for file in agent.all_files() {
        let path = root.join(&file);
        refuse_links(root, &file)?;
        let Some(text) = read_text(&path, &file)? else {
            continue;
        };
        let edit = agent
            .uninstall(&file, &text)
            .map_err(|source| AgentHooksError::Config {
                file: file.clone(),
                source,
            })?;
        let original = original_path(repo, agent, &file);
        let kept = read_text(&original, &file).ok().flatten();
        match edit {
            Edit::Unchanged => continue,
            Edit::Remove => std::fs::remove_file(&path).map_err(|source| AgentHooksError::Io {
                action: "remove",
                file: file.clone(),
                source,
            })?,
            Edit::Write(left) => {
                // What is left means what the file said before enable: its bytes, as they were.
                let same = kept.as_deref().is_some_and(|k| same_json(k, &left));
                write_text(
                    &path,
                    &file,
                    kept.as_deref().filter(|_| same).unwrap_or(&left),
                    false,
                )?;
            }
        }
        let _ = std::fs::remove_file(&original);
        changes.push(AgentChange {
            agent: agent.name,
            file,
            wired: false,
        });
    }
    Ok(changes)
}

/// Whether two JSON texts mean the same document.
fn same_json(a: &str, b: &str) -> bool {
    let parse = |t: &str| serde_json::from_str::<serde_json::Value>(t).ok();
    parse(a).is_some() && parse(a) == parse(b)
}

/// Where `enable --agent` keeps the file `file` of `agent` as it was.
fn original_path(repo: &Repo, agent: &AgentHooks, file: &str) -> PathBuf {
    repo.common_dir()
        .join("entire")
        .join("agents")
        .join(agent.name)
        .join(file.replace('/', "%2F"))
}

/// Keeps the file as it was before our first edit (a later enable keeps the first).
fn keep_original(
    repo: &Repo,
    agent: &AgentHooks,
    file: &str,
    text: &str,
) -> Result<(), AgentHooksError> {
    let path = original_path(repo, agent, file);
    if path.exists() {
        return Ok(());
    }
    let io = |source| AgentHooksError::Io {
        action: "write",
        file: path.display().to_string(),
        source,
    };
    std::fs::create_dir_all(path.parent().expect("a parent")).map_err(io)?;
    write_atomic(&path, text.as_bytes(), 0o644).map_err(io)
}

/// Refuses when `file` (relative to `root`) or a directory on its way is a symbolic link.
fn refuse_links(root: &Path, file: &str) -> Result<(), AgentHooksError> {
    let mut at = root.to_path_buf();
    for part in Path::new(file).components() {
        at.push(part);
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(AgentHooksError::Link {
                file: file.to_owned(),
                link: at.strip_prefix(root).unwrap_or(&at).display().to_string(),
            });
        }
    }
    Ok(())
}

/// The text of the file at `path` (shown as `file`), `None` when it does not exist.
fn read_text(path: &Path, file: &str) -> Result<Option<String>, AgentHooksError> {
    let io = |source| AgentHooksError::Io {
        action: "read",
        file: file.to_owned(),
        source,
    };
    match read_owned(path, MAX_CONFIG_BYTES).map_err(io)? {
        None => Ok(None),
        Some(bytes) => String::from_utf8(bytes)
            .map(Some)
            .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e))),
    }
}

/// Writes `text` to `path` (shown as `file`), its directory made when missing: `executable`
/// (a hook script the agent runs), or with the permissions of the file it replaces.
fn write_text(
    path: &Path,
    file: &str,
    text: &str,
    executable: bool,
) -> Result<(), AgentHooksError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |source| AgentHooksError::Io {
        action: "write",
        file: file.to_owned(),
        source,
    };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    let mode = match std::fs::metadata(path) {
        _ if executable => 0o755,
        Ok(m) => m.permissions().mode() & 0o7777,
        Err(_) => 0o644,
    };
    write_atomic(path, text.as_bytes(), mode).map_err(io)
}
