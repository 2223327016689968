//! Every `--json` output that has a JSON Schema under `docs/schema/` is validated against it,
//! on outputs of the real commands in the states that change their shape (both stores, a
//! remote-only entry, gc on and off, a chained hook, a fetch that finds nothing).

use serde_json::Value;

use crate::env::{assert_success, parse_json, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, ULID_ID};

/// The schema `docs/schema/<name>`.
fn schema(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/schema")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Asserts that `instance` (the output of `what`) is valid against `docs/schema/<name>`.
fn assert_valid(name: &str, what: &str, instance: &Value) {
    let schema = schema(name);
    let validator = jsonschema::validator_for(&schema)
        .unwrap_or_else(|e| panic!("docs/schema/{name} is not a schema: {e}"));
    let errors: Vec<String> = validator
        .iter_errors(instance)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what} does not match docs/schema/{name}:\n{}\n{instance:#}",
        errors.join("\n")
    );
}

#[test]
fn json_outputs_match_their_schemas() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, Store::Refs, ULID_ID, "sess-1", TRANSCRIPT);
    write_std(&env, Store::Branch, HEX_ID_2, "sess-1", TRANSCRIPT);
    env.ok_default(&["hooks", "install"]);
    let remote = env.bare_remote("origin");
    env.ok(Store::Refs, &["push", "origin"]);

    let list = env.ok_json(Store::Refs, &["list", "--json"]);
    assert_valid("list.json", "list --json", &list);
    // The schemas are strict enough to catch a changed shape.
    let mut changed = list.clone();
    changed[0]["store"] = "git-notes".into();
    changed[0]["new_key"] = true.into();
    let validator = jsonschema::validator_for(&schema("list.json")).unwrap();
    assert_eq!(validator.iter_errors(&changed).count(), 2, "{changed}");
    for id in [HEX_ID, ULID_ID, HEX_ID_2] {
        assert_valid(
            "show.json",
            "show --json",
            &env.ok_json(Store::Refs, &["show", id, "--json"]),
        );
        assert_valid(
            "log.json",
            "log --json",
            &env.ok_json(Store::Refs, &["log", id, "--json"]),
        );
    }
    let hooks = env.ok_default(&["hooks", "status", "--json"]);
    assert_valid(
        "hooks-status.json",
        "hooks status --json",
        &parse_json(hooks.as_bytes()),
    );
    for args in [
        &["gc", "--json"][..],
        &["gc", "--json", "--dry-run", "--keep-days", "0"],
    ] {
        let out = env.run(Store::Refs, args);
        assert_success(&out, args);
        assert_valid("gc.json", &args.join(" "), &parse_json(&out.stdout));
    }

    for (schema_name, args) in [
        ("config.json", &["config", "--json"][..]),
        ("status.json", &["status", "--json"]),
        ("session-list.json", &["session", "list", "--json"]),
    ] {
        let out = env.run(Store::Refs, args);
        assert_success(&out, args);
        assert_valid(schema_name, &args.join(" "), &parse_json(&out.stdout));
    }
    env.ok_default(&["session", "record", "--session", "staged", "--prompt", "p"]);
    let staged = env.ok_json(Store::Refs, &["session", "list", "--json"]);
    assert!(staged.as_array().is_some_and(|a| !a.is_empty()), "{staged}");
    assert_valid("session-list.json", "session list --json", &staged);
    // doctor exits 1 while a problem remains; its JSON is the same either way.
    std::fs::remove_file(env.repo().join(".git/hooks/post-rewrite")).unwrap();
    let doctor = env.run(Store::Refs, &["doctor", "--json"]);
    let doctor = parse_json(&doctor.stdout);
    assert!(
        doctor["problems"].as_u64().is_some_and(|n| n > 0),
        "{doctor}"
    );
    assert_valid("doctor.json", "doctor --json", &doctor);

    let clone = env.clone_of(&remote, "clone", &[]);
    let listed = env.run_in(Store::Refs, &clone, &["list", "--json", "--remote"]);
    assert_success(&listed, &["list", "--remote"]);
    let listed = parse_json(&listed.stdout);
    assert!(
        listed
            .as_array()
            .is_some_and(|a| a.iter().any(|e| e["remote_only"] == true)),
        "a remote-only entry is checked too: {listed}"
    );
    assert_valid("list.json", "list --json --remote", &listed);
    for args in [
        &["origin", HEX_ID, "--json"][..],
        &["origin", "--all", "--json"],
        &["origin", "0badc0ffee00", "--json"],
    ] {
        let out = env.fetch_in(&clone, args);
        assert_valid(
            "entire-fetch.json",
            &format!("entire-fetch {}", args.join(" ")),
            &parse_json(&out.stdout),
        );
    }
}

/// `enable --json` (fresh, then again, with a primary switched), `disable --json`, and
/// `list <revision-range> --json` with a found and a missing checkpoint.
#[test]
fn enable_disable_and_list_range_match_their_schemas() {
    let env = TestEnv::new();
    for args in [
        &["enable", "--json"][..],
        &["enable", "--json"],
        &["enable", "--json", "--store", "git-branch"],
        &["disable", "--json"],
    ] {
        let out = env.run_default(args);
        assert_success(&out, args);
        assert_valid("enable.json", &args.join(" "), &parse_json(&out.stdout));
    }
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    env.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        &format!("linked\n\nEntire-Checkpoint: {HEX_ID}\nEntire-Checkpoint: {ULID_ID}"),
    ]);
    let range = env.ok_json(Store::Refs, &["list", "HEAD~1..HEAD", "--json"]);
    assert_eq!(
        range["commits"][0]["checkpoints"][1]["found"], false,
        "{range}"
    );
    assert_valid("list-range.json", "list <range> --json", &range);
}
