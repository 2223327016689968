//! A teammate's fresh clone reads every checkpoint its history names, wherever the remote keeps
//! it: the v1 branch (as a remote-tracking branch, or fetched on demand in a single-branch
//! clone) and checkpoint refs, with default settings and under a git-refs primary.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::{assert_code, checkpoint_ids, parse_json, TestEnv, V1_BRANCH};
use crate::fixtures::{HEX_ID, HEX_ID_2, ULID_ID};

/// A writer repository with a bare `origin` holding `main`.
fn writer() -> (TestEnv, PathBuf) {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    (env, origin)
}

/// Writes checkpoint `id` (one session) in `dir` with the repository's settings, links it from
/// a new commit on main and pushes both.
fn write_linked(env: &TestEnv, dir: &Path, id: &str, session: &str) {
    let t = env.input_file(&format!("{id}.jsonl"), b"{\"type\":\"user\",\"n\":1}\n");
    env.write(None, session)
        .id(id)
        .transcript(&t)
        .in_dir(dir)
        .ok();
    env.git_in(
        dir,
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            &format!("work on {id}\n\nEntire-Checkpoint: {id}"),
        ],
    );
    env.git_in(dir, &["push", "-q", "origin", "main"]);
    env.ok_primary_in(None, dir, &["push", "origin"]);
}

fn show_id(env: &TestEnv, dir: &Path, what: &str) -> String {
    let v: Value = parse_json(
        env.ok_primary_in(None, dir, &["show", what, "--json"])
            .as_bytes(),
    );
    let v = if v.is_array() { v[0].clone() } else { v };
    v["checkpoint_id"].as_str().unwrap_or_default().to_owned()
}

fn listed(env: &TestEnv, dir: &Path, args: &[&str]) -> Vec<String> {
    let mut all = vec!["list", "--json"];
    all.extend_from_slice(args);
    let v = parse_json(env.ok_primary_in(None, dir, &all).as_bytes());
    checkpoint_ids(v.as_array().unwrap())
}

fn statuses(v: &Value) -> Vec<(String, String)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["checkpoint_id"].as_str().unwrap().to_owned(),
                e["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn default_store_is_read_from_the_remote_tracking_branch_of_a_fresh_clone() {
    let (env, origin) = writer();
    write_linked(&env, env.repo(), HEX_ID, "s1");
    let branch = V1_BRANCH.to_owned();
    assert!(
        !env.git_in(&origin, &["for-each-ref", &branch]).is_empty(),
        "the v1 branch reached the remote"
    );

    let dir = env.clone_of(&origin, "teammate", &[]);
    assert!(
        env.git_in(&dir, &["for-each-ref", &branch]).is_empty(),
        "a clone has no local v1 branch"
    );
    assert_eq!(show_id(&env, &dir, "HEAD"), HEX_ID);
    assert_eq!(show_id(&env, &dir, HEX_ID), HEX_ID);
    assert_eq!(listed(&env, &dir, &[]), vec![HEX_ID.to_owned()]);
    assert_eq!(
        statuses(&env.entire_fetch(&dir, &["origin", HEX_ID])),
        vec![(HEX_ID.to_owned(), "present".to_owned())]
    );
}

#[test]
fn a_single_branch_clone_fetches_the_branch_on_demand_once() {
    let (env, origin) = writer();
    write_linked(&env, env.repo(), HEX_ID, "s1");
    let tracking = "refs/remotes/origin/entire/checkpoints/v1";

    let dir = env.clone_of(&origin, "single", &["--single-branch"]);
    assert!(env.git_in(&dir, &["for-each-ref", tracking]).is_empty());
    assert_eq!(show_id(&env, &dir, "HEAD"), HEX_ID);
    let fetched = env.git_in(&dir, &["rev-parse", tracking]);
    let remote_tip = env.git_in(&origin, &["rev-parse", V1_BRANCH]);
    assert_eq!(fetched, remote_tip, "fetched into the remote-tracking ref");
    assert!(
        env.git_in(&dir, &["for-each-ref", V1_BRANCH]).is_empty(),
        "no local branch of the user's was created"
    );

    let other = env.clone_of(&origin, "single-2", &["--single-branch"]);
    assert_eq!(
        statuses(&env.entire_fetch(&other, &["origin", HEX_ID])),
        vec![(HEX_ID.to_owned(), "fetched".to_owned())]
    );
    let third = env.clone_of(&origin, "single-3", &["--single-branch"]);
    assert_eq!(listed(&env, &third, &[]), Vec::<String>::new());
    assert_eq!(listed(&env, &third, &["--remote"]), vec![HEX_ID.to_owned()]);
}

#[test]
fn a_stale_tracking_branch_is_fetched_again_before_not_found() {
    let (env, origin) = writer();
    write_linked(&env, env.repo(), HEX_ID, "s1");
    let dir = env.clone_of(&origin, "teammate", &[]);
    write_linked(&env, env.repo(), HEX_ID_2, "s2");
    assert_eq!(show_id(&env, &dir, HEX_ID_2), HEX_ID_2);

    let out = env.run_primary_in(None, &dir, &["show", "0123456789ab"]);
    let err = assert_code(&out, 3, "show of a checkpoint that exists nowhere");
    assert!(err.contains("0123456789ab"), "{err}");
}

#[test]
fn mixed_history_resolves_hex_ids_on_the_branch_and_ulids_as_refs() {
    let (env, origin) = writer();
    // Older commits: hex IDs on the v1 branch (before the team switched primaries).
    write_linked(&env, env.repo(), HEX_ID, "s1");
    env.write_file(
        ".entire/settings.json",
        br#"{"checkpoints": {"primary": {"type": "git-refs"}}}"#,
    );
    env.git(&["add", ".entire/settings.json"]);
    env.git(&["commit", "-q", "-m", "switch to git-refs"]);
    write_linked(&env, env.repo(), ULID_ID, "s2");
    assert!(env.rev(V1_BRANCH).is_some());

    for extra in [&[][..], &["--single-branch"][..]] {
        let dir = env.clone_of(&origin, &format!("mixed{}", extra.len()), extra);
        assert_eq!(show_id(&env, &dir, "HEAD"), ULID_ID);
        assert_eq!(show_id(&env, &dir, "HEAD~2"), HEX_ID);
    }
}

#[test]
fn the_first_push_to_an_empty_remote_says_the_branch_waits() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    let t = env.input_file("t.jsonl", b"{}\n");
    env.write(None, "s1").id(HEX_ID).transcript(&t).ok();
    let out = env.run_primary_in(None, env.repo(), &["push", "origin"]);
    let err = assert_code(&out, 0, "push to an empty remote");
    assert!(
        err.contains("was not pushed") && err.contains("git entire-checkpoint push origin"),
        "one line says the branch waits and what to run: {err}"
    );
    assert!(env.git_in(&origin, &["for-each-ref", V1_BRANCH]).is_empty());
    env.git(&["push", "-q", "origin", "main"]);
    let err = assert_code(
        &env.run_primary_in(None, env.repo(), &["push", "origin"]),
        0,
        "push",
    );
    assert!(!err.contains("was not pushed"), "{err}");
    assert!(!env.git_in(&origin, &["for-each-ref", V1_BRANCH]).is_empty());
}

#[test]
fn list_remote_of_an_unreachable_remote_fails_naming_it() {
    let env = TestEnv::new();
    env.git(&["remote", "add", "gone", "/nonexistent/gone.git"]);
    let out = env.run_primary_in(None, env.repo(), &["list", "--remote", "gone"]);
    let err = assert_code(&out, 1, "list --remote gone");
    assert!(
        err.contains("could not list the checkpoints of gone") && !err.contains("refs/entire"),
        "names the remote, not the ref prefix: {err}"
    );
}

#[test]
fn a_remote_tracking_branch_that_is_not_a_commit_is_set_aside_with_a_warning() {
    let (env, origin) = writer();
    write_linked(&env, env.repo(), HEX_ID, "s1");
    let dir = env.clone_of(&origin, "teammate", &[]);
    // A local checkpoint of the teammate's own, then a broken remote-tracking ref.
    let t = env.input_file("local.jsonl", b"{}\n");
    env.write(None, "s2")
        .id(HEX_ID_2)
        .transcript(&t)
        .in_dir(&dir)
        .ok();
    let tree = env.git_in(&dir, &["rev-parse", "HEAD^{tree}"]);
    let tracking = "refs/remotes/origin/entire/checkpoints/v1";
    env.git_in(&dir, &["update-ref", tracking, tree.trim()]);
    let out = env.run_primary_in(None, &dir, &["show", HEX_ID_2, "--json", "--no-fetch"]);
    let err = assert_code(&out, 0, "the local checkpoint is still readable");
    assert!(
        err.lines()
            .any(|l| l.contains(tracking) && l.contains("not a commit")),
        "one warning names the ref: {err}"
    );
    let out = env.run_primary_in(None, &dir, &["list"]);
    let err = assert_code(&out, 0, "list");
    assert!(err.contains(tracking), "{err}");
}

#[test]
fn entire_fetch_for_and_all_bring_v1_checkpoints() {
    let (env, origin) = writer();
    write_linked(&env, env.repo(), HEX_ID, "s1");
    write_linked(&env, env.repo(), HEX_ID_2, "s2");

    let dir = env.clone_of(&origin, "for", &["--single-branch"]);
    let mut got = statuses(&env.entire_fetch(&dir, &["--for", "HEAD~2..HEAD"]));
    got.sort();
    let mut want = vec![
        (HEX_ID.to_owned(), "fetched".to_owned()),
        (HEX_ID_2.to_owned(), "fetched".to_owned()),
    ];
    want.sort();
    assert_eq!(got, want);
    let mut again = statuses(&env.entire_fetch(&dir, &["--for", "HEAD~2..HEAD"]));
    again.sort();
    assert!(again.iter().all(|(_, s)| s == "present"), "{again:?}");

    let dir = env.clone_of(&origin, "all", &["--single-branch"]);
    let mut got = statuses(&env.entire_fetch(&dir, &["--all"]));
    got.sort();
    assert_eq!(got, want, "--all fetched the branch's checkpoints");
    let again = statuses(&env.entire_fetch(&dir, &["--all"]));
    assert!(again.iter().all(|(_, s)| s == "present"), "{again:?}");
}

#[test]
fn one_command_fetches_the_branch_once_whatever_it_reads() {
    let (env, origin) = writer();
    write_linked(&env, env.repo(), HEX_ID, "s1");
    write_linked(&env, env.repo(), HEX_ID_2, "s2");
    // One commit naming both, plus one that exists nowhere.
    env.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        &format!("both\n\nEntire-Checkpoint: {HEX_ID}\nEntire-Checkpoint: {HEX_ID_2}\nEntire-Checkpoint: 0123456789ab"),
    ]);
    env.git(&["push", "-q", "origin", "main"]);
    let dir = env.clone_of(&origin, "single", &["--single-branch"]);
    let out = env
        .cmd()
        .current_dir(&dir)
        .env("ENTIRE_LOG", "debug")
        .args(["show", "HEAD", "--json"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    let fetches = err
        .lines()
        .filter(|l| l.contains("run git fetch") && l.contains("refs/fetched/branch"))
        .count();
    assert_eq!(fetches, 1, "one fetch of the branch:\n{err}");
    // The two held are shown; the dangling one is named (a partial read, docs/cli.md).
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("no checkpoint matches \"0123456789ab\""),
        "the dangling one is named: {err}"
    );
    assert_eq!(parse_json(&out.stdout).as_array().map(Vec::len), Some(2));
}

#[test]
fn pushing_the_checkpoint_branch_by_hand_with_the_hooks_installed_works() {
    let (env, origin) = writer();
    env.ok_primary_in(None, env.repo(), &["hooks", "install"]);
    let t = env.input_file("t.jsonl", b"{}\n");
    env.write(None, "s1").id(HEX_ID).transcript(&t).ok();
    let out = env
        .git_command_in(env.repo(), &["push", "origin", "entire/checkpoints/v1"])
        .env("PATH", crate::env::path_with_bins())
        .output()
        .unwrap();
    assert!(out.status.success(), "git push of the v1 branch: {out:?}");
    assert_eq!(
        env.git_in(&origin, &["rev-parse", V1_BRANCH]),
        env.git(&["rev-parse", V1_BRANCH]),
        "the remote has the branch"
    );
}

#[test]
fn an_unreachable_remote_is_asked_once_for_a_hex_id_under_git_refs() {
    let env = TestEnv::new();
    env.git(&["remote", "add", "origin", "/nonexistent/origin.git"]);
    // A hex ID under a git-refs primary is looked for as a ref, then on the v1 branch: the
    // second look must not try the remote again once the first found it unreachable.
    let out = env
        .cmd_as(crate::env::Store::Refs)
        .env("ENTIRE_LOG", "debug")
        .args(["show", "0123456789ab"])
        .output()
        .unwrap();
    let err = assert_code(&out, 1, "show with an unreachable remote");
    let fetches = err.lines().filter(|l| l.contains("run git fetch ")).count();
    assert_eq!(
        fetches, 1,
        "one fetch, then the failure is remembered:\n{err}"
    );
}
