//! `show`: the JSON contract of docs/cli.md, prefixes, trailers, missing checkpoints.

use serde_json::{json, Value};

use crate::env::{
    assert_code, assert_failed, parse_json, stdout, Store, TestEnv, AUTHOR_EMAIL, AUTHOR_NAME,
};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT, TRANSCRIPT_2, ULID_ID};

both_stores! {
    json_shape => json_shape;
    unique_prefix_resolves => unique_prefix_resolves;
    ambiguous_prefix_fails => ambiguous_prefix_fails;
    missing_exits_3 => missing_exits_3;
    missing_with_remote_that_lacks_it_exits_3 => missing_with_remote_that_lacks_it_exits_3;
    human_output_names_the_checkpoint => human_output_names_the_checkpoint;
    transcript_of_selected_session => transcript_of_selected_session;
    head_resolves_through_trailer => head_resolves_through_trailer;
}

fn json_shape(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, store, HEX_ID, "sess-2", TRANSCRIPT_2);
    let v = env.ok_json(store, &["show", HEX_ID, "--json"]);
    for key in [
        "checkpoint_id",
        "store",
        "ref",
        "commit",
        "author",
        "summary",
        "sessions",
    ] {
        assert!(v.get(key).is_some(), "show --json lacks {key:?}: {v}");
    }
    assert_eq!(v["checkpoint_id"], json!(HEX_ID));
    assert_eq!(v["store"], json!(store.name()));
    assert_eq!(v["ref"], json!(env.store_ref(store, HEX_ID)));
    let tip = env.tip(store, HEX_ID);
    assert_eq!(v["commit"], json!(tip));
    assert_eq!(v["author"]["name"], json!(AUTHOR_NAME));
    assert_eq!(v["author"]["email"], json!(AUTHOR_EMAIL));
    assert_eq!(
        v["summary"],
        env.json(store, HEX_ID, "metadata.json"),
        "summary is the root metadata.json as stored"
    );
    assert_eq!(
        v["sessions"],
        Value::Array(vec![
            env.json(store, HEX_ID, "0/metadata.json"),
            env.json(store, HEX_ID, "1/metadata.json"),
        ]),
        "sessions are the slot metadata documents in slot order"
    );
}

fn unique_prefix_resolves(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, store, "a1b2ffff0000", "sess-1", TRANSCRIPT);
    let v = env.ok_json(store, &["show", "a1b2c", "--json"]);
    assert_eq!(v["checkpoint_id"], json!(HEX_ID));
    let v = env.ok_json(store, &["show", "a1b2f", "--json"]);
    assert_eq!(v["checkpoint_id"], json!("a1b2ffff0000"));
}

fn ambiguous_prefix_fails(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, store, "a1b2ffff0000", "sess-1", TRANSCRIPT);
    let out = env.run(store, &["show", "a1b2", "--json", "--no-fetch"]);
    let stderr = assert_failed(&out, "ambiguous prefix");
    assert!(
        matches!(out.status.code(), Some(1 | 2)),
        "ambiguous prefix: exit 1 or 2, got {:?}",
        out.status.code()
    );
    assert!(
        stderr.to_lowercase().contains("ambiguous")
            || (stderr.contains(HEX_ID) && stderr.contains("a1b2ffff0000")),
        "message should say the prefix is ambiguous: {stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout on failure");
}

fn missing_exits_3(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    for args in [
        vec!["show", "0badc0ffee00", "--no-fetch"],
        vec!["show", "0badc0ffee00", "--json", "--no-fetch"],
        vec!["show", "0badc0ffee00", "--json"],
    ] {
        let out = env.run(store, &args);
        let stderr = assert_code(&out, 3, &format!("{args:?}"));
        assert!(!stderr.trim().is_empty(), "{args:?}: a message on stderr");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
}

fn missing_with_remote_that_lacks_it_exits_3(store: Store) {
    let env = TestEnv::new();
    env.bare_remote("origin");
    let out = env.run(store, &["show", "0badc0ffee00", "--json"]);
    assert_code(&out, 3, "show of an ID neither local nor on the remote");
}

fn human_output_names_the_checkpoint(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let out = env.ok(store, &["show", HEX_ID]);
    assert!(out.contains(HEX_ID), "human show names the ID:\n{out}");
    assert!(
        out.contains("sess-1"),
        "human show names the session:\n{out}"
    );
    assert!(
        serde_json::from_str::<Value>(&out).is_err(),
        "human output is not the JSON document"
    );
    let tip = env.tip(store, HEX_ID);
    assert!(
        out.contains(&format!("storage  {tip} (the checkpoint's own commit)")),
        "the storage commit is labelled as such:\n{out}"
    );
    assert!(
        out.contains("prompt   do the thing"),
        "the session's prompt is shown:\n{out}"
    );
}

fn transcript_of_selected_session(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let out = env.ok(store, &["show", HEX_ID, "--transcript"]);
    assert!(
        out.contains(std::str::from_utf8(TRANSCRIPT).unwrap()),
        "show --transcript prints the transcript:\n{out}"
    );
    write_std(&env, store, HEX_ID, "sess-2", TRANSCRIPT_2);
    let t1 = std::str::from_utf8(TRANSCRIPT).unwrap();
    let t2 = std::str::from_utf8(TRANSCRIPT_2).unwrap();
    for (sel, want, not) in [
        ("0", t1, t2),
        ("sess-1", t1, t2),
        ("1", t2, t1),
        ("sess-2", t2, t1),
    ] {
        let out = env.ok(store, &["show", HEX_ID, "--session", sel, "--transcript"]);
        assert!(out.contains(want), "--session {sel}: {out}");
        assert!(
            !out.contains(not),
            "--session {sel} shows the other session: {out}"
        );
    }
}

fn head_resolves_through_trailer(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    env.write_file("work.txt", b"work\n");
    env.git(&["add", "work.txt"]);
    env.git(&[
        "commit",
        "-q",
        "-m",
        "Do some work\n\nEntire-Checkpoint: a1b2c3d4e5f6\n",
    ]);
    let v = env.ok_json(store, &["show", "HEAD", "--json"]);
    assert_eq!(v["checkpoint_id"], json!(HEX_ID));
    // The checkpoint records no commit: the human form finds the one whose trailer names it,
    // on another branch too, and not the checkpoint's own storage commit.
    let head = env.rev("HEAD").unwrap();
    env.git(&["checkout", "-q", "-b", "elsewhere", "HEAD~1"]);
    let out = env.ok(store, &["show", HEX_ID]);
    assert!(
        out.contains(&format!("  code     {head}\n")),
        "the code commit is found by its trailer:\n{out}"
    );
    assert_eq!(out.matches("  code ").count(), 1, "{out}");
}

#[test]
fn ulid_prefix_resolves() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, ULID_ID, "sess-1", TRANSCRIPT);
    let v = env.ok_json(Store::Refs, &["show", "01KVBJCW", "--json"]);
    assert_eq!(v["checkpoint_id"], json!(ULID_ID));
    assert_eq!(v["store"], json!("git-refs"));
}

#[test]
fn ulid_in_refs_is_found_under_branch_primary() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, ULID_ID, "sess-1", TRANSCRIPT);
    let v = env.ok_json(Store::Branch, &["show", ULID_ID, "--json"]);
    assert_eq!(v["checkpoint_id"], json!(ULID_ID));
    assert_eq!(v["store"], json!("git-refs"));
    assert_eq!(
        v["ref"],
        json!(format!("refs/entire/checkpoints/ZN/{ULID_ID}"))
    );
}

#[test]
fn json_output_is_one_document_for_a_ulid() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, ULID_ID, "sess-1", TRANSCRIPT);
    let out = env.run(Store::Refs, &["show", ULID_ID, "--json"]);
    crate::env::assert_success(&out, &["show --json"]);
    let v = parse_json(&out.stdout);
    assert!(v.is_object());
    assert_eq!(v["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(v["sessions"][0]["session_id"], json!("sess-1"));
}

#[test]
fn hex_on_branch_only_resolves_under_refs_primary() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    let v = env.ok_json(Store::Refs, &["show", HEX_ID, "--json"]);
    assert_eq!(v["checkpoint_id"], json!(HEX_ID));
    assert_eq!(v["store"], json!("git-branch"));
    assert_eq!(v["ref"], json!(crate::env::V1_BRANCH));
    assert_eq!(v["commit"], json!(env.tip(Store::Branch, HEX_ID)));
}

#[test]
fn ulid_on_the_branch_only_is_not_found() {
    let env = TestEnv::new();
    crate::fixtures::hand_made(&env, Store::Branch, ULID_ID, None);
    for store in Store::ALL {
        let out = env.run(store, &["show", ULID_ID, "--json", "--no-fetch"]);
        assert_code(
            &out,
            3,
            &format!("ULID on the v1 branch under {}", store.name()),
        );
    }
}

#[test]
fn a_commit_linking_an_absent_checkpoint_shows_the_others_and_names_it() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    let absent = "0badc0ffee00";
    let also_absent = "0badc0ffee01";
    env.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        &format!("squash\n\nEntire-Checkpoint: {absent}\nEntire-Checkpoint: {HEX_ID}\n"),
    ]);
    for args in [
        vec!["show", "HEAD", "--no-fetch"],
        vec!["show", "HEAD", "--json", "--no-fetch"],
    ] {
        let out = env.run(Store::Branch, &args);
        let err = assert_code(&out, 0, &args.join(" "));
        assert!(
            err.contains(&format!("HEAD: no checkpoint matches \"{absent}\"")),
            "{err}"
        );
        assert!(stdout(&out).contains(HEX_ID), "{}", stdout(&out));
    }
    // Nothing readable: not found (3), every absent one named.
    env.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        &format!("gone\n\nEntire-Checkpoint: {absent}\nEntire-Checkpoint: {also_absent}\n"),
    ]);
    let out = env.run(Store::Branch, &["show", "HEAD", "--no-fetch"]);
    let err = assert_code(&out, 3, "show of a commit whose checkpoints are all absent");
    assert!(err.contains(absent) && err.contains(also_absent), "{err}");
    assert!(stdout(&out).is_empty());
}
