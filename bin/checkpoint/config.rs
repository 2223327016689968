//! `config` and `status`: the resolved topology, where checkpoints travel, every effective
//! setting with its origin, and (for `status`) the push queue, the hooks and the cost figures;
//! `config set` / `config unset`.

use serde::Serialize;

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::agent_hooks::WiringState;
use entire_checkpoints::ops::settings::parse_value;
use entire_checkpoints::ops::status::{self, Delivery, RefCounts, TopologyNames};
use entire_checkpoints::ops::{hooks, settings, trust, Topology};

use super::args::{ConfigAction, DateFormat};
use super::hooks::HooksDoc;
use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

/// One effective setting of `config --json`.
#[derive(Serialize)]
struct SettingDoc {
    key: &'static str,
    value: serde_json::Value,
    origin: &'static str,
}

impl SettingDoc {
    fn of(s: settings::Setting) -> SettingDoc {
        SettingDoc {
            key: s.key,
            value: s.value,
            origin: s.origin.name(),
        }
    }

    /// `key = value  (origin)`: strings bare, other values as compact JSON.
    fn human(&self) -> String {
        let value = match &self.value {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        format!("{} = {value}  ({})\n", self.key, self.origin)
    }
}

/// `config --json`.
#[derive(Serialize)]
struct ConfigDoc {
    #[serde(flatten)]
    topology: TopologyNames,
    #[serde(flatten)]
    delivery: Delivery,
    settings: Vec<SettingDoc>,
}

/// `status --json`.
#[derive(Serialize)]
struct StatusDoc {
    #[serde(flatten)]
    topology: TopologyNames,
    queued: usize,
    /// The hooks, as `hooks status --json` shows them.
    hooks: HooksDoc,
    #[serde(flatten)]
    delivery: Delivery,
    checkpoint_refs: RefCounts,
    scale_warning: Option<String>,
    /// Every effective setting, as `config` lists them; null when a setting is invalid (`config`
    /// says which).
    settings: Option<Vec<SettingDoc>>,
    /// Whether the committed settings file is approved (`trust`), and what awaits approval.
    settings_approval: ApprovalDoc,
    /// The agents' configuration files that hold our hooks.
    agents: Vec<entire_checkpoints::ops::agent_hooks::AgentWiring>,
    /// The last agent hook that failed, until a hook of that agent succeeds.
    agent_hook_failure: Option<entire_checkpoints::ops::capture::HookFailure>,
}

/// The `settings_approval` of [`StatusDoc`].
#[derive(Serialize)]
struct ApprovalDoc {
    /// `no_file`, `approved` or `not_approved`.
    state: entire_checkpoints::ops::trust::TrustState,
    /// What the committed file asks for that is not used until approved; null when nothing.
    awaiting: Option<String>,
}

/// The topology and where checkpoints travel, in words (`config` and `status` start with them).
fn topology_human(topology: &TopologyNames, delivery: &Delivery) -> String {
    let mirrors = match topology.mirrors.is_empty() {
        true => "(none)".to_owned(),
        false => topology.mirrors.join(", "),
    };
    let remote = match (&delivery.checkpoint_remote, &delivery.checkpoint_delivery) {
        (Some(d), _) => format!("{} (dedicated checkpoint remote, from {})", d.url, d.source),
        (None, Some(code)) => format!("{code} (the code remote; no checkpoint_remote set)"),
        (None, None) => "(none)".to_owned(),
    };
    format!(
        "primary  {}\nmirrors  {mirrors}\nsource   {}\nrollout  {}\nremote   {remote}\n",
        topology.primary, topology.source, topology.rollout
    )
}

/// `config`.
pub fn config(repo: &Repo, topo: &Topology<'_>, json: bool) -> Result<()> {
    let doc = ConfigDoc {
        topology: status::topology(topo),
        delivery: status::delivery(repo)?,
        settings: settings::effective(repo)?
            .into_iter()
            .map(SettingDoc::of)
            .collect(),
    };
    if json {
        return print_json(&doc);
    }
    let mut out = topology_human(&doc.topology, &doc.delivery);
    out.push('\n');
    for s in &doc.settings {
        out.push_str(&s.human());
    }
    write_stdout(out.as_bytes())
}

/// `config set` / `config unset`: silent on success, like `git config`.
pub fn edit(repo: &Repo, action: ConfigAction) -> Result<()> {
    match action {
        ConfigAction::Set {
            local,
            force,
            key,
            value,
        } => {
            settings::set(repo, local, force, &key, parse_value(&value))?;
        }
        ConfigAction::Unset { local, key } => {
            settings::unset(repo, local, &key)?;
        }
    }
    Ok(())
}

/// `status`. No network.
pub fn status(repo: &Repo, topo: &Topology<'_>, json: bool) -> Result<()> {
    let dir = hooks::hooks_dir(repo);
    let hooks = HooksDoc::of(&dir, hooks::sharing(repo, &dir), &hooks::status(repo));
    let shown = status::status(repo, topo)?;
    let doc = StatusDoc {
        topology: shown.topology,
        queued: shown.queued,
        hooks,
        delivery: shown.delivery,
        checkpoint_refs: shown.checkpoint_refs,
        scale_warning: shown.scale_warning,
        settings: settings::effective(repo)
            .ok()
            .map(|all| all.into_iter().map(SettingDoc::of).collect()),
        settings_approval: ApprovalDoc {
            state: trust::state(repo),
            awaiting: trust::pending(repo).map(|p| p.to_string()),
        },
        agents: entire_checkpoints::ops::agent_hooks::wiring(repo),
        agent_hook_failure: entire_checkpoints::ops::capture::last_failure(repo.common_dir()),
    };
    if json {
        print_json(&doc)
    } else {
        write_stdout(doc.human().as_bytes())
    }
}

impl StatusDoc {
    fn human(&self) -> String {
        let mut out = topology_human(&self.topology, &self.delivery);
        out.push_str(&format!("queued   {}\n", self.queued));
        out.push_str(&format!("hooks    {}\n", self.hooks.summary()));
        let refs = &self.checkpoint_refs;
        let remote = match (refs.remote_count, &refs.remote_counted_at) {
            (Some(n), Some(at)) => format!(
                "{n} on the remote as of {}",
                DateFormat::Iso.show(at, 0)
            ),
            _ => "remote count not known yet (recorded by push, list --remote, entire-fetch --all and gc)".to_owned(),
        };
        out.push_str(&format!("refs     {} local, {remote}\n", refs.local_count));
        if let Some(w) = &self.scale_warning {
            out.push_str(&format!("warning  {w}\n"));
        }
        if let Some(w) = &self.settings_approval.awaiting {
            out.push_str(&format!("trust    {w}\n"));
        }
        for a in &self.agents {
            let state = match a.state {
                WiringState::Wired => "wired",
                WiringState::Partial => "partly wired (enable --agent wires the rest)",
                WiringState::NotWired => "not wired",
            };
            out.push_str(&format!("agent    {} {state} ({})\n", a.agent, a.file));
        }
        if let Some(f) = &self.agent_hook_failure {
            out.push_str(&format!(
                "warning  the {} hook {} failed at {}, so that event was not recorded: {}\n",
                f.agent,
                f.event,
                DateFormat::Iso.show(&f.at, 0),
                f.message
            ));
        }
        // The settings a user changed, one line each (`config` lists them all).
        let changed: Vec<&SettingDoc> = self
            .settings
            .iter()
            .flatten()
            .filter(|s| s.origin != "default")
            .collect();
        if !changed.is_empty() {
            out.push('\n');
            for s in changed {
                out.push_str(&s.human());
            }
        }
        out
    }
}
