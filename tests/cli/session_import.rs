//! `session import` (docs/agents.md, "Importing the sessions that came before"): the sessions
//! agents ran in a work tree before their hooks recorded them, found in each agent's own store
//! under `HOME` (laid out as each agent lays it out, with the transcripts of
//! `tests/fixtures/transcripts/`), listed, written as checkpoints linked to the commits their
//! transcripts show the agent making, and never imported twice.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use crate::env::{
    assert_code, checkpoint_ref, parse_json, path_str, transcript_fixture, Store, TestEnv,
};
use crate::schemas::assert_valid;

const AWS_KEY: &str = "AKIAQ7ZJ4KXW2NPLM3VB";

/// A fixture transcript with its project directory made the test's work tree.
fn fixture_here(env: &TestEnv, name: &str) -> String {
    std::fs::read_to_string(transcript_fixture(name))
        .unwrap()
        .replace("/home/dev/proj", path_str(env.repo()))
}

/// Writes `text` at `rel` under the test's home directory.
fn put(env: &TestEnv, rel: &str, text: &str) -> PathBuf {
    let path = env.root().join("home").join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, text).unwrap();
    path
}

/// `path` with every character but ASCII letters and digits as `-`.
fn dashed(path: &Path) -> String {
    path_str(path)
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The agent makes a commit in the work tree: returns the full hash and what `git commit`
/// printed (its summary line names the abbreviated hash).
fn agent_commits(env: &TestEnv) -> (String, String) {
    env.write_file("agents/claude.txt", b"notes written by claude\n");
    env.git(&["add", "agents/claude.txt"]);
    let printed = env.git(&["commit", "-m", "add the claude notes"]);
    assert!(printed.starts_with("[main "), "{printed}");
    (env.git(&["rev-parse", "HEAD"]).trim().to_owned(), printed)
}

/// Lays out one past session of each agent, as each agent stores it, run in the test's work
/// tree; the Claude Code session ran `git commit` (its output `printed`) and its prompt holds a
/// secret. Returns the Claude Code session's ID.
fn lay_out_every_agents_store(env: &TestEnv, printed: &str) -> &'static str {
    let repo = env.repo();
    let sid = "5e0c3a1b-9d2f-4e6a-8b7c-1f2e3d4c5b6a";
    let mut claude = fixture_here(env, "claude-code.jsonl").replace(
        "write the claude notes file",
        &format!("write the claude notes file, key {AWS_KEY}"),
    );
    for line in [
        json!({"type": "assistant", "message": {"id": "msg_c", "type": "message", "role": "assistant", "model": "claude-opus-4-7",
            "content": [{"type": "tool_use", "id": "toolu_c", "name": "Bash", "input": {"command": "git add -A && git commit -m 'add the claude notes'"}}]},
            "uuid": "c1", "sessionId": sid}),
        json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_c", "content": printed}]},
            "uuid": "c2", "sessionId": sid}),
    ] {
        claude.push_str(&format!("{line}\n"));
    }
    put(
        env,
        &format!(".claude/projects/{}/{sid}.jsonl", dashed(repo)),
        &claude,
    );
    // Codex keeps every project's rollouts together: one of this work tree, one of another.
    put(
        env,
        ".codex/sessions/2026/04/20/rollout-2026-04-20T07-18-30-019da-codex.jsonl",
        &fixture_here(env, "codex.jsonl"),
    );
    put(
        env,
        ".codex/sessions/2026/04/21/rollout-2026-04-21T07-18-30-019db-elsewhere.jsonl",
        &std::fs::read_to_string(transcript_fixture("codex.jsonl"))
            .unwrap()
            .replace("019da-codex", "019db-elsewhere"),
    );
    let hash: String = Sha256::digest(path_str(repo).as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let mut gemini: Value = serde_json::from_str(&fixture_here(env, "gemini-cli.json")).unwrap();
    gemini["projectHash"] = json!(hash);
    put(
        env,
        &format!(".gemini/tmp/{hash}/chats/session-2026-03-18T20-43-4b1f0c1e.json"),
        &gemini.to_string(),
    );
    put(
        env,
        &format!(
            ".cursor/projects/{}/agent-transcripts/c0ffee00-cursor.jsonl",
            dashed(repo).trim_start_matches('-')
        ),
        &fixture_here(env, "cursor.jsonl"),
    );
    put(
        env,
        ".copilot/session-state/31b0eadb-c44b-41ef-b46b-16c3f8e1fdd6/events.jsonl",
        &fixture_here(env, "copilot-cli.jsonl"),
    );
    put(
        env,
        &format!(
            ".factory/sessions/{}/a31fbbb0-0922-4b2b-be85-9e9f0283a4d8.jsonl",
            path_str(repo).replace('/', "-")
        ),
        &fixture_here(env, "droid.jsonl"),
    );
    sid
}

/// The checkpoint refs and their tips.
fn checkpoint_refs(env: &TestEnv) -> String {
    env.git(&[
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        "refs/entire/checkpoints/",
    ])
}

/// The sessions of a `session import --json` document, by agent: `(session_id, state)`.
fn states(doc: &Value) -> Vec<(String, String, String)> {
    let mut out: Vec<(String, String, String)> = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["agent"].as_str().unwrap().to_owned(),
                s["session_id"].as_str().unwrap().to_owned(),
                s["state"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn past_sessions_of_every_agent_are_listed_imported_linked_and_imported_once() {
    let env = TestEnv::new();
    let (commit, printed) = agent_commits(&env);
    let sid = lay_out_every_agents_store(&env, &printed);

    // Listing writes nothing and names each agent's session of this work tree, not the other's.
    let listed = parse_json(
        &env.ok(Store::Refs, &["session", "import", "--json"])
            .into_bytes(),
    );
    assert_eq!(listed["dry_run"], json!(true));
    assert_valid("session-import.json", "session import --json", &listed);
    let expected: Vec<(String, String, String)> = [
        ("claude-code", sid),
        ("codex", "019da-codex"),
        ("copilot", "31b0eadb-c44b-41ef-b46b-16c3f8e1fdd6"),
        ("cursor", "c0ffee00-cursor"),
        ("droid", "a31fbbb0-0922-4b2b-be85-9e9f0283a4d8"),
        ("gemini", "4b1f0c1e-6d2a-4f57-9a44-2f1d7c0e9b10"),
    ]
    .iter()
    .map(|(a, s)| (a.to_string(), s.to_string(), "new".to_owned()))
    .collect();
    assert_eq!(states(&listed), expected);
    let claude = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["agent"] == "claude-code")
        .unwrap();
    assert_eq!(claude["commits"], json!([commit]));
    assert_eq!(claude["prompt_count"], json!(1));
    assert!(checkpoint_refs(&env).is_empty(), "a listing writes nothing");
    let human = env.ok(Store::Refs, &["session", "import"]);
    assert_eq!(human.lines().count(), 6, "{human}");
    assert!(
        human.contains(sid) && human.contains(&commit[..12]),
        "{human}"
    );

    // --dry-run says what would be imported and writes nothing.
    let dry = parse_json(
        &env.ok(
            Store::Refs,
            &["session", "import", "--all", "--dry-run", "--json"],
        )
        .into_bytes(),
    );
    assert!(states(&dry).iter().all(|(_, _, s)| s == "imported"));
    assert!(dry["sessions"][0].get("checkpoint_id").is_none());
    assert!(checkpoint_refs(&env).is_empty(), "a dry run writes nothing");

    // Importing writes one checkpoint per session.
    let done = parse_json(
        &env.ok(Store::Refs, &["session", "import", "--all", "--json"])
            .into_bytes(),
    );
    assert_eq!(done["dry_run"], json!(false));
    assert_valid("session-import.json", "session import --all --json", &done);
    assert!(
        states(&done).iter().all(|(_, _, s)| s == "imported"),
        "{done}"
    );
    let refs = checkpoint_refs(&env);
    assert_eq!(refs.lines().count(), 6, "{refs}");
    let id_of = |agent: &str| {
        done["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["agent"] == agent)
            .unwrap()["checkpoint_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // The Claude Code session's checkpoint is linked to the commit it made, from its side, and
    // marked imported; its secret is redacted.
    let id = id_of("claude-code");
    let tip = checkpoint_ref(&id);
    let root = parse_json(&env.git_bytes(&["cat-file", "blob", &format!("{tip}:metadata.json")]));
    assert_eq!(root["linked_commits"], json!([{"sha": commit}]));
    assert_eq!(root["commit_sha"], json!(commit));
    assert_eq!(root["imported"], json!(true));
    let session =
        parse_json(&env.git_bytes(&["cat-file", "blob", &format!("{tip}:0/metadata.json")]));
    assert_eq!(session["kind"], json!("imported"));
    assert_eq!(session["session_id"], json!(sid));
    assert_eq!(session["agent"], json!("Claude Code"));
    assert_eq!(session["files_touched"], json!(["agents/claude.txt"]));
    let stored = env.git(&["cat-file", "blob", &format!("{tip}:0/full.jsonl")]);
    let prompt = env.git(&["cat-file", "blob", &format!("{tip}:0/prompt.txt")]);
    assert!(
        !stored.contains(AWS_KEY) && !prompt.contains(AWS_KEY),
        "redacted"
    );
    assert!(prompt.contains("write the claude notes file"), "{prompt}");
    // A session whose transcript shows no commit of this repository is written unlinked.
    let codex = parse_json(&env.git_bytes(&[
        "cat-file",
        "blob",
        &format!("{}:metadata.json", checkpoint_ref(&id_of("codex"))),
    ]));
    assert!(codex.get("linked_commits").is_none() && codex.get("commit_sha").is_none());
    assert_eq!(codex["imported"], json!(true));

    // Importing again writes nothing: every session is recorded.
    let again = parse_json(
        &env.ok(Store::Refs, &["session", "import", "--all", "--json"])
            .into_bytes(),
    );
    assert!(
        states(&again).iter().all(|(_, _, s)| s == "recorded"),
        "{again}"
    );
    assert_eq!(checkpoint_refs(&env), refs, "nothing new written");
}

#[test]
fn a_session_is_imported_by_its_id_and_bad_requests_change_nothing() {
    let env = TestEnv::new();
    let (_, printed) = agent_commits(&env);
    lay_out_every_agents_store(&env, &printed);

    let out = env.run(Store::Refs, &["session", "import", "--agent", "kiro"]);
    assert_code(&out, 2, "an agent whose store is not read");
    let out = env.run(Store::Refs, &["session", "import", "no-such-session"]);
    assert_code(&out, 1, "a session that is not found");
    assert!(checkpoint_refs(&env).is_empty());

    let done = parse_json(
        &env.ok(
            Store::Refs,
            &[
                "session",
                "import",
                "--agent",
                "codex",
                "019da-codex",
                "--json",
            ],
        )
        .into_bytes(),
    );
    assert_eq!(
        states(&done),
        [(
            "codex".to_owned(),
            "019da-codex".to_owned(),
            "imported".to_owned()
        )]
    );
    assert_eq!(checkpoint_refs(&env).lines().count(), 1);
}

#[test]
fn enable_agent_import_history_imports_that_agents_sessions() {
    let env = TestEnv::new();
    let (commit, printed) = agent_commits(&env);
    let sid = lay_out_every_agents_store(&env, &printed);

    let out = env.ok_default(&["enable", "--agent", "claude-code", "--import-history"]);
    assert!(out.contains(sid) && out.contains("imported as"), "{out}");
    let refs = checkpoint_refs(&env);
    assert_eq!(
        refs.lines().count(),
        1,
        "only Claude Code's sessions: {refs}"
    );
    let tip = refs.split_whitespace().next().unwrap();
    let root = parse_json(&env.git_bytes(&["cat-file", "blob", &format!("{tip}:metadata.json")]));
    assert_eq!(root["linked_commits"], json!([{"sha": commit}]));
    // A second run changes nothing.
    let out = env.ok_default(&[
        "enable",
        "--agent",
        "claude-code",
        "--import-history",
        "--json",
    ]);
    let doc = parse_json(&out.into_bytes());
    assert_valid("enable.json", "enable --import-history --json", &doc);
    assert_valid("session-import.json", "enable's import", &doc["import"]);
    assert_eq!(doc["import"]["sessions"][0]["state"], json!("recorded"));
    assert_eq!(checkpoint_refs(&env), refs);
}

/// OpenCode's sessions are read through its own command: a stand-in `opencode` lists three
/// sessions of the repository (as `opencode session list --format json` does), two run in this
/// work tree and one in another clone, and exports one of them; the other's export fails. The
/// work tree's exported session is listed and imported; the failing export is a warning on
/// stderr, not an error; the other clone's session is not listed.
#[test]
fn opencode_sessions_are_listed_and_exported_by_its_own_command() {
    let env = TestEnv::new();
    let exported = env.input_file(
        "export.json",
        fixture_here(&env, "opencode.json").as_bytes(),
    );
    let listing = json!([
        {"id": "ses_here", "updated": 1796547898716u64, "directory": path_str(env.repo())},
        {"id": "ses_broken", "updated": 1796547898716u64, "directory": path_str(env.repo())},
        {"id": "ses_clone", "updated": 1796547898716u64, "directory": format!("{}-clone", path_str(env.repo()))}
    ]);
    let listed = env.input_file("listing.json", listing.to_string().as_bytes());
    let fake = env.root().join("fake-bin");
    crate::env::write_executable(
        &fake.join("opencode"),
        &format!(
            "#!/bin/sh\n\
             [ \"$*\" = 'session list --format json' ] && exec cat '{}'\n\
             [ \"$*\" = 'export ses_here' ] && exec cat '{}'\n\
             exit 3\n",
            path_str(&listed),
            path_str(&exported)
        ),
    );
    let mut path = fake.into_os_string();
    path.push(":");
    path.push(crate::env::path_with_bins());
    let import = |extra: &[&str]| {
        let mut args = vec!["session", "import", "--agent", "opencode", "--json"];
        args.extend(extra);
        let out = env
            .std_cmd(Store::Refs)
            .args(&args)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_code(&out, 0, "session import --agent opencode");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        (parse_json(&out.stdout), stderr)
    };

    let (doc, stderr) = import(&[]);
    assert_valid("session-import.json", "session import --json", &doc);
    let found: Vec<(&str, &str)> = doc["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["session_id"].as_str().unwrap(),
                s["state"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(found, [("ses_here", "new")], "{doc}");
    assert_eq!(
        doc["sessions"][0]["transcript"],
        json!("opencode export ses_here")
    );
    assert_eq!(
        doc["sessions"][0]["subject"],
        json!("write the opencode notes file")
    );
    assert!(
        stderr.contains("`opencode export ses_broken` failed"),
        "{stderr}"
    );

    let (done, _) = import(&["--all"]);
    let id = done["sessions"][0]["checkpoint_id"].as_str().unwrap();
    let meta = env.json(Store::Refs, id, "0/metadata.json");
    assert_eq!(meta["session_id"], json!("ses_here"), "{meta}");
    assert_eq!(meta["agent"], json!("OpenCode"), "{meta}");
}
