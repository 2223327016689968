//! A sparse checkout whose cone leaves `.entire/` out: the committed settings are read as git
//! holds them (the index), as git reads `.gitmodules` there, never silently the defaults.

use serde_json::Value;

use crate::env::{parse_json, TestEnv};

/// The value and origin `config --json` gives `key` in `dir`.
fn setting(env: &TestEnv, dir: &std::path::Path, key: &str) -> (Value, String) {
    let out = env.ok_primary_in(None, dir, &["config", "--json"]);
    let doc = parse_json(out.as_bytes());
    let entry = doc["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["key"] == key)
        .unwrap_or_else(|| panic!("{key} in {doc}"))
        .clone();
    (
        entry["value"].clone(),
        entry["origin"].as_str().unwrap().to_owned(),
    )
}

#[test]
fn a_sparse_cone_without_entire_still_reads_the_committed_settings() {
    let env = TestEnv::new();
    env.write_file(
        ".entire/settings.json",
        br#"{"strategy_options": {"push_sessions": false}}"#,
    );
    env.write_file("src/lib.txt", b"code\n");
    env.git(&["add", "."]);
    env.git(&["commit", "-q", "-m", "settings and code"]);
    let dir = env.root().join("sparse");
    let (repo, dir_arg) = (env.repo().to_str().unwrap(), dir.to_str().unwrap());
    env.git_in(env.root(), &["clone", "-q", repo, dir_arg]);
    env.git_in(&dir, &["sparse-checkout", "set", "--cone", "src"]);
    assert!(
        !dir.join(".entire").exists(),
        "the cone leaves .entire out of the work tree"
    );

    let key = "strategy_options.push_sessions";
    assert_eq!(
        setting(&env, &dir, key),
        (Value::Bool(false), "settings".into())
    );
    // The work tree's file wins again once the cone takes it in.
    env.git_in(&dir, &["sparse-checkout", "disable"]);
    std::fs::write(
        dir.join(".entire/settings.json"),
        br#"{"strategy_options": {"push_sessions": true}}"#,
    )
    .unwrap();
    assert_eq!(
        setting(&env, &dir, key),
        (Value::Bool(true), "settings".into())
    );
}
