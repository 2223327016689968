//! A teammate's shallow clone (`git clone --depth`, `--shallow-since`) reads the checkpoints of
//! the commits it has, and says where its history ends instead of failing or passing over it.

use crate::env::{assert_code, parse_json, stderr, Store, TestEnv};
use crate::fixtures::{HEX_ID, HEX_ID_2};

/// A third checkpoint.
const HEX_ID_3: &str = "0a1b2c3d4e5f";

/// A writer whose `origin` holds three commits, each changing `notes.txt` and linked to a
/// checkpoint of the git-refs store, all pushed; its `file://` URL (a local path would ignore
/// `--depth`).
fn served(env: &TestEnv) -> String {
    let origin = env.bare_remote("origin");
    for (n, id) in [HEX_ID, HEX_ID_2, HEX_ID_3].into_iter().enumerate() {
        let t = env.input_file(&format!("{id}.jsonl"), b"{\"type\":\"user\",\"n\":1}\n");
        env.write(Store::Refs, "s1").id(id).transcript(&t).ok();
        let lines: String = (0..=n).map(|i| format!("line {i}\n")).collect();
        env.write_file("notes.txt", lines.as_bytes());
        env.git(&["add", "notes.txt"]);
        env.git(&[
            "commit",
            "-q",
            "-m",
            &format!("step {n}\n\nEntire-Checkpoint: {id}"),
        ]);
    }
    env.git(&["push", "-q", "origin", "main"]);
    env.ok(Store::Refs, &["push", "origin"]);
    format!("file://{}", origin.display())
}

#[test]
fn a_shallow_clone_reads_what_it_has_and_says_where_history_ends() {
    let env = TestEnv::new();
    let url = served(&env);
    let dir = env.root().join("mate");
    let dir_arg = dir.to_str().unwrap().to_owned();
    env.git_in(env.root(), &["clone", "-q", "--depth", "2", &url, &dir_arg]);
    let end = env.git_in(&dir, &["rev-parse", "--short=12", "HEAD~1"]);
    let end = end.trim();

    let shown = env.ok_in(Store::Refs, &dir, &["show", "HEAD~1", "--json"]);
    assert_eq!(parse_json(shown.as_bytes())["checkpoint_id"], HEX_ID_2);

    // The whole history it has: both linked commits, and where it ends.
    let out = env.run_in(Store::Refs, &dir, &["list", "HEAD", "--json"]);
    let err = assert_code(&out, 0, "list HEAD");
    let commits = parse_json(&out.stdout);
    let ids: Vec<&str> = commits["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["checkpoints"][0]["checkpoint_id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(ids, [HEX_ID_3, HEX_ID_2], "{commits}");
    assert!(
        err.contains(&format!("history ends at {end} (a shallow clone)")),
        "{err}"
    );

    // A range reaching past it: git's refusal, and why.
    let out = env.run_in(Store::Refs, &dir, &["list", "HEAD~2..HEAD"]);
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("a shallow clone: its history ends at {end}")),
        "{}",
        stderr(&out)
    );

    // blame: the boundary takes the older lines, and says so.
    let out = env.run_in(Store::Refs, &dir, &["blame", "notes.txt", "--json"]);
    let err = assert_code(&out, 0, "blame");
    let report = parse_json(&out.stdout);
    assert_eq!(report["lines"].as_array().map(Vec::len), Some(3));
    assert!(
        err.contains(&format!("history ends at {end} (a shallow clone)")),
        "{err}"
    );
}
