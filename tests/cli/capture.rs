//! Capture (docs/agents.md): `enable --agent` writes an agent's own hook configuration, and the
//! agent's hooks record its sessions with no glue. A Claude Code session is played as Claude Code
//! plays it: each hook runs the command our configuration names, through `sh -c`, in the work
//! tree, with the payload Claude Code sends on stdin, while the transcript grows line by line in
//! Claude Code's format (the lines of `tests/fixtures/transcripts/claude-code.jsonl`, from real
//! sessions), and the agent commits by itself before its turn ends.

use std::ffi::OsString;
use std::io::Write;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use serde_json::{json, Value};

use crate::commit_hooks::{commit_in, the_trailer};
use crate::env::{
    assert_code, output_text, parse_json, path_str, path_with_bins, stderr, Store, TestEnv,
};

const SID: &str = "7f1c2d3e-4b5a-4c6d-8e9f-0a1b2c3d4e5f";
const AWS_KEY: &str = "AKIAQ7ZJ4KXW2NPLM3VB";

/// A Claude Code session in the test repository: its transcript file and the commands our
/// configuration of `.claude/settings.json` runs for each event.
struct Session<'e> {
    env: &'e TestEnv,
    transcript: PathBuf,
    commands: Value,
    line: usize,
}

impl<'e> Session<'e> {
    fn start(env: &'e TestEnv) -> Session<'e> {
        let settings: Value = serde_json::from_slice(
            &std::fs::read(env.repo().join(".claude/settings.json")).expect("enable wrote it"),
        )
        .unwrap();
        let dir = env
            .root()
            .join("home/.claude/projects")
            .join(path_str(env.repo()).replace('/', "-"));
        std::fs::create_dir_all(&dir).unwrap();
        Session {
            env,
            transcript: dir.join(format!("{SID}.jsonl")),
            commands: settings["hooks"].clone(),
            line: 0,
        }
    }

    /// Appends one transcript entry of Claude Code's shape.
    fn append(&mut self, entry: Value) {
        self.line += 1;
        let mut e = entry;
        e["uuid"] = json!(format!("e{}", self.line));
        e["sessionId"] = json!(SID);
        e["timestamp"] = json!(format!("2026-04-20T07:18:{:02}.000Z", self.line));
        let mut f = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.transcript)
            .unwrap();
        writeln!(f, "{e}").unwrap();
    }

    fn prompt(&mut self, text: &str) {
        self.append(json!({"type": "user", "message": {"role": "user", "content": text}}));
    }

    fn tool(&mut self, id: &str, name: &str, input: Value, usage_out: u64) {
        self.append(json!({"type": "assistant", "message": {"id": format!("msg_{id}"), "type": "message", "role": "assistant", "model": "claude-opus-4-7",
            "content": [{"type": "tool_use", "id": id, "name": name, "input": input}],
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 100, "cache_read_input_tokens": 1000, "output_tokens": usage_out}}}));
    }

    fn result(&mut self, id: &str, text: &str) {
        self.append(json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id, "content": text}]}}));
    }

    fn reply(&mut self, text: &str) {
        self.append(json!({"type": "assistant", "message": {"id": format!("msg_r{}", self.line), "type": "message", "role": "assistant", "model": "claude-opus-4-7",
            "content": [{"type": "text", "text": text}],
            "usage": {"input_tokens": 1, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 1200, "output_tokens": 4}}}));
    }

    /// Runs every hook command our configuration names for `event`, as Claude Code does: through
    /// `sh -c`, in the work tree, the payload on stdin; asserts each prints nothing on stdout
    /// and exits 0.
    fn hook(&self, event: &str, extra: Value) -> Vec<Output> {
        let mut payload = json!({
            "session_id": SID,
            "transcript_path": path_str(&self.transcript),
            "cwd": path_str(self.env.repo()),
            "hook_event_name": event,
        });
        for (k, v) in extra.as_object().unwrap() {
            payload[k] = v.clone();
        }
        let entries = self.commands[event].as_array().expect("our event is wired");
        let mut outs = Vec::new();
        for entry in entries {
            for handler in entry["hooks"].as_array().unwrap() {
                let command = handler["command"].as_str().unwrap();
                let out = run_hook_command(self.env, command, &payload.to_string());
                assert_eq!(out.status.code(), Some(0), "{event}: {}", output_text(&out));
                assert!(
                    out.stdout.is_empty(),
                    "{event}: stdout {}",
                    output_text(&out)
                );
                outs.push(out);
            }
        }
        outs
    }

    /// The agent writes `file` (Write tool) and its PostToolUse hook runs.
    fn write_file(&mut self, id: &str, file: &str, content: &str) {
        let path = self.env.repo().join(file);
        self.tool(
            id,
            "Write",
            json!({"file_path": path_str(&path), "content": content}),
            120,
        );
        std::fs::write(&path, content).unwrap();
        self.result(id, "File created successfully");
        self.hook("PostToolUse", json!({"tool_name": "Write", "tool_input": {"file_path": path_str(&path)}, "tool_response": {"success": true}}));
    }
}

/// Asserts a hook's run exited 0 with nothing on stdout nor stderr.
fn assert_silent(out: &Output, what: &str) {
    assert_eq!(out.status.code(), Some(0), "{what}: {}", output_text(out));
    assert!(
        out.stdout.is_empty() && out.stderr.is_empty(),
        "{what}: {}",
        output_text(out)
    );
}

/// `sh -c <command>` in the test repository with our binaries on PATH and `payload` on stdin.
fn run_hook_command(env: &TestEnv, command: &str, payload: &str) -> Output {
    run_hook_command_with_path(env, command, payload, &path_with_bins())
}

/// [`run_hook_command`] with `path` as PATH.
fn run_hook_command_with_path(
    env: &TestEnv,
    command: &str,
    payload: &str,
    path: &std::ffi::OsStr,
) -> Output {
    let mut child = env
        .program_in("sh", env.repo())
        .env("PATH", path)
        .args(["-c", command])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(payload.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// The prompts a checkpoint's first session stored.
fn prompts_of(env: &TestEnv, id: &str) -> String {
    env.blob_text(Store::Refs, id, "0/prompt.txt")
}

#[test]
fn a_claude_code_session_is_recorded_with_no_glue_and_the_agents_own_commit_is_linked() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    let out = env.run_primary_in(None, env.repo(), &["enable", "--agent", "claude-code"]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout)
            .contains("agent claude-code: our hooks in .claude/settings.json"),
        "{}",
        output_text(&out)
    );
    let mut s = Session::start(&env);
    s.hook("SessionStart", json!({"source": "startup"}));

    // Prompt 1: the agent writes a file and commits it itself, before its turn ends.
    s.prompt("write the notes file");
    s.hook(
        "UserPromptSubmit",
        json!({"prompt": "write the notes file"}),
    );
    s.write_file("toolu_1", "notes.txt", "notes written by claude\n");
    s.tool(
        "toolu_2",
        "Bash",
        json!({"command": "git add notes.txt && git commit -m 'Add notes'"}),
        40,
    );
    env.git(&["add", "notes.txt"]);
    let agents_commit = env.git_hooked_ok(None, env.repo(), &["commit", "-q", "-m", "Add notes"]);
    assert!(!agents_commit.contains("warning"), "{agents_commit}");
    let first_commit = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    s.result("toolu_2", "[main 1234567] Add notes");
    s.hook("PostToolUse", json!({"tool_name": "Bash"}));
    s.reply("Done.");
    s.hook("Stop", json!({"stop_hook_active": false}));

    // Prompt 2: another file; the user commits it.
    s.prompt("now add a second file");
    s.hook(
        "UserPromptSubmit",
        json!({"prompt": "now add a second file"}),
    );
    s.write_file("toolu_3", "second.txt", "second file\n");
    s.tool("toolu_4", "Bash", json!({"command": "cat .env"}), 10);
    s.result("toolu_4", &format!("AWS_ACCESS_KEY_ID={AWS_KEY}"));
    s.hook("PostToolUse", json!({"tool_name": "Bash"}));
    // A subagent (the Agent tool): its own transcript, its SubagentStop, then the call's result
    // in the session's transcript naming it.
    let agent_id = "a7c3e9f1b2d4";
    s.tool(
        "toolu_5",
        "Agent",
        json!({"description": "find call sites", "prompt": "find them", "subagent_type": "general-purpose"}),
        0,
    );
    let sub_dir = s.transcript.with_extension("").join("subagents");
    std::fs::create_dir_all(&sub_dir).unwrap();
    let sub = sub_dir.join(format!("agent-{agent_id}.jsonl"));
    std::fs::write(
        &sub,
        format!(
            "{}\n",
            json!({"type": "user", "isSidechain": true, "agentId": agent_id, "message": {"role": "user", "content": format!("find them, token {AWS_KEY}")}})
        ),
    )
    .unwrap();
    s.hook(
        "SubagentStop",
        json!({"agent_id": agent_id, "agent_type": "general-purpose", "agent_transcript_path": path_str(&sub)}),
    );
    s.append(json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_5", "content": "3 call sites"}]},
        "toolUseResult": {"agentId": agent_id, "agentType": "general-purpose", "status": "completed"}}));
    s.reply("Added.");
    s.hook("Stop", json!({"stop_hook_active": false}));
    let (second_commit, _) = commit_in(&env, env.repo(), None, "second.txt", "Add second");
    s.hook("SessionEnd", json!({"reason": "exit"}));

    // Each commit links its own checkpoint, with its own prompt and file, read back from git.
    let first = the_trailer(&env, &first_commit);
    let second = the_trailer(&env, &second_commit);
    assert_ne!(first, second);
    assert_eq!(prompts_of(&env, &first), "write the notes file");
    assert_eq!(prompts_of(&env, &second), "now add a second file");
    let meta = env.json(Store::Refs, &first, "0/metadata.json");
    assert_eq!(meta["agent"], json!("Claude Code"), "{meta}");
    assert_eq!(meta["files_touched"], json!(["notes.txt"]), "{meta}");
    let meta2 = env.json(Store::Refs, &second, "0/metadata.json");
    assert_eq!(meta2["files_touched"], json!(["second.txt"]), "{meta2}");
    // Token usage is the transcript's, counted once: the first checkpoint's lines are those up
    // to the commit (the Write and the Bash calls: 120 + 40 out), the second's what came after
    // (the first turn's closing reply, the second Write, a Bash call and the reply: 4 + 120 +
    // 10 + 4).
    assert_eq!(meta["token_usage"]["output_tokens"], json!(160), "{meta}");
    assert_eq!(meta2["token_usage"]["output_tokens"], json!(138), "{meta2}");
    // The subagent's task, under the checkpoint of the commit after it, redacted.
    let task: Value =
        serde_json::from_str(&env.blob_text(Store::Refs, &second, "tasks/toolu_5/task.json"))
            .unwrap();
    assert_eq!(
        task,
        json!({"tool_use_id": "toolu_5", "agent_id": agent_id, "subagent_type": "general-purpose"})
    );
    let sub_stored = env.blob_text(
        Store::Refs,
        &second,
        &format!("tasks/toolu_5/agent-{agent_id}.jsonl"),
    );
    assert!(
        sub_stored.contains("find them, token REDACTED"),
        "{sub_stored}"
    );
    assert!(
        env.git(&[
            "ls-tree",
            "-r",
            "--name-only",
            &crate::env::checkpoint_ref(&first)
        ])
        .lines()
        .all(|f| !f.starts_with("tasks/")),
        "the first checkpoint has no task"
    );
    // Redacted, as staged and as stored.
    let stored = env.blob_text(Store::Refs, &second, "0/full.jsonl");
    assert!(stored.contains("AWS_ACCESS_KEY_ID=REDACTED"), "{stored}");
    let staged = std::fs::read_to_string(
        env.common_dir()
            .join("entire/sessions")
            .join(SID)
            .join("transcript"),
    )
    .unwrap();
    assert!(
        !staged.contains(AWS_KEY) && staged.contains("REDACTED"),
        "{staged}"
    );
    // A reviewer's page nests the subagent's conversation in the call that started it.
    let page = env.ok(Store::Refs, &["show", &second, "--html"]);
    let call = page.find("<summary>Agent").expect("the Agent call");
    let nested =
        page[call..].find("<div class=\"subagent\"><p class=\"meta\">subagent general-purpose</p>");
    let closed = page[call..].find("</details>").unwrap();
    assert!(
        nested.is_some_and(|n| n < closed),
        "the subagent inside its call: {page}"
    );
    assert!(page.contains("find them, token REDACTED"), "{page}");
    let transcript = env.blob_text(Store::Refs, &first, "0/full.jsonl");
    assert!(
        transcript.contains("git add notes.txt && git commit"),
        "the commit's own call is in: {transcript}"
    );

    // Pushed with the code, a teammate's fresh clone reads both.
    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    let teammate = env.clone_of(&origin, "teammate", &[]);
    let shown = env.ok_primary_in(None, &teammate, &["show", &first_commit, "--json"]);
    let v = parse_json(shown.as_bytes());
    assert_eq!(v["checkpoint_id"], json!(first), "{v}");
    assert_eq!(v["summary"]["files_touched"], json!(["notes.txt"]), "{v}");
    let prompt = env.ok_primary_in(None, &teammate, &["cat", &first, "0/prompt.txt"]);
    assert_eq!(prompt, "write the notes file");

    // Nothing is left staged but the session, which stays (no work of it uncommitted).
    let status = env.ok_primary_in(None, env.repo(), &["status", "--json"]);
    let v = parse_json(status.as_bytes());
    assert_eq!(
        v["agents"],
        json!([{"agent": "claude-code", "file": ".claude/settings.json", "state": "wired"}])
    );
    assert_eq!(v["agent_hook_failure"], Value::Null);
    let doctor = parse_json(
        &env.run_primary_in(None, env.repo(), &["doctor", "--json"])
            .stdout,
    );
    let wired: Vec<&Value> = doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == json!("agent-wired"))
        .collect();
    assert_eq!(wired.len(), 1, "{doctor}");
    assert_eq!(
        wired[0]["subject"],
        json!(".claude/settings.json"),
        "{doctor}"
    );
}

/// A hook never disturbs the agent: bad input, an unknown agent, no repository — exit 0,
/// nothing on stdout, one line on stderr, and `status` shows the failure until a hook of that
/// agent succeeds.
#[test]
fn an_agent_hook_never_disturbs_the_agent() {
    let env = TestEnv::new();
    env.ok_primary_in(None, env.repo(), &["enable", "--agent", "claude-code"]);
    let command = "git entire-checkpoint agent-hook claude-code Stop";
    for payload in [
        "not json",
        "[1]",
        r#"{"session_id": "../escape"}"#,
        r#"{"cwd": "/"}"#,
    ] {
        let out = run_hook_command(&env, command, payload);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{payload}: {}",
            output_text(&out)
        );
        assert!(out.stdout.is_empty(), "{payload}: {}", output_text(&out));
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{payload}: one line: {}",
            output_text(&out)
        );
    }
    for a in &AGENTS {
        let command = format!(
            "git entire-checkpoint agent-hook {} {}",
            a.name, a.events[3]
        );
        let out = run_hook_command(&env, &command, "{\"no\": \"session\"}");
        assert_code(&out, 0, a.name);
        assert!(out.stdout.is_empty(), "{}: {}", a.name, output_text(&out));
        assert_eq!(
            stderr(&out).lines().count(),
            1,
            "{}: {}",
            a.name,
            output_text(&out)
        );
    }
    let out = run_hook_command(
        &env,
        "git entire-checkpoint agent-hook no-such-agent Stop",
        "{}",
    );
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert!(out.stdout.is_empty());
    let status = env.ok_primary_in(None, env.repo(), &["status"]);
    assert!(
        status.contains("warning  the claude-code hook Stop failed"),
        "{status}"
    );
    let doctor = env.run_primary_in(None, env.repo(), &["doctor", "--json"]);
    assert!(
        String::from_utf8_lossy(&doctor.stdout).contains("\"agent-hook-failed\""),
        "{}",
        output_text(&doctor)
    );
    let transcript = env.input_file(
        "t.jsonl",
        b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    );
    let ok = json!({"session_id": "s-1", "transcript_path": path_str(&transcript), "cwd": path_str(env.repo())});
    assert_silent(
        &run_hook_command(&env, command, &ok.to_string()),
        "a good payload",
    );
    let status = env.ok_primary_in(None, env.repo(), &["status"]);
    assert!(!status.contains("failed"), "{status}");
    let staged = env.ok_primary_in(None, env.repo(), &["session", "list", "--json"]);
    assert!(staged.contains("s-1"), "{staged}");
}

/// `enable --agent` merges into the user's file: their hooks, keys and order kept, ours added
/// once; `disable --agent` gives the file back byte for byte, and a file we made goes.
#[test]
fn enable_agent_merges_into_the_users_file_and_disable_gives_it_back() {
    let env = TestEnv::new();
    let users = "{\n    \"model\": \"opus\",\n    \"hooks\": {\n        \"PostToolUse\": [\n            {\"matcher\": \"Edit\", \"hooks\": [{\"type\": \"command\", \"command\": \"./fmt.sh\"}]}\n        ]\n    },\n    \"permissions\": {\"allow\": [\"Bash(ls)\"]}\n}\n";
    env.write_file(".claude/settings.json", users.as_bytes());
    env.ok_primary_in(None, env.repo(), &["enable", "--agent", "claude-code"]);
    let with = std::fs::read_to_string(env.repo().join(".claude/settings.json")).unwrap();
    let v: Value = serde_json::from_str(&with).unwrap();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["model", "hooks", "permissions"], "{with}");
    assert_eq!(
        v["hooks"]["PostToolUse"][0]["hooks"][0]["command"],
        json!("./fmt.sh")
    );
    assert_eq!(v["hooks"]["PostToolUse"].as_array().unwrap().len(), 2);
    assert!(
        with.contains("\n    \"model\""),
        "the file's indentation: {with}"
    );
    for event in [
        "SessionStart",
        "UserPromptSubmit",
        "PostToolUse",
        "Stop",
        "SubagentStop",
        "SessionEnd",
    ] {
        assert!(
            v["hooks"][event]
                .to_string()
                .contains("git entire-checkpoint agent-hook claude-code"),
            "{event}: {with}"
        );
    }
    // Idempotent.
    let again = env.run_primary_in(None, env.repo(), &["enable", "--agent", "claude-code"]);
    let doctor = String::from_utf8(
        env.run_primary_in(None, env.repo(), &["doctor", "--json"])
            .stdout,
    )
    .unwrap();
    assert!(doctor.contains("\"agent-wired\""), "{doctor}");
    assert!(
        !String::from_utf8_lossy(&again.stdout).contains("agent claude-code"),
        "{}",
        output_text(&again)
    );
    assert_eq!(
        std::fs::read_to_string(env.repo().join(".claude/settings.json")).unwrap(),
        with
    );
    // One of ours taken out by hand: doctor says so, and enable --agent puts it back.
    let mut edited = v.clone();
    edited["hooks"].as_object_mut().unwrap().remove("Stop");
    std::fs::write(
        env.repo().join(".claude/settings.json"),
        serde_json::to_string_pretty(&edited).unwrap(),
    )
    .unwrap();
    let doctor = env.run_primary_in(None, env.repo(), &["doctor", "--json"]);
    assert!(
        String::from_utf8_lossy(&doctor.stdout).contains("\"agent-partly-wired\""),
        "{}",
        output_text(&doctor)
    );
    assert_eq!(doctor.status.code(), Some(1), "a warning");
    env.ok_primary_in(None, env.repo(), &["enable", "--agent", "claude-code"]);
    let doctor = env.run_primary_in(None, env.repo(), &["doctor", "--json"]);
    assert!(
        !String::from_utf8_lossy(&doctor.stdout).contains("\"agent-partly-wired\""),
        "{}",
        output_text(&doctor)
    );
    // disable --agent: the file as it was, and nothing else changes (our git hooks stay).
    let out = env.ok_primary_in(None, env.repo(), &["disable", "--agent", "claude-code"]);
    assert!(
        out.contains("agent claude-code: our hooks taken out of .claude/settings.json"),
        "{out}"
    );
    assert_eq!(
        std::fs::read_to_string(env.repo().join(".claude/settings.json")).unwrap(),
        users
    );
    assert!(env
        .ok_primary_in(None, env.repo(), &["hooks", "status"])
        .contains("installed"));
    // --local writes the local file, which a plain disable takes away whole.
    env.ok_primary_in(
        None,
        env.repo(),
        &["enable", "--local", "--agent", "claude-code"],
    );
    assert!(env.repo().join(".claude/settings.local.json").is_file());
    assert_eq!(
        std::fs::read_to_string(env.repo().join(".claude/settings.json")).unwrap(),
        users
    );
    env.ok_primary_in(None, env.repo(), &["disable"]);
    assert!(!env.repo().join(".claude/settings.local.json").exists());
}

/// Bad input changes nothing: an unknown agent (usage error), a configuration that does not
/// parse, one behind a symbolic link that came with a clone, and a hook script of the user's
/// where ours goes (Cline names its scripts after its events).
#[test]
fn enable_agent_refuses_bad_input_and_changes_nothing() {
    let env = TestEnv::new();
    let refused = |agent: &str, code: i32, says: &str| {
        let out = env.run_primary_in(None, env.repo(), &["enable", "--agent", agent]);
        assert_eq!(out.status.code(), Some(code), "{}", output_text(&out));
        assert!(stderr(&out).contains(says), "{}", output_text(&out));
        assert!(!env.repo().join(".entire").exists(), "nothing changed");
    };
    refused("no-such-agent", 2, "unknown agent \"no-such-agent\"");
    env.write_file(".claude/settings.json", b"{\"hooks\": ,}");
    refused(
        "claude-code",
        1,
        ".claude/settings.json: it is not valid JSON",
    );
    std::fs::remove_file(env.repo().join(".claude/settings.json")).unwrap();
    let outside = env.root().join("outside.json");
    std::fs::write(&outside, "{}").unwrap();
    std::os::unix::fs::symlink(&outside, env.repo().join(".claude/settings.json")).unwrap();
    refused("claude-code", 1, "is a symbolic link");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "{}");
    let theirs = "#!/bin/sh\n./lint.sh\n";
    env.write_file(".clinerules/hooks/PostToolUse", theirs.as_bytes());
    refused(
        "cline",
        1,
        ".clinerules/hooks/PostToolUse: it is a hook script that is not ours",
    );
    let hooks = std::fs::read_dir(env.repo().join(".clinerules/hooks")).unwrap();
    assert_eq!(hooks.count(), 1, "no script of ours was written");
    assert_eq!(
        std::fs::read_to_string(env.repo().join(".clinerules/hooks/PostToolUse")).unwrap(),
        theirs
    );
}

/// The command our configuration of `file` runs for `event` of `agent` (wherever the agent's
/// layout keeps it: `command`, or Copilot CLI's `bash`).
fn configured_command(env: &TestEnv, file: &str, agent: &str, event: &str) -> String {
    fn find(v: &Value, want: &str, out: &mut Option<String>) {
        match v {
            Value::String(s) if s == want => *out = Some(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| find(x, want, out)),
            Value::Object(m) => m.values().for_each(|x| find(x, want, out)),
            _ => {}
        }
    }
    let doc: Value =
        serde_json::from_slice(&std::fs::read(env.repo().join(file)).unwrap()).unwrap();
    let mut found = None;
    find(
        &doc,
        &format!("git entire-checkpoint agent-hook {agent} {event}"),
        &mut found,
    );
    found.unwrap_or_else(|| panic!("{file} runs nothing of ours on {event}: {doc}"))
}

/// One agent's hooks for the per-agent test: its name, the file `enable` writes (for hook
/// scripts, their directory), the transcript fixture (and where the agent keeps it, when its
/// payload does not say) and the name its prompt and file use, its events (start, prompt, tool,
/// turn end), the command the agent runs for an event where it is not in a JSON configuration
/// (read from what `enable` wrote, and checked there), its payload for an event, and the output
/// tokens its fixture records, where checked.
struct Agent {
    name: &'static str,
    file: &'static str,
    fixture: &'static str,
    kept_at: Option<fn(env: &TestEnv, sid: &str) -> PathBuf>,
    short: &'static str,
    shown: &'static str,
    events: [&'static str; 4],
    command: Option<fn(env: &TestEnv, event: &str) -> String>,
    payload: fn(sid: &str, transcript: &str, cwd: &str, event: &str, prompt: &str) -> Value,
    output_tokens: Option<u64>,
}

fn snake_case(sid: &str, transcript: &str, cwd: &str, event: &str, prompt: &str) -> Value {
    json!({"session_id": sid, "transcript_path": transcript, "cwd": cwd, "hook_event_name": event, "prompt": prompt})
}

const AGENTS: [Agent; 9] = [
    Agent {
        name: "claude-code",
        file: ".claude/settings.json",
        fixture: "claude-code.jsonl",
        kept_at: None,
        short: "claude",
        shown: "Claude Code",
        events: ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"],
        command: None,
        payload: snake_case,
        output_tokens: None,
    },
    Agent {
        name: "codex",
        file: ".codex/hooks.json",
        fixture: "codex.jsonl",
        kept_at: None,
        short: "codex",
        shown: "Codex",
        events: ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"],
        command: None,
        payload: snake_case,
        output_tokens: None,
    },
    Agent {
        name: "droid",
        file: ".factory/settings.json",
        fixture: "droid.jsonl",
        kept_at: None,
        short: "droid",
        shown: "Factory AI Droid",
        events: ["SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"],
        command: None,
        payload: snake_case,
        output_tokens: None,
    },
    Agent {
        name: "gemini",
        file: ".gemini/settings.json",
        fixture: "gemini-cli.json",
        kept_at: None,
        short: "gemini",
        shown: "Gemini CLI",
        events: ["SessionStart", "BeforeAgent", "AfterTool", "AfterAgent"],
        command: None,
        payload: snake_case,
        output_tokens: None,
    },
    Agent {
        name: "cursor",
        file: ".cursor/hooks.json",
        fixture: "cursor.jsonl",
        kept_at: None,
        short: "cursor",
        shown: "Cursor",
        events: [
            "sessionStart",
            "beforeSubmitPrompt",
            "afterFileEdit",
            "stop",
        ],
        command: None,
        payload: |sid, transcript, cwd, event, prompt| {
            json!({"conversation_id": sid, "generation_id": "g-1", "hook_event_name": event,
                "workspace_roots": [cwd], "transcript_path": transcript, "prompt": prompt})
        },
        output_tokens: None,
    },
    Agent {
        name: "copilot",
        file: ".github/hooks/entire-checkpoints.json",
        fixture: "copilot-cli.jsonl",
        kept_at: None,
        short: "copilot",
        shown: "Copilot CLI",
        events: [
            "sessionStart",
            "userPromptSubmitted",
            "postToolUse",
            "agentStop",
        ],
        command: None,
        // Copilot CLI names the transcript only when a turn ends.
        payload: |sid, transcript, cwd, event, prompt| match event {
            "agentStop" => {
                json!({"sessionId": sid, "timestamp": 1, "cwd": cwd, "transcriptPath": transcript, "stopReason": "end_turn"})
            }
            _ => json!({"sessionId": sid, "timestamp": 1, "cwd": cwd, "prompt": prompt}),
        },
        output_tokens: None,
    },
    Agent {
        name: "pi",
        file: ".pi/extensions/entire-checkpoints.ts",
        fixture: "pi.jsonl",
        kept_at: None,
        short: "pi",
        shown: "Pi",
        events: [
            "session_start",
            "before_agent_start",
            "tool_result",
            "agent_end",
        ],
        // Our extension subscribes to Pi's event and runs our command named after it.
        command: Some(|env: &TestEnv, event: &str| {
            let ts =
                std::fs::read_to_string(env.repo().join(".pi/extensions/entire-checkpoints.ts"))
                    .unwrap();
            assert!(
                ts.contains(&format!("pi.on(\"{event}\""))
                    && ts.contains(&format!("send(\"{event}\"")),
                "the extension does not report {event}: {ts}"
            );
            assert!(
                ts.contains("git entire-checkpoint agent-hook pi ${event}"),
                "{ts}"
            );
            format!("git entire-checkpoint agent-hook pi {event}")
        }),
        // What our extension sends: Pi's session manager names the session and its file.
        payload: |sid, transcript, cwd, event, prompt| json!({"hook_event_name": event, "session_id": sid, "transcript_path": transcript, "cwd": cwd, "prompt": prompt}),
        output_tokens: Some(113),
    },
    Agent {
        name: "cline",
        file: ".clinerules/hooks",
        fixture: "cline.json",
        // Cline's data directory under the test's HOME.
        kept_at: Some(|env, sid| {
            env.root()
                .join("home/.cline/data/sessions")
                .join(sid)
                .join(format!("{sid}.messages.json"))
        }),
        short: "cline",
        shown: "Cline",
        events: [
            "TaskStart",
            "UserPromptSubmit",
            "PostToolUse",
            "TaskComplete",
        ],
        // Cline runs each executable file named after the event, through its shebang.
        command: Some(|env: &TestEnv, event: &str| {
            use std::os::unix::fs::PermissionsExt;
            let script = env.repo().join(".clinerules/hooks").join(event);
            let mode = std::fs::metadata(&script).unwrap().permissions().mode();
            assert_eq!(mode & 0o111, 0o111, "{event} is not executable");
            let text = std::fs::read_to_string(&script).unwrap();
            assert!(text.starts_with("#!/bin/sh\n"), "{text}");
            assert!(
                text.contains(&format!("git entire-checkpoint agent-hook cline {event}")),
                "{text}"
            );
            path_str(&script).to_owned()
        }),
        // Cline's payload (its SDK's `HookEventPayloadBase`): no transcript, which is found by
        // the session under Cline's data directory (`CLINE_SESSION_DATA_DIR` here).
        payload: |sid, _, cwd, event, prompt| {
            let mut p = json!({"clineVersion": "3.0.56", "hookName": event, "timestamp": "2026-04-22T17:42:10.123Z",
                "taskId": sid, "sessionContext": {"rootSessionId": sid}, "workspaceRoots": [cwd],
                "userId": "dev", "agent_id": "agent_1", "parent_agent_id": null});
            match event {
                "UserPromptSubmit" => {
                    p["userPromptSubmit"] = json!({"prompt": prompt, "attachments": []})
                }
                "PostToolUse" => {
                    p["postToolUse"] = json!({"toolName": "editor", "parameters": {}, "result": "ok", "success": true, "executionTimeMs": 3})
                }
                "TaskComplete" => p["taskComplete"] = json!({"taskMetadata": {}}),
                _ => p["taskStart"] = json!({"taskMetadata": {}}),
            }
            p
        },
        output_tokens: Some(8 + 5),
    },
    Agent {
        name: "amp",
        file: ".amp/plugins/entire-checkpoints.ts",
        fixture: "amp.jsonl",
        kept_at: None,
        short: "amp",
        shown: "Amp",
        events: ["session.start", "agent.start", "tool.result", "agent.end"],
        command: Some(|env: &TestEnv, event: &str| {
            let ts = std::fs::read_to_string(env.repo().join(".amp/plugins/entire-checkpoints.ts"))
                .unwrap();
            assert!(
                ts.contains(&format!("amp.on(\"{event}\""))
                    && ts.contains(&format!("send(\"{event}\"")),
                "the plugin does not report {event}: {ts}"
            );
            assert!(
                ts.contains("git entire-checkpoint agent-hook amp ${event}"),
                "{ts}"
            );
            format!("git entire-checkpoint agent-hook amp {event}")
        }),
        payload: |sid, transcript, cwd, event, prompt| json!({"hook_event_name": event, "session_id": sid, "transcript_path": transcript, "cwd": cwd, "prompt": prompt}),
        output_tokens: None,
    },
];

/// Every agent: `enable --agent` wires it, and a session played through the commands it
/// configured (in its JSON configuration, or Pi's extension, Cline's scripts, Amp's plugin), in
/// the agent's payload shape and transcript format, gives the user's commit a checkpoint with
/// the agent, its prompt, its file and its tokens; every hook prints nothing and exits 0; and
/// `disable --agent` leaves nothing of ours.
#[test]
fn every_agent_is_captured_through_its_own_hooks() {
    for a in &AGENTS {
        let env = TestEnv::new();
        let out = env.run_primary_in(None, env.repo(), &["enable", "--agent", a.name]);
        assert_code(&out, 0, a.name);
        let fixture = std::fs::read_to_string(crate::env::transcript_fixture(a.fixture))
            .unwrap()
            .replace("/home/dev/proj", path_str(env.repo()));
        let sid = format!("{}-session-1", a.name);
        let transcript = match a.kept_at {
            Some(at) => {
                let path = at(&env, &sid);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, &fixture).unwrap();
                path
            }
            None => env.input_file(a.fixture, fixture.as_bytes()),
        };
        let prompt = format!("write the {} notes file", a.short);
        let fire = |event: &str| {
            let command = match a.command {
                Some(command) => command(&env, event),
                None => configured_command(&env, a.file, a.name, event),
            };
            let payload = (a.payload)(
                &sid,
                path_str(&transcript),
                path_str(env.repo()),
                event,
                &prompt,
            );
            let out = run_hook_command(&env, &command, &payload.to_string());
            assert_silent(&out, &format!("{} {event}", a.name));
        };
        for event in &a.events[..3] {
            fire(event);
        }
        let (head, _) = commit_in(
            &env,
            env.repo(),
            None,
            &format!("agents/{}.txt", a.short),
            "notes",
        );
        fire(a.events[3]);
        let id = the_trailer(&env, &head);
        assert_eq!(prompts_of(&env, &id), prompt, "{}", a.name);
        let meta = env.json(Store::Refs, &id, "0/metadata.json");
        assert_eq!(meta["agent"], json!(a.shown), "{}: {meta}", a.name);
        assert_eq!(
            meta["files_touched"],
            json!([format!("agents/{}.txt", a.short)]),
            "{}: {meta}",
            a.name
        );
        if let Some(tokens) = a.output_tokens {
            assert_eq!(
                meta["token_usage"]["output_tokens"],
                json!(tokens),
                "{}: {meta}",
                a.name
            );
        }
        let status = parse_json(
            env.ok_primary_in(None, env.repo(), &["status", "--json"])
                .as_bytes(),
        );
        assert_eq!(
            status["agents"],
            json!([{"agent": a.name, "file": a.file, "state": "wired"}]),
            "{}",
            a.name
        );
        // The staged session now holds the whole transcript, for the next commit.
        let staged = env.ok_primary_in(None, env.repo(), &["session", "list", "--json"]);
        assert!(staged.contains(&sid), "{}: {staged}", a.name);
        // `disable` leaves nothing of ours.
        let out = env.run_primary_in(None, env.repo(), &["disable", "--agent", a.name]);
        assert_code(&out, 0, a.name);
        let left = env.git(&["status", "--porcelain", "--untracked-files=all"]);
        assert!(!left.contains(a.file), "{}: {left}", a.name);
    }
}

/// The session of [`opencode_session`].
const OPENCODE_SESSION: &str = "ses_5a1b2c3d4e5fXyZ9kLmN0pQrSt";

/// An OpenCode session in `env` after `enable --agent opencode`: the export a stand-in
/// `opencode` prints for it (`opencode export <session>`, in OpenCode's export format), and the
/// `PATH` that holds the stand-in before our binaries (as OpenCode's own command is for the
/// agent and its shell).
fn opencode_session(env: &TestEnv) -> (String, OsString) {
    let out = env.run_primary_in(None, env.repo(), &["enable", "--agent", "opencode"]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    let plugin =
        std::fs::read_to_string(env.repo().join(".opencode/plugins/entire-checkpoints.ts"))
            .unwrap();
    assert!(
        plugin.contains("git entire-checkpoint agent-hook opencode ${event}"),
        "{plugin}"
    );
    let export = std::fs::read_to_string(crate::env::transcript_fixture("opencode.json"))
        .unwrap()
        .replace("/home/dev/proj", path_str(env.repo()));
    let exported = env.input_file("export.json", export.as_bytes());
    let fake = env.root().join("fake-bin");
    crate::env::write_executable(
        &fake.join("opencode"),
        &format!(
            "#!/bin/sh\n[ \"$1\" = export ] && [ \"$2\" = {OPENCODE_SESSION} ] && exec cat '{}'\nexit 1\n",
            path_str(&exported)
        ),
    );
    let mut path = fake.into_os_string();
    path.push(":");
    path.push(path_with_bins());
    (export, path)
}

/// Fires our plugin's `event` of [`opencode_session`] with `extra` payload fields, as the
/// plugin runs our command, with `path`.
fn fire_opencode(env: &TestEnv, path: &OsString, event: &str, extra: Value) {
    let mut payload = json!({"hook_event_name": event, "cwd": path_str(env.repo()), "session_id": OPENCODE_SESSION});
    for (k, v) in extra.as_object().unwrap() {
        payload[k] = v.clone();
    }
    let command = format!("git entire-checkpoint agent-hook opencode {event}");
    let out = run_hook_command_with_path(env, &command, &payload.to_string(), path);
    assert_silent(&out, event);
}

/// Fires our plugin's events of a turn of [`opencode_session`] up to its tool call.
fn opencode_turn_up_to_its_tool(env: &TestEnv, path: &OsString) {
    fire_opencode(env, path, "session.created", json!({}));
    let prompt = json!({"prompt": "write the opencode notes file"});
    fire_opencode(env, path, "chat.message", prompt);
    fire_opencode(env, path, "tool.execute.after", json!({"tool": "write"}));
}

/// Checks that checkpoint `id` holds the OpenCode session of [`opencode_session`], exported.
fn assert_opencode_checkpoint(env: &TestEnv, id: &str, export: &str) {
    assert_eq!(prompts_of(env, id), "write the opencode notes file");
    let meta = env.json(Store::Refs, id, "0/metadata.json");
    assert_eq!(meta["agent"], json!("OpenCode"), "{meta}");
    assert_eq!(
        meta["files_touched"],
        json!(["agents/opencode.txt"]),
        "{meta}"
    );
    let stored = env.blob_text(Store::Refs, id, "0/full.jsonl");
    assert_eq!(
        serde_json::from_str::<Value>(&stored).unwrap(),
        serde_json::from_str::<Value>(export).unwrap(),
        "the export is the transcript"
    );
}

/// OpenCode has no hook commands: `enable --agent opencode` writes a plugin of ours that runs our
/// command, and the session is read with `opencode export <session>` at the end of a turn.
#[test]
fn opencode_is_captured_through_our_plugin_and_its_export() {
    let env = TestEnv::new();
    let (export, path) = opencode_session(&env);
    opencode_turn_up_to_its_tool(&env, &path);
    fire_opencode(&env, &path, "session.idle", json!({}));
    let (head, _) = commit_in(&env, env.repo(), None, "agents/opencode.txt", "notes");
    assert_opencode_checkpoint(&env, &the_trailer(&env, &head), &export);
}

/// OpenCode commits by itself before its turn ends, before any `session.idle` exported the
/// session: the commit exports it as it is then, as it reads another agent's transcript again.
#[test]
fn an_opencode_commit_during_a_turn_holds_the_session_as_exported_then() {
    let env = TestEnv::new();
    let (export, path) = opencode_session(&env);
    opencode_turn_up_to_its_tool(&env, &path);
    env.write_file("agents/opencode.txt", b"notes\n");
    env.git(&["add", "agents/opencode.txt"]);
    let out = env
        .git_hooked_command(None, env.repo(), &["commit", "-q", "-m", "notes"])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_code(&out, 0, "the agent's commit");
    let head = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    assert_opencode_checkpoint(&env, &the_trailer(&env, &head), &export);
}

/// OpenCode records a step's tokens when the step ends, after the tool calls it asks for: a
/// commit from its shell exports the session with that step's message still without them. The
/// next commit's checkpoint counts them, as that message is read again, whole, in its window.
#[test]
fn an_opencode_step_still_running_at_a_commit_counts_in_the_next_checkpoint() {
    let env = TestEnv::new();
    let (export, path) = opencode_session(&env);
    let mut doc: Value = serde_json::from_str(&export).unwrap();
    let message = |output: u64, completed: bool, part: Value| {
        let mut time = json!({"created": 1772924700000_u64});
        if completed {
            time["completed"] = json!(1772924705000_u64);
        }
        json!({
            "info": {"role": "assistant", "time": time, "tokens": {"input": 0, "output": output}},
            "parts": [part]
        })
    };
    let commit_call =
        json!({"type": "tool", "tool": "bash", "state": {"input": {"command": "git commit"}}});
    let messages = doc["messages"].as_array_mut().unwrap();
    messages.push(message(0, false, commit_call.clone()));
    env.input_file("export.json", doc.to_string().as_bytes());
    opencode_turn_up_to_its_tool(&env, &path);
    env.write_file("agents/opencode.txt", b"notes\n");
    env.git(&["add", "agents/opencode.txt"]);
    let commit = |msg: &str| {
        let out = env
            .git_hooked_command(None, env.repo(), &["commit", "-q", "-m", msg])
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_code(&out, 0, msg);
        the_trailer(&env, env.git(&["rev-parse", "HEAD"]).trim())
    };
    let first = commit("the agent's commit");
    let messages = doc["messages"].as_array_mut().unwrap();
    messages.pop();
    messages.push(message(40, true, commit_call));
    messages.push(message(4, true, json!({"type": "text", "text": "Done."})));
    env.input_file("export.json", doc.to_string().as_bytes());
    fire_opencode(&env, &path, "session.idle", json!({}));
    env.write_file("agents/more.txt", b"more\n");
    env.git(&["add", "agents/more.txt"]);
    let next = commit("the user's commit");

    let meta = env.json(Store::Refs, &first, "0/metadata.json");
    assert_eq!(meta["token_usage"]["output_tokens"], json!(185), "{meta}");
    let meta = env.json(Store::Refs, &next, "0/metadata.json");
    assert_eq!(meta["token_usage"]["output_tokens"], json!(44), "{meta}");
}

/// Two sessions at once, one in the main worktree and one in a linked worktree: each commit
/// condenses only the session of its own worktree.
#[test]
fn sessions_in_two_worktrees_go_to_the_commits_of_their_own() {
    let env = TestEnv::new();
    env.ok_primary_in(None, env.repo(), &["enable", "--agent", "claude-code"]);
    env.git(&["add", ".entire", ".claude"]);
    env.git(&["commit", "-q", "-m", "Record checkpoints"]);
    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", "-b", "feature", path_str(&wt)]);
    let transcript = |name: &str, prompt: &str| {
        let line = json!({"type": "user", "message": {"role": "user", "content": prompt}, "uuid": "u", "sessionId": name});
        env.input_file(name, format!("{line}\n").as_bytes())
    };
    let main_t = transcript("main.jsonl", "work in main");
    let wt_t = transcript("wt.jsonl", "work in the worktree");
    for (dir, sid, t) in [
        (env.repo().to_path_buf(), "s-main", &main_t),
        (wt.clone(), "s-wt", &wt_t),
    ] {
        let payload =
            json!({"session_id": sid, "transcript_path": path_str(t), "cwd": path_str(&dir)});
        for event in ["UserPromptSubmit", "Stop"] {
            let out = run_hook_command(
                &env,
                &format!("git entire-checkpoint agent-hook claude-code {event}"),
                &payload.to_string(),
            );
            assert_silent(&out, event);
        }
    }
    let (in_wt, _) = commit_in(&env, &wt, None, "w.txt", "in the worktree");
    let (in_main, _) = commit_in(&env, env.repo(), None, "m.txt", "in main");
    assert_eq!(
        prompts_of(&env, &the_trailer(&env, &in_wt)),
        "work in the worktree"
    );
    assert_eq!(
        prompts_of(&env, &the_trailer(&env, &in_main)),
        "work in main"
    );
}

/// `--agent all` wires every agent used here: by its configuration directory in the work tree
/// (or its command on PATH), and no other.
#[test]
fn enable_agent_all_wires_the_agents_used_here() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.repo().join(".gemini")).unwrap();
    std::fs::create_dir_all(env.repo().join(".cursor")).unwrap();
    let out = env.run_primary_in(None, env.repo(), &["enable", "--agent", "all", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    let v = parse_json(&out.stdout);
    let wired: Vec<&str> = v["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["change"] == json!("agent"))
        .map(|c| c["agent"].as_str().unwrap())
        .collect();
    assert_eq!(wired, ["gemini", "cursor"], "{v}");
    crate::schemas::assert_valid("enable.json", "enable --agent all --json", &v);
}
