//! Factory Droid (`droid`), run offline against the Anthropic Messages API: a custom model of
//! the user's (`customModels` in `~/.factory/settings.json`, provider `anthropic`, "bring your
//! own key") and air-gap mode (`FACTORY_AIRGAP_ENABLED`), which need no Factory login.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::json;

use super::session::{our_binary_gone, the_session, Agent};
use super::{agent_package, Endpoint};
use crate::env::{path_str, tool_available, TestEnv};

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

/// The ID of the one session Droid recorded in the test's HOME (its
/// `~/.factory/sessions/<directory>/<session>.jsonl`).
fn the_session_id(env: &TestEnv) -> String {
    let sessions = env.root().join("home/.factory/sessions");
    let ids: Vec<String> = std::fs::read_dir(&sessions)
        .expect("Droid recorded its session")
        .flatten()
        .flat_map(|dir| {
            std::fs::read_dir(dir.path())
                .into_iter()
                .flatten()
                .flatten()
        })
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(ids.len(), 1, "one session in {}", sessions.display());
    ids[0].clone()
}

/// `droid exec <prompt>` in the test repository with the custom model, as a user runs it: the
/// hermetic environment, `path`, every permission skipped, `--session-id` to go on with the
/// session, at most 3 minutes.
fn droid(
    env: &TestEnv,
    bin: &Path,
    endpoint: &Endpoint,
    path: OsString,
    prompt: &str,
    resume: bool,
) -> Output {
    set_up(env, endpoint);
    let session = if resume {
        vec!["--session-id".to_owned(), the_session_id(env)]
    } else {
        Vec::new()
    };
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
        ])
        .args(session)
        .arg(prompt)
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
    let shell = |command: &str| json!({"tool": "Execute", "input": {"command": command, "summary": "Commit the notes file"}});
    let run = |endpoint: &Endpoint, path, prompt: &str, resume| {
        droid(&env, &bin, endpoint, path, prompt, resume)
    };
    let agent = Agent {
        name: "Factory AI Droid",
        write: &write,
        shell: &shell,
        run: &run,
    };
    test(&env, &agent);
}

/// The whole session (`session::the_session`).
#[test]
fn the_real_droid_is_captured_with_no_glue() {
    with_droid(|env, agent| the_session(env, "droid", agent, (120 + 40, 4 + 100 + 3)));
}

#[test]
fn the_real_droid_finishes_its_turn_when_our_hooks_fail() {
    with_droid(|env, agent| our_binary_gone(env, "droid", agent));
}
