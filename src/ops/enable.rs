//! `enable` and `disable`: turning checkpoints on in a repository in one command (the settings,
//! `.entire/.gitignore`, the hooks), and turning the hooks off again with everything else kept.

use serde_json::Value;

use crate::base::error::{ExitStatus, USAGE};
use crate::config::edit::{ignored_lines_missing, Document, EditError};
use crate::config::settings::{
    shown, ConfigSource, SettingsError, SettingsFiles, LOCAL_SETTINGS_FILE, SETTINGS_DIR,
    SETTINGS_FILE,
};
use crate::git::repo::Repo;
use crate::ops::agent_hooks::{self, AgentChange, AgentHooksError};
use crate::ops::help_viewer;
use crate::ops::hooks::{self, HookError, HookState, InstallOptions};
use crate::ops::settings::{self, SettingsOpError};

pub use crate::store::StoreKind;

/// The settings key of the primary store.
const PRIMARY_KEY: &str = "checkpoints.primary.type";
/// The top-level key the reference writes on enable (and sets to `false` on disable); kept in
/// step so that the reference's commands see the repository as enabled too.
const ENABLED_KEY: &str = "enabled";

/// Errors of `enable` and `disable`.
#[derive(Debug, thiserror::Error)]
pub enum EnableError {
    /// Checkpoints are recorded from a work tree's commits; a bare repository has none.
    #[error("this is a bare repository: enable needs a work tree (the settings live in its .entire/ and the hooks run on its commits); nothing changed")]
    Bare,
    /// The settings as they are cannot be read.
    #[error(transparent)]
    Settings(#[from] SettingsError),
    /// The settings file cannot be loaded for editing.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The settings edit was refused or failed.
    #[error(transparent)]
    Set(#[from] SettingsOpError),
    /// The hooks could not be installed or removed.
    #[error(transparent)]
    Hooks(#[from] HookError),
    /// An agent's hooks could not be wired or taken out.
    #[error(transparent)]
    Agent(#[from] AgentHooksError),
}

impl ExitStatus for EnableError {
    /// A bare repository is a usage error (the command cannot apply there); the rest are the
    /// wrapped errors' codes.
    fn exit_code(&self) -> i32 {
        match self {
            EnableError::Bare => USAGE,
            EnableError::Settings(e) => e.exit_code(),
            EnableError::Edit(e) => e.exit_code(),
            EnableError::Set(e) => e.exit_code(),
            EnableError::Hooks(e) => e.exit_code(),
            EnableError::Agent(e) => e.exit_code(),
        }
    }
}

/// What `enable` was asked.
#[derive(Debug, Clone, Default)]
pub struct EnableOptions {
    /// Write the per-clone `.git/entire/settings.local.json` instead of `.entire/settings.json`,
    /// and each agent's local, uncommitted configuration file where it has one.
    pub local: bool,
    /// The primary store to set; `None` keeps the one the settings name (git-refs when none).
    pub store: Option<StoreKind>,
    /// The agents whose own hooks to wire (`--agent`: names, or `all`).
    pub agents: Vec<String>,
}

/// One thing `enable` or `disable` changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// `checkpoints.primary.type` was set in `file`.
    Primary {
        /// The settings file, as shown.
        file: String,
        /// The effective primary before, when the settings named one.
        from: Option<String>,
        /// The primary set.
        to: StoreKind,
    },
    /// `"enabled": true` was set in `file`.
    Enabled {
        /// The settings file, as shown.
        file: String,
    },
    /// `"enabled": false` was set in `file` (by `disable`).
    Disabled {
        /// The settings file, as shown.
        file: String,
    },
    /// Lines were added to `.entire/.gitignore`.
    Ignored {
        /// The lines added.
        added: Vec<&'static str>,
    },
    /// Our man viewer was named in the repository's config (`set`) or removed from it, so that
    /// `git entire-checkpoint --help` finds help without installed man pages
    /// ([`crate::ops::help_viewer`]).
    HelpViewer {
        /// Set (`enable`) or removed (`disable`).
        set: bool,
    },
    /// Our hooks went into an agent's configuration file, or came out of it.
    Agent {
        /// The agent.
        agent: &'static str,
        /// The file, relative to the work tree.
        file: String,
        /// In (`enable`) or out (`disable`).
        wired: bool,
    },
    /// A hook's state changed.
    Hook {
        /// The hook.
        name: String,
        /// Its state now.
        state: HookState,
    },
}

/// The primary store after `enable`, and where it is set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Primary {
    /// The store type, as the settings name it.
    pub store: String,
    /// The settings file it is set in, as shown.
    pub file: String,
    /// The settings named it already and `enable` left it as it was (no `--store`).
    pub kept: bool,
}

/// What `enable` or `disable` did.
#[derive(Debug, Clone)]
pub struct Enabled {
    /// What changed, in the order it was done; empty when nothing had to.
    pub changes: Vec<Change>,
    /// The effective primary afterwards (`None` for `disable`, which does not look).
    pub primary: Option<Primary>,
    /// Every hook's state afterwards.
    pub hooks: Vec<(String, HookState)>,
    /// What the hooks' install or uninstall changed besides their states (a hook manager's
    /// configuration), one sentence each: information, not warnings.
    pub done: Vec<String>,
    /// Warnings for the user, one sentence each.
    pub warnings: Vec<String>,
}

/// The effective primary of `files` (the environment override left out: the files are what is
/// written) with where it comes from; `None` when the settings name none.
fn primary_of(files: &SettingsFiles) -> Result<Option<(String, ConfigSource)>, SettingsError> {
    let resolved = files.files_checkpoints_config()?;
    Ok(resolved.config.map(|c| (c.primary.kind, resolved.source)))
}

/// The hooks whose state differs between `before` and `after`, as changes.
fn hook_changes(before: &[(String, HookState)], after: &[(String, HookState)]) -> Vec<Change> {
    after
        .iter()
        .filter(|(name, state)| !before.iter().any(|(n, s)| n == name && s == state))
        .map(|(name, state)| Change::Hook {
            name: name.clone(),
            state: state.clone(),
        })
        .collect()
}

/// `enable`: installs the hooks (hook managers included, as `hooks install` does), makes git
/// ignore the per-clone files of `.entire/`, and writes the settings: `checkpoints.primary.type`
/// (git-refs unless `options.store` says otherwise, only where the settings name no primary or
/// `options.store` names another one) and `"enabled": true`, in `.entire/settings.json` or,
/// with `options.local`, `.entire/settings.local.json`. Idempotent: a second run changes
/// nothing. The hooks go first, so a refused install (a shared hooks directory, a hook
/// manager's configuration that is not ours) changes nothing. Refused in a bare repository.
pub fn enable(repo: &Repo, options: EnableOptions) -> Result<Enabled, EnableError> {
    let worktree = repo.workdir().ok_or(EnableError::Bare)?;
    let name = if options.local {
        LOCAL_SETTINGS_FILE
    } else {
        SETTINGS_FILE
    };
    let file = shown(name);
    let mut warnings_before = Vec::new();
    let current = primary_of(repo.settings())?;
    // Loaded up front so that a file that cannot be edited stops everything before the hooks.
    let agents = agent_hooks::chosen(repo, &options.agents)?;
    let mut planned = Vec::new();
    for agent in &agents {
        if options.local && agent.local_config.is_none() {
            warnings_before.push(format!(
                "{} has no local configuration file: its hooks go into {}",
                agent.name, agent.config
            ));
        }
        planned.extend(agent_hooks::plan(repo, agent, options.local)?);
    }
    let target = if options.local {
        Document::load_local(repo.common_dir())?
    } else {
        Document::load_committed(worktree, repo.foreign_settings_dir())?
    }
    .value();
    let ignored_before = ignored_lines_missing(worktree);
    let hooks_before = hooks::status(repo);
    let installed = hooks::install(repo, InstallOptions::default())?;
    let mut changes = hook_changes(&hooks_before, &installed.states);
    let mut warnings = installed.warnings;
    let done = installed.done;
    help_viewer_change(
        help_viewer::install(repo),
        true,
        &mut changes,
        &mut warnings,
    );
    warnings.append(&mut warnings_before);
    for p in planned {
        changes.push(agent_change(agent_hooks::apply(repo, p)?));
    }
    warnings.extend(agents.iter().filter_map(|a| a.note).map(str::to_owned));

    let wanted = options.store.unwrap_or(StoreKind::GitRefs);
    let in_target = target
        .pointer("/checkpoints/primary/type")
        .and_then(Value::as_str);
    let write_primary = match (&current, options.store) {
        // The settings name a primary and none was asked for: it stays.
        (Some(_), None) => false,
        (None, _) => true,
        (Some(_), Some(asked)) => in_target != Some(asked.name()),
    };
    if write_primary {
        settings::set(
            repo,
            options.local,
            false,
            PRIMARY_KEY,
            Value::from(wanted.name()),
        )?;
        let from = current.as_ref().map(|(kind, _)| kind.clone());
        if let Some(f) = from.as_deref().filter(|f| *f != wanted.name()) {
            let migrate = match wanted {
                StoreKind::GitRefs => " (`git entire-checkpoint migrate` copies them over)",
                StoreKind::GitBranch => "",
            };
            warnings.push(format!(
                "the checkpoints written so far stay in {f}, where reads still find them; new ones go to {wanted}{migrate}"
            ));
        }
        changes.push(Change::Primary {
            file: file.clone(),
            from,
            to: wanted,
        });
    }
    if target.get(ENABLED_KEY) != Some(&Value::Bool(true)) {
        settings::set(repo, options.local, false, ENABLED_KEY, Value::Bool(true))?;
        changes.push(Change::Enabled { file: file.clone() });
    }
    // A `disable` of this clone (`"enabled": false` in the local file, which wins) ends here.
    let local = repo.settings().local();
    if !options.local && local.and_then(|v| v.get(ENABLED_KEY)) == Some(&Value::Bool(false)) {
        settings::set(repo, true, false, ENABLED_KEY, Value::Bool(true))?;
        changes.push(Change::Enabled {
            file: shown(LOCAL_SETTINGS_FILE),
        });
    }
    let missing_now = ignored_lines_missing(worktree);
    let added: Vec<&'static str> = ignored_before
        .into_iter()
        .filter(|line| !missing_now.contains(line))
        .collect();
    if !added.is_empty() {
        changes.push(Change::Ignored { added });
    }
    // The settings as written now (the repository's were read once, before the edits).
    let after = primary_of(&SettingsFiles::read(
        Some(worktree),
        Some(repo.common_dir()),
        repo,
    ))?;
    let primary = after.map(|(store, origin)| Primary {
        kept: !write_primary,
        store,
        file: shown_origin(origin),
    });
    if let (Some(p), Some(asked)) = (&primary, options.store) {
        if p.store != asked.name() {
            warnings.push(format!(
                "{} sets the primary store to {}, and its checkpoints block wins over {file}'s",
                p.file, p.store
            ));
        }
    }
    if let Some(pending) = crate::ops::trust::pending(repo) {
        warnings.push(pending.to_string());
    }
    Ok(Enabled {
        changes,
        primary,
        hooks: installed.states,
        done,
        warnings,
    })
}

/// Records what [`help_viewer::install`] (`set`) or [`help_viewer::uninstall`] did: a change,
/// or a warning (help is not worth failing `enable` or `disable` for).
fn help_viewer_change(
    done: Result<bool, help_viewer::HelpViewerError>,
    set: bool,
    changes: &mut Vec<Change>,
    warnings: &mut Vec<String>,
) {
    match done {
        Ok(true) => changes.push(Change::HelpViewer { set }),
        Ok(false) => {}
        Err(e) => warnings.push(format!(
            "git help's man viewer could not be {}: {}",
            if set { "set" } else { "removed" },
            crate::base::error::error_chain(&e)
        )),
    }
}

/// The settings file a config source names, as shown.
fn shown_origin(origin: ConfigSource) -> String {
    match origin {
        ConfigSource::SettingsLocal => shown(LOCAL_SETTINGS_FILE),
        ConfigSource::Settings => shown(SETTINGS_FILE),
        ConfigSource::Default | ConfigSource::Env => SETTINGS_DIR.to_owned(),
    }
}

/// `disable`: removes our hooks (and what `hooks install` put into a hook manager's
/// configuration), putting back the hooks they chained, and our hooks from every agent's
/// configuration. Every checkpoint, setting and `.entire/` file stays as it is, so `enable`
/// turns everything back on. With `agents`, only those agents' hooks come out, nothing else.
pub fn disable(repo: &Repo, agents: &[String]) -> Result<Enabled, EnableError> {
    if !agents.is_empty() {
        let mut changes = Vec::new();
        for agent in agent_hooks::chosen(repo, agents)? {
            changes.extend(
                agent_hooks::unwire(repo, agent)?
                    .into_iter()
                    .map(agent_change),
            );
        }
        return Ok(Enabled {
            changes,
            primary: None,
            hooks: hooks::status(repo),
            done: Vec::new(),
            warnings: Vec::new(),
        });
    }
    let before = hooks::status(repo);
    let done = hooks::uninstall(repo)?;
    let mut changes = hook_changes(&before, &done.states);
    let mut warnings = done.warnings;
    help_viewer_change(
        help_viewer::uninstall(repo),
        false,
        &mut changes,
        &mut warnings,
    );
    if repo.workdir().is_some() {
        for agent in crate::agents::hooks::all() {
            match agent_hooks::unwire(repo, agent) {
                Ok(out) => changes.extend(out.into_iter().map(agent_change)),
                Err(e) => warnings.push(crate::base::error::error_chain(&e)),
            }
        }
    }
    // The choice is recorded for this clone, so `doctor` does not report the hooks missing.
    if repo.workdir().is_some() && repo.settings().enabled() != Some(false) {
        match settings::set(repo, true, false, ENABLED_KEY, Value::Bool(false)) {
            Ok(_) => changes.push(Change::Disabled {
                file: shown(LOCAL_SETTINGS_FILE),
            }),
            Err(e) => warnings.push(format!(
                "\"enabled\": false could not be recorded: {}",
                crate::base::error::error_chain(&e)
            )),
        }
    }
    Ok(Enabled {
        changes,
        primary: None,
        hooks: done.states,
        done: done.done,
        warnings,
    })
}

/// The change an agent's wiring made.
fn agent_change(c: AgentChange) -> Change {
    Change::Agent {
        agent: c.agent,
        file: c.file,
        wired: c.wired,
    }
}

/// Whether this clone should run `enable`: the committed settings enable checkpoints (the file
/// parses and does not say `"enabled": false`) while a hook they need is missing here, as in a
/// fresh clone (hooks are not cloned): its commits get no trailer and its staged sessions are
/// never condensed into checkpoints.
pub fn clone_needs_enable(repo: &Repo) -> bool {
    let enabled = repo
        .settings()
        .committed()
        .is_some_and(|doc| doc.get("enabled") != Some(&serde_json::Value::Bool(false)));
    enabled
        && crate::ops::hooks::status(repo)
            .iter()
            .any(|(_, state)| *state == crate::ops::hooks::HookState::Missing)
}
