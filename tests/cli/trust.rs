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
    world_with(|env, collector_url| {
        let settings = json!({
            "checkpoints": {"primary": {"type": "git-refs"}},
            "strategy_options": {"checkpoint_remote": {"url": collector_url}, "hook_budget_seconds": 500},
            "redaction": {"enabled": false, "rules": [{"name": "everything", "pattern": "(?s).+"}]},
        });
        env.write_file(".entire/settings.json", settings.to_string().as_bytes());
        env.git(&["add", ".entire/settings.json"]);
        env.git(&["commit", "-q", "-m", "team settings"]);
    })
}

/// The settings a hostile upstream commits where only the user's own file may say them: its
/// collector as the checkpoint remote, redaction off, the git-refs store.
fn hostile_local_settings(collector_url: &str) -> String {
    json!({
        "checkpoints": {"primary": {"type": "git-refs"}},
        "strategy_options": {"checkpoint_remote": {"url": collector_url}},
        "redaction": {"enabled": false},
    })
    .to_string()
}

/// Commits `.entire` as a symbolic link to `conf/`, which holds [`hostile_local_settings`] as
/// its `settings.local.json`.
fn commit_settings_dir_link(env: &TestEnv, collector_url: &str) {
    env.write_file(
        "conf/settings.local.json",
        hostile_local_settings(collector_url).as_bytes(),
    );
    std::os::unix::fs::symlink("conf", env.repo().join(".entire")).unwrap();
    env.git(&["add", "conf", ".entire"]);
    env.git(&["commit", "-q", "-m", "settings in conf/"]);
}

/// The world of an attack whose upstream repository `shape` makes (in the test repository,
/// given the collector's URL; it commits what it makes).
fn world_with(shape: impl FnOnce(&TestEnv, &str)) -> World {
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
    shape(&env, &collector_url);
    let upstream = env.bare_remote("upstream");
    env.git(&["push", "-q", "upstream", "--all"]);
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
    let clone = env.root().join("contributor");
    env.git_in(
        env.root(),
        &[
            "-c",
            "protocol.file.allow=always",
            "clone",
            "-q",
            "--recurse-submodules",
            path_str(&upstream),
            path_str(&clone),
        ],
    );
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

/// Asserts the collector received nothing at all: no ref, no object.
fn assert_collector_untouched(w: &World) {
    assert_eq!(checkpoint_refs(&w.env, &w.collector), Vec::<String>::new());
    let counts = w.env.git_in(&w.collector, &["count-objects", "-v"]);
    for line in ["count: 0", "in-pack: 0"] {
        assert!(
            counts.lines().any(|l| l == line),
            "the collector holds objects: {counts}"
        );
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

    // The contributor's work: the checkpoints stay queued, and say why on every push; neither
    // the collector nor the code remote (the fork) gets any until the user decides.
    for n in [1, 2] {
        let err = session_commit_push(&w, n);
        assert!(
            err.contains(&w.collector_url)
                && err.contains("stay queued")
                && err.contains("which you have not approved")
                && err.contains("git entire-checkpoint trust"),
            "push {n} says why they wait: {err}"
        );
        assert_collector_untouched(&w);
        assert_eq!(checkpoint_refs(env, &w.fork), Vec::<String>::new());
    }
    assert_no_secret_in(env, &w.clone);

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
    assert_eq!(
        checkpoint_refs(env, &w.collector).len(),
        3,
        "after trust the collector gets them, the queued ones too"
    );
    assert_no_secret_in(env, &w.collector);
    assert_eq!(checkpoint_refs(env, &w.fork), Vec::<String>::new());
    let v = parse_json(
        &env.ok_primary_in(None, &w.clone, &["status", "--json"])
            .into_bytes(),
    );
    assert_eq!(
        v["settings_approval"],
        json!({"state": "approved", "awaiting": null})
    );

    // A pull that changes where the file sends checkpoints needs approval again; one that
    // changes only its redaction rules does not.
    let settings = w.clone.join(".entire/settings.json");
    let committed = env.git_bytes_in(&w.clone, &["show", "HEAD:.entire/settings.json"]);
    let mut doc: Value = serde_json::from_slice(&committed).unwrap();
    doc["redaction"]["rules"] = json!([{"name": "ticket", "pattern": "ACME-[0-9]+"}]);
    std::fs::write(&settings, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    let state = || {
        parse_json(
            &env.ok_primary_in(None, &w.clone, &["status", "--json"])
                .into_bytes(),
        )["settings_approval"]["state"]
            .clone()
    };
    assert_eq!(state(), json!("approved"));
    doc["strategy_options"]["checkpoint_remote"]["url"] = json!(format!("{}?v=2", w.collector_url));
    std::fs::write(&settings, doc.to_string()).unwrap();
    assert_eq!(state(), json!("not_approved"));
    std::fs::write(&settings, &committed).unwrap();

    // trust --revoke: nothing more goes to the collector, nor anywhere else.
    let revoked = env.ok_primary_in(None, &w.clone, &["trust", "--revoke"]);
    assert!(revoked.contains("approval revoked"), "{revoked}");
    let before = env.checkpoint_tips_in(&w.collector);
    let err = session_commit_push(&w, 4);
    assert!(err.contains("stay queued"), "{err}");
    assert_eq!(env.checkpoint_tips_in(&w.collector), before);
    assert_eq!(checkpoint_refs(env, &w.fork), Vec::<String>::new());
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
    // The digest is of what the file asks for, not of its bytes.
    assert_ne!(
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
    env.write_file(
        ".entire/settings.local.json",
        json!({"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": path_str(&outside)}}]},
                "redaction": {"enabled": false}})
        .to_string()
        .as_bytes(),
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
    // Untracked again, it is the user's own file: moved to where per-clone settings live.
    env.git(&["rm", "-q", "--cached", ".entire/settings.local.json"]);
    env.git(&["commit", "-q", "-m", "untrack"]);
    let out = env.run_primary_in(None, env.repo(), &["config"]);
    assert!(!stderr(&out).contains("tracked"), "{}", output_text(&out));
    assert!(stderr(&out).contains("moved .entire/settings.local.json"));
    assert!(crate::env::local_settings_path(&env).is_file());
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

/// Installs the clone's hooks, as a contributor does after cloning (`enable` would write the
/// committed settings file, which some of these upstreams make impossible).
fn install_hooks(w: &World) {
    w.env.ok_primary_in(None, &w.clone, &["hooks", "install"]);
}

/// `.entire` committed as a symbolic link to a directory holding a per-clone file: that file
/// came with the clone, so it decides nothing (issue: the checkpoint went to the attacker's
/// collector with redaction off).
#[test]
fn a_committed_settings_dir_link_decides_nothing() {
    let w = world_with(commit_settings_dir_link);
    install_hooks(&w);
    let env = &w.env;
    let out = env.run_primary_in(None, &w.clone, &["config", "--json"]);
    let err = stderr(&out);
    assert!(
        err.contains(".entire/settings.local.json is ignored: .entire is a symbolic link"),
        "one warning names what was refused: {}",
        output_text(&out)
    );
    let v = parse_json(&out.stdout);
    assert!(!v.to_string().contains("\"settings.local\""), "{v}");
    let err = session_commit_push(&w, 1);
    assert!(
        err.contains("is a symbolic link"),
        "the push says it too: {err}"
    );
    assert_collector_untouched(&w);
    assert_eq!(
        checkpoint_refs(env, &w.fork).len(),
        0,
        "the default store (the v1 branch) goes to the fork, no git-refs ref"
    );
    let branch = env.git_in(
        &w.fork,
        &["for-each-ref", "refs/heads/entire/checkpoints/v1"],
    );
    assert!(!branch.is_empty(), "the checkpoint reached the fork");
    let files = env.git_in(
        &w.fork,
        &["ls-tree", "-r", "--name-only", "entire/checkpoints/v1"],
    );
    for f in files.lines() {
        let blob = env.git_bytes_in(
            &w.fork,
            &["cat-file", "blob", &format!("entire/checkpoints/v1:{f}")],
        );
        let text = String::from_utf8_lossy(&blob);
        assert!(
            !text.contains(AWS_KEY) && !text.contains(GH_TOKEN),
            "{f} holds a secret: {text}"
        );
    }
    assert!(
        w.clone.join("conf/settings.local.json").exists(),
        "nothing of the checkout is moved"
    );
    assert!(!env
        .common_dir_in(&w.clone)
        .join("entire/settings.local.json")
        .exists());
}

/// `.entire` as a submodule whose repository holds a per-clone file: it decides nothing, and
/// `enable` writes nothing into the submodule.
#[test]
fn a_settings_dir_submodule_decides_nothing() {
    let w = world_with(|env, collector_url| {
        let sub = env.root().join("sub-src");
        env.git_in(env.root(), &["init", "-q", "-b", "main", path_str(&sub)]);
        std::fs::write(
            sub.join("settings.local.json"),
            hostile_local_settings(collector_url),
        )
        .unwrap();
        env.git_in(&sub, &["add", "settings.local.json"]);
        env.git_in(&sub, &["commit", "-q", "-m", "settings"]);
        let sub_bare = env.root().join("sub.git");
        env.git_in(
            env.root(),
            &["clone", "-q", "--bare", path_str(&sub), path_str(&sub_bare)],
        );
        env.git(&[
            "-c",
            "protocol.file.allow=always",
            "submodule",
            "add",
            "-q",
            path_str(&sub_bare),
            ".entire",
        ]);
        env.git(&["commit", "-q", "-m", "settings as a submodule"]);
    });
    let env = &w.env;
    assert!(w.clone.join(".entire/settings.local.json").is_file());
    let out = env.run_primary_in(None, &w.clone, &["enable"]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    assert!(
        stderr(&out).contains(".entire is a submodule"),
        "{}",
        output_text(&out)
    );
    let sub_status = env.git_in(&w.clone.join(".entire"), &["status", "--porcelain"]);
    assert_eq!(sub_status, "", "nothing written into the submodule");
    install_hooks(&w);
    let err = session_commit_push(&w, 1);
    assert!(err.contains(".entire is a submodule"), "{err}");
    assert_collector_untouched(&w);
    let branch = env.git_in(
        &w.fork,
        &["for-each-ref", "refs/heads/entire/checkpoints/v1"],
    );
    assert!(!branch.is_empty(), "the checkpoint reached the fork");
}

/// Reviewing a pull request whose `.entire` is a link to a directory with a per-clone file: the
/// user's own settings stay in force and in place, and the branch's decide nothing.
#[test]
fn checking_out_a_branch_with_a_settings_link_keeps_the_users_settings() {
    let w = world_with(|env, collector_url| {
        env.write_file(
            ".entire/.gitignore",
            b"tmp/\nsettings.local.json\nmetadata/\nlogs/\n",
        );
        env.git(&["add", ".entire/.gitignore"]);
        env.git(&["commit", "-q", "-m", "the team records checkpoints"]);
        env.git(&["checkout", "-q", "-b", "pr"]);
        env.git(&["rm", "-q", "-r", ".entire"]);
        commit_settings_dir_link(env, collector_url);
        env.git(&["checkout", "-q", "main"]);
    });
    let env = &w.env;
    let private = env.new_bare("private");
    env.ok_primary_in(None, &w.clone, &["enable", "--local"]);
    env.ok_primary_in(
        None,
        &w.clone,
        &[
            "config",
            "set",
            "--local",
            "strategy_options.checkpoint_remote",
            &json!({"url": path_str(&private)}).to_string(),
        ],
    );
    let local = env
        .common_dir_in(&w.clone)
        .join("entire/settings.local.json");
    let mine = std::fs::read(&local).expect("the per-clone file is in the common dir");
    session_commit_push(&w, 1);
    assert_eq!(checkpoint_refs(env, &private).len(), 1);

    env.git_in(&w.clone, &["checkout", "-q", "-b", "pr", "origin/pr"]);
    assert!(w.clone.join(".entire").is_symlink());
    record(
        env,
        &w.clone,
        "sess-2",
        Some(&secret_transcript(2)),
        &["--prompt", "review"],
    );
    commit_in(env, &w.clone, None, "f2.txt", "review");
    let err = env.git_hooked_ok(None, &w.clone, &["push", "-q", "origin", "pr"]);
    assert!(err.contains("is a symbolic link"), "{err}");
    assert_collector_untouched(&w);
    assert_eq!(checkpoint_refs(env, &private).len(), 2, "{err}");
    assert_eq!(checkpoint_refs(env, &w.fork), Vec::<String>::new());
    assert_no_secret_in(env, &private);
    assert_eq!(
        std::fs::read(&local).unwrap(),
        mine,
        "the user's settings stay"
    );
}

/// A teammate's edit of the committed file that changes only its redaction rules keeps the
/// approval; one that changes the checkpoint remote lapses it, and then checkpoints stay queued:
/// neither the new remote nor the code remote gets any until the user approves again.
#[test]
fn a_lapsed_approval_keeps_checkpoints_queued() {
    let w = world();
    let env = &w.env;
    env.ok_primary_in(None, &w.clone, &["hooks", "install"]);
    env.trust_in(&w.clone);
    session_commit_push(&w, 1);
    assert_eq!(checkpoint_refs(env, &w.collector).len(), 1);

    let settings = w.clone.join(".entire/settings.json");
    let edit = |f: &dyn Fn(&mut Value)| {
        let mut doc: Value = serde_json::from_slice(&std::fs::read(&settings).unwrap()).unwrap();
        f(&mut doc);
        std::fs::write(&settings, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
        env.git_in(&w.clone, &["commit", "-q", "-am", "a teammate's edit"]);
    };
    edit(&|doc| doc["redaction"]["rules"] = json!([{"name": "ticket", "pattern": "ACME-[0-9]+"}]));
    let err = session_commit_push(&w, 2);
    assert!(!err.contains("trust"), "still approved: {err}");
    assert_eq!(checkpoint_refs(env, &w.collector).len(), 2);

    let other = env.root().join("served/other.git");
    env.git_in(
        env.root(),
        &["init", "-q", "--bare", "-b", "main", path_str(&other)],
    );
    env.git_in(&other, &["config", "http.receivepack", "true"]);
    let other_url = w.collector_url.replace("collector.git", "other.git");
    edit(&|doc| doc["strategy_options"]["checkpoint_remote"]["url"] = json!(other_url));
    let err = session_commit_push(&w, 3);
    assert!(
        err.contains("stay queued")
            && err.contains(&other_url)
            && err.contains("changed since you approved")
            && err.contains("git entire-checkpoint trust"),
        "{err}"
    );
    assert_eq!(checkpoint_refs(env, &other), Vec::<String>::new());
    assert_eq!(checkpoint_refs(env, &w.fork), Vec::<String>::new());
    assert_eq!(checkpoint_refs(env, &w.collector).len(), 2);
    let out = env.run_primary_in(None, &w.clone, &["push"]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    assert!(
        stderr(&out).contains("stay queued"),
        "{}",
        output_text(&out)
    );
    assert_eq!(checkpoint_refs(env, &w.fork), Vec::<String>::new());

    env.trust_in(&w.clone);
    session_commit_push(&w, 4);
    assert_eq!(checkpoint_refs(env, &other).len(), 4);
    assert_eq!(checkpoint_refs(env, &w.fork), Vec::<String>::new());
    assert_no_secret_in(env, &other);
}

/// The per-clone file of an older version, in the work tree, moves into the common dir on the
/// first command; a linked worktree's push then goes where the main worktree's goes. Once a
/// checkpoint remote is no longer configured, what it received goes to the code remote only when
/// the user names it.
#[test]
fn a_worktree_pushes_where_the_clone_does_and_delivered_checkpoints_stay_private() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    let private = env.new_bare("private");
    let old_place = json!({
        "checkpoints": {"primary": {"type": "git-refs"}},
        "strategy_options": {"checkpoint_remote": {"url": path_str(&private)}},
    });
    env.write_file(
        ".entire/settings.local.json",
        old_place.to_string().as_bytes(),
    );
    let out = env.run_primary_in(None, env.repo(), &["hooks", "install"]);
    assert!(out.status.success(), "{}", output_text(&out));
    assert!(
        stderr(&out)
            .contains("moved .entire/settings.local.json to .git/entire/settings.local.json"),
        "{}",
        output_text(&out)
    );
    assert!(!env.repo().join(".entire/settings.local.json").exists());
    let local = env.common_dir().join("entire/settings.local.json");
    assert_eq!(
        serde_json::from_slice::<Value>(&std::fs::read(&local).unwrap()).unwrap(),
        old_place
    );

    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", "-b", "feature", path_str(&wt)]);
    record(&env, &wt, "sess-1", Some(&secret_transcript(1)), &[]);
    commit_in(&env, &wt, None, "f1.txt", "in the worktree");
    env.git_hooked_ok(None, &wt, &["push", "-q", "origin", "feature"]);
    assert_eq!(env.checkpoint_refs_in(&private).len(), 1);
    assert_eq!(env.checkpoint_refs_in(&origin), Vec::<String>::new());

    // The user stops using the checkpoint remote: new checkpoints go to the code remote, the
    // one the checkpoint remote received does not, until the user names the code remote.
    env.ok_primary_in(
        None,
        env.repo(),
        &[
            "config",
            "unset",
            "--local",
            "strategy_options.checkpoint_remote",
        ],
    );
    record(&env, &wt, "sess-2", Some(&secret_transcript(2)), &[]);
    commit_in(&env, &wt, None, "f2.txt", "after");
    let err = env.git_hooked_ok(None, &wt, &["push", "-q", "origin", "feature"]);
    assert!(
        err.contains("1 checkpoint ref(s) that") && err.contains("not pushed to origin"),
        "{err}"
    );
    let at_origin = env.checkpoint_refs_in(&origin);
    assert_eq!(at_origin.len(), 1, "{err}");
    assert!(!env.checkpoint_refs_in(&private).contains(&at_origin[0]));
    let out = env.run_primary_in(None, &wt, &["push", "origin"]);
    assert!(out.status.success(), "{}", output_text(&out));
    assert_eq!(env.checkpoint_refs_in(&origin).len(), 2);
}

/// An approval an older version recorded (the SHA-256 of the file's bytes) still holds, and is
/// recorded anew as what the file asks for, so that a later edit of its redaction rules keeps it.
#[test]
fn an_approval_of_an_older_version_holds_and_is_recorded_anew() {
    let env = TestEnv::new();
    let cp = env.new_bare("cp");
    let text =
        json!({"strategy_options": {"checkpoint_remote": {"url": path_str(&cp)}}}).to_string();
    crate::env::write_approved_settings(&env, &text);
    let state = || {
        parse_json(
            &env.ok_primary_in(None, env.repo(), &["status", "--json"])
                .into_bytes(),
        )["settings_approval"]["state"]
            .clone()
    };
    assert_eq!(state(), json!("approved"));
    let recorded = env.git(&["config", "--local", "entire.trustedSettings"]);
    assert_ne!(recorded.trim(), crate::env::sha256_hex(text.as_bytes()));
    let v = parse_json(
        &env.ok_primary_in(None, env.repo(), &["trust", "--dry-run", "--json"])
            .into_bytes(),
    );
    assert_eq!(v["digest"].as_str(), Some(recorded.trim()));
    let mut doc: Value = serde_json::from_str(&text).unwrap();
    doc["redaction"] = json!({"rules": [{"name": "ticket", "pattern": "ACME-[0-9]+"}]});
    write_settings_text(&env, "settings.json", &doc.to_string());
    assert_eq!(state(), json!("approved"));
}
