//! A teammate's first day: two clones of one origin, the author's with the hooks `enable`
//! installed and `.entire/` committed (as `enable` says to), the teammate's fresh. The
//! teammate's clone says in one line what to run until its hooks are installed.

use std::path::{Path, PathBuf};

use crate::commit_hooks::{commit, record};
use crate::env::TestEnv;

/// The command a clone without hooks is told to run.
const ENABLE: &str = "git entire-checkpoint enable";

/// The author's repository, enabled under the git-refs primary with `.entire/` committed, one
/// condensed session committed and everything pushed to a bare `origin`; returns the origin and
/// the commit.
fn author() -> (TestEnv, PathBuf, String) {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    // enable says to commit what it wrote to .entire/, which is what tells every clone.
    let said = env.ok_default(&["enable", "--store", "git-refs"]);
    assert!(
        said.lines()
            .any(|l| l.starts_with("commit .entire/")
                && l.ends_with("git add .entire && git commit")),
        "{said}"
    );
    env.git(&["add", ".entire"]);
    env.git(&["commit", "-q", "-m", "Enable checkpoints"]);
    record(
        &env,
        env.repo(),
        "author-1",
        Some(b"{\"type\":\"user\",\"message\":{\"content\":\"hi\"}}\n"),
        &[],
    );
    let (head, _) = commit(&env, None, "a.txt", "work");
    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    (env, origin, head)
}

/// How many stderr lines of each command a teammate runs first (`show` of `what`) name
/// `enable`.
fn told(env: &TestEnv, dir: &Path, what: &str) -> Vec<(String, usize)> {
    let t = env.input(b"{\"type\":\"user\",\"message\":{\"content\":\"x\"}}\n");
    let t = t.to_str().unwrap();
    let commands: [&[&str]; 4] = [
        &[
            "session",
            "record",
            "--session",
            "mate-1",
            "--transcript",
            t,
        ],
        &["status"],
        &["list"],
        &["show", what],
    ];
    commands
        .iter()
        .map(|args| {
            let out = env.run_primary_in(None, dir, args);
            assert!(out.status.success(), "{args:?}: {out:?}");
            let err = String::from_utf8_lossy(&out.stderr);
            let lines = err.lines().filter(|l| l.contains(ENABLE)).count();
            (args[0].to_owned(), lines)
        })
        .collect()
}

#[test]
fn a_fresh_clone_whose_settings_enable_checkpoints_says_once_to_run_enable() {
    let (env, origin, head) = author();
    let said = |dir: &Path, n: usize| {
        for (cmd, lines) in told(&env, dir, &head) {
            assert_eq!(lines, n, "{cmd} in {}", dir.display());
        }
    };
    // The author's clone has its hooks: nothing to say.
    said(env.repo(), 0);
    let mate = env.clone_of(&origin, "mate", &[]);
    said(&mate, 1);
    env.ok_primary_in(None, &mate, &["enable"]);
    said(&mate, 0);
}

#[test]
fn a_clone_whose_settings_are_not_committed_is_not_told() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    let mate = env.clone_of(&origin, "mate", &[]);
    let t = env.input_file("w.jsonl", b"{\"type\":\"user\"}\n");
    env.ok_primary_in(
        None,
        &mate,
        &[
            "write",
            "--id",
            "c00000000001",
            "--session",
            "s",
            "--transcript",
            t.to_str().unwrap(),
        ],
    );
    for (cmd, lines) in told(&env, &mate, "c00000000001") {
        assert_eq!(lines, 0, "{cmd}");
    }
}
