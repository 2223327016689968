//! Human-readable and JSON renderings of read results.

use serde_json::{json, Value};

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::hooks;
use entire_checkpoints::store::{Checkpoint, CheckpointInfo, CommitInfo};
use entire_checkpoints::topology::Topology;

/// `config --json`.
pub fn config_json(topo: &Topology<'_>) -> Value {
    json!({
        "primary": topo.primary().name(),
        "mirrors": topo.mirror_names(),
        "source": topo.source().name(),
        "rollout": topo.rollout().name(),
    })
}

fn str_list(v: &Value) -> String {
    let items: Vec<&str> = v
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items.join(", ")
    }
}

/// Adds where checkpoints travel to `config --json`/`status --json`: `checkpoint_remote` (the
/// dedicated checkpoint remote, or `null`) and `checkpoint_delivery` (the remote checkpoint refs
/// are pushed to and fetched from by default, or `null` without any remote). URLs are shown
/// with credentials redacted. An invalid `checkpoint_remote` setting is an error.
pub fn add_remote_fields(repo: &Repo, v: &mut Value) -> anyhow::Result<()> {
    use entire_checkpoints::remote::checkpoint_remote::{self, CheckpointRemote};
    let configured = checkpoint_remote::configured(repo)?;
    let target = checkpoint_remote::resolve(repo, None)?;
    v["checkpoint_remote"] = match (&configured, &target) {
        (Some((remote, source)), Some(t)) => {
            let mut o = json!({"url": t.display, "source": source.name()});
            if let CheckpointRemote::Forge { provider, repo } = remote {
                o["provider"] = json!(provider.name());
                o["repo"] = json!(repo.as_str());
            }
            o
        }
        _ => Value::Null,
    };
    v["checkpoint_delivery"] = json!(target.as_ref().map(|t| t.display.clone()));
    Ok(())
}

/// Adds the cost figures to `status --json`: `checkpoint_refs` (`local`, and `remote` /
/// `remote_counted_at` as last recorded for the delivery remote, `null` when never seen) and
/// `scale_warning` (`entire_checkpoints::remote::scale::warning`, or `null`). No network.
pub fn add_scale_fields(repo: &Repo, v: &mut Value) -> anyhow::Result<()> {
    use entire_checkpoints::{remote::checkpoint_remote, remote::scale};
    let target = checkpoint_remote::resolve(repo, None)?;
    let known = target
        .as_ref()
        .and_then(|t| scale::last_remote_count(repo, &t.target));
    v["checkpoint_refs"] = json!({
        "local": scale::local_count(repo),
        "remote": known.as_ref().map(|k| k.count),
        "remote_counted_at": known.as_ref().map(|k| k.at.clone()),
    });
    v["scale_warning"] = json!(target.as_ref().and_then(|t| scale::warning(repo, t)));
    Ok(())
}

/// `config`.
pub fn config_human(v: &Value) -> String {
    let s = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let remote = match (&v["checkpoint_remote"], v["checkpoint_delivery"].as_str()) {
        (Value::Object(o), _) => format!(
            "{} (dedicated checkpoint remote, from {})",
            o["url"].as_str().unwrap_or(""),
            o["source"].as_str().unwrap_or("")
        ),
        (_, Some(code)) => format!("{code} (the code remote; no checkpoint_remote set)"),
        (_, None) => "(none)".to_owned(),
    };
    format!(
        "primary  {}\nmirrors  {}\nsource   {}\nrollout  {}\nremote   {remote}\n",
        s("primary"),
        str_list(&v["mirrors"]),
        s("source"),
        s("rollout")
    )
}

/// `status --json`.
pub fn status_json(repo: &Repo, topo: &Topology<'_>) -> Value {
    let mut v = config_json(topo);
    v["queued"] = json!(entire_checkpoints::remote::destination::pending_count(
        repo,
        topo.refs_store()
    ));
    let hooks: serde_json::Map<String, Value> = hooks::status(repo)
        .into_iter()
        .map(|(h, state)| {
            let ours = matches!(
                state,
                hooks::HookState::Installed
                    | hooks::HookState::Chained(_)
                    | hooks::HookState::Managed(_)
            );
            (h, json!(ours))
        })
        .collect();
    v["hooks"] = Value::Object(hooks);
    v
}

/// `status`.
pub fn status_human(v: &Value) -> String {
    let mut out = config_human(v);
    out.push_str(&format!("queued   {}\n", v["queued"]));
    let hooks = v["hooks"].as_object().cloned().unwrap_or_default();
    let line: Vec<String> = hooks
        .iter()
        .map(|(k, on)| {
            format!(
                "{k} {}",
                if on.as_bool() == Some(true) {
                    "installed"
                } else {
                    "missing"
                }
            )
        })
        .collect();
    out.push_str(&format!("hooks    {}\n", line.join(", ")));
    let refs = &v["checkpoint_refs"];
    if let Some(local) = refs["local"].as_u64() {
        let remote = match (refs["remote"].as_u64(), refs["remote_counted_at"].as_str()) {
            (Some(n), Some(at)) => format!("{n} on the remote as of {at}"),
            _ => "remote count not known yet (recorded by push, list --remote, entire-fetch --all and gc)".to_owned(),
        };
        out.push_str(&format!("refs     {local} local, {remote}\n"));
    }
    if let Some(w) = v["scale_warning"].as_str() {
        out.push_str(&format!("warning  {w}\n"));
    }
    out
}

/// `list --json`: the stable shape of docs/cli.md.
pub fn list_json(all: &[CheckpointInfo]) -> Value {
    Value::Array(
        all.iter()
            .map(|i| {
                let mut v = json!({
                    "checkpoint_id": i.id.as_str(),
                    "store": i.store.name(),
                    "created_at": i.created_at,
                    "session_count": i.session_count,
                    "session_ids": i.session_ids,
                    "agent": i.agent,
                    "remote_only": i.remote_only,
                });
                if let Some(reason) = &i.unreadable {
                    v["error"] = json!(reason);
                }
                v
            })
            .collect(),
    )
}

/// `list`: one line per checkpoint.
pub fn list_human(all: &[CheckpointInfo]) -> String {
    let mut out = String::new();
    for i in all {
        let sessions = match (i.session_count, &i.unreadable) {
            (_, Some(_)) => "unreadable".to_owned(),
            (1, None) => "1 session".to_owned(),
            (n, None) => format!("{n} sessions"),
        };
        let agent = if i.unreadable.is_some() {
            "(see stderr)"
        } else if i.remote_only {
            "(remote only)"
        } else if i.agent.is_empty() {
            "-"
        } else {
            &i.agent
        };
        out.push_str(&format!(
            "{:<26}  {:<24}  {:<10}  {:<11}  {}\n",
            i.id.display_short(),
            short_time(&i.created_at),
            i.store.name(),
            sessions,
            agent
        ));
    }
    out
}

fn short_time(rfc3339: &str) -> String {
    // 2026-10-01T19:12:01.19884Z -> 2026-10-01 19:12:01
    let s = rfc3339.replacen('T', " ", 1);
    s.split(['.', 'Z', '+']).next().unwrap_or("").to_owned()
}

/// `log`: one line per commit.
pub fn log_human(history: &[CommitInfo]) -> String {
    history
        .iter()
        .map(|c| {
            format!(
                "{} {} {} <{}> {}\n",
                &c.commit[..c.commit.len().min(12)],
                c.time,
                c.author.name,
                c.author.email,
                c.subject
            )
        })
        .collect()
}

fn list_or_none(v: Option<&Value>) -> String {
    let items: Vec<String> = v
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        items.join(", ")
    }
}

fn tokens(v: Option<&Value>) -> Option<i64> {
    let u = v?;
    let get = |k: &str| u.get(k).and_then(Value::as_i64).unwrap_or(0);
    Some(
        get("input_tokens")
            + get("cache_creation_tokens")
            + get("cache_read_tokens")
            + get("output_tokens"),
    )
}

/// `show`: a header for the checkpoint and a block per session.
pub fn show_human(cp: &Checkpoint, doc: &Value) -> String {
    let mut out = format!("Checkpoint {}\n", cp.id);
    let field = |out: &mut String, k: &str, v: &str| out.push_str(&format!("  {k:<9}{v}\n"));
    field(
        &mut out,
        "store",
        &format!("{} ({})", cp.store.name(), cp.ref_name),
    );
    field(&mut out, "commit", &cp.commit);
    if let Some(a) = doc.get("author") {
        let name = a.get("name").and_then(Value::as_str).unwrap_or("");
        let email = a.get("email").and_then(Value::as_str).unwrap_or("");
        if !name.is_empty() || !email.is_empty() {
            field(&mut out, "author", &format!("{name} <{email}>"));
        }
    }
    let created = cp.created_at();
    if !created.is_empty() {
        field(&mut out, "created", &short_time(&created));
    }
    let summary = doc.get("summary");
    if !cp.summary.branch.is_empty() {
        field(&mut out, "branch", &cp.summary.branch);
    }
    if let Some(t) = tokens(summary.and_then(|s| s.get("token_usage"))) {
        field(&mut out, "tokens", &t.to_string());
    }
    field(
        &mut out,
        "files",
        &list_or_none(summary.and_then(|s| s.get("files_touched"))),
    );
    field(&mut out, "sessions", &cp.sessions.len().to_string());
    let shown = doc
        .get("sessions")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for s in &shown {
        let sid = s.get("session_id").and_then(Value::as_str).unwrap_or("");
        let slot = cp
            .sessions
            .iter()
            .position(|m| m.session_id == sid)
            .unwrap_or(0);
        out.push_str(&format!("\nSession {slot}  {sid}\n"));
        for key in ["agent", "model", "created_at"] {
            if let Some(v) = s.get(key).and_then(Value::as_str).filter(|v| !v.is_empty()) {
                let label = if key == "created_at" { "created" } else { key };
                let v = if key == "created_at" {
                    short_time(v)
                } else {
                    v.to_owned()
                };
                field(&mut out, label, &v);
            }
        }
        field(&mut out, "files", &list_or_none(s.get("files_touched")));
        if let Some(t) = tokens(s.get("token_usage")) {
            field(&mut out, "tokens", &t.to_string());
        }
        if let Some(intent) = s
            .get("summary")
            .and_then(|x| x.get("intent"))
            .and_then(Value::as_str)
        {
            field(&mut out, "intent", intent);
        }
    }
    out
}
