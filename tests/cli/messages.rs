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

/// `git <args>` in the test repository as a user runs it (our binaries on `PATH`), man pages
/// looked up only in `manpath` and printed without a pager.
fn git_help(env: &TestEnv, manpath: &std::path::Path, args: &[&str]) -> std::process::Output {
    env.git_hooked_command(None, env.repo(), args)
        .env("MANPATH", manpath)
        .env("MANPAGER", "cat")
        .env("PAGER", "cat")
        .output()
        .unwrap()
}

/// The man viewer `enable` names in the repository's own config.
fn man_config(env: &TestEnv) -> String {
    env.git_command_in(
        env.repo(),
        &["config", "--local", "--get-regexp", "^man\\."],
    )
    .output()
    .map(|o| text(&o.stdout))
    .unwrap()
}

#[test]
fn help_without_man_pages_is_our_long_help_and_an_installed_page_still_wins() {
    let env = TestEnv::new();
    let no_pages = env.root().join("no-pages");
    std::fs::create_dir_all(&no_pages).unwrap();
    // git turns `--help` into `man git-entire-checkpoint`: without pages, a dead end.
    let out = git_help(&env, &no_pages, &["entire-checkpoint", "--help"]);
    assert!(!out.status.success(), "no page and no viewer yet: {out:?}");

    let json = env.ok_json_default(&["enable", "--json"]);
    let changes = json["changes"].as_array().unwrap();
    assert!(
        changes.contains(&serde_json::json!({"change": "help_viewer", "set": true})),
        "{json}"
    );
    assert!(
        man_config(&env).contains("man.viewer entire-checkpoints"),
        "{}",
        man_config(&env)
    );
    for (args, says) in [
        (
            &["entire-checkpoint", "--help"][..],
            "Usage: git-entire-checkpoint [OPTIONS] <COMMAND>",
        ),
        (
            &["help", "entire-checkpoint"][..],
            "Usage: git-entire-checkpoint [OPTIONS] <COMMAND>",
        ),
        (&["entire-fetch", "--help"][..], "Usage: git-entire-fetch"),
    ] {
        let out = git_help(&env, &no_pages, args);
        assert_code(&out, 0, &format!("git {args:?}"));
        assert!(text(&out.stdout).contains(says), "git {args:?}: {out:?}");
    }

    // An installed page wins, and every other page is man's as before.
    let status = std::process::Command::new("man")
        .arg("-w")
        .arg("man")
        .output();
    if !status.is_ok_and(|o| o.status.success()) {
        return crate::env::skip("no man(1) with its own page here");
    }
    let pages = env.root().join("pages");
    let out = env
        .bin_cmd(std::path::Path::new(env!(
            "CARGO_BIN_EXE_entire-checkpoints-man"
        )))
        .arg(pages.join("man1"))
        .output()
        .unwrap();
    assert_code(&out, 0, "entire-checkpoints-man");
    // `git help mine` is the guide gitmine(7).
    std::fs::create_dir_all(pages.join("man7")).unwrap();
    std::fs::write(
        pages.join("man7").join("gitmine.7"),
        ".TH GITMINE 7\n.SH NAME\ngitmine \\- a page of the user's\n",
    )
    .unwrap();
    for (args, says) in [
        (&["entire-checkpoint", "--help"][..], "EXIT STATUS"),
        (&["help", "mine"][..], "a page of the user's"),
    ] {
        let out = git_help(&env, &pages, args);
        assert_code(&out, 0, &format!("git {args:?}"));
        assert!(text(&out.stdout).contains(says), "git {args:?}: {out:?}");
    }

    // disable takes back what enable set, and nothing of it is left in .git/config.
    let json = env.ok_json_default(&["disable", "--json"]);
    assert!(
        json["changes"]
            .as_array()
            .unwrap()
            .contains(&serde_json::json!({"change": "help_viewer", "set": false})),
        "{json}"
    );
    assert_eq!(man_config(&env), "");
    let config = std::fs::read_to_string(env.common_dir().join("config")).unwrap();
    assert!(!config.contains("[man"), "{config}");
}

#[test]
fn a_man_viewer_of_the_users_is_left_alone() {
    let env = TestEnv::new();
    env.git(&["config", "--global", "man.viewer", "less"]);
    let json = env.ok_json_default(&["enable", "--json"]);
    assert!(!json.to_string().contains("help_viewer"), "{json}");
    assert_eq!(man_config(&env), "");
    env.git(&["config", "--local", "man.viewer", "mine"]);
    env.ok_json_default(&["disable", "--json"]);
    assert_eq!(man_config(&env), "man.viewer mine\n");
}

#[test]
fn verbose_reads_say_what_they_read_and_from_where() {
    let w = crate::remote_fetch::world();
    crate::remote_fetch::publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let verbose = |args: &[&str]| {
        let out = w.env.run_in(Store::Refs, &w.clone, args);
        text(&out.stderr)
    };
    let reference = crate::env::checkpoint_ref(HEX_ID);
    let origin = "origin";
    // On demand: fetched from the remote, then read from the ref at its commit.
    let said = verbose(&["show", "-v", HEX_ID]);
    let tip = w.env.git_in(&w.clone, &["rev-parse", &reference]);
    for line in [
        format!("entire: info: fetched {reference} from {origin}"),
        format!(
            "entire: info: checkpoint {HEX_ID}: read from {reference} at commit {} (git-refs store)",
            tip.trim()
        ),
    ] {
        assert!(said.contains(&line), "{line:?} in:\n{said}");
    }
    // Held here now: no fetch said.
    let said = verbose(&["show", "-v", HEX_ID]);
    assert!(!said.contains("fetched"), "{said}");
    // What the remote lacks is said, and that it is not asked again a moment later.
    let absent = crate::remote_fetch::ABSENT_ID;
    let said = verbose(&["show", "-v", absent]);
    assert!(
        said.contains(&format!(
            "entire: info: {origin} has no checkpoint {absent}"
        )),
        "{said}"
    );
    let said = verbose(&["show", "-v", absent]);
    assert!(said.contains("is not asked again"), "{said}");
    // Listings name the stores and the remote they enumerated.
    let said = verbose(&["list", "-v", "--remote"]);
    for part in [
        "entire: info: listed 1 checkpoints of the git-refs store (refs/entire/checkpoints/*",
        &format!("entire: info: {origin} has 1 checkpoint refs (git ls-remote)"),
    ] {
        assert!(said.contains(part), "{part:?} in:\n{said}");
    }
    // Without -v, none of it.
    let out = w.env.run_in(Store::Refs, &w.clone, &["show", HEX_ID]);
    assert!(!text(&out.stderr).contains("info:"), "{out:?}");
}
