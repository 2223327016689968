//! Hooks with nothing to do cost nothing (docs/hooks.md, "Hooks that do nothing cost
//! nothing"): with no session staged and nothing queued, our hook scripts skip our binary; what
//! they skip must not matter. A staged session still links and condenses, an amend still keeps
//! its link, a displaced hook still heals, a new checkpoint is still pushed, a new remote still
//! gets every checkpoint. Our binaries run behind stubs that log each run.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use crate::commit_hooks::{
    commit, commit_in, install_hooks, lines, record, the_trailer, LINE_1, SESSION,
};
use crate::env::{
    assert_checkpoints_reached, checkpoint_bin, checkpoint_ref, hooks_dir, path_str, prepush_bin,
    rev_in, write_executable, Store, TestEnv,
};

/// Installs our hooks with our binaries behind stubs that log each run (`checkpoint <args>` or
/// `prepush <args>`, a line) to the returned file. The rewritten scripts get an old mtime, as
/// installed ones have.
fn hooks_logging_runs(env: &TestEnv) -> PathBuf {
    install_hooks(env);
    let stubs = env.root().join("stubs");
    let log = env.root().join("runs.log");
    for (name, real, word) in [
        ("git-entire-checkpoint", checkpoint_bin(), "checkpoint"),
        ("git-entire-prepush", prepush_bin(), "prepush"),
    ] {
        write_executable(
            &stubs.join(name),
            &format!(
                "#!/bin/sh\necho \"{word} $*\" >> '{}'\nexec '{}' \"$@\"\n",
                path_str(&log),
                path_str(&real)
            ),
        );
    }
    let dir = hooks_dir(env);
    for hook in [
        "pre-push",
        "prepare-commit-msg",
        "post-commit",
        "post-rewrite",
    ] {
        let path = dir.join(hook);
        let script: String = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| match l.starts_with("bin_dir=") {
                true => format!("bin_dir='{}'\n", path_str(&stubs)),
                false => format!("{l}\n"),
            })
            .collect();
        std::fs::write(&path, script).unwrap();
        age(&path);
    }
    log
}

/// Stages session `sid` with one transcript line in the main worktree.
fn stage(env: &TestEnv, sid: &str) {
    record(env, env.repo(), sid, Some(&lines(&[LINE_1])), &[]);
}

/// Sets the mtime of `path` an hour back.
fn age(path: &Path) {
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(SystemTime::now() - Duration::from_secs(3600))
        .unwrap();
}

/// The runs logged since the last call (the log is emptied).
fn runs(log: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let _ = std::fs::remove_file(log);
    text.lines().map(str::to_owned).collect()
}

/// The hook words of `runs`: `checkpoint hook post-commit` -> `post-commit`.
fn hooks_run(runs: &[String]) -> Vec<&str> {
    runs.iter()
        .map(|r| match r.strip_prefix("checkpoint hook ") {
            Some(rest) => rest.split(' ').next().unwrap_or(rest),
            None => r.split(' ').next().unwrap_or(r),
        })
        .collect()
}

#[test]
fn commits_with_nothing_staged_run_no_binary_of_ours_and_a_staged_session_still_links() {
    let env = TestEnv::new();
    let log = hooks_logging_runs(&env);
    commit(&env, Some(Store::Refs), "a.txt", "first");
    assert_eq!(
        hooks_run(&runs(&log)),
        ["prepare-commit-msg", "post-commit"],
        "the first commit runs ours (nothing is known yet)"
    );
    for (file, msg) in [("b.txt", "second"), ("c.txt", "third")] {
        commit(&env, Some(Store::Refs), file, msg);
        assert_eq!(runs(&log), Vec::<String>::new(), "{msg}: no binary ran");
    }
    // An editor commit too (git passes no message source).
    env.write_file("d.txt", b"d\n");
    env.git(&["add", "d.txt"]);
    let out = env
        .git_hooked_command(Some(Store::Refs), env.repo(), &["commit", "-q"])
        .env("GIT_EDITOR", "echo 'from the editor' >")
        .output()
        .unwrap();
    crate::env::assert_code(&out, 0, "git commit with an editor");
    assert_eq!(
        runs(&log),
        Vec::<String>::new(),
        "editor commit: no binary ran"
    );

    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let (head, _) = commit(&env, Some(Store::Refs), "e.txt", "with a session");
    assert_eq!(
        hooks_run(&runs(&log)),
        ["prepare-commit-msg", "post-commit"]
    );
    let id = the_trailer(&env, &head);
    let full = env.git(&[
        "cat-file",
        "-p",
        &format!("{}:0/full.jsonl", checkpoint_ref(&id)),
    ]);
    assert_eq!(full, format!("{LINE_1}\n"), "condensed into the checkpoint");

    // The commits after it say nothing (no marker yet, then the fast path), also with every
    // ref packed (HEAD's branch has no loose file to read: ours runs).
    for (file, msg) in [("f.txt", "after the linked one"), ("g.txt", "idle")] {
        let (_, stderr) = commit(&env, Some(Store::Refs), file, msg);
        assert_eq!(stderr, "", "{msg}");
    }
    assert_eq!(
        hooks_run(&runs(&log)),
        ["prepare-commit-msg"],
        "ours ran once, for the commit after the linked one (it may be its amend)"
    );
    env.git(&["pack-refs", "--all"]);
    let (_, stderr) = commit(&env, Some(Store::Refs), "h.txt", "packed");
    assert_eq!(stderr, "", "packed");
    assert_eq!(hooks_run(&runs(&log)), ["prepare-commit-msg"]);
}

/// HEAD links a checkpoint: its amend with `-m` (which prepare-commit-msg cannot tell from a
/// new commit) runs ours and carries the link, however many idle commits came between.
#[test]
fn an_amend_with_a_message_keeps_the_link_after_idle_commits() {
    let env = TestEnv::new();
    let log = hooks_logging_runs(&env);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let (linked, _) = commit(&env, Some(Store::Refs), "a.txt", "linked");
    let id = the_trailer(&env, &linked);
    commit(&env, Some(Store::Refs), "b.txt", "unlinked");
    commit(&env, Some(Store::Refs), "c.txt", "unlinked too");
    runs(&log);
    // Amending an idle commit with -m: nothing to carry.
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &["commit", "-q", "--amend", "-m", "reworded"],
    );
    assert!(crate::commit_hooks::trailer_ids(&env, "HEAD").is_empty());
    // Back on the linked commit, an amend with -m keeps its link.
    env.git(&["reset", "-q", "--hard", &linked]);
    runs(&log);
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &["commit", "-q", "--amend", "-m", "linked, reworded"],
    );
    assert!(
        hooks_run(&runs(&log)).contains(&"prepare-commit-msg"),
        "ours ran for the amend of a linked commit"
    );
    assert_eq!(the_trailer(&env, "HEAD"), id, "the link was carried");
    // And after an idle commit on top of it, the next amend with -m of a linked commit too.
    commit(&env, Some(Store::Refs), "d.txt", "idle again");
    env.git(&["reset", "-q", "--soft", "HEAD~1"]);
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &["commit", "-q", "--amend", "-m", "linked, reworded twice"],
    );
    assert_eq!(the_trailer(&env, "HEAD"), id);
}

/// Our post-commit displaced by another tool while nothing is staged: the next commit notices
/// (the hooks changed since ours last ran), runs ours and heals; the other hook runs too.
#[test]
fn a_hook_displaced_while_idle_heals_at_the_next_commit() {
    let env = TestEnv::new();
    let log = hooks_logging_runs(&env);
    commit(&env, Some(Store::Refs), "a.txt", "first");
    commit(&env, Some(Store::Refs), "b.txt", "second");
    runs(&log);
    let dir = hooks_dir(&env);
    let ran = env.root().join("foreign-ran");
    write_executable(
        &dir.join("post-commit"),
        &format!("#!/bin/sh\necho ran >> '{}'\n", path_str(&ran)),
    );
    let (_, stderr) = commit(&env, Some(Store::Refs), "c.txt", "third");
    assert!(stderr.contains("put back our post-commit"), "{stderr}");
    assert!(
        std::fs::read_to_string(dir.join("post-commit"))
            .unwrap()
            .contains("Entire checkpoints hook"),
        "ours is back"
    );
    commit(&env, Some(Store::Refs), "d.txt", "fourth");
    assert!(
        std::fs::read_to_string(&ran).unwrap().lines().count() >= 1,
        "the other tool's hook runs, chained by ours"
    );
}

/// A push with nothing queued runs no binary of ours once ours left nothing due for that
/// remote (it delivered everything, or found nothing to deliver); a new checkpoint is still
/// pushed, and a new remote still gets every checkpoint.
#[test]
fn pushes_with_nothing_queued_run_no_binary_and_checkpoints_still_go() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    let log = hooks_logging_runs(&env);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let (head, _) = commit(&env, Some(Store::Refs), "a.txt", "linked");
    let first = the_trailer(&env, &head);
    let push = |remote: &str| {
        env.git_hooked_ok(
            Some(Store::Refs),
            env.repo(),
            &["push", "-q", remote, "main"],
        );
    };
    push("origin");
    assert_eq!(
        rev_in(&env, &origin, &checkpoint_ref(&first)),
        env.rev(&checkpoint_ref(&first))
    );
    commit(&env, Some(Store::Refs), "b.txt", "idle");
    runs(&log);
    push("origin"); // the last push delivered everything
    assert_eq!(runs(&log), Vec::<String>::new(), "no binary ran");
    commit(&env, Some(Store::Refs), "c.txt", "idle too");
    push("origin");
    assert_eq!(runs(&log), Vec::<String>::new(), "no binary ran");

    stage(&env, "sess-idle-2");
    let (head, _) = commit(&env, Some(Store::Refs), "d.txt", "linked again");
    let second = the_trailer(&env, &head);
    runs(&log);
    push("origin");
    assert_eq!(hooks_run(&runs(&log)), ["prepush"], "queued: ours ran");
    assert_eq!(
        rev_in(&env, &origin, &checkpoint_ref(&second)),
        env.rev(&checkpoint_ref(&second))
    );
    push("origin");
    assert_eq!(runs(&log), Vec::<String>::new(), "delivered: no binary ran");

    // An edit of the per-clone settings (in the common dir) may change where checkpoints go:
    // ours runs.
    let local = crate::env::local_settings_path(&env);
    crate::env::write_settings_text(&env, "settings.local.json", "{}");
    std::fs::File::options()
        .write(true)
        .open(&local)
        .unwrap()
        .set_modified(SystemTime::now() + Duration::from_secs(10))
        .unwrap();
    push("origin");
    assert_eq!(
        hooks_run(&runs(&log)),
        ["prepush"],
        "settings changed: ours ran"
    );

    let other = env.bare_remote("other");
    push("other");
    assert_checkpoints_reached(&env, &other, &[&first, &second]);
}

/// In a linked worktree (git gives its hooks the worktree's git dir) idle commits skip ours
/// too, a session recorded there still links, and a session staged in the main worktree keeps
/// every worktree's hooks running ours. A message that names a checkpoint (typed by the user)
/// always reaches ours, which checks it.
#[test]
fn a_linked_worktree_skips_too_and_a_typed_trailer_still_reaches_ours() {
    let env = TestEnv::new();
    let log = hooks_logging_runs(&env);
    commit(&env, Some(Store::Refs), "a.txt", "first");
    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", path_str(&wt), "-b", "side"]);
    commit_in(&env, &wt, Some(Store::Refs), "b.txt", "in the worktree");
    runs(&log);
    commit_in(
        &env,
        &wt,
        Some(Store::Refs),
        "c.txt",
        "idle in the worktree",
    );
    assert_eq!(runs(&log), Vec::<String>::new(), "no binary ran");

    record(&env, &wt, SESSION, Some(&lines(&[LINE_1])), &[]);
    let (head, _) = commit_in(
        &env,
        &wt,
        Some(Store::Refs),
        "d.txt",
        "linked in the worktree",
    );
    let id = the_trailer(&env, &head);
    assert_eq!(
        env.git(&[
            "cat-file",
            "-p",
            &format!("{}:0/full.jsonl", checkpoint_ref(&id))
        ]),
        format!("{LINE_1}\n")
    );

    // Staged in the main worktree: the other worktree's commits run ours (it links nothing
    // there: the session belongs to the main worktree).
    record(&env, env.repo(), "sess-main", Some(&lines(&[LINE_1])), &[]);
    runs(&log);
    commit_in(
        &env,
        &wt,
        Some(Store::Refs),
        "e.txt",
        "while main has a session",
    );
    assert_eq!(
        hooks_run(&runs(&log)),
        ["prepare-commit-msg", "post-commit"]
    );
    let (head, _) = commit(&env, Some(Store::Refs), "f.txt", "main links it");
    the_trailer(&env, &head);

    commit(&env, Some(Store::Refs), "g.txt", "idle");
    runs(&log);
    let (_, stderr) = commit(
        &env,
        Some(Store::Refs),
        "h.txt",
        "typed\n\nEntire-Checkpoint: not-an-id",
    );
    assert_eq!(hooks_run(&runs(&log)), ["post-commit"], "{stderr}");
    assert!(stderr.contains("malformed"), "{stderr}");
}

/// With default settings (the git-branch primary), a push whose v1 branch the remote already
/// holds runs no binary of ours once ours pushed it there or found it so; a new checkpoint moves
/// the branch and is pushed, and a branch only in packed-refs never counts as unmoved.
#[test]
fn pushes_on_the_default_store_skip_ours_until_the_v1_branch_moves() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    let log = hooks_logging_runs(&env);
    let v1 = "refs/heads/entire/checkpoints/v1";
    let push = || {
        env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    };
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    commit(&env, None, "a.txt", "linked");
    push(); // main first: the v1 branch waits for a remote with a branch
    push();
    assert_eq!(rev_in(&env, &origin, v1), env.rev(v1));
    runs(&log);
    push(); // ours pushed the branch: the remote's copy is at the tip
    assert_eq!(runs(&log), Vec::<String>::new(), "no binary ran");

    stage(&env, "sess-idle-2");
    commit(&env, None, "b.txt", "linked again");
    runs(&log);
    push();
    assert_eq!(
        hooks_run(&runs(&log)),
        ["prepush"],
        "the branch moved: ours ran"
    );
    assert_eq!(rev_in(&env, &origin, v1), env.rev(v1), "and pushed it");

    env.git(&["pack-refs", "--all"]);
    runs(&log);
    push();
    assert_eq!(
        hooks_run(&runs(&log)),
        ["prepush"],
        "packed-refs written since: ours ran"
    );
}
