//! `config` and `status`: the resolved topology, where checkpoints travel, every effective
//! setting with its origin, and (for `status`) the push queue, the hooks and the cost figures;
//! `config set` / `config unset`.

use serde::Serialize;

use entire_checkpoints::config::edit::parse_value;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::agent_hooks::WiringState;
use entire_checkpoints::ops::{hooks, settings, trust};
use entire_checkpoints::remote::checkpoint_remote::{self, CheckpointRemote};
use entire_checkpoints::remote::scale;
use entire_checkpoints::topology::Topology;

use super::args::{ConfigAction, DateFormat};
use super::hooks::HooksDoc;
use crate::common::error::Result;
use crate::common::output::{print_json, write_stdout};

/// The topology (`config --json` starts with it).
#[derive(Serialize)]
struct TopologyDoc {
    primary: &'static str,
    mirrors: Vec<String>,
    source: &'static str,
    rollout: &'static str,
}

/// The dedicated checkpoint remote, URL with credentials redacted.
#[derive(Serialize)]
struct DedicatedRemote {
    url: String,
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    provider: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repo: Option<String>,
}

/// Where checkpoints travel: `checkpoint_remote` (the dedicated checkpoint remote, or `null`)
/// and `checkpoint_delivery` (the remote checkpoint refs are pushed to and fetched from by
/// default, or `null` without any remote).
#[derive(Serialize)]
struct Delivery {
    checkpoint_remote: Option<DedicatedRemote>,
    checkpoint_delivery: Option<String>,
}

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
    topology: TopologyDoc,
    #[serde(flatten)]
    delivery: Delivery,
    settings: Vec<SettingDoc>,
}

/// How many checkpoint refs there are: here, and on the delivery remote as last recorded.
#[derive(Serialize)]
struct RefCounts {
    local_count: usize,
    remote_count: Option<u64>,
    remote_counted_at: Option<String>,
}

/// `status --json`.
#[derive(Serialize)]
struct StatusDoc {
    #[serde(flatten)]
    topology: TopologyDoc,
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

impl TopologyDoc {
    fn of(topo: &Topology<'_>) -> TopologyDoc {
        TopologyDoc {
            primary: topo.primary().name(),
            mirrors: topo.mirror_names(),
            source: topo.source().name(),
            rollout: topo.rollout().name(),
        }
    }

    fn human(&self, delivery: &Delivery) -> String {
        let mirrors = match self.mirrors.is_empty() {
            true => "(none)".to_owned(),
            false => self.mirrors.join(", "),
        };
        let remote = match (&delivery.checkpoint_remote, &delivery.checkpoint_delivery) {
            (Some(d), _) => format!("{} (dedicated checkpoint remote, from {})", d.url, d.source),
            (None, Some(code)) => format!("{code} (the code remote; no checkpoint_remote set)"),
            (None, None) => "(none)".to_owned(),
        };
        format!(
            "primary  {}\nmirrors  {mirrors}\nsource   {}\nrollout  {}\nremote   {remote}\n",
            self.primary, self.source, self.rollout
        )
    }
}

impl Delivery {
    /// An invalid `checkpoint_remote` setting is an error.
    fn of(repo: &Repo) -> Result<Delivery> {
        let configured = checkpoint_remote::configured(repo)?;
        let target = checkpoint_remote::resolve(repo, None)?;
        let checkpoint_remote = match (&configured, &target) {
            (Some((remote, source)), Some(t)) => {
                let (provider, repo) = match remote {
                    CheckpointRemote::Forge { provider, repo } => {
                        (Some(provider.name()), Some(repo.as_str().to_owned()))
                    }
                    _ => (None, None),
                };
                Some(DedicatedRemote {
                    url: t.display.clone(),
                    source: source.name(),
                    provider,
                    repo,
                })
            }
            _ => None,
        };
        Ok(Delivery {
            checkpoint_remote,
            checkpoint_delivery: target.map(|t| t.display),
        })
    }
}

/// `config`.
pub fn config(repo: &Repo, topo: &Topology<'_>, json: bool) -> Result<()> {
    let doc = ConfigDoc {
        topology: TopologyDoc::of(topo),
        delivery: Delivery::of(repo)?,
        settings: settings::effective(repo)?
            .into_iter()
            .map(SettingDoc::of)
            .collect(),
    };
    if json {
        return print_json(&doc);
    }
    let mut out = doc.topology.human(&doc.delivery);
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
    let topology = TopologyDoc::of(topo);
    let queued = entire_checkpoints::remote::destination::pending_count(repo, topo.refs_store());
    let delivery = Delivery::of(repo)?;
    let target = checkpoint_remote::resolve(repo, None)?;
    let known = target
        .as_ref()
        .and_then(|t| scale::last_remote_count(repo, &t.target));
    let doc = StatusDoc {
        topology,
        queued,
        hooks,
        delivery,
        checkpoint_refs: RefCounts {
            local_count: scale::local_count(repo),
            remote_count: known.as_ref().map(|k| k.count),
            remote_counted_at: known.map(|k| k.at),
        },
        scale_warning: target.as_ref().and_then(|t| scale::warning(repo, t)),
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
        let mut out = self.topology.human(&self.delivery);
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
