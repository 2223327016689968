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

/// A validator of `docs/schema/<name>` alone: every schema stands on its own (no reference to
/// another file), as a script author would load it.
fn validator(name: &str) -> jsonschema::Validator {
    jsonschema::options()
        .build(&schema(name))
        .unwrap_or_else(|e| panic!("docs/schema/{name} is not a schema on its own: {e}"))
}

/// What a value of one concept is, wherever it appears (docs/cli.md, "One vocabulary").
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A full object id: 40 or 64 lowercase hex digits.
    ObjectId,
    /// A checkpoint ID: 12 lowercase hex digits, or a ULID.
    CheckpointId,
    /// An RFC 3339 time, or null where it is not known.
    Time,
    /// A person: `{name, email}`.
    Person,
    /// A string.
    Text,
    /// A string, or null where there is none.
    OptionalText,
    /// A whole number from 0.
    Count,
    /// A whole number from 0, or null where it is not known.
    OptionalCount,
    /// An array.
    List,
    /// The hooks document of `hooks status --json`, or its list of hooks.
    Hooks,
}

/// One name and one kind per concept: every `--json` output is checked against this table, and
/// no output may use a name of `RETIRED`.
const VOCABULARY: &[(&str, Kind)] = &[
    ("commit", Kind::ObjectId),
    ("checkpoint_id", Kind::CheckpointId),
    ("author", Kind::Person),
    ("authored_at", Kind::Time),
    ("created_at", Kind::Time),
    ("updated_at", Kind::Time),
    ("remote_counted_at", Kind::Time),
    ("subject", Kind::Text),
    ("session_id", Kind::Text),
    ("session_index", Kind::Count),
    ("session_count", Kind::Count),
    ("prompt_count", Kind::Count),
    ("local_count", Kind::Count),
    ("remote_count", Kind::OptionalCount),
    ("prompts", Kind::List),
    ("agent", Kind::OptionalText),
    ("model", Kind::OptionalText),
    ("remote", Kind::OptionalText),
    ("timestamp", Kind::OptionalText),
    ("hooks", Kind::Hooks),
];

/// Names that said one thing in one output and another elsewhere, replaced (CHANGELOG.md).
const RETIRED: &[&str] = &["sha", "author_email", "author_time", "time", "index"];

/// Whether `v` is of `kind`.
fn is_kind(kind: Kind, v: &Value) -> bool {
    let hex = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    match kind {
        Kind::ObjectId => v
            .as_str()
            .is_some_and(|s| (s.len() == 40 || s.len() == 64) && hex(s)),
        Kind::CheckpointId => v.as_str().is_some_and(|s| {
            (s.len() == 12 && hex(s))
                || (s.len() == 26
                    && s.bytes()
                        .all(|b| b.is_ascii_digit() || b.is_ascii_uppercase()))
        }),
        Kind::Time => {
            v.is_null()
                || v.as_str().is_some_and(|s| {
                    s.len() >= 20 && s.as_bytes()[4] == b'-' && s.as_bytes()[10] == b'T'
                })
        }
        Kind::Person => {
            v.as_object().is_some_and(|o| o.len() == 2)
                && v["name"].is_string()
                && v["email"].is_string()
        }
        Kind::Text => v.is_string(),
        Kind::OptionalText => v.is_null() || v.as_str().is_some_and(|s| !s.is_empty()),
        Kind::Count => v.is_u64(),
        Kind::OptionalCount => v.is_null() || v.is_u64(),
        Kind::List => v.is_array(),
        Kind::Hooks => v.is_array() || (v["directory"].is_string() && v["hooks"].is_array()),
    }
}

/// Asserts that every name of [`VOCABULARY`] in `instance` (the output of `what`, validated
/// against `docs/schema/<name>`) has its kind, and that no name of [`RETIRED`] appears. The
/// stored documents `show` prints as they are (its `summary` and `sessions`) keep the
/// reference's keys and values, and are not ours to name; blame's `counts` is keyed by label.
fn assert_vocabulary(name: &str, what: &str, instance: &Value, path: &str) {
    match instance {
        Value::Array(items) => {
            for (i, v) in items.iter().enumerate() {
                assert_vocabulary(name, what, v, &format!("{path}/{i}"));
            }
        }
        Value::Object(fields) => {
            for (key, v) in fields {
                let at = format!("{path}/{key}");
                assert!(
                    !RETIRED.contains(&key.as_str()),
                    "{what}: {at} is a retired name"
                );
                if let Some((_, kind)) = VOCABULARY.iter().find(|(k, _)| k == key) {
                    assert!(is_kind(*kind, v), "{what}: {at} should be {kind:?}: {v}");
                }
                // `counts` maps each blame label to a number; they are labels, not names.
                let stored = name == "show.json" && matches!(key.as_str(), "summary" | "sessions");
                if !stored && key != "counts" {
                    assert_vocabulary(name, what, v, &at);
                }
            }
        }
        _ => {}
    }
}

/// Asserts that `instance` (the output of `what`) is valid against `docs/schema/<name>`, and
/// speaks the one vocabulary ([`assert_vocabulary`]).
pub fn assert_valid(name: &str, what: &str, instance: &Value) {
    assert_vocabulary(name, what, instance, "");
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

/// `stats --json` without and with each `--by`, and `verify --json` passing, and failing on
/// a lost checkpoint and (`--require`) on a commit carrying a session's lines without a link.
#[test]
fn stats_and_verify_outputs_match_their_schemas() {
    let env = TestEnv::new();
    crate::blame::history(&env, Store::Refs);
    for by in [None, Some("file"), Some("author"), Some("agent")] {
        let mut args = vec!["stats", "main~3..main", "--json"];
        args.extend(by.iter().flat_map(|b| ["--by", b]));
        let stats = env.ok_json(Store::Refs, &args);
        assert_valid("stats.json", &args.join(" "), &stats);
    }
    let ok = env.ok_json(Store::Refs, &["verify", "main~3..main", "--json"]);
    assert_valid("verify.json", "verify --json", &ok);
    // The person's commit of the history holds no line a session wrote: add one that does.
    let head = env.git(&["show", &format!("HEAD:{}", crate::blame::FILE)]);
    crate::blame::commit(&env, &format!("{head}\treturn \"hi\"\n"), "copied");
    let message = "lost\n\nEntire-Checkpoint: 0badc0ffee42";
    env.git(&["commit", "-q", "--allow-empty", "-m", message]);
    let out = env.run(
        Store::Refs,
        &["verify", "main~5..main", "--require", "--json"],
    );
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let failing = parse_json(&out.stdout);
    assert_valid("verify.json", "verify --require --json (failing)", &failing);
    let problems: Vec<&Value> = failing["failures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["problems"][0]["problem"])
        .collect();
    assert_eq!(problems, ["not_found", "unlinked"], "{failing:#}");
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

/// Every schema of `docs/schema/` is validated against real output by some test: a schema no
/// test uses could drift from the output it describes.
#[test]
fn every_schema_is_checked_against_real_output() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut sources = String::new();
    for entry in std::fs::read_dir(root.join("tests/cli")).unwrap() {
        // A folder of tests (real_agents/) holds no schema check.
        if let Ok(text) = std::fs::read_to_string(entry.unwrap().path()) {
            sources.push_str(&text);
        }
    }
    for entry in std::fs::read_dir(root.join("docs/schema")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        assert!(
            sources.contains(&format!("\"{name}\"")),
            "docs/schema/{name} is not validated by any test"
        );
        let doc = schema(&name);
        assert!(
            doc["$id"]
                .as_str()
                .is_some_and(|id| id == format!("https://entire-checkpoints.invalid/schema/{name}")),
            "docs/schema/{name}: $id is absolute and names the file"
        );
    }
}
