//! Settings you can see and set (issue 18): `config` lists every effective setting with its
//! value and origin; `config set|unset [--local] KEY [VALUE]` edit `.entire/settings.json` or
//! `.git/entire/settings.local.json` safely (validated by the commands' own parsers, atomic, unknown
//! keys and key order kept); `hooks install` makes git ignore the per-clone file; a command that
//! does nothing because of a setting names it.

use serde_json::{json, Value};

use crate::env::{assert_code, assert_success, stderr, stdout, TestEnv};

/// The `settings` entry of `config --json` for `key`: `(value, origin)`.
fn setting(doc: &Value, key: &str) -> (Value, String) {
    let entry = doc["settings"]
        .as_array()
        .expect("settings is an array")
        .iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("no setting {key} in {doc:#}"));
    (
        entry["value"].clone(),
        entry["origin"].as_str().unwrap().to_owned(),
    )
}

fn listed(env: &TestEnv, extra_env: &[(&str, &str)]) -> Value {
    let mut cmd = env.cmd();
    for (k, v) in extra_env {
        cmd.env(k, v);
    }
    let out = cmd.args(["config", "--json"]).output().unwrap();
    assert_success(&out, &["config", "--json"]);
    serde_json::from_slice(&out.stdout).expect("one JSON document")
}

fn read(env: &TestEnv, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(env.repo().join(rel)).ok()
}

fn read_json(env: &TestEnv, rel: &str) -> Value {
    serde_json::from_slice(&read(env, rel).expect("file exists")).expect("valid JSON")
}

#[test]
fn config_lists_every_setting_with_its_origin() {
    let env = TestEnv::new();
    let doc = listed(&env, &[]);
    for (key, value) in [
        ("checkpoints.primary.type", json!("git-branch")),
        ("checkpoints.mirrors", json!([])),
        ("strategy_options.push_sessions", json!(true)),
        ("strategy_options.checkpoint_remote", Value::Null),
        ("strategy_options.checkpoint_gc_days", Value::Null),
        ("strategy_options.filtered_fetches", json!(false)),
        ("strategy_options.hook_budget_seconds", json!(30)),
        (
            "strategy_options.checkpoint_ref_warn_threshold",
            json!(5000),
        ),
        ("strategy_options.doctor_trailer_depth", json!(1000)),
        ("redaction.enabled", json!(true)),
        ("redaction.rules", json!(0)),
    ] {
        assert_eq!(setting(&doc, key), (value, "default".to_owned()), "{key}");
    }
    // The existing keys are still there.
    assert_eq!(doc["primary"], "git-branch");
    assert_eq!(doc["source"], "default");
    for entry in doc["settings"].as_array().unwrap() {
        let mut keys: Vec<&str> = entry
            .as_object()
            .unwrap()
            .keys()
            .map(|k| k.as_str())
            .collect();
        keys.sort();
        assert_eq!(keys, ["key", "origin", "value"], "{entry}");
    }

    env.write_file(
        ".entire/settings.json",
        br#"{"checkpoints": {"primary": {"type": "git-refs"}}, "strategy_options": {"push_sessions": false, "hook_budget_seconds": 12, "checkpoint_gc_days": 30}, "redaction": {"rules": [{"name": "corp", "pattern": "CORP-[0-9]+"}]}}"#,
    );
    env.write_file(
        ".git/entire/settings.local.json",
        br#"{"strategy_options": {"hook_budget_seconds": 7, "filtered_fetches": true}, "redaction": {"enabled": false}}"#,
    );
    let doc = listed(&env, &[]);
    let origin = |key| setting(&doc, key);
    assert_eq!(
        origin("checkpoints.primary.type"),
        (json!("git-refs"), "settings".into())
    );
    assert_eq!(
        origin("strategy_options.push_sessions"),
        (json!(false), "settings".into())
    );
    assert_eq!(
        origin("strategy_options.checkpoint_gc_days"),
        (json!(30), "settings".into())
    );
    assert_eq!(
        origin("strategy_options.hook_budget_seconds"),
        (json!(7), "settings.local".into())
    );
    assert_eq!(
        origin("strategy_options.filtered_fetches"),
        (json!(true), "settings.local".into())
    );
    // The local redaction block replaces the committed one wholesale: no user rules.
    assert_eq!(
        origin("redaction.enabled"),
        (json!(false), "settings.local".into())
    );
    assert_eq!(
        origin("redaction.rules"),
        (json!(0), "settings.local".into())
    );

    let doc = listed(
        &env,
        &[
            ("ENTIRE_CHECKPOINTS_PRIMARY", "git-branch"),
            ("ENTIRE_CHECKPOINTS_MIRRORS", "git-refs"),
            ("ENTIRE_HOOK_BUDGET_SECONDS", "45"),
            ("ENTIRE_NETWORK_TIMEOUT_SECONDS", "9"),
        ],
    );
    assert_eq!(
        setting(&doc, "checkpoints.primary.type"),
        (json!("git-branch"), "env".into())
    );
    assert_eq!(
        setting(&doc, "checkpoints.mirrors"),
        (json!([{"type": "git-refs"}]), "env".into())
    );
    assert_eq!(
        setting(&doc, "strategy_options.hook_budget_seconds"),
        (json!(45), "env".into())
    );
    assert_eq!(
        setting(&doc, "network_timeout_seconds"),
        (json!(9), "env".into())
    );

    // The human listing has one line per setting, with the origin.
    let out = env.cmd().arg("config").output().unwrap();
    assert_success(&out, &["config"]);
    let human = stdout(&out);
    assert!(human.starts_with("primary  git-refs\n"), "{human}");
    assert!(
        human.contains("strategy_options.hook_budget_seconds = 7  (settings.local)"),
        "{human}"
    );
    assert!(
        human.contains("strategy_options.push_sessions = false  (settings)"),
        "{human}"
    );
}

fn config(env: &TestEnv, args: &[&str]) -> std::process::Output {
    let mut all = vec!["config"];
    all.extend_from_slice(args);
    env.run_default(&all)
}

#[test]
fn set_and_unset_round_trip_and_keep_unknown_keys_and_order() {
    let env = TestEnv::new();
    // No `.entire/` yet: set creates it and the file.
    assert_success(
        &config(&env, &["set", "strategy_options.push_sessions", "false"]),
        &["set"],
    );
    assert_eq!(
        read_json(&env, ".entire/settings.json"),
        json!({"strategy_options": {"push_sessions": false}})
    );
    assert_eq!(
        setting(&listed(&env, &[]), "strategy_options.push_sessions"),
        (json!(false), "settings".into())
    );
    // status shows the settings that were changed, with where they come from.
    let status = env.run_default(&["status"]);
    assert_success(&status, &["status"]);
    let status = String::from_utf8_lossy(&status.stdout).into_owned();
    assert!(
        status.contains("strategy_options.push_sessions = false  (settings)"),
        "{status}"
    );
    assert!(
        !status.contains("redaction.enabled"),
        "defaults are left to config: {status}"
    );

    // Unknown keys and key order survive; a value that is not JSON is a string.
    env.write_file(
        ".entire/settings.json",
        br#"{"zeta": 1, "enabled": true, "strategy_options": {"z_unknown": [1, 2], "push_sessions": true}, "alpha": {"b": 1, "a": 2}}"#,
    );
    assert_success(
        &config(&env, &["set", "checkpoints.primary.type", "git-refs"]),
        &["set"],
    );
    assert_success(
        &config(&env, &["set", "strategy_options.checkpoint_gc_days", "14"]),
        &["set"],
    );
    let text = String::from_utf8(read(&env, ".entire/settings.json").unwrap()).unwrap();
    let doc: Value = serde_json::from_str(&text).unwrap();
    let top: Vec<&String> = doc.as_object().unwrap().keys().collect();
    assert_eq!(
        top,
        [
            "zeta",
            "enabled",
            "strategy_options",
            "alpha",
            "checkpoints"
        ]
    );
    let opts: Vec<&String> = doc["strategy_options"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(opts, ["z_unknown", "push_sessions", "checkpoint_gc_days"]);
    assert_eq!(doc["checkpoints"], json!({"primary": {"type": "git-refs"}}));
    assert_eq!(doc["strategy_options"]["checkpoint_gc_days"], json!(14));
    assert_eq!(doc["alpha"], json!({"b": 1, "a": 2}));
    // A command honours the set value: the git-refs primary mints ULIDs, and gc is on.
    assert_eq!(listed(&env, &[])["primary"], "git-refs");

    // Unset keeps the order of the rest.
    assert_success(
        &config(&env, &["unset", "strategy_options.push_sessions"]),
        &["unset"],
    );
    let doc = read_json(&env, ".entire/settings.json");
    let opts: Vec<&String> = doc["strategy_options"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(opts, ["z_unknown", "checkpoint_gc_days"]);

    // Unset of a missing key: says so, exit 1 (`git config --unset` fails too), file unchanged.
    let before = read(&env, ".entire/settings.json");
    let out = config(&env, &["unset", "strategy_options.push_sessions"]);
    let err = assert_code(&out, 1, "unset of a missing key");
    assert!(
        err.contains("strategy_options.push_sessions is not set in .entire/settings.json"),
        "{err}"
    );
    assert_eq!(read(&env, ".entire/settings.json"), before);
}

#[test]
fn invalid_sets_are_refused_and_leave_the_file_byte_identical() {
    let env = TestEnv::new();
    let original = b"{\"strategy_options\": {\"push_sessions\": true},   \"other\": \"x\"}";
    env.write_file(".entire/settings.json", original);
    // Each command as its arguments joined by `|`, and what its message must say.
    for (command, message) in [
        ("set|checkpoints.primary.type|fs", "cannot be the primary"),
        ("set|checkpoints.primary.type|nosuchstore", "nosuchstore"),
        (
            "set|strategy_options.checkpoint_remote.provider|gitbucket",
            "checkpoint_remote",
        ),
        (
            "set|strategy_options.checkpoint_gc_days|-3",
            "checkpoint_gc_days",
        ),
        (
            "set|strategy_options.push_sessions|maybe",
            "strategy_options.push_sessions must be true or false",
        ),
        (
            "set|redaction.rules|[{\"name\": \"all\", \"pattern\": \".*\"}]",
            "all",
        ),
        (
            "set|strategy_options.push_sessions.deeper|1",
            "strategy_options.push_sessions is not an object",
        ),
        ("set||1", "empty"),
        ("set|a..b|1", "empty"),
        ("unset|", "empty"),
    ] {
        let args: Vec<&str> = command.split('|').collect();
        let out = config(&env, &args);
        let err = assert_code(&out, 2, &format!("{args:?}"));
        assert!(err.contains(message), "{args:?}: {err}");
        assert!(
            err.contains("nothing changed") || err.contains("empty"),
            "{args:?}: {err}"
        );
        assert_eq!(
            read(&env, ".entire/settings.json").as_deref(),
            Some(&original[..]),
            "{args:?} left the file as it was"
        );
    }
    // A file that does not parse is not rewritten.
    env.write_file(".entire/settings.json", b"{,}");
    let out = config(&env, &["set", "strategy_options.push_sessions", "true"]);
    let err = assert_code(&out, 1, "set into a file that does not parse");
    assert!(err.contains("is not valid JSON"), "{err}");
    assert_eq!(
        read(&env, ".entire/settings.json").as_deref(),
        Some(&b"{,}"[..])
    );
}

/// A misspelt key is refused with the closest known ones (as `git config` refuses a key without
/// a section), exit 2, nothing written; `--force` sets it; a key of the reference is known.
#[test]
fn unknown_keys_are_refused_with_the_closest_known_one_unless_forced() {
    let env = TestEnv::new();
    for (key, offered) in [
        (
            "strategy_options.push_session",
            "did you mean strategy_options.push_sessions?",
        ),
        (
            "push_sessions",
            "did you mean strategy_options.push_sessions?",
        ),
        ("redaction.rule", "did you mean redaction.rules?"),
        (
            "colour",
            "`git entire-checkpoint config` lists the settings",
        ),
    ] {
        let out = config(&env, &["set", key, "false"]);
        let err = assert_code(&out, 2, key);
        assert!(
            err.starts_with(&format!(
                "error: unknown settings key {key}; nothing changed\nhint: "
            )),
            "{key}: {err}"
        );
        assert!(err.contains(offered), "{key}: {err}");
        assert!(err.contains("`config set --force` sets it anyway"), "{err}");
        assert_eq!(read(&env, ".entire/settings.json"), None, "{key}");
        assert!(!env.repo().join(".entire").exists(), "{key}");
    }
    assert_success(
        &config(
            &env,
            &["set", "--force", "strategy_options.push_session", "false"],
        ),
        &["set", "--force"],
    );
    assert_success(&config(&env, &["set", "telemetry", "false"]), &["set"]);
    assert_eq!(
        read_json(&env, ".entire/settings.json"),
        json!({"strategy_options": {"push_session": false}, "telemetry": false})
    );
}

#[test]
fn local_settings_are_set_there_and_ignored_by_git_after_hooks_install() {
    let env = TestEnv::new();
    // A user's own `.entire/.gitignore` is kept; only the missing lines are added.
    env.write_file(".entire/.gitignore", b"# mine\nscratch/\nlogs/");
    env.ok_default(&["hooks", "install"]);
    env.ok_default(&["hooks", "install"]);
    let ignore = String::from_utf8(read(&env, ".entire/.gitignore").unwrap()).unwrap();
    assert_eq!(
        ignore, "# mine\nscratch/\nlogs/\ntmp/\nsettings.local.json\nmetadata/\n",
        "added once, user lines kept"
    );

    assert_success(
        &config(
            &env,
            &[
                "set",
                "--local",
                "strategy_options.filtered_fetches",
                "true",
            ],
        ),
        &["set", "--local"],
    );
    assert_eq!(
        read_json(&env, ".git/entire/settings.local.json"),
        json!({"strategy_options": {"filtered_fetches": true}})
    );
    assert_eq!(
        read(&env, ".entire/settings.json"),
        None,
        "the committed file is untouched"
    );
    assert_eq!(
        setting(&listed(&env, &[]), "strategy_options.filtered_fetches"),
        (json!(true), "settings.local".into())
    );
    let status = env.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("settings.local.json"), "{status}");
    assert!(status.contains("?? .entire/.gitignore"), "{status}");

    assert_success(
        &config(
            &env,
            &["unset", "--local", "strategy_options.filtered_fetches"],
        ),
        &["unset", "--local"],
    );
    assert_eq!(
        read_json(&env, ".git/entire/settings.local.json"),
        json!({"strategy_options": {}})
    );
}

#[test]
fn hooks_install_writes_the_reference_gitignore() {
    let env = TestEnv::new();
    env.ok_default(&["hooks", "install"]);
    assert_eq!(
        String::from_utf8(read(&env, ".entire/.gitignore").unwrap()).unwrap(),
        "tmp/\nsettings.local.json\nmetadata/\nlogs/\n"
    );
    env.write_file(".git/entire/settings.local.json", b"{}");
    let status = env.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("settings.local.json"), "{status}");
}

#[test]
fn push_off_by_a_setting_says_which_setting() {
    let env = TestEnv::new();
    let remote = env.new_bare("origin");
    env.git(&["remote", "add", "origin", crate::env::path_str(&remote)]);
    env.write_file(
        ".entire/settings.json",
        br#"{"strategy_options": {"push_sessions": false}}"#,
    );
    for args in [&["push", "--all", "-vv"][..], &["push"][..]] {
        let out = env.run_default(args);
        assert_success(&out, args);
        let err = stderr(&out);
        assert!(
            err.contains("strategy_options.push_sessions is false in .entire/settings.json"),
            "{args:?}: {err}"
        );
    }
    // -q keeps it quiet.
    let out = env.run_default(&["-q", "push"]);
    assert_success(&out, &["-q", "push"]);
    assert_eq!(stderr(&out), "");
}
