//! Reads ask the network once (docs/how-it-works.md, "Reads ask the network once"): what a
//! remote was asked for and lacked is remembered, so a second read of the same thing asks it
//! nothing; `--refresh` and `git entire-fetch` ask again, `entire.fetchMissTtl` bounds the
//! memory, and the remote's tips moving forgets it. A counting remote (`git http-backend` on
//! 127.0.0.1) says what each command asked. And the on-demand fetch of the v1 branch offers what
//! is already here as `have`s (`GIT_TRACE_PACKET`).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::env::{assert_code, parse_json, path_str, stderr, HttpBackend, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2};

/// A checkpoint the history links and no repository holds.
const ABSENT: &str = "0badc0ffee00";
/// Another, named only by the reads of these tests.
const NOWHERE: &str = "0123456789ab";

/// Commits `text` as `a.txt` with `message` in the writer repository.
fn commit(env: &TestEnv, text: &str, message: &str) {
    env.write_file("a.txt", text.as_bytes());
    env.git(&["add", "a.txt"]);
    env.git(&["commit", "-q", "-m", message]);
}

/// The writer's history (a commit linking HEX_ID, held on the v1 branch, then one linking
/// ABSENT, held nowhere) pushed to `<root>/served/origin.git`, served over smart HTTP; a fresh
/// clone of it over HTTP, with default settings. Returns the bare remote, the server and the
/// clone.
fn world(env: &TestEnv) -> (PathBuf, HttpBackend, PathBuf) {
    write_std(env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    commit(env, "one\n", &format!("one\n\nEntire-Checkpoint: {HEX_ID}"));
    commit(
        env,
        "one\ntwo\n",
        &format!("two\n\nEntire-Checkpoint: {ABSENT}"),
    );
    served_clone(env, &["main", crate::env::V1_BRANCH])
}

/// Pushes `refspecs` of the writer repository to `<root>/served/origin.git`, serves it over
/// smart HTTP and clones it from there, with default settings. Returns the bare remote, the
/// server and the clone.
pub(crate) fn served_clone(env: &TestEnv, refspecs: &[&str]) -> (PathBuf, HttpBackend, PathBuf) {
    let served = env.root().join("served");
    std::fs::create_dir_all(&served).unwrap();
    let origin = served.join("origin.git");
    env.git_in(
        env.root(),
        &["init", "-q", "--bare", "-b", "main", path_str(&origin)],
    );
    env.git(&[&["push", "-q", path_str(&origin)][..], refspecs].concat());
    let server = HttpBackend::start(env, &served);
    let clone = env.root().join("clone");
    env.git_in(
        env.root(),
        &["clone", "-q", &server.url("origin.git"), path_str(&clone)],
    );
    (origin, server, clone)
}

/// Runs `args` in `dir` with default settings; the output and how many upload-pack requests
/// the server got meanwhile.
fn counted(env: &TestEnv, server: &HttpBackend, dir: &Path, args: &[&str]) -> (Output, usize) {
    let before = server.upload_pack_requests();
    let out = env.run_primary_in(None, dir, args);
    (out, server.upload_pack_requests() - before)
}

/// The status blame gives checkpoint `id`.
fn blame_status(out: &Output, id: &str) -> String {
    let doc = parse_json(&out.stdout);
    let found = doc["checkpoints"]
        .as_array()
        .expect("checkpoints")
        .iter()
        .find(|c| c["checkpoint_id"] == id)
        .map(|c| c["status"].as_str().unwrap().to_owned());
    found.unwrap_or_else(|| panic!("{id} not in {doc:#}"))
}

#[test]
fn a_second_read_of_what_the_remote_lacks_asks_the_network_nothing() {
    let env = TestEnv::new();
    let (_origin, server, clone) = world(&env);

    // The first blame asks: one listing of the checkpoint refs, one fetch of the v1 branch.
    let (out, asked) = counted(&env, &server, &clone, &["blame", "a.txt", "--json"]);
    let err = assert_code(&out, 0, "first blame");
    assert_eq!(blame_status(&out, HEX_ID), "read", "{err}");
    assert_eq!(blame_status(&out, ABSENT), "not_found", "{err}");
    assert!(asked > 0, "the first blame asks the remote");
    let first = parse_json(&out.stdout);

    // The second asks nothing, labels the same, and says when the remote lacked it.
    let (out, asked) = counted(&env, &server, &clone, &["blame", "a.txt", "--json"]);
    let err = assert_code(&out, 0, "second blame");
    assert_eq!(asked, 0, "a second blame asks the network nothing: {err}");
    let second = parse_json(&out.stdout);
    assert_eq!(second["lines"], first["lines"]);
    assert_eq!(second["counts"], first["counts"]);
    assert_eq!(blame_status(&out, ABSENT), "not_found", "{err}");
    assert!(
        err.contains(&format!(
            "checkpoint {ABSENT}: not found locally, nor on origin"
        )) && err.contains("--refresh asks again"),
        "{err}"
    );

    // Nor do the other reads of it: show says when the remote lacked it and how to ask again.
    let (out, asked) = counted(&env, &server, &clone, &["show", ABSENT]);
    let err = assert_code(&out, 3, "show of what the remote lacked");
    assert_eq!(asked, 0, "{err}");
    assert!(
        err.contains(&format!("no checkpoint matches \"{ABSENT}\"")) && err.contains("--refresh"),
        "{err}"
    );
    let (out, asked) = counted(&env, &server, &clone, &["list", "main", "--json"]);
    let err = assert_code(&out, 0, "list main");
    assert_eq!(asked, 0, "{err}");

    // --refresh asks again, for blame, show and list <range> alike.
    for args in [
        &["blame", "a.txt", "--json", "--refresh"][..],
        &["show", ABSENT, "--refresh"],
        &["list", "main", "--json", "--refresh"],
    ] {
        let (out, asked) = counted(&env, &server, &clone, args);
        assert!(asked > 0, "{args:?} asks again: {}", stderr(&out));
    }

    // A remembered miss is no hard error: with a lifetime of 0 nothing is remembered.
    env.git_in(&clone, &["config", "entire.fetchMissTtl", "0"]);
    for _ in 0..2 {
        let (out, asked) = counted(&env, &server, &clone, &["show", ABSENT]);
        assert_code(&out, 3, "show, nothing remembered");
        assert!(asked > 0);
    }
    env.git_in(&clone, &["config", "--unset", "entire.fetchMissTtl"]);
}

#[test]
fn what_the_remote_gained_since_is_asked_for_again() {
    let env = TestEnv::new();
    let (origin, server, clone) = world(&env);
    let (out, _) = counted(&env, &server, &clone, &["show", ABSENT]);
    assert_code(&out, 3, "show of a checkpoint held nowhere");

    // The writer pushes it. The clone does not know yet, and does not ask within the lifetime.
    write_std(&env, Store::Branch, ABSENT, "sess-2", TRANSCRIPT_2);
    env.git(&["push", "-q", path_str(&origin), crate::env::V1_BRANCH]);
    let (out, asked) = counted(&env, &server, &clone, &["show", ABSENT]);
    assert_code(&out, 3, "still remembered");
    assert_eq!(asked, 0);

    // git entire-fetch always asks, and what it finds is read from then on.
    let out = env
        .bin_cmd(&crate::env::fetch_bin())
        .current_dir(&clone)
        .args([ABSENT])
        .output()
        .unwrap();
    assert_code(&out, 0, "entire-fetch of what the remote now has");
    let (out, asked) = counted(&env, &server, &clone, &["show", ABSENT, "--json"]);
    let err = assert_code(&out, 0, "show after entire-fetch");
    assert_eq!(parse_json(&out.stdout)["checkpoint_id"], ABSENT, "{err}");
    assert_eq!(asked, 0, "{err}");

    // Any read that sees the remote's v1 branch move forgets what it lacked: NOWHERE is
    // remembered, the branch moves, a read of a third checkpoint sees it, and NOWHERE is asked
    // for again.
    let (out, _) = counted(&env, &server, &clone, &["show", NOWHERE]);
    assert_code(&out, 3, "show of a checkpoint held nowhere");
    let (out, asked) = counted(&env, &server, &clone, &["show", NOWHERE]);
    assert_code(&out, 3, "remembered");
    assert_eq!(asked, 0);
    write_std(&env, Store::Branch, HEX_ID_2, "sess-3", TRANSCRIPT_2);
    env.git(&["push", "-q", path_str(&origin), crate::env::V1_BRANCH]);
    let (out, asked) = counted(&env, &server, &clone, &["show", HEX_ID_2, "--json"]);
    assert_code(&out, 0, "show of the new checkpoint");
    assert!(asked > 0);
    let (out, asked) = counted(&env, &server, &clone, &["show", NOWHERE]);
    assert_code(&out, 3, "asked again, still absent");
    assert!(asked > 0, "the remote's tips moved: {}", stderr(&out));
}

#[test]
fn the_on_demand_fetch_of_the_v1_branch_offers_what_is_here() {
    // A fresh clone holds the remote's v1 branch as it was; a read of a checkpoint added since
    // fetches the branch from a side repository, which must offer that tip as a `have` so only
    // the new commits travel (otherwise every read downloads the whole branch again).
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main", crate::env::V1_BRANCH]);
    let clone = env.clone_of(&origin, "clone", &[]);
    let tracking = "refs/remotes/origin/entire/checkpoints/v1";
    let old = env.git_in(&clone, &["rev-parse", tracking]);
    write_std(&env, Store::Branch, HEX_ID_2, "sess-2", TRANSCRIPT_2);
    env.git(&["push", "-q", "origin", crate::env::V1_BRANCH]);

    let trace = env.root().join("packets");
    let out = env
        .cmd_primary(None)
        .current_dir(&clone)
        .env("GIT_TRACE_PACKET", &trace)
        .args(["show", HEX_ID_2, "--json"])
        .output()
        .unwrap();
    assert_code(&out, 0, "show of a checkpoint added since the clone");
    let trace = std::fs::read_to_string(&trace).expect("the fetch was traced");
    assert!(
        trace.contains(&format!("have {}", old.trim())),
        "the side repository offers the branch it has:\n{trace}"
    );
    let new = env.git(&["rev-parse", crate::env::V1_BRANCH]);
    assert_eq!(
        env.git_in(&clone, &["rev-parse", tracking]).trim(),
        new.trim()
    );
}
