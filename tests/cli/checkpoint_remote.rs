//! The dedicated checkpoint remote (`strategy_options.checkpoint_remote`): checkpoint refs go to
//! it and never to the code remote, every read comes from it, `config`/`status` show it, bad
//! values are refused without ever printing credentials, and a public-forge code remote without
//! one gets one warning per clone.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::env::{
    assert_success, checkpoint_ref, output_text, parse_json, path_str, prepush_bin, stderr, Store,
    TestEnv,
};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2};

const SECRET: &str = "hunter2secret";

/// A writer repository with a bare code remote `origin` (holding `main`) and a bare checkpoint
/// repository `<tmp>/checkpoints.git` that is not a git remote.
struct World {
    env: TestEnv,
    origin: PathBuf,
    checkpoints: PathBuf,
}

fn world() -> World {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    let checkpoints = env.new_bare("checkpoints");
    World {
        env,
        origin,
        checkpoints,
    }
}

/// Writes `.entire/<file>` in `dir` with `strategy_options.checkpoint_remote = value`.
fn set_checkpoint_remote(dir: &Path, file: &str, value: Value) {
    std::fs::create_dir_all(dir.join(".entire")).unwrap();
    let doc = json!({"strategy_options": {"checkpoint_remote": value}});
    std::fs::write(dir.join(".entire").join(file), doc.to_string()).unwrap();
}

fn url_form(path: &Path) -> Value {
    json!({ "url": path_str(path) })
}

/// Makes git send `url` to the local bare repository `to` (`url.<to>.insteadOf`), so a forge URL
/// can be tested offline.
fn route(env: &TestEnv, url: &str, to: &Path) {
    env.git(&["config", &format!("url.{}.insteadOf", path_str(to)), url]);
}

/// Commits something new on `main` so a `git push` has work (and runs the pre-push hook).
fn new_commit(env: &TestEnv, message: &str) {
    env.git(&["commit", "-q", "--allow-empty", "-m", message]);
}

#[test]
fn checkpoint_refs_go_only_to_the_checkpoint_remote_and_every_read_comes_from_it() {
    let w = world();
    let env = &w.env;
    set_checkpoint_remote(env.repo(), "settings.json", url_form(&w.checkpoints));
    env.trust_in(env.repo());
    write_std(env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    write_std(env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);
    env.ok(Store::Refs, &["hooks", "install"]);

    // The user's push: the hook delivers checkpoints to the checkpoint remote only.
    new_commit(env, "work");
    let out = env.git_hooked(
        Some(Store::Refs),
        env.repo(),
        &["push", "-q", "origin", "main"],
    );
    assert_success(&out, &["push", "origin", "main"]);
    assert!(
        !stderr(&out).contains("public"),
        "no public-remote warning with a checkpoint remote: {}",
        stderr(&out)
    );
    let local = env.checkpoint_tips_in(env.repo());
    assert_eq!(env.checkpoint_tips_in(&w.checkpoints), local);
    assert_eq!(local.len(), 2);
    assert_eq!(env.checkpoint_refs_in(&w.origin), Vec::<String>::new());
    assert_eq!(
        env.git_in(&w.origin, &["rev-parse", "main"]),
        env.git(&["rev-parse", "main"]),
        "the code push went through"
    );

    // Explicitly naming the code remote still delivers to the checkpoint remote.
    let out = env.run_in(Store::Refs, env.repo(), &["push", "origin", "--all"]);
    assert_success(&out, &["push", "origin", "--all"]);
    assert_eq!(env.checkpoint_refs_in(&w.origin), Vec::<String>::new());
    assert_eq!(
        env.queued_in(Some(Store::Refs), env.repo()),
        0,
        "the code remote keeps no queue"
    );

    // config and status name it.
    let v = parse_json(
        &env.run_in(Store::Refs, env.repo(), &["config", "--json"])
            .stdout,
    );
    assert_eq!(
        v["checkpoint_remote"],
        json!({"url": path_str(&w.checkpoints), "source": "settings"})
    );
    assert_eq!(v["checkpoint_delivery"], json!(path_str(&w.checkpoints)));
    assert!(v["primary"].is_string(), "older fields stay: {v}");
    let human = env.ok_in(Store::Refs, env.repo(), &["status"]);
    assert!(
        human.contains(&format!(
            "remote   {} (dedicated checkpoint remote, from settings)",
            path_str(&w.checkpoints)
        )),
        "{human}"
    );

    // A second clone of the code remote reads everything from the checkpoint remote.
    let clone = env.clone_of(&w.origin, "clone", &[]);
    set_checkpoint_remote(&clone, "settings.local.json", url_form(&w.checkpoints));
    assert!(env.checkpoint_refs_in(&clone).is_empty());

    let shown = parse_json(
        &env.run_in(Store::Refs, &clone, &["show", HEX_ID, "--json"])
            .stdout,
    );
    assert_eq!(shown["checkpoint_id"], json!(HEX_ID));
    assert_eq!(
        env.checkpoint_refs_in(&clone),
        vec![checkpoint_ref(HEX_ID)],
        "show fetched exactly its checkpoint"
    );

    let listed = parse_json(
        &env.run_in(Store::Refs, &clone, &["list", "--remote", "--json"])
            .stdout,
    );
    let remote_only: Vec<&str> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["remote_only"] == json!(true))
        .map(|e| e["checkpoint_id"].as_str().unwrap())
        .collect();
    assert_eq!(remote_only, vec![HEX_ID_2]);

    let out = env.fetch_in(&clone, &["--all", "--json"]);
    assert_success(&out, &["entire-fetch", "--all"]);
    assert_eq!(env.checkpoint_tips_in(&clone), local);
    assert_eq!(env.checkpoint_refs_in(&w.origin), Vec::<String>::new());

    // gc confirms against the checkpoint remote, and reads bring pruned checkpoints back from it.
    let gc = parse_json(
        &env.run_in(Store::Refs, &clone, &["gc", "--keep-days", "0", "--json"])
            .stdout,
    );
    assert_eq!(gc["remote"], json!(path_str(&w.checkpoints)));
    assert_eq!(gc["deleted"].as_array().map(Vec::len), Some(2), "{gc}");
    assert!(env.checkpoint_refs_in(&clone).is_empty());
    let out = env.run_in(Store::Refs, &clone, &["show", HEX_ID_2, "--json"]);
    assert_success(&out, &["show", HEX_ID_2]);
    assert_eq!(
        env.checkpoint_refs_in(&clone),
        vec![checkpoint_ref(HEX_ID_2)]
    );
}

/// Writes checkpoint `HEX_ID`, runs `push`, and checks it landed on `dest` (and only it).
fn write_and_push_to(env: &TestEnv, dest: &Path) {
    write_std(env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    assert_success(&out, &["push"]);
    assert_eq!(env.checkpoint_refs_in(dest), vec![checkpoint_ref(HEX_ID)]);
}

#[test]
fn the_per_clone_file_overrides_the_committed_one() {
    let w = world();
    let env = &w.env;
    let other = env.new_bare("other");
    set_checkpoint_remote(env.repo(), "settings.json", url_form(&other));
    set_checkpoint_remote(env.repo(), "settings.local.json", url_form(&w.checkpoints));
    write_and_push_to(env, &w.checkpoints);
    assert!(env.checkpoint_refs_in(&other).is_empty());
    assert!(env.checkpoint_refs_in(&w.origin).is_empty());
    let v = parse_json(
        &env.run_in(Store::Refs, env.repo(), &["config", "--json"])
            .stdout,
    );
    assert_eq!(v["checkpoint_remote"]["source"], json!("settings.local"));
}

#[test]
fn the_forge_form_follows_the_code_remotes_scheme_and_host() {
    let w = world();
    let env = &w.env;
    env.git(&[
        "remote",
        "set-url",
        "origin",
        "git@github.com:acme/code.git",
    ]);
    set_checkpoint_remote(
        env.repo(),
        "settings.json",
        json!({"provider": "github", "repo": "acme/checkpoints"}),
    );
    env.trust_in(env.repo());
    let derived = "git@github.com:acme/checkpoints.git";
    let v = parse_json(
        &env.run_in(Store::Refs, env.repo(), &["config", "--json"])
            .stdout,
    );
    assert_eq!(
        v["checkpoint_remote"],
        json!({"url": derived, "source": "settings", "provider": "github", "repo": "acme/checkpoints"})
    );

    // Prove the derived URL is what git is given: route it to the local bare repository.
    route(env, derived, &w.checkpoints);
    write_and_push_to(env, &w.checkpoints);

    env.git(&[
        "remote",
        "set-url",
        "origin",
        &format!("https://user:{SECRET}@git.example.com:8443/acme/code"),
    ]);
    let out = env.run_in(Store::Refs, env.repo(), &["config", "--json"]);
    assert_eq!(
        parse_json(&out.stdout)["checkpoint_remote"]["url"],
        json!("https://git.example.com:8443/acme/checkpoints.git")
    );
    assert!(!output_text(&out).contains(SECRET));
}

/// Every invalid value, from the per-clone file (the committed one's is never used before
/// `trust`, which refuses it: `trust::an_invalid_committed_checkpoint_remote_cannot_be_approved`):
/// `config`, `status` and `push` fail naming the problem and change nothing; the pre-push hook
/// warns once, keeps the refs queued and never sends them to the code remote; the secret of a
/// URL with credentials is never printed.
#[test]
fn bad_checkpoint_remote_values_are_refused_and_nothing_moves() {
    let secret_url = format!("https://user:{SECRET}@127.0.0.1:1/cp.git");
    let token_url = format!("https://{SECRET}@127.0.0.1:1/cp.git");
    let cases = [
        (
            json!({"provider": "github", "repo": ""}),
            "is not of the form owner/name",
        ),
        (
            json!({"provider": "github", "repo": "justname"}),
            "is not of the form owner/name",
        ),
        (
            json!({"provider": "github", "repo": "a/b/../c"}),
            "is not of the form owner/name",
        ),
        (
            json!({"provider": "gitea", "repo": "a/b"}),
            "unknown provider \"gitea\"",
        ),
        (json!({"url": ""}), "url is empty"),
        (json!({"url": secret_url}), "carries credentials"),
        (json!({"url": token_url}), "carries credentials"),
        (json!({"repo": "a/b"}), "provider is required"),
        (json!(["a/b"]), "must be a JSON object"),
        (json!({"url": 7}), "invalid type"),
    ];
    let w = world();
    let env = &w.env;
    write_std(env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    for (value, want) in cases {
        set_checkpoint_remote(env.repo(), "settings.local.json", value.clone());
        let before = env.refs_snapshot();
        for args in [
            &["config"][..],
            &["status", "--json"],
            &["push"],
            &["show", HEX_ID_2],
        ] {
            let out = env.run_in(Store::Refs, env.repo(), args);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{value} {args:?}: {}",
                output_text(&out)
            );
            let err = stderr(&out);
            assert!(err.contains(want), "{value} {args:?}: {err}");
            assert!(err.contains(".git/entire/settings.local.json"), "{err}");
            assert!(
                !output_text(&out).contains(SECRET),
                "{args:?} printed the secret"
            );
        }
        let out = env
            .bin_cmd(&prepush_bin())
            .env("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs")
            .args(["origin", path_str(&w.origin)])
            .write_stdin(Vec::new())
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "pre-push never fails the push");
        let err = stderr(&out);
        assert_eq!(err.matches("warning:").count(), 1, "{err}");
        assert!(err.contains(want) && err.contains("stay queued"), "{err}");
        assert!(!output_text(&out).contains(SECRET));
        assert_eq!(
            env.refs_snapshot(),
            before,
            "{value}: nothing changed locally"
        );
        assert!(env.checkpoint_refs_in(&w.origin).is_empty(), "{value}");
    }
    std::fs::remove_file(env.repo().join(".git/entire/settings.local.json")).unwrap();
    assert_eq!(
        env.queued_in(Some(Store::Refs), env.repo()),
        1,
        "the checkpoint stayed queued"
    );
}

#[test]
fn a_missing_or_refusing_checkpoint_remote_keeps_refs_queued_and_the_code_push_proceeds() {
    let w = world();
    let env = &w.env;
    env.ok(Store::Refs, &["hooks", "install"]);
    write_std(env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);

    let missing = env.root().join("no-such-repo.git");
    set_checkpoint_remote(env.repo(), "settings.json", url_form(&missing));
    env.trust_in(env.repo());
    new_commit(env, "one");
    let out = env.git_hooked(
        Some(Store::Refs),
        env.repo(),
        &["push", "-q", "origin", "main"],
    );
    assert_success(&out, &["push", "origin", "main"]);
    let err = stderr(&out);
    assert!(
        err.contains(&format!("couldn't reach {}", path_str(&missing))),
        "{err}"
    );
    assert!(err.contains("stay queued"), "{err}");
    assert_eq!(err.matches("warning:").count(), 1, "one warning: {err}");
    assert_eq!(
        env.git_in(&w.origin, &["rev-parse", "main"]),
        env.git(&["rev-parse", "main"])
    );
    assert!(env.checkpoint_refs_in(&w.origin).is_empty());
    assert_eq!(env.queued_in(Some(Store::Refs), env.repo()), 1);

    // A server that refuses every ref.
    let refusing = env.new_bare("refusing");
    crate::env::write_executable(
        &refusing.join("hooks/pre-receive"),
        "#!/bin/sh\necho 'checkpoints not welcome' >&2\nexit 1\n",
    );
    set_checkpoint_remote(env.repo(), "settings.json", url_form(&refusing));
    env.trust_in(env.repo());
    new_commit(env, "two");
    let out = env.git_hooked(
        Some(Store::Refs),
        env.repo(),
        &["push", "-q", "origin", "main"],
    );
    assert_success(&out, &["push", "origin", "main"]);
    let err = stderr(&out);
    assert!(err.contains("they stay queued"), "{err}");
    assert_eq!(err.matches("warning:").count(), 1, "one warning: {err}");
    assert!(env.checkpoint_refs_in(&refusing).is_empty());
    assert!(env.checkpoint_refs_in(&w.origin).is_empty());
    assert_eq!(env.queued_in(Some(Store::Refs), env.repo()), 1);
    assert_eq!(
        env.git_in(&w.origin, &["rev-parse", "main"]),
        env.git(&["rev-parse", "main"])
    );

    // Once it is fixed, the next push delivers.
    set_checkpoint_remote(env.repo(), "settings.json", url_form(&w.checkpoints));
    env.trust_in(env.repo());
    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    assert_success(&out, &["push"]);
    assert_eq!(
        env.checkpoint_refs_in(&w.checkpoints),
        vec![checkpoint_ref(HEX_ID)]
    );
    assert_eq!(env.queued_in(Some(Store::Refs), env.repo()), 0);
}

#[test]
fn a_public_forge_code_remote_gets_one_warning_per_clone() {
    let w = world();
    let env = &w.env;
    let public = "https://github.com/acme/code.git";
    env.git(&["remote", "set-url", "origin", public]);
    route(env, public, &w.origin);
    write_std(env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    assert_success(&out, &["push"]);
    let err = stderr(&out);
    assert_eq!(err.matches("hosted on github.com").count(), 1, "{err}");
    assert!(
        err.contains("checkpoint_remote") && err.contains("once per clone"),
        "{err}"
    );
    assert_eq!(
        env.checkpoint_refs_in(&w.origin),
        vec![checkpoint_ref(HEX_ID)]
    );
    assert!(env
        .common_dir()
        .join("entire/public-remote-warned")
        .exists());

    write_std(env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);
    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    assert_success(&out, &["push"]);
    assert!(!stderr(&out).contains("hosted on"), "{}", stderr(&out));
    assert_eq!(env.checkpoint_refs_in(&w.origin).len(), 2);
}

#[test]
fn a_self_hosted_code_remote_gets_no_public_warning() {
    let w = world();
    let env = &w.env;
    write_std(env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let out = env.run_in(Store::Refs, env.repo(), &["push"]);
    assert_success(&out, &["push"]);
    assert!(!stderr(&out).contains("hosted on"), "{}", stderr(&out));
    assert!(!env
        .common_dir()
        .join("entire/public-remote-warned")
        .exists());
    let v = parse_json(
        &env.run_in(Store::Refs, env.repo(), &["status", "--json"])
            .stdout,
    );
    assert_eq!(v["checkpoint_remote"], Value::Null);
    assert_eq!(v["checkpoint_delivery"], json!("origin"));
}

#[test]
fn the_git_branch_primary_pushes_its_branch_to_the_checkpoint_remote_only() {
    let w = world();
    let env = &w.env;
    set_checkpoint_remote(env.repo(), "settings.json", url_form(&w.checkpoints));
    env.trust_in(env.repo());
    write_std(env, Store::Branch, HEX_ID, "s1", TRANSCRIPT);
    let out = env.run(Store::Branch, &["push"]);
    assert_success(&out, &["push"]);
    let branch = "refs/heads/entire/checkpoints/v1";
    assert_eq!(
        env.git_in(&w.checkpoints, &["rev-parse", branch]),
        env.git(&["rev-parse", branch])
    );
    let on_origin = env.git_in(&w.origin, &["for-each-ref", "refs/heads/entire/"]);
    assert_eq!(on_origin, "", "the code remote has no checkpoint branch");
}

/// A clone whose `checkpoint_remote` (`settings.local.json`) cannot be reached, while `origin`'s
/// remote-tracking v1 branch holds the checkpoints: reads use every local copy first; only what
/// is held nowhere here is fetched, and a failed fetch is said to be one.
#[test]
fn an_unreachable_checkpoint_remote_does_not_hide_the_local_copies() {
    let w = world();
    let env = &w.env;
    write_std(env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    env.write_file("a.txt", b"line one\n");
    env.git(&["add", "a.txt"]);
    env.git(&[
        "commit",
        "-q",
        "-m",
        &format!("work\n\nEntire-Checkpoint: {HEX_ID}"),
    ]);
    env.write_file("a.txt", b"line one\nline two\n");
    env.git(&["add", "a.txt"]);
    env.git(&[
        "commit",
        "-q",
        "-m",
        "elsewhere\n\nEntire-Checkpoint: 0123456789ab",
    ]);
    env.git(&["push", "-q", "origin", "main", crate::env::V1_BRANCH]);
    let clone = env.clone_of(&w.origin, "clone", &[]);
    let down = "http://127.0.0.1:1/checkpoints.git";
    set_checkpoint_remote(&clone, "settings.local.json", json!({ "url": down }));
    let run = |args: &[&str]| env.run_primary_in(None, &clone, args);

    // show: from origin's remote-tracking branch, without asking the checkpoint remote.
    let out = run(&["show", HEX_ID, "--json"]);
    assert_success(&out, &["show"]);
    assert_eq!(parse_json(&out.stdout)["checkpoint_id"], HEX_ID);
    let out = run(&["show", "HEAD~1", "--json"]);
    assert_success(&out, &["show", "HEAD~1"]);

    // A checkpoint held nowhere here: the fetch fails, and says so (exit 1, not 3).
    let out = run(&["show", "0123456789ab"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("127.0.0.1:1") && !err.contains("not found"),
        "{err}"
    );

    // blame: the linked checkpoint read locally; the other's failed fetch named as such, and
    // the command fails after its output (exit 1).
    let out = run(&["blame", "a.txt", "--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let doc = parse_json(&out.stdout);
    let status = |id: &str| {
        doc["checkpoints"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["checkpoint_id"] == id)
            .map(|c| c["status"].as_str().unwrap().to_owned())
    };
    assert_eq!(status(HEX_ID).as_deref(), Some("read"), "{doc:#} {err}");
    assert_eq!(
        status("0123456789ab").as_deref(),
        Some("fetch_failed"),
        "{doc:#}"
    );
    assert!(
        err.contains("could not be fetched from")
            && err.contains("127.0.0.1:1")
            && !err.contains("not found"),
        "{err}"
    );

    // list <range>: the held checkpoint is found locally; the fetch failure fails the command.
    let out = run(&["list", "main", "--json"]);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let doc = parse_json(&out.stdout);
    let found: Vec<(String, bool)> = doc["commits"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["checkpoints"].as_array().unwrap().clone())
        .map(|cp| {
            (
                cp["checkpoint_id"].as_str().unwrap().to_owned(),
                cp["found"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(
        found.contains(&(HEX_ID.to_owned(), true)),
        "{found:?} {err}"
    );
    assert!(err.contains("127.0.0.1:1"), "{err}");
}
