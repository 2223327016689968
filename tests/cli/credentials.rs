//! Credentials are never printed nor stored: a password or token in a remote URL, in every
//! spelling git accepts, never appears on stdout or stderr of any command (at every verbosity,
//! git's own stderr included) nor in any file under `.git/entire*`, and a checkpoint remote
//! carrying one is refused (by `trust` from the committed settings, by every command from the
//! per-clone ones).

use std::path::Path;
use std::process::Output;

use serde_json::json;

use crate::env::{fetch_bin, prepush_bin, write_settings, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT, ULID_ID};

/// Part of every secret below, and of nothing else the tests print.
const MARK: &str = "3tpw";

/// Remote URLs whose secret holds [`MARK`]: quotes, `@` and `:` inside the password,
/// percent-encoding, IPv6 hosts, scp-like, `git://`, `ssh://`, https token-only. None of them
/// answers: they point at closed ports or unresolvable hosts.
const URLS: [&str; 12] = [
    "http://user:s3cr'3tpw@127.0.0.1:1/r.git",
    "http://user:\"s3cr3tpw\"@127.0.0.1:1/r.git",
    "http://user:p@ss3tpw@127.0.0.1:1/r.git",
    "http://user:pa:ss3tpw@127.0.0.1:1/r.git",
    "http://user:%40s3cr3tpw%3A@127.0.0.1:1/r.git",
    "https://user%3As3cr3tpw@127.0.0.1:1/r.git",
    "http://user:s3cr3tpw@[::1]:1/r.git",
    "user:s3cr3tpw@127.0.0.1:r.git",
    "git://user:s3cr3tpw@127.0.0.1:1/r.git",
    "ssh://git:s3cr3tpw@127.0.0.1:1/r.git",
    "https://s3cr3tpw-token@127.0.0.1:1/r.git",
    "https://ghp_s3cr3tpw:x-oauth-basic@127.0.0.1:1/r.git",
];

/// Asserts neither output of `out` holds the secret; returns stderr.
fn assert_clean(out: &Output, what: &str) -> String {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        out.status.code().is_some(),
        "{what}: killed by a signal\n{stderr}"
    );
    assert!(
        !stdout.contains(MARK) && !stderr.contains(MARK),
        "{what} printed the secret:\nstdout:\n{stdout}\nstderr:\n{stderr}"
    );
    stderr
}

/// Every file under the repository's `.git/entire*`, with its bytes.
fn entire_files(env: &TestEnv) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if let Ok(bytes) = std::fs::read(&p) {
                out.push((p.display().to_string(), bytes));
            }
        }
    }
    let mut out = Vec::new();
    for e in std::fs::read_dir(env.common_dir()).unwrap().flatten() {
        if e.file_name().to_string_lossy().starts_with("entire") {
            let p = e.path();
            match p.is_dir() {
                true => walk(&p, &mut out),
                false => out.push((p.display().to_string(), std::fs::read(&p).unwrap())),
            }
        }
    }
    out
}

/// Every command that names, reaches or reports the remote `url`, at high verbosity; none
/// prints the secret, and nothing under `.git/entire*` holds it afterwards.
fn never_printed_nor_stored(url: &str) {
    let env = TestEnv::new();
    env.git(&["remote", "add", "origin", url]);
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    // Unresolvable hosts fail fast, but a slow resolver must not make the test hang.
    let run = |program: &Path, args: &[&str]| -> Output {
        let mut cmd = env.bin_cmd(program);
        cmd.env("ENTIRE_CHECKPOINTS_PRIMARY", Store::Refs.name())
            .env("ENTIRE_NETWORK_TIMEOUT_SECONDS", "20")
            .env("ENTIRE_HOOK_BUDGET_SECONDS", "20")
            .env("ENTIRE_LOG", "trace")
            .args(args)
            .write_stdin(format!(
                "refs/heads/main {0} refs/heads/main {0}\n",
                "0".repeat(40)
            ));
        cmd.output().expect("run the command")
    };
    let checkpoint = crate::env::checkpoint_bin();
    let fetch = fetch_bin();
    let prepush = prepush_bin();
    let commands: Vec<(&Path, Vec<&str>)> = vec![
        (&checkpoint, vec!["-vv", "push", url]),
        (&checkpoint, vec!["-vv", "push", url, "--all"]),
        (&checkpoint, vec!["-vv", "push"]),
        (&checkpoint, vec!["-vv", "show", "--remote", url, ULID_ID]),
        (&checkpoint, vec!["-vv", "show", ULID_ID]),
        (&checkpoint, vec!["-vv", "list", "--remote"]),
        (&checkpoint, vec!["-vv", "list", "--remote", url]),
        (&checkpoint, vec!["-vv", "gc", "--keep-days", "0"]),
        (&checkpoint, vec!["-vv", "status"]),
        (&checkpoint, vec!["-vv", "status", "--json"]),
        (&checkpoint, vec!["-vv", "doctor"]),
        (&checkpoint, vec!["-vv", "doctor", "--json"]),
        (&fetch, vec!["-vv", url, ULID_ID]),
        (&fetch, vec!["-vv", "--filter=blob:none", url, ULID_ID]),
        (&fetch, vec!["-vv", "--all"]),
        (&prepush, vec!["-vv", "origin", url]),
        (&prepush, vec!["-vv", url, url]),
    ];
    for (program, args) in &commands {
        assert_clean(&run(program, args), &format!("{url}: {args:?}"));
    }
    // The URL is shown, redacted, where it is named.
    let err = assert_clean(&run(&checkpoint, &["push", url]), url);
    assert!(
        err.contains("***"),
        "{url}: push names the remote redacted: {err}"
    );

    // As the checkpoint remote in the committed settings: unused, and `trust` and `status`
    // refuse it, never echoing it.
    write_settings(
        &env,
        "settings.json",
        &json!({"strategy_options": {"checkpoint_remote": {"url": url}}}),
    );
    let out = run(&checkpoint, &["-vv", "trust"]);
    let err = assert_clean(&out, &format!("{url} committed: trust"));
    assert!(
        out.status.code() == Some(1) && err.contains("carries credentials"),
        "{url} committed: trust refuses it: {err}"
    );
    let out = run(&checkpoint, &["-vv", "status"]);
    assert_clean(&out, &format!("{url} committed: status"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("carries credentials"));
    assert_clean(
        &run(&prepush, &["origin"]),
        &format!("{url} committed: prepush"),
    );
    std::fs::remove_file(env.repo().join(".entire/settings.json")).unwrap();

    // As the checkpoint remote in the per-clone settings: refused, never echoed.
    write_settings(
        &env,
        "settings.local.json",
        &json!({"strategy_options": {"checkpoint_remote": {"url": url}}}),
    );
    for args in [
        vec!["-vv", "status"],
        vec!["-vv", "status", "--json"],
        vec!["-vv", "config"],
        vec!["-vv", "config", "--json"],
        vec!["-vv", "push"],
        vec!["-vv", "doctor", "--json"],
    ] {
        let out = run(&checkpoint, &args);
        let err = assert_clean(&out, &format!("{url} in settings: {args:?}"));
        if args[1] != "doctor" {
            assert!(
                err.contains("carries credentials"),
                "{url} in settings: {args:?} refuses it: {err}"
            );
        }
    }
    assert_clean(
        &run(&prepush, &["origin"]),
        &format!("{url} in the per-clone settings: prepush"),
    );

    // The per-clone settings file holds what the user wrote there; nothing else may.
    let settings = crate::env::local_settings_path(&env);
    for (path, bytes) in entire_files(&env)
        .into_iter()
        .filter(|(path, _)| *path != settings.display().to_string())
    {
        assert!(
            !String::from_utf8_lossy(&bytes).contains(MARK),
            "{url}: {path} holds the secret"
        );
    }
}

#[test]
fn a_password_in_a_remote_url_is_never_printed_nor_stored() {
    std::thread::scope(|s| {
        for url in URLS {
            s.spawn(move || never_printed_nor_stored(url));
        }
    });
}
