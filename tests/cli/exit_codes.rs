//! Every row of the exit-code table of docs/cli.md ("Exit codes"), each through the command a
//! user would run, with the message that names what was expected.

use crate::env::{assert_code, fetch_bin, text, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT};

/// A checkpoint whose ID shares the prefix `a1b2c3d4e5` with [`HEX_ID`].
const NEIGHBOUR: &str = "a1b2c3d4e5f7";

/// A repository with two checkpoints whose IDs share a prefix, and a commit linking both.
fn repo_with_two_linked() -> TestEnv {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, Store::Refs, NEIGHBOUR, "sess-1", TRANSCRIPT);
    env.write_file("work.txt", b"work\n");
    env.git(&["add", "work.txt"]);
    let message = format!("Work\n\nEntire-Checkpoint: {HEX_ID}\nEntire-Checkpoint: {NEIGHBOUR}\n");
    env.git(&["commit", "-q", "-m", &message]);
    env
}

#[test]
fn usage_errors_exit_2_and_say_what_was_expected() {
    let env = repo_with_two_linked();
    let no_command = env.cmd().output().unwrap();
    assert_code(
        &no_command,
        1,
        "no command: git's short usage, as `git` alone does",
    );
    assert!(text(&no_command.stdout).starts_with("usage: git entire-checkpoint"));
    let bad_id = env.run(Store::Refs, &["show", "not-an-id!"]);
    assert_code(
        &bad_id,
        3,
        "a name that is neither an ID nor a commit is not found",
    );
    let ambiguous = env.run(Store::Refs, &["show", "a1b2"]);
    let msg = assert_code(&ambiguous, 2, "ambiguous prefix");
    assert!(
        msg.contains("ambiguous") && msg.contains(HEX_ID) && msg.contains(NEIGHBOUR),
        "{msg}"
    );
    for cmd in [&["cat", "HEAD", "metadata.json"][..], &["log", "HEAD"]] {
        let several = env.run(Store::Refs, cmd);
        let msg = assert_code(
            &several,
            2,
            "a commit linking two checkpoints where one is needed",
        );
        assert!(
            msg.contains("links 2 checkpoints") && msg.contains(NEIGHBOUR),
            "{msg}"
        );
    }
    env.bare_remote("origin");
    let nothing = env.bin_cmd(&fetch_bin()).output().unwrap();
    let msg = assert_code(&nothing, 2, "entire-fetch with nothing to fetch");
    assert!(msg.contains("--all"), "{msg}");
    let not_remote = env
        .bin_cmd(&fetch_bin())
        .args(["nosuchremote", HEX_ID])
        .output()
        .unwrap();
    let msg = assert_code(&not_remote, 2, "entire-fetch <not a remote> <ID>");
    assert!(
        msg.contains("\"nosuchremote\" is neither a remote"),
        "names the word and what it should be: {msg}"
    );
    let flag = env.cmd().arg("--no-such-flag").output().unwrap();
    assert_code(&flag, 2, "unknown flag");
}

#[test]
fn not_found_exits_3_with_one_reason_after_the_name() {
    let env = repo_with_two_linked();
    env.git(&["commit", "-q", "--allow-empty", "-m", "no trailer"]);
    let out = env.run(Store::Refs, &["show", "HEAD"]);
    let msg = assert_code(&out, 3, "a commit without trailers");
    assert!(
        msg.contains("no checkpoint matches \"HEAD\": the commit has no Entire-Checkpoint trailer"),
        "the reason follows the quoted name: {msg}"
    );
    let out = env.run(Store::Refs, &["cat", "HEAD~1", "0/full.jsonl"]);
    assert_code(&out, 2, "cat of a commit linking two");
    let out = env.run(Store::Refs, &["show", "0badc0ffee00", "--no-fetch"]);
    assert_code(&out, 3, "a missing ID");
    env.bare_remote("origin");
    let out = env
        .bin_cmd(&fetch_bin())
        .args(["origin", "0badc0ffee00"])
        .output()
        .unwrap();
    let msg = assert_code(&out, 3, "entire-fetch of an ID the remote lacks");
    assert_eq!(
        msg.matches("0badc0ffee00").count(),
        1,
        "the ID and its reason once: {msg}"
    );
}

#[test]
fn outside_a_repository_exits_128() {
    let env = TestEnv::new();
    let out = env
        .cmd()
        .current_dir(env.root())
        .args(["list"])
        .output()
        .unwrap();
    assert_code(&out, 128, "list outside a repository");
}
