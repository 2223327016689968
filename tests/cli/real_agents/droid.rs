//! Factory Droid (`droid`), run offline against the Anthropic Messages API: a custom model of
//! the user's (`customModels` in `~/.factory/settings.json`, provider `anthropic`, "bring your
//! own key") and air-gap mode (`FACTORY_AIRGAP_ENABLED`), which need no Factory login.
//!
//! One prompt per session: in air-gap mode `droid exec --session-id <id>` cannot go on with a
//! session (0.215.0 fetches it from Factory's server first, which air-gap mode blocks, and exits
//! 1 saying nothing on stdout or stderr: its log, `~/.factory/logs/droid-log-single.log`, says
//! "Failed to fetch session ... AirgapBlockedError"), so the second prompt of
//! `session::the_session` cannot run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::json;

use super::session::{
    imported_from_its_store, nothing_of_ours, recorded_in_its_store, the_agents_own_commit, turn,
    Agent, FIRST_PROMPT,
};
use super::{agent_package, Endpoint};
use crate::env::{path_str, path_with_bins, profile_path, tool_available, TestEnv};

/// Droid's launcher as `tests/tools.sh` installs it, if it is there.
fn droid_binary() -> Option<PathBuf> {
    let bin = agent_package("droid")?.join("node_modules/.bin/droid");
    bin.is_file().then_some(bin)
}

/// The custom model of the user's, in the test's HOME: `endpoint`, spoken to as Anthropic.
fn set_up(env: &TestEnv, endpoint: &Endpoint) {
    let dir = env.root().join("home/.factory");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({"customModels": [{
        "model": "claude-sonnet-4-5", "displayName": "Scripted", "baseUrl": endpoint.url(),
        "apiKey": "test-offline", "provider": "anthropic", "maxOutputTokens": 8192
    }]});
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// `droid exec <prompt>` in the test repository with the custom model, in a new session, as a
/// user runs it: the hermetic environment, `path`, air-gap mode, every permission skipped, at
/// most 3 minutes.
fn droid(env: &TestEnv, bin: &Path, endpoint: &Endpoint, path: OsString, prompt: &str) -> Output {
    set_up(env, endpoint);
    env.program_in("timeout", env.repo())
        .env("PATH", path)
        .env("FACTORY_AIRGAP_ENABLED", "true")
        .env("FACTORY_DROID_AUTO_UPDATE_ENABLED", "false")
        .arg("180")
        .arg(bin)
        .args([
            "exec",
            "--skip-permissions-unsafe",
            "-m",
            "custom:claude-sonnet-4-5",
            prompt,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run droid")
}

/// Runs `test` with Droid in a new [`TestEnv`], or skips it when Droid is not installed.
fn with_droid(test: impl FnOnce(&TestEnv, &Agent)) {
    let Some(bin) = droid_binary() else {
        tool_available("Droid (npm droid)", false);
        return;
    };
    let env = TestEnv::new();
    let write = |file: &Path, content: &str| json!({"tool": "Create", "input": {"file_path": path_str(file), "content": content}});
    let shell = |command: &str| json!({"tool": "Execute", "input": {"command": command, "summary": "Run it"}});
    let run = |endpoint: &Endpoint, path, prompt: &str, resume: bool| {
        assert!(
            !resume,
            "droid exec cannot resume a session in air-gap mode"
        );
        droid(&env, &bin, endpoint, path, prompt)
    };
    let agent = Agent {
        name: "Factory AI Droid",
        write: &write,
        shell: &shell,
        run: &run,
        user_path: path_with_bins(),
    };
    test(&env, &agent);
}

/// `session::the_agents_own_commit`: Droid's own `git commit` gets its checkpoint, with the
/// prompt and the file (no token usage: 0.215.0 writes none in its transcript, only session
/// totals in the `<session>.settings.json` beside it); nothing of ours reaches Droid's output or
/// the model; `session import` finds the session in Droid's store recorded already.
#[test]
fn the_real_droids_own_commit_is_captured_with_no_glue() {
    with_droid(|env, agent| {
        let (endpoint, out, _) = the_agents_own_commit(env, "droid", agent, None);
        nothing_of_ours(&endpoint, &[out]);
        recorded_in_its_store(env, "droid", agent);
    });
}

/// Our binary gone from `PATH` (uninstalled, or a shell without it): every hook of the session
/// fails, and Droid still finishes its turn, exit 0, with the model's answer.
#[test]
fn the_real_droid_finishes_its_turn_when_our_hooks_fail() {
    with_droid(|env, agent| {
        env.ok_primary_in(None, env.repo(), &["enable", "--agent", "droid"]);
        let endpoint = Endpoint::start(env, &super::session::script(env, agent));
        turn(
            agent,
            &endpoint,
            profile_path(),
            FIRST_PROMPT,
            false,
            "Done.",
        );
        assert!(env.repo().join("notes.txt").is_file());
    });
}

/// `session::imported_from_its_store`: Droid's `~/.factory/sessions/<directory>/<id>.jsonl`, its
/// token usage read from the `<id>.settings.json` beside it.
#[test]
fn a_session_the_real_droid_left_in_its_store_is_imported() {
    with_droid(|env, agent| imported_from_its_store(env, "droid", agent, Some(120 + 40 + 4)));
}
