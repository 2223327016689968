//! Every git its users run: the whole user story with the oldest git the suite runs (git 2.39,
//! `/usr/bin/git`, as Debian 12 and Apple ship it) first on `PATH`, as a GUI client runs hooks;
//! and a git below the minimum we support: one clear error and nothing written for a command,
//! one warning and a successful git command for a hook, nothing lost.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::commit_hooks::{lines, record, the_trailer, trailer_ids, LINE_1, SESSION};
use crate::env::{
    assert_checkpoints_reached, assert_code, checkpoint_bin, checkpoint_ref, parse_json, path_str,
    rev_in, skip, stderr, stdout, text, write_executable, Store, TestEnv, V1_BRANCH,
};

/// The oldest git the suite runs with (`ENTIRE_TEST_OLD_GIT`, else `/usr/bin/git`) and what
/// `--version` says, when it is another git than the one on `PATH`; otherwise the test says why
/// it is skipped.
fn oldest_git() -> Option<(PathBuf, String)> {
    let git = PathBuf::from(
        std::env::var_os("ENTIRE_TEST_OLD_GIT").unwrap_or_else(|| "/usr/bin/git".into()),
    );
    let version = |program: &Path| {
        std::process::Command::new(program)
            .arg("--version")
            .output()
            .ok()
            .map(|o| text(&o.stdout).trim().to_owned())
    };
    let (Some(old), Some(new)) = (version(&git), version(Path::new("git"))) else {
        skip(&format!("no git at {}", git.display()));
        return None;
    };
    if old == new {
        skip(&format!("{} is the git on PATH ({old})", git.display()));
        return None;
    }
    Some((git, old))
}

/// `<our binaries>:<dir>:/bin`: the `PATH` a GUI client gives the hooks, with `dir`'s git.
fn minimal_path(dir: &Path) -> std::ffi::OsString {
    let bins = checkpoint_bin().parent().expect("binary dir").to_path_buf();
    std::env::join_paths([bins, dir.to_path_buf(), PathBuf::from("/bin")]).expect("join PATH")
}

/// `program <args>` in `dir` with the test environment and `path` as `PATH`.
fn run_with_path(env: &TestEnv, path: &std::ffi::OsStr, dir: &Path, args: &[&str]) -> Output {
    let mut cmd = env.git_command_in(dir, &[]);
    cmd.args(args).env("PATH", path);
    cmd.output().expect("run git")
}

/// The whole story with git 2.39 first on `PATH` (`PATH=<bins>:/usr/bin:/bin`): enable, a
/// staged session, a commit, a push, a teammate's fresh clone showing the commit's checkpoint,
/// `git entire-fetch`, `list --remote` and `doctor`, in both stores.
fn the_whole_story_with_the_oldest_git(store: Store) {
    let Some((old, old_version)) = oldest_git() else {
        return;
    };
    // Refs in files, which every git reads (reftable needs 2.45); objects in the profile's
    // format (git 2.39 reads SHA-256).
    let env = TestEnv::with_files_refs();
    let path = minimal_path(old.parent().expect("git's directory"));
    let origin = env.new_bare_with("origin", crate::env::files_refs());
    let run = |dir: &Path, args: &[&str]| run_with_path(&env, &path, dir, args);
    let ok = |dir: &Path, args: &[&str]| {
        assert_code(
            &run(dir, args),
            0,
            &format!("{args:?} with {}", old.display()),
        )
    };
    // `git entire-checkpoint <args>` in `dir`, through the old git: stdout.
    let entire = |dir: &Path, args: &[&str]| {
        let out = run(dir, &[&["entire-checkpoint"], args].concat());
        assert_code(&out, 0, &format!("entire-checkpoint {args:?}"));
        stdout(&out)
    };
    let clone = |name: &str| {
        let dir = env.root().join(name);
        ok(
            env.root(),
            &["clone", "-q", path_str(&origin), path_str(&dir)],
        );
        dir
    };
    let repo = env.repo();
    assert_eq!(
        stdout(&run(repo, &["--version"])).trim(),
        old_version,
        "the story runs the oldest git"
    );
    ok(repo, &["remote", "add", "origin", path_str(&origin)]);
    ok(repo, &["push", "-q", "origin", "main"]);
    entire(repo, &["enable", "--store", store.name()]);

    record(&env, repo, SESSION, Some(&lines(&[LINE_1])), &[]);
    env.write_file("a.txt", b"a\n");
    ok(repo, &["add", "a.txt"]);
    let committed = ok(repo, &["commit", "-q", "-m", "a"]);
    assert!(!committed.contains("warning"), "{committed}");
    let id = the_trailer(&env, "HEAD");
    let pushed = ok(repo, &["push", "origin", "main"]);
    assert!(!pushed.contains("warning"), "{pushed}");
    // Checked with git itself, in the remote: the checkpoint is there at the local tip.
    let delivered = match store {
        Store::Refs => checkpoint_ref(&id),
        Store::Branch => V1_BRANCH.to_owned(),
    };
    assert_eq!(
        rev_in(&env, &origin, &delivered),
        env.rev(&delivered),
        "{delivered} reached the remote:\n{pushed}"
    );

    // A teammate's fresh clone shows the commit's checkpoint (fetched on demand) and lists it.
    let mate = clone("mate");
    let shown = parse_json(entire(&mate, &["show", "HEAD", "--json"]).as_bytes());
    assert_eq!(shown["checkpoint_id"], id.as_str());
    assert!(entire(&mate, &["list", "--json"]).contains(&id));

    // Another one lists what only the remote has, then fetches it.
    let other = clone("other");
    assert!(entire(&other, &["list", "--remote", "--json"]).contains(&id));
    ok(&other, &["entire-fetch", "origin", &id]);
    assert!(entire(&other, &["list", "--json"]).contains(&id));

    entire(repo, &["doctor"]);
}

both_stores! {
    the_whole_story_runs_with_the_oldest_git => the_whole_story_with_the_oldest_git;
}

/// A git that says it is `version` and is otherwise the profile's git: a directory holding a
/// `git` that answers `--version` itself and runs the real one for everything else, beside
/// links to the rest of the real git's programs. Put first on `PATH`, it is the git a command
/// finds; run as `git`, it is the git that runs the hooks, as a real installation is (git puts
/// its own directory first on the hooks' `PATH` and in `GIT_EXEC_PATH`).
fn git_claiming(env: &TestEnv, version: &str) -> PathBuf {
    let real = PathBuf::from(env.git(&["--exec-path"]).trim());
    let dir = env.root().join(format!("git-{version}"));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&real).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "git" {
            std::os::unix::fs::symlink(entry.path(), dir.join(entry.file_name())).unwrap();
        }
    }
    write_executable(
        &dir.join("git"),
        &format!(
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'git version {version}'; exit 0; fi\nGIT_EXEC_PATH='{dir}' exec '{real}/git' \"$@\"\n",
            dir = path_str(&dir),
            real = path_str(&real),
        ),
    );
    dir
}

/// The one line saying the git is too old: it names the git, the version found, the version
/// needed and what to do.
fn assert_too_old(out: &str, dir: &Path, what: &str) {
    let lines: Vec<&str> = out.lines().filter(|l| l.contains("too old")).collect();
    assert_eq!(
        lines.len(),
        1,
        "{what}: one line says git is too old:\n{out}"
    );
    let line = lines[0];
    for part in [
        &format!("{}/git is git 2.25.1", path_str(dir)),
        "needs git 2.29.0 or newer",
        "Upgrade git",
    ] {
        assert!(line.contains(part), "{what}: {part:?} in {line:?}");
    }
}

/// Below the minimum, every command fails with that one line (exit 1) before it writes
/// anything: no ref, no settings, no hook, no staged session.
#[test]
fn a_git_below_the_minimum_is_one_clear_error_and_nothing_is_written() {
    let env = TestEnv::new();
    env.bare_remote("origin");
    let old = git_claiming(&env, "2.25.1");
    let mut paths = vec![old.clone()];
    paths.extend(std::env::split_paths(&crate::env::profile_path()));
    let path = std::env::join_paths(paths).unwrap();
    let refs = env.refs_snapshot();
    let transcript = env.input(&lines(&[LINE_1]));
    let commands: [&[&str]; 8] = [
        &["enable"],
        &[
            "write",
            "--session",
            "s",
            "--transcript",
            path_str(&transcript),
        ],
        &[
            "session",
            "record",
            "--session",
            "s",
            "--transcript",
            path_str(&transcript),
        ],
        &["list"],
        &["show", "HEAD"],
        &["push", "origin"],
        &["doctor"],
        &["gc", "--keep-days", "0"],
    ];
    for args in commands {
        let out = env
            .cmd_as(Store::Refs)
            .env("PATH", &path)
            .args(args)
            .output()
            .unwrap();
        let err = assert_code(&out, 1, &format!("{args:?}"));
        assert_too_old(&err, &old, &format!("{args:?}"));
        assert_eq!(err.lines().count(), 1, "{args:?}: nothing else:\n{err}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    let out = env
        .bin_cmd(&crate::env::fetch_bin())
        .env("PATH", &path)
        .args(["origin", "--all"])
        .output()
        .unwrap();
    assert_too_old(
        &assert_code(&out, 1, "git-entire-fetch"),
        &old,
        "git-entire-fetch",
    );
    assert_eq!(env.refs_snapshot(), refs, "no ref moved");
    assert!(!env.repo().join(".entire").exists(), "no settings written");
    assert!(
        !env.common_dir().join("entire/sessions").exists(),
        "nothing staged"
    );
    let hooks = crate::env::hooks_dir(&env);
    assert!(!hooks.join("pre-push").exists(), "no hook installed");
}

/// Hooks run by a git below the minimum warn once and let the git command succeed: the commit
/// is made without a trailer and its session stays staged, the push sends the code and keeps
/// the checkpoints queued. With a supported git again, the next commit and push carry them.
#[test]
fn hooks_run_by_a_git_below_the_minimum_warn_once_and_lose_nothing() {
    // Refs in files: no git that old runs in a reftable repository at all.
    let env = TestEnv::with_files_refs();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    env.ok_default(&["enable"]);
    let old = git_claiming(&env, "2.25.1");
    let mut paths = vec![
        checkpoint_bin().parent().unwrap().to_path_buf(),
        old.clone(),
    ];
    paths.extend(std::env::split_paths(&crate::env::profile_path()));
    let old_path = std::env::join_paths(paths).unwrap();
    let old_git = |args: &[&str]| {
        let out = run_with_path(&env, &old_path, env.repo(), args);
        assert_code(
            &out,
            0,
            &format!("git {args:?} with a git that says 2.25.1"),
        )
    };

    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    env.write_file("a.txt", b"a\n");
    old_git(&["add", "a.txt"]);
    let committed = old_git(&["commit", "-q", "-m", "old git"]);
    assert_too_old(&committed, &old, "commit");
    assert_eq!(committed.lines().count(), 1, "one warning:\n{committed}");
    assert!(trailer_ids(&env, "HEAD").is_empty(), "not linked");
    let staged = env.ok_default(&["session", "list", "--json"]);
    assert!(
        staged.contains(SESSION),
        "the session stays staged: {staged}"
    );

    // A checkpoint written with a supported git waits in the queue while the old git pushes.
    env.write_file("b.txt", b"b\n");
    env.git(&["add", "b.txt"]);
    env.git_hooked_ok(None, env.repo(), &["commit", "-q", "-m", "new git"]);
    let id = the_trailer(&env, "HEAD");
    let queued = env.queued_in(None, env.repo());
    let pushed = old_git(&["push", "-q", "origin", "main"]);
    assert_too_old(&pushed, &old, "push");
    assert_eq!(pushed.lines().count(), 1, "one warning:\n{pushed}");
    assert_eq!(
        rev_in(&env, &origin, "main"),
        env.rev("HEAD"),
        "the code went"
    );
    assert_eq!(rev_in(&env, &origin, &checkpoint_ref(&id)), None);
    assert_eq!(env.queued_in(None, env.repo()), queued, "still queued");

    // With a supported git, nothing was lost.
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[
            LINE_1,
            "{\"type\":\"user\",\"message\":\"more\"}",
        ])),
        &[],
    );
    env.write_file("c.txt", b"c\n");
    env.git(&["add", "c.txt"]);
    env.git_hooked_ok(None, env.repo(), &["commit", "-q", "-m", "again"]);
    let again = the_trailer(&env, "HEAD");
    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    assert_checkpoints_reached(&env, &origin, &[&id, &again]);
}

/// A hook runs the git that runs the hook, whatever comes first on the `PATH` it was given: git
/// names its own directory in `GIT_EXEC_PATH`. Here a hook manager puts a git that says 2.25.1
/// first on each hook's `PATH` before it runs ours (each hook checks that git is what `git` is
/// there); the commit is linked and the push sends its checkpoint, without a warning.
#[test]
fn hooks_run_the_git_that_runs_them_whatever_comes_first_on_path() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    env.ok_default(&["enable"]);
    let old = git_claiming(&env, "2.25.1");
    let ours = crate::env::hooks_dir(&env);
    let manager = env.root().join("hook-manager");
    let seen = env.root().join("seen");
    let hooks = ["prepare-commit-msg", "post-commit", "pre-push"];
    for hook in hooks {
        write_executable(
            &manager.join(hook),
            &format!(
                "#!/bin/sh\nPATH='{old}':\"$PATH\"\nexport PATH\ngit --version >>'{seen}'\nexec '{ours}' \"$@\"\n",
                old = path_str(&old),
                seen = path_str(&seen),
                ours = path_str(&ours.join(hook)),
            ),
        );
    }
    env.git(&["config", "core.hooksPath", path_str(&manager)]);

    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    env.write_file("a.txt", b"a\n");
    env.git(&["add", "a.txt"]);
    let committed = env.git_hooked_ok(None, env.repo(), &["commit", "-q", "-m", "a"]);
    assert!(!committed.contains("too old"), "{committed}");
    let id = the_trailer(&env, "HEAD");
    let pushed = env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    assert!(!pushed.contains("warning"), "{pushed}");
    assert_eq!(
        rev_in(&env, &origin, &checkpoint_ref(&id)),
        env.rev(&checkpoint_ref(&id)),
        "the checkpoint reached the remote:\n{pushed}"
    );
    let seen = std::fs::read_to_string(&seen).unwrap();
    assert_eq!(
        seen.lines().collect::<Vec<_>>(),
        vec!["git version 2.25.1"; hooks.len()],
        "each hook had the other git first on PATH"
    );
}

/// Under `safe.bareRepository=explicit` (git 2.38+; Git 3.0's default) nothing breaks: the side
/// repositories of pushes and fetches and the partial cache are named explicitly. A bare
/// repository found by discovery is refused as git refuses it (exit 128, nothing read), and
/// works when named (`GIT_DIR`).
#[test]
fn safe_bare_repository_explicit_breaks_nothing() {
    if !crate::env::git_at_least(2, 38, "safe.bareRepository") {
        return;
    }
    let env = TestEnv::new();
    env.git(&["config", "--global", "safe.bareRepository", "explicit"]);
    let origin = env.bare_remote("origin");
    env.git_in(&origin, &["config", "uploadpack.allowFilter", "true"]);
    env.git(&["push", "-q", "origin", "main"]);
    env.ok_default(&["enable"]);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    env.write_file("a.txt", b"a\n");
    env.git(&["add", "a.txt"]);
    env.git_hooked_ok(None, env.repo(), &["commit", "-q", "-m", "a"]);
    let id = the_trailer(&env, "HEAD");
    let pushed = env.git_hooked_ok(None, env.repo(), &["push", "origin", "main"]);
    assert!(!pushed.contains("warning"), "{pushed}");
    assert_eq!(
        rev_in(&env, &origin, &checkpoint_ref(&id)),
        env.rev(&checkpoint_ref(&id)),
        "pushed from a side repository:\n{pushed}"
    );

    // A fresh clone: on-demand fetch, list --remote, a filtered fetch into the partial cache
    // and the transcript read through it.
    let mate = env.clone_of(&origin, "mate", &[]);
    let shown = env.run_primary_in(None, &mate, &["show", "HEAD", "--json"]);
    assert_eq!(
        parse_json(&shown.stdout)["checkpoint_id"],
        id.as_str(),
        "{}",
        stderr(&shown)
    );
    let other = env.clone_of(&origin, "other", &[]);
    let listed = env.run_primary_in(None, &other, &["list", "--remote", "--json"]);
    assert!(stdout(&listed).contains(&id), "{}", stderr(&listed));
    let fetched = env.fetch_in(&other, &["--filter=blob:none", "origin", &id]);
    assert_code(&fetched, 0, "entire-fetch --filter=blob:none");
    let read = env.run_primary_in(
        None,
        &other,
        &["show", &id, "--transcript", "--session", "0"],
    );
    assert_code(&read, 0, "the transcript read through the partial cache");
    assert!(
        stdout(&read).contains("add a greeting"),
        "{}",
        stdout(&read)
    );
    let doctor = env.run_default(&["doctor"]);
    assert_code(&doctor, 0, "doctor");

    // In the bare remote itself: refused when found, as git refuses it; named, it works.
    let git = env
        .git_command_in(&origin, &["log"])
        .env_remove("GIT_DIR")
        .output()
        .unwrap();
    assert_eq!(git.status.code(), Some(128), "git refuses it too");
    for args in [&["list"][..], &["show", &id], &["push"]] {
        let out = env.run_primary_in(None, &origin, args);
        let err = assert_code(&out, 128, &format!("{args:?} in a bare repository"));
        assert!(
            err.contains("cannot use bare repository"),
            "{args:?}: {err}"
        );
        assert!(err.contains("safe.bareRepository"), "{args:?}: {err}");
    }
    let named = env
        .cmd()
        .current_dir(&origin)
        .env("GIT_DIR", &origin)
        .args(["list", "--json"])
        .output()
        .unwrap();
    assert_code(&named, 0, "list with GIT_DIR");
    assert!(stdout(&named).contains(&id), "{}", stdout(&named));
}
