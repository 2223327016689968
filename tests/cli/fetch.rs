//! Fetching checkpoints from a (local, bare) remote: on-demand in `show`, and `git-entire-fetch`
//! with named IDs, `--all` and `--for <range>` (docs/cli.md).

use serde_json::json;

use crate::env::{assert_code, assert_success, checkpoint_ref, Store, TestEnv, REFS_PREFIX};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, ULID_ID};

/// Writes a checkpoint, pushes its ref to `origin` with plain git, deletes the local ref.
/// Returns the commit.
fn remote_only(env: &TestEnv, id: &str) -> String {
    write_std(env, Store::Refs, id, "sess-1", TRANSCRIPT);
    let name = checkpoint_ref(id);
    let commit = env.rev(&name).unwrap();
    env.git(&["push", "-q", "origin", &format!("{name}:{name}")]);
    env.git(&["update-ref", "-d", &name]);
    assert!(env.rev(&name).is_none());
    commit
}

#[test]
fn show_fetches_a_missing_checkpoint_on_demand() {
    let env = TestEnv::new();
    env.bare_remote("origin");
    for id in [HEX_ID, ULID_ID] {
        let commit = remote_only(&env, id);
        let out = env.run(Store::Refs, &["show", id, "--json", "--no-fetch"]);
        assert_code(&out, 3, "--no-fetch does not fetch");
        let v = env.ok_json(Store::Refs, &["show", id, "--json"]);
        assert_eq!(v["checkpoint_id"], json!(id));
        assert_eq!(v["commit"], json!(commit));
        assert_eq!(
            env.rev(&checkpoint_ref(id)).as_deref(),
            Some(commit.as_str()),
            "the fetched ref is kept locally"
        );
    }
}

#[test]
fn show_with_unreachable_remote_is_an_error_not_absence() {
    let env = TestEnv::new();
    let missing = env.root().join("no-such-remote.git");
    env.git(&["remote", "add", "origin", missing.to_str().unwrap()]);
    let out = env.run(Store::Refs, &["show", HEX_ID, "--json"]);
    let stderr = assert_code(&out, 1, "show with an unreachable remote");
    assert!(!stderr.trim().is_empty());
}

#[test]
fn fetch_named_ids() {
    let env = TestEnv::new();
    env.bare_remote("origin");
    let a = remote_only(&env, HEX_ID);
    let b = remote_only(&env, HEX_ID_2);
    let out = env.fetch_in(env.repo(), &["origin", HEX_ID]);
    assert_success(&out, &["git-entire-fetch origin <id>"]);
    assert_eq!(env.rev(&checkpoint_ref(HEX_ID)), Some(a));
    assert!(
        env.rev(&checkpoint_ref(HEX_ID_2)).is_none(),
        "only the named ID is fetched"
    );
    // Default remote: origin.
    let out = env.fetch_in(env.repo(), &[HEX_ID_2]);
    assert_success(&out, &["git-entire-fetch <id>"]);
    assert_eq!(env.rev(&checkpoint_ref(HEX_ID_2)), Some(b));
}

#[test]
fn fetch_missing_id_exits_3() {
    let env = TestEnv::new();
    env.bare_remote("origin");
    remote_only(&env, HEX_ID);
    let out = env.fetch_in(env.repo(), &["origin", "0badc0ffee00"]);
    assert_code(&out, 3, "fetch of an ID that exists nowhere");
}

#[test]
fn fetch_unreachable_remote_exits_1() {
    let env = TestEnv::new();
    let missing = env.root().join("no-such-remote.git");
    env.git(&["remote", "add", "origin", missing.to_str().unwrap()]);
    let out = env.fetch_in(env.repo(), &["origin", HEX_ID]);
    assert_code(
        &out,
        1,
        "unreachable remote is a failure, never \"not found\"",
    );
}

#[test]
fn fetch_all() {
    let env = TestEnv::new();
    env.bare_remote("origin");
    let a = remote_only(&env, HEX_ID);
    let b = remote_only(&env, ULID_ID);
    let out = env.fetch_in(env.repo(), &["origin", "--all"]);
    assert_success(&out, &["git-entire-fetch --all"]);
    assert_eq!(env.rev(&checkpoint_ref(HEX_ID)), Some(a));
    assert_eq!(env.rev(&checkpoint_ref(ULID_ID)), Some(b));
}

#[test]
fn fetch_for_a_revision_range_fetches_exactly_the_trailers() {
    let env = TestEnv::new();
    env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    let a = remote_only(&env, HEX_ID);
    let b = remote_only(&env, ULID_ID);
    remote_only(&env, HEX_ID_2);
    env.write_file("one.txt", b"1\n");
    env.git(&["add", "one.txt"]);
    env.git(&[
        "commit",
        "-q",
        "-m",
        &format!("one\n\nEntire-Checkpoint: {HEX_ID}\n"),
    ]);
    env.write_file("two.txt", b"2\n");
    env.git(&["add", "two.txt"]);
    env.git(&[
        "commit",
        "-q",
        "-m",
        &format!("two\n\nEntire-Checkpoint: {ULID_ID}\n"),
    ]);
    let out = env.fetch_in(env.repo(), &["origin", "--for", "origin/main..HEAD"]);
    assert_success(&out, &["git-entire-fetch --for origin/main..HEAD"]);
    assert_eq!(env.rev(&checkpoint_ref(HEX_ID)), Some(a));
    assert_eq!(env.rev(&checkpoint_ref(ULID_ID)), Some(b));
    assert!(
        env.rev(&checkpoint_ref(HEX_ID_2)).is_none(),
        "a checkpoint not named in the range is not fetched"
    );
    assert_eq!(env.refs_under(REFS_PREFIX).len(), 2);
}
