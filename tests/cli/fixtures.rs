//! Shared test data: the standard session write, the reference key orders, the
//! byte-level JSON format check, and checkpoints laid out by hand with git plumbing.

use serde_json::Value;

use crate::env::{checkpoint_ref, keys, tree_prefix, Store, TestEnv, V1_BRANCH};

pub const HEX_ID: &str = "a1b2c3d4e5f6";
pub const HEX_ID_2: &str = "f6e5d4c3b2a1";
pub const ULID_ID: &str = "01KVBJCWYA4YW6J5M9GP655HZN";
pub const CREATED_AT: &str = "2026-10-01T19:12:01.19884Z";
pub const TRANSCRIPT: &[u8] =
    b"{\"type\":\"user\",\"message\":\"please do the thing\"}\n{\"type\":\"assistant\",\"message\":\"done\"}\n";
pub const TRANSCRIPT_2: &[u8] =
    b"{\"type\":\"user\",\"message\":\"and another thing\"}\n{\"type\":\"assistant\",\"message\":\"ok\"}\n";

/// Root `metadata.json` keys in the reference's order (docs/format.md, "Metadata fields").
pub const ROOT_KEY_ORDER: &[&str] = &[
    "cli_version",
    "checkpoint_id",
    "strategy",
    "branch",
    "commit_sha",
    "checkpoints_count",
    "files_touched",
    "sessions",
    "token_usage",
    "model_usage",
    "combined_attribution",
    "has_review",
    "has_investigation",
    "imported",
    "token_usage_version",
];
/// Root keys that are never omitted.
pub const ROOT_REQUIRED: &[&str] = &[
    "checkpoint_id",
    "strategy",
    "checkpoints_count",
    "files_touched",
    "sessions",
];

/// Session `N/metadata.json` keys in the reference's order (docs/format.md, "Metadata fields").
pub const SESSION_KEY_ORDER: &[&str] = &[
    "cli_version",
    "checkpoint_id",
    "session_id",
    "strategy",
    "created_at",
    "branch",
    "commit_sha",
    "checkpoints_count",
    "save_step_count",
    "files_touched",
    "agent",
    "model",
    "turn_id",
    "is_task",
    "tool_use_id",
    "transcript_identifier_at_start",
    "checkpoint_transcript_start",
    "token_transcript_start",
    "transcript_lines_at_start",
    "compact_transcript_start",
    "token_usage",
    "model_usage",
    "skill_events_version",
    "skill_events",
    "session_metrics",
    "summary",
    "initial_attribution",
    "prompt_attributions",
    "kind",
    "review_skills",
    "review_prompt",
    "investigate_run_id",
    "investigate_topic",
];
/// Session keys that are never omitted (`model` is always present, `""` when unknown).
pub const SESSION_REQUIRED: &[&str] = &[
    "checkpoint_id",
    "session_id",
    "strategy",
    "created_at",
    "checkpoints_count",
    "files_touched",
    "model",
];

/// TokenUsage keys in order.
pub const TOKEN_KEY_ORDER: &[&str] = &[
    "input_tokens",
    "cache_creation_tokens",
    "cache_read_tokens",
    "output_tokens",
    "api_call_count",
    "subagent_tokens",
];

/// Asserts that the object's keys are all known, appear in `order`, and include `required`.
pub fn assert_key_order(v: &Value, order: &[&str], required: &[&str], what: &str) {
    let actual = keys(v);
    let mut last = None;
    for k in &actual {
        let pos = order
            .iter()
            .position(|o| o == k)
            .unwrap_or_else(|| panic!("{what}: unexpected key {k:?} in {actual:?}"));
        if let Some(prev) = last {
            assert!(
                pos > prev,
                "{what}: key {k:?} out of order; keys {actual:?}, expected order {order:?}"
            );
        }
        last = Some(pos);
    }
    for r in required {
        assert!(
            actual.iter().any(|k| k == r),
            "{what}: required key {r:?} missing from {actual:?}"
        );
    }
}

/// Asserts the reference JSON encoding: 2-space indent, no HTML escaping, one trailing newline.
/// serde_json's pretty printer (preserve_order) produces exactly that layout, so re-encoding the
/// parsed document must give back the same bytes.
pub fn assert_json_format(raw: &[u8], what: &str) {
    let text = std::str::from_utf8(raw).unwrap_or_else(|_| panic!("{what}: not UTF-8"));
    assert!(
        text.starts_with("{\n  \""),
        "{what}: not 2-space indented:\n{text}"
    );
    assert!(
        text.ends_with("}\n") && !text.ends_with("\n\n"),
        "{what}: must end with exactly one newline:\n{text:?}"
    );
    assert!(
        !text.contains("\\u003c") && !text.contains("\\u003e") && !text.contains("\\u0026"),
        "{what}: HTML characters escaped:\n{text}"
    );
    let value: Value = serde_json::from_str(text).expect("valid JSON");
    let again = serde_json::to_string_pretty(&value).expect("encode") + "\n";
    assert_eq!(
        text, again,
        "{what}: layout differs from 2-space indented JSON"
    );
}

/// The standard session write of these tests: prompt "do the thing", files [a.go],
/// fixed `created_at`. Returns stdout (the ID line).
pub fn write_std(
    env: &TestEnv,
    store: Store,
    id: &str,
    session: &str,
    transcript: &[u8],
) -> String {
    let file = env.input_file(&format!("transcript-{session}-{id}.jsonl"), transcript);
    env.write(store, session)
        .id(id)
        .transcript(&file)
        .prompt("do the thing")
        .files_touched(&["a.go"])
        .created_at(CREATED_AT)
        .ok()
}

/// A node of a tree built by hand.
pub enum Node {
    Blob(Vec<u8>),
    Tree(Vec<(String, Node)>),
}

pub fn blob(bytes: &[u8]) -> Node {
    Node::Blob(bytes.to_vec())
}

pub fn tree(entries: Vec<(&str, Node)>) -> Node {
    Node::Tree(
        entries
            .into_iter()
            .map(|(n, v)| (n.to_string(), v))
            .collect(),
    )
}

/// Writes a node into the object store with `git hash-object -w` / `git mktree`.
pub fn write_node(env: &TestEnv, node: &Node) -> String {
    match node {
        Node::Blob(bytes) => env.git_stdin(&["hash-object", "-w", "--stdin"], bytes),
        Node::Tree(entries) => {
            let mut listing = String::new();
            for (name, child) in entries {
                let hash = write_node(env, child);
                let (mode, kind) = match child {
                    Node::Blob(_) => ("100644", "blob"),
                    Node::Tree(_) => ("040000", "tree"),
                };
                listing.push_str(&format!("{mode} {kind} {hash}\t{name}\n"));
            }
            env.git_stdin(&["mktree"], listing.as_bytes())
        }
    }
}

/// `git commit-tree` with an optional parent.
pub fn commit_tree(env: &TestEnv, tree: &str, parent: Option<&str>, message: &str) -> String {
    let mut args = vec!["commit-tree", tree];
    if let Some(p) = parent {
        args.extend_from_slice(&["-p", p]);
    }
    env.git_stdin(&args, message.as_bytes())
}

/// The reference commit message of a session write.
pub fn session_message(id: &str, session: &str) -> String {
    format!("Checkpoint: {id}\n\nEntire-Session: {session}\nEntire-Strategy: manual-commit\n")
}

/// A valid session metadata document as the reference writes it.
pub fn session_metadata_json(id: &str, session: &str) -> String {
    format!(
        "{{\n  \"checkpoint_id\": \"{id}\",\n  \"session_id\": \"{session}\",\n  \"strategy\": \"manual-commit\",\n  \"created_at\": \"2026-09-01T08:00:00Z\",\n  \"checkpoints_count\": 1,\n  \"files_touched\": [\n    \"a.go\"\n  ],\n  \"model\": \"\"\n}}\n"
    )
}

/// A valid root summary for a one-session checkpoint; `prefix` is `""` for git-refs or
/// `/<xx>/<rest>` for the branch.
pub fn root_metadata_json(id: &str, prefix: &str) -> String {
    format!(
        "{{\n  \"checkpoint_id\": \"{id}\",\n  \"strategy\": \"manual-commit\",\n  \"checkpoints_count\": 1,\n  \"files_touched\": [\n    \"a.go\"\n  ],\n  \"sessions\": [\n    {{\n      \"metadata\": \"{prefix}/0/metadata.json\",\n      \"transcript\": \"{prefix}/0/full.jsonl\",\n      \"content_hash\": \"{prefix}/0/content_hash.txt\",\n      \"prompt\": \"{prefix}/0/prompt.txt\"\n    }}\n  ]\n}}\n"
    )
}

/// The subtree of a one-session checkpoint with the given root metadata bytes.
pub fn checkpoint_node(id: &str, session: &str, root_metadata: &[u8], transcript: &[u8]) -> Node {
    let hash = format!("sha256:{}", crate::env::sha256_hex(transcript));
    tree(vec![
        ("metadata.json", blob(root_metadata)),
        (
            "0",
            tree(vec![
                (
                    "metadata.json",
                    blob(session_metadata_json(id, session).as_bytes()),
                ),
                ("full.jsonl", blob(transcript)),
                ("content_hash.txt", blob(hash.as_bytes())),
                ("prompt.txt", blob(b"do the thing")),
            ]),
        ),
    ])
}

/// Creates a git-refs checkpoint by hand under `ref_name`; returns the commit.
pub fn hand_made_ref(env: &TestEnv, ref_name: &str, id: &str, node: &Node) -> String {
    let tree = write_node(env, node);
    let commit = commit_tree(env, &tree, None, &session_message(id, "hand-sess"));
    env.git(&["update-ref", ref_name, &commit]);
    commit
}

/// Creates the v1 branch by hand (init commit + one checkpoint commit); returns the tip.
pub fn hand_made_branch(env: &TestEnv, id: &str, node: &Node) -> String {
    let init = commit_tree(env, &env.empty_tree(), None, "Initialize sessions branch\n");
    let (head, rest) = id.split_at(2);
    let root = Node::Tree(vec![(
        head.to_string(),
        Node::Tree(vec![(rest.to_string(), clone_node(node))]),
    )]);
    let tree = write_node(env, &root);
    let tip = commit_tree(env, &tree, Some(&init), &session_message(id, "hand-sess"));
    env.git(&["update-ref", V1_BRANCH, &tip]);
    tip
}

fn clone_node(node: &Node) -> Node {
    match node {
        Node::Blob(b) => Node::Blob(b.clone()),
        Node::Tree(entries) => Node::Tree(
            entries
                .iter()
                .map(|(n, c)| (n.clone(), clone_node(c)))
                .collect(),
        ),
    }
}

/// A one-session checkpoint made by hand in `store` with a valid layout; returns the tip.
pub fn hand_made(env: &TestEnv, store: Store, id: &str, root_metadata: Option<&[u8]>) -> String {
    let default_root = root_metadata_json(id, &tree_prefix(store, id));
    let root = root_metadata.unwrap_or(default_root.as_bytes());
    let node = checkpoint_node(id, "hand-sess", root, TRANSCRIPT);
    match store {
        Store::Refs => hand_made_ref(env, &checkpoint_ref(id), id, &node),
        Store::Branch => hand_made_branch(env, id, &node),
    }
}

/// A v1 root summary of `id` with the v1 prefix `/<id[:2]>/<id[2:]>` removed from every string
/// of every `sessions[]` entry: the summary a git-refs copy of the checkpoint has.
pub fn strip_v1_prefix(mut root: Value, id: &str) -> Value {
    let prefix = format!("{}/", tree_prefix(Store::Branch, id));
    let obj = root.as_object_mut().expect("root summary is an object");
    if let Some(sessions) = obj.get_mut("sessions").and_then(Value::as_array_mut) {
        for entry in sessions {
            for (_, v) in entry.as_object_mut().expect("session entry").iter_mut() {
                if let Some(rest) = v.as_str().and_then(|s| s.strip_prefix(&prefix)) {
                    *v = Value::String(format!("/{rest}"));
                }
            }
        }
    }
    root
}
