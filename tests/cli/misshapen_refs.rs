//! Refs under `refs/entire/checkpoints/` that are not checkpoints (a tree, a tag, a commit
//! without a checkpoint) are never pushed, and `push`, `gc` and `migrate` say so instead of
//! breaking on them.

use crate::env::{assert_code, checkpoint_ref, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT, ULID_ID};

#[test]
fn refs_that_are_not_checkpoints_are_never_pushed_and_are_reported() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    write_std(&env, Store::Refs, ULID_ID, "s1", TRANSCRIPT);
    let good = checkpoint_ref(ULID_ID);
    // A tree, an annotated tag and a commit of the empty tree, each at a checkpoint ref name.
    let tree_ref = checkpoint_ref("0123456789ab");
    let empty_tree = env.empty_tree();
    env.git(&["update-ref", &tree_ref, &empty_tree]);
    env.git(&["tag", "-a", "-m", "t", "not-a-checkpoint", "HEAD"]);
    let tag_oid = env
        .git(&["rev-parse", "refs/tags/not-a-checkpoint"])
        .trim()
        .to_owned();
    let tag_ref = checkpoint_ref("ba9876543210");
    env.git(&["update-ref", &tag_ref, &tag_oid]);
    let empty_commit = env
        .git(&["commit-tree", &empty_tree, "-m", "empty"])
        .trim()
        .to_owned();
    let commit_ref = checkpoint_ref(HEX_ID);
    env.git(&["update-ref", &commit_ref, &empty_commit]);

    let out = env.run(Store::Refs, &["push", "origin", "--all"]);
    let err = assert_code(&out, 0, "push --all");
    let on_remote = env.git_in(
        &origin,
        &["for-each-ref", "--format=%(refname)", "refs/entire/"],
    );
    assert_eq!(
        on_remote.trim(),
        good,
        "only the checkpoint reached the remote"
    );
    assert!(err.contains("not a checkpoint"), "{err}");

    let out = env.run(Store::Refs, &["gc", "--keep-days", "0"]);
    let err = assert_code(&out, 0, "gc");
    for name in [&tree_ref, &tag_ref, &commit_ref] {
        assert!(
            err.lines()
                .any(|l| l.contains(name.as_str()) && l.contains("not a checkpoint")),
            "gc names {name}: {err}"
        );
        assert!(env.rev(name).is_some(), "gc keeps {name}");
    }
    let out = env.run(Store::Refs, &["migrate"]);
    let err = assert_code(&out, 0, "migrate");
    assert!(
        err.contains(&tree_ref) && err.contains("not a checkpoint"),
        "{err}"
    );
}
