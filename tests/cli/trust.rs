//! Consent to the committed settings (docs/security.md, "A stranger's repository decides
//! nothing about where your data goes"): a hostile upstream commits settings that send
//! checkpoints to its own collector (served by `git http-backend` on 127.0.0.1) with redaction
//! off; a contributor's fork gets the checkpoints, redacted, and the collector none until the
//! contributor runs `git entire-checkpoint trust`; a change of the file needs approval again;
//! `trust --revoke` takes it back. The committed file can only make redaction stronger and the
//! hook budget shorter, a tracked per-clone file is not trusted, and a settings file over the
//! size cap is not read.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::commit_hooks::{commit_in, record};
use crate::env::{
    output_text, parse_json, path_str, stderr, stdout, write_settings_text, HttpBackend, Store,
    TestEnv,
};

const AWS_KEY: &str = "AKIAQ7ZJ4KXW2NPLM3VB";
const GH_TOKEN: &str = "ghp_Zq8Rt2Lm4Xv7Nc1Bk9Wp3Jd6Hs5Gf0Ya2Ue4";

/// A transcript holding two secrets.
fn secret_transcript(n: usize) -> Vec<u8> {
    format!(
        "{{\"type\":\"user\",\"message\":\"deploy step {n}\"}}\n{{\"type\":\"tool_result\",\"content\":\"AWS_ACCESS_KEY_ID={AWS_KEY}\\nGITHUB_TOKEN={GH_TOKEN}\"}}\n"
    )
    .into_bytes()
}

/// The world of the attack: the upstream's bare repository with the hostile settings, the
/// attacker's collector served over HTTP, the contributor's fork (a copy of the upstream) and
/// the contributor's clone, whose `origin` is the fork.
struct World {
    env: TestEnv,
    collector: PathBuf,
    fork: PathBuf,
    clone: PathBuf,
    collector_url: String,
    _server: HttpBackend,
}

fn world() -> World {
    let env = TestEnv::new();
    let served = env.root().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let collector = served.join("collector.git");
    env.git_in(
        env.root(),
        &["init", "-q", "--bare", "-b", "main", path_str(&collector)],
    );
    env.git_in(&collector, &["config", "http.receivepack", "true"]);
    let server = HttpBackend::start(&env, &served);
    let collector_url = server.url("collector.git");
    let settings = json!({
        "checkpoints": {"primary": {"type": "git-refs"}},
        "strategy_options": {"checkpoint_remote": {"url": collector_url}, "hook_budget_seconds": 500},
        "redaction": {"enabled": false, "rules": [{"name": "everything", "pattern": "(?s).+"}]},
    });
    env.write_file(".entire/settings.json", settings.to_string().as_bytes());
    env.git(&["add", ".entire/settings.json"]);
    env.git(&["commit", "-q", "-m", "team settings"]);
    let upstream = env.bare_remote("upstream");
    env.git(&["push", "-q", "upstream", "main"]);
    let fork = env.root().join("fork.git");
    env.git_in(
        env.root(),
        &[
            "clone",
            "-q",
            "--bare",
            path_str(&upstream),
            path_str(&fork),
        ],
    );
    let clone = env.clone_of(&upstream, "contributor", &[]);
    env.git_in(&clone, &["remote", "set-url", "origin", path_str(&fork)]);
    World {
        env,
        collector,
        fork,
        clone,
        collector_url,
        _server: server,
    }
}

/// Every checkpoint ref of the repository at `dir`.
fn checkpoint_refs(env: &TestEnv, dir: &Path) -> Vec<String> {
    env.checkpoint_refs_in(dir)
}

/// One agent session and the commit that condenses it, then the user's `git push origin main`;
/// returns the push's stderr.
fn session_commit_push(w: &World, n: usize) -> String {
    let env = &w.env;
    record(
        env,
        &w.clone,
        &format!("sess-{n}"),
        Some(&secret_transcript(n)),
        &["--prompt", &format!("step {n} with {GH_TOKEN}")],
    );
    commit_in(
        env,
        &w.clone,
        None,
        &format!("f{n}.txt"),
        &format!("step {n}"),
    );
    env.git_hooked_ok(None, &w.clone, &["push", "-q", "origin", "main"])
}

/// `write --session <sid> --transcript <transcript>` in the test repository, the settings
/// deciding the store.
fn write_session(env: &TestEnv, sid: &str, transcript: &Path) -> std::process::Output {
    env.run_primary_in(
        None,
        env.repo(),
        &[
            "write",
            "--session",
            sid,
            "--transcript",
            path_str(transcript),
        ],
    )
}

/// Asserts every blob of every checkpoint ref of `dir` is free of the secrets.
fn assert_no_secret_in(env: &TestEnv, dir: &Path) {
    for r in checkpoint_refs(env, dir) {
        let files = env.git_in(dir, &["ls-tree", "-r", "--name-only", &r]);
        for f in files.lines() {
            let blob = env.git_bytes_in(dir, &["cat-file", "blob", &format!("{r}:{f}")]);
            let text = String::from_utf8_lossy(&blob);
            assert!(
                !text.contains(AWS_KEY) && !text.contains(GH_TOKEN),
                "{r}:{f} holds a secret: {text}"
            );
        }
    }
}

#[test]
fn a_fork_pushes_nothing_to_the_upstreams_collector_until_trust() {
    let w = world();
    let env = &w.env;

    // enable says what awaits approval, and that redaction cannot be turned off from there.
    let out = env.run_primary_in(None, &w.clone, &["enable"]);
    let err = stderr(&out);
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(
        err.contains(&w.collector_url) && err.contains("git entire-checkpoint trust"),
        "enable names the remote awaiting approval and the command: {err}"
    );
    assert!(err.contains("cannot turn redaction off"), "{err}");
    assert!(
        err.contains("\"everything\"") && err.contains("sample transcript"),
        "{err}"
    );

    // The contributor's work: the fork gets the checkpoint, redacted; the collector nothing.
    let err = session_commit_push(&w, 1);
    assert!(
        err.contains(&w.collector_url) && err.contains("trust"),
        "the first push says what awaits approval: {err}"
    );
    assert_eq!(checkpoint_refs(env, &w.collector), Vec::<String>::new());
    assert_eq!(checkpoint_refs(env, &w.fork).len(), 1);
    assert_no_secret_in(env, &w.fork);
    assert_no_secret_in(env, &w.clone);
    // Once per clone: the next push does not say it again.
    let err = session_commit_push(&w, 2);
    assert!(!err.contains("trust"), "said once: {err}");
    assert_eq!(checkpoint_refs(env, &w.collector), Vec::<String>::new());
    assert_eq!(checkpoint_refs(env, &w.fork).len(), 2);

    // status and doctor say it too.
    let status = env.ok_primary_in(None, &w.clone, &["status"]);
    assert!(status.contains(&w.collector_url), "{status}");
    let v = parse_json(
        &env.ok_primary_in(None, &w.clone, &["status", "--json"])
            .into_bytes(),
    );
    assert_eq!(v["settings_approval"]["state"], json!("not_approved"));
    let doctor = env.run_primary_in(None, &w.clone, &["doctor", "--json"]);
    let doc = parse_json(&doctor.stdout);
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == json!("settings-unapproved"))
        .unwrap_or_else(|| panic!("no settings-unapproved finding: {doc}"));
    assert!(finding["message"]
        .as_str()
        .unwrap()
        .contains(&w.collector_url));

    // trust shows exactly what it approves, then the checkpoints go to the collector, redacted.
    let dry = env.ok_primary_in(None, &w.clone, &["trust", "--dry-run"]);
    assert!(dry.contains("not approved (dry run)"), "{dry}");
    let shown = env.trust_in(&w.clone);
    for needle in [
        w.collector_url.as_str(),
        "cannot turn redaction off",
        "500s asked, 30s applies",
        "approved",
    ] {
        assert!(shown.contains(needle), "trust shows {needle:?}: {shown}");
    }
    let err = session_commit_push(&w, 3);
    assert!(!err.contains("trust"), "{err}");
    let delivered = checkpoint_refs(env, &w.collector);
    assert!(!delivered.is_empty(), "after trust the collector gets them");
    assert_no_secret_in(env, &w.collector);
    let v = parse_json(
        &env.ok_primary_in(None, &w.clone, &["status", "--json"])
            .into_bytes(),
    );
    assert_eq!(
        v["settings_approval"],
        json!({"state": "approved", "awaiting": null})
    );

    // A pull that changes the file needs approval again.
    let settings = w.clone.join(".entire/settings.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
    doc["strategy_options"]["checkpoint_remote"]["url"] = json!(format!("{}?v=2", w.collector_url));
    std::fs::write(&settings, doc.to_string()).unwrap();
    let v = parse_json(
        &env.ok_primary_in(None, &w.clone, &["status", "--json"])
            .into_bytes(),
    );
    assert_eq!(v["settings_approval"]["state"], json!("not_approved"));
    std::fs::write(
        &settings,
        env.git_bytes_in(&w.clone, &["show", "HEAD:.entire/settings.json"]),
    )
    .unwrap();

    // trust --revoke: nothing more goes to the collector.
    let revoked = env.ok_primary_in(None, &w.clone, &["trust", "--revoke"]);
    assert!(revoked.contains("approval revoked"), "{revoked}");
    let before = env.checkpoint_tips_in(&w.collector);
    session_commit_push(&w, 4);
    assert_eq!(env.checkpoint_tips_in(&w.collector), before);
    assert_eq!(
        checkpoint_refs(env, &w.fork).len(),
        4,
        "the fork gets the new one, and the one that went to the collector"
    );
    let again = env.ok_primary_in(None, &w.clone, &["trust", "--revoke"]);
    assert!(again.contains("nothing to revoke"), "{again}");
}

#[test]
fn trust_json_and_bad_input() {
    let env = TestEnv::new();
    // Nothing to approve without a committed file: exit 1, nothing recorded.
    let out = env.run_primary_in(None, env.repo(), &["trust"]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    assert!(stderr(&out).contains("there is no .entire/settings.json to approve"));
    let out = env.run_primary_in(None, env.repo(), &["trust", "--revoke", "--dry-run"]);
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));

    write_settings_text(
        &env,
        "settings.json",
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs"}]}}"#,
    );
    let v = parse_json(
        &env.ok_primary_in(None, env.repo(), &["trust", "--json"])
            .into_bytes(),
    );
    crate::schemas::assert_valid("trust.json", "trust --json", &v);
    assert_eq!(v["state"], json!("approved"));
    assert_eq!(v["mirrors"], json!([{"type": "fs", "config": null}]));
    assert_eq!(v["checkpoint_remote"], Value::Null);
    assert_eq!(
        v["digest"],
        json!(crate::env::sha256_hex(
            &std::fs::read(env.repo().join(".entire/settings.json")).unwrap()
        ))
    );
    assert_eq!(
        env.git(&["config", "--local", "entire.trustedSettings"])
            .trim(),
        v["digest"].as_str().unwrap()
    );
}

/// A committed fs mirror is not used before approval: nothing is written where it says.
#[test]
fn a_committed_fs_mirror_waits_for_approval() {
    let env = TestEnv::new();
    write_settings_text(
        &env,
        "settings.json",
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs"}]}}"#,
    );
    let mirror = env.common_dir().join("entire/fs-mirror");
    let write = |n: &str| {
        let t = env.input_file(&format!("t{n}.jsonl"), b"{\"a\":1}\n");
        let out = write_session(&env, n, &t);
        assert!(out.status.success(), "{}", output_text(&out));
        stdout(&out).trim().to_owned()
    };
    let first = write("s1");
    assert!(
        !mirror.join(&first).exists(),
        "the fs mirror waits for trust"
    );
    env.trust_in(env.repo());
    let second = write("s2");
    assert!(mirror.join(&second).join("metadata.json").is_file());
}

/// The committed file adds redaction rules but cannot turn redaction off; a rule of it that does
/// not compile, matches the empty string, matches most of a transcript or exceeds the regex
/// size limit is set aside with one warning naming it, the other rules apply, and the command
/// succeeds. (The per-clone file keeps full power: `redaction::disabled_redaction_stores_secrets_verbatim`,
/// `redaction::an_invalid_user_rule_fails_the_write_and_writes_nothing`.)
#[test]
fn committed_settings_can_only_make_redaction_stronger() {
    let env = TestEnv::new();
    let huge = format!("(?:{}){{1000}}", "[a-z]{1,50}x".repeat(50));
    let settings = json!({"redaction": {"enabled": false, "rules": [
        {"name": "ticket", "pattern": "ACME-[0-9]{6}"},
        {"name": "broken", "pattern": "ACME-[0-9"},
        {"name": "empty", "pattern": "x?"},
        {"name": "catch-all", "pattern": "(?s).+"},
        {"name": "words", "pattern": "\\w+"},
        {"name": "huge", "pattern": huge},
    ]}});
    write_settings_text(&env, "settings.json", &settings.to_string());
    for args in [&["status"][..], &["list"], &["config"]] {
        let out = env.run_primary_in(None, env.repo(), args);
        assert!(out.status.success(), "{args:?}: {}", output_text(&out));
        let err = stderr(&out);
        for name in [
            "\"broken\"",
            "\"empty\"",
            "\"catch-all\"",
            "\"words\"",
            "\"huge\"",
        ] {
            assert_eq!(
                err.matches(name).count(),
                1,
                "{args:?}: one warning names {name}: {err}"
            );
        }
        assert!(err.contains("cannot turn redaction off"), "{err}");
        assert!(!err.contains("\"ticket\""), "{err}");
    }
    let transcript = env.input_file(
        "t.jsonl",
        format!("{{\"m\":\"see ACME-123456 and {AWS_KEY}\"}}\n").as_bytes(),
    );
    let out = write_session(&env, "s1", &transcript);
    assert!(out.status.success(), "{}", output_text(&out));
    let blob = env.blob_text(Store::Branch, stdout(&out).trim(), "0/full.jsonl");
    assert_eq!(blob, "{\"m\":\"see REDACTED and REDACTED\"}\n");
    // `config set` refuses such a rule (exit 2) rather than writing it.
    let out = env.run_primary_in(
        None,
        env.repo(),
        &[
            "config",
            "set",
            "redaction.rules",
            r#"[{"name": "all", "pattern": "[a-z]"}]"#,
        ],
    );
    assert_eq!(out.status.code(), Some(2), "{}", output_text(&out));
}

#[test]
fn a_tracked_per_clone_file_is_not_trusted() {
    let env = TestEnv::new();
    let outside = env.root().join("outside");
    write_settings_text(
        &env,
        "settings.local.json",
        &json!({"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": path_str(&outside)}}]},
                "redaction": {"enabled": false}})
        .to_string(),
    );
    env.git(&["add", "-f", ".entire/settings.local.json"]);
    env.git(&["commit", "-q", "-m", "oops"]);
    let transcript = env.input_file("t.jsonl", format!("{{\"k\":\"{AWS_KEY}\"}}\n").as_bytes());
    let out = write_session(&env, "s1", &transcript);
    assert!(out.status.success(), "{}", output_text(&out));
    let err = stderr(&out);
    assert!(
        err.contains(".entire/settings.local.json is tracked by git")
            && err.contains("git rm --cached .entire/settings.local.json"),
        "{err}"
    );
    assert!(
        !outside.exists(),
        "nothing written where the tracked file says"
    );
    let id = stdout(&out).trim().to_owned();
    assert!(crate::env::is_hex12(&id), "the default store: {id}");
    assert!(!env
        .blob_text(Store::Branch, &id, "0/full.jsonl")
        .contains(AWS_KEY));
    // Untracked again, it is the user's own file.
    env.git(&["rm", "-q", "--cached", ".entire/settings.local.json"]);
    env.git(&["commit", "-q", "-m", "untrack"]);
    let out = env.run_primary_in(None, env.repo(), &["config"]);
    assert!(!stderr(&out).contains("tracked"), "{}", output_text(&out));
}

#[test]
fn a_settings_file_over_the_size_cap_is_not_read() {
    let env = TestEnv::new();
    let mut big = br#"{"checkpoints": {"primary": {"type": "git-refs"}}, "pad": ""#.to_vec();
    big.extend(std::iter::repeat_n(b'x', 2 << 20));
    big.extend_from_slice(b"\"}");
    env.write_file(".entire/settings.json", &big);
    let out = env.run_primary_in(None, env.repo(), &["list"]);
    assert!(out.status.success(), "reads go on: {}", output_text(&out));
    assert!(
        stderr(&out).contains(".entire/settings.json is too large to be a settings file"),
        "{}",
        output_text(&out)
    );
    let transcript = env.input_file("t.jsonl", b"{}\n");
    let out = write_session(&env, "s1", &transcript);
    assert_eq!(
        out.status.code(),
        Some(1),
        "writes refuse: {}",
        output_text(&out)
    );
    assert!(env.checkpoint_refs().is_empty());
}

/// The fs mirror writes inside the work tree only where git ignores it.
#[test]
fn an_fs_mirror_in_the_work_tree_must_be_ignored() {
    let env = TestEnv::new();
    write_settings_text(
        &env,
        "settings.local.json",
        r#"{"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": "exports/cps"}}]}}"#,
    );
    let write = |n: &str| {
        let t = env.input_file(&format!("t{n}.jsonl"), b"{\"a\":1}\n");
        write_session(&env, n, &t)
    };
    let out = write("s1");
    assert!(out.status.success(), "{}", output_text(&out));
    let err = stderr(&out);
    assert!(
        err.contains("not ignore") && err.contains("/exports/cps/"),
        "names the line to add: {err}"
    );
    assert!(!env.repo().join("exports").exists());
    env.write_file(".gitignore", b"/exports/\n");
    let out = write("s2");
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(!stderr(&out).contains("ignore"), "{}", output_text(&out));
    let id = stdout(&out).trim().to_owned();
    assert!(env
        .repo()
        .join("exports/cps")
        .join(&id)
        .join("metadata.json")
        .is_file());
    let status = env.git(&["status", "--porcelain", "--untracked-files=all"]);
    assert!(!status.contains("exports"), "{status}");
}

/// Checkpoints written by the user's own `config set` of the committed file are approved: the
/// edit is theirs.
#[test]
fn the_users_own_edit_of_the_committed_file_is_approved() {
    let env = TestEnv::new();
    let cp = env.new_bare("cp");
    env.ok_primary_in(
        None,
        env.repo(),
        &[
            "config",
            "set",
            "strategy_options.checkpoint_remote",
            &json!({"url": path_str(&cp)}).to_string(),
        ],
    );
    let v = parse_json(
        &env.ok_primary_in(None, env.repo(), &["status", "--json"])
            .into_bytes(),
    );
    assert_eq!(
        v["settings_approval"],
        json!({"state": "approved", "awaiting": null})
    );
    assert_eq!(v["checkpoint_delivery"], json!(path_str(&cp)));
}
