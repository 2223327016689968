//! The checkpoint topology: the `checkpoints` settings block and its environment override, the
//! registry's errors, every rollout state end to end (writes to the primary and each mirror,
//! verified on disk), the `fs` mirror, and kind-based read routing
//! (docs/configuration.md, "The topology"; docs/how-it-works.md, "Where reads look").
//!
//! Unlike most modules, these tests usually leave `ENTIRE_CHECKPOINTS_PRIMARY` unset so that the
//! settings files decide.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::env::{
    assert_code, assert_success, branch_dir, checkpoint_ref, is_hex12, is_ulid, parse_json,
    sha256_hex, stderr, stdout, write_approved_settings, write_settings_text, Store, TestEnv,
    WriteCheckpoint, REFS_PREFIX, V1_BRANCH,
};
use crate::fixtures::{
    strip_v1_prefix, write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2, ULID_ID,
};

const DEFAULT_BLOCK: &str = r#"{"checkpoints": {"primary": {"type": "git-branch"}}}"#;
const PARALLEL: &str =
    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}]}}"#;
const REFS_ONLY: &str = r#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#;
const REFS_FS: &str =
    r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs"}]}}"#;

const REGISTERED: &str = "(registered: fs, git-branch, git-refs)";
const CONFIG_ERROR_PREFIX: &str =
    "error: resolve checkpoints config: invalid checkpoints config in .entire/settings.json: ";

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// `git-entire-checkpoint <args>` with extra environment variables.
fn run_with(env: &TestEnv, vars: &[(&str, &str)], args: &[&str]) -> Output {
    let mut cmd = env.cmd();
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.args(args).output().expect("run git-entire-checkpoint")
}

fn ok_json_with(env: &TestEnv, vars: &[(&str, &str)], args: &[&str]) -> Value {
    let out = run_with(env, vars, args);
    assert_success(&out, args);
    parse_json(&out.stdout)
}

fn config(env: &TestEnv) -> Value {
    env.ok_json_default(&["config", "--json"])
}

fn expected_config(primary: &str, mirrors: &[&str], source: &str, rollout: &str) -> Value {
    json!({"primary": primary, "mirrors": mirrors, "source": source, "rollout": rollout})
}

/// Asserts the four contract fields of `config --json` (extra fields are allowed).
fn assert_config(actual: &Value, expected: &Value, what: &str) {
    for key in ["primary", "mirrors", "source", "rollout"] {
        assert_eq!(
            actual[key], expected[key],
            "{what}: config --json field {key:?}\nactual: {actual}\nexpected: {expected}"
        );
    }
}

/// The write of a session with a transcript, optionally with an explicit ID, the settings
/// deciding the topology.
fn session_write<'e>(
    env: &'e TestEnv,
    id: Option<&str>,
    session: &str,
    transcript: &[u8],
) -> WriteCheckpoint<'e> {
    let file = env.input_file(
        &format!("t-{session}-{}.jsonl", id.unwrap_or("minted")),
        transcript,
    );
    let write = env
        .write(None, session)
        .transcript(&file)
        .prompt("do the thing")
        .files_touched(&["a.go"]);
    match id {
        Some(id) => write.id(id),
        None => write,
    }
}

/// A write with the settings deciding the topology; returns the printed ID.
fn write(env: &TestEnv, id: Option<&str>, session: &str, transcript: &[u8]) -> String {
    let args = session_write(env, id, session, transcript);
    let refs = args.argv();
    let out = env.run_default(&refs);
    assert_success(&out, &refs);
    let printed = stdout(&out);
    let id_line = printed.trim_end_matches('\n');
    assert_eq!(printed, format!("{id_line}\n"), "write prints the ID line");
    if let Some(id) = id {
        assert_eq!(id_line, id);
    }
    id_line.to_string()
}

/// The fs mirror's default directory, `<git-common-dir>/entire/fs-mirror`.
fn fs_default_dir(env: &TestEnv) -> PathBuf {
    env.common_dir().join("entire").join("fs-mirror")
}

/// Every regular file under `dir`, as sorted `/`-separated relative paths.
fn files_under(dir: &Path) -> Vec<String> {
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("read {dir:?}: {e}")) {
            let entry = entry.expect("dir entry");
            let path = entry.path();
            let ft = entry.file_type().expect("file type");
            if ft.is_dir() {
                walk(base, &path, out);
            } else {
                let rel = path.strip_prefix(base).expect("under base");
                out.push(
                    rel.components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect::<Vec<_>>()
                        .join("/"),
                );
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

/// Every blob path of the tree at `spec`, sorted (`git ls-tree -r`).
fn tree_files(env: &TestEnv, spec: &str) -> Vec<String> {
    let mut v: Vec<String> = env
        .git(&["ls-tree", "-r", "--name-only", spec])
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

/// Asserts that `<dir>/<id>/` holds exactly the files of the git-refs checkpoint `id`, with the
/// same bytes (`git cat-file -p <ref>:<path>`).
fn assert_fs_matches_ref(env: &TestEnv, dir: &Path, id: &str) {
    let cp_dir = dir.join(id);
    assert!(cp_dir.is_dir(), "fs mirror directory {cp_dir:?} missing");
    let r = checkpoint_ref(id);
    let expected = tree_files(env, &r);
    for required in [
        "metadata.json",
        "0/metadata.json",
        "0/full.jsonl",
        "0/content_hash.txt",
    ] {
        assert!(
            expected.iter().any(|f| f == required),
            "{r} lacks {required}: {expected:?}"
        );
    }
    assert_eq!(
        files_under(&cp_dir),
        expected,
        "fs mirror files of {id} vs tree of {r}"
    );
    for f in &expected {
        let git_bytes = env.git_bytes(&["cat-file", "-p", &format!("{r}:{f}")]);
        let fs_bytes = std::fs::read(cp_dir.join(f)).expect("read fs mirror file");
        assert_eq!(
            fs_bytes,
            git_bytes,
            "fs mirror {id}/{f} differs from {r}:{f}:\nfs:  {}\ngit: {}",
            String::from_utf8_lossy(&fs_bytes),
            String::from_utf8_lossy(&git_bytes)
        );
    }
}

/// Asserts that the v1 copy of `id` is the git-refs copy spliced under `<id[:2]>/<id[2:]>/`:
/// identical session subtree, root summary equal except for the path prefixes.
fn assert_branch_mirrors_ref(env: &TestEnv, id: &str) {
    let dir = branch_dir(id);
    let r = checkpoint_ref(id);
    assert!(
        env.rev(&format!("{V1_BRANCH}:{dir}")).is_some(),
        "{id} not on the v1 branch at {dir}/"
    );
    assert_eq!(
        env.rev(&format!("{V1_BRANCH}:{dir}/0")),
        env.rev(&format!("{r}:0")),
        "session subtree 0 of {id} differs between v1 and refs"
    );
    let branch_root = env.json(Store::Branch, id, "metadata.json");
    for entry in branch_root["sessions"].as_array().expect("sessions") {
        let meta = entry["metadata"].as_str().expect("metadata path");
        assert!(
            meta.starts_with(&format!("/{dir}/")),
            "v1 session paths are prefixed with /{dir}/: {meta}"
        );
    }
    let refs_root = env.json(Store::Refs, id, "metadata.json");
    assert_eq!(
        strip_v1_prefix(branch_root, id),
        refs_root,
        "root metadata.json of {id}: v1 (prefix stripped) vs refs"
    );
}

fn show(env: &TestEnv, id: &str) -> Value {
    env.ok_json_default(&["show", id, "--json", "--no-fetch"])
}

fn list_entries(env: &TestEnv) -> Vec<Value> {
    env.ok_json_default(&["list", "--json"])
        .as_array()
        .expect("list --json is an array")
        .clone()
}

fn list_ids_and_stores(entries: &[Value]) -> Vec<(String, String)> {
    entries
        .iter()
        .map(|e| {
            (
                e["checkpoint_id"].as_str().expect("id").to_string(),
                e["store"].as_str().expect("store").to_string(),
            )
        })
        .collect()
}

fn input(env: &TestEnv, name: &str, v: &Value) -> String {
    env.input_file(name, v.to_string().as_bytes())
        .to_str()
        .expect("utf-8 path")
        .to_string()
}

/// Asserts that nothing was written: no checkpoint refs, no v1 branch, no fs mirror directory.
fn assert_nothing_written(env: &TestEnv, what: &str) {
    assert_eq!(env.checkpoint_refs(), Vec::<String>::new(), "{what}: refs");
    assert_eq!(env.rev(V1_BRANCH), None, "{what}: v1 branch");
    assert!(!fs_default_dir(env).exists(), "{what}: fs mirror dir");
}

// ---------------------------------------------------------------------------------------------
// Settings resolution and `config --json` (docs/configuration.md, "The topology")
// ---------------------------------------------------------------------------------------------

#[test]
fn config_without_settings_is_the_default() {
    let env = TestEnv::new();
    assert_config(
        &config(&env),
        &expected_config("git-branch", &[], "default", "default"),
        "no settings",
    );
    let human = env.ok_default(&["config"]);
    assert!(
        human.contains("git-branch") && human.contains("default"),
        "human config output names the primary and the rollout:\n{human}"
    );
}

#[test]
fn config_reports_every_rollout_state_from_settings() {
    let cases: &[(&str, Value)] = &[
        (
            DEFAULT_BLOCK,
            expected_config("git-branch", &[], "settings", "default"),
        ),
        (
            PARALLEL,
            expected_config("git-refs", &["git-branch"], "settings", "parallel"),
        ),
        (
            REFS_ONLY,
            expected_config("git-refs", &[], "settings", "refs-only"),
        ),
        (
            REFS_FS,
            expected_config("git-refs", &["fs"], "settings", "custom"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"type": "fs"}]}}"#,
            expected_config("git-refs", &["git-branch", "fs"], "settings", "custom"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs"}, {"type": "git-branch"}]}}"#,
            expected_config("git-refs", &["fs", "git-branch"], "settings", "custom"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-branch"}, "mirrors": [{"type": "git-refs"}]}}"#,
            expected_config("git-branch", &["git-refs"], "settings", "custom"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-branch"}, "mirrors": [{"type": "fs", "config": {"dir": "out"}}]}}"#,
            expected_config("git-branch", &["fs"], "settings", "custom"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": []}}"#,
            expected_config("git-refs", &[], "settings", "refs-only"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs", "config": {"opaque": [1, {"x": null}]}}, "mirrors": [{"type": "git-branch", "config": {"ignored": true}}]}}"#,
            expected_config("git-refs", &["git-branch"], "settings", "parallel"),
        ),
        (
            r#"{"enabled": true, "strategy_options": {"push_sessions": false}, "checkpoints": {"primary": {"type": "git-refs"}}}"#,
            expected_config("git-refs", &[], "settings", "refs-only"),
        ),
    ];
    for (text, expected) in cases {
        let env = TestEnv::new();
        write_approved_settings(&env, text);
        assert_config(&config(&env), expected, text);
        let status = env.ok_json_default(&["status", "--json"]);
        assert_eq!(status["primary"], expected["primary"], "status of {text}");
        assert_eq!(status["mirrors"], expected["mirrors"], "status of {text}");
    }
}

#[test]
fn local_block_replaces_the_base_block_wholesale() {
    let env = TestEnv::new();
    write_approved_settings(
        &env,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"type": "fs"}]}}"#,
    );
    write_settings_text(&env, "settings.local.json", REFS_ONLY);
    assert_config(
        &config(&env),
        &expected_config("git-refs", &[], "settings.local", "refs-only"),
        "local refs-only over base with mirrors",
    );
    // The dropped mirrors really receive nothing.
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    assert!(is_ulid(&id), "git-refs primary mints a ULID: {id}");
    assert!(env.rev(&checkpoint_ref(&id)).is_some());
    assert_eq!(env.rev(V1_BRANCH), None, "base mirror git-branch dropped");
    assert!(!fs_default_dir(&env).exists(), "base mirror fs dropped");
}

#[test]
fn local_block_can_select_the_branch_over_a_refs_base() {
    let env = TestEnv::new();
    write_approved_settings(&env, PARALLEL);
    write_settings_text(&env, "settings.local.json", DEFAULT_BLOCK);
    assert_config(
        &config(&env),
        &expected_config("git-branch", &[], "settings.local", "default"),
        "local git-branch over base parallel",
    );
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    assert!(is_hex12(&id), "git-branch primary mints hex: {id}");
    assert!(env.exists(Store::Branch, &id, "metadata.json"));
    assert_eq!(env.checkpoint_refs(), Vec::<String>::new());
}

#[test]
fn invalid_base_block_is_ignored_when_the_local_block_is_valid() {
    let env = TestEnv::new();
    write_approved_settings(
        &env,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirorrs": [{"type": "git-branch"}]}}"#,
    );
    write_settings_text(&env, "settings.local.json", PARALLEL);
    assert_config(
        &config(&env),
        &expected_config("git-refs", &["git-branch"], "settings.local", "parallel"),
        "valid local over invalid base",
    );
}

#[test]
fn local_file_without_a_block_falls_back_to_the_base_file() {
    for local in [
        r#"{"strategy_options": {"push_sessions": false}}"#,
        "{ this is not json",
        r#"{"checkpoints": null}"#,
    ] {
        let env = TestEnv::new();
        write_approved_settings(&env, PARALLEL);
        write_settings_text(&env, "settings.local.json", local);
        assert_config(
            &config(&env),
            &expected_config("git-refs", &["git-branch"], "settings", "parallel"),
            &format!("local file {local:?}"),
        );
    }
}

/// Each fail-soft case resolves to the git-branch default, and a write really goes there.
fn assert_fail_soft(env: &TestEnv, what: &str) {
    assert_config(
        &config(env),
        &expected_config("git-branch", &[], "default", "default"),
        what,
    );
    let id = write(env, None, "sess-1", TRANSCRIPT);
    assert!(is_hex12(&id), "{what}: default primary mints hex, got {id}");
    assert!(
        env.exists(Store::Branch, &id, "0/full.jsonl"),
        "{what}: written to the v1 branch"
    );
    assert_eq!(
        env.checkpoint_refs(),
        Vec::<String>::new(),
        "{what}: no refs"
    );
}

#[test]
fn unusable_settings_files_fall_back_to_the_default() {
    // A syntax error is not among them: reads go on without the file but writes refuse
    // (tests/cli/settings_errors.rs).
    let cases = [
        ("not an object", "[1, 2, 3]"),
        ("empty file", ""),
        ("no checkpoints key", r#"{"enabled": true}"#),
        ("checkpoints null", r#"{"checkpoints": null}"#),
        (
            "unrelated malformed field",
            r#"{"strategy_options": 5, "enabled": "yes"}"#,
        ),
    ];
    for (what, text) in cases {
        let env = TestEnv::new();
        write_approved_settings(&env, text);
        assert_fail_soft(&env, what);
    }
}

/// A settings file of mode 000: unreadable, so the default, for a user; root reads through
/// permissions (as CI runs), and for root the file is read like any other.
#[test]
fn settings_file_of_mode_000_falls_back_to_the_default_unless_it_can_be_read() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let path = env.write_file(".entire/settings.json", REFS_ONLY.as_bytes());
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&path).is_err() {
        assert_fail_soft(&env, "settings file of mode 000");
    } else {
        assert_config(
            &config(&env),
            &expected_config("git-refs", &[], "settings", "refs-only"),
            "settings file of mode 000, read by root",
        );
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
}

/// A settings path that exists but that no one, root included, can open for reading: a Unix
/// socket (`open` fails with `ENXIO`).
#[test]
fn unreadable_settings_file_falls_back_to_the_default() {
    let env = TestEnv::new();
    let path = env.repo().join(".entire/settings.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _socket = std::os::unix::net::UnixListener::bind(&path)
        .unwrap_or_else(|e| panic!("bind a socket at {}: {e}", path.display()));
    assert!(
        std::fs::read(&path).is_err(),
        "a socket cannot be read as a file"
    );
    assert_fail_soft(&env, "unreadable settings file (a socket)");
}

#[test]
fn settings_path_that_is_a_directory_falls_back_to_the_default() {
    let env = TestEnv::new();
    std::fs::create_dir_all(env.repo().join(".entire/settings.json")).unwrap();
    std::fs::create_dir_all(env.repo().join(".git/entire/settings.local.json")).unwrap();
    assert_fail_soft(&env, "settings files are directories");
}

#[test]
fn settings_symlink_escaping_dot_entire_is_ignored() {
    let env = TestEnv::new();
    let outside = env.input_file("outside-settings.json", REFS_ONLY.as_bytes());
    std::fs::create_dir_all(env.repo().join(".entire")).unwrap();
    std::os::unix::fs::symlink(&outside, env.repo().join(".entire/settings.json")).unwrap();
    // Also a relative escape, through the work tree.
    env.write_file("elsewhere.json", PARALLEL.as_bytes());
    std::os::unix::fs::symlink(
        "../elsewhere.json",
        env.repo().join(".entire/settings.local.json"),
    )
    .unwrap();
    assert_fail_soft(&env, "symlinks escaping .entire/");
}

#[test]
fn a_settings_symlink_inside_dot_entire_is_not_followed() {
    // Not even inside `.entire/`: a checkout makes the link, so its target is whatever the
    // committer chose (docs/security.md, guarantee 1). One warning names it.
    let env = TestEnv::new();
    env.write_file(".entire/real-settings.json", REFS_ONLY.as_bytes());
    for name in ["settings.json", "settings.local.json"] {
        std::os::unix::fs::symlink("real-settings.json", env.repo().join(".entire").join(name))
            .unwrap();
    }
    let out = run_with(&env, &[], &["config", "--json"]);
    assert_success(&out, &["config", "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    for name in ["settings.json", "settings.local.json"] {
        assert_eq!(
            err.matches(&format!(".entire/{name} is ignored: it is a symbolic link"))
                .count(),
            1,
            "{err}"
        );
    }
    assert_fail_soft(&env, "symlinks inside .entire/");
}

#[test]
fn settings_are_read_from_the_work_tree_root_when_run_in_a_subdirectory() {
    let env = TestEnv::new();
    write_approved_settings(&env, PARALLEL);
    std::fs::create_dir_all(env.repo().join("sub/dir")).unwrap();
    let out = env
        .cmd()
        .current_dir(env.repo().join("sub/dir"))
        .args(["config", "--json"])
        .output()
        .unwrap();
    assert_success(&out, &["config --json (subdirectory)"]);
    assert_config(
        &parse_json(&out.stdout),
        &expected_config("git-refs", &["git-branch"], "settings", "parallel"),
        "from a subdirectory",
    );
}

// ---------------------------------------------------------------------------------------------
// Invalid blocks are errors, and nothing is written
// ---------------------------------------------------------------------------------------------

/// Runs a write and `config` with the given settings; both must fail with exit 1; returns the
/// write's stderr. Asserts nothing was written.
fn assert_settings_rejected(text: &str, local: bool) -> String {
    let env = TestEnv::new();
    if local {
        write_settings_text(&env, "settings.local.json", text);
    } else {
        write_approved_settings(&env, text);
    }
    let args = session_write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    let refs = args.argv();
    let out = env.run_default(&refs);
    let err = assert_code(&out, 1, &format!("write with settings {text}"));
    assert!(stdout(&out).is_empty(), "no ID printed: {}", stdout(&out));
    assert_nothing_written(&env, text);
    let cfg = env.run_default(&["config", "--json"]);
    let cfg_err = assert_code(&cfg, 1, &format!("config with settings {text}"));
    assert_eq!(
        cfg_err.lines().find(|l| l.starts_with("error: ")),
        err.lines().find(|l| l.starts_with("error: ")),
        "config and write report the same error"
    );
    err
}

#[test]
fn unknown_field_in_block_is_an_error() {
    let err = assert_settings_rejected(
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirorrs": [{"type": "git-branch"}]}}"#,
        false,
    );
    assert!(err.starts_with(CONFIG_ERROR_PREFIX), "stderr: {err}");
    assert!(err.contains("mirorrs"), "names the field: {err}");
    assert!(err.contains("newer CLI"), "hints at a newer CLI: {err}");
}

#[test]
fn unknown_field_inside_a_backend_is_an_error() {
    for text in [
        r#"{"checkpoints": {"primary": {"type": "git-refs", "typo": 1}}}"#,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "cfg": {}}]}}"#,
    ] {
        let err = assert_settings_rejected(text, false);
        assert!(err.starts_with(CONFIG_ERROR_PREFIX), "{text}: stderr {err}");
        assert!(err.contains("newer CLI"), "{text}: {err}");
    }
}

#[test]
fn wrong_types_in_block_are_errors() {
    for text in [
        r#"{"checkpoints": {"primary": {"type": 7}}}"#,
        r#"{"checkpoints": {"primary": "git-refs"}}"#,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": {"type": "git-branch"}}}"#,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": ["git-branch"]}}"#,
        r#"{"checkpoints": "git-refs"}"#,
    ] {
        let err = assert_settings_rejected(text, false);
        assert!(err.starts_with(CONFIG_ERROR_PREFIX), "{text}: stderr {err}");
        assert!(err.contains("newer CLI"), "{text}: {err}");
    }
}

#[test]
fn invalid_local_block_names_the_local_file() {
    let env_text = r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirorrs": []}}"#;
    let err = assert_settings_rejected(env_text, true);
    assert!(
        err.starts_with(
            "error: resolve checkpoints config: invalid checkpoints config in .git/entire/settings.local.json: "
        ),
        "stderr: {err}"
    );
}

#[test]
fn invalid_local_block_is_not_rescued_by_a_valid_base() {
    let env = TestEnv::new();
    write_approved_settings(&env, REFS_ONLY);
    write_settings_text(
        &env,
        "settings.local.json",
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "x": 1}}"#,
    );
    let out = env.run_default(&["config", "--json"]);
    let err = assert_code(&out, 1, "invalid local block over a valid base");
    assert!(err.contains(".git/entire/settings.local.json"), "{err}");
}

#[test]
fn missing_primary_type_is_an_error() {
    for text in [
        r#"{"checkpoints": {"primary": {}}}"#,
        r#"{"checkpoints": {"primary": {"type": ""}}}"#,
        r#"{"checkpoints": {"mirrors": [{"type": "git-branch"}]}}"#,
        r#"{"checkpoints": {}}"#,
    ] {
        let err = assert_settings_rejected(text, false);
        assert!(
            err.contains("checkpoints.primary.type is required"),
            "{text}: stderr {err}"
        );
        assert!(
            err.starts_with("error: resolve checkpoints config: "),
            "{text}: stderr {err}"
        );
    }
}

#[test]
fn missing_mirror_type_is_an_error() {
    let err = assert_settings_rejected(
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"config": {}}]}}"#,
        false,
    );
    assert!(
        err.contains("checkpoints.mirrors[1].type is required"),
        "stderr: {err}"
    );
}

// ---------------------------------------------------------------------------------------------
// Registry errors (docs/reliability.md, "Settings and environment")
// ---------------------------------------------------------------------------------------------

#[test]
fn registry_errors_from_settings() {
    let cases: &[(&str, String)] = &[
        (
            r#"{"checkpoints": {"primary": {"type": "nope"}}}"#,
            format!("checkpoints.primary: unknown checkpoint backend type \"nope\" {REGISTERED}"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "fs"}}}"#,
            "checkpoints.primary: checkpoint backend \"fs\" cannot be the primary: only git-backed backends (e.g. \"git-branch\", \"git-refs\") may be the primary".into(),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-refs"}]}}"#,
            "checkpoints.mirrors[0]: backend type \"git-refs\" is already used by the primary or another mirror; each backend type may appear at most once".into(),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-branch"}, "mirrors": [{"type": "git-branch"}]}}"#,
            "checkpoints.mirrors[0]: backend type \"git-branch\" is already used by the primary or another mirror; each backend type may appear at most once".into(),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"type": "git-branch"}]}}"#,
            "checkpoints.mirrors[1]: backend type \"git-branch\" is already used by the primary or another mirror; each backend type may appear at most once".into(),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs"}, {"type": "fs", "config": {"dir": "b"}}]}}"#,
            "checkpoints.mirrors[1]: backend type \"fs\" is already used by the primary or another mirror; each backend type may appear at most once".into(),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "s3"}]}}"#,
            format!("checkpoints.mirrors[0]: unknown checkpoint backend type \"s3\" {REGISTERED}"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"type": "s3"}]}}"#,
            format!("checkpoints.mirrors[1]: unknown checkpoint backend type \"s3\" {REGISTERED}"),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": 5}}]}}"#,
            "checkpoints.mirrors[0]: construct \"fs\" checkpoint backend: ".into(),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"path": "x"}}]}}"#,
            "checkpoints.mirrors[0]: construct \"fs\" checkpoint backend: ".into(),
        ),
        (
            r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"type": "fs", "config": "dir"}]}}"#,
            "checkpoints.mirrors[1]: construct \"fs\" checkpoint backend: ".into(),
        ),
    ];
    for (text, expected) in cases {
        let err = assert_settings_rejected(text, false);
        assert!(
            err.contains(&format!("error: {expected}")),
            "settings {text}:\nexpected stderr to contain {expected:?}\ngot: {err}"
        );
    }
}

#[test]
fn registry_errors_from_the_environment() {
    let cases: &[(&str, &str, String)] = &[
        (
            "nope",
            "",
            format!("checkpoints.primary: unknown checkpoint backend type \"nope\" {REGISTERED}"),
        ),
        (
            "fs",
            "",
            "checkpoints.primary: checkpoint backend \"fs\" cannot be the primary".into(),
        ),
        (
            "git-refs",
            "git-branch, git-refs",
            "checkpoints.mirrors[1]: backend type \"git-refs\" is already used by the primary or another mirror".into(),
        ),
        (
            "git-branch",
            "fs,fs",
            "checkpoints.mirrors[1]: backend type \"fs\" is already used by the primary or another mirror".into(),
        ),
        (
            "git-refs",
            " , s3",
            format!("checkpoints.mirrors[0]: unknown checkpoint backend type \"s3\" {REGISTERED}"),
        ),
    ];
    for (primary, mirrors, expected) in cases {
        let env = TestEnv::new();
        let vars = [
            ("ENTIRE_CHECKPOINTS_PRIMARY", *primary),
            ("ENTIRE_CHECKPOINTS_MIRRORS", *mirrors),
        ];
        let args = session_write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
        let refs = args.argv();
        let out = run_with(&env, &vars, &refs);
        let err = assert_code(&out, 1, &format!("env {primary:?} / {mirrors:?}"));
        assert!(
            err.contains(expected.as_str()),
            "env {primary:?} / {mirrors:?}: expected {expected:?} in:\n{err}"
        );
        assert_nothing_written(&env, &format!("env {primary:?} / {mirrors:?}"));
    }
}

// ---------------------------------------------------------------------------------------------
// Environment override (docs/configuration.md, "The topology")
// ---------------------------------------------------------------------------------------------

#[test]
fn env_primary_replaces_the_settings_block() {
    let env = TestEnv::new();
    write_approved_settings(&env, PARALLEL);
    write_settings_text(&env, "settings.local.json", REFS_FS);
    let v = ok_json_with(
        &env,
        &[("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs")],
        &["config", "--json"],
    );
    assert_config(
        &v,
        &expected_config("git-refs", &[], "env", "refs-only"),
        "env primary only",
    );
    let v = ok_json_with(
        &env,
        &[("ENTIRE_CHECKPOINTS_PRIMARY", "  git-branch\t")],
        &["config", "--json"],
    );
    assert_config(
        &v,
        &expected_config("git-branch", &[], "env", "default"),
        "env primary is trimmed",
    );
}

#[test]
fn env_mirrors_are_split_trimmed_and_empties_dropped() {
    let env = TestEnv::new();
    let cases: &[(&str, &[&str], &str)] = &[
        ("git-branch, fs", &["git-branch", "fs"], "custom"),
        (" git-branch ", &["git-branch"], "parallel"),
        (",git-branch,, ", &["git-branch"], "parallel"),
        ("fs", &["fs"], "custom"),
        ("", &[], "refs-only"),
        (" , ", &[], "refs-only"),
    ];
    for (mirrors, expected, rollout) in cases {
        let v = ok_json_with(
            &env,
            &[
                ("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs"),
                ("ENTIRE_CHECKPOINTS_MIRRORS", mirrors),
            ],
            &["config", "--json"],
        );
        assert_config(
            &v,
            &expected_config("git-refs", expected, "env", rollout),
            &format!("ENTIRE_CHECKPOINTS_MIRRORS={mirrors:?}"),
        );
    }
}

#[test]
fn env_override_skips_an_invalid_settings_file() {
    let env = TestEnv::new();
    write_approved_settings(
        &env,
        r#"{"checkpoints": {"primary": {"type": "nope"}, "mirorrs": 1}}"#,
    );
    let v = ok_json_with(
        &env,
        &[("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs")],
        &["config", "--json"],
    );
    assert_config(
        &v,
        &expected_config("git-refs", &[], "env", "refs-only"),
        "env over an invalid file",
    );
}

#[test]
fn blank_env_primary_is_ignored_even_with_mirrors() {
    let env = TestEnv::new();
    let blank = [
        ("ENTIRE_CHECKPOINTS_PRIMARY", "   "),
        ("ENTIRE_CHECKPOINTS_MIRRORS", "git-branch, fs"),
    ];
    let v = ok_json_with(&env, &blank, &["config", "--json"]);
    assert_config(
        &v,
        &expected_config("git-branch", &[], "default", "default"),
        "blank env, no settings",
    );
    write_approved_settings(&env, REFS_ONLY);
    let v = ok_json_with(&env, &blank, &["config", "--json"]);
    assert_config(
        &v,
        &expected_config("git-refs", &[], "settings", "refs-only"),
        "blank env, settings refs-only",
    );
    let v = ok_json_with(
        &env,
        &[("ENTIRE_CHECKPOINTS_PRIMARY", "")],
        &["config", "--json"],
    );
    assert_eq!(v["source"], json!("settings"), "empty env primary ignored");
    let v = ok_json_with(
        &env,
        &[("ENTIRE_CHECKPOINTS_MIRRORS", "git-branch")],
        &["config", "--json"],
    );
    assert_config(
        &v,
        &expected_config("git-refs", &[], "settings", "refs-only"),
        "mirrors without a primary are ignored",
    );
}

#[test]
fn env_topology_drives_writes_to_every_backend() {
    let env = TestEnv::new();
    write_approved_settings(&env, DEFAULT_BLOCK);
    let vars = [
        ("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs"),
        ("ENTIRE_CHECKPOINTS_MIRRORS", "git-branch, fs"),
    ];
    let args = session_write(&env, None, "sess-1", TRANSCRIPT);
    let refs = args.argv();
    let out = run_with(&env, &vars, &refs);
    assert_success(&out, &refs);
    let id = stdout(&out).trim().to_string();
    assert!(is_ulid(&id), "git-refs primary from env mints a ULID: {id}");
    assert!(env.rev(&checkpoint_ref(&id)).is_some());
    assert_branch_mirrors_ref(&env, &id);
    assert_fs_matches_ref(&env, &fs_default_dir(&env), &id);
}

// ---------------------------------------------------------------------------------------------
// Rollout states end to end
// ---------------------------------------------------------------------------------------------

#[test]
fn rollout_default_writes_hex_to_the_branch_only() {
    let env = TestEnv::new();
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    assert!(is_hex12(&id), "default mints 12-hex: {id}");
    assert!(env.exists(Store::Branch, &id, "0/full.jsonl"));
    assert_eq!(env.blob(Store::Branch, &id, "0/full.jsonl"), TRANSCRIPT);
    assert_eq!(
        env.blob_text(Store::Branch, &id, "0/content_hash.txt"),
        format!("sha256:{}", sha256_hex(TRANSCRIPT))
    );
    assert_eq!(env.checkpoint_refs(), Vec::<String>::new(), "no refs");
    assert!(!fs_default_dir(&env).exists());
    let v = show(&env, &id);
    assert_eq!(v["store"], json!("git-branch"));
    assert_eq!(v["ref"], json!(V1_BRANCH));
    let status = env.ok_json_default(&["status", "--json"]);
    assert_eq!(status["primary"], json!("git-branch"));
    assert_eq!(status["mirrors"], json!([]));
    assert_eq!(status["queued"], json!(0), "a branch write queues no ref");
}

#[test]
fn rollout_default_refuses_a_ulid_and_writes_nothing() {
    let env = TestEnv::new();
    write_approved_settings(&env, DEFAULT_BLOCK);
    let args = session_write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let refs = args.argv();
    let out = env.run_default(&refs);
    let err = assert_code(&out, 1, "ULID under a git-branch primary");
    assert!(err.contains("refusing to write ULID checkpoint"), "{err}");
    assert!(stdout(&out).is_empty());
    assert_nothing_written(&env, "ULID refused");
}

#[test]
fn branch_primary_with_fs_mirror_refuses_a_ulid_everywhere() {
    // A failed primary write skips the mirrors (docs/configuration.md, "The topology").
    let env = TestEnv::new();
    write_approved_settings(
        &env,
        r#"{"checkpoints": {"primary": {"type": "git-branch"}, "mirrors": [{"type": "fs"}]}}"#,
    );
    let args = session_write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let refs = args.argv();
    let out = env.run_default(&refs);
    let err = assert_code(&out, 1, "ULID under git-branch + fs");
    assert!(err.contains("refusing to write ULID checkpoint"), "{err}");
    assert_nothing_written(&env, "ULID refused with an fs mirror");
    assert!(!fs_default_dir(&env).join(ULID_ID).exists());
}

#[test]
fn rollout_parallel_writes_refs_and_the_branch() {
    let env = TestEnv::new();
    write_approved_settings(&env, PARALLEL);
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    assert!(is_ulid(&id), "parallel mints a ULID: {id}");
    let r = checkpoint_ref(&id);
    assert_eq!(env.checkpoint_refs(), vec![r.clone()]);
    assert_eq!(r, format!("{REFS_PREFIX}{}/{id}", &id[24..]));
    assert_eq!(
        env.parents(&env.tip(Store::Refs, &id)),
        Vec::<String>::new()
    );
    assert_eq!(env.blob(Store::Refs, &id, "0/full.jsonl"), TRANSCRIPT);
    // The v1 branch holds the same checkpoint at <id[:2]>/<id[2:]>/.
    assert_eq!(
        env.ls_tree(&format!("{V1_BRANCH}:{}", &id[..2])),
        vec![id[2..].to_string()]
    );
    assert_branch_mirrors_ref(&env, &id);
    assert_eq!(
        env.json(Store::Branch, &id, "metadata.json")["sessions"][0]["transcript"],
        json!(format!("/{}/{}/0/full.jsonl", &id[..2], &id[2..]))
    );
    // Reads are served by refs.
    let v = show(&env, &id);
    assert_eq!(v["store"], json!("git-refs"));
    assert_eq!(v["ref"], json!(r));
    let entries = list_entries(&env);
    assert_eq!(
        list_ids_and_stores(&entries),
        vec![(id.clone(), "git-refs".to_string())],
        "one entry, de-duplicated"
    );
    let status = env.ok_json_default(&["status", "--json"]);
    assert_eq!(status["primary"], json!("git-refs"));
    assert_eq!(status["mirrors"], json!(["git-branch"]));
    assert_eq!(status["queued"], json!(1));
}

#[test]
fn rollout_parallel_second_session_and_hex_id_reach_both_stores() {
    let env = TestEnv::new();
    write_approved_settings(&env, PARALLEL);
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    write(&env, Some(&id), "sess-2", TRANSCRIPT_2);
    assert_eq!(
        env.json(Store::Refs, &id, "metadata.json")["sessions"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        env.rev(&format!("{V1_BRANCH}:{}/1", branch_dir(&id))),
        env.rev(&format!("{}:1", checkpoint_ref(&id))),
        "slot 1 mirrored"
    );
    assert_branch_mirrors_ref(&env, &id);
    // An explicit hex ID under parallel goes to both stores; reads prefer refs.
    write(&env, Some(HEX_ID), "sess-h", TRANSCRIPT);
    assert_branch_mirrors_ref(&env, HEX_ID);
    assert_eq!(show(&env, HEX_ID)["store"], json!("git-refs"));
    let entries = list_entries(&env);
    assert_eq!(entries.len(), 2, "de-duplicated: {entries:?}");
    for e in &entries {
        assert_eq!(e["store"], json!("git-refs"), "{e}");
    }
}

#[test]
fn rollout_refs_only_writes_refs_only() {
    let env = TestEnv::new();
    write_approved_settings(&env, REFS_ONLY);
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    assert!(is_ulid(&id), "refs-only mints a ULID: {id}");
    assert_eq!(env.checkpoint_refs(), vec![checkpoint_ref(&id)]);
    assert_eq!(env.rev(V1_BRANCH), None, "no v1 branch");
    assert!(!fs_default_dir(&env).exists());
    assert_eq!(show(&env, &id)["store"], json!("git-refs"));
    // A hex ID is accepted and lands in refs too.
    write(&env, Some(HEX_ID), "sess-h", TRANSCRIPT_2);
    assert_eq!(env.blob(Store::Refs, HEX_ID, "0/full.jsonl"), TRANSCRIPT_2);
    assert_eq!(env.rev(V1_BRANCH), None, "still no v1 branch");
    assert_eq!(show(&env, HEX_ID)["store"], json!("git-refs"));
    let status = env.ok_json_default(&["status", "--json"]);
    assert_eq!(status["queued"], json!(2));
}

#[test]
fn rollout_custom_refs_with_fs_mirror() {
    let env = TestEnv::new();
    write_approved_settings(&env, REFS_FS);
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    assert!(is_ulid(&id), "{id}");
    assert_eq!(env.rev(V1_BRANCH), None, "no v1 branch");
    let dir = fs_default_dir(&env);
    assert_fs_matches_ref(&env, &dir, &id);
    assert_eq!(
        std::fs::read(dir.join(&id).join("0/full.jsonl")).unwrap(),
        TRANSCRIPT
    );
    // A second session and a rewrite of the first stay in step.
    write(&env, Some(&id), "sess-2", TRANSCRIPT_2);
    assert_fs_matches_ref(&env, &dir, &id);
    write(&env, Some(&id), "sess-1", TRANSCRIPT_2);
    assert_fs_matches_ref(&env, &dir, &id);
    // Reads never come from the mirror: removing the ref makes the checkpoint absent.
    assert_eq!(show(&env, &id)["store"], json!("git-refs"));
    env.git(&["update-ref", "-d", &checkpoint_ref(&id)]);
    let out = env.run_default(&["show", &id, "--json", "--no-fetch"]);
    assert_code(&out, 3, "ULID only in the fs mirror");
}

#[test]
fn rollout_custom_refs_branch_and_fs_with_relative_dir() {
    let env = TestEnv::new();
    write_approved_settings(
        &env,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"type": "fs", "config": {"dir": "mirror-out/cps"}}]}}"#,
    );
    // A mirror inside the work tree must be ignored by git (untrusted::an_fs_mirror_in_the_work_tree_must_be_ignored).
    env.write_file(".gitignore", b"/mirror-out/\n");
    assert_config(
        &config(&env),
        &expected_config("git-refs", &["git-branch", "fs"], "settings", "custom"),
        "three backends",
    );
    // Run from a subdirectory: a relative dir is taken from the work tree root, not the cwd.
    std::fs::create_dir_all(env.repo().join("src/deep")).unwrap();
    let args = session_write(&env, None, "sess-1", TRANSCRIPT);
    let out = env
        .cmd()
        .current_dir(env.repo().join("src/deep"))
        .args(args.argv())
        .output()
        .unwrap();
    assert_success(&out, &["write from a subdirectory"]);
    let id = stdout(&out).trim().to_string();
    assert!(is_ulid(&id), "{id}");
    assert!(env.rev(&checkpoint_ref(&id)).is_some());
    assert_branch_mirrors_ref(&env, &id);
    let dir = env.repo().join("mirror-out/cps");
    assert_fs_matches_ref(&env, &dir, &id);
    assert!(
        !env.repo().join("src/deep/mirror-out").exists(),
        "not relative to the cwd"
    );
    assert!(!fs_default_dir(&env).exists(), "the default dir is unused");
}

#[test]
fn rollout_custom_branch_primary_with_fs_mirror() {
    let env = TestEnv::new();
    let out_dir = env.root().join("abs-fs-mirror");
    // A directory outside the repository only from the per-clone file (the committed one is
    // confined: tests/cli/untrusted.rs).
    write_settings_text(&env, "settings.local.json", &json!({"checkpoints": {"primary": {"type": "git-branch"}, "mirrors": [{"type": "fs", "config": {"dir": out_dir.to_str().unwrap()}}]}})
            .to_string());
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    assert!(is_hex12(&id), "git-branch primary mints hex: {id}");
    assert_eq!(env.checkpoint_refs(), Vec::<String>::new());
    let cp = out_dir.join(&id);
    assert_eq!(std::fs::read(cp.join("0/full.jsonl")).unwrap(), TRANSCRIPT);
    assert_eq!(
        std::fs::read(cp.join("0/metadata.json")).unwrap(),
        env.blob(Store::Branch, &id, "0/metadata.json"),
        "session metadata identical to the v1 copy"
    );
    assert_eq!(
        std::fs::read(cp.join("0/content_hash.txt")).unwrap(),
        env.blob(Store::Branch, &id, "0/content_hash.txt")
    );
    // The fs layout is the git-refs layout: root-relative `/0/...` paths.
    let root: Value = parse_json(&std::fs::read(cp.join("metadata.json")).unwrap());
    assert_eq!(root["sessions"][0]["metadata"], json!("/0/metadata.json"));
    assert_eq!(
        root,
        strip_v1_prefix(env.json(Store::Branch, &id, "metadata.json"), &id)
    );
}

#[test]
fn fs_mirror_defaults_to_the_common_dir_from_a_linked_worktree() {
    let env = TestEnv::new();
    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()]);
    std::fs::create_dir_all(wt.join(".entire")).unwrap();
    std::fs::write(wt.join(".entire/settings.json"), REFS_FS).unwrap();
    env.trust_in(&wt);
    let args = session_write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let out = env
        .cmd()
        .current_dir(&wt)
        .args(args.argv())
        .output()
        .unwrap();
    assert_success(&out, &["write from a linked worktree"]);
    // The main work tree has no settings, so its own resolution is the default; the files
    // must still be in the shared common dir.
    let dir = fs_default_dir(&env);
    assert_eq!(dir, env.repo().join(".git/entire/fs-mirror"));
    assert_fs_matches_ref(&env, &dir, ULID_ID);
    assert!(
        !env.repo().join(".git/worktrees/wt/entire").exists(),
        "not in the worktree's private git dir"
    );
}

#[test]
fn fs_mirror_failure_warns_and_the_primary_write_succeeds() {
    let env = TestEnv::new();
    env.write_file("blocker", b"a regular file\n");
    write_approved_settings(
        &env,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": "blocker/mirror"}}]}}"#,
    );
    let args = session_write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let refs = args.argv();
    let out = env.run_default(&refs);
    assert_success(&out, &refs);
    assert_eq!(stdout(&out), format!("{ULID_ID}\n"));
    let err = stderr(&out);
    assert!(
        err.contains("mirror fs write failed; primary write succeeded"),
        "stderr: {err}"
    );
    assert_eq!(env.blob(Store::Refs, ULID_ID, "0/full.jsonl"), TRANSCRIPT);
    assert_eq!(
        std::fs::read(env.repo().join("blocker")).unwrap(),
        b"a regular file\n"
    );
    // A backfill warns the same way and also succeeds on the primary.
    let f = input(
        &env,
        "summary.json",
        &json!({"intent": "x", "outcome": "y"}),
    );
    let out = env.run_default(&["backfill", "summary", ULID_ID, "--summary", &f]);
    assert_success(&out, &["backfill summary"]);
    assert!(
        stderr(&out).contains("mirror fs write failed; primary write succeeded"),
        "backfill stderr: {}",
        stderr(&out)
    );
    assert_eq!(
        env.json(Store::Refs, ULID_ID, "0/metadata.json")["summary"]["intent"],
        json!("x")
    );
    // -q silences the warning, not the write.
    let args = session_write(&env, Some(ULID_ID), "sess-2", TRANSCRIPT_2);
    let mut refs: Vec<&str> = vec!["-q"];
    refs.extend(args.argv());
    let out = env.run_default(&refs);
    assert_success(&out, &refs);
    assert_eq!(stderr(&out), "", "-q silences the mirror warning");
    assert!(env.exists(Store::Refs, ULID_ID, "1/full.jsonl"));
}

#[test]
fn branch_mirror_failure_warns_and_the_primary_write_succeeds() {
    // A loose ref `refs/heads/entire/checkpoints` makes `.../checkpoints/v1` impossible to
    // create, so the git-branch mirror fails while git-refs succeeds.
    let env = TestEnv::new();
    env.git(&["update-ref", "refs/heads/entire/checkpoints", "HEAD"]);
    write_approved_settings(&env, PARALLEL);
    let args = session_write(&env, None, "sess-1", TRANSCRIPT);
    let refs = args.argv();
    let out = env.run_default(&refs);
    assert_success(&out, &refs);
    let id = stdout(&out).trim().to_string();
    assert!(is_ulid(&id), "{id}");
    assert!(
        stderr(&out).contains("mirror git-branch write failed; primary write succeeded"),
        "stderr: {}",
        stderr(&out)
    );
    assert_eq!(env.blob(Store::Refs, &id, "0/full.jsonl"), TRANSCRIPT);
    assert_eq!(env.rev(V1_BRANCH), None);
    assert_eq!(show(&env, &id)["store"], json!("git-refs"));
    // With git-branch as the primary the same failure fails the write, and skips the mirrors.
    write_approved_settings(
        &env,
        r#"{"checkpoints": {"primary": {"type": "git-branch"}, "mirrors": [{"type": "fs"}]}}"#,
    );
    let args = session_write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    let refs = args.argv();
    let out = env.run_default(&refs);
    assert_code(&out, 1, "git-branch primary cannot write");
    assert!(
        !fs_default_dir(&env).join(HEX_ID).exists(),
        "mirror skipped"
    );
}

// ---------------------------------------------------------------------------------------------
// Backfills reach the mirrors
// ---------------------------------------------------------------------------------------------

#[test]
fn backfills_fan_out_to_branch_and_fs_mirrors() {
    let env = TestEnv::new();
    write_approved_settings(
        &env,
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "git-branch"}, {"type": "fs"}]}}"#,
    );
    let dir = fs_default_dir(&env);
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    write(&env, Some(&id), "sess-2", TRANSCRIPT_2);

    let summary = json!({"intent": "Mirror me", "outcome": "mirrored", "friction": []});
    let f = input(&env, "summary.json", &summary);
    env.ok_default(&[
        "backfill",
        "summary",
        &id,
        "--session",
        "sess-1",
        "--summary",
        &f,
    ]);
    assert_eq!(
        env.json(Store::Refs, &id, "0/metadata.json")["summary"],
        summary
    );
    assert_branch_mirrors_ref(&env, &id);
    assert_fs_matches_ref(&env, &dir, &id);

    let new_transcript = b"{\"type\":\"user\",\"message\":\"replaced\"}\n";
    let t = env.input_file("replaced.jsonl", new_transcript);
    env.ok_default(&[
        "backfill",
        "transcript",
        &id,
        "--session",
        "sess-1",
        "--transcript",
        t.to_str().unwrap(),
    ]);
    assert_eq!(env.blob(Store::Refs, &id, "0/full.jsonl"), new_transcript);
    assert_eq!(env.blob(Store::Branch, &id, "0/full.jsonl"), new_transcript);
    assert_eq!(
        std::fs::read(dir.join(&id).join("0/content_hash.txt")).unwrap(),
        format!("sha256:{}", sha256_hex(new_transcript)).as_bytes()
    );
    assert_branch_mirrors_ref(&env, &id);
    assert_fs_matches_ref(&env, &dir, &id);

    let attribution = json!({"agent_lines": 7, "human_added": 3, "total_committed": 10});
    let a = input(&env, "attr.json", &attribution);
    env.ok_default(&["backfill", "attribution", &id, "--attribution", &a]);
    let root = env.json(Store::Refs, &id, "metadata.json");
    assert_eq!(root["combined_attribution"]["agent_lines"], json!(7));
    assert_eq!(
        env.json(Store::Branch, &id, "metadata.json")["combined_attribution"]["agent_lines"],
        json!(7)
    );
    assert_branch_mirrors_ref(&env, &id);
    assert_fs_matches_ref(&env, &dir, &id);
}

#[test]
fn backfill_of_a_hex_served_by_the_branch_skips_the_mirrors() {
    // Scenario 44: under a git-refs primary a hex checkpoint absent from refs but on v1 is
    // backfilled on v1; the mirrors (here fs) are skipped and no ref is created.
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    write_approved_settings(&env, REFS_FS);
    let before = env.tip(Store::Branch, HEX_ID);
    let f = input(&env, "summary.json", &json!({"intent": "on v1"}));
    env.ok_default(&["backfill", "summary", HEX_ID, "--summary", &f]);
    let after = env.tip(Store::Branch, HEX_ID);
    assert_ne!(before, after, "the v1 branch advanced");
    assert_eq!(env.parents(&after), vec![before]);
    assert_eq!(
        env.json(Store::Branch, HEX_ID, "0/metadata.json")["summary"]["intent"],
        json!("on v1")
    );
    assert_eq!(
        env.checkpoint_refs(),
        Vec::<String>::new(),
        "no ref created"
    );
    assert!(
        !fs_default_dir(&env).join(HEX_ID).exists(),
        "mirrors skipped for a fallback-served backfill"
    );
}

// ---------------------------------------------------------------------------------------------
// Read routing (docs/how-it-works.md, "Where reads look")
// ---------------------------------------------------------------------------------------------

#[test]
fn branch_primary_routing() {
    // Scenario 39: hex from the branch only; a ULID from refs.
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-b", TRANSCRIPT);
    write_std(&env, Store::Refs, ULID_ID, "sess-u", TRANSCRIPT);
    write_std(&env, Store::Refs, HEX_ID_2, "sess-r", TRANSCRIPT);
    write_approved_settings(&env, DEFAULT_BLOCK);
    assert_eq!(show(&env, HEX_ID)["store"], json!("git-branch"));
    let v = show(&env, ULID_ID);
    assert_eq!(v["store"], json!("git-refs"));
    assert_eq!(v["ref"], json!(checkpoint_ref(ULID_ID)));
    // A hex checkpoint that exists only in refs is not read under a git-branch primary.
    let out = env.run_default(&["show", HEX_ID_2, "--json", "--no-fetch"]);
    assert_code(&out, 3, "hex only in refs under a git-branch primary");
    let out = env.run_default(&["cat", HEX_ID_2, "0/full.jsonl"]);
    assert_code(
        &out,
        3,
        "cat of a hex only in refs under a git-branch primary",
    );
    // The same repository under a git-refs primary finds it.
    write_approved_settings(&env, REFS_ONLY);
    assert_eq!(show(&env, HEX_ID_2)["store"], json!("git-refs"));
}

#[test]
fn refs_primary_routing_prefers_refs_then_falls_back_to_the_branch() {
    // Scenario 40: ULID from refs; hex only on v1 via fallback; hex in both from refs.
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-b", TRANSCRIPT);
    write_std(&env, Store::Branch, HEX_ID_2, "sess-old", TRANSCRIPT);
    write_std(&env, Store::Refs, HEX_ID_2, "sess-new", TRANSCRIPT_2);
    write_std(&env, Store::Refs, ULID_ID, "sess-u", TRANSCRIPT);
    for block in [PARALLEL, REFS_ONLY, REFS_FS] {
        write_approved_settings(&env, block);
        assert_eq!(show(&env, ULID_ID)["store"], json!("git-refs"), "{block}");
        let v = show(&env, HEX_ID);
        assert_eq!(v["store"], json!("git-branch"), "{block}");
        assert_eq!(v["ref"], json!(V1_BRANCH), "{block}");
        let v = show(&env, HEX_ID_2);
        assert_eq!(v["store"], json!("git-refs"), "{block}");
        assert_eq!(v["sessions"][0]["session_id"], json!("sess-new"), "{block}");
        assert_eq!(
            env.ok_default(&["cat", HEX_ID_2, "0/full.jsonl"])
                .as_bytes(),
            TRANSCRIPT_2,
            "{block}: cat reads the refs copy"
        );
    }
    // Under the default the branch copy of HEX_ID_2 is the one read.
    write_approved_settings(&env, DEFAULT_BLOCK);
    let v = show(&env, HEX_ID_2);
    assert_eq!(v["store"], json!("git-branch"));
    assert_eq!(v["sessions"][0]["session_id"], json!("sess-old"));
}

#[test]
fn ulid_left_only_on_the_branch_mirror_is_not_found() {
    // Scenario 41: written in parallel, then the ref is deleted; the v1 copy is never read.
    let env = TestEnv::new();
    write_approved_settings(&env, PARALLEL);
    let id = write(&env, None, "sess-1", TRANSCRIPT);
    assert!(env.exists(Store::Branch, &id, "0/full.jsonl"));
    env.git(&["update-ref", "-d", &checkpoint_ref(&id)]);
    assert!(
        env.exists(Store::Branch, &id, "0/full.jsonl"),
        "v1 copy kept"
    );
    for block in [PARALLEL, REFS_ONLY, DEFAULT_BLOCK] {
        write_approved_settings(&env, block);
        let out = env.run_default(&["show", &id, "--json", "--no-fetch"]);
        assert_code(&out, 3, &format!("ULID only on v1 under {block}"));
        let out = env.run_default(&["cat", &id, "metadata.json"]);
        assert_code(&out, 3, &format!("cat of a ULID only on v1 under {block}"));
    }
}

#[test]
fn list_unions_both_stores_and_dedups_under_parallel() {
    // Scenario 42.
    let env = TestEnv::new();
    let legacy = write(&env, None, "sess-legacy", TRANSCRIPT);
    assert!(is_hex12(&legacy));
    write_approved_settings(&env, PARALLEL);
    let a = write(&env, None, "sess-a", TRANSCRIPT);
    let b = write(&env, None, "sess-b", TRANSCRIPT_2);
    let entries = list_entries(&env);
    let mut got = list_ids_and_stores(&entries);
    got.sort();
    let mut expected = vec![
        (legacy.clone(), "git-branch".to_string()),
        (a.clone(), "git-refs".to_string()),
        (b.clone(), "git-refs".to_string()),
    ];
    expected.sort();
    assert_eq!(got, expected, "three checkpoints, each listed once");
    for e in &entries {
        assert_eq!(e["session_count"], json!(1), "{e}");
    }
}

// ---------------------------------------------------------------------------------------------
// status --json
// ---------------------------------------------------------------------------------------------

#[test]
fn status_reports_queue_and_hooks() {
    let env = TestEnv::new();
    let v = env.ok_json_default(&["status", "--json"]);
    assert_eq!(v["primary"], json!("git-branch"));
    assert_eq!(v["mirrors"], json!([]));
    assert_eq!(v["queued"], json!(0));
    // Every hook is listed, as `hooks status --json` lists them (post-rewrite too).
    for (hook, want) in [
        ("pre-push", false),
        ("post-commit", false),
        ("prepare-commit-msg", false),
    ] {
        assert_eq!(crate::env::hook_is_ours(&v, hook), want, "{hook}: {v}");
    }
    // A hook script of ours counts as installed; a foreign one does not.
    let hooks = env.common_dir().join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    std::fs::write(
        hooks.join("pre-push"),
        "#!/bin/sh\n# Entire checkpoints hook\nexit 0\n",
    )
    .unwrap();
    std::fs::write(hooks.join("post-commit"), "#!/bin/sh\necho foreign\n").unwrap();
    write_approved_settings(&env, REFS_ONLY);
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID), "sess-2", TRANSCRIPT_2);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    let v = env.ok_json_default(&["status", "--json"]);
    assert_eq!(v["primary"], json!("git-refs"));
    assert_eq!(v["queued"], json!(2), "two distinct refs queued: {v}");
    // Every hook is listed, as `hooks status --json` lists them (post-rewrite too).
    for (hook, want) in [
        ("pre-push", true),
        ("post-commit", false),
        ("prepare-commit-msg", false),
    ] {
        assert_eq!(crate::env::hook_is_ours(&v, hook), want, "{hook}: {v}");
    }
}
