//! Gemini CLI (`@google/gemini-cli`), run offline against the Gemini API.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::json;

use super::session::{
    first_turn, imported_from_its_store, our_binary_gone, recorded_in_its_store, script, turn,
    Agent, FIRST_PROMPT, SECOND_PROMPT,
};
use super::{agent_package, Endpoint};
use crate::commit_hooks::{commit_in, the_trailer, trailer_ids};
use crate::env::{output_text, path_str, path_with_bins, tool_available, Store, TestEnv};

/// Gemini CLI's launcher as `tests/tools.sh` installs it, if it is there.
fn gemini_binary() -> Option<PathBuf> {
    let bin = agent_package("@google/gemini-cli")?.join("node_modules/.bin/gemini");
    bin.is_file().then_some(bin)
}

/// What a user of Gemini CLI has set up once, in the test's HOME: an API key as the way in (the
/// key itself is `GEMINI_API_KEY`), the repository trusted (Gemini CLI runs no project hook in
/// a folder it does not trust), no usage statistics and no update check.
fn set_up(env: &TestEnv) {
    let dir = env.root().join("home/.gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let settings = json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false},
        "general": {"disableAutoUpdate": true, "disableUpdateNag": true}
    });
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
    let trusted = json!({ path_str(env.repo()): "TRUST_FOLDER" });
    std::fs::write(dir.join("trustedFolders.json"), trusted.to_string()).unwrap();
}

/// `gemini -p <prompt>` in the test repository against `endpoint` (its base URL,
/// `GOOGLE_GEMINI_BASE_URL`), as a user runs it: the hermetic environment, `path`, every tool
/// call approved (`--yolo`), one model named (otherwise a routing call first asks the model to
/// pick one), `--resume latest` to go on with the last session, at most 3 minutes.
fn gemini(
    env: &TestEnv,
    bin: &Path,
    endpoint: &Endpoint,
    path: OsString,
    prompt: &str,
    resume: bool,
) -> Output {
    env.program_in("timeout", env.repo())
        .env("PATH", path)
        .env("GOOGLE_GEMINI_BASE_URL", endpoint.url())
        .env("GEMINI_API_KEY", "test-offline")
        .arg("180")
        .arg(bin)
        .args(["-p", prompt, "--yolo", "-m", "gemini-2.5-flash"])
        .args(if resume {
            &["--resume", "latest"][..]
        } else {
            &[]
        })
        .stdin(Stdio::null())
        .output()
        .expect("run gemini")
}

/// Runs `test` with Gemini CLI set up in a new [`TestEnv`], or skips it when Gemini CLI is not
/// installed.
fn with_gemini(test: impl FnOnce(&TestEnv, &Agent)) {
    let Some(bin) = gemini_binary() else {
        tool_available("Gemini CLI (npm @google/gemini-cli)", false);
        return;
    };
    let env = TestEnv::new();
    set_up(&env);
    let write = |file: &Path, content: &str| json!({"tool": "write_file", "input": {"file_path": path_str(file), "content": content}});
    let shell = |command: &str| json!({"tool": "run_shell_command", "input": {"command": command, "description": "Run it"}});
    let run = |endpoint: &Endpoint, path, prompt: &str, resume| {
        gemini(&env, &bin, endpoint, path, prompt, resume)
    };
    let agent = Agent {
        name: "Gemini CLI",
        write: &write,
        shell: &shell,
        run: &run,
        user_path: path_with_bins(),
    };
    test(&env, &agent);
}

/// A whole session, run by the real Gemini CLI: Gemini CLI 0.61 runs its shell commands with git's hooks turned off
/// (`core.hooksPath` empty, through `GIT_CONFIG_*`), so the commit the agent makes itself runs
/// none of ours and gets no trailer. Nothing is lost: the session stays staged, and the user's
/// next commit's checkpoint holds both prompts and every token the endpoint reported. Nothing of
/// ours is in the agent's output or in what it sent the model, and `session import` finds the
/// session in Gemini CLI's store recorded already.
#[test]
fn the_real_gemini_cli_is_captured_with_no_glue() {
    with_gemini(|env, agent| {
        env.ok_primary_in(None, env.repo(), &["enable", "--agent", "gemini"]);
        let endpoint = Endpoint::start(env, &script(env, agent));
        let (first, agents_commit) = first_turn(env, agent, &endpoint);
        assert_eq!(trailer_ids(env, &agents_commit), Vec::<String>::new());
        let second = turn(
            agent,
            &endpoint,
            path_with_bins(),
            SECOND_PROMPT,
            true,
            "Added.",
        );
        let (users_commit, _) = commit_in(env, env.repo(), None, "second.txt", "Add second");

        let id = the_trailer(env, &users_commit);
        let prompts = env.blob_text(Store::Refs, &id, "0/prompt.txt");
        assert!(
            prompts.contains(FIRST_PROMPT) && prompts.contains(SECOND_PROMPT),
            "{prompts}"
        );
        let meta = env.json(Store::Refs, &id, "0/metadata.json");
        assert_eq!(meta["agent"], json!(agent.name), "{meta}");
        assert_eq!(meta["files_touched"], json!(["second.txt"]), "{meta}");
        assert_eq!(
            meta["token_usage"]["output_tokens"],
            json!(120 + 40 + 4 + 100 + 3),
            "{meta}"
        );

        let requests = endpoint.requests();
        for ours in ["agent-hook", "entire: ", "warning: "] {
            assert!(!requests.contains(ours), "a request carries {ours:?}");
            for out in [&first, &second] {
                assert!(!output_text(out).contains(ours), "{}", output_text(out));
            }
        }
        recorded_in_its_store(env, "gemini", agent);
    });
}

#[test]
fn the_real_gemini_cli_finishes_its_turn_when_our_hooks_fail() {
    with_gemini(|env, agent| our_binary_gone(env, "gemini", agent));
}

/// `session::imported_from_its_store`: Gemini CLI's chat under `~/.gemini/tmp/<project>/chats/`.
#[test]
fn a_session_the_real_gemini_cli_left_in_its_store_is_imported() {
    with_gemini(|env, agent| imported_from_its_store(env, "gemini", agent, Some(120 + 40 + 4)));
}
