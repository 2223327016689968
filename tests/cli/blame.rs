//! `blame` and `why` on real repositories: commits carrying `Entire-Checkpoint` trailers whose
//! checkpoints (written by the real binary, in both stores) hold Claude Code and Codex
//! transcripts; a fresh clone that fetches the checkpoints in one batch; and bad input.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{assert_code, network_calls, parse_json, stderr, stdout, Store, TestEnv};
use crate::fixtures::{hand_made, HEX_ID, HEX_ID_2};

pub(crate) const FILE: &str = "src/hello.go";

/// A Claude Code transcript: a first prompt that writes nothing, then the prompt that leads to
/// the `Write` of the file (named by an absolute path in the agent's checkout).
pub(crate) const CLAUDE: &str = concat!(
    r#"{"type":"user","message":{"role":"user","content":"look around first"},"timestamp":"2026-01-01T09:00:00Z"}"#,
    "\n",
    r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t0","name":"Read","input":{"file_path":"/home/dev/proj/README.md"}}]},"timestamp":"2026-01-01T09:00:02Z"}"#,
    "\n",
    r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t0","content":"hello"}]},"timestamp":"2026-01-01T09:00:03Z"}"#,
    "\n",
    r#"{"type":"user","message":{"role":"user","content":"add a Go greeting package"},"timestamp":"2026-01-01T09:05:00Z"}"#,
    "\n",
    r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Write","input":{"file_path":"/home/dev/proj/src/hello.go","content":"package hello\n\nfunc Hello() string {\n\treturn \"hi\"\n}\n"}}]},"timestamp":"2026-01-01T09:05:09Z"}"#,
    "\n",
);

/// A Codex transcript whose `apply_patch` adds `Bye`.
const CODEX: &str = concat!(
    r#"{"timestamp":"2026-01-02T09:00:00Z","type":"session_meta","payload":{"id":"cx","cwd":"/w/proj"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-02T09:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"say goodbye as well"}}"#,
    "\n",
    r#"{"timestamp":"2026-01-02T09:00:09Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"c1","input":"*** Begin Patch\n*** Update File: src/hello.go\n@@\n+func Bye() string { return \"bye\" }\n*** End Patch\n"}}"#,
    "\n",
);

/// The file after the agent's commit: what the Write wrote, plus a blank and a brace line (no
/// evidence on their own) and one line edited by hand before committing.
pub(crate) const AGENT_VERSION: &str =
    "package hello\n\nfunc Hello() string {\n\treturn \"hi\"\n}\n// tweaked by hand\n";

/// Writes a checkpoint with one session of `transcript` in `store`.
pub fn checkpoint(
    env: &TestEnv,
    dir: &Path,
    store: Store,
    id: &str,
    transcript: &str,
    agent: &str,
) {
    let file = env.input_file(&format!("t-{id}.jsonl"), transcript.as_bytes());
    env.write(store, &format!("sess-{id}"))
        .id(id)
        .transcript(&file)
        .args(&["--agent", agent, "--model", "test-model"])
        .created_at("2026-01-01T10:00:00Z")
        .in_dir(dir)
        .ok();
}

/// Commits `text` as the file with `message`.
pub(crate) fn commit(env: &TestEnv, text: &str, message: &str) {
    env.write_file(FILE, text.as_bytes());
    env.git(&["add", FILE]);
    env.git(&["commit", "-q", "-m", message]);
}

/// Three commits on top of the README: the agent's (Claude, checkpoint HEX_ID), a human's
/// (no trailer), and a Codex session's (checkpoint HEX_ID_2).
pub(crate) fn history(env: &TestEnv, store: Store) {
    checkpoint(env, env.repo(), store, HEX_ID, CLAUDE, "Claude Code");
    commit(
        env,
        AGENT_VERSION,
        &format!("add hello\n\nEntire-Checkpoint: {HEX_ID}"),
    );
    commit(env, &format!("{AGENT_VERSION}// human note\n"), "a note");
    checkpoint(env, env.repo(), store, HEX_ID_2, CODEX, "Codex");
    commit(
        env,
        &format!("{AGENT_VERSION}// human note\nfunc Bye() string {{ return \"bye\" }}\n"),
        &format!("add bye\n\nEntire-Checkpoint: {HEX_ID_2}"),
    );
}

fn labels(json: &Value) -> Vec<(u64, String)> {
    json["lines"]
        .as_array()
        .expect("lines")
        .iter()
        .map(|l| {
            (
                l["line"].as_u64().unwrap(),
                l["attribution"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn owned(pairs: &[(u64, &str)]) -> Vec<(u64, String)> {
    pairs.iter().map(|(n, s)| (*n, s.to_string())).collect()
}

const ALL_LABELS: &[(u64, &str)] = &[
    (1, "agent"),
    (2, "commit-linked"),
    (3, "agent"),
    (4, "agent"),
    (5, "commit-linked"),
    (6, "commit-linked"),
    (7, "human"),
    (8, "agent"),
];

#[test]
fn blame_labels_agent_commit_linked_and_human_lines_in_both_stores() {
    for store in Store::ALL {
        let env = TestEnv::new();
        history(&env, store);
        // The checkpoints are where the store keeps them, as git sees it.
        let held = match store {
            Store::Refs => env.git(&["for-each-ref", "--format=%(refname)", "refs/entire/"]),
            Store::Branch => env.git(&["ls-tree", "-r", "--name-only", crate::env::V1_BRANCH]),
        };
        assert!(held.contains(&HEX_ID[2..]), "{store:?}: {held}");
        let json = env.ok_json(store, &["blame", FILE, "--json"]);
        assert_eq!(labels(&json), owned(ALL_LABELS), "{store:?}: {json:#}");
        let line1 = &json["lines"][0];
        assert_eq!(line1["checkpoints"][0], HEX_ID);
        assert_eq!(line1["write"]["tool"], "Write");
        assert_eq!(line1["write"]["session_id"], format!("sess-{HEX_ID}"));
        assert_eq!(json["lines"][7]["write"]["tool"], "apply_patch");
        assert_eq!(json["lines"][6]["checkpoints"], serde_json::json!([]));
        assert_eq!(json["counts"]["agent"], 4);
        assert_eq!(json["counts"]["human"], 1);
        assert_eq!(json["counts"]["commit_linked"], 3);
        let formats: Vec<&str> = json["checkpoints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["sessions"][0]["format"].as_str().unwrap())
            .collect();
        assert_eq!(formats, ["claude-code", "codex"]);

        let human = env.ok(store, &["blame", FILE]);
        let rows: Vec<&str> = human.lines().collect();
        assert_eq!(rows.len(), 8, "{human}");
        assert!(rows[0].contains(" agent ") && rows[0].ends_with("1) package hello"));
        assert!(rows[0].contains(HEX_ID), "{human}");
        assert!(rows[6].contains(" human ") && rows[6].ends_with("// human note"));
        assert!(rows[5].contains(" commit-linked "), "{human}");
        // In color, each label has its own (docs/cli.md, "Color").
        let colored = env.ok(store, &["blame", FILE, "--color=always"]);
        let rows: Vec<&str> = colored.lines().collect();
        assert!(rows[0].contains("\x1b[35magent\x1b[0m"), "{colored:?}");
        assert!(
            rows[5].contains("\x1b[36mcommit-linked\x1b[0m"),
            "{colored:?}"
        );
        assert!(rows[6].contains("\x1b[32mhuman\x1b[0m"), "{colored:?}");
    }
}

#[test]
fn blame_takes_a_line_range_and_a_revision() {
    let env = TestEnv::new();
    history(&env, Store::Refs);
    let json = env.ok_json(Store::Refs, &["blame", FILE, "-L", "3,4", "--json"]);
    assert_eq!(labels(&json), owned(&[(3, "agent"), (4, "agent")]));
    let json = env.ok_json(Store::Refs, &["blame", FILE, "-L", "6,+2", "--json"]);
    assert_eq!(labels(&json), owned(&[(6, "commit-linked"), (7, "human")]));
    // Before the Codex commit the file has seven lines, and only one checkpoint is linked.
    let json = env.ok_json(Store::Refs, &["blame", FILE, "HEAD~1", "--json"]);
    assert_eq!(labels(&json), owned(&ALL_LABELS[..7]));
    assert_eq!(json["rev"], "HEAD~1");
    assert_eq!(json["checkpoints"].as_array().unwrap().len(), 1);
    // Uncommitted changes of the working tree are labelled as such.
    env.write_file(FILE, format!("{AGENT_VERSION}// wip\n").as_bytes());
    let json = env.ok_json(Store::Refs, &["blame", FILE, "-L", "7", "--json"]);
    assert_eq!(labels(&json), owned(&[(7, "uncommitted")]));
    // From a subdirectory, the path is relative to it, as for git blame.
    let out = env.run_in(
        Store::Refs,
        &env.repo().join("src"),
        &["blame", "hello.go", "-L", "1,1"],
    );
    assert_code(&out, 0, "blame from a subdirectory");
    assert!(stdout(&out).contains(" agent "), "{}", stdout(&out));
}

#[test]
fn why_names_the_prompt_before_the_write_not_the_first_one() {
    let env = TestEnv::new();
    history(&env, Store::Refs);
    let json = env.ok_json(Store::Refs, &["why", &format!("{FILE}:3"), "--json"]);
    assert_eq!(json["attribution"], "agent");
    let w = &json["agent_write"];
    assert_eq!(w["checkpoint_id"], HEX_ID);
    assert_eq!(w["agent"], "Claude Code");
    assert_eq!(w["model"], "test-model");
    assert_eq!(w["prompt"]["text"], "add a Go greeting package");
    assert_eq!(w["prompt"]["timestamp"], "2026-01-01T09:05:00Z");
    assert_eq!(w["prompt"]["transcript_line"], 4);
    assert_eq!(json["commit_info"]["subject"], "add hello");

    let text = env.ok(Store::Refs, &["why", FILE, "-L", "8"]);
    assert!(text.contains("say goodbye as well"), "{text}");
    assert!(text.contains("Codex, model test-model"), "{text}");
    assert!(text.contains("apply_patch"), "{text}");

    // A commit-linked line: the checkpoint and its session's prompts are shown.
    let json = env.ok_json(Store::Refs, &["why", &format!("{FILE}:6"), "--json"]);
    assert_eq!(json["attribution"], "commit-linked");
    assert!(json["agent_write"].is_null());
    let prompts: Vec<&str> = json["sessions"][0]["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["text"].as_str().unwrap())
        .collect();
    assert_eq!(prompts, ["look around first", "add a Go greeting package"]);
    // A human line.
    let text = env.ok(Store::Refs, &["why", &format!("{FILE}:7"), "HEAD"]);
    assert!(text.contains("label      human"), "{text}");
    assert!(text.contains("the commit links no checkpoint"), "{text}");
}

/// The history of [`history`] pushed to a bare `origin` (code and checkpoints), and a
/// `--single-branch` clone of it; returns the remote and the clone.
pub(crate) fn remote_and_clone(env: &TestEnv, store: Store) -> (PathBuf, PathBuf) {
    history(env, store);
    let remote = env.bare_remote("origin");
    match store {
        Store::Refs => drop(env.ok(store, &["push", "origin", "--all"])),
        Store::Branch => drop(env.git(&["push", "-q", "origin", "entire/checkpoints/v1"])),
    }
    env.git(&["push", "-q", "origin", "main"]);
    let clone = env.clone_of(&remote, "clone", &["--single-branch"]);
    (remote, clone)
}

/// The network git runs (`fetch`, `ls-remote`) an `ENTIRE_LOG=debug` stderr shows.
#[test]
fn a_fresh_clone_fetches_the_checkpoints_in_one_batch() {
    for store in Store::ALL {
        let env = TestEnv::new();
        let (_, clone) = remote_and_clone(&env, store);
        assert!(env.checkpoint_refs_in(&clone).is_empty());
        let out = env
            .cmd_as(store)
            .current_dir(&clone)
            .env("ENTIRE_LOG", "debug")
            .args(["blame", FILE, "--json"])
            .output()
            .unwrap();
        let err = assert_code(&out, 0, "blame in a fresh clone");
        assert_eq!(labels(&parse_json(&out.stdout)), owned(ALL_LABELS), "{err}");
        // One listing of the remote's checkpoint refs, then one `git fetch` of those it has
        // (git-refs) or of the v1 branch (git-branch: hex IDs the remote has no refs for).
        assert_eq!(network_calls(&err), 2, "{store:?}:\n{err}");
        // Read again: everything is local now, nothing is fetched.
        let out = env
            .cmd_as(store)
            .current_dir(&clone)
            .env("ENTIRE_LOG", "debug")
            .args(["blame", FILE])
            .output()
            .unwrap();
        let err = assert_code(&out, 0, "blame again");
        assert_eq!(network_calls(&err), 0, "{store:?}:\n{err}");
    }
}

#[test]
fn checkpoints_fetched_without_transcripts_are_fetched_whole_in_the_batch() {
    // `entire-fetch --filter=blob:none` left the checkpoints in the partial cache without their
    // transcripts. blame reads every transcript of them, so the one batch fetch brings them
    // whole (one fetch, rather than one lazy fetch per transcript), and the labels are those of
    // a whole fetch.
    let env = TestEnv::new();
    let (remote, clone) = remote_and_clone(&env, Store::Refs);
    env.git_in(&remote, &["config", "uploadpack.allowFilter", "true"]);
    let fetched = env.fetch_in(&clone, &["--filter=blob:none", "origin", HEX_ID, HEX_ID_2]);
    assert_code(&fetched, 0, "filtered fetch");
    let cache = env.common_dir_in(&clone).join("entire").join("partial.git");
    assert_eq!(env.checkpoint_refs_in(&cache).len(), 2);
    assert!(env.checkpoint_refs_in(&clone).is_empty());

    let out = env
        .cmd_as(Store::Refs)
        .current_dir(&clone)
        .env("ENTIRE_LOG", "debug")
        .args(["blame", FILE, "--json"])
        .output()
        .unwrap();
    let err = assert_code(&out, 0, "blame of checkpoints in the partial cache");
    assert_eq!(labels(&parse_json(&out.stdout)), owned(ALL_LABELS), "{err}");
    assert_eq!(network_calls(&err), 2, "one listing, one fetch:\n{err}");
    for id in [HEX_ID, HEX_ID_2] {
        let spec = format!("{}:0/full.jsonl", crate::env::checkpoint_ref(id));
        assert_eq!(
            env.git_in(&clone, &["rev-parse", &spec]),
            env.git_in(&remote, &["rev-parse", &spec]),
            "{id}'s transcript is in the repository"
        );
    }
}

/// The blob of the first session's transcript of checkpoint `id`, as git names it.
fn transcript_blob(env: &TestEnv, id: &str) -> String {
    let spec = format!("{}:0/full.jsonl", crate::env::checkpoint_ref(id));
    env.git(&["rev-parse", &spec]).trim().to_owned()
}

/// Deletes loose object `blob` from the repository, as a snapshot that left it out would lack it
/// (and the writes cache, which a snapshot does not carry: the writes made it).
fn remove_loose(env: &TestEnv, blob: &str) {
    std::fs::remove_dir_all(env.repo().join(".git/entire/writes-cache")).unwrap();
    let loose = env
        .common_dir_in(env.repo())
        .join("objects")
        .join(&blob[..2])
        .join(&blob[2..]);
    std::fs::remove_file(&loose).expect("the transcript is a loose object");
}

#[test]
fn a_transcript_absent_from_the_object_store_degrades_to_commit_linked() {
    // As in a snapshot that left out large blobs (the corpus has such): the checkpoint reads,
    // its transcript does not; its lines are commit-linked and the warning names the blob.
    let env = TestEnv::new();
    history(&env, Store::Refs);
    let blob = transcript_blob(&env, HEX_ID);
    let blob = blob.as_str();
    remove_loose(&env, blob);
    let out = env.run(Store::Refs, &["blame", FILE, "--json", "--no-fetch"]);
    let err = assert_code(&out, 0, "blame with an absent transcript");
    let json = parse_json(&out.stdout);
    let expected: Vec<(u64, &str)> = ALL_LABELS
        .iter()
        .map(|&(n, l)| {
            (
                n,
                if n <= 6 && l == "agent" {
                    "commit-linked"
                } else {
                    l
                },
            )
        })
        .collect();
    assert_eq!(labels(&json), owned(&expected), "{err}");
    assert_eq!(
        json["checkpoints"][0]["sessions"][0]["transcript"],
        "absent"
    );
    assert!(
        err.contains(&format!("checkpoint {HEX_ID} session 0:")) && err.contains(blob),
        "{err}"
    );
}

#[test]
fn checkpoints_sharing_an_absent_transcript_blob_get_one_warning() {
    // Checkpoints of one transcript share its blob: when it is absent, one line says so
    // (a real file's blame repeated it once per checkpoint, 57 lines).
    let env = TestEnv::new();
    checkpoint(&env, env.repo(), Store::Refs, HEX_ID, CLAUDE, "Claude Code");
    commit(
        &env,
        AGENT_VERSION,
        &format!("add hello\n\nEntire-Checkpoint: {HEX_ID}"),
    );
    checkpoint(
        &env,
        env.repo(),
        Store::Refs,
        HEX_ID_2,
        CLAUDE,
        "Claude Code",
    );
    commit(
        &env,
        &format!("{AGENT_VERSION}// more\n"),
        &format!("more\n\nEntire-Checkpoint: {HEX_ID_2}"),
    );
    let blob = transcript_blob(&env, HEX_ID);
    assert_eq!(
        transcript_blob(&env, HEX_ID_2),
        blob,
        "one transcript, one blob"
    );
    remove_loose(&env, &blob);
    let out = env.run(Store::Refs, &["blame", FILE, "--json", "--no-fetch"]);
    let err = assert_code(&out, 0, "blame with a shared absent transcript");
    let json = parse_json(&out.stdout);
    for cp in json["checkpoints"].as_array().expect("checkpoints") {
        assert_eq!(cp["sessions"][0]["transcript"], "absent", "{json:#}");
    }
    assert_eq!(err.matches(blob.as_str()).count(), 1, "{err}");
    let line = err.lines().find(|l| l.contains(&blob)).unwrap();
    for id in [HEX_ID, HEX_ID_2] {
        assert!(
            line.contains(&format!("checkpoint {id} session 0")),
            "{err}"
        );
    }
}

#[test]
fn without_fetching_a_missing_checkpoint_degrades_to_commit_linked() {
    let env = TestEnv::new();
    let (_, clone) = remote_and_clone(&env, Store::Refs);
    let out = env.run_in(
        Store::Refs,
        &clone,
        &["blame", FILE, "--json", "--no-fetch"],
    );
    let err = assert_code(&out, 0, "blame --no-fetch");
    let json = parse_json(&out.stdout);
    assert_eq!(json["counts"]["agent"], 0);
    assert_eq!(json["counts"]["commit_linked"], 7);
    assert_eq!(json["checkpoints"][0]["status"], "not_found");
    assert!(
        err.contains(&format!("checkpoint {HEX_ID}: not found locally")),
        "{err}"
    );
    assert!(env.checkpoint_refs_in(&clone).is_empty(), "nothing fetched");
}

#[test]
fn bad_input_is_a_clear_error() {
    let env = TestEnv::new();
    history(&env, Store::Refs);
    let usage = |args: &[&str], needle: &str| {
        let out = env.run(Store::Refs, args);
        let err = assert_code(&out, 2, &args.join(" "));
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    };
    usage(
        &["blame", "nope.go"],
        "nope.go: no such file in the working tree",
    );
    usage(&["blame", FILE, "HEAD~3"], "no such file in HEAD~3");
    usage(&["blame", FILE, "-L", "50,60"], "has only 8 lines");
    usage(&["blame", FILE, "-L", "x"], "expected <start>,<end>");
    usage(&["blame", FILE, "-L", "-3"], "expected <start>,<end>");
    usage(&["blame", FILE, "no-such-rev"], "git blame src/hello.go");
    usage(&["blame", FILE, "--", "-x"], "");
    usage(
        &["why", &format!("{FILE}:99")],
        "line 99 is out of range (the file has 8 lines)",
    );
    usage(&["why", FILE], "expected FILE:LINE");
    usage(&["why", &format!("{FILE}:zero")], "is not a line number");
    env.write_file("bin.dat", b"\x00\x01\x02\nmore\n");
    env.git(&["add", "bin.dat"]);
    env.git(&["commit", "-q", "-m", "binary"]);
    usage(&["blame", "bin.dat"], "bin.dat: binary file");
}

#[test]
fn a_checkpoint_whose_session_directory_is_missing_fails_after_the_output() {
    for store in Store::ALL {
        let env = TestEnv::new();
        let prefix = crate::env::tree_prefix(store, HEX_ID);
        let root = format!(
            "{{\"checkpoint_id\":\"{HEX_ID}\",\"strategy\":\"manual-commit\",\"checkpoints_count\":1,\"files_touched\":[],\"sessions\":[{{\"metadata\":\"{prefix}/0/metadata.json\"}},{{\"metadata\":\"{prefix}/7/metadata.json\",\"transcript\":\"{prefix}/7/full.jsonl\",\"content_hash\":\"{prefix}/7/content_hash.txt\",\"prompt\":\"{prefix}/7/prompt.txt\"}}]}}\n"
        );
        hand_made(&env, store, HEX_ID, Some(root.as_bytes()));
        commit(
            &env,
            AGENT_VERSION,
            &format!("add\n\nEntire-Checkpoint: {HEX_ID}"),
        );
        // A human line too, which is still labelled.
        commit(&env, &format!("{AGENT_VERSION}// human note\n"), "note");
        let out = env.run(store, &["blame", FILE]);
        let err = assert_code(&out, 1, "blame with a broken checkpoint");
        assert!(
            err.contains("7/metadata.json is missing"),
            "{store:?}: {err}"
        );
        let text = stdout(&out);
        assert_eq!(text.lines().count(), 7, "{text}");
        assert!(text.lines().last().unwrap().contains(" human "), "{text}");
        assert!(stderr(&out).contains("its lines are commit-linked"));
    }
}

/// The entries of the writes cache, as files on disk.
fn cache_entries(env: &TestEnv) -> Vec<std::path::PathBuf> {
    cache_entries_in(env.repo())
}

/// The entries of the writes cache of the repository at `dir` (not the list of checkpoints a
/// fetch found whole, `complete`).
fn cache_entries_in(dir: &Path) -> Vec<std::path::PathBuf> {
    let dir = dir.join(".git/entire/writes-cache");
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    entries.retain(|p| !p.ends_with("complete"));
    entries.sort();
    entries
}

/// The JSON header of a writes cache entry: its first line (docs/format.md, "The writes cache").
fn entry_header(entry: &[u8]) -> Value {
    let end = entry
        .iter()
        .position(|&b| b == b'\n')
        .expect("a header line");
    serde_json::from_slice(&entry[..end]).unwrap()
}

#[test]
fn a_second_blame_reads_the_writes_cache_and_a_damaged_entry_is_ignored() {
    for store in Store::ALL {
        let env = TestEnv::new();
        history(&env, store);
        // The writes made the entries; blame makes them again when they are gone.
        std::fs::remove_dir_all(env.repo().join(".git/entire/writes-cache")).unwrap();
        let first = env.ok_json(store, &["blame", FILE, "--json"]);
        assert_eq!(labels(&first), owned(ALL_LABELS), "{store:?}: {first:#}");
        // One entry per session transcript read: the Claude and the Codex session.
        let entries = cache_entries(&env);
        assert_eq!(entries.len(), 2, "{store:?}: {entries:?}");
        let cached = entry_header(&std::fs::read(&entries[0]).unwrap());
        assert!(cached["writes"].is_object(), "{cached:#}");

        let second = env.ok_json(store, &["blame", FILE, "--json"]);
        assert_eq!(second, first, "{store:?}");

        // The second blame took its answer from the cache: entries whose recorded writes are
        // emptied make every agent line commit-linked.
        let originals: Vec<Vec<u8>> = entries.iter().map(|e| std::fs::read(e).unwrap()).collect();
        for (entry, bytes) in entries.iter().zip(&originals) {
            let mut doctored = entry_header(bytes);
            doctored["writes"]["writes"] = serde_json::json!([]);
            let mut doctored = serde_json::to_vec(&doctored).unwrap();
            doctored.push(b'\n');
            std::fs::write(entry, doctored).unwrap();
        }
        let from_cache = env.ok_json(store, &["blame", FILE, "--json"]);
        assert_eq!(
            from_cache["counts"]["agent"], 0,
            "{store:?}: {from_cache:#}"
        );
        for (entry, bytes) in entries.iter().zip(&originals) {
            std::fs::write(entry, bytes).unwrap();
        }

        // A torn entry, and one that is not JSON at all: both ignored, the answer the same,
        // and the entries rewritten whole.
        let whole = std::fs::read(&entries[0]).unwrap();
        std::fs::write(&entries[0], &whole[..whole.len() / 2]).unwrap();
        std::fs::write(&entries[1], b"\x00\xffnot json").unwrap();
        let third = env.ok_json(store, &["blame", FILE, "--json"]);
        assert_eq!(third, first, "{store:?}");
        assert_eq!(std::fs::read(&entries[0]).unwrap(), whole, "{store:?}");
        let rewritten = entry_header(&std::fs::read(&entries[1]).unwrap());
        assert!(rewritten["writes"].is_object(), "{rewritten:#}");

        // Removing the cache changes nothing but the time taken.
        std::fs::remove_dir_all(env.repo().join(".git/entire/writes-cache")).unwrap();
        assert_eq!(env.ok_json(store, &["blame", FILE, "--json"]), first);
    }
}

/// The blob of `transcript` as stored (no secret in it: redaction leaves it as it is).
fn blob_of(env: &TestEnv, transcript: &str) -> String {
    let file = env.input_file("blob-of.jsonl", transcript.as_bytes());
    env.git(&["hash-object", file.to_str().unwrap()])
        .trim()
        .to_owned()
}

/// Deletes the loose objects of the transcripts of [`history`] from the repository at `dir`:
/// a blame that labels the agent's lines after that read none of them.
fn remove_transcripts(env: &TestEnv, dir: &Path) {
    for transcript in [CLAUDE, CODEX] {
        let blob = blob_of(env, transcript);
        let loose = env
            .common_dir_in(dir)
            .join("objects")
            .join(&blob[..2])
            .join(&blob[2..]);
        std::fs::remove_file(&loose).expect("the transcript is a loose object");
    }
}

/// Checks that `blame --no-fetch` of [`FILE`] in the repository at `dir` (`what`) exits 0 and
/// labels every line of [`history`] as when it read the transcripts; returns its JSON.
fn blamed_whole(env: &TestEnv, store: Store, dir: &Path, what: &str) -> serde_json::Value {
    let out = env.run_in(store, dir, &["blame", FILE, "--json", "--no-fetch"]);
    let err = assert_code(&out, 0, what);
    let json = parse_json(&out.stdout);
    assert_eq!(labels(&json), owned(ALL_LABELS), "{store:?}, {what}: {err}");
    json
}

/// Deletes the transcripts of [`history`] from the repository at `dir` ([`remove_transcripts`]),
/// then checks that `blame` there labels every line as when it read them, with no warning.
fn blamed_without_transcripts(env: &TestEnv, store: Store, dir: &Path) {
    remove_transcripts(env, dir);
    let json = blamed_whole(env, store, dir, "blame without the transcripts");
    assert_eq!(
        json["warnings"],
        serde_json::json!([]),
        "{store:?}: {json:#}"
    );
}

#[test]
fn a_written_checkpoint_is_blamed_without_reading_its_transcript() {
    // The write had the transcript in hand and kept what blame needs of it: the first blame
    // costs what the next does.
    for store in Store::ALL {
        let env = TestEnv::new();
        history(&env, store);
        assert_eq!(
            cache_entries(&env).len(),
            2,
            "{store:?}: one entry per session"
        );
        blamed_without_transcripts(&env, store, env.repo());
    }
}

#[test]
fn fetched_checkpoints_are_blamed_without_reading_their_transcripts() {
    for store in Store::ALL {
        let env = TestEnv::new();
        let (_, clone) = remote_and_clone(&env, store);
        let out = env.fetch_in(&clone, &["origin", HEX_ID, HEX_ID_2]);
        assert_code(&out, 0, "entire-fetch");
        blamed_without_transcripts(&env, store, &clone);
    }
}

#[test]
fn entire_fetch_all_fills_the_cache_for_the_v1_branch_a_git_fetch_brought() {
    // A full `git clone` brings the v1 branch as a remote-tracking branch: its checkpoints are
    // here without any fetch of ours, and `entire-fetch --all` makes their entries.
    let env = TestEnv::new();
    let clone = v1_fetched_by_git_then_all(&env);
    blamed_without_transcripts(&env, Store::Branch, &clone);
}

/// A clone of [`remote_and_clone`]'s v1 remote whose branch a `git fetch` brought, then
/// `entire-fetch --all` run there.
fn v1_fetched_by_git_then_all(env: &TestEnv) -> std::path::PathBuf {
    let (_, clone) = remote_and_clone(env, Store::Branch);
    let spec = "entire/checkpoints/v1:refs/remotes/origin/entire/checkpoints/v1";
    env.git_in(&clone, &["fetch", "-q", "origin", spec]);
    assert_code(&env.fetch_in(&clone, &["--all", "origin"]), 0, "--all");
    clone
}

#[test]
fn entire_fetch_all_reads_a_checkpoint_found_whole_once() {
    // `--all` after `--all` (a fetch wrapper's every run) does not read every checkpoint here
    // again: an entry deleted after the first is left to the first blame, which makes it.
    let env = TestEnv::new();
    let clone = v1_fetched_by_git_then_all(&env);
    let entries = cache_entries_in(&clone);
    assert_eq!(entries.len(), 2, "one entry per session");
    std::fs::remove_file(&entries[0]).unwrap();
    assert_code(
        &env.fetch_in(&clone, &["--all", "origin"]),
        0,
        "--all again",
    );
    assert_eq!(cache_entries_in(&clone).len(), 1, "not made again by --all");
    blamed_whole(&env, Store::Branch, &clone, "blame");
    assert_eq!(cache_entries_in(&clone).len(), 2, "made again by blame");
}

#[test]
fn a_writes_cache_that_cannot_be_written_fails_neither_the_write_nor_the_fetch() {
    let env = TestEnv::new();
    let (_, clone) = remote_and_clone(&env, Store::Refs);
    // A file where the cache's directory goes: no entry can be made.
    let entire = env.common_dir_in(&clone).join("entire");
    std::fs::create_dir_all(&entire).unwrap();
    std::fs::write(entire.join("writes-cache"), b"not a directory").unwrap();
    let out = env.fetch_in(&clone, &["origin", HEX_ID, HEX_ID_2]);
    assert_code(&out, 0, "entire-fetch with an unwritable writes cache");
    assert_eq!(env.checkpoint_refs_in(&clone).len(), 2);
    blamed_whole(
        &env,
        Store::Refs,
        &clone,
        "blame with an unwritable writes cache",
    );
    // `checkpoint` asserts that the write succeeds.
    checkpoint(
        &env,
        &clone,
        Store::Refs,
        "abcdef012345",
        CLAUDE,
        "Claude Code",
    );
}

/// A teammate's blobless clone (`git clone --filter=blob:none`) blames as a full clone does,
/// its checkpoints' missing documents and transcripts fetched in one batch, not per checkpoint.
fn a_partial_clone_blames_with_one_fetch_of_the_missing_objects(store: Store) {
    let env = TestEnv::new();
    let (remote, _) = remote_and_clone(&env, store);
    env.git_in(&remote, &["config", "uploadpack.allowFilter", "true"]);
    let url = format!("file://{}", remote.display());
    let dir = env.root().join("blobless");
    let dir_arg = dir.to_str().unwrap().to_owned();
    env.git_in(
        env.root(),
        &["clone", "-q", "--filter=blob:none", &url, &dir_arg],
    );
    let out = env
        .cmd_as(store)
        .current_dir(&dir)
        .env("ENTIRE_LOG", "debug")
        .args(["blame", FILE, "--json"])
        .output()
        .unwrap();
    let err = assert_code(&out, 0, "blame in a blobless clone");
    assert_eq!(labels(&parse_json(&out.stdout)), owned(ALL_LABELS), "{err}");
    let fetches = err
        .lines()
        .filter(|l| l.contains("run git fetch ") && l.contains("--filter=blob:none"))
        .count();
    assert_eq!(fetches, 1, "one fetch of the missing objects:\n{err}");
}

both_stores! {
    a_partial_clone_blames => a_partial_clone_blames_with_one_fetch_of_the_missing_objects;
}

#[test]
fn a_renamed_file_is_blamed_through_the_lines_written_to_its_old_name() {
    // The sessions wrote src/hello.go; the file is src/greet.go now. From the writes cache the
    // writes made, and again from the transcripts, the lines are found under the old name.
    for store in Store::ALL {
        let env = TestEnv::new();
        history(&env, store);
        env.git(&["mv", FILE, "src/greet.go"]);
        env.git(&["commit", "-q", "-m", "rename"]);
        assert!(!cache_entries_in(env.repo()).is_empty(), "{store:?}");
        for what in ["from the writes cache", "from the transcripts"] {
            let out = env.run(store, &["blame", "src/greet.go", "--json", "--no-fetch"]);
            let err = assert_code(&out, 0, what);
            let json = parse_json(&out.stdout);
            assert_eq!(labels(&json), owned(ALL_LABELS), "{store:?}, {what}: {err}");
            std::fs::remove_dir_all(env.repo().join(".git/entire/writes-cache")).unwrap();
        }
    }
}
