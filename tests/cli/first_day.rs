//! A teammate's first day: two clones of one origin, the author's with the hooks `enable`
//! installed and `.entire/` committed (as `enable` says to), the teammate's fresh. The
//! teammate's clone says in one line what to run until its hooks are installed.

use std::path::{Path, PathBuf};

use crate::commit_hooks::{commit, record};
use crate::env::{assert_code, assert_success, TestEnv};

/// The command a clone without hooks is told to run.
const ENABLE: &str = "git entire-checkpoint enable";

/// The author's repository, enabled under the git-refs primary with `.entire/` committed, one
/// condensed session committed and everything pushed to a bare `origin`; returns the origin and
/// the commit.
fn author() -> (TestEnv, PathBuf, String) {
    let (env, origin, head) = unpushed_author();
    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    (env, origin, head)
}

/// [`author`] before the push: the commit and its checkpoint are only in the author's clone.
fn unpushed_author() -> (TestEnv, PathBuf, String) {
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

/// `blame` of a directory says it is one, not that no such file exists (exit 2).
#[test]
fn blame_of_a_directory_says_it_is_one() {
    let env = TestEnv::new();
    env.write_file("src/a.txt", b"one\n");
    env.git(&["add", "src"]);
    env.git(&["commit", "-q", "-m", "src"]);
    let err = assert_code(&env.run_default(&["blame", "src"]), 2, "blame src");
    assert!(err.contains("src: is a directory"), "{err}");
    assert!(!err.contains("no such file"), "{err}");
}

/// Every page the man pages refer to (`name(1)`) is one they generate: clap's `help`
/// subcommand is not listed.
#[test]
fn the_man_pages_refer_only_to_pages_that_are_generated() {
    let env = TestEnv::new();
    let dir = env.root().join("man1");
    let bin = Path::new(env!("CARGO_BIN_EXE_entire-checkpoints-man"));
    let out = env.bin_cmd(bin).arg(&dir).output().unwrap();
    assert_success(&out, &["entire-checkpoints-man"]);
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page))
            .unwrap()
            .replace("\\-", "-");
        for (at, _) in text.match_indices("(1)") {
            let name = text[..at]
                .rsplit(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .next()
                .unwrap_or_default();
            if name.starts_with("git-entire") {
                assert!(
                    pages.contains(&format!("{name}.1")),
                    "{page} refers to {name}(1)"
                );
            }
        }
    }
}

/// The lock files under `<common>/entire/sessions`.
fn session_locks(env: &TestEnv) -> Vec<String> {
    let dir = env.common_dir().join("entire").join("sessions");
    std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".lock"))
                .collect()
        })
        .unwrap_or_default()
}

/// No lock file outlives a session command: `session discard nosuch` fails (exit 1) without
/// leaving `.nosuch.lock`, and a record, its condensation by a commit and a discard leave none.
#[test]
fn no_session_command_leaves_a_lock_file() {
    let env = TestEnv::new();
    let out = env.run_default(&["session", "discard", "nosuch"]);
    let err = assert_code(&out, 1, "discard of a session never staged");
    assert!(err.contains("no staged session nosuch"), "{err}");
    assert!(
        !env.common_dir().join("entire").join("sessions").exists(),
        "nothing created"
    );
    crate::commit_hooks::install_hooks(&env);
    record(&env, env.repo(), "s1", Some(b"{\"type\":\"user\"}\n"), &[]);
    assert_eq!(session_locks(&env), Vec::<String>::new(), "after record");
    commit(&env, None, "a.txt", "work");
    env.ok_default(&["session", "list"]);
    assert_eq!(session_locks(&env), Vec::<String>::new(), "after a commit");
    env.ok_default(&["session", "discard", "s1"]);
    let out = env.run_default(&["session", "discard", "s1"]);
    assert_code(&out, 1, "a second discard");
    assert_eq!(session_locks(&env), Vec::<String>::new(), "after discard");
}

/// A transcript in no shape an agent writes gets one warning from `write` and `session
/// record`, and is stored as given; JSON lines and an agent's JSON document get none.
#[test]
fn a_transcript_that_is_not_json_lines_gets_one_warning() {
    let env = TestEnv::new();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/transcripts");
    let plain = env.input_file("notes.md", b"# What I did\nI asked the agent.\n");
    let cases = [
        (plain, 1),
        (fixtures.join("claude-code.jsonl"), 0),
        (fixtures.join("gemini-cli.json"), 0),
        (fixtures.join("kiro.json"), 0),
    ];
    for (n, (file, warnings)) in cases.iter().enumerate() {
        let file = file.to_str().unwrap();
        let id = format!("c0000000000{n}");
        let runs: [Vec<&str>; 2] = [
            vec!["write", "--id", &id, "--session", "s", "--transcript", file],
            vec!["session", "record", "--session", "s", "--transcript", file],
        ];
        for args in runs {
            let out = env.run_default(&args);
            assert_success(&out, &args);
            let err = String::from_utf8_lossy(&out.stderr);
            let said = err.lines().filter(|l| l.starts_with("warning: ")).count();
            assert_eq!(said, *warnings, "{args:?}: {err}");
            if *warnings == 1 {
                assert!(err.contains("is not JSON lines"), "{err}");
                assert!(err.contains("stored as given"), "{err}");
            }
        }
        let stored = env.ok_default(&["cat", &id, "0/full.jsonl"]);
        assert_eq!(stored.as_bytes(), std::fs::read(file).unwrap(), "{file}");
    }
}

/// `list` in a fresh clone, where the checkpoints are on origin only: it says how many origin
/// holds that are not here and the command that fetches them, from one listing of origin
/// remembered for the next `list` (which asks nothing: it works with origin gone); `--no-fetch`
/// asks nothing; `--json` and `--ids` are as before; after the fetch it says nothing.
#[test]
fn list_in_a_fresh_clone_says_what_the_remote_holds_and_how_to_fetch_it() {
    let (env, origin, _head) = author();
    let told = "warning: origin holds 1 checkpoint not fetched here";
    let hint = "hint: `git entire-fetch --all` fetches them";
    let list = |dir: &Path, args: &[&str]| {
        let out = env.run_primary_in(None, dir, args);
        assert_success(&out, args);
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    // Without the network, nothing is known: nothing said, nothing remembered.
    let quiet = env.clone_of(&origin, "quiet", &[]);
    let (out, err) = list(&quiet, &["list", "--no-fetch"]);
    assert_eq!(out, "");
    assert!(!err.contains("holds"), "{err}");
    assert!(!env
        .common_dir_in(&quiet)
        .join("entire/remote-held")
        .exists());
    // JSON and IDs are as they were, and ask nothing.
    let mate = env.clone_of(&origin, "mate", &[]);
    for args in [&["list", "--json"][..], &["list", "--ids"]] {
        let (out, err) = list(&mate, args);
        assert!(out.trim() == "[]" || out.is_empty(), "{args:?}: {out}");
        assert!(!err.contains("holds"), "{args:?}: {err}");
    }
    let (out, err) = list(&mate, &["list"]);
    assert_eq!(out, "", "nothing local yet");
    assert!(err.contains(&format!("{told} (listed just now)")), "{err}");
    assert!(err.contains(hint), "{err}");
    // Remembered: origin is not asked again (it is gone), and --no-fetch reads the memory too.
    let gone = origin.with_extension("gone");
    std::fs::rename(&origin, &gone).unwrap();
    for args in [&["list"][..], &["list", "--no-fetch"]] {
        let (_, err) = list(&mate, args);
        assert!(err.contains(told) && err.contains(hint), "{args:?}: {err}");
    }
    std::fs::rename(&gone, &origin).unwrap();
    let fetched = env.fetch_in(&mate, &["--all"]);
    assert!(fetched.status.success(), "{fetched:?}");
    let (out, err) = list(&mate, &["list"]);
    assert_eq!(out.lines().count(), 1, "{out}");
    assert!(!err.contains("holds"), "{err}");
}

/// A commit whose checkpoint its author has not pushed yet (pushed with `--no-verify`, so our
/// pre-push did not run): a teammate's `show` of it is "not found" (exit 3), and the hint says
/// the author may not have pushed it, since the remote was asked and lacks it. Once the author
/// pushes, `--refresh` reads it. An ID given by hand that no one holds gets no such hint.
#[test]
fn a_checkpoint_its_author_has_not_pushed_says_so() {
    let (env, origin, head) = unpushed_author();
    env.git_hooked_ok(
        None,
        env.repo(),
        &["push", "-q", "--no-verify", "origin", "main"],
    );
    let held = env.git_in(
        &origin,
        &["for-each-ref", "--format=%(refname)", "refs/entire/"],
    );
    assert_eq!(held, "", "the checkpoint stayed with its author");

    let mate = env.clone_of(&origin, "mate", &[]);
    let hint = "may not have pushed it yet";
    let out = env.run_primary_in(None, &mate, &["show", &head]);
    let err = assert_code(&out, 3, "show of a commit whose checkpoint is not pushed");
    assert!(err.contains("no checkpoint matches"), "{err}");
    assert!(
        err.lines()
            .any(|l| l.starts_with("hint: ") && l.contains(hint)),
        "{err}"
    );
    // A made-up ID names no commit: nothing suggests anyone will push it.
    let out = env.run_primary_in(None, &mate, &["show", "a1b2c3d4e5f6"]);
    let err = assert_code(&out, 3, "show of an ID no one holds");
    assert!(!err.contains(hint), "{err}");

    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    let out = env.run_primary_in(None, &mate, &["show", "--refresh", &head]);
    assert_success(&out, &["show", "--refresh", &head]);
}
