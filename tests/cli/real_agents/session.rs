//! The scenario every real agent but Claude Code runs (Claude Code's, in `claude_code.rs`, came
//! first): two prompts of one session, the agent's own commit, the user's, and the checks on
//! their checkpoints; and the same session with our binary gone from `PATH`.

use std::ffi::OsString;
use std::path::Path;
use std::process::Output;

use serde_json::{json, Value};

use super::Endpoint;
use crate::commit_hooks::the_trailer;
use crate::env::{output_text, path_with_bins, profile_path, Store, TestEnv};

/// The first prompt of [`the_session`]: its turn writes `notes.txt` and commits it.
pub const FIRST_PROMPT: &str = "write the notes file and commit it PROMPT-ONE";
/// The second prompt: its turn writes `second.txt`.
pub const SECOND_PROMPT: &str = "now add a second file PROMPT-TWO";

/// An agent as [`the_session`] drives it.
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
    /// `PATH` in the user's shell that commits: our binaries, and the agent's own directory, as
    /// a user who runs the agent has it (OpenCode's session is exported again at a commit).
    pub user_path: OsString,
}

/// The script of [`the_session`]: the first prompt writes a file, commits it from the agent's
/// shell, then answers `Done.`; the second writes another file, then answers `Added.`.
pub fn script(env: &TestEnv, agent: &Agent) -> Value {
    script_committing(
        env,
        agent,
        "git add notes.txt && git commit -q -m 'Add notes'",
    )
}

/// [`script`] with the first prompt's commit made by `commit`.
fn script_committing(env: &TestEnv, agent: &Agent, commit: &str) -> Value {
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

/// The first prompt, run by `agent` against `endpoint`: its script writes `notes.txt` and the
/// agent commits it ("Add notes"). The agent's output and its commit.
pub fn first_turn(env: &TestEnv, agent: &Agent, endpoint: &Endpoint) -> (Output, String) {
    let out = turn(
        agent,
        endpoint,
        path_with_bins(),
        FIRST_PROMPT,
        false,
        "Done.",
    );
    let agents_commit = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    assert_eq!(env.git(&["log", "-1", "--format=%s"]).trim(), "Add notes");
    (out, agents_commit)
}

/// The first prompt of [`the_session`], run by the real `agent` after `enable --agent
/// <agent_arg>`: its turn writes a file and commits it from the agent's own shell. That commit's
/// checkpoint holds prompt 1, the agent, its file and `tokens` output tokens (`None`: no token
/// usage, the agent had not written its transcript yet). Returns the endpoint, the agent's
/// output and its commit.
pub fn the_agents_own_commit(
    env: &TestEnv,
    agent_arg: &str,
    agent: &Agent,
    tokens: Option<u64>,
) -> (Endpoint, Output, String) {
    env.ok_primary_in(None, env.repo(), &["enable", "--agent", agent_arg]);
    let endpoint = Endpoint::start(env, &script(env, agent));
    let (out, agents_commit) = first_turn(env, agent, &endpoint);
    let id = the_trailer(env, &agents_commit);
    assert_eq!(
        env.blob_text(Store::Refs, &id, "0/prompt.txt"),
        FIRST_PROMPT
    );
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["agent"], json!(agent.name), "{meta}");
    assert_eq!(meta["files_touched"], json!(["notes.txt"]), "{meta}");
    assert_eq!(
        meta["token_usage"].get("output_tokens"),
        tokens.map(|t| json!(t)).as_ref(),
        "{meta}"
    );
    (endpoint, out, agents_commit)
}

/// A whole session: [`the_agents_own_commit`], then a second prompt, resuming the session, that
/// writes another file, which the user commits: the user's commit's checkpoint holds prompt 2,
/// not prompt 1, and `tokens.1` output tokens. Neither the agent's output nor what it sent the
/// model carries anything of ours. `session import` then finds the session in the agent's own
/// store recorded already, and writes nothing.
pub fn the_session(env: &TestEnv, agent_arg: &str, agent: &Agent, tokens: (Option<u64>, u64)) {
    let (endpoint, first, _) = the_agents_own_commit(env, agent_arg, agent, tokens.0);
    let second = turn(
        agent,
        &endpoint,
        path_with_bins(),
        SECOND_PROMPT,
        true,
        "Added.",
    );
    assert!(env.repo().join("second.txt").is_file());
    // The user commits the agent's file at once: OpenCode ends its run before our hook of the
    // turn's end has read the session, so the commit reads it again itself.
    env.git(&["add", "second.txt"]);
    let out = env
        .git_hooked_command(None, env.repo(), &["commit", "-q", "-m", "Add second"])
        .env("PATH", &agent.user_path)
        .output()
        .expect("run git commit");
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    let users_commit = env.git(&["rev-parse", "HEAD"]).trim().to_owned();

    let next = the_trailer(env, &users_commit);
    assert_eq!(
        env.blob_text(Store::Refs, &next, "0/prompt.txt"),
        SECOND_PROMPT
    );
    let meta = env.json(Store::Refs, &next, "0/metadata.json");
    assert_eq!(meta["files_touched"], json!(["second.txt"]), "{meta}");
    assert_eq!(
        meta["token_usage"]["output_tokens"],
        json!(tokens.1),
        "{meta}"
    );
    nothing_of_ours(&endpoint, &[first, second]);
    recorded_in_its_store(env, agent_arg, agent);
}

/// The agent's own store holds the one session its hooks recorded: `session import` finds it
/// recorded already and writes nothing.
pub fn recorded_in_its_store(env: &TestEnv, agent_arg: &str, agent: &Agent) {
    let refs = || env.git(&["for-each-ref", "refs/entire/checkpoints/"]);
    let written = refs();
    let again = import(env, agent_arg, agent, &["--all"]);
    let states: Vec<&Value> = again["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["state"])
        .collect();
    assert_eq!(states, [&json!("recorded")], "{again}");
    assert_eq!(
        refs(),
        written,
        "importing what the hooks recorded writes nothing"
    );
}

/// Neither the agent's `outputs` nor what it sent `endpoint` carries a line of ours (the agents
/// print warnings of their own: Codex, one about `--dangerously-bypass-hook-trust`).
pub fn nothing_of_ours(endpoint: &Endpoint, outputs: &[Output]) {
    let requests = endpoint.requests();
    for ours in ["agent-hook", "entire: "] {
        assert!(!requests.contains(ours), "a request carries {ours:?}");
        for out in outputs {
            assert!(!output_text(out).contains(ours), "{}", output_text(out));
        }
    }
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

/// `session import --agent <agent_arg> --json <extra>` with the `PATH` of the user of `agent`,
/// which must succeed: its document.
fn import(env: &TestEnv, agent_arg: &str, agent: &Agent, extra: &[&str]) -> Value {
    let mut args = vec!["session", "import", "--agent", agent_arg, "--json"];
    args.extend(extra);
    let out = env
        .std_cmd(Store::Refs)
        .args(&args)
        .env("PATH", &agent.user_path)
        .output()
        .expect("run session import");
    assert_eq!(out.status.code(), Some(0), "{}", output_text(&out));
    serde_json::from_slice(&out.stdout).expect("session import --json")
}

/// The sessions that came before, on the store the real `agent` leaves: it runs the first
/// prompt of [`the_session`] in a repository whose checkpoints are not enabled, its `git commit`
/// printing the commit's summary line, and `session import --agent <agent_arg>` finds that
/// session in the agent's own store, lists it with its prompt and the commit, writes it as a
/// checkpoint linked from its side to that commit, with its file and the `tokens` output tokens
/// the endpoint reported (`None`: no token usage, the agent's transcript records none), and
/// writes nothing on a second import.
pub fn imported_from_its_store(env: &TestEnv, agent_arg: &str, agent: &Agent, tokens: Option<u64>) {
    let commit = "git add notes.txt && git commit -m 'Add notes'";
    let endpoint = Endpoint::start(env, &script_committing(env, agent, commit));
    let (_, agents_commit) = first_turn(env, agent, &endpoint);
    let refs = || env.git(&["for-each-ref", "refs/entire/checkpoints/"]);
    assert!(refs().is_empty(), "nothing recorded it as it ran");

    let import = |extra: &[&str]| import(env, agent_arg, agent, extra);
    let listed = import(&[]);
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 1, "{listed}");
    assert_eq!(sessions[0]["agent"], json!(agent_arg), "{listed}");
    assert_eq!(sessions[0]["state"], json!("new"), "{listed}");
    assert_eq!(sessions[0]["subject"], json!(FIRST_PROMPT), "{listed}");
    assert_eq!(sessions[0]["commits"], json!([agents_commit]), "{listed}");

    let done = import(&["--all"]);
    let id = done["sessions"][0]["checkpoint_id"]
        .as_str()
        .unwrap_or_else(|| panic!("{done}"))
        .to_owned();
    let root = env.json(Store::Refs, &id, "metadata.json");
    assert_eq!(
        root["linked_commits"],
        json!([{"sha": agents_commit}]),
        "{root}"
    );
    assert_eq!(root["imported"], json!(true), "{root}");
    assert_eq!(
        env.blob_text(Store::Refs, &id, "0/prompt.txt"),
        FIRST_PROMPT
    );
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["agent"], json!(agent.name), "{meta}");
    assert_eq!(meta["session_id"], sessions[0]["session_id"], "{meta}");
    assert_eq!(meta["files_touched"], json!(["notes.txt"]), "{meta}");
    assert_eq!(
        meta["token_usage"].get("output_tokens"),
        tokens.map(|t| json!(t)).as_ref(),
        "{meta}"
    );

    let written = refs();
    let again = import(&["--all"]);
    assert_eq!(again["sessions"][0]["state"], json!("recorded"), "{again}");
    assert_eq!(refs(), written, "a second import writes nothing");
}
