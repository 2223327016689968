//! The scenario every real agent but Claude Code runs (Claude Code's, in `claude_code.rs`, came
//! first): two prompts of one session, the agent's own commit, the user's, and the checks on
//! their checkpoints; and the same session with our binary gone from `PATH`.

use std::ffi::OsString;
use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use super::Endpoint;
use crate::env::{output_text, path_with_bins, profile_path, TestEnv};

/// The first prompt of [`script`]: its turn writes `notes.txt` and commits it.
pub const FIRST_PROMPT: &str = "write the notes file and commit it PROMPT-ONE";
/// The second prompt: its turn writes `second.txt`.
pub const SECOND_PROMPT: &str = "now add a second file PROMPT-TWO";

/// An agent as the real-agent tests drive it.
pub struct Agent<'a> {
    /// The agent as a checkpoint's `metadata.json` names it.
    pub name: &'static str,
    /// The step of the endpoint's script (`{"tool", "input"}`) that writes `content` to `file`
    /// with the agent's own tool.
    pub write: &'a dyn Fn(&Path, &str) -> Value,
    /// The step that runs `command` in the agent's own shell.
    pub shell: &'a dyn Fn(&str) -> Value,
    /// Runs the agent on `prompt` with `PATH` set to `path`, in a new session, or in the last
    /// one (`resume`), bounded in time.
    pub run: &'a dyn Fn(&Endpoint, OsString, &str, bool) -> Output,
}

/// The script of a session: the first prompt writes a file, commits it from the agent's
/// shell, then answers `Done.`; the second writes another file, then answers `Added.`.
pub fn script(env: &TestEnv, agent: &Agent) -> Value {
    let commit = "git add notes.txt && git commit -q -m 'Add notes'";
    let notes = env.repo().join("notes.txt");
    let second = env.repo().join("second.txt");
    let with = |mut step: Value, tokens: u64| {
        step["output_tokens"] = json!(tokens);
        step
    };
    json!({
        "PROMPT-ONE": [
            with((agent.write)(&notes, "notes by the agent\n"), 120),
            with((agent.shell)(commit), 40),
            {"text": "Done.", "output_tokens": 4}
        ],
        "PROMPT-TWO": [
            with((agent.write)(&second, "a second file\n"), 100),
            {"text": "Added.", "output_tokens": 3}
        ]
    })
}

/// Runs `agent` on `prompt`, which must succeed with `reply` on stdout.
pub fn turn(
    agent: &Agent,
    endpoint: &Endpoint,
    path: OsString,
    prompt: &str,
    resume: bool,
    reply: &str,
) -> Output {
    let out = (agent.run)(endpoint, path, prompt, resume);
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        reply,
        "{}",
        output_text(&out)
    );
    out
}

/// Our binary gone from `PATH` between two prompts (uninstalled, or a shell without it): every
/// hook of the second prompt fails, and `agent` still finishes its turn, exit 0, with the
/// model's answer.
pub fn our_binary_gone(env: &TestEnv, agent_arg: &str, agent: &Agent) {
    env.ok_primary_in(None, env.repo(), &["enable", "--agent", agent_arg]);
    let endpoint = Endpoint::start(env, &script(env, agent));
    turn(
        agent,
        &endpoint,
        path_with_bins(),
        FIRST_PROMPT,
        false,
        "Done.",
    );
    turn(
        agent,
        &endpoint,
        profile_path(),
        SECOND_PROMPT,
        true,
        "Added.",
    );
    assert!(env.repo().join("second.txt").is_file());
}
