//! Bounded network work: a remote that accepts the connection and never answers
//! ([`StalledServer`]) cannot hang a hook or a command. The pre-push hook ends within its budget
//! and lets the user's push proceed with the checkpoints still queued; interactive commands end
//! at the network timeout with a failure; Ctrl-C and SIGTERM stop git and everything it started.
//! Elapsed times are only checked as generous upper bounds.

use std::path::Path;
use std::process::{Child, Output};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::env::{
    assert_code, assert_success, fetch_bin, path_with_bins, prepush_bin, stderr, write_settings,
    StalledServer, Store, TestEnv,
};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT, ULID_ID};

/// The hook budget and network timeout of these tests, in seconds.
const SHORT: u64 = 3;
/// What a bounded command may take beyond its deadline (process start, local work, a loaded
/// machine). Far below the minutes a hang lasts.
const SLACK: Duration = Duration::from_secs(10);

fn limit() -> Duration {
    Duration::from_secs(SHORT) + SLACK
}

/// Runs `cmd`, returning its output and how long it took.
fn timed(cmd: &mut assert_cmd::Command) -> (Output, Duration) {
    let start = Instant::now();
    let out = cmd.output().expect("run the command");
    (out, start.elapsed())
}

/// A repository whose code remote `origin` is a real bare repository, whose checkpoint remote
/// is the stalled server, with our hooks installed and one checkpoint queued.
fn stalled_checkpoint_remote(server: &StalledServer) -> TestEnv {
    let env = TestEnv::new();
    env.bare_remote("origin");
    write_settings(
        &env,
        "settings.json",
        &json!({"strategy_options": {"checkpoint_remote": {"url": server.http_url()}}}),
    );
    env.trust_in(env.repo());
    env.ok(Store::Refs, &["hooks", "install"]);
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    assert_eq!(env.queued(), 1);
    env
}

/// A repository whose `origin` is the stalled server, with one checkpoint queued.
fn stalled_origin(server: &StalledServer) -> TestEnv {
    let env = TestEnv::new();
    env.git(&["remote", "add", "origin", &server.http_url()]);
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    env
}

/// The user's `git push origin main` through the installed hooks; output and duration.
fn user_push(env: &TestEnv, vars: &[(&str, &str)]) -> (Output, Duration) {
    let mut cmd = env.git_command_in(env.repo(), &["push", "-q", "origin", "main"]);
    cmd.env("PATH", path_with_bins())
        .env("ENTIRE_CHECKPOINTS_PRIMARY", Store::Refs.name());
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let start = Instant::now();
    let out = cmd.output().expect("run git push");
    (out, start.elapsed())
}

/// Asserts the user's push landed on `origin` although the checkpoint push ran out of time, with
/// one warning and the checkpoint still queued.
fn assert_push_proceeded(env: &TestEnv, out: &Output, took: Duration, budget: u64) {
    assert_success(out, &["push", "origin", "main"]);
    assert!(
        took < Duration::from_secs(budget) + SLACK,
        "the pre-push hook took {took:?} with a budget of {budget}s"
    );
    let err = stderr(out);
    assert_eq!(err.matches("warning").count(), 1, "one warning: {err}");
    assert!(err.contains("stay queued"), "{err}");
    let head = env.rev("HEAD").unwrap();
    let remote_main = env.git(&["ls-remote", "origin", "refs/heads/main"]);
    assert!(
        remote_main.starts_with(&head),
        "the code landed: {remote_main}"
    );
    assert_eq!(env.queued(), 1, "the checkpoint stays queued");
}

#[test]
fn pre_push_to_a_stalled_checkpoint_remote_ends_within_the_budget() {
    let server = StalledServer::start();
    let env = stalled_checkpoint_remote(&server);
    let budget = SHORT.to_string();
    let (out, took) = user_push(&env, &[("ENTIRE_HOOK_BUDGET_SECONDS", &budget)]);
    assert_push_proceeded(&env, &out, took, SHORT);
    let err = stderr(&out);
    assert!(err.contains(&format!("hook budget {SHORT}s")), "{err}");
}

#[test]
fn the_hook_budget_comes_from_the_settings() {
    let server = StalledServer::start();
    let env = stalled_checkpoint_remote(&server);
    write_settings(
        &env,
        "settings.json",
        &json!({"strategy_options": {
            "checkpoint_remote": {"url": server.http_url()},
            "hook_budget_seconds": 2,
        }}),
    );
    env.trust_in(env.repo());
    let (out, took) = user_push(&env, &[]);
    assert_push_proceeded(&env, &out, took, 2);
}

/// The budget is clamped to 1..=600 seconds; a committed settings file is untrusted and can
/// only shorten it (the per-clone file may lengthen it); the environment variable wins over
/// both.
#[test]
fn the_hook_budget_is_clamped_and_the_environment_wins() {
    let env = TestEnv::new();
    env.bare_remote("origin");
    let budget_in = |file: &str, setting: serde_json::Value, var: Option<&str>| -> String {
        write_settings(
            &env,
            file,
            &json!({"strategy_options": {"hook_budget_seconds": setting}}),
        );
        let mut cmd = env.bin_cmd(&crate::env::prepush_bin());
        cmd.env("ENTIRE_CHECKPOINTS_PRIMARY", Store::Refs.name())
            .args(["-vv", "origin"])
            .write_stdin(Vec::new());
        if let Some(v) = var {
            cmd.env("ENTIRE_HOOK_BUDGET_SECONDS", v);
        }
        let out = cmd.output().expect("run git-entire-prepush");
        assert_success(&out, &["prepush"]);
        let err = stderr(&out);
        let line = err
            .lines()
            .find(|l| l.contains("hook budget: "))
            .unwrap_or_else(|| panic!("no budget logged: {err}"));
        line.rsplit(' ').next().unwrap().to_owned()
    };
    let budget_of = |setting, var| budget_in("settings.json", setting, var);
    assert_eq!(budget_of(json!(100_000), None), "30s", "never raised");
    assert_eq!(budget_of(json!(120), None), "30s", "never raised");
    assert_eq!(budget_of(json!(0), None), "1s");
    assert_eq!(budget_of(json!(-5), None), "30s", "not a whole number");
    assert_eq!(budget_of(json!("10"), None), "30s", "not a number");
    assert_eq!(budget_of(json!(7), None), "7s");
    assert_eq!(budget_of(json!(7), Some("4")), "4s");
    assert_eq!(budget_of(json!(7), Some("99999")), "600s");
    assert_eq!(budget_of(json!(120), Some("99")), "99s");
    assert_eq!(budget_in("settings.local.json", json!(120), None), "120s");
    assert_eq!(
        budget_in("settings.local.json", json!(100_000), None),
        "600s"
    );
}

/// Every interactive command that reaches `origin`, a stalled server, ends at the network
/// timeout and fails; `list --remote` still shows the local checkpoints first.
#[test]
fn interactive_network_commands_end_at_the_network_timeout() {
    let server = StalledServer::start();
    let env = stalled_origin(&server);
    let timeout = SHORT.to_string();
    let run = |args: &[&str]| -> (Output, Duration) {
        let mut cmd = env.cmd_as(Store::Refs);
        cmd.env("ENTIRE_NETWORK_TIMEOUT_SECONDS", &timeout)
            .args(args);
        timed(&mut cmd)
    };
    let fetch = || -> (Output, Duration) {
        let mut cmd = env.bin_cmd(&fetch_bin());
        cmd.env("ENTIRE_NETWORK_TIMEOUT_SECONDS", &timeout)
            .args(["--all"]);
        timed(&mut cmd)
    };
    // Concurrently: each one waits on the server, not on the machine.
    let results = std::thread::scope(|s| {
        let jobs = [
            s.spawn(|| ("push", run(&["push"]))),
            s.spawn(|| ("show", run(&["show", ULID_ID]))),
            s.spawn(|| ("list --remote", run(&["list", "--remote"]))),
            s.spawn(|| ("gc", run(&["gc", "--keep-days", "0"]))),
            s.spawn(|| ("entire-fetch --all", fetch())),
        ];
        jobs.map(|j| j.join().expect("command thread"))
    });
    for (what, (out, took)) in results {
        assert!(took < limit(), "{what} took {took:?}");
        let err = assert_code(&out, 1, what);
        if what == "list --remote" {
            assert!(err.contains("local checkpoints listed only"), "{err}");
            let listed = String::from_utf8_lossy(&out.stdout).into_owned();
            assert!(listed.contains(HEX_ID), "{listed}");
        }
        assert!(
            err.contains(&format!("{SHORT}s")),
            "{what} names the timeout: {err}"
        );
    }
    assert_eq!(env.queued(), 1, "the checkpoint stays queued");
}

/// One process of the system, from `/proc/<pid>/stat`.
struct Proc {
    pid: i32,
    comm: String,
    state: char,
    ppid: i32,
    pgrp: i32,
}

fn processes() -> Vec<Proc> {
    std::fs::read_dir("/proc")
        .expect("read /proc (the process list)")
        .flatten()
        .filter_map(|e| {
            let pid: i32 = e.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(e.path().join("stat")).ok()?;
            // `pid (comm) state ppid pgrp ...`; comm may hold spaces and parentheses.
            let open = stat.find('(')?;
            let close = stat.rfind(')')?;
            let mut rest = stat[close + 1..].split_whitespace();
            let state = rest.next()?.chars().next()?;
            let ppid = rest.next()?.parse().ok()?;
            let pgrp = rest.next()?.parse().ok()?;
            Some(Proc {
                pid,
                comm: stat[open + 1..close].to_owned(),
                state,
                ppid,
                pgrp,
            })
        })
        .collect()
}

/// Polls `f` every 50 ms until it returns `Some` or `within` passes.
fn poll<T>(within: Duration, mut f: impl FnMut() -> Option<T>) -> Option<T> {
    let until = Instant::now() + within;
    loop {
        if let Some(v) = f() {
            return Some(v);
        }
        if Instant::now() >= until {
            return None;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The process group of the git that `parent` started, once its HTTP transport helper runs in
/// it (git is then waiting on the stalled server).
fn git_group_of(parent: &Child) -> i32 {
    let parent = i32::try_from(parent.id()).unwrap();
    poll(Duration::from_secs(20), || {
        let all = processes();
        let git = all.iter().find(|p| p.ppid == parent && p.comm == "git")?;
        all.iter()
            .any(|p| p.pgrp == git.pgrp && p.pid != git.pid && p.comm.starts_with("git-remote-"))
            .then_some(git.pgrp)
    })
    .expect("git and its transport helper start")
}

/// Sends `signal` to `child` (one of our binaries, waiting on git) and checks that it exits
/// 128 + signal and leaves no live process in git's process group.
fn assert_signal_stops_git(mut child: Child, signal: i32) {
    let group = git_group_of(&child);
    assert_ne!(
        group,
        // SAFETY: getpgrp has no preconditions.
        unsafe { libc::getpgrp() },
        "git runs in a process group of its own"
    );
    let status = signal_and_wait(&mut child, signal);
    assert_eq!(status.code(), Some(128 + signal), "{status}");
    let left = poll(Duration::from_secs(5), || {
        let live: Vec<String> = processes()
            .into_iter()
            .filter(|p| p.pgrp == group && p.state != 'Z')
            .map(|p| format!("{} {}", p.pid, p.comm))
            .collect();
        live.is_empty().then_some(())
    });
    assert!(left.is_some(), "processes of git's group {group} survived");
}

/// Sends `signal` to `child` and waits (10 s at most) for it to end: how it ended.
fn signal_and_wait(child: &mut Child, signal: i32) -> std::process::ExitStatus {
    let pid = i32::try_from(child.id()).unwrap();
    // SAFETY: kill(2) on our own child's pid.
    assert_eq!(unsafe { libc::kill(pid, signal) }, 0);
    let status = poll(Duration::from_secs(10), || child.try_wait().ok().flatten());
    let Some(status) = status else {
        let _ = child.kill();
        panic!("the command did not stop on signal {signal}");
    };
    status
}

/// Starts `program <args>` under the git-refs primary with its output discarded.
fn spawn_in(env: &TestEnv, program: &Path, args: &[&str]) -> Child {
    env.std_program(program, Store::Refs)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("spawn the command")
}

#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_and_sigterm_stop_git_and_everything_it_started() {
    let server = StalledServer::start();
    let env = stalled_origin(&server);
    let checkpoint = crate::env::checkpoint_bin();
    assert_signal_stops_git(
        spawn_in(&env, &checkpoint, &["list", "--remote"]),
        libc::SIGINT,
    );
    assert_signal_stops_git(spawn_in(&env, &fetch_bin(), &["--all"]), libc::SIGTERM);
    assert_signal_stops_git(spawn_in(&env, &checkpoint, &["push"]), libc::SIGINT);
}

/// Before it has started a git, a command runs no thread for the signals (that thread is
/// needed only to stop a git, and starting it cost every command that runs none, such as
/// `show`: docs/performance.md), and SIGTERM ends it at once, as the signal's default does.
#[cfg(target_os = "linux")]
#[test]
fn before_any_git_there_is_no_signal_thread_and_sigterm_ends_the_command() {
    use std::os::unix::process::ExitStatusExt;
    let env = TestEnv::new();
    // The pre-push hook reads its standard input to the end before it runs any git.
    let mut child = env
        .std_program(&prepush_bin(), Store::Refs)
        .arg("origin")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    // read(2) of descriptor 0: "0 0x0 ..." in /proc/<pid>/syscall.
    let reading = poll(Duration::from_secs(10), || {
        std::fs::read_to_string(format!("/proc/{pid}/syscall"))
            .ok()
            .filter(|call| call.starts_with("0 0x0 "))
    });
    let threads = std::fs::read_dir(format!("/proc/{pid}/task")).map(Iterator::count);
    let status = signal_and_wait(&mut child, libc::SIGTERM);
    assert!(reading.is_some(), "the hook reads its standard input");
    assert_eq!(threads.ok(), Some(1), "the hook's threads while it reads");
    assert_eq!(status.signal(), Some(libc::SIGTERM), "{status}");
}
