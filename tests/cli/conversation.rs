//! `show --transcript` on a terminal reads like a conversation, for every agent's format (the
//! fixtures of `tests/fixtures/transcripts/`, with entries of no known shape added): each
//! prompt, the agent's replies, each tool call with the file it wrote, and every entry of no
//! known shape shown raw. Into a pipe, with `--raw` and with `--json` the stored bytes go out
//! exactly (compared with `git cat-file`).

use serde_json::Value;

use crate::env::{on_terminal, transcript_fixture, Store, TestEnv};

/// Each fixture: its file, its prompt, a reply, and the file a tool call wrote.
const AGENTS: &[(&str, &str, &str, &str)] = &[
    (
        "claude-code.jsonl",
        "write the claude notes file",
        "Done.",
        "agents/claude.txt",
    ),
    (
        "codex.jsonl",
        "write the codex notes file",
        "Wrote agents/codex.txt.",
        "agents/codex.txt",
    ),
    (
        "copilot-cli.jsonl",
        "write the copilot notes file",
        "Created agents/copilot.txt.",
        "agents/copilot.txt",
    ),
    (
        "cursor.jsonl",
        "write the cursor notes file",
        "Creating the notes file.",
        "agents/cursor.txt",
    ),
    (
        "droid.jsonl",
        "write the droid notes file",
        "Creating it.",
        "agents/droid.txt",
    ),
    (
        "gemini-cli.json",
        "write the gemini notes file",
        "I will create `agents/gemini.txt`.",
        "agents/gemini.txt",
    ),
    (
        "kiro.json",
        "write the kiro notes file",
        "I will write it.",
        "agents/kiro.txt",
    ),
    (
        "opencode.json",
        "write the opencode notes file",
        "Wrote the opencode notes.",
        "agents/opencode.txt",
    ),
    (
        "pi.jsonl",
        "write the pi notes file",
        "Wrote agents/pi.txt.",
        "agents/pi.txt",
    ),
];

/// The fixture `name` with entries of no known shape added: a JSON line and a line that is not
/// JSON at the end of a JSONL transcript, a message (or turn) of no known shape at the end of a
/// document. Each carries a marker (`kept-1`, ...) to look for.
fn with_unknown_entries(name: &str) -> Vec<u8> {
    let bytes = std::fs::read(transcript_fixture(name)).unwrap();
    if name.ends_with(".jsonl") {
        let mut out = bytes;
        out.extend_from_slice(
            b"{\"type\":\"from_the_future\",\"seen\":\"kept-1\"}\nnot json: kept-2\n",
        );
        return out;
    }
    let mut doc: Value = serde_json::from_slice(&bytes).unwrap();
    let (list, unknown) = match name {
        "kiro.json" => ("history", serde_json::json!({"from_the_future": "kept-1"})),
        "opencode.json" => (
            "messages",
            serde_json::json!({"info": {"role": "narrator"}, "parts": [], "seen": "kept-1"}),
        ),
        _ => (
            "messages",
            serde_json::json!({"type": "from_the_future", "content": "kept-1"}),
        ),
    };
    doc[list].as_array_mut().unwrap().push(unknown);
    serde_json::to_vec_pretty(&doc).unwrap()
}

/// Writes checkpoint `id` with one session of `transcript` (git-refs store).
fn write(env: &TestEnv, id: &str, transcript: &[u8]) {
    let file = env.input_file(&format!("{id}.transcript"), transcript);
    env.write(Store::Refs, "s1").id(id).transcript(&file).ok();
}

#[test]
fn a_transcript_reads_as_a_conversation_on_a_terminal_for_every_agent() {
    let env = TestEnv::new();
    for (n, (name, prompt, reply, file)) in AGENTS.iter().enumerate() {
        let id = format!("c0000000000{n}");
        let transcript = with_unknown_entries(name);
        write(&env, &id, &transcript);
        let shown = on_terminal(&env, &format!("--no-pager show {id} --transcript"), &[]);
        for (what, want) in [
            ("the prompt", *prompt),
            ("a reply", *reply),
            ("the file a tool call wrote", *file),
            ("an entry of no known shape", "kept-1"),
        ] {
            assert!(
                shown.contains(want),
                "{name}: {what} ({want:?}) not shown:\n{shown}"
            );
        }
        if name.ends_with(".jsonl") {
            assert!(shown.contains("not json: kept-2"), "{name}:\n{shown}");
        }
        assert!(
            !shown.contains("\"type\":\"user\"") && !shown.contains("\"role\":\"user\""),
            "{name}: the known entries are not shown as JSON:\n{shown}"
        );
        // The stored bytes: into a pipe, with --json, and with --raw on the terminal (where the
        // terminal writes each newline as CR LF).
        let stored = env.git_bytes(&[
            "cat-file",
            "-p",
            &env.spec(Store::Refs, &id, "0/full.jsonl"),
        ]);
        assert_eq!(stored, transcript, "{name}: stored as given");
        for args in [
            vec!["show", &id, "--transcript"],
            vec!["show", &id, "--transcript", "--json"],
        ] {
            let piped = env.cmd_as(Store::Refs).args(&args).output().unwrap();
            assert!(piped.status.success(), "{name} {args:?}");
            assert!(
                piped.stdout == stored,
                "{name} {args:?}: not the stored bytes"
            );
        }
        for extra in ["--raw", "--json"] {
            let raw = on_terminal(
                &env,
                &format!("--no-pager show {id} --transcript {extra}"),
                &[],
            );
            assert_eq!(
                raw.replace("\r\n", "\n").as_bytes(),
                stored,
                "{name} {extra} on a terminal"
            );
        }
    }
}

/// A tool call that replaced text shows a short diff: the lines it replaced (`-`), then those it
/// wrote (`+`), each list elided after ten lines; Codex's patches show their own `-` and `+`.
#[test]
fn an_edit_shows_what_it_replaced_and_what_it_wrote() {
    let env = TestEnv::new();
    let old: Vec<String> = (1..=12).map(|n| format!("old line {n}")).collect();
    let claude = serde_json::json!({
        "type": "assistant",
        "message": {"role": "assistant", "content": [{
            "type": "tool_use", "id": "t", "name": "Edit",
            "input": {"file_path": "src/a.rs", "old_string": old.join("\n"), "new_string": "new line"}
        }]}
    });
    let transcript = format!(
        "{}\n{claude}\n",
        r#"{"type":"user","message":{"role":"user","content":"tidy a.rs"}}"#
    );
    write(&env, "e00000000001", transcript.as_bytes());
    let codex = concat!(
        r#"{"type":"event_msg","payload":{"type":"user_message","message":"rename it"}}"#,
        "\n",
        r#"{"type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Update File: b.go\n@@\n-var old = 1\n+var renamed = 1\n*** End Patch\n"}}"#,
        "\n",
    );
    write(&env, "e00000000002", codex.as_bytes());
    let shown = on_terminal(&env, "--no-pager show e00000000001 --transcript", &[]);
    let shown = shown.replace("\r\n", "\n");
    assert!(
        shown.contains("  * Edit src/a.rs\n    - old line 1\n")
            && shown.contains("    - old line 10\n    - ... 2 more lines\n    + new line\n")
            && !shown.contains("old line 11"),
        "{shown}"
    );
    let shown = on_terminal(&env, "--no-pager show e00000000002 --transcript", &[]);
    let shown = shown.replace("\r\n", "\n");
    assert!(
        shown.contains("  * apply_patch b.go\n    - var old = 1\n    + var renamed = 1\n"),
        "{shown}"
    );
}

/// A stored transcript is untrusted: a line with an escape sequence reaches a terminal written
/// out with `--json` (and in the conversation), as it was stored only with `--raw` (asked for)
/// or into a pipe.
#[test]
fn json_to_a_terminal_writes_control_characters_out() {
    let env = TestEnv::new();
    let transcript = b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n\x1b]0;owned\x07not json\n";
    write(&env, "e00000000003", transcript);
    for (extra, escaped) in [("--json", true), ("", true), ("--raw", false)] {
        let shown = on_terminal(
            &env,
            &format!("--no-pager show e00000000003 --transcript {extra}"),
            &[],
        );
        // (Our own color codes are ESC sequences too: look for the stored one.)
        assert_eq!(
            shown.contains("\x1b]0;owned"),
            !escaped,
            "{extra:?}: the stored ESC reaches the terminal only with --raw:\n{shown:?}"
        );
        if escaped {
            assert!(shown.contains("\\e]0;owned"), "{extra:?}:\n{shown:?}");
        }
    }
    let piped = env
        .cmd_as(Store::Refs)
        .args(["show", "e00000000003", "--transcript", "--json"])
        .output()
        .unwrap();
    assert_eq!(piped.stdout, transcript, "into a pipe: the stored bytes");
}

/// Codex logs each prompt twice, as the `user_message` event of what the user typed and as a
/// `user` message of the model's input, and adds input messages of its own, which have no event:
/// the repository's instructions (`# AGENTS.md instructions for ...`), the environment, subagent
/// notifications, and a prompt decorated with the files the user mentioned. (In the corpus every
/// user message with an event is one of the user's prompts, and none of the others is.) The
/// prompts are what the user typed, each once (blame's and why's extraction reads the same:
/// `agents::codex`'s unit tests).
#[test]
fn codex_prompts_are_what_the_user_typed() {
    let codex = concat!(
        r##"{"timestamp":"2026-04-20T07:18:30.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# AGENTS.md instructions for /home/dev/proj\n\n<INSTRUCTIONS>\nkeep it short\n</INSTRUCTIONS>"}]}}"##,
        "\n",
        r#"{"timestamp":"2026-04-20T07:18:30.100Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/home/dev/proj</cwd>\n</environment_context>"}]}}"#,
        "\n",
        r##"{"timestamp":"2026-04-20T07:18:31.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"# Files mentioned by the user:\n\n## logo.png: /home/dev/logo.png\n\n## My request for Codex:\nput the logo in the notes"}]}}"##,
        "\n",
        r#"{"timestamp":"2026-04-20T07:18:31.000Z","type":"event_msg","payload":{"type":"user_message","message":"put the logo in the notes","images":[]}}"#,
        "\n",
        r#"{"timestamp":"2026-04-20T07:18:41.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","call_id":"call_1","input":"*** Begin Patch\n*** Add File: notes.md\n+![logo](logo.png)\n*** End Patch\n"}}"#,
        "\n",
        r#"{"timestamp":"2026-04-20T07:18:46.000Z","type":"response_item","payload":{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Added the logo."}]}}"#,
        "\n",
    );
    let shown = view_of(
        codex,
        &[
            "AGENTS.md",
            "keep it short",
            "environment_context",
            "My request for Codex",
        ],
    );
    assert_eq!(
        shown.matches("put the logo in the notes").count(),
        1,
        "the prompt, once:\n{shown}"
    );
}

/// Codex's command output starts with its own header (`Command:`, `Chunk ID:`, `Wall time:`,
/// `Process exited with code N`, `Original token count:`, `Output:`), and `apply_patch`'s is a
/// JSON document: the view shows the output itself, so that its first lines are the command's,
/// and an exit code other than 0 in a word.
#[test]
fn codex_command_output_shows_the_output_not_its_header() {
    let codex = concat!(
        r#"{"type":"event_msg","payload":{"type":"user_message","message":"run the tests"}}"#,
        "\n",
        r#"{"type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"go test ./...\"}","call_id":"c1"}}"#,
        "\n",
        r#"{"type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Command: /bin/zsh -lc 'go test ./...'\nChunk ID: 8c7cc0\nWall time: 0.5000 seconds\nProcess exited with code 1\nOriginal token count: 10\nOutput:\nFAIL example.com/x 0.01s\n"}}"#,
        "\n",
        r#"{"type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"c2","output":"{\"output\":\"Success. Updated the following files:\\nA notes.md\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.0}}"}}"#,
        "\n",
    );
    let shown = view_of(
        codex,
        &[
            "Chunk ID",
            "Wall time",
            "Original token count",
            "\"metadata\"",
        ],
    );
    for want in [
        "FAIL example.com/x 0.01s",
        "exit code 1",
        "Success. Updated the following files:",
    ] {
        assert!(shown.contains(want), "{want:?} not shown:\n{shown}");
    }
}

/// The conversation view of a checkpoint of `transcript`, on a terminal; asserts that none of
/// `hidden` is shown.
fn view_of(transcript: &str, hidden: &[&str]) -> String {
    let env = TestEnv::new();
    write(&env, "e00000000009", transcript.as_bytes());
    let shown = on_terminal(&env, "--no-pager show e00000000009 --transcript", &[]);
    for text in hidden {
        assert!(!shown.contains(text), "{text:?} is shown:\n{shown}");
    }
    shown
}
