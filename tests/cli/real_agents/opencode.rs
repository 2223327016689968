//! OpenCode (`opencode-ai`), run offline against OpenAI's Chat Completions, through an
//! OpenAI-compatible provider.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::json;

use super::session::{imported_from_its_store, our_binary_gone, the_session, Agent};
use super::{agent_package, Endpoint};
use crate::env::{path_str, path_with_bins, tool_available, Store, TestEnv};

/// OpenCode's native binary as `tests/tools.sh` installs it (in its platform sub-package; with
/// no install script run, the package's own `bin/` holds only a placeholder), if it is there.
fn opencode_binary() -> Option<PathBuf> {
    let modules = agent_package("opencode-ai")?.join("node_modules");
    let mut found: Vec<PathBuf> = std::fs::read_dir(modules)
        .ok()?
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("opencode-linux-")
        })
        .map(|e| e.path().join("bin/opencode"))
        .filter(|p| p.is_file())
        .collect();
    // `opencode-linux-x64` before its `-baseline` build, for CPUs without AVX2.
    found.sort();
    found.into_iter().next()
}

/// What a user of OpenCode has set up once, in the test's HOME
/// (`~/.config/opencode/opencode.json`): an OpenAI-compatible provider whose `baseURL` is the
/// endpoint, its model the default and the small one (OpenCode asks the small one for a
/// session's title). OpenCode installs its plugin package (`@opencode-ai/plugin`) with npm into
/// each configuration directory that has not got it; our plugin imports nothing, so the test
/// says it is there (what that install leaves: `node_modules` and a lock naming it) to run
/// with no network.
fn set_up(env: &TestEnv, endpoint: &Endpoint) {
    let config = json!({
        "provider": {"scripted": {
            "npm": "@ai-sdk/openai-compatible",
            "name": "Scripted",
            "options": {"baseURL": format!("{}/v1", endpoint.url()), "apiKey": "sk-test-offline"},
            "models": {"test-model": {"name": "Test model"}}
        }},
        "model": "scripted/test-model",
        "small_model": "scripted/test-model",
        "autoupdate": false,
        "share": "disabled"
    });
    let global = env.root().join("home/.config/opencode");
    std::fs::create_dir_all(&global).unwrap();
    std::fs::write(global.join("opencode.json"), config.to_string()).unwrap();
    let lock = json!({"packages": {"": {"dependencies": {"@opencode-ai/plugin": "1.18.33"}}}});
    for dir in [global, env.repo().join(".opencode")] {
        std::fs::create_dir_all(dir.join("node_modules")).unwrap();
        std::fs::write(dir.join("package-lock.json"), lock.to_string()).unwrap();
    }
}

/// `opencode run <prompt>` (`--continue` to go on with the last session) in the test
/// repository, as a user runs it from there: the hermetic environment, `path` and OpenCode's own directory
/// after it (our hook reads the session with `opencode export`), no update check, no models
/// list fetched, no default plugins, at most 3 minutes.
fn opencode(env: &TestEnv, bin: &Path, path: OsString, prompt: &str, resume: bool) -> Output {
    env.program_in("timeout", env.repo())
        .env("PATH", with_opencode_dir(path, bin))
        // OpenCode takes its directory from `PWD` before the working directory.
        .env("PWD", env.repo())
        .env("OPENCODE_DISABLE_AUTOUPDATE", "1")
        .env("OPENCODE_DISABLE_MODELS_FETCH", "1")
        .env("OPENCODE_DISABLE_DEFAULT_PLUGINS", "1")
        .env("OPENCODE_DISABLE_LSP_DOWNLOAD", "1")
        .arg("180")
        .arg(bin)
        .arg("run")
        .args(if resume { &["--continue"][..] } else { &[] })
        // Word by word, as a user types it: `run` quotes an argument that holds a space.
        .args(prompt.split(' '))
        .stdin(Stdio::null())
        .output()
        .expect("run opencode")
}

/// `path` with the directory of OpenCode's binary `bin` after it.
fn with_opencode_dir(path: OsString, bin: &Path) -> OsString {
    let mut dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    dirs.push(bin.parent().unwrap().to_path_buf());
    std::env::join_paths(dirs).unwrap()
}

/// Runs `test` with OpenCode set up in a new [`TestEnv`], or skips it when OpenCode is not
/// installed.
fn with_opencode(test: impl FnOnce(&TestEnv, &Agent)) {
    let Some(bin) = opencode_binary() else {
        tool_available("OpenCode (npm opencode-ai)", false);
        return;
    };
    let env = TestEnv::new();
    let write = |file: &Path, content: &str| json!({"tool": "write", "input": {"filePath": path_str(file), "content": content}});
    let shell = |command: &str| json!({"tool": "bash", "input": {"command": command, "description": "Run it"}});
    let run = |endpoint: &Endpoint, path, prompt: &str, resume| {
        set_up(&env, endpoint);
        opencode(&env, &bin, path, prompt, resume)
    };
    let agent = Agent {
        name: "OpenCode",
        write: &write,
        shell: &shell,
        run: &run,
        user_path: with_opencode_dir(path_with_bins(), &bin),
    };
    test(&env, &agent);
}

/// The whole session (`session::the_session`). OpenCode records a step's tokens when the step
/// ends, after the calls it asks for: the `git commit` call's tokens are in the next checkpoint.
#[test]
fn the_real_opencode_is_captured_with_no_glue() {
    with_opencode(|env, agent| the_session(env, "opencode", agent, (Some(120), 40 + 4 + 100 + 3)));
}

#[test]
fn the_real_opencode_finishes_its_turn_when_our_hooks_fail() {
    with_opencode(|env, agent| our_binary_gone(env, "opencode", agent));
}

/// `session::imported_from_its_store`: OpenCode's database, listed by `opencode session list`
/// and read by `opencode export`, the real ones.
#[test]
fn a_session_the_real_opencode_left_in_its_store_is_imported() {
    with_opencode(|env, agent| {
        imported_from_its_store(env, "opencode", agent, Some(120 + 40 + 4));
        // Without `opencode` on PATH, OpenCode has no sessions to list: not an error.
        let none = env.ok_json(
            Store::Refs,
            &["session", "import", "--agent", "opencode", "--json"],
        );
        assert_eq!(none["sessions"], json!([]), "{none}");
    });
}
