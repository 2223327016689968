//! Claude Code (`@anthropic-ai/claude-code`), run offline against the Messages API.

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::json;

use super::{agent_package, Endpoint};
use crate::commit_hooks::{commit_in, the_trailer};
use crate::env::{output_text, path_str, path_with_bins, tool_available, Store, TestEnv};

/// Claude Code's native binary as `tests/tools.sh` installs it, if it is there.
fn claude_binary() -> Option<PathBuf> {
    let scope = agent_package("@anthropic-ai/claude-code")?.join("node_modules/@anthropic-ai");
    std::fs::read_dir(scope)
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("claude-code-linux-")
        })
        .map(|e| e.path().join("claude"))
        .find(|p| p.is_file())
}

/// `claude -p <prompt> <extra>` in the test repository against `endpoint`, as a user runs it:
/// the hermetic environment, our binaries on PATH (Claude Code's hooks run `git
/// entire-checkpoint`), permissions skipped (as root that needs `IS_SANDBOX`), at most 3
/// minutes.
fn claude(env: &TestEnv, bin: &Path, endpoint: &Endpoint, prompt: &str, extra: &[&str]) -> Output {
    env.program_in("timeout", env.repo())
        .env("PATH", path_with_bins())
        .env("ANTHROPIC_BASE_URL", endpoint.url())
        .env("ANTHROPIC_API_KEY", "sk-test-offline")
        .env("IS_SANDBOX", "1")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .arg("180")
        .arg(bin)
        .args(["-p", prompt, "--dangerously-skip-permissions"])
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("run claude")
}

/// A whole Claude Code session, run by the real Claude Code: `enable --agent claude-code`; a first
/// prompt whose turn writes a file and commits it from the agent's own shell; a second prompt
/// (`--continue`) that writes another file, which the user commits. The agent's own commit's
/// checkpoint holds prompt 1, its file and the tokens the endpoint reported for it; the user's
/// holds prompt 2 and not prompt 1. Neither the agent's output nor what it sent the model
/// carries anything of ours.
#[test]
fn the_real_claude_code_is_captured_with_no_glue() {
    let Some(bin) = claude_binary() else {
        tool_available("Claude Code (npm @anthropic-ai/claude-code)", false);
        return;
    };
    let env = TestEnv::new();
    env.ok_primary_in(None, env.repo(), &["enable", "--agent", "claude-code"]);
    let notes = env.repo().join("notes.txt");
    let second = env.repo().join("second.txt");
    let endpoint = Endpoint::start(
        &env,
        &json!({
            "PROMPT-ONE": [
                {"tool": "Write", "input": {"file_path": path_str(&notes), "content": "notes by the agent\n"}, "output_tokens": 120},
                {"tool": "Bash", "input": {"command": "git add notes.txt && git commit -q -m 'Add notes'", "description": "Commit the notes"}, "output_tokens": 40},
                {"text": "Done.", "output_tokens": 4}
            ],
            "PROMPT-TWO": [
                {"tool": "Write", "input": {"file_path": path_str(&second), "content": "a second file\n"}, "output_tokens": 100},
                {"text": "Added.", "output_tokens": 3}
            ]
        }),
    );
    let first_prompt = "write the notes file and commit it PROMPT-ONE";
    let out = claude(&env, &bin, &endpoint, first_prompt, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Done.");
    let agents_commit = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    assert_eq!(env.git(&["log", "-1", "--format=%s"]).trim(), "Add notes");

    let second_prompt = "now add a second file PROMPT-TWO";
    let out = claude(&env, &bin, &endpoint, second_prompt, &["--continue"]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Added.");
    assert!(second.is_file());
    let (users_commit, _) = commit_in(&env, env.repo(), None, "second.txt", "Add second");

    let first = the_trailer(&env, &agents_commit);
    let next = the_trailer(&env, &users_commit);
    assert_eq!(
        env.blob_text(Store::Refs, &first, "0/prompt.txt"),
        first_prompt
    );
    assert_eq!(
        env.blob_text(Store::Refs, &next, "0/prompt.txt"),
        second_prompt
    );
    let meta = env.json(Store::Refs, &first, "0/metadata.json");
    assert_eq!(meta["agent"], json!("Claude Code"), "{meta}");
    assert_eq!(meta["files_touched"], json!(["notes.txt"]), "{meta}");
    let meta2 = env.json(Store::Refs, &next, "0/metadata.json");
    assert_eq!(meta2["files_touched"], json!(["second.txt"]), "{meta2}");
    // Every token the endpoint reported is counted once: the Write's in the agent's own
    // commit's checkpoint, the Bash call that commits there too unless Claude Code had not yet
    // written its entry when the commit read the transcript (it writes it as the call starts),
    // then in the next one, with the rest.
    let (a, b) = (
        meta["token_usage"]["output_tokens"].as_u64().unwrap(),
        meta2["token_usage"]["output_tokens"].as_u64().unwrap(),
    );
    assert!(a == 120 || a == 120 + 40, "{meta}");
    assert_eq!(a + b, 120 + 40 + 4 + 100 + 3, "{meta} {meta2}");

    // `stats` of the whole history: the agent's commit holds the line its Write wrote; the
    // user's commit replaced what the second Write wrote (`commit_in` writes its own text), so
    // its line is linked but nobody's by the transcript; the first commit links nothing.
    let stats = env.ok_json_default(&["stats", "HEAD", "--json"]);
    let rows: Vec<(&str, u64, u64, u64, u64)> = stats["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let n = |k: &str| c[k].as_u64().unwrap();
            let subject = c["subject"].as_str().unwrap();
            (
                subject,
                n("added"),
                n("agent_written"),
                n("commit_linked"),
                n("human"),
            )
        })
        .collect();
    assert_eq!(
        rows,
        [
            ("Add second", 1, 0, 1, 0),
            ("Add notes", 1, 1, 0, 0),
            ("initial commit", 1, 0, 0, 1),
        ],
        "{stats:#}"
    );
    assert_eq!(stats["agents"][0]["agent"], "Claude Code", "{stats:#}");
    let verify = env.ok_json_default(&["verify", "HEAD", "--require", "--json"]);
    assert_eq!(verify["ok"], true, "{verify:#}");

    // Nothing of ours reached the model or the agent's output.
    let requests = endpoint.requests();
    for ours in ["agent-hook", "entire: ", "warning: "] {
        assert!(!requests.contains(ours), "a request carries {ours:?}");
    }
}

/// The sessions that came before: the real Claude Code runs a session in a repository whose
/// checkpoints are not enabled (its `git commit` prints the commit's summary line), and
/// `session import` finds that session in Claude Code's own store, writes it as a checkpoint
/// linked from its side to the commit the agent made, and writes nothing on a second import.
#[test]
fn a_session_the_real_claude_code_left_in_its_store_is_imported() {
    let Some(bin) = claude_binary() else {
        tool_available("Claude Code (npm @anthropic-ai/claude-code)", false);
        return;
    };
    let env = TestEnv::new();
    let notes = env.repo().join("notes.txt");
    let endpoint = Endpoint::start(
        &env,
        &json!({
            "PROMPT-ONE": [
                {"tool": "Write", "input": {"file_path": path_str(&notes), "content": "notes by the agent\n"}, "output_tokens": 120},
                {"tool": "Bash", "input": {"command": "git add notes.txt && git commit -m 'Add notes'", "description": "Commit the notes"}, "output_tokens": 40},
                {"text": "Done.", "output_tokens": 4}
            ]
        }),
    );
    let prompt = "write the notes file and commit it PROMPT-ONE";
    let out = claude(&env, &bin, &endpoint, prompt, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    let agents_commit = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    assert_eq!(env.git(&["log", "-1", "--format=%s"]).trim(), "Add notes");
    let refs = || env.git(&["for-each-ref", "refs/entire/checkpoints/"]);
    assert!(refs().is_empty(), "nothing recorded it as it ran");

    let listed = env.ok_json(Store::Refs, &["session", "import", "--json"]);
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["agent"], json!("claude-code"));
    assert_eq!(sessions[0]["state"], json!("new"));
    assert_eq!(sessions[0]["subject"], json!(prompt));
    assert_eq!(sessions[0]["commits"], json!([agents_commit]));

    let done = env.ok_json(Store::Refs, &["session", "import", "--all", "--json"]);
    let id = done["sessions"][0]["checkpoint_id"]
        .as_str()
        .unwrap()
        .to_owned();
    let root = env.json(Store::Refs, &id, "metadata.json");
    assert_eq!(
        root["linked_commits"],
        json!([{"sha": agents_commit}]),
        "{root}"
    );
    assert_eq!(root["imported"], json!(true), "{root}");
    assert_eq!(env.blob_text(Store::Refs, &id, "0/prompt.txt"), prompt);
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["session_id"], sessions[0]["session_id"], "{meta}");
    assert_eq!(meta["files_touched"], json!(["notes.txt"]), "{meta}");
    assert_eq!(
        meta["token_usage"]["output_tokens"],
        json!(120 + 40 + 4),
        "{meta}"
    );

    let written = refs();
    let again = env.ok_json(Store::Refs, &["session", "import", "--all", "--json"]);
    assert_eq!(again["sessions"][0]["state"], json!("recorded"), "{again}");
    assert_eq!(refs(), written, "a second import writes nothing");
}

/// The real Claude Code delegating to a subagent (its `Agent` tool): the subagent's own
/// conversation goes to the endpoint as a request of its own, its transcript lands beside the
/// session's, and the user's commit after the turn stores it under the checkpoint's
/// `tasks/<tool-use-id>/` (`task.json` naming the call, `agent-<id>.jsonl`). Pushed with the code,
/// a teammate's fresh clone reads the checkpoint.
#[test]
fn the_real_claude_codes_subagent_is_stored_and_a_teammate_reads_it() {
    let Some(bin) = claude_binary() else {
        tool_available("Claude Code (npm @anthropic-ai/claude-code)", false);
        return;
    };
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.ok_primary_in(None, env.repo(), &["enable", "--agent", "claude-code"]);
    let endpoint = Endpoint::start(
        &env,
        &json!({
            "PROMPT-THREE": [
                {"tool": "Agent", "input": {"description": "Look around", "prompt": "SUBTASK-MARK say what you see", "subagent_type": "claude"}, "output_tokens": 30},
                {"text": "Delegated.", "output_tokens": 2}
            ],
            "SUBTASK-MARK": [
                {"text": "I see a repository.", "output_tokens": 5}
            ]
        }),
    );
    let prompt = "ask a subagent to look around PROMPT-THREE";
    let out = claude(&env, &bin, &endpoint, prompt, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "Delegated.");
    assert!(
        endpoint
            .requests()
            .contains("SUBTASK-MARK say what you see"),
        "the subagent asked the endpoint"
    );
    let (users_commit, _) = commit_in(&env, env.repo(), None, "by-hand.txt", "By hand");
    let id = the_trailer(&env, &users_commit);
    let files = env.git(&[
        "ls-tree",
        "-r",
        "--name-only",
        &format!("refs/entire/checkpoints/{}/{id}", &id[id.len() - 2..]),
    ]);
    let task: Vec<&str> = files.lines().filter(|f| f.starts_with("tasks/")).collect();
    assert!(
        task.iter().any(|f| f.ends_with("/task.json"))
            && task
                .iter()
                .any(|f| f.contains("/agent-") && f.ends_with(".jsonl")),
        "the subagent under tasks/: {files}"
    );
    let task_json = task.iter().find(|f| f.ends_with("/task.json")).unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&env.blob_text(Store::Refs, &id, task_json)).unwrap();
    assert_eq!(v["subagent_type"], json!("claude"), "{v}");
    assert!(
        task_json.contains(v["tool_use_id"].as_str().unwrap()),
        "{task_json} {v}"
    );
    let agent_file = task.iter().find(|f| f.contains("/agent-")).unwrap();
    assert!(
        env.blob_text(Store::Refs, &id, agent_file)
            .contains("I see a repository."),
        "the subagent's own transcript"
    );

    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    let teammate = env.clone_of(&origin, "teammate", &[]);
    let shown = env.ok_primary_in(None, &teammate, &["cat", &id, "0/prompt.txt"]);
    assert_eq!(shown, prompt);
}
