//! The contract of an agent's hooks: where its hook configuration lives and how it is laid out,
//! which of its events we hook and what each means, and where its payload keeps the session,
//! the transcript and the prompt. Each agent's folder describes its own ([`AgentHooks`]);
//! [`all`] lists them. Installing and removing our entries is text in, text out: the caller
//! reads and writes the files.

use std::path::PathBuf;

use serde_json::{json, Map, Value};

use super::config_file::{array_at, object_at, ConfigFileError, JsonConfig};
use super::event::{EventKind, HookEvent, PayloadError, PayloadKeys};
use super::id::TranscriptFormat;

/// The command every hook of ours runs, before the agent's name and the event's.
pub const COMMAND: &str = "git entire-checkpoint agent-hook";

/// Claude Code's events, whose names and meaning Codex and Droid share.
pub(crate) const CLAUDE_SHAPED_EVENTS: [EventSpec; 6] = [
    EventSpec::on("SessionStart", EventKind::SessionStart),
    EventSpec::on("UserPromptSubmit", EventKind::Prompt),
    EventSpec::on("PostToolUse", EventKind::ToolUsed).matching("*"),
    EventSpec::on("Stop", EventKind::TurnEnd),
    EventSpec::on("SubagentStop", EventKind::SubagentEnd),
    EventSpec {
        name: "SessionEnd",
        kind: EventKind::SessionEnd,
        matcher: None,
        timeout: Some(30),
    },
];

/// How an agent's hook configuration is laid out.
#[derive(Debug, Clone, Copy)]
pub enum Layout {
    /// `{"hooks": {"<Event>": [{"matcher": "*", "hooks": [{"type": "command", "command":
    /// "..."}]}]}}`, in a file the user shares with us (Claude Code, Droid, Codex, Gemini CLI);
    /// with `named`, each handler carries a `name` too (Gemini CLI).
    Nested {
        /// Handlers carry a `name`.
        named: bool,
    },
    /// `{"version": 1, "hooks": {"<event>": [{"command": "..."}]}}`, in a file the user shares
    /// with us (Cursor).
    Flat,
    /// A file of ours alone, rendered whole (Copilot CLI's hook file, OpenCode's plugin, Pi's
    /// extension).
    OwnFile(fn(&AgentHooks) -> String),
    /// A script of ours alone per event, rendered whole, named as the event in the directory
    /// the configuration names (Cline runs each file of its hooks directory named after one of
    /// its events).
    Scripts(fn(&AgentHooks, &EventSpec) -> String),
}

/// One event of an agent that we hook.
#[derive(Debug, Clone, Copy)]
pub struct EventSpec {
    /// The agent's name for it.
    pub name: &'static str,
    /// What it means.
    pub kind: EventKind,
    /// The matcher of its entry, for events of tools.
    pub matcher: Option<&'static str>,
    /// The handler's `timeout` in the agent's unit, where its default is too short for what
    /// the event does (Claude Code gives `SessionEnd` 1.5 s, and it reads the whole transcript).
    pub timeout: Option<u32>,
}

impl EventSpec {
    /// The event `name`, meaning `kind`, with no matcher and the agent's default timeout.
    pub const fn on(name: &'static str, kind: EventKind) -> EventSpec {
        EventSpec {
            name,
            kind,
            matcher: None,
            timeout: None,
        }
    }

    /// This event with the matcher `m` (events of tools).
    pub const fn matching(self, m: &'static str) -> EventSpec {
        EventSpec {
            matcher: Some(m),
            ..self
        }
    }
}

/// An agent's hooks.
#[derive(Debug)]
pub struct AgentHooks {
    /// Its name on our command line (`enable --agent <name>`, `agent-hook <name> <event>`).
    pub name: &'static str,
    /// The format of its transcripts (and so the agent's name shown to people).
    pub format: TranscriptFormat,
    /// The configuration file (relative to the work tree) our hooks go into; for
    /// [`Layout::Scripts`], the directory of the scripts.
    pub config: &'static str,
    /// Its local, uncommitted variant, where the agent has one (`enable --agent <name> --local`).
    pub local_config: Option<&'static str>,
    /// How that file is laid out.
    pub layout: Layout,
    /// The events we hook.
    pub events: &'static [EventSpec],
    /// Where its payloads keep what we read.
    pub payload: PayloadKeys,
    /// The directory of its configuration in a repository, which says the agent is used there
    /// (`enable --agent all`).
    pub dir: &'static str,
    /// Its command, which on `PATH` says the agent is installed (`enable --agent all`).
    pub binary: &'static str,
    /// What the user must still do for the agent to run our hooks, said by `enable --agent`.
    pub note: Option<&'static str>,
    /// For an agent that keeps its sessions in a store of its own and names no transcript file
    /// (OpenCode), its command whose `export <session ID>` prints the session's transcript.
    pub export: Option<&'static str>,
    /// For an agent whose payloads do not name the transcript (Cline), where it keeps the
    /// transcript of a session, by the session's ID.
    pub transcript_of: Option<fn(&str) -> Option<PathBuf>>,
}

/// What an edit of a configuration file comes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Edit {
    /// Nothing changes.
    Unchanged,
    /// The file's new text.
    Write(String),
    /// The file is ours alone and goes.
    Remove,
}

/// How many of our hooks a configuration holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wiring {
    /// Every event we hook.
    Wired,
    /// Some of them (an edit by hand, or a version that hooked other events).
    Partial,
    /// None.
    NotWired,
}

impl AgentHooks {
    /// The command the hook of `event` runs.
    pub fn command(&self, event: &EventSpec) -> String {
        format!("{COMMAND} {} {}", self.name, event.name)
    }

    /// The event the agent names `name`, if we hook it.
    pub fn event(&self, name: &str) -> Option<&EventSpec> {
        self.events.iter().find(|e| e.name == name)
    }

    /// Reads the payload of the event the agent names `event`; the transcript is where the
    /// agent keeps the session's when the payload does not name it.
    pub fn read_event(&self, event: &str, payload: &[u8]) -> Result<HookEvent, PayloadError> {
        let kind = self.event(event).map_or(EventKind::ToolUsed, |e| e.kind);
        let mut read = self.payload.read(kind, payload)?;
        if read.transcript.is_none() {
            read.transcript = self.transcript_of.and_then(|at| at(&read.session_id));
        }
        Ok(read)
    }

    /// The files (relative to the work tree) our hooks go into: the configuration, or with
    /// `local` its local variant where the agent has one; for [`Layout::Scripts`], one script
    /// per event.
    pub fn files(&self, local: bool) -> Vec<String> {
        match (self.layout, local, self.local_config) {
            (Layout::Scripts(_), _, _) => self
                .events
                .iter()
                .map(|e| format!("{}/{}", self.config, e.name))
                .collect(),
            (_, true, Some(file)) => vec![file.to_owned()],
            _ => vec![self.config.to_owned()],
        }
    }

    /// Every file our hooks may be in: [`AgentHooks::files`], local or not.
    pub fn all_files(&self) -> Vec<String> {
        let mut files = self.files(false);
        files.extend(self.local_config.map(str::to_owned));
        files
    }

    /// The event whose script is `file`, for [`Layout::Scripts`].
    fn script_event(&self, file: &str) -> Option<&EventSpec> {
        let name = file.strip_prefix(self.config)?.strip_prefix('/')?;
        self.event(name)
    }

    /// Our hooks added to `file`, one of [`AgentHooks::files`], whose text is `text` (`None`:
    /// no file yet). Idempotent: where they are all there, [`Edit::Unchanged`]. A script of
    /// someone else's where ours goes is refused.
    pub fn install(&self, file: &str, text: Option<&str>) -> Result<Edit, ConfigFileError> {
        if let Layout::Scripts(render) = self.layout {
            let Some(event) = self.script_event(file) else {
                return Ok(Edit::Unchanged);
            };
            let ours = render(self, event);
            return match text {
                Some(t) if t == ours => Ok(Edit::Unchanged),
                Some(t) if !self.runs_ours(t) => Err(ConfigFileError::NotOurs),
                _ => Ok(Edit::Write(ours)),
            };
        }
        if let Layout::OwnFile(render) = self.layout {
            let ours = render(self);
            return Ok(if text == Some(ours.as_str()) {
                Edit::Unchanged
            } else {
                Edit::Write(ours)
            });
        }
        let mut config = JsonConfig::parse(text)?;
        let before = config.doc().clone();
        let doc = config.doc_mut();
        if matches!(self.layout, Layout::Flat) && !doc.contains_key("version") {
            doc.insert("version".into(), json!(1));
        }
        let hooks = object_at(doc, "hooks")?;
        for event in self.events {
            let entries = array_at(hooks, event.name)?;
            if entries.iter().any(|e| self.holds_ours(e)) {
                continue;
            }
            entries.push(self.entry(event));
        }
        Ok(if *config.doc() == before && text.is_some() {
            Edit::Unchanged
        } else {
            Edit::Write(config.to_text())
        })
    }

    /// Our hooks taken out of `file`, whose text is `text`, and what they alone made (an
    /// entry, an event's list, `hooks`, the file); everything else stays as it is.
    pub fn uninstall(&self, file: &str, text: &str) -> Result<Edit, ConfigFileError> {
        match self.layout {
            Layout::OwnFile(_) => return Ok(Edit::Remove),
            Layout::Scripts(_) if self.runs_ours(text) && self.script_event(file).is_some() => {
                return Ok(Edit::Remove)
            }
            Layout::Scripts(_) => return Ok(Edit::Unchanged),
            _ => {}
        }
        let mut config = JsonConfig::parse(Some(text))?;
        let doc = config.doc_mut();
        let Some(Value::Object(hooks)) = doc.get_mut("hooks") else {
            return Ok(Edit::Unchanged);
        };
        let mut changed = false;
        for event in self.events {
            let Some(Value::Array(entries)) = hooks.get_mut(event.name) else {
                continue;
            };
            let before = entries.len();
            for entry in entries.iter_mut() {
                if let Some(Value::Array(handlers)) = entry.get_mut("hooks") {
                    let n = handlers.len();
                    handlers.retain(|h| !self.is_ours(h));
                    changed |= handlers.len() != n;
                }
            }
            entries
                .retain(|e| !(self.is_ours(e) || is_empty_at(e, "hooks") && self.nested_entry(e)));
            if entries.len() != before {
                changed = true;
                if entries.is_empty() {
                    hooks.remove(event.name);
                }
            }
        }
        if !changed {
            return Ok(Edit::Unchanged);
        }
        if hooks.is_empty() {
            doc.remove("hooks");
            if matches!(self.layout, Layout::Flat) && doc.len() == 1 && doc.get("version").is_some()
            {
                doc.remove("version");
            }
        }
        Ok(if config.doc().is_empty() {
            Edit::Remove
        } else {
            Edit::Write(config.to_text())
        })
    }

    /// How many of our hooks the file `file` of [`AgentHooks::all_files`] holds, by its text
    /// `text` (`None`: no file).
    pub fn wiring(&self, file: &str, text: Option<&str>) -> Wiring {
        let Some(text) = text else {
            return Wiring::NotWired;
        };
        match self.layout {
            Layout::OwnFile(_) => return Wiring::Wired,
            Layout::Scripts(_) if self.runs_ours(text) && self.script_event(file).is_some() => {
                return Wiring::Wired
            }
            Layout::Scripts(_) => return Wiring::NotWired,
            _ => {}
        }
        let Ok(config) = JsonConfig::parse(Some(text)) else {
            return Wiring::NotWired;
        };
        let wired = self
            .events
            .iter()
            .filter(|event| {
                config
                    .doc()
                    .get("hooks")
                    .and_then(|h| h.get(event.name))
                    .and_then(Value::as_array)
                    .is_some_and(|entries| entries.iter().any(|e| self.holds_ours(e)))
            })
            .count();
        match wired {
            0 => Wiring::NotWired,
            n if n == self.events.len() => Wiring::Wired,
            _ => Wiring::Partial,
        }
    }

    /// Our entry for `event`.
    fn entry(&self, event: &EventSpec) -> Value {
        let command = self.command(event);
        match self.layout {
            Layout::Flat => json!({ "command": command }),
            Layout::Nested { named } => {
                let mut handler = Map::new();
                if named {
                    handler.insert("name".into(), json!("entire-checkpoints"));
                }
                handler.insert("type".into(), json!("command"));
                handler.insert("command".into(), json!(command));
                if let Some(t) = event.timeout {
                    handler.insert("timeout".into(), json!(t));
                }
                let mut entry = Map::new();
                if let Some(m) = event.matcher {
                    entry.insert("matcher".into(), json!(m));
                }
                entry.insert("hooks".into(), json!([handler]));
                Value::Object(entry)
            }
            Layout::OwnFile(_) | Layout::Scripts(_) => Value::Null,
        }
    }

    /// Whether the script `text` runs a hook of ours for this agent.
    fn runs_ours(&self, text: &str) -> bool {
        text.contains(&format!("{COMMAND} {} ", self.name))
    }

    /// Whether the entry `e` holds a handler of ours.
    fn holds_ours(&self, e: &Value) -> bool {
        self.is_ours(e)
            || e.get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|handlers| handlers.iter().any(|h| self.is_ours(h)))
    }

    /// Whether the handler (or flat entry) `h` runs our command.
    fn is_ours(&self, h: &Value) -> bool {
        h.get("command")
            .and_then(Value::as_str)
            .is_some_and(|c| c.starts_with(&format!("{COMMAND} {} ", self.name)))
    }

    /// Whether `e` is a nested entry (it has handlers), which goes when its last handler does.
    fn nested_entry(&self, e: &Value) -> bool {
        matches!(self.layout, Layout::Nested { .. }) && e.get("hooks").is_some()
    }
}

/// Whether `v[key]` is an empty array.
fn is_empty_at(v: &Value, key: &str) -> bool {
    v.get(key)
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty)
}

/// The TypeScript of `run(event, cwd, payload)` for a plugin of ours that Node or Bun runs (Pi's
/// extension, Amp's plugin; it needs `spawn` from `node:child_process`): runs our command for
/// `event` of `agent` through a shell, as agents run hook commands, in `cwd`, with `payload` on
/// stdin and its output going nowhere (the agent's interface owns the terminal), killed after
/// 60 s. It resolves when the command ends and never rejects: a failing hook must not disturb
/// the agent.
pub(crate) fn plugin_runner(agent: &str) -> String {
    format!(
        r#"  const run = (event: string, cwd: string | undefined, payload: string) =>
    new Promise<void>((resolve) => {{
      try {{
        const child = spawn(`{COMMAND} {agent} ${{event}}`, {{
          shell: true,
          cwd,
          stdio: ["pipe", "ignore", "ignore"],
        }});
        const timer = setTimeout(() => child.kill(), 60_000);
        const done = () => {{
          clearTimeout(timer);
          resolve();
        }};
        child.on("error", done);
        child.on("close", done);
        child.stdin?.on("error", () => {{}});
        child.stdin?.end(payload);
      }} catch {{
        resolve(); // never disturb the agent
      }}
    }});
"#
    )
}

/// Every agent whose hooks we install.
pub fn all() -> [&'static AgentHooks; 10] {
    [
        &super::claude_code::HOOKS,
        &super::codex::HOOKS,
        &super::gemini::HOOKS,
        &super::cursor::HOOKS,
        &super::copilot::HOOKS,
        &super::droid::HOOKS,
        &super::opencode::HOOKS,
        &super::pi::HOOKS,
        &super::cline::HOOKS,
        &super::amp::HOOKS,
    ]
}

/// The agent named `name` on our command line.
pub fn by_name(name: &str) -> Option<&'static AgentHooks> {
    all().into_iter().find(|a| a.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn claude() -> &'static AgentHooks {
        by_name("claude-code").unwrap()
    }

    const F: &str = ".claude/settings.json";

    const USERS: &str = r#"{
    "permissions": {"allow": ["Bash(ls)"]},
    "hooks": {
        "PostToolUse": [
            {"matcher": "Write", "hooks": [{"type": "command", "command": "./lint.sh"}]}
        ]
    },
    "model": "opus"
}
"#;

    #[test]
    fn ours_go_in_once_and_come_out_exactly() {
        let a = claude();
        let Edit::Write(with) = a.install(F, Some(USERS)).unwrap() else {
            panic!("nothing written");
        };
        assert_eq!(a.wiring(F, Some(&with)), Wiring::Wired);
        assert_eq!(a.wiring(F, Some(USERS)), Wiring::NotWired);
        assert_eq!(a.install(F, Some(&with)).unwrap(), Edit::Unchanged);
        let v: Value = serde_json::from_str(&with).unwrap();
        let post = v["hooks"]["PostToolUse"].as_array().unwrap();
        assert_eq!(post.len(), 2, "the user's entry first, ours after: {with}");
        assert_eq!(post[0]["hooks"][0]["command"], "./lint.sh");
        assert!(with.starts_with("{\n    \"permissions\""), "{with}");
        let Edit::Write(without) = a.uninstall(F, &with).unwrap() else {
            panic!("nothing removed");
        };
        assert_eq!(
            serde_json::from_str::<Value>(&without).unwrap(),
            serde_json::from_str::<Value>(USERS).unwrap()
        );
        assert_eq!(a.uninstall(F, &without).unwrap(), Edit::Unchanged);
        // A file we made alone goes whole.
        let Edit::Write(made) = a.install(F, None).unwrap() else {
            panic!()
        };
        assert_eq!(a.uninstall(F, &made).unwrap(), Edit::Remove);
    }
}
