//! Messages as git writes them (docs/cli.md, "Messages"): `warning:`, `fatal:` for what exits
//! 128, `error:` otherwise, what git itself said quoted on `git said:` lines, `hint:` for the next
//! step, no Rust internals; no command prints git's short usage; `-q` given to the git command
//! that runs a hook silences our informational lines.

use crate::commit_hooks::{commit, install_hooks, record, LINE_1, SESSION};
use crate::env::{assert_code, text, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT};

/// Lines of ours that are not in git's message vocabulary.
fn assert_no_foreign_prefix(stderr: &str) {
    for bad in [
        "entire: warning:",
        "entire: error:",
        "(os error",
        "Some(",
        "None",
    ] {
        assert!(!stderr.contains(bad), "no {bad:?} in messages:\n{stderr}");
    }
}

#[test]
fn no_command_prints_the_short_usage_on_stdout_and_every_command_it_names_exists() {
    let env = TestEnv::new();
    let out = env.cmd().output().unwrap();
    assert_code(&out, 1, "no command, as `git` alone");
    let usage = text(&out.stdout);
    assert!(
        usage.starts_with("usage: git entire-checkpoint "),
        "{usage}"
    );
    assert!(usage.lines().count() < 25, "short: {usage}");
    assert!(out.stderr.is_empty(), "{}", text(&out.stderr));
    let named: Vec<&str> = usage
        .lines()
        .filter(|l| l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(named.len() >= 8, "{named:?}");
    for cmd in named {
        let help = env.cmd().args([cmd, "-h"]).output().unwrap();
        assert_code(
            &help,
            0,
            &format!("{cmd} -h: the usage names a real command"),
        );
    }
}

#[test]
fn outside_a_repository_is_fatal_as_git_says_it() {
    let env = TestEnv::without_repo();
    let out = env.cmd().args(["list"]).output().unwrap();
    let stderr = assert_code(&out, 128, "outside a repository");
    assert!(stderr.starts_with("fatal: "), "{stderr}");
    assert_no_foreign_prefix(&stderr);
}

#[test]
fn not_found_says_no_checkpoint_matches_and_hints_the_next_step() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    for missing in ["0123456789ab", "01JABCDEFGHJKMNPQRSTVWXYZ0"] {
        let out = env.run(Store::Refs, &["show", missing]);
        let stderr = assert_code(&out, 3, "an ID-shaped value that is not held");
        assert!(
            stderr.starts_with(&format!("error: no checkpoint matches \"{missing}\": ")),
            "{stderr}"
        );
        assert!(stderr.contains("\nhint: "), "{stderr}");
        assert_no_foreign_prefix(&stderr);
    }
    let out = env.run(Store::Refs, &["show", HEX_ID, "--session", "nosuch"]);
    let stderr = assert_code(
        &out,
        1,
        "a session the checkpoint lacks (the checkpoint exists)",
    );
    assert!(
        stderr.contains(&format!(
            "checkpoint {HEX_ID} has no session matching \"nosuch\""
        )),
        "{stderr}"
    );
}

#[test]
fn what_git_said_is_quoted_on_its_own_line_and_os_errors_read_as_words() {
    let env = TestEnv::new();
    env.git(&["remote", "add", "gone", "/nonexistent/gone.git"]);
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let out = env.run(Store::Refs, &["push", "gone"]);
    let stderr = assert_code(&out, 1, "push to a remote that is not there");
    let first = stderr.lines().next().unwrap_or_default();
    assert!(
        first.starts_with("error: ") && first.contains("gone") && !first.contains("fatal:"),
        "our line names the remote, git's text is not nested in it:\n{stderr}"
    );
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with("git said: fatal: ") && l.contains("/nonexistent/gone.git")),
        "{stderr}"
    );
    assert_no_foreign_prefix(&stderr);

    let out = env.run(
        Store::Refs,
        &[
            "session",
            "record",
            "--session",
            "s1",
            "--transcript",
            "/nonexistent/t.jsonl",
        ],
    );
    let stderr = assert_code(&out, 1, "a transcript that is not there");
    assert!(stderr.contains("No such file or directory"), "{stderr}");
    assert_no_foreign_prefix(&stderr);
}

/// `git commit -q` and `git push -q` pass no flag to hooks; ours read it from the git command
/// and print nothing but warnings. Without `-q` the same commands say what they did.
#[test]
fn hooks_honour_git_quiet() {
    let env = TestEnv::new();
    install_hooks(&env);
    let remote = env.bare_remote("origin");
    let staged_commit = |quiet: bool, file: &str| {
        record(
            &env,
            env.repo(),
            SESSION,
            Some(format!("{LINE_1}\n").as_bytes()),
            &[],
        );
        env.write_file(file, b"x\n");
        env.git(&["add", file]);
        let mut args = vec!["commit", "-m", file];
        if quiet {
            args.insert(1, "-q");
        }
        env.git_hooked_ok(Some(Store::Refs), env.repo(), &args)
    };
    let loud = staged_commit(false, "a.txt");
    assert!(
        loud.contains("entire: "),
        "a commit says what it wrote:\n{loud}"
    );
    let quiet = staged_commit(true, "b.txt");
    assert!(
        !quiet.contains("entire:"),
        "git commit -q: nothing of ours:\n{quiet}"
    );

    let pushed = |quiet: bool| {
        let mut args = vec!["push", "origin", "HEAD:refs/heads/main"];
        if quiet {
            args.insert(1, "-q");
        }
        env.git_hooked_ok(Some(Store::Refs), env.repo(), &args)
    };
    let quiet = pushed(true);
    assert!(
        !quiet.contains("entire:"),
        "git push -q: nothing of ours:\n{quiet}"
    );
    let refs = env.git(&[
        "--git-dir",
        crate::env::path_str(&remote),
        "for-each-ref",
        "refs/entire/checkpoints/",
    ]);
    assert_eq!(
        refs.lines().count(),
        2,
        "the quiet push delivered both:\n{refs}"
    );
    commit(&env, Some(Store::Refs), "c.txt", "no session");
    staged_commit(true, "d.txt");
    let loud = pushed(false);
    assert!(
        loud.contains("entire: "),
        "git push says what it pushed:\n{loud}"
    );
}
