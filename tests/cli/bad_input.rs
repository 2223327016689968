//! Bad input gets a clear error and changes nothing (docs/decisions.md, "Bad input changes
//! nothing"; docs/reliability.md, "Bad input").

use crate::env::{assert_code, assert_failed, Store, TestEnv};
use crate::fixtures::{hand_made, write_std, HEX_ID, TRANSCRIPT, ULID_ID};

fn invalid_id_message(s: &str) -> String {
    format!(
        "invalid checkpoint ID {s:?}: must be 12 lowercase hex characters or a 26-character ULID"
    )
}

const BAD_IDS: &[&str] = &[
    "../x",
    "A1B2C3D4E5F6",
    "01kvbjcwya4yw6j5m9gp655hzn",
    "8123456789ABCDEFGHJKMNPQRS",
    "01KVBJCWYA4YW6J5M9GP655HZI",
    "01KVBJCWYA4YW6J5M9GP655HZ",
    "a1b2c3d4e5f6a",
    "",
];

both_stores! {
    invalid_ids_are_rejected_by_write => invalid_ids_are_rejected_by_write;
    invalid_ids_are_rejected_by_backfill => invalid_ids_are_rejected_by_backfill;
    missing_transcript_file => missing_transcript_file;
    token_usage_not_json => token_usage_not_json;
    token_usage_nested_too_deep => token_usage_nested_too_deep;
    show_unknown_session_slot => show_unknown_session_slot;
    corrupt_root_metadata => corrupt_root_metadata;
}

fn invalid_ids_are_rejected_by_write(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let snapshot = env.refs_snapshot();
    let t = env.input_file("t.jsonl", TRANSCRIPT);
    for id in BAD_IDS {
        let out = env.run(
            store,
            &[
                "write",
                "--session",
                "sess-2",
                "--id",
                id,
                "--transcript",
                t.to_str().unwrap(),
            ],
        );
        let stderr = assert_failed(&out, &format!("write --id {id:?}"));
        assert!(
            matches!(out.status.code(), Some(1 | 2)),
            "write --id {id:?}: exit 1 or 2, got {:?}",
            out.status.code()
        );
        assert!(
            stderr.contains(&invalid_id_message(id)),
            "write --id {id:?}: expected {:?} in stderr:\n{stderr}",
            invalid_id_message(id)
        );
        assert_eq!(
            stderr.lines().next(),
            Some(format!("error: {}", invalid_id_message(id)).as_str()),
            "errors are prefixed `error: `"
        );
        assert!(
            out.stdout.is_empty(),
            "write --id {id:?}: nothing on stdout"
        );
        assert_eq!(
            env.refs_snapshot(),
            snapshot,
            "write --id {id:?} changed refs"
        );
    }
}

fn invalid_ids_are_rejected_by_backfill(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    let snapshot = env.refs_snapshot();
    let t = env.input_file("t.jsonl", TRANSCRIPT);
    for id in ["../x", "A1B2C3D4E5F6", "a1b2c3d4e5f6a"] {
        let out = env.run(
            store,
            &[
                "backfill",
                "transcript",
                id,
                "--session",
                "sess-1",
                "--transcript",
                t.to_str().unwrap(),
            ],
        );
        let stderr = assert_failed(&out, &format!("backfill transcript {id:?}"));
        assert_ne!(
            out.status.code(),
            Some(3),
            "an invalid ID is not a missing one"
        );
        assert!(
            stderr.contains(&invalid_id_message(id)),
            "backfill {id:?}: {stderr}"
        );
        assert_eq!(env.refs_snapshot(), snapshot);
    }
}

#[test]
fn ulid_is_refused_on_a_git_branch_primary() {
    let env = TestEnv::new();
    let snapshot = env.refs_snapshot();
    let out = env.run(
        Store::Branch,
        &["write", "--session", "sess-1", "--id", ULID_ID],
    );
    assert_failed(&out, "ULID onto the v1 branch");
    assert_eq!(env.refs_snapshot(), snapshot, "nothing written");
}

#[test]
fn invalid_primary_in_environment() {
    let env = TestEnv::new();
    let snapshot = env.refs_snapshot();
    let out = env
        .cmd()
        .env("ENTIRE_CHECKPOINTS_PRIMARY", "no-such-store")
        .args(["write", "--session", "sess-1", "--id", HEX_ID])
        .output()
        .unwrap();
    assert_failed(&out, "ENTIRE_CHECKPOINTS_PRIMARY=no-such-store");
    assert_eq!(env.refs_snapshot(), snapshot, "nothing written");
}

fn missing_transcript_file(store: Store) {
    let env = TestEnv::new();
    let snapshot = env.refs_snapshot();
    let missing = env.root().join("inputs").join("does-not-exist.jsonl");
    let out = env.run(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--transcript",
            missing.to_str().unwrap(),
        ],
    );
    let stderr = assert_failed(&out, "missing transcript file");
    assert!(
        stderr.contains("does-not-exist.jsonl"),
        "message names the file: {stderr}"
    );
    assert_eq!(env.refs_snapshot(), snapshot, "nothing written");
}

fn token_usage_not_json(store: Store) {
    let env = TestEnv::new();
    let snapshot = env.refs_snapshot();
    let out = env.run(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--token-usage",
            "not json",
        ],
    );
    let stderr = assert_failed(&out, "--token-usage not JSON");
    assert!(
        stderr.to_lowercase().contains("token"),
        "message names the token usage: {stderr}"
    );
    assert_eq!(env.refs_snapshot(), snapshot, "nothing written");
}

/// Token usage with `depth` nested `subagent_tokens` objects.
fn nested_usage(depth: usize) -> String {
    let mut s = String::from(r#"{"input_tokens":1,"output_tokens":1}"#);
    for _ in 0..depth {
        s = format!(r#"{{"input_tokens":1,"output_tokens":1,"subagent_tokens":{s}}}"#);
    }
    s
}

fn token_usage_nested_too_deep(store: Store) {
    let env = TestEnv::new();
    let snapshot = env.refs_snapshot();
    let deep = nested_usage(17);
    let out = env.run(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--token-usage",
            &deep,
        ],
    );
    assert_failed(&out, "subagent_tokens nested 17 deep");
    assert_eq!(env.refs_snapshot(), snapshot, "nothing written");

    // The cap itself (16) is accepted.
    let ok = nested_usage(16);
    env.ok(
        store,
        &[
            "write",
            "--session",
            "sess-1",
            "--id",
            HEX_ID,
            "--token-usage",
            &ok,
        ],
    );
    let meta = env.json(store, HEX_ID, "0/metadata.json");
    let mut depth = 0;
    let mut cur = &meta["token_usage"];
    while let Some(next) = cur.get("subagent_tokens") {
        depth += 1;
        cur = next;
    }
    assert_eq!(depth, 16, "accepted nesting is stored as given");
}

fn show_unknown_session_slot(store: Store) {
    let env = TestEnv::new();
    write_std(&env, store, HEX_ID, "sess-1", TRANSCRIPT);
    for sel in ["5", "no-such-session"] {
        let out = env.run(store, &["show", HEX_ID, "--session", sel, "--json"]);
        let stderr = assert_failed(&out, &format!("show --session {sel}"));
        assert!(
            stderr.contains(sel),
            "message names the session {sel}: {stderr}"
        );
        assert!(out.stdout.is_empty(), "nothing on stdout");
    }
}

fn corrupt_root_metadata(store: Store) {
    let env = TestEnv::new();
    let tip = hand_made(&env, store, HEX_ID, Some(b"{ this is not json\n"));
    let snapshot = env.refs_snapshot();

    let out = env.run(store, &["show", HEX_ID, "--json", "--no-fetch"]);
    let stderr = assert_code(&out, 1, "show of a corrupt checkpoint");
    assert!(
        stderr.contains(HEX_ID),
        "message names the checkpoint: {stderr}"
    );
    assert!(out.stdout.is_empty());

    let t = env.input_file("t.jsonl", TRANSCRIPT);
    let out = env.run(
        store,
        &[
            "write",
            "--session",
            "sess-2",
            "--id",
            HEX_ID,
            "--transcript",
            t.to_str().unwrap(),
        ],
    );
    let stderr = assert_failed(&out, "write onto a corrupt checkpoint");
    assert!(
        stderr.contains(HEX_ID),
        "message names the checkpoint: {stderr}"
    );
    assert_eq!(
        env.refs_snapshot(),
        snapshot,
        "write refused: refs unchanged"
    );
    assert_eq!(env.tip(store, HEX_ID), tip);

    let out = env.run(
        store,
        &[
            "backfill",
            "transcript",
            HEX_ID,
            "--session",
            "hand-sess",
            "--transcript",
            t.to_str().unwrap(),
        ],
    );
    assert_failed(&out, "backfill onto a corrupt checkpoint");
    assert_eq!(
        env.refs_snapshot(),
        snapshot,
        "backfill refused: refs unchanged"
    );
}

#[test]
fn outside_a_repository_exits_128() {
    let env = TestEnv::without_repo();
    for args in [
        vec!["list", "--json"],
        vec!["write", "--session", "sess-1", "--id", HEX_ID],
        vec!["show", HEX_ID],
    ] {
        let out = env.run(Store::Refs, &args);
        let stderr = assert_code(&out, 128, &format!("{args:?} outside a repository"));
        assert!(
            stderr.to_lowercase().contains("repository"),
            "message says it is not a repository: {stderr}"
        );
    }
    assert!(!env.repo().join(".git").exists(), "no repository created");
}

/// A git older than 2.45 (which cannot read reftable): `ENTIRE_TEST_OLD_GIT`, else
/// `/usr/bin/git` (2.39 on Debian 12 and macOS); `None` when there is none such.
fn git_without_reftable() -> Option<std::path::PathBuf> {
    let git = std::env::var_os("ENTIRE_TEST_OLD_GIT").unwrap_or_else(|| "/usr/bin/git".into());
    let out = std::process::Command::new(&git)
        .arg("--version")
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text.trim().trim_start_matches("git version ").split('.');
    let major: u32 = parts.next()?.parse().ok()?;
    let minor: u32 = parts.next()?.parse().ok()?;
    ((major, minor) < (2, 45)).then(|| git.into())
}

#[test]
fn a_reftable_repository_with_a_git_that_cannot_read_it_exits_128_and_writes_nothing() {
    if !crate::env::git_at_least(2, 45, "git init --ref-format=reftable") {
        return;
    }
    let Some(old_git) = git_without_reftable() else {
        crate::env::skip("no git older than 2.45 to run with");
        return;
    };
    let env = TestEnv::without_repo();
    env.init_repo(&["--ref-format=reftable"]);
    env.write_file("README.md", b"hello\n");
    env.git(&["add", "README.md"]);
    env.git(&["commit", "-q", "-m", "initial commit"]);
    let snapshot = env.refs_snapshot();
    let objects = env.git(&["count-objects", "-v"]);
    let path = format!(
        "{}:{}",
        old_git.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    for store in Store::ALL {
        for args in [
            vec!["write", "--session", "sess-1", "--id", HEX_ID],
            vec!["list", "--json"],
            vec!["enable"],
        ] {
            let out = env
                .cmd_as(store)
                .env("PATH", &path)
                .args(&args)
                .output()
                .unwrap();
            let what = format!("{args:?} in a reftable repository with an old git");
            let stderr = assert_code(&out, 128, &what);
            assert!(
                stderr.contains("reftable") && stderr.contains("2.45"),
                "{what}: the message names the format and the git needed: {stderr}"
            );
            assert_eq!(
                stderr.trim().lines().count(),
                1,
                "{what}: one line: {stderr}"
            );
        }
    }
    assert_eq!(env.refs_snapshot(), snapshot, "nothing written");
    assert_eq!(
        env.git(&["count-objects", "-v"]),
        objects,
        "no object written"
    );
    assert!(!env.repo().join(".entire").exists(), "no settings written");
}

/// A full object ID of the other format, where a revision is expected: one error naming both
/// formats, exit 2, nothing written; in either direction.
#[test]
fn an_object_id_of_the_other_format_is_named_as_such() {
    // Each format chosen explicitly: the profile may make either the default.
    let [sha1, sha256] = ["sha1", "sha256"].map(|format| {
        let env = TestEnv::without_repo();
        env.init_repo(&[&format!("--object-format={format}")]);
        env.write_file("README.md", b"hello\n");
        env.git(&["add", "README.md"]);
        env.git(&["commit", "-q", "-m", "initial commit"]);
        env
    });
    for (env, other, found, uses) in [
        (&sha1, &sha256, "SHA-256", "SHA-1"),
        (&sha256, &sha1, "SHA-1", "SHA-256"),
    ] {
        let id = other.rev("HEAD").unwrap();
        let snapshot = env.refs_snapshot();
        let range = format!("HEAD..{id}");
        for args in [
            vec!["show", id.as_str()],
            vec!["cat", id.as_str(), "metadata.json"],
            vec!["log", id.as_str()],
            vec!["list", id.as_str()],
            vec!["list", range.as_str()],
            vec!["blame", "README.md", id.as_str()],
        ] {
            let out = env.run(Store::Refs, &args);
            let stderr = assert_code(&out, 2, &format!("{args:?} in a {uses} repository"));
            assert!(
                stderr.contains(&format!(
                    "{id} is a {found} object ID, but this repository uses {uses}"
                )),
                "{args:?}: {stderr}"
            );
        }
        env.bare_remote("origin");
        let out = env
            .bin_cmd(&crate::env::fetch_bin())
            .args(["origin", "--for", &range])
            .output()
            .unwrap();
        let stderr = assert_code(&out, 2, "entire-fetch --for");
        assert!(
            stderr.contains(&format!("is a {found} object ID")),
            "{stderr}"
        );
        assert_eq!(env.refs_snapshot(), snapshot, "nothing written");
    }
    // In a SHA-256 repository, 40 hex digits may abbreviate an ID: then they are one.
    let head = sha256.rev("HEAD").unwrap();
    let out = sha256.run(Store::Refs, &["show", &head[..40]]);
    let stderr = assert_code(&out, 3, "an abbreviated SHA-256 ID");
    assert!(stderr.contains("no Entire-Checkpoint trailer"), "{stderr}");
}

#[test]
fn usage_errors_exit_2() {
    let env = TestEnv::new();
    let snapshot = env.refs_snapshot();
    for args in [
        vec!["write", "--session", "sess-1", "--no-such-flag"],
        vec!["write", "--id", HEX_ID],
        vec!["list", "--no-such-flag"],
        vec!["show"],
        vec!["cat", HEX_ID],
        vec!["backfill", "summary"],
        vec!["no-such-command"],
    ] {
        let out = env.run(Store::Refs, &args);
        let stderr = assert_code(&out, 2, &format!("{args:?}"));
        assert!(
            !stderr.trim().is_empty(),
            "{args:?}: usage message on stderr"
        );
    }
    assert_eq!(env.refs_snapshot(), snapshot);
}

#[test]
fn invalid_created_at_and_session_ids() {
    let env = TestEnv::new();
    let snapshot = env.refs_snapshot();
    for store in Store::ALL {
        for args in [
            vec![
                "write",
                "--session",
                "sess-1",
                "--id",
                HEX_ID,
                "--created-at",
                "yesterday",
            ],
            vec![
                "write",
                "--session",
                "sess-1",
                "--id",
                HEX_ID,
                "--created-at",
                "2026-13-45T99:00:00Z",
            ],
            vec!["write", "--session", "", "--id", HEX_ID],
            vec![
                "write",
                "--session",
                "a\nEntire-Strategy: evil",
                "--id",
                HEX_ID,
            ],
            vec!["write", "--session", "../../escape", "--id", HEX_ID],
        ] {
            let out = env.run(store, &args);
            assert_failed(&out, &format!("{} {args:?}", store.name()));
            assert_eq!(env.refs_snapshot(), snapshot, "{args:?} wrote something");
        }
    }
}

/// A settings error states its reason once: the wrapping error does not repeat its source,
/// which the error chain prints anyway (it did, doubling the whole message).
#[test]
fn a_settings_error_states_its_reason_once() {
    for (file, settings, reason) in [
        (
            "settings.json",
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirorrs": []}}"#,
            "unknown field `mirorrs`",
        ),
        (
            // The committed file's broken rule is a warning (trust.rs); the user's own fails.
            "settings.local.json",
            r#"{"redaction": {"rules": [{"name": "broken-ticket", "pattern": "ACME-[0-9"}]}}"#,
            "broken-ticket",
        ),
    ] {
        let env = TestEnv::new();
        env.write_file(&format!(".entire/{file}"), settings.as_bytes());
        let snapshot = env.refs_snapshot();
        let out = env
            .cmd()
            .args(["write", "--session", "sess-1", "--id", HEX_ID])
            .output()
            .unwrap();
        let stderr = assert_code(&out, 1, settings);
        assert_eq!(stderr.matches(reason).count(), 1, "{settings}:\n{stderr}");
        assert_eq!(env.refs_snapshot(), snapshot, "nothing written");
    }
}
