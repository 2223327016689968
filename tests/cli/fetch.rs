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

/// A bare `origin` holding `n` checkpoint refs (one small orphan commit each), made in one
/// `git fast-import` stream; returns its refs with their commits.
fn remote_of_many(
    env: &TestEnv,
    n: usize,
    init: &[&str],
) -> std::collections::BTreeMap<String, String> {
    let origin = env.root().join("origin.git");
    let mut args = vec!["init", "-q", "--bare", "-b", "main"];
    args.extend_from_slice(init);
    args.push(crate::env::path_str(&origin));
    env.git_in(env.root(), &args);
    let mut stream = String::new();
    for i in 0..n {
        let id = format!("{i:012x}");
        let meta = format!("{{\"checkpoint_id\": \"{id}\"}}\n");
        let message = format!("Checkpoint: {id}\n");
        stream.push_str(&format!(
            "commit {}\ncommitter T <t@example.com> 1767225600 +0000\ndata {}\n{message}M 100644 inline metadata.json\ndata {}\n{meta}\n",
            checkpoint_ref(&id),
            message.len(),
            meta.len()
        ));
    }
    env.git_stdin_in(&origin, &["fast-import", "--quiet"], stream.as_bytes());
    env.git(&["remote", "add", "origin", crate::env::path_str(&origin)]);
    crate::env::refs_in(env, &origin, REFS_PREFIX)
}

/// `--all` from a remote of many refs creates them together: in the files backend as lines of
/// `packed-refs` (not a loose file each), in reftable in one transaction; git reads every one
/// at the remote's commit, and a second run finds them all present.
#[test]
fn fetch_all_of_many_refs_writes_them_together() {
    const N: usize = 2_000;
    for init in [crate::env::files_refs(), &["--ref-format=reftable"][..]] {
        if init.contains(&"--ref-format=reftable")
            && !crate::env::git_at_least(2, 45, "reftable repositories")
        {
            continue;
        }
        let env = TestEnv::without_repo();
        env.init_repo(init);
        env.git(&["commit", "-q", "--allow-empty", "-m", "init"]);
        let remote = remote_of_many(&env, N, init);
        assert_eq!(remote.len(), N);
        let out = env.fetch_in(env.repo(), &["origin", "--all", "--json"]);
        assert_success(&out, &["git-entire-fetch --all"]);
        let outcomes = crate::env::parse_json(&out.stdout);
        let fetched = outcomes
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| o["status"] == "fetched")
            .count();
        assert_eq!(fetched, N, "{init:?}");
        assert_eq!(
            env.checkpoint_tips(),
            remote,
            "{init:?}: every ref at the remote's commit"
        );
        let loose = env.common_dir().join("refs/entire");
        let loose_files = walk_files(&loose);
        assert_eq!(loose_files, 0, "{init:?}: no loose checkpoint ref");
        crate::env::assert_fsck_clean(&env, env.repo());
        let again = env.fetch_in(env.repo(), &["origin", "--all", "--json"]);
        assert_success(&again, &["git-entire-fetch --all, again"]);
        let again = crate::env::parse_json(&again.stdout);
        assert!(
            again
                .as_array()
                .unwrap()
                .iter()
                .all(|o| o["status"] == "present"),
            "{init:?}"
        );
    }
}

/// The number of files under `dir` (0 when it does not exist).
fn walk_files(dir: &std::path::Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.path().is_dir() {
            true => walk_files(&e.path()),
            false => 1,
        })
        .sum()
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
