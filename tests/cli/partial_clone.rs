//! A teammate's partial clone (`git clone --filter=blob:none`, `--filter=tree:0`) reads the
//! checkpoint behind every commit: the objects a read needs are fetched from the remote by ID,
//! in one batch, never the whole store (docs/how-it-works.md, "Partial clones").

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{assert_code, network_calls, parse_json, Store, TestEnv};
use crate::fixtures::{HEX_ID, HEX_ID_2};

/// A transcript of checkpoint `id`, distinct per checkpoint.
fn transcript(id: &str) -> Vec<u8> {
    format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":\"work on {id}\"}}}}\n"
    )
    .into_bytes()
}

/// A writer whose `origin` (serving filters, as forges do) holds `main` with two commits, each
/// linked to a checkpoint of `store`, both pushed; its `file://` URL.
fn served(env: &TestEnv, store: Store) -> String {
    let origin = env.bare_remote("origin");
    env.git_in(&origin, &["config", "uploadpack.allowFilter", "true"]);
    for id in [HEX_ID, HEX_ID_2] {
        let t = env.input_file(&format!("{id}.jsonl"), &transcript(id));
        env.write(store, "s1").id(id).transcript(&t).ok();
        env.git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("work on {id}\n\nEntire-Checkpoint: {id}"),
        ]);
    }
    env.git(&["push", "-q", "origin", "main"]);
    env.ok(store, &["push", "origin"]);
    format!("file://{}", origin.display())
}

/// `git clone <filter>` of `url` as `name`.
fn partial_clone(env: &TestEnv, url: &str, filter: &str, name: &str) -> PathBuf {
    let dir = env.root().join(name);
    let dir_arg = dir.to_str().unwrap().to_owned();
    env.git_in(env.root(), &["clone", "-q", filter, url, &dir_arg]);
    dir
}

/// Runs `args` in `dir` with the network calls logged; stdout, and how many there were.
fn logged(env: &TestEnv, store: Store, dir: &Path, args: &[&str]) -> (Vec<u8>, usize) {
    let out = env
        .cmd_as(store)
        .current_dir(dir)
        .env("ENTIRE_LOG", "debug")
        .args(args)
        .output()
        .unwrap();
    let err = assert_code(&out, 0, &format!("{args:?}"));
    (out.stdout, network_calls(&err))
}

/// Whether `dir` holds object `spec` itself (git's lazy fetch turned off).
fn holds(env: &TestEnv, dir: &Path, spec: &str) -> bool {
    env.git_command_in(dir, &["cat-file", "-e", spec])
        .env("GIT_NO_LAZY_FETCH", "1")
        .output()
        .unwrap()
        .status
        .success()
}

fn a_partial_clone_reads_the_checkpoint_behind_a_commit(store: Store) {
    for filter in [
        "--filter=blob:none",
        "--filter=tree:0",
        "--filter=blob:limit=16",
    ] {
        let env = TestEnv::new();
        let url = served(&env, store);
        let mate = partial_clone(&env, &url, filter, "mate");

        let (shown, calls) = logged(&env, store, &mate, &["show", "HEAD", "--json"]);
        let shown: Value = parse_json(&shown);
        assert_eq!(shown["checkpoint_id"], HEX_ID_2, "{filter}");
        assert!(calls <= 3, "{filter}: {calls} network calls");
        let (text, _) = logged(&env, store, &mate, &["show", "HEAD", "--transcript"]);
        assert_eq!(text, transcript(HEX_ID_2), "{filter}");
        let (older, _) = logged(&env, store, &mate, &["show", "HEAD~1", "--json"]);
        assert_eq!(parse_json(&older)["checkpoint_id"], HEX_ID, "{filter}");

        // Only what was read came: the earlier checkpoint's transcript was never asked for.
        let older_transcript = match store {
            Store::Refs => format!("{}:0/full.jsonl", crate::env::checkpoint_ref(HEX_ID)),
            Store::Branch => format!(
                "refs/remotes/origin/entire/checkpoints/v1:{}/{}/0/full.jsonl",
                &HEX_ID[..2],
                &HEX_ID[2..]
            ),
        };
        if filter == "--filter=blob:none" {
            assert!(!holds(&env, &mate, &older_transcript), "{filter}");
        }
    }
}

both_stores! {
    reads_behind_a_commit => a_partial_clone_reads_the_checkpoint_behind_a_commit;
}

fn a_partial_clone_lists_its_checkpoints_in_one_fetch(store: Store) {
    let env = TestEnv::new();
    let url = served(&env, store);
    let mate = partial_clone(&env, &url, "--filter=blob:none", "mate");
    if store == Store::Refs {
        // The refs come as on a teammate's `git entire-fetch --all`, without their blobs.
        assert_code(&env.fetch_in(&mate, &["--all"]), 0, "entire-fetch --all");
    }
    let (listed, calls) = logged(&env, store, &mate, &["list", "--json"]);
    let listed = parse_json(&listed);
    let lines = listed.as_array().unwrap();
    assert_eq!(lines.len(), 2, "{listed}");
    for line in lines {
        assert!(line.get("error").is_none(), "{line}");
    }
    assert_eq!(calls, 1, "one fetch of every missing document");
}

both_stores! {
    lists_in_one_fetch => a_partial_clone_lists_its_checkpoints_in_one_fetch;
}
