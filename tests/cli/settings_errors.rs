//! Settings files that do not parse (issue 13). Every command reports each such file once on
//! stderr, naming it and the parse error. Writes refuse with exit 1 and write nothing (`write`,
//! `backfill *`, `push`, `gc`, `migrate`), since the redaction rules and the store the file
//! names are unknown. Reads (`show`, `list`, `cat`, `log`, `status`, `config`) go on. The commit
//! hooks neither link nor condense: the commit succeeds with a warning and the session stays
//! staged. `session record` still stages (redacted with the rules that can be read).

use std::path::Path;
use std::process::Output;

use serde_json::json;

use crate::commit_hooks::{checkpoint_state, commit, install_hooks, session_entry, trailer_ids};
use crate::env::{path_str, prepush_bin, text, Store, TestEnv, V1_BRANCH};

/// Settings with a user rule and the git-refs primary.
const SETTINGS: &str = r#"{"redaction": {"rules": [{"name": "corp", "pattern": "CORPSECRET-[0-9]+"}]}, "checkpoints": {"primary": {"type": "git-refs"}}}"#;
const SECRET: &str = "CORPSECRET-12345";
const SESSION: &str = "sess-bad-settings";

/// [`SETTINGS`] with a trailing comma: a syntax error at its end.
fn broken() -> String {
    format!("{},}}", &SETTINGS[..SETTINGS.len() - 1])
}

fn transcript() -> Vec<u8> {
    format!("{{\"type\":\"tool_result\",\"content\":\"the key is {SECRET}\"}}\n").into_bytes()
}

/// `write` of [`transcript`] for session [`SESSION`].
fn write(env: &TestEnv) -> Output {
    let file = env.input_file("bad-settings-transcript.jsonl", &transcript());
    env.write(None, SESSION).transcript(&file).run()
}

/// A checkpoint written with [`SETTINGS`], which then get the syntax error; returns its ID.
fn written_then_broken(env: &TestEnv) -> String {
    env.write_file(".entire/settings.json", SETTINGS.as_bytes());
    let out = write(env);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    env.write_file(".entire/settings.json", broken().as_bytes());
    text(&out.stdout).trim().to_string()
}

/// Asserts `stderr` reports `file` and its parse error exactly once.
fn assert_reported_once(stderr: &str, file: &str) {
    assert_eq!(
        stderr.matches("is not valid JSON").count(),
        1,
        "reported once:\n{stderr}"
    );
    assert!(
        stderr.contains(&format!(
            "{file} is not valid JSON: trailing comma at line 1"
        )),
        "names the file and the parse error:\n{stderr}"
    );
}

/// Asserts the command failed with exit 1, reported the file once and said why it refused.
fn assert_refused(out: &Output, file: &str, what: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{what}: exit 1:\n{stderr}");
    assert_reported_once(&stderr, file);
    assert!(
        stderr.contains("refusing to write checkpoints"),
        "{what}: says it refuses:\n{stderr}"
    );
}

#[test]
fn write_refuses_and_writes_nothing() {
    for file in [".entire/settings.json", ".git/entire/settings.local.json"] {
        let env = TestEnv::new();
        env.write_file(".entire/settings.json", SETTINGS.as_bytes());
        env.write_file(file, broken().as_bytes());
        let before = env.refs_snapshot();
        let out = write(&env);
        assert_refused(&out, file, "write");
        assert!(out.stdout.is_empty(), "no ID printed");
        assert_eq!(env.refs_snapshot(), before, "no ref written");
        assert_eq!(env.rev(V1_BRANCH), None, "the v1 branch is not created");
    }
}

#[test]
fn backfills_refuse_and_change_nothing() {
    let env = TestEnv::new();
    let id = written_then_broken(&env);
    let before = env.refs_snapshot();
    let t = env.input_file("bad-settings-backfill.jsonl", &transcript());
    let doc = env.input_file("bad-settings-doc.json", br#"{"intent": "x"}"#);
    for args in [
        vec![
            "backfill",
            "transcript",
            &id,
            "--session",
            SESSION,
            "--transcript",
            path_str(&t),
        ],
        vec!["backfill", "summary", &id, "--summary", path_str(&doc)],
        vec![
            "backfill",
            "attribution",
            &id,
            "--attribution",
            path_str(&doc),
        ],
    ] {
        assert_refused(&env.run_default(&args), ".entire/settings.json", args[1]);
        assert_eq!(env.refs_snapshot(), before, "{}: nothing written", args[1]);
    }
}

#[test]
fn reads_warn_and_succeed() {
    let env = TestEnv::new();
    let id = written_then_broken(&env);
    let before = env.refs_snapshot();
    for args in [
        vec!["show", &id],
        vec!["show", &id, "--transcript"],
        vec!["list"],
        vec!["cat", &id, "metadata.json"],
        vec!["log", &id],
        vec!["status"],
        vec!["config", "--json"],
    ] {
        let out = env.run_default(&args);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?} succeeds:\n{stderr}");
        assert_reported_once(&stderr, ".entire/settings.json");
        assert!(!out.stdout.is_empty(), "{args:?} prints its result");
    }
    assert_eq!(env.refs_snapshot(), before);
}

#[test]
fn push_gc_and_migrate_refuse() {
    let env = TestEnv::new();
    let remote = env.bare_remote("origin");
    written_then_broken(&env);
    let before = env.refs_snapshot();
    for args in [
        vec!["push"],
        vec!["gc", "--keep-days", "0"],
        vec!["migrate"],
    ] {
        assert_refused(&env.run_default(&args), ".entire/settings.json", args[0]);
    }
    // The pre-push hook never fails the user's push: it warns and keeps the refs queued.
    let out = env
        .bin_cmd(&prepush_bin())
        .args(["origin"])
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert_reported_once(&stderr, ".entire/settings.json");
    assert!(stderr.contains("checkpoints not pushed"), "{stderr}");
    assert_eq!(env.refs_snapshot(), before, "nothing deleted or migrated");
    assert_eq!(
        env.git_in(Path::new(&remote), &["for-each-ref"]),
        "",
        "nothing pushed"
    );
}

#[test]
fn a_commit_succeeds_with_a_warning_and_the_session_stays_staged() {
    let env = TestEnv::new();
    env.write_file(".entire/settings.json", broken().as_bytes());
    install_hooks(&env);
    let file = env.input_file("bad-settings-record.jsonl", &transcript());
    let out = env.run_default(&[
        "session",
        "record",
        "--session",
        SESSION,
        "--transcript",
        path_str(&file),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_reported_once(&text(&out.stderr), ".entire/settings.json");
    let before = checkpoint_state(&env);

    let (head, stderr) = commit(&env, None, "a.txt", "first");
    assert!(stderr.contains("not linking this commit"), "{stderr}");
    assert!(
        stderr.contains(".entire/settings.json is not valid JSON"),
        "{stderr}"
    );
    assert!(trailer_ids(&env, &head).is_empty(), "not linked");
    // A trailer written by hand: post-commit refuses to condense into it.
    let id = "01JQ0000000000000000000000";
    let (head, stderr) = commit(
        &env,
        None,
        "b.txt",
        &format!("second\n\nEntire-Checkpoint: {id}"),
    );
    assert!(
        stderr.contains("not condensing the staged sessions"),
        "{stderr}"
    );
    assert_eq!(trailer_ids(&env, &head), [id]);
    assert_eq!(checkpoint_state(&env), before, "no checkpoint written");
    assert_eq!(
        session_entry(&env, env.repo(), SESSION)["pending"],
        json!(true)
    );

    // Fixed: the next commit condenses the session, redacted with the file's rule.
    env.write_file(".entire/settings.json", SETTINGS.as_bytes());
    let (head, _) = commit(&env, None, "c.txt", "third");
    let ids = trailer_ids(&env, &head);
    assert_eq!(ids.len(), 1, "linked");
    let full = env.blob(Store::Refs, &ids[0], "0/full.jsonl");
    assert!(!text(&full).contains(SECRET), "{}", text(&full));
    assert_eq!(
        session_entry(&env, env.repo(), SESSION)["pending"],
        json!(false)
    );
}
