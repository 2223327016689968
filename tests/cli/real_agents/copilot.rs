//! Copilot CLI (`@github/copilot`), run offline against the Anthropic Messages API: its own
//! provider setting (`COPILOT_PROVIDER_*`, "bring your own key") with `COPILOT_OFFLINE`, which
//! needs no GitHub login and contacts nothing but the provider.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::json;

use super::session::{imported_from_its_store, our_binary_gone, the_session, Agent};
use super::{agent_package, Endpoint};
use crate::env::{path_str, path_with_bins, tool_available, TestEnv};

/// Copilot CLI's launcher as `tests/tools.sh` installs it, if it is there.
fn copilot_binary() -> Option<PathBuf> {
    let bin = agent_package("@github/copilot")?.join("node_modules/.bin/copilot");
    bin.is_file().then_some(bin)
}

/// What a user of Copilot CLI has done once, in the test's HOME: trusted the repository
/// (`trustedFolders` in `~/.copilot/config.json`; Copilot CLI runs no hook of a repository it
/// does not trust, and says nothing of it).
fn set_up(env: &TestEnv) {
    let dir = env.root().join("home/.copilot");
    std::fs::create_dir_all(&dir).unwrap();
    let config = json!({"trustedFolders": [path_str(env.repo())]});
    std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
}

/// `copilot -p <prompt>` in the test repository against `endpoint`, as a user runs it: the
/// hermetic environment, `path`, every tool allowed, only the answer on stdout (`--silent`),
/// `--continue` to go on with the last session, at most 3 minutes.
fn copilot(
    env: &TestEnv,
    bin: &Path,
    endpoint: &Endpoint,
    path: OsString,
    prompt: &str,
    resume: bool,
) -> Output {
    env.program_in("timeout", env.repo())
        .env("PATH", path)
        .env("COPILOT_OFFLINE", "true")
        .env("COPILOT_PROVIDER_TYPE", "anthropic")
        .env("COPILOT_PROVIDER_BASE_URL", endpoint.url())
        .env("COPILOT_PROVIDER_API_KEY", "test-offline")
        .env("COPILOT_MODEL", "claude-sonnet-4.5")
        .arg("180")
        .arg(bin)
        .args(["-p", prompt, "--allow-all-tools", "--silent"])
        .args(if resume { &["--continue"][..] } else { &[] })
        .stdin(Stdio::null())
        .output()
        .expect("run copilot")
}

/// Runs `test` with Copilot CLI in a new [`TestEnv`], or skips it when Copilot CLI is not
/// installed.
fn with_copilot(test: impl FnOnce(&TestEnv, &Agent)) {
    let Some(bin) = copilot_binary() else {
        tool_available("Copilot CLI (npm @github/copilot)", false);
        return;
    };
    let env = TestEnv::new();
    set_up(&env);
    let write = |file: &Path, content: &str| json!({"tool": "create", "input": {"path": path_str(file), "file_text": content}});
    let shell = |command: &str| json!({"tool": "bash", "input": {"command": command, "description": "Run it"}});
    let run = |endpoint: &Endpoint, path, prompt: &str, resume| {
        copilot(&env, &bin, endpoint, path, prompt, resume)
    };
    let agent = Agent {
        name: "Copilot CLI",
        write: &write,
        shell: &shell,
        run: &run,
        user_path: path_with_bins(),
    };
    test(&env, &agent);
}

/// The whole session (`session::the_session`). Copilot CLI 1.0.102 names its transcript only when
/// a turn ends, and writes that file late and in batches (it may not exist yet, or not yet show
/// the turn's prompt, when the agent commits): the agent's own commit's checkpoint holds the
/// payload's prompt and its file but no token usage, and every token is in the user's commit's.
#[test]
fn the_real_copilot_cli_is_captured_with_no_glue() {
    with_copilot(|env, agent| the_session(env, "copilot", agent, (None, 120 + 40 + 4 + 100 + 3)));
}

#[test]
fn the_real_copilot_cli_finishes_its_turn_when_our_hooks_fail() {
    with_copilot(|env, agent| our_binary_gone(env, "copilot", agent));
}

/// `session::imported_from_its_store`: Copilot CLI's `~/.copilot/session-state/<id>/events.jsonl`.
#[test]
fn a_session_the_real_copilot_cli_left_in_its_store_is_imported() {
    with_copilot(|env, agent| imported_from_its_store(env, "copilot", agent, Some(120 + 40 + 4)));
}
