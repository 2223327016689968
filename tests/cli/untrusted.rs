//! Untrusted input (docs/security.md): in a fresh clone of a repository whose committed
//! `.entire/settings.json` carries a hostile `checkpoint_remote`, no command path runs a command
//! and each says in one line which value it refused (`trust` refuses to approve it); a committed
//! fs mirror directory stays inside the repository, and one inside the work tree must be ignored
//! by git; and a repository's own path, whatever it holds, never breaks the side repositories
//! that pushes and fetches run in.

use std::path::PathBuf;
use std::process::Output;

use serde_json::json;

use crate::env::{
    fetch_bin, output_text, path_str, path_with_bins, write_approved_settings, Store, TestEnv,
};
use crate::fixtures::HEX_ID;

/// The hostile `checkpoint_remote.url` values; `MARKER` is replaced by the path of a file that
/// must never be created.
const HOSTILE: &[&str] = &[
    "--upload-pack=touch MARKER;",
    "  --upload-pack=touch MARKER;",
    "\t--upload-pack=touch MARKER;",
    "--receive-pack=touch MARKER;",
    "--exec=touch MARKER",
    "-cprotocol.ext.allow=always",
    "ext::sh -c touch% MARKER",
    "ext::sh -c 'touch MARKER'",
    "fd::0",
    "foo::bar",
    "gopher://example.com/r.git",
    "ssh://-oProxyCommand=touch%20MARKER/r.git",
    "ssh://git@-oProxyCommand=touch%20MARKER/r.git",
    "-oProxyCommand=touch MARKER:r.git",
    "git@-oProxyCommand=touch MARKER:r.git",
    "ssh://example.com/r.git\n--upload-pack=touch MARKER",
    "file:///tmp/r.git\u{0}--upload-pack=touch MARKER",
    "http://example.com/\u{1b}[31mr.git",
];

/// A fresh clone of a repository whose committed settings name `url` as the checkpoint remote,
/// with the hooks installed, one checkpoint written and linked to a commit.
struct Clone {
    env: TestEnv,
    dir: PathBuf,
    marker: PathBuf,
}

fn hostile_clone(template: &str) -> (Clone, serde_json::Value) {
    let env = TestEnv::new();
    let marker = env.root().join("PWNED");
    let url = template.replace("MARKER", path_str(&marker));
    let origin = env.bare_remote("origin");
    let settings = json!({"strategy_options": {"checkpoint_remote": {"url": url}}});
    env.write_file(".entire/settings.json", settings.to_string().as_bytes());
    env.git(&["add", ".entire/settings.json"]);
    env.git(&["commit", "-q", "-m", "settings"]);
    env.git(&["push", "-q", "origin", "main"]);
    let dir = env.clone_of(&origin, "clone", &[]);
    let install = env.run_in(Store::Refs, &dir, &["hooks", "install"]);
    assert!(install.status.success(), "hooks install: {install:?}");
    (Clone { env, dir, marker }, settings)
}

/// Asserts no command ran and one line of the output names the refused setting and its `file`.
fn assert_refused(c: &Clone, what: &str, value: &str, file: &str, out: &Output) {
    assert!(
        !c.marker.exists(),
        "{what} with {value:?} ran the attacker's command"
    );
    let all = output_text(out);
    assert!(
        all.lines()
            .any(|l| l.contains("strategy_options.checkpoint_remote")
                && l.contains(file)
                && l.contains("refused")),
        "{what} with {value:?}: no one-line refusal naming the setting and {file}:\n{all}"
    );
}

fn in_clone(c: &Clone, args: &[&str]) -> Output {
    c.env
        .cmd()
        .current_dir(&c.dir)
        .args(args)
        .output()
        .expect("run git-entire-checkpoint")
}

/// The user's `git push origin main` in the clone, through the hooks.
fn user_push(c: &Clone) -> Output {
    c.env
        .git_command_in(&c.dir, &["push", "-q", "origin", "main"])
        .env("PATH", path_with_bins())
        .output()
        .unwrap()
}

/// Whether the code remote holds the v1 checkpoint branch.
fn origin_has_checkpoints(c: &Clone) -> bool {
    !c.env
        .git_in(
            &c.env.root().join("origin.git"),
            &["for-each-ref", "refs/heads/entire/"],
        )
        .is_empty()
}

/// Every hostile value, as the per-clone file's checkpoint remote (which is used without
/// approval, and validated): every command path refuses it in one line and runs nothing, and
/// nothing goes to the code remote instead. As the committed file's (a fresh clone's, never
/// approved): no command uses it, `trust` refuses to approve it naming it, and the pre-push
/// hook says it awaits approval and is refused.
#[test]
fn hostile_checkpoint_remote_is_refused_on_every_command_path() {
    // Plus one very long value (an option behind 5,000 bytes of padding would still be one).
    let long = format!("--upload-pack=touch MARKER;{}", " ".repeat(5000));
    let values: Vec<&str> = HOSTILE.iter().copied().chain([long.as_str()]).collect();
    assert!(values.len() >= 15);
    for value in &values {
        let (c, settings) = hostile_clone(value);
        // A checkpoint queued and linked, so pre-push and push have work to do.
        let transcript = c.env.input_file("t.jsonl", b"{\"a\":1}\n");
        let write = c
            .env
            .write(None, "s1")
            .id(HEX_ID)
            .transcript(&transcript)
            .in_dir(&c.dir)
            .run();
        assert!(
            write.status.success(),
            "write with {value:?}: {}",
            output_text(&write)
        );
        let id = HEX_ID;
        let commit = c
            .env
            .git_command_in(
                &c.dir,
                &[
                    "commit",
                    "-q",
                    "--allow-empty",
                    "-m",
                    &format!("work\n\nEntire-Checkpoint: {id}"),
                ],
            )
            .env("PATH", path_with_bins())
            .output()
            .unwrap();
        assert!(commit.status.success(), "{commit:?}");

        // Copied into the per-clone file, it is used, and refused everywhere.
        let local = ".git/entire/settings.local.json";
        std::fs::create_dir_all(c.dir.join(".git/entire")).unwrap();
        std::fs::write(c.dir.join(local), settings.to_string()).unwrap();
        let push = user_push(&c);
        assert!(push.status.success(), "git push with {value:?}: {push:?}");
        assert_refused(&c, "git push (pre-push hook)", value, local, &push);
        for args in [
            &["push"][..],
            &["show", "0123456789ab"][..],
            &["list", "--remote"][..],
            &["gc", "--keep-days", "0"][..],
            &["doctor"][..],
            &["status"][..],
        ] {
            let out = in_clone(&c, args);
            assert_refused(&c, &args.join(" "), value, local, &out);
            assert_eq!(
                out.status.code(),
                Some(1),
                "{args:?} with {value:?}: {}",
                output_text(&out)
            );
        }
        for args in [&["--all"][..], &["--for", "HEAD~1..HEAD"][..]] {
            let out = c
                .env
                .bin_cmd(&fetch_bin())
                .current_dir(&c.dir)
                .args(args)
                .output()
                .unwrap();
            assert_refused(
                &c,
                &format!("git entire-fetch {}", args.join(" ")),
                value,
                local,
                &out,
            );
            assert_eq!(
                out.status.code(),
                Some(1),
                "entire-fetch {args:?}: {}",
                output_text(&out)
            );
        }
        // Refused is not redirected: nothing went to the code remote, and the checkpoint is
        // still here, waiting for a valid setting.
        assert!(
            !origin_has_checkpoints(&c),
            "{value:?}: pushed to the code remote"
        );
        assert!(
            !c.env
                .git_in(
                    &c.dir,
                    &["for-each-ref", "refs/heads/entire/checkpoints/v1"]
                )
                .is_empty(),
            "{value:?}: the local checkpoint branch is kept"
        );

        // Only in the committed file: not used, and never approved; the checkpoints stay queued
        // (the settings in force ask for a checkpoint remote, so they go nowhere else).
        std::fs::remove_file(c.dir.join(local)).unwrap();
        let committed = ".entire/settings.json";
        let out = in_clone(&c, &["trust"]);
        assert_refused(&c, "trust", value, committed, &out);
        assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
        let status = in_clone(&c, &["status"]);
        assert_refused(&c, "status", value, committed, &status);
        assert!(status.status.success(), "{}", output_text(&status));
        let more = c
            .env
            .git_command_in(&c.dir, &["commit", "-q", "--allow-empty", "-m", "more"])
            .env("PATH", path_with_bins())
            .output()
            .unwrap();
        assert!(more.status.success(), "{more:?}");
        let push = user_push(&c);
        assert!(push.status.success(), "git push with {value:?}: {push:?}");
        assert_refused(&c, "git push (pre-push hook)", value, committed, &push);
        assert!(
            output_text(&push).contains("git entire-checkpoint trust"),
            "{}",
            output_text(&push)
        );
        assert!(
            !origin_has_checkpoints(&c),
            "{value:?}: went to the code remote"
        );
        let approved = c
            .env
            .git_command_in(&c.dir, &["config", "--get-all", "entire.trustedSettings"])
            .output()
            .unwrap();
        assert_eq!(
            approved.status.code(),
            Some(1),
            "nothing approved: {approved:?}"
        );
    }
}

/// `write --session s1 --transcript <transcript> <extra>` in `dir`, with the default primary
/// (the settings files decide).
fn write_in(env: &TestEnv, dir: &std::path::Path, extra: &[&str], transcript: &[u8]) -> Output {
    env.write(None, "s1")
        .transcript(&env.input_file("t.jsonl", transcript))
        .args(extra)
        .in_dir(dir)
        .run()
}

/// Where a value of the fs mirror's `dir` in the committed settings, approved, leads; the
/// write to the primary must succeed anyway.
fn fs_mirror_clone(env: &TestEnv, dir: &str) -> PathBuf {
    let settings = json!({"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": dir}}]}});
    write_approved_settings(env, &settings.to_string());
    env.repo().to_path_buf()
}

#[test]
fn committed_fs_mirror_dir_stays_inside_the_repository() {
    let env = TestEnv::new();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, env.repo().join("link")).unwrap();
    let hooks = env.repo().join(".git/hooks");
    for dir in [
        path_str(&outside).to_owned(),
        "../outside".to_owned(),
        "sub/../../outside".to_owned(),
        "link".to_owned(),
        "link/deeper".to_owned(),
        ".git/hooks".to_owned(),
        path_str(&hooks).to_owned(),
    ] {
        let repo = fs_mirror_clone(&env, &dir);
        let before = std::fs::read_dir(&outside).unwrap().count();
        let hooks_before = std::fs::read_dir(&hooks).unwrap().count();
        let out = write_in(&env, &repo, &[], b"{\"a\":1}\n");
        assert!(
            out.status.success(),
            "the primary write succeeds with fs dir {dir:?}: {out:?}"
        );
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        assert!(
            env.rev(&format!(
                "refs/entire/checkpoints/{}/{id}",
                &id[id.len() - 2..]
            ))
            .is_some(),
            "the checkpoint is in the primary"
        );
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.lines().any(|l| l.contains("fs")
                && l.contains(".entire/settings.json")
                && l.contains("outside")),
            "fs dir {dir:?}: one warning names the setting and why: {err}"
        );
        assert_eq!(
            std::fs::read_dir(&outside).unwrap().count(),
            before,
            "{dir:?} wrote outside"
        );
        assert_eq!(
            std::fs::read_dir(&hooks).unwrap().count(),
            hooks_before,
            "{dir:?} wrote into .git/hooks"
        );
    }
}

#[test]
fn trusted_configuration_may_put_the_fs_mirror_anywhere() {
    let env = TestEnv::new();
    let outside = env.root().join("outside");
    let settings = json!({"checkpoints": {"primary": {"type": "git-refs"}, "mirrors": [{"type": "fs", "config": {"dir": path_str(&outside)}}]}});
    crate::env::write_settings_text(&env, "settings.local.json", &settings.to_string());
    let out = write_in(&env, env.repo(), &[], b"{}\n");
    assert!(out.status.success(), "{out:?}");
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(
        outside.join(&id).join("metadata.json").is_file(),
        "the local settings file is trusted"
    );
}

#[test]
fn committed_fs_mirror_dir_inside_the_work_tree_is_used() {
    let env = TestEnv::new();
    let repo = fs_mirror_clone(&env, "mirror/../checkpoints-mirror");
    env.write_file(".gitignore", b"/checkpoints-mirror/\n");
    let out = write_in(&env, &repo, &[], b"{}\n");
    assert!(out.status.success(), "{out:?}");
    let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    assert!(repo
        .join("checkpoints-mirror")
        .join(&id)
        .join("metadata.json")
        .is_file());
}

#[test]
fn a_symlink_inside_the_fs_mirror_is_replaced_not_followed() {
    let env = TestEnv::new();
    let outside = env.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let repo = fs_mirror_clone(&env, "mirror");
    env.write_file(".gitignore", b"mirror/\n");
    std::fs::create_dir_all(repo.join("mirror")).unwrap();
    // A work tree from a remote may hold a symlink where a known checkpoint's files go.
    std::os::unix::fs::symlink(&outside, repo.join("mirror").join(HEX_ID)).unwrap();
    let out = write_in(&env, &repo, &["--id", HEX_ID], b"{}\n");
    assert!(out.status.success(), "{out:?}");
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "wrote through the link"
    );
    assert!(repo
        .join("mirror")
        .join(HEX_ID)
        .join("metadata.json")
        .is_file());
}

#[test]
fn side_repositories_work_from_any_path() {
    let env = TestEnv::without_repo();
    let parent = env.root().join(r#"C# "semi;colon" back\slash"#);
    let repo = parent.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    env.git_in(&repo, &["init", "-q", "-b", "main"]);
    env.git_in(&repo, &["commit", "-q", "--allow-empty", "-m", "initial"]);
    let origin = env.root().join("origin.git");
    env.git_in(env.root(), &["init", "-q", "--bare", path_str(&origin)]);
    env.git_in(&repo, &["remote", "add", "origin", path_str(&origin)]);
    env.git_in(&repo, &["push", "-q", "origin", "main"]);
    let transcript = env.input_file("t.jsonl", b"{\"a\":1}\n");
    let write = env.run_in(
        Store::Refs,
        &repo,
        &[
            "write",
            "--session",
            "s1",
            "--transcript",
            path_str(&transcript),
        ],
    );
    assert!(write.status.success(), "{write:?}");
    let id = String::from_utf8_lossy(&write.stdout).trim().to_owned();
    let name = format!("refs/entire/checkpoints/{}/{id}", &id[id.len() - 2..]);
    let push = env.run_in(Store::Refs, &repo, &["push", "origin"]);
    assert!(push.status.success(), "{push:?}");
    let on_remote = env.git_in(&origin, &["for-each-ref", "--format=%(refname)", &name]);
    assert_eq!(
        on_remote.trim(),
        name,
        "push from {}: {push:?}",
        repo.display()
    );

    // A clone under the same directory reads it on demand, whole and partially.
    let clone = parent.join("clone");
    env.git_in(
        env.root(),
        &["clone", "-q", path_str(&origin), path_str(&clone)],
    );
    let show = env.run_in(Store::Refs, &clone, &["show", &id, "--json"]);
    assert!(show.status.success(), "on-demand show: {show:?}");
    let partial = parent.join("partial");
    env.git_in(
        env.root(),
        &["clone", "-q", path_str(&origin), path_str(&partial)],
    );
    let fetch = env.fetch_in(&partial, &["--filter=blob:none", "origin", &id]);
    assert!(fetch.status.success(), "partial fetch: {fetch:?}");
    let transcript = env.run_in(Store::Refs, &partial, &["show", &id, "--transcript"]);
    assert!(
        transcript.status.success(),
        "transcript from the partial cache: {transcript:?}"
    );
    assert!(String::from_utf8_lossy(&transcript.stdout).contains("\"a\":1"));
}

#[test]
fn a_hostile_remote_on_the_command_line_is_a_usage_error() {
    let env = TestEnv::new();
    let marker = env.root().join("PWNED");
    let ext = format!("ext::sh -c touch% {}", path_str(&marker));
    let ssh = format!("ssh://-oProxyCommand=touch%20{}/r", path_str(&marker));
    for value in [ext.as_str(), ssh.as_str(), "fd::0"] {
        for args in [
            vec!["push", value],
            vec!["show", "--remote", value, HEX_ID],
            vec!["list", "--remote", value],
            vec!["migrate", "--push", value],
        ] {
            let out = env.cmd().args(&args).output().unwrap();
            assert_eq!(
                out.status.code(),
                Some(2),
                "{args:?}: {}",
                output_text(&out)
            );
        }
        let out = env
            .bin_cmd(&fetch_bin())
            .args([value, HEX_ID])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(2),
            "entire-fetch {value:?}: {}",
            output_text(&out)
        );
        assert!(
            output_text(&out).contains("refused"),
            "{}",
            output_text(&out)
        );
        assert!(!marker.exists(), "{value:?} ran a command");
    }
}
