//! Layouts the reference shipped and rolled back, on a real remote read from a fresh clone with
//! default settings: checkpoints v2 (`refs/entire/checkpoints/v2/main` with the documents,
//! raw transcripts chunked on `v2/full/current` and in an archived generation under the older
//! file names) and the v1 store as the unsharded ref `refs/entire/checkpoints/v1`. Every read
//! finds them, nothing is pushed, deleted or rewritten; and bad input (a chunk missing, a
//! generation that is not a commit, an entry that is not a checkpoint) is named while the rest
//! stays readable.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{assert_code, parse_json, stderr, stdout, TestEnv};
use crate::fixtures::{
    blob, commit_tree, root_metadata_json, session_metadata_json, tree, write_node, Node,
};

/// In the current generation, its transcript in two chunks.
const CURRENT: &str = "c0ffee000001";
/// In an archived generation, under the file names of older generations.
const ARCHIVED: &str = "c0ffee000002";
/// On the unsharded v1 ref.
const V1_REF: &str = "c0ffee000003";
/// Its transcript lacks a chunk.
const GAPPED: &str = "c0ffee000004";
/// On v2's main, its transcript in no generation.
const NO_RAW: &str = "c0ffee000005";

/// A Claude Code transcript that writes `text` to `file`, in two lines (to chunk).
fn transcript(file: &str, text: &str) -> (String, String) {
    let prompt = format!(
        r#"{{"type":"user","message":{{"role":"user","content":"write {file}"}},"timestamp":"2026-04-16T22:00:00Z"}}"#
    );
    let write = serde_json::json!({
        "type": "assistant",
        "timestamp": "2026-04-16T22:00:05Z",
        "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t", "name": "Write",
            "input": {"file_path": format!("/home/dev/proj/{file}"), "content": text}}]},
    });
    (prompt, write.to_string())
}

/// The checkpoint's documents at `<id[:2]>/<id[2:]>/` of a v1-layout tree (v2's main, or the
/// unsharded v1 ref, which also holds the transcript when `full` is given).
fn documents(id: &str, full: Option<&str>) -> Node {
    let prefix = format!("/{}/{}", &id[..2], &id[2..]);
    let mut session = vec![
        (
            "metadata.json",
            blob(session_metadata_json(id, &format!("sess-{id}")).as_bytes()),
        ),
        ("prompt.txt", blob(b"write it")),
        ("transcript.jsonl", blob(b"{\"v\":1,\"type\":\"user\"}\n")),
    ];
    if let Some(full) = full {
        session.push(("full.jsonl", blob(full.as_bytes())));
    }
    tree(vec![
        (
            "metadata.json",
            blob(root_metadata_json(id, &prefix).as_bytes()),
        ),
        ("0", tree(session)),
    ])
}

/// A tree holding `entries` at `<id[:2]>/<id[2:]>/` each.
fn sharded(entries: Vec<(&str, Node)>) -> Node {
    let mut shards: Vec<(String, Vec<(String, Node)>)> = Vec::new();
    for (id, node) in entries {
        let (head, rest) = id.split_at(2);
        match shards.iter_mut().find(|(h, _)| h == head) {
            Some((_, v)) => v.push((rest.to_owned(), node)),
            None => shards.push((head.to_owned(), vec![(rest.to_owned(), node)])),
        }
    }
    Node::Tree(
        shards
            .into_iter()
            .map(|(h, v)| (h, Node::Tree(v)))
            .collect(),
    )
}

/// Points `name` in `env`'s repository at a new orphan commit of `node`.
fn archived_ref(env: &TestEnv, name: &str, node: &Node, message: &str) {
    let tree = write_node(env, node);
    let commit = commit_tree(env, &tree, None, message);
    env.git(&["update-ref", name, &commit]);
}

/// The code commits (one file each, as its checkpoint's transcript wrote it, linked by a
/// trailer), the archived layouts as the reference left them, pushed to a bare `origin`
/// without any v1 branch or checkpoint ref; returns origin and a fresh clone of it.
fn published(env: &TestEnv, extra: impl FnOnce(&TestEnv)) -> (PathBuf, PathBuf) {
    let origin = env.bare_remote("origin");
    let mut v2_main = Vec::new();
    let mut current = Vec::new();
    let mut archived = Vec::new();
    let mut v1 = Vec::new();
    for id in [CURRENT, ARCHIVED, V1_REF, GAPPED] {
        let file = format!("notes/{id}.txt");
        let text = format!("written for {id}\nsecond line of {id}\n");
        let (prompt, write) = transcript(&file, &text);
        let joined = format!("{prompt}\n{write}\n");
        let hash = format!("sha256:{}", crate::env::sha256_hex(joined.as_bytes()));
        match id {
            CURRENT | GAPPED => {
                v2_main.push((id, documents(id, None)));
                let mut chunks = vec![
                    ("raw_transcript", blob(prompt.as_bytes())),
                    ("raw_transcript_hash.txt", blob(hash.as_bytes())),
                ];
                // Chunk 1 of GAPPED is missing: only chunk 2 is there.
                let second = if id == GAPPED {
                    "raw_transcript.002"
                } else {
                    "raw_transcript.001"
                };
                chunks.push((second, blob(format!("{write}\n").as_bytes())));
                current.push((id, tree(vec![("0", tree(chunks))])));
            }
            ARCHIVED => {
                v2_main.push((id, documents(id, None)));
                let session = tree(vec![
                    ("full.jsonl", blob(joined.as_bytes())),
                    ("content_hash.txt", blob(hash.as_bytes())),
                ]);
                archived.push((id, tree(vec![("0", session)])));
            }
            _ => v1.push((id, documents(id, Some(&joined)))),
        }
        env.write_file(&file, format!("{text}edited by hand\n").as_bytes());
        env.git(&["add", &file]);
        env.git(&[
            "commit",
            "-q",
            "-m",
            &format!("work on {id}\n\nEntire-Checkpoint: {id}"),
        ]);
    }
    v2_main.push((NO_RAW, documents(NO_RAW, None)));
    // An entry of v2's main that is not a checkpoint.
    v2_main.push((
        "bad0000000ff",
        tree(vec![("notes.txt", blob(b"no checkpoint"))]),
    ));
    archived_ref(
        env,
        "refs/entire/checkpoints/v2/main",
        &sharded(v2_main),
        "Checkpoint: v2\n",
    );
    archived_ref(
        env,
        "refs/entire/checkpoints/v2/full/current",
        &sharded(current),
        "Checkpoint: current\n",
    );
    let mut generation = match sharded(archived) {
        Node::Tree(entries) => entries,
        Node::Blob(_) => unreachable!(),
    };
    generation.push(("generation.json".to_owned(), blob(b"{\"checkpoints\":1}\n")));
    archived_ref(
        env,
        "refs/entire/checkpoints/v2/full/0000000000001",
        &Node::Tree(generation),
        "Archive generation 1\n",
    );
    archived_ref(
        env,
        "refs/entire/checkpoints/v1",
        &sharded(v1),
        "Checkpoint: v1\n",
    );
    extra(env);
    env.git(&[
        "push",
        "-q",
        "origin",
        "main",
        "refs/entire/*:refs/entire/*",
    ]);
    let clone = env.clone_of(&origin, "clone", &[]);
    (origin, clone)
}

/// The `trailer-dangling` findings of a `doctor --json` document.
fn dangling(doctor: &Value) -> Vec<Value> {
    doctor["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == "trailer-dangling")
        .cloned()
        .collect()
}

/// Every ref of `dir` under `refs/`, with its target.
fn refs_of(env: &TestEnv, dir: &Path) -> String {
    env.git_in(dir, &["for-each-ref", "--format=%(objectname) %(refname)"])
}

#[test]
fn a_fresh_clone_reads_checkpoints_v2_and_the_unsharded_v1_ref_and_writes_none_of_them() {
    let env = TestEnv::new();
    let (origin, clone) = published(&env, |_| {});
    let remote_refs = refs_of(&env, &origin);
    let run = |args: &[&str]| env.run_primary_in(None, &clone, args);

    // git entire-fetch finds them on the remote (and brings the copies).
    let out = env.fetch_in(&clone, &["origin", CURRENT, V1_REF, "--json"]);
    assert_code(&out, 0, "entire-fetch of archived checkpoints");
    let fetched = parse_json(&out.stdout);
    let statuses: Vec<&str> = fetched
        .as_array()
        .unwrap_or_else(|| panic!("{fetched}"))
        .iter()
        .map(|o| o["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses, ["fetched", "fetched"], "{fetched}");

    // show by commit and by ID; the transcript joined from its chunks, in whichever generation.
    for id in [CURRENT, ARCHIVED, V1_REF] {
        let out = run(&["show", id, "--json"]);
        assert_code(&out, 0, &format!("show {id}"));
        let doc = parse_json(&out.stdout);
        assert_eq!(doc["checkpoint_id"], id);
        let out = run(&["show", id, "--transcript"]);
        let text = stdout(&out);
        assert_code(&out, 0, &format!("show {id} --transcript"));
        assert!(
            text.contains("write notes/") && text.contains("\"Write\""),
            "{id}: {text}"
        );
        assert_eq!(text.lines().count(), 2, "{id}: both chunks, joined: {text}");
    }
    let human = stdout(&run(&["show", CURRENT]));
    assert!(
        human.contains(
            "  store    checkpoints v2, read-only (refs/entire-remote/origin/archive/v2/main)"
        ),
        "{human}"
    );
    let err = assert_code(
        &run(&["show", NO_RAW, "--transcript"]),
        1,
        "no raw transcript",
    );
    assert!(
        err.contains(&format!("checkpoint {NO_RAW}: session 0 has no transcript")),
        "{err}"
    );
    let hash = stdout(&run(&["cat", ARCHIVED, "0/content_hash.txt"]));
    assert!(hash.starts_with("sha256:"), "{hash}");
    assert_code(&run(&["log", CURRENT]), 0, "log of a v2 checkpoint");

    // list <range>: every linked commit found; blame: the agent's lines, exit 0.
    let range = parse_json(&run(&["list", "main", "--json"]).stdout);
    let found: Vec<(String, bool)> = range["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["checkpoints"].as_array().unwrap().clone())
        .map(|cp| {
            (
                cp["checkpoint_id"].as_str().unwrap().to_owned(),
                cp["found"].as_bool().unwrap(),
            )
        })
        .collect();
    for id in [CURRENT, ARCHIVED, V1_REF, GAPPED] {
        assert!(found.contains(&(id.to_owned(), true)), "{id} in {found:?}");
    }
    for id in [CURRENT, ARCHIVED, V1_REF] {
        let out = run(&["blame", &format!("notes/{id}.txt"), "--json"]);
        let err = assert_code(&out, 0, &format!("blame of {id}'s file"));
        let doc = parse_json(&out.stdout);
        let labels: Vec<&str> = doc["lines"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["attribution"].as_str().unwrap())
            .collect();
        assert_eq!(labels, ["agent", "agent", "commit-linked"], "{id}: {err}");
    }
    let why = parse_json(&run(&["why", &format!("notes/{CURRENT}.txt:1"), "--json"]).stdout);
    assert_eq!(
        why["agent_write"]["prompt"]["text"],
        format!("write notes/{CURRENT}.txt")
    );

    // list --remote lists them (and the entry that is not a checkpoint, as unreadable).
    let out = run(&["list", "--remote", "--json"]);
    let listed: Vec<Value> = parse_json(&out.stdout).as_array().unwrap().clone();
    for id in [CURRENT, ARCHIVED, V1_REF, GAPPED, NO_RAW] {
        assert!(
            listed
                .iter()
                .any(|e| e["checkpoint_id"] == id && e.get("error").is_none()),
            "{id}: {listed:?}"
        );
    }
    let bad = listed
        .iter()
        .find(|e| e["checkpoint_id"] == "bad0000000ff")
        .expect("the bad entry is listed");
    assert!(
        bad["error"].as_str().unwrap().contains("not a checkpoint"),
        "{bad}"
    );

    // doctor: no link dangles.
    let dangling = dangling(&parse_json(&run(&["doctor", "--json"]).stdout));
    assert!(dangling.is_empty(), "{dangling:?}");

    // Nothing of the reference's was written, here or on the remote; the copies are ours.
    assert_eq!(
        refs_of(&env, &origin),
        remote_refs,
        "the remote is untouched"
    );
    let here = refs_of(&env, &clone);
    assert!(!here.contains(" refs/entire/checkpoints/"), "{here}");
    assert!(
        here.contains(" refs/entire-remote/origin/archive/v2/full/0000000000001"),
        "{here}"
    );
}

#[test]
fn bad_archived_data_is_named_and_the_rest_stays_readable() {
    let env = TestEnv::new();
    let (_, clone) = published(&env, |env| {
        // A generation ref that is not a commit.
        let b = env.git_stdin(&["hash-object", "-w", "--stdin"], b"not a generation");
        env.git(&[
            "update-ref",
            "refs/entire/checkpoints/v2/full/0000000000002",
            &b,
        ]);
    });
    let run = |args: &[&str]| env.run_primary_in(None, &clone, args);
    // A chunk missing from the middle: named, with the checkpoint and the file.
    let out = run(&["show", GAPPED, "--transcript"]);
    let err = assert_code(&out, 1, "a transcript missing a chunk");
    assert!(
        err.contains(GAPPED) && err.contains("0/full.jsonl") && err.contains("raw_transcript.001"),
        "{err}"
    );
    // The generation that is not a commit does not stop the others; a transcript that only it
    // could hold names it.
    let out = run(&["show", ARCHIVED, "--transcript"]);
    assert_code(&out, 0, "the archived generation is still read");
    let out = run(&["show", NO_RAW, "--transcript"]);
    let err = assert_code(&out, 1, "a transcript only a broken generation could hold");
    assert!(
        err.contains(NO_RAW)
            && err.contains(
                "refs/entire-remote/origin/archive/v2/full/0000000000002 is not a commit"
            ),
        "{err}"
    );
    let blamed = run(&["blame", &format!("notes/{GAPPED}.txt"), "--json"]);
    let err = assert_code(&blamed, 1, "blame of a file whose transcript lacks a chunk");
    assert!(err.contains("raw_transcript.001"), "{err}");
    assert!(stderr(&blamed).contains(GAPPED));
}

#[test]
fn migrate_imports_the_archived_layouts_merged_by_session_and_says_from_where() {
    let env = TestEnv::new();
    let (origin, clone) = published(&env, |_| {});
    let remote_refs = refs_of(&env, &origin);
    // A session already under git-refs for ARCHIVED: the import merges beside it.
    let t = env.input_file(
        "other.jsonl",
        b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n",
    );
    env.write(crate::env::Store::Refs, "already-here")
        .id(ARCHIVED)
        .transcript(&t)
        .in_dir(&clone)
        .ok();
    let out = env.run_primary_in(None, &clone, &["migrate", "--json"]);
    // GAPPED cannot be imported (a chunk is missing): named, the rest migrated, exit 1.
    let err = assert_code(
        &out,
        1,
        "migrate with one checkpoint that cannot be imported",
    );
    let doc = parse_json(&out.stdout);
    crate::schemas::assert_valid("migrate.json", "migrate of the archived layouts", &doc);
    // GAPPED, and the entry that is not a checkpoint: named with their ref and path.
    let skipped: Vec<(&str, &str)> = doc["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["ref"].as_str().unwrap(), s["reason"].as_str().unwrap()))
        .collect();
    assert_eq!(skipped.len(), 2, "{doc:#}");
    let main = "refs/entire-remote/origin/archive/v2/main";
    assert!(
        skipped
            .iter()
            .any(|(r, why)| *r == format!("{main}:c0/ffee000004")
                && why.contains("raw_transcript.001")),
        "{skipped:?} {err}"
    );
    assert!(
        skipped
            .iter()
            .any(|(r, why)| *r == format!("{main}:ba/d0000000ff") && why.contains("metadata.json")),
        "{skipped:?}"
    );
    let sources: Vec<(&str, &str)> = doc["sources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["ref"].as_str().unwrap(), s["layout"].as_str().unwrap()))
        .collect();
    assert_eq!(
        sources,
        [
            ("refs/entire-remote/origin/archive/v1", "v1-ref"),
            (
                "refs/entire-remote/origin/archive/v2/main",
                "checkpoints-v2"
            ),
        ]
    );
    let v2 = &doc["sources"][1];
    let from: Vec<(&str, &str)> = v2["transcripts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["checkpoint_id"].as_str().unwrap(),
                t["from"].as_str().unwrap(),
            )
        })
        .collect();
    assert!(
        from.contains(&(CURRENT, "refs/entire-remote/origin/archive/v2/full/current")),
        "{from:?}"
    );
    assert!(
        from.contains(&(
            ARCHIVED,
            "refs/entire-remote/origin/archive/v2/full/0000000000001"
        )),
        "{from:?}"
    );
    for id in [CURRENT, ARCHIVED, V1_REF] {
        let refs = env.git_in(
            &clone,
            &[
                "for-each-ref",
                "--format=%(refname)",
                &format!("refs/entire/checkpoints/{}/{id}", &id[10..]),
            ],
        );
        assert!(!refs.trim().is_empty(), "{id} migrated to its ref");
    }
    // The imported transcript is the raw one, joined; beside it, the session that was there.
    let refs_store = |args: &[&str]| env.ok_primary_in(Some(crate::env::Store::Refs), &clone, args);
    let full = refs_store(&["cat", CURRENT, "0/full.jsonl"]);
    assert_eq!(full.lines().count(), 2, "{full}");
    let archived = parse_json(refs_store(&["show", ARCHIVED, "--json"]).as_bytes());
    assert_eq!(archived["store"], "git-refs");
    let sessions: Vec<&str> = archived["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["session_id"].as_str().unwrap())
        .collect();
    assert_eq!(sessions.len(), 2, "merged by session: {sessions:?}");
    assert!(
        sessions.contains(&"already-here")
            && sessions.contains(&format!("sess-{ARCHIVED}").as_str())
    );
    // Again: nothing new; the remote never touched.
    let again = parse_json(
        &env.run_primary_in(None, &clone, &["migrate", "--json"])
            .stdout,
    );
    assert_eq!(again["migrated"], serde_json::json!([]), "{again:#}");
    assert_eq!(refs_of(&env, &origin), remote_refs);
}

/// The reference's "checkpoints v1.1": the v1 tree under `refs/entire/checkpoints/v1.1`, the
/// only checkpoint ref of a remote. A fresh clone reads it as it reads the unsharded v1 ref:
/// `show`, `list <range>` and `migrate` find the checkpoint, `doctor` calls no trailer dangling.
#[test]
fn a_remote_holding_only_the_v1_1_ref_is_read_like_the_unsharded_v1_ref() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    let id = "c0ffee0000a1";
    let file = format!("notes/{id}.txt");
    let text = format!("written for {id}\n");
    let (prompt, write) = transcript(&file, &text);
    let joined = format!("{prompt}\n{write}\n");
    archived_ref(
        &env,
        "refs/entire/checkpoints/v1.1",
        &sharded(vec![(id, documents(id, Some(&joined)))]),
        "Checkpoint: v1.1\n",
    );
    env.write_file(&file, text.as_bytes());
    env.git(&["add", &file]);
    env.git(&[
        "commit",
        "-q",
        "-m",
        &format!("work on {id}\n\nEntire-Checkpoint: {id}"),
    ]);
    env.git(&[
        "push",
        "-q",
        "origin",
        "main",
        "refs/entire/*:refs/entire/*",
    ]);
    let remote_refs = refs_of(&env, &origin);
    let clone = env.clone_of(&origin, "clone", &[]);
    let run = |args: &[&str]| env.run_primary_in(None, &clone, args);

    let out = run(&["show", "HEAD", "--json"]);
    assert_code(&out, 0, "show HEAD");
    assert_eq!(parse_json(&out.stdout)["checkpoint_id"], id);
    let human = stdout(&run(&["show", id]));
    assert!(
        human.contains("the v1 store as the v1.1 ref, read-only"),
        "{human}"
    );
    let text = stdout(&run(&["show", id, "--transcript"]));
    assert!(text.contains("\"Write\""), "{text}");
    let range = parse_json(&run(&["list", "main", "--json"]).stdout);
    assert_eq!(
        range["commits"][0]["checkpoints"][0]["found"], true,
        "{range}"
    );
    let dangling = dangling(&parse_json(&run(&["doctor", "--json"]).stdout));
    assert!(dangling.is_empty(), "{dangling:?}");
    let out = run(&["migrate", "--json"]);
    assert_code(&out, 0, "migrate");
    assert!(
        !env.git_in(
            &clone,
            &[
                "for-each-ref",
                &format!("refs/entire/checkpoints/{}/{id}", &id[10..])
            ]
        )
        .trim()
        .is_empty(),
        "migrated into git-refs"
    );
    assert_eq!(
        refs_of(&env, &origin),
        remote_refs,
        "nothing written to the remote"
    );
}

/// A remote that cannot send one of the archived refs (an object of `v2/full/current` is gone
/// from its store, so its `upload-pack` dies): the on-demand fetch, which asks for all of them
/// at once, falls back to one ref at a time, reads what the others hold and names the one the
/// server could not send.
#[test]
fn one_archived_ref_the_server_cannot_send_sinks_no_other() {
    let env = TestEnv::new();
    let (origin, _) = published(&env, |_| {});
    // Break `v2/full/current` on the server: the blob of a raw transcript chunk, gone.
    let spec = format!(
        "refs/entire/checkpoints/v2/full/current:{}/{}/0/raw_transcript",
        &CURRENT[..2],
        &CURRENT[2..]
    );
    let blob = env.git_in(&origin, &["rev-parse", &spec]);
    let blob = blob.trim();
    env.git_in(&origin, &["repack", "-a", "-d", "-q"]);
    env.git_in(&origin, &["cat-file", "-e", blob]);
    // Unpack everything, then drop that one object.
    let packs = origin.join("objects/pack");
    for entry in std::fs::read_dir(&packs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "pack") {
            let pack = std::fs::read(&path).unwrap();
            std::fs::remove_file(&path).unwrap();
            std::fs::remove_file(path.with_extension("idx")).unwrap();
            env.git_stdin_in(&origin, &["unpack-objects", "-q"], &pack);
        }
    }
    std::fs::remove_file(origin.join(format!("objects/{}/{}", &blob[..2], &blob[2..]))).unwrap();
    // A clone over the wire (a local clone would share every object, and git fetches nothing
    // it already has).
    let clone = env.root().join("wire");
    let (url, dir_arg) = (
        format!("file://{}", origin.display()),
        clone.to_str().unwrap().to_owned(),
    );
    env.git_in(env.root(), &["clone", "-q", &url, &dir_arg]);

    let out = env
        .cmd_primary(None)
        .current_dir(&clone)
        .env("ENTIRE_LOG", "debug")
        .args(["show", V1_REF, "--json"])
        .output()
        .unwrap();
    let err = assert_code(&out, 0, "show of a checkpoint on the servable v1 ref");
    assert_eq!(parse_json(&out.stdout)["checkpoint_id"], V1_REF);
    assert!(
        err.contains("refs/entire/checkpoints/v2/full/current"),
        "the ref the server could not send is named: {err}"
    );
    let out = env.run_primary_in(None, &clone, &["show", ARCHIVED, "--json"]);
    assert_code(&out, 0, "a checkpoint of v2/main, servable");
}
