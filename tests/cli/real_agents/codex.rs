//! Codex (`@openai/codex`), run offline against the OpenAI Responses API.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::json;

use super::session::{imported_from_its_store, our_binary_gone, the_session, Agent};
use super::{agent_package, Endpoint};
use crate::env::{path_str, path_with_bins, tool_available, TestEnv};

/// Codex's native binary as `tests/tools.sh` installs it (in its platform sub-package), if it
/// is there.
fn codex_binary() -> Option<PathBuf> {
    let scope = agent_package("@openai/codex")?.join("node_modules/@openai");
    let target = format!(
        "vendor/{}-unknown-linux-musl/bin/codex",
        std::env::consts::ARCH
    );
    std::fs::read_dir(scope)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("codex-linux-"))
        .map(|e| e.path().join(&target))
        .find(|p| p.is_file())
}

/// What a user of Codex has set up once, in the test's HOME (`~/.codex/config.toml`): a model
/// provider whose `base_url` is the endpoint (Codex speaks the Responses API to it, streamed),
/// a model Codex knows (its metadata offers the `apply_patch` tool), and the repository trusted
/// (Codex loads no project configuration, so no project hook, from a folder it does not trust).
fn set_up(env: &TestEnv, endpoint: &Endpoint) {
    let dir = env.root().join("home/.codex");
    std::fs::create_dir_all(&dir).unwrap();
    let config = format!(
        "model = \"gpt-5.5\"\nmodel_provider = \"scripted\"\ncheck_for_update_on_startup = false\n\n\
         [model_providers.scripted]\nname = \"scripted\"\nbase_url = \"{}/v1\"\nwire_api = \"responses\"\n\n\
         [projects.{}]\ntrust_level = \"trusted\"\n",
        endpoint.url(),
        json!(path_str(env.repo())),
    );
    std::fs::write(dir.join("config.toml"), config).unwrap();
}

/// `codex exec <prompt>` (`codex exec resume --last <prompt>` to go on with the last session)
/// in the test repository, as a user runs it: the hermetic environment, `path`, no sandbox and
/// no approvals, the project's hooks run without the trust Codex's `/hooks` review stores
/// (`--dangerously-bypass-hook-trust`), at most 3 minutes.
fn codex(env: &TestEnv, bin: &Path, path: OsString, prompt: &str, resume: bool) -> Output {
    env.program_in("timeout", env.repo())
        .env("PATH", path)
        .arg("180")
        .arg(bin)
        .arg("exec")
        .args(if resume {
            &["resume", "--last"][..]
        } else {
            &[]
        })
        .args([
            "--dangerously-bypass-approvals-and-sandbox",
            "--dangerously-bypass-hook-trust",
            prompt,
        ])
        .stdin(Stdio::null())
        .output()
        .expect("run codex")
}

/// Runs `test` with Codex set up in a new [`TestEnv`], or skips it when Codex is not installed.
fn with_codex(test: impl FnOnce(&TestEnv, &Agent)) {
    let Some(bin) = codex_binary() else {
        tool_available("Codex (npm @openai/codex)", false);
        return;
    };
    let env = TestEnv::new();
    // A freeform tool: the patch is the call's input, as Codex's `apply_patch` takes it.
    let write = |file: &Path, content: &str| {
        let name = file.strip_prefix(env.repo()).unwrap().display();
        let added: String = content.lines().map(|l| format!("+{l}\n")).collect();
        json!({"tool": "apply_patch",
               "input": format!("*** Begin Patch\n*** Add File: {name}\n{added}*** End Patch\n")})
    };
    let shell = |command: &str| json!({"tool": "exec_command", "input": {"cmd": command}});
    let run = |endpoint: &Endpoint, path, prompt: &str, resume| {
        set_up(&env, endpoint);
        codex(&env, &bin, path, prompt, resume)
    };
    let agent = Agent {
        name: "Codex",
        write: &write,
        shell: &shell,
        run: &run,
        user_path: path_with_bins(),
    };
    test(&env, &agent);
}

/// The whole session (`session::the_session`).
#[test]
fn the_real_codex_is_captured_with_no_glue() {
    with_codex(|env, agent| the_session(env, "codex", agent, (Some(120 + 40), 4 + 100 + 3)));
}

#[test]
fn the_real_codex_finishes_its_turn_when_our_hooks_fail() {
    with_codex(|env, agent| our_binary_gone(env, "codex", agent));
}

/// `session::imported_from_its_store`: Codex's rollout under `~/.codex/sessions/`.
#[test]
fn a_session_the_real_codex_left_in_its_store_is_imported() {
    with_codex(|env, agent| imported_from_its_store(env, "codex", agent, Some(120 + 40 + 4)));
}
