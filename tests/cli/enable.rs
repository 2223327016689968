//! `enable` and `disable` on real repositories: a fresh repository with no `.entire/`, a second
//! run that changes nothing, `--local`, `--store`, a primary the settings already name, a bare
//! repository, then a commit linked through the hooks `enable` installed, and `disable`
//! removing the hooks while every checkpoint and setting stays.

use serde_json::{json, Value};

use crate::commit_hooks::{commit, lines, record, the_trailer, LINE_1, SESSION};
use crate::env::{
    assert_code, branch_dir, checkpoint_ref, hooks_dir, parse_json, stdout, Store, TestEnv,
    V1_BRANCH,
};

fn read(env: &TestEnv, rel: &str) -> Option<Vec<u8>> {
    std::fs::read(env.repo().join(rel)).ok()
}

fn settings(env: &TestEnv, rel: &str) -> Value {
    parse_json(&read(env, rel).unwrap_or_else(|| panic!("{rel} was written")))
}

/// Whether our hook `name` is in the repository's hooks directory.
fn ours(env: &TestEnv, name: &str) -> bool {
    std::fs::read_to_string(hooks_dir(env).join(name))
        .is_ok_and(|t| t.contains("Entire checkpoints hook"))
}

const HOOKS: [&str; 4] = [
    "pre-push",
    "prepare-commit-msg",
    "post-commit",
    "post-rewrite",
];

#[test]
fn enable_in_a_fresh_repository_writes_settings_gitignore_and_hooks_then_changes_nothing() {
    let env = TestEnv::new();
    assert!(!env.repo().join(".entire").exists());
    let out = env.run_default(&["enable"]);
    assert_code(&out, 0, "enable");
    let said = stdout(&out);
    for line in [
        "primary store: git-refs (.entire/settings.json)",
        "enabled: true (.entire/settings.json)",
        ".entire/.gitignore: ignores tmp/, settings.local.json, metadata/, logs/",
        "hook pre-push: installed",
        "hook post-commit: installed",
    ] {
        assert!(said.lines().any(|l| l == line), "{line:?} in:\n{said}");
    }
    assert_eq!(
        settings(&env, ".entire/settings.json"),
        json!({"checkpoints": {"primary": {"type": "git-refs"}}, "enabled": true})
    );
    assert_eq!(
        String::from_utf8(read(&env, ".entire/.gitignore").unwrap()).unwrap(),
        "tmp/\nsettings.local.json\nmetadata/\nlogs/\n"
    );
    assert!(HOOKS.iter().all(|h| ours(&env, h)));
    assert_eq!(
        env.git(&["check-ignore", ".entire/settings.local.json"])
            .trim(),
        ".entire/settings.local.json",
        "where the reference keeps it, it is never committed"
    );
    assert!(read(&env, ".git/entire/settings.local.json").is_none());

    let files = |env: &TestEnv| {
        [".entire/settings.json", ".entire/.gitignore"]
            .map(|f| read(env, f))
            .to_vec()
    };
    let before = files(&env);
    let again = env.run_default(&["enable"]);
    assert_code(&again, 0, "enable again");
    assert_eq!(stdout(&again), "nothing changed\n");
    assert_eq!(files(&env), before);
    let json = parse_json(&env.run_default(&["enable", "--json"]).stdout);
    assert_eq!(json["changes"], json!([]));
    assert_eq!(
        json["primary"],
        json!({"store": "git-refs", "file": ".entire/settings.json", "kept": true})
    );
}

#[test]
fn enable_local_writes_only_the_local_settings() {
    let env = TestEnv::new();
    let out = env.run_default(&["enable", "--local", "--store", "git-branch"]);
    assert_code(&out, 0, "enable --local");
    assert!(
        stdout(&out).contains("primary store: git-branch (.git/entire/settings.local.json)"),
        "{}",
        stdout(&out)
    );
    assert_eq!(
        settings(&env, ".git/entire/settings.local.json"),
        json!({"checkpoints": {"primary": {"type": "git-branch"}}, "enabled": true})
    );
    assert!(read(&env, ".entire/settings.json").is_none());
    assert_eq!(
        env.ok_json_default(&["config", "--json"])["primary"],
        json!("git-branch")
    );
}

#[test]
fn an_existing_primary_is_kept_without_store_and_switched_with_it() {
    let env = TestEnv::new();
    env.write_file(
        ".entire/settings.json",
        b"{\"checkpoints\": {\"primary\": {\"type\": \"git-branch\"}}, \"strategy_options\": {\"push_sessions\": true}}\n",
    );
    let out = env.run_default(&["enable"]);
    assert_code(&out, 0, "enable");
    assert!(
        stdout(&out)
            .contains("primary store: git-branch (kept, from .entire/settings.json; --store"),
        "{}",
        stdout(&out)
    );
    let kept = settings(&env, ".entire/settings.json");
    assert_eq!(kept["checkpoints"]["primary"]["type"], "git-branch");
    assert_eq!(kept["strategy_options"]["push_sessions"], true);

    let out = env.run_default(&["enable", "--store", "git-refs"]);
    let stderr = assert_code(&out, 0, "enable --store git-refs");
    assert!(
        stdout(&out).contains("primary store: git-branch -> git-refs (.entire/settings.json)"),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr.contains("stay in git-branch") && stderr.contains("migrate"),
        "{stderr}"
    );
    let switched = settings(&env, ".entire/settings.json");
    assert_eq!(switched["checkpoints"]["primary"]["type"], "git-refs");
    assert_eq!(
        switched["strategy_options"]["push_sessions"], true,
        "the other settings stay"
    );
    let again = env.run_default(&["enable", "--store", "git-refs"]);
    assert_code(&again, 0, "enable --store git-refs again");
    assert_eq!(stdout(&again), "nothing changed\n");
}

#[test]
fn enable_in_a_bare_repository_is_refused_and_changes_nothing() {
    let env = TestEnv::new();
    let bare = env.new_bare("bare");
    let listing = |dir: &std::path::Path| {
        let mut names: Vec<String> = walkdir(dir);
        names.sort();
        names
    };
    let before = listing(&bare);
    // Named, as safe.bareRepository=explicit (Git 3.0's default) wants a bare repository.
    let out = env
        .cmd()
        .current_dir(&bare)
        .env("GIT_DIR", &bare)
        .arg("enable")
        .output()
        .unwrap();
    let stderr = assert_code(&out, 2, "enable in a bare repository");
    assert!(stderr.contains("bare repository"), "{stderr}");
    assert!(out.stdout.is_empty());
    assert_eq!(listing(&bare), before, "nothing was written");
}

/// Every path under `dir`, relative to it.
fn walkdir(dir: &std::path::Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            out.push(p.strip_prefix(dir).unwrap().display().to_string());
            if p.is_dir() {
                todo.push(p);
            }
        }
    }
    out
}

/// After `enable`, a session and a commit through real git: the commit carries the trailer and
/// its checkpoint is in the store `enable` chose. `disable` then removes the hooks only.
#[test]
fn a_commit_is_linked_after_enable_and_disable_keeps_checkpoints_and_settings() {
    for store in Store::ALL {
        let env = TestEnv::new();
        env.ok_default(&["enable", "--store", store.name()]);
        record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
        let (head, _) = commit(&env, None, "hello.txt", "add hello");
        let id = the_trailer(&env, &head);
        match store {
            Store::Refs => {
                env.git(&[
                    "cat-file",
                    "-e",
                    &format!("{}^{{tree}}", checkpoint_ref(&id)),
                ]);
            }
            Store::Branch => {
                let listed = env.git(&["ls-tree", "-r", "--name-only", V1_BRANCH]);
                assert!(
                    listed.contains(&format!("{}/metadata.json", branch_dir(&id))),
                    "{store:?}: {id} on the branch:\n{listed}"
                );
            }
        }
        let refs = env.refs_snapshot();
        let files = [".entire/settings.json", ".entire/.gitignore"].map(|f| read(&env, f));
        let out = env.run_default(&["disable"]);
        assert_code(&out, 0, "disable");
        assert!(
            stdout(&out)
                .lines()
                .any(|l| l.starts_with("removed our hooks: ") && l.contains("post-commit")),
            "one line says which hooks it removed: {}",
            stdout(&out)
        );
        assert!(
            HOOKS.iter().all(|h| !ours(&env, h)),
            "{store:?}: hooks gone"
        );
        assert_eq!(env.refs_snapshot(), refs, "{store:?}: every ref stays");
        assert_eq!(
            [".entire/settings.json", ".entire/.gitignore"].map(|f| read(&env, f)),
            files,
            "{store:?}: the settings stay"
        );
        let again = env.run_default(&["disable"]);
        assert_code(&again, 0, "disable again");
        assert_eq!(stdout(&again), "nothing changed\n");
        // Turned back on, the same primary is kept.
        env.ok_default(&["enable"]);
        assert!(HOOKS.iter().all(|h| ours(&env, h)));
        assert_eq!(
            settings(&env, ".entire/settings.json")["checkpoints"]["primary"]["type"],
            store.name()
        );
    }
}
