//! `enable` and `disable`: one line per change, or one JSON document.

use serde::Serialize;

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::enable::{self, Change, EnableOptions, Enabled, StoreKind};
use entire_checkpoints::ops::hooks;
use entire_checkpoints::ops::import::{self, ImportAsk, ImportReport};

use super::args::{EnableArgs, StoreChoice};
use super::hooks::{HooksDoc, StateName};
use super::style::Style;
use crate::common::cli::{info, warn};
use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

/// What a clone whose committed settings enable checkpoints is told while its hooks are missing
/// (`ops::enable::clone_needs_enable`), a warning and its hint; `enable` also says when the
/// settings await `trust`.
pub const NOT_ENABLED_HERE: [&str; 2] = [
    "this clone has no checkpoint hooks, so its commits are not linked to checkpoints and staged \
     sessions are not condensed",
    "run git entire-checkpoint enable",
];

/// The committed settings file, as changes show it.
const SHARED_FILE: &str = ".entire/settings.json";

/// `enable`.
pub fn enable(repo: &Repo, a: EnableArgs, quiet: bool) -> Result<()> {
    let store = a.store.map(|s| match s {
        StoreChoice::GitRefs => StoreKind::GitRefs,
        StoreChoice::GitBranch => StoreKind::GitBranch,
    });
    let agents = a.agents.clone();
    let done = enable::enable(
        repo,
        EnableOptions {
            local: a.local,
            store,
            agents: a.agents,
        },
    )?;
    // The history is imported once the settings say where checkpoints go.
    let imported = a
        .import_history
        .then(|| {
            let all = agents.iter().any(|name| name == "all");
            import::import_after_enable(
                repo,
                &ImportAsk {
                    agents: if all { Vec::new() } else { agents },
                    all: true,
                    ..ImportAsk::default()
                },
            )
        })
        .transpose()?;
    render(repo, &done, imported.as_ref(), a.json, quiet)
}

/// `disable` (with `agents`, only those agents' hooks).
pub fn disable(repo: &Repo, agents: &[String], json: bool, quiet: bool) -> Result<()> {
    let done = enable::disable(repo, agents)?;
    render(repo, &done, None, json, quiet)
}

fn render(
    repo: &Repo,
    done: &Enabled,
    imported: Option<&ImportReport>,
    json: bool,
    quiet: bool,
) -> Result<()> {
    for w in &done.warnings {
        warn(quiet, w);
    }
    for d in &done.done {
        info(quiet, d);
    }
    let dir = hooks::hooks_dir(repo);
    let doc = EnableDoc {
        changes: done.changes.iter().map(ChangeDoc::of).collect(),
        primary: done.primary.as_ref().map(|p| PrimaryDoc {
            store: p.store.clone(),
            file: p.file.clone(),
            kept: p.kept,
        }),
        hooks: HooksDoc::of(&dir, hooks::sharing(repo, &dir), &done.hooks),
        import: imported,
    };
    if json {
        return print_json(&doc);
    }
    write_stdout(doc.human().as_bytes())?;
    if let Some(report) = imported {
        for w in &report.warnings {
            warn(quiet, w);
        }
        write_stdout(super::write::import_human(report, &Style::plain()).as_bytes())?;
    }
    Ok(())
}

/// `enable --json` / `disable --json` (docs/schema/enable.json).
#[derive(Serialize)]
struct EnableDoc<'a> {
    /// What changed, in order; empty when nothing had to.
    changes: Vec<ChangeDoc>,
    /// The primary store afterwards (null for `disable`).
    primary: Option<PrimaryDoc>,
    /// The hooks afterwards, as `hooks status --json`.
    hooks: HooksDoc,
    /// What `--import-history` imported, as `session import --json` prints it.
    #[serde(skip_serializing_if = "Option::is_none")]
    import: Option<&'a ImportReport>,
}

/// The primary store of [`EnableDoc`].
#[derive(Serialize)]
struct PrimaryDoc {
    store: String,
    /// The settings file it is set in.
    file: String,
    /// The settings named it already and it was left as it was.
    kept: bool,
}

/// One change of [`EnableDoc`], tagged by `change`.
#[derive(Serialize)]
#[serde(tag = "change", rename_all = "snake_case")]
enum ChangeDoc {
    Primary {
        file: String,
        from: Option<String>,
        to: &'static str,
    },
    Enabled {
        file: String,
    },
    Disabled {
        file: String,
    },
    Gitignore {
        file: &'static str,
        added: Vec<&'static str>,
    },
    /// `man.viewer` in the repository's config (set, or removed).
    HelpViewer {
        set: bool,
    },
    /// Our hooks in an agent's configuration file (put in, or taken out).
    Agent {
        agent: &'static str,
        file: String,
        wired: bool,
    },
    Hook {
        name: String,
        state: StateName,
        chains: Vec<String>,
        manager: Option<String>,
    },
}

impl ChangeDoc {
    fn of(c: &Change) -> ChangeDoc {
        match c {
            Change::Primary { file, from, to } => ChangeDoc::Primary {
                file: file.clone(),
                from: from.clone(),
                to: to.name(),
            },
            Change::Enabled { file } => ChangeDoc::Enabled { file: file.clone() },
            Change::Disabled { file } => ChangeDoc::Disabled { file: file.clone() },
            Change::Ignored { added } => ChangeDoc::Gitignore {
                file: ".entire/.gitignore",
                added: added.clone(),
            },
            Change::HelpViewer { set } => ChangeDoc::HelpViewer { set: *set },
            Change::Agent { agent, file, wired } => ChangeDoc::Agent {
                agent,
                file: file.clone(),
                wired: *wired,
            },
            Change::Hook { name, state } => {
                let (state, chains, manager) = StateName::of(state);
                ChangeDoc::Hook {
                    name: name.clone(),
                    state,
                    chains,
                    manager,
                }
            }
        }
    }

    /// The change as one line.
    fn human(&self) -> String {
        match self {
            ChangeDoc::Primary {
                file,
                from: Some(from),
                to,
            } => format!("primary store: {from} -> {to} ({file})"),
            ChangeDoc::Primary { file, to, .. } => format!("primary store: {to} ({file})"),
            ChangeDoc::Enabled { file } => format!("enabled: true ({file})"),
            ChangeDoc::Disabled { file } => format!("enabled: false ({file})"),
            ChangeDoc::Gitignore { file, added } => {
                format!("{file}: ignores {}", added.join(", "))
            }
            ChangeDoc::HelpViewer { set: true } => {
                "git help: our help where no man page is installed (man.viewer in .git/config)"
                    .to_owned()
            }
            ChangeDoc::HelpViewer { set: false } => {
                "git help: man.viewer removed from .git/config".to_owned()
            }
            ChangeDoc::Agent {
                agent,
                file,
                wired: true,
            } => format!("agent {agent}: our hooks in {file}"),
            ChangeDoc::Agent { agent, file, .. } => {
                format!("agent {agent}: our hooks taken out of {file}")
            }
            ChangeDoc::Hook {
                name,
                state,
                chains,
                manager,
            } => format!("hook {name}: {}", state.words(chains, manager.as_deref())),
        }
    }
}

impl EnableDoc<'_> {
    /// One line per change, or that nothing changed, and to commit `.entire/` when a change is
    /// in its shared files; then, for `enable`, a primary other than git-refs that the settings
    /// named and that was kept.
    fn human(&self) -> String {
        // The hooks ours no longer holds (disable) are one line, whoever's they are now.
        let removed: Vec<&str> = self
            .changes
            .iter()
            .filter_map(|c| match c {
                ChangeDoc::Hook {
                    name,
                    state: StateName::Foreign | StateName::Missing,
                    ..
                } => Some(name.as_str()),
                _ => None,
            })
            .collect();
        let mut text = String::new();
        for c in &self.changes {
            match c {
                ChangeDoc::Hook {
                    name,
                    state: StateName::Foreign | StateName::Missing,
                    ..
                } => {
                    if removed.first() == Some(&name.as_str()) {
                        text.push_str(&format!("removed our hooks: {}\n", removed.join(", ")));
                    }
                }
                _ => text.push_str(&format!("{}\n", c.human())),
            }
        }
        if self.changes.is_empty() {
            text.push_str("nothing changed\n");
        }
        // The committed settings are what tell a teammate's clone to enable: say to commit them.
        let shared = self.changes.iter().any(|c| match c {
            ChangeDoc::Primary { file, .. } | ChangeDoc::Enabled { file } => file == SHARED_FILE,
            ChangeDoc::Disabled { .. }
            | ChangeDoc::Gitignore { .. }
            | ChangeDoc::HelpViewer { .. }
            | ChangeDoc::Agent { .. }
            | ChangeDoc::Hook { .. } => false,
        });
        if shared {
            text.push_str(
                "commit .entire/ so that every clone of this repository is told to enable: \
                 git add .entire && git commit\n",
            );
        }
        // The default needs no word; another primary the settings name is kept, and said so.
        if let Some(p) = self
            .primary
            .as_ref()
            .filter(|p| p.kept && p.store != StoreKind::GitRefs.name())
        {
            text.push_str(&format!(
                "primary store: {} (kept, from {}; --store switches it)\n",
                p.store, p.file
            ));
        }
        text
    }
}
