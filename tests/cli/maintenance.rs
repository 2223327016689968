//! What users run to keep a repository tidy, or to move work around, loses nothing of ours:
//! `git gc --prune=now`, `git maintenance run`, `git fetch --prune`, `git stash`, `git am` and
//! `git push --all`, `--tags` and `--mirror` leave every checkpoint ref, the staged session and
//! the push queue as they were; our pre-push hook adds no deletion of a checkpoint ref
//! (docs/reliability.md, "Maintenance").

use crate::commit_hooks::{install_hooks, record};
use crate::env::{parse_json, refs_in, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT};

/// What of ours a command could lose: the checkpoint refs and the v1 branch, the staged
/// sessions, and how many refs wait to be pushed.
fn ours(env: &TestEnv, store: Store) -> (String, String, u64) {
    let refs = format!(
        "{:?}{:?}",
        refs_in(env, env.repo(), "refs/entire/"),
        refs_in(env, env.repo(), "refs/heads/entire/")
    );
    let staged = env.ok_primary_in(None, env.repo(), &["session", "list", "--json"]);
    let staged = parse_json(staged.as_bytes()).to_string();
    (refs, staged, env.queued_in(Some(store), env.repo()))
}

fn maintenance_loses_nothing_of_ours(store: Store) {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    write_std(&env, store, HEX_ID, "s1", TRANSCRIPT);
    write_std(&env, store, HEX_ID_2, "s2", TRANSCRIPT);
    record(&env, env.repo(), "staged-1", Some(TRANSCRIPT), &[]);
    let before = ours(&env, store);
    if store == Store::Refs {
        assert_eq!(before.2, 2, "two refs queued");
    }

    // A patch to apply with `git am`, made on a branch and taken off it.
    env.git(&["checkout", "-q", "-b", "topic"]);
    env.write_file("patched.txt", b"patched\n");
    env.git(&["add", "patched.txt"]);
    env.git(&["commit", "-q", "-m", "a patch"]);
    let patch = env.git(&["format-patch", "-1", "--stdout"]);
    env.git(&["checkout", "-q", "main"]);
    env.git(&["branch", "-q", "-D", "topic"]);
    let patch_file = env.input(patch.as_bytes());
    let patch_path = patch_file.to_str().unwrap().to_owned();

    let steps: [&[&str]; 8] = [
        &["gc", "--prune=now", "--quiet"],
        &["maintenance", "run", "--task=gc", "--quiet"],
        &["maintenance", "run", "--task=loose-objects", "--quiet"],
        &["maintenance", "run", "--task=incremental-repack", "--quiet"],
        &["fetch", "-q", "--prune", "origin"],
        &["fetch", "-q", "--prune", "--prune-tags", "origin"],
        &["am", "-q", &patch_path],
        &["tag", "v1"],
    ];
    for step in steps {
        env.git(step);
        assert_eq!(ours(&env, store), before, "after git {step:?}");
    }
    env.write_file("wip.txt", b"work in progress\n");
    env.git(&["add", "wip.txt"]);
    env.git(&["stash", "-q"]);
    assert_eq!(ours(&env, store), before, "after git stash");
    env.git(&["stash", "pop", "-q"]);
    assert_eq!(ours(&env, store), before, "after git stash pop");
    env.git(&["fsck", "--no-progress"]);

    // Pushes with our hooks: the checkpoints go with them; nothing of ours is deleted here or
    // there, and the staged session stays staged.
    install_hooks(&env);
    for push in [
        &["push", "-q", "--all", "origin"][..],
        &["push", "-q", "--tags", "origin"],
    ] {
        env.git_hooked_ok(Some(store), env.repo(), push);
        let (refs, staged, _) = ours(&env, store);
        assert_eq!(
            (refs, staged),
            (before.0.clone(), before.1.clone()),
            "{push:?}"
        );
    }
    let pushed = format!(
        "{:?}{:?}",
        refs_in(&env, &origin, "refs/entire/"),
        refs_in(&env, &origin, "refs/heads/entire/")
    );
    assert_eq!(pushed, before.0, "every checkpoint reached origin");

    // --mirror deletes what the remote has and the clone lacks (git's rule, documented): our
    // hook adds no deletion of its own, and every checkpoint of ours is there after it.
    let mirror = env.new_bare("mirror");
    let mirror_arg = mirror.to_str().unwrap().to_owned();
    env.git_hooked_ok(
        Some(store),
        env.repo(),
        &["push", "-q", "--mirror", &mirror_arg],
    );
    let mirrored = format!(
        "{:?}{:?}",
        refs_in(&env, &mirror, "refs/entire/"),
        refs_in(&env, &mirror, "refs/heads/entire/")
    );
    assert_eq!(mirrored, before.0, "the mirror holds every checkpoint");
    assert_eq!(ours(&env, store).0, before.0);
}

both_stores! {
    loses_nothing => maintenance_loses_nothing_of_ours;
}
