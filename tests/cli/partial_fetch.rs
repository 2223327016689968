//! Partial fetch (`--filter=blob:none`): checkpoints fetched without their transcripts into the
//! partial cache, metadata read from it without the network, transcripts fetched lazily on read,
//! the user's repository never holding a partial object (`git fsck` clean throughout), a server
//! without filter support, a remote gone at lazy-fetch time, and credentials never printed.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::env::{
    assert_code, assert_success, checkpoint_ref, parse_json, path_str, rev_in, stderr, text, Store,
    TestEnv,
};
use crate::fixtures::ULID_ID as ID;
use crate::remote_fetch::{publish, statuses, world, World, ABSENT_ID, PASSWORD, SECRET_URL};

/// A transcript big enough to matter, with bytes that must survive exactly.
fn transcript() -> Vec<u8> {
    (0..300)
        .map(|i| format!("{{\"type\":\"assistant\",\"n\":{i},\"text\":\"line {i} \u{e9}\\t\"}}\n"))
        .collect::<String>()
        .into_bytes()
}

/// The world with `origin` holding checkpoint [`ID`] (and allowing filters or not); returns it
/// with the remote's tip of the checkpoint and the hash of its transcript blob.
fn filtered_world(allow_filter: bool) -> (World, String, String) {
    let w = world();
    let allow = if allow_filter { "true" } else { "false" };
    w.env
        .git_in(&w.remote, &["config", "uploadpack.allowFilter", allow]);
    let tip = publish(&w, ID, "session-1", &transcript());
    let blob = rev_in(
        &w.env,
        &w.remote,
        &format!("{}:0/full.jsonl", checkpoint_ref(ID)),
    )
    .expect("the remote checkpoint has a transcript");
    (w, tip, blob)
}

fn cache_dir(w: &World) -> PathBuf {
    w.env
        .common_dir_in(&w.clone)
        .join("entire")
        .join("partial.git")
}

/// Whether `dir`'s object store holds `oid`, without letting git fetch it.
fn has_object(env: &TestEnv, dir: &Path, oid: &str) -> bool {
    env.git_command_in(dir, &["cat-file", "-e", oid])
        .env("GIT_NO_LAZY_FETCH", "1")
        .output()
        .expect("run git cat-file")
        .status
        .success()
}

/// `git fsck` of the clone (the user's repository) is clean.
fn assert_clone_connectivity(w: &World, when: &str) {
    let out = w
        .env
        .git_command_in(&w.clone, &["fsck", "--no-progress", "--connectivity-only"])
        .output()
        .expect("run git fsck");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && !text.contains("missing") && !text.contains("broken"),
        "git fsck of the repository {when}: {text}"
    );
}

/// `git entire-fetch --filter=blob:none origin <ID> --json` in the clone, which must succeed.
fn fetch_filtered(w: &World) -> Output {
    let args = ["--filter=blob:none", "origin", ID, "--json"];
    let out = w.env.fetch_in(&w.clone, &args);
    assert_success(&out, &args);
    out
}

#[test]
fn filtered_fetch_reads_metadata_offline_and_fetches_the_transcript_on_read() {
    let (w, tip, blob) = filtered_world(true);
    let out = fetch_filtered(&w);
    assert_eq!(statuses(&out).get(ID).map(String::as_str), Some("fetched"));
    assert_eq!(
        parse_json(&out.stdout)[0]["partial"],
        true,
        "{}",
        text(&out.stdout)
    );

    // The ref is in the cache, not in the repository; the transcript is nowhere yet.
    let cache = cache_dir(&w);
    assert_eq!(
        w.env.checkpoint_tips_in(&cache).get(&checkpoint_ref(ID)),
        Some(&tip)
    );
    assert!(w.env.checkpoint_tips_in(&w.clone).is_empty());
    assert!(
        !has_object(&w.env, &cache, &blob),
        "transcript fetched eagerly"
    );
    assert!(!has_object(&w.env, &w.clone, &blob));
    let meta = rev_in(
        &w.env,
        &w.remote,
        &format!("{}:metadata.json", checkpoint_ref(ID)),
    )
    .unwrap();
    assert!(
        has_object(&w.env, &cache, &meta),
        "documents come with the fetch"
    );
    assert_clone_connectivity(&w, "after the filtered fetch");
    let cache_fsck = w
        .env
        .git_command_in(&cache, &["fsck", "--no-progress"])
        .output()
        .unwrap();
    assert!(
        cache_fsck.status.success(),
        "{}",
        String::from_utf8_lossy(&cache_fsck.stderr)
    );

    // Metadata reads need neither the transcript nor the remote.
    let away = w.env.root().join("origin-away.git");
    std::fs::rename(&w.remote, &away).unwrap();
    let shown = parse_json(
        &w.env
            .run_in(Store::Refs, &w.clone, &["show", ID, "--json"])
            .stdout,
    );
    assert_eq!(shown["checkpoint_id"], ID, "{shown}");
    let listed = parse_json(
        &w.env
            .run_in(Store::Refs, &w.clone, &["list", "--json"])
            .stdout,
    );
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["checkpoint_id"] == ID),
        "{listed}"
    );
    let log = w.env.run_in(Store::Refs, &w.clone, &["log", ID, "--json"]);
    assert_success(&log, &["log"]);
    assert_eq!(parse_json(&log.stdout)[0]["commit"], tip.as_str());
    assert!(
        !has_object(&w.env, &cache, &blob),
        "a metadata read fetched the transcript"
    );
    std::fs::rename(&away, &w.remote).unwrap();

    // Reading the transcript fetches it, byte for byte, into the cache only.
    let cat = w
        .env
        .run_in(Store::Refs, &w.clone, &["cat", ID, "0/full.jsonl"]);
    assert_success(&cat, &["cat"]);
    assert!(cat.stdout == transcript(), "transcript bytes differ");
    assert!(has_object(&w.env, &cache, &blob));
    assert!(!has_object(&w.env, &w.clone, &blob));
    let shown = w
        .env
        .run_in(Store::Refs, &w.clone, &["show", ID, "--transcript"]);
    assert_success(&shown, &["show", "--transcript"]);
    assert!(shown.stdout == transcript());
    assert_clone_connectivity(&w, "after the lazy transcript fetch");

    // A later full fetch brings the whole checkpoint into the repository.
    let full = w.env.fetch_in(&w.clone, &["origin", ID, "--json"]);
    assert_success(&full, &["origin", ID]);
    assert_eq!(statuses(&full).get(ID).map(String::as_str), Some("fetched"));
    assert_eq!(rev_in(&w.env, &w.clone, &checkpoint_ref(ID)), Some(tip));
    assert!(has_object(&w.env, &w.clone, &blob));
    assert_clone_connectivity(&w, "after the full fetch");
}

/// Turns on `strategy_options.filtered_fetches` in the clone and runs `show <ID> --json` there
/// (a read that fetches on demand), which must succeed.
fn show_with_filtered_reads(w: &World) -> Output {
    std::fs::create_dir_all(w.clone.join(".git/entire")).unwrap();
    std::fs::write(
        w.clone.join(".git/entire/settings.local.json"),
        r#"{"strategy_options": {"filtered_fetches": true}}"#,
    )
    .unwrap();
    let out = w.env.run_in(Store::Refs, &w.clone, &["show", ID, "--json"]);
    assert_success(&out, &["show"]);
    out
}

#[test]
fn filtered_fetches_setting_makes_reads_fetch_partially() {
    let (w, _, blob) = filtered_world(true);
    let out = show_with_filtered_reads(&w);
    assert_eq!(parse_json(&out.stdout)["checkpoint_id"], ID);
    let cache = cache_dir(&w);
    assert!(w
        .env
        .checkpoint_tips_in(&cache)
        .contains_key(&checkpoint_ref(ID)));
    assert!(w.env.checkpoint_tips_in(&w.clone).is_empty());
    assert!(!has_object(&w.env, &cache, &blob));

    let cat = w
        .env
        .run_in(Store::Refs, &w.clone, &["cat", ID, "0/full.jsonl"]);
    assert_success(&cat, &["cat"]);
    assert!(cat.stdout == transcript(), "transcript bytes differ");

    // A checkpoint the remote does not have is still "not found", and nothing is cached for it.
    let before = w.env.checkpoint_tips_in(&cache);
    assert_code(
        &w.env.run_in(Store::Refs, &w.clone, &["show", ABSENT_ID]),
        3,
        "absent checkpoint",
    );
    let out = w
        .env
        .fetch_in(&w.clone, &["--filter=blob:none", "origin", ABSENT_ID]);
    assert_code(&out, 3, "filtered fetch of an absent checkpoint");
    assert_eq!(w.env.checkpoint_tips_in(&cache), before);
    assert!(w.env.checkpoint_tips_in(&w.clone).is_empty());
    assert_clone_connectivity(&w, "after on-demand partial reads");
}

#[test]
fn a_server_without_filter_support_gets_a_message_and_whole_checkpoints() {
    let (w, tip, blob) = filtered_world(false);
    let out = fetch_filtered(&w);
    let err = stderr(&out);
    assert!(
        err.contains("origin does not support filtered fetches"),
        "{err}"
    );
    assert_eq!(statuses(&out).get(ID).map(String::as_str), Some("fetched"));
    assert!(parse_json(&out.stdout)[0].get("partial").is_none());
    // Whole, in the repository itself; nothing left in the cache.
    assert_eq!(rev_in(&w.env, &w.clone, &checkpoint_ref(ID)), Some(tip));
    assert!(has_object(&w.env, &w.clone, &blob));
    assert!(w.env.checkpoint_tips_in(&cache_dir(&w)).is_empty());
    assert_clone_connectivity(&w, "after the fallback");
    let cat = w.env.run_in(
        Store::Refs,
        &w.clone,
        &["cat", ID, "0/full.jsonl", "--no-fetch"],
    );
    assert!(cat.stdout == transcript());
}

#[test]
fn a_read_with_filtered_fetches_from_a_server_without_filters_warns_and_fetches_whole() {
    let (w, tip, blob) = filtered_world(false);
    let out = show_with_filtered_reads(&w);
    assert_eq!(parse_json(&out.stdout)["commit"], tip.as_str());
    let err = stderr(&out);
    assert!(
        err.contains("origin does not support filtered fetches"),
        "{err}"
    );
    assert_eq!(rev_in(&w.env, &w.clone, &checkpoint_ref(ID)), Some(tip));
    assert!(has_object(&w.env, &w.clone, &blob));
    assert_clone_connectivity(&w, "after the fallback of a read");
}

#[test]
fn an_unreachable_remote_at_transcript_read_is_a_fetch_failure() {
    let (w, _, _) = filtered_world(true);
    fetch_filtered(&w);
    std::fs::rename(&w.remote, w.env.root().join("origin-gone.git")).unwrap();
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["cat", ID, "0/full.jsonl"]);
    let err = assert_code(&out, 1, "transcript read with the remote gone");
    assert!(err.contains("origin"), "the error names the remote: {err}");
    assert!(!err.contains("not found"), "{err}");
    assert!(out.stdout.is_empty());

    // Same with a remote URL carrying a password: exit 1, the password never shown.
    w.env
        .git_in(&w.clone, &["remote", "set-url", "origin", SECRET_URL]);
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["show", ID, "--transcript"]);
    let err = assert_code(&out, 1, "transcript read from an unreachable URL");
    assert!(
        !err.contains(PASSWORD) && !text(&out.stdout).contains(PASSWORD),
        "{err}"
    );
    assert!(!err.contains("not found"), "{err}");
}

#[test]
fn a_filtered_fetch_from_an_unreachable_url_never_prints_the_password() {
    let (w, _, _) = filtered_world(true);
    let out = w
        .env
        .fetch_in(&w.clone, &["--filter=blob:none", SECRET_URL, ID]);
    let err = assert_code(&out, 1, "filtered fetch from an unreachable URL");
    assert!(
        !err.contains(PASSWORD) && !text(&out.stdout).contains(PASSWORD),
        "{err}"
    );
    assert!(
        err.contains("127.0.0.1"),
        "the error names the remote: {err}"
    );
    assert!(w.env.checkpoint_tips_in(&w.clone).is_empty());
}

#[test]
fn an_unsupported_filter_is_a_usage_error_that_changes_nothing() {
    let (w, _, _) = filtered_world(true);
    let out = w.env.fetch_in(&w.clone, &["--filter=tree:0", "origin", ID]);
    let err = assert_code(&out, 2, "--filter=tree:0");
    assert!(err.contains("blob:none"), "{err}");
    assert!(!cache_dir(&w).exists());
    assert!(w.env.checkpoint_tips_in(&w.clone).is_empty());
}

#[test]
fn a_backfill_of_a_cached_checkpoint_brings_it_whole_into_the_repository() {
    let (w, tip, blob) = filtered_world(true);
    fetch_filtered(&w);
    let summary = w.env.input_file(
        "partial-summary.json",
        br#"{"intent": "finish", "outcome": "done"}"#,
    );
    let out = w.env.run_in(
        Store::Refs,
        &w.clone,
        &["backfill", "summary", ID, "--summary", path_str(&summary)],
    );
    assert_success(&out, &["backfill", "summary"]);
    let new_tip = rev_in(&w.env, &w.clone, &checkpoint_ref(ID)).expect("backfill wrote the ref");
    let parent = w
        .env
        .git_in(&w.clone, &["rev-parse", &format!("{new_tip}^")]);
    assert_eq!(
        parent.trim(),
        tip,
        "the backfill builds on the remote's history"
    );
    assert!(
        has_object(&w.env, &w.clone, &blob),
        "the transcript came whole"
    );
    assert_clone_connectivity(&w, "after a backfill of a cached checkpoint");
}

#[test]
fn fetch_all_with_a_filter_updates_local_checkpoints_whole_and_caches_the_rest() {
    let (w, _, _) = filtered_world(true);
    let other = "01KVBJCWYA4YW6J5M9GP655HZQ";
    publish(&w, other, "session-2", b"{\"other\":true}\n");
    assert_success(&w.env.fetch_in(&w.clone, &["origin", ID]), &["origin", ID]);
    let args = ["--filter=blob:none", "--all", "--json"];
    let out = w.env.fetch_in(&w.clone, &args);
    assert_success(&out, &args);
    let doc = parse_json(&out.stdout);
    let entry = |id: &str| {
        doc.as_array()
            .unwrap()
            .iter()
            .find(|e| e["checkpoint_id"] == id)
            .cloned()
            .unwrap_or_else(|| panic!("{id} missing from {doc}"))
    };
    assert!(entry(ID).get("partial").is_none(), "{doc}");
    assert_eq!(entry(other)["partial"], true, "{doc}");
    assert!(w
        .env
        .checkpoint_tips_in(&cache_dir(&w))
        .contains_key(&checkpoint_ref(other)));
    assert!(!w
        .env
        .checkpoint_tips_in(&w.clone)
        .contains_key(&checkpoint_ref(other)));
    assert_clone_connectivity(&w, "after fetch --all --filter");
}
