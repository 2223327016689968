//! The three binaries exist, git runs them as subcommands, and they find the repository the way
//! git does (docs/cli.md).

use serde_json::json;

use crate::env::{
    assert_code, assert_success, checkpoint_bin, checkpoint_ref, fetch_bin, parse_json,
    path_with_bins, prepush_bin, tool_available, Store, TestEnv,
};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT};

#[test]
fn every_binary_has_help() {
    let env = TestEnv::new();
    // `git-entire-checkpoint --help` may open the man page, so only `-h` is checked for it.
    let cases = [
        (checkpoint_bin(), vec!["-h"]),
        (prepush_bin(), vec!["--help", "-h"]),
        (fetch_bin(), vec!["--help", "-h"]),
    ];
    for (bin, flags) in cases {
        for flag in flags {
            let out = env.bin_cmd(&bin).arg(flag).output().unwrap();
            assert!(
                out.status.success(),
                "{} {flag}: {}",
                bin.display(),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                !out.stdout.is_empty(),
                "{} {flag}: help on stdout",
                bin.display()
            );
        }
    }
    let out = env.bin_cmd(&checkpoint_bin()).arg("-h").output().unwrap();
    let help = String::from_utf8_lossy(&out.stdout);
    for cmd in ["write", "backfill", "show", "cat", "list", "log"] {
        assert!(help.contains(cmd), "-h lists {cmd}:\n{help}");
    }
}

/// Each subcommand's own help opens with the description its parent's listing gives it, at
/// every depth. The binaries define a subcommand's arguments only when it runs (clap's `defer`),
/// after its description: a doc comment on an arguments struct would then replace it.
#[test]
fn every_subcommand_describes_itself_as_its_parent_lists_it() {
    let env = TestEnv::new();
    let help = |path: &[&str]| {
        let out = env
            .bin_cmd(&checkpoint_bin())
            .args(path)
            .arg("-h")
            .output()
            .unwrap();
        assert_success(&out, path);
        String::from_utf8(out.stdout).unwrap()
    };
    let mut pending: Vec<Vec<&str>> = vec![vec![]];
    let mut checked = 0;
    while let Some(path) = pending.pop() {
        let text = help(&path);
        // The `Commands:` section: "  name  description", wrapped lines indented deeper.
        let listing = text
            .split("\nCommands:\n")
            .nth(1)
            .map(|rest| rest.split("\n\n").next().unwrap_or_default());
        let mut entries: Vec<(String, String)> = Vec::new();
        for line in listing.unwrap_or_default().lines() {
            let indent = line.len() - line.trim_start().len();
            match (indent, entries.last_mut()) {
                (2, _) => {
                    let (name, about) = line.trim().split_once(' ').unwrap_or((line.trim(), ""));
                    entries.push((name.to_owned(), about.trim().to_owned()));
                }
                (_, Some((_, about))) => {
                    about.push(' ');
                    about.push_str(line.trim());
                }
                (_, None) => panic!("{path:?}: a listing line without an entry: {line}"),
            }
        }
        for (name, listed) in entries.into_iter().filter(|(n, _)| n != "help") {
            let name: &'static str = Box::leak(name.into_boxed_str());
            let mut sub = path.clone();
            sub.push(name);
            let own = help(&sub);
            let own = own.split("\n\n").next().unwrap().split_whitespace();
            assert_eq!(
                own.collect::<Vec<_>>().join(" "),
                listed,
                "{sub:?} -h opens with its own description"
            );
            checked += 1;
            pending.push(sub);
        }
    }
    assert!(checked > 30, "{checked} subcommands checked");
}

#[test]
fn man_pages_are_generated_at_install_time_not_by_the_binaries() {
    let env = TestEnv::new();
    let dir = env.root().join("man1");
    let out = env
        .bin_cmd(std::path::Path::new(env!(
            "CARGO_BIN_EXE_entire-checkpoints-man"
        )))
        .arg(&dir)
        .output()
        .unwrap();
    assert_success(&out, &["entire-checkpoints-man"]);
    for page in [
        "git-entire-checkpoint.1",
        "git-entire-checkpoint-write.1",
        "git-entire-checkpoint-show.1",
        "git-entire-fetch.1",
        "git-entire-prepush.1",
    ] {
        let text = std::fs::read_to_string(dir.join(page)).unwrap_or_default();
        assert!(text.contains(".TH"), "{page} is a man page:\n{text}");
        for section in [".SH \"EXIT STATUS\"", ".SH ENVIRONMENT", ".SH FILES"] {
            assert!(text.contains(section), "{page}: {section}");
        }
        assert!(text.contains("ENTIRE_CHECKPOINTS_PRIMARY"), "{page}");
        assert!(text.contains("settings.local.json"), "{page}");
    }
    // Each page names its own command, not the suite.
    for (page, name) in [
        (
            "git-entire-checkpoint.1",
            "Store AI coding\\-session checkpoints",
        ),
        ("git-entire-checkpoint-show.1", "Show one checkpoint"),
        ("git-entire-fetch.1", "Fetch checkpoints from a remote"),
        ("git-entire-prepush.1", "Push queued checkpoint refs"),
    ] {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        let after_name = text.split(".SH NAME").nth(1).unwrap_or_default();
        assert!(
            after_name.lines().nth(1).is_some_and(|l| l.contains(name)),
            "{page}: NAME says {name:?}:\n{text}"
        );
        assert!(!text.contains("Git subcommands and hooks"), "{page}");
    }
    for page in ["git-entire-checkpoint.1", "git-entire-checkpoint-show.1"] {
        let text = std::fs::read_to_string(dir.join(page)).unwrap();
        assert!(text.contains(".SH EXAMPLES"), "{page}: EXAMPLES");
    }
    // Installed, `git help` finds them: git maps `entire-fetch` to the page `git-entire-fetch`
    // because the binary is on PATH.
    let man = std::process::Command::new("man")
        .arg("-w")
        .arg("man")
        .output()
        .is_ok();
    if tool_available("man", man) {
        let out = env
            .git_command_in(env.repo(), &["help", "-m", "entire-fetch"])
            .env("PATH", path_with_bins())
            .env("MANPATH", env.root())
            .env("MANPAGER", "cat")
            .output()
            .unwrap();
        assert_success(&out, &["git help -m entire-fetch"]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            text.contains("EXIT STATUS"),
            "git help -m entire-fetch:\n{text}"
        );
    }
    // The installed binaries have no flag for it.
    for bin in [checkpoint_bin(), prepush_bin(), fetch_bin()] {
        let out = env
            .bin_cmd(&bin)
            .arg("--generate-man")
            .arg(&dir)
            .output()
            .unwrap();
        assert_code(&out, 2, &format!("{} --generate-man", bin.display()));
    }
}

#[test]
fn other_binaries_reject_unknown_flags_with_exit_2() {
    let env = TestEnv::new();
    for bin in [prepush_bin(), fetch_bin()] {
        let out = env.bin_cmd(&bin).arg("--no-such-flag").output().unwrap();
        assert_code(&out, 2, &format!("{} --no-such-flag", bin.display()));
    }
}

#[test]
fn git_runs_it_as_a_subcommand() {
    let env = TestEnv::new();
    let t = env.input_file("t.jsonl", TRANSCRIPT);
    let out = env
        .git_command_in(
            env.repo(),
            &[
                "entire-checkpoint",
                "write",
                "--session",
                "sess-1",
                "--id",
                HEX_ID,
                "--transcript",
                t.to_str().unwrap(),
            ],
        )
        .env("PATH", path_with_bins())
        .env("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs")
        .output()
        .unwrap();
    assert_success(&out, &["git entire-checkpoint write"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{HEX_ID}\n")
    );
    assert!(env.rev(&checkpoint_ref(HEX_ID)).is_some());

    let out = env
        .git_command_in(env.repo(), &["entire-checkpoint", "list", "--json"])
        .env("PATH", path_with_bins())
        .env("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs")
        .output()
        .unwrap();
    assert_success(&out, &["git entire-checkpoint list --json"]);
    let v = parse_json(&out.stdout);
    assert_eq!(v[0]["checkpoint_id"], json!(HEX_ID));
}

#[test]
fn works_from_a_subdirectory() {
    let env = TestEnv::new();
    env.write_file("sub/dir/file.txt", b"x\n");
    let out = env
        .cmd_as(Store::Refs)
        .current_dir(env.repo().join("sub/dir"))
        .args(["write", "--session", "sess-1", "--id", HEX_ID])
        .output()
        .unwrap();
    assert_success(&out, &["write from a subdirectory"]);
    assert!(env.rev(&checkpoint_ref(HEX_ID)).is_some());
    assert!(
        !env.repo().join("sub/dir/.git").exists(),
        "no nested repository"
    );
}

#[test]
fn works_from_a_linked_worktree() {
    let env = TestEnv::new();
    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()]);
    let out = env
        .cmd_as(Store::Refs)
        .current_dir(&wt)
        .args(["write", "--session", "sess-1", "--id", HEX_ID])
        .output()
        .unwrap();
    assert_success(&out, &["write from a linked worktree"]);
    // Refs are shared by all worktrees: the main work tree sees it.
    assert!(env.rev(&checkpoint_ref(HEX_ID)).is_some());
    let v = env.ok_json(Store::Refs, &["show", HEX_ID, "--json"]);
    assert_eq!(v["checkpoint_id"], json!(HEX_ID));
}

#[test]
fn honours_git_dir() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let elsewhere = env.root().join("inputs");
    let out = env
        .cmd_as(Store::Refs)
        .current_dir(&elsewhere)
        .env("GIT_DIR", env.repo().join(".git"))
        .env("GIT_WORK_TREE", env.repo())
        .args(["list", "--json"])
        .output()
        .unwrap();
    assert_success(&out, &["list with GIT_DIR"]);
    let v = parse_json(&out.stdout);
    assert_eq!(v[0]["checkpoint_id"], json!(HEX_ID));
}

/// Output to a reader that has gone (`| head` that has read its lines, a pager quit early) ends
/// the command quietly with exit 0: SIGPIPE is ignored, so the write fails with `EPIPE`, which
/// the binaries take as the end of the output, not as an error, nor as a death by the signal.
#[test]
fn output_to_a_closed_pipe_ends_quietly() {
    use std::os::fd::{FromRawFd, OwnedFd};
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    for bin in [checkpoint_bin(), prepush_bin(), fetch_bin()] {
        let args: &[&str] = if bin == checkpoint_bin() {
            &["list"]
        } else {
            &["--help"]
        };
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe(2) returns.
        assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
        // SAFETY: pipe(2) returned two open descriptors that nothing else owns.
        let (reader, writer) =
            unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) };
        drop(reader);
        let out = env
            .std_program(&bin, Store::Refs)
            .args(args)
            .stdout(writer)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{} {args:?} into a closed pipe: {:?}, stderr: {}",
            bin.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            out.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// A binary started with its standard output closed opens `/dev/null` in its place before
/// anything else, so that no file it opens later takes descriptor 1 and receives what it prints.
/// Seen from outside while the pre-push hook waits for git's list of refs on stdin.
#[test]
fn a_closed_stdout_is_reopened_on_dev_null() {
    use std::io::Write;
    use std::os::unix::process::CommandExt;
    let env = TestEnv::new();
    let mut cmd = env.std_program(&prepush_bin(), Store::Refs);
    cmd.arg("origin").stdin(std::process::Stdio::piped());
    // SAFETY: close(2) is async-signal-safe, as a pre_exec closure must be.
    unsafe {
        cmd.pre_exec(|| {
            libc::close(1);
            Ok(())
        });
    }
    let mut child = cmd.spawn().unwrap();
    let fd1 = format!("/proc/{}/fd/1", child.id());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let target = loop {
        if let Ok(target) = std::fs::read_link(&fd1) {
            break Some(target);
        }
        if std::time::Instant::now() > deadline {
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"").unwrap();
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        target.as_deref(),
        Some(std::path::Path::new("/dev/null")),
        "descriptor 1 of the hook"
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
