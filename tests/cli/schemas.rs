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

/// A validator of `docs/schema/<name>`, whose references to the other schemas there
/// (`"$ref": "push.json#/$defs/refusal"`) resolve to those files, offline.
fn validator(name: &str) -> jsonschema::Validator {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/schema");
    let mut resources = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let file = entry.unwrap().file_name().into_string().unwrap();
        if let Some(stem) = file.strip_suffix(".json") {
            resources.push((format!("json-schema:///{stem}.json"), schema(&file)));
        }
    }
    let registry = jsonschema::Registry::new()
        .extend(resources)
        .and_then(|r| r.prepare())
        .unwrap_or_else(|e| panic!("docs/schema: {e}"));
    jsonschema::options()
        .with_registry(&registry)
        .build(&schema(name))
        .unwrap_or_else(|e| panic!("docs/schema/{name} is not a schema: {e}"))
}

/// Asserts that `instance` (the output of `what`) is valid against `docs/schema/<name>`.
pub fn assert_valid(name: &str, what: &str, instance: &Value) {
    let validator = validator(name);
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
    assert_eq!(
        validator("list.json").iter_errors(&changed).count(),
        2,
        "{changed}"
    );
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
    let recorded = env.ok_json_default(&[
        "session",
        "record",
        "--session",
        "staged",
        "--prompt",
        "p",
        "--json",
    ]);
    assert_eq!(recorded["session_id"], "staged", "{recorded}");
    assert_valid("session-record.json", "session record --json", &recorded);
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

#[test]
fn push_and_migrate_json_match_their_schemas_in_every_shape() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let remote = env.bare_remote("origin");
    let pushed = env.ok_json(Store::Refs, &["push", "origin", "--json"]);
    assert_valid("push.json", "push --json", &pushed);
    let cp_ref = crate::env::checkpoint_ref(HEX_ID);
    assert_eq!(pushed["pushed"], serde_json::json!([cp_ref]), "{pushed}");
    assert_eq!(pushed["destination"], "origin");
    assert!(env.checkpoint_tips_in(&remote).contains_key(&cp_ref));
    // Nothing due: the same shape.
    let again = env.ok_json(Store::Refs, &["push", "origin", "--json"]);
    assert_valid("push.json", "push --json (nothing due)", &again);
    assert_eq!(again["due"], 0, "{again}");

    // The git-branch primary pushes the v1 branch, once the remote has a branch.
    write_std(&env, Store::Branch, HEX_ID_2, "sess-1", TRANSCRIPT);
    let deferred = env.ok_json(Store::Branch, &["push", "origin", "--json"]);
    assert_valid("push.json", "push --json (git-branch, deferred)", &deferred);
    assert_eq!(deferred["branch"], "deferred", "{deferred}");
    env.git(&["push", "-q", "origin", "HEAD:refs/heads/main"]);
    let branch = env.ok_json(Store::Branch, &["push", "origin", "--json"]);
    assert_valid("push.json", "push --json (git-branch)", &branch);
    assert_eq!(branch["store"], "git-branch");
    assert_eq!(branch["branch"], "pushed", "{branch}");
    assert!(crate::env::rev_in(&env, &remote, "refs/heads/entire/checkpoints/v1").is_some());

    // migrate: a dry run, then the migration with its push.
    let dry = env.ok_json(Store::Refs, &["migrate", "--dry-run", "--json"]);
    assert_valid("migrate.json", "migrate --dry-run --json", &dry);
    assert_eq!(dry["migrated"], serde_json::json!([HEX_ID_2]), "{dry}");
    assert!(dry["push"].is_null());
    let migrated = env.ok_json(Store::Refs, &["migrate", "--push", "--json"]);
    assert_valid("migrate.json", "migrate --push --json", &migrated);
    let ref_2 = crate::env::checkpoint_ref(HEX_ID_2);
    assert_eq!(
        migrated["push"]["pushed"],
        serde_json::json!([ref_2]),
        "{migrated}"
    );
    assert!(env.checkpoint_tips_in(&remote).contains_key(&ref_2));

    // Pushing turned off: the same shape, naming the file.
    env.ok_default(&["config", "set", "strategy_options.push_sessions", "false"]);
    let off = env.ok_json(Store::Refs, &["push", "origin", "--json"]);
    assert_valid("push.json", "push --json (push_sessions false)", &off);
    assert_eq!(off["disabled_by"], ".entire/settings.json", "{off}");
    assert!(off["destination"].is_null());
}

#[test]
fn blame_and_why_outputs_match_their_schemas() {
    let env = TestEnv::new();
    let transcript = concat!(
        r#"{"type":"user","message":{"role":"user","content":"write it"},"timestamp":"2026-01-01T09:00:00Z"}"#,
        "\n",
        r#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"Write","input":{"file_path":"/p/a.go","content":"package a\n"}}]},"timestamp":"2026-01-01T09:00:01Z"}"#,
        "\n",
    );
    write_std(&env, Store::Refs, HEX_ID, "sess-1", transcript.as_bytes());
    env.write_file("a.go", b"package a\n}\n");
    env.git(&["add", "a.go"]);
    let message = format!("a\n\nEntire-Checkpoint: {HEX_ID}\nEntire-Checkpoint: {HEX_ID_2}");
    env.git(&["commit", "-q", "-m", &message]);
    let blame = env.ok_json(Store::Refs, &["blame", "a.go", "--json"]);
    assert_valid("blame.json", "blame --json", &blame);
    let rev = env.ok_json(Store::Refs, &["blame", "README.md", "HEAD", "--json"]);
    assert_valid("blame.json", "blame <rev> --json", &rev);
    for target in ["a.go:1", "a.go:2", "README.md:1"] {
        let why = env.ok_json(Store::Refs, &["why", target, "--json"]);
        assert_valid("why.json", &format!("why {target} --json"), &why);
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
