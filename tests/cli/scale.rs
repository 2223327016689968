//! Cost awareness in `status`: local and remote checkpoint-ref counts (the remote one recorded
//! from the push's own results and from listings, with no extra round trip) and the warning for
//! a remote that carries code and many checkpoint refs.

use serde_json::{json, Value};

use crate::env::{assert_success, path_str, write_strategy_options, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2};

fn status(env: &TestEnv) -> Value {
    env.ok_json(Store::Refs, &["status", "--json"])
}

#[test]
fn status_counts_local_and_remote_refs_and_warns_above_the_threshold() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let v = status(&env);
    assert_eq!(
        v["checkpoint_refs"],
        json!({"local_count": 1, "remote_count": null, "remote_counted_at": null})
    );
    assert_eq!(v["scale_warning"], Value::Null);
    assert!(env
        .ok(Store::Refs, &["status"])
        .contains("refs     1 local, remote count not known yet"));

    assert_success(&env.run(Store::Refs, &["push"]), &["push"]);
    write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);
    assert_success(&env.run(Store::Refs, &["push"]), &["push"]);
    let on_remote = env
        .git_in(&origin, &["for-each-ref", "refs/entire/checkpoints/"])
        .lines()
        .count();
    assert_eq!(on_remote, 2);
    let v = status(&env);
    assert_eq!(v["checkpoint_refs"]["local_count"], json!(2));
    assert_eq!(
        v["checkpoint_refs"]["remote_count"],
        json!(on_remote),
        "{v}"
    );
    assert!(v["checkpoint_refs"]["remote_counted_at"].is_string());
    assert_eq!(v["scale_warning"], Value::Null, "below the default 5000");

    write_strategy_options(&env, json!({"checkpoint_ref_warn_threshold": 1}));
    let v = status(&env);
    let w = v["scale_warning"]
        .as_str()
        .expect("a warning above the threshold");
    assert!(
        w.starts_with("origin holds 2 checkpoint refs (more than 1)"),
        "{w}"
    );
    assert!(
        w.contains("checkpoint_remote") && w.contains("uploadpack.hideRefs"),
        "{w}"
    );
    assert!(env
        .ok(Store::Refs, &["status"])
        .contains("warning  origin holds 2"));

    // A dedicated checkpoint remote carries no code: no warning about it.
    let cp = env.new_bare("cp");
    write_strategy_options(
        &env,
        json!({"checkpoint_ref_warn_threshold": 1, "checkpoint_remote": {"url": path_str(&cp)}}),
    );
    env.trust_in(env.repo());
    assert_success(&env.run(Store::Refs, &["push"]), &["push"]);
    let v = status(&env);
    assert_eq!(
        v["checkpoint_refs"]["remote_count"],
        json!(2),
        "recorded by the first push's listing and the refs it created"
    );
    assert_eq!(v["scale_warning"], Value::Null);
}
