//! Every agent's transcripts: `blame` and `why` on commits whose checkpoints hold a session of
//! each agent the reference records (fixtures in `tests/fixtures/transcripts/`, small synthetic
//! ones in the shapes real transcripts have), a transcript whose format is not its `agent`
//! field's, and one in no known format.

use serde_json::Value;

use crate::env::{assert_code, parse_json, stderr, transcript_fixture, Store, TestEnv};

/// Each fixture: its file, the `agent` its session is labelled with, the checkpoint, the file
/// its transcript writes, the format blame must recognise, and the tool of the write.
const AGENTS: &[(&str, &str, &str, &str, &str, &str)] = &[
    (
        "gemini-cli.json",
        "Gemini CLI",
        "a00000000001",
        "gemini",
        "gemini-cli",
        "write_file",
    ),
    (
        "opencode.json",
        "OpenCode",
        "a00000000002",
        "opencode",
        "opencode",
        "apply_patch",
    ),
    // Labelled as real data labels it: Cursor's transcript in a "Claude Code" session.
    (
        "cursor.jsonl",
        "Claude Code",
        "a00000000003",
        "cursor",
        "cursor",
        "Write",
    ),
    (
        "copilot-cli.jsonl",
        "Copilot CLI",
        "a00000000004",
        "copilot",
        "copilot-cli",
        "create",
    ),
    (
        "kiro.json",
        "Kiro",
        "a00000000005",
        "kiro",
        "kiro",
        "fs_write",
    ),
    (
        "droid.jsonl",
        "Factory AI Droid",
        "a00000000006",
        "droid",
        "droid",
        "Create",
    ),
    ("pi.jsonl", "Pi", "a00000000007", "pi", "pi", "write"),
    (
        "cline.json",
        "Cline",
        "a00000000008",
        "cline",
        "cline",
        "editor",
    ),
    (
        "amp.jsonl",
        "Amp",
        "a00000000009",
        "amp",
        "amp",
        "create_file",
    ),
];

/// Writes checkpoint `id` with one session of the transcript `bytes` under the git-branch store.
fn checkpoint(env: &TestEnv, id: &str, bytes: &[u8], agent: &str) {
    let text = String::from_utf8(bytes.to_vec()).unwrap();
    crate::blame::checkpoint(env, env.repo(), Store::Branch, id, &text, agent);
}

/// Commits `files` (path, text) with a trailer linking `id`.
fn commit(env: &TestEnv, files: &[(&str, String)], id: &str) {
    for (path, text) in files {
        env.write_file(path, text.as_bytes());
        env.git(&["add", path]);
    }
    env.git(&[
        "commit",
        "-q",
        "-m",
        &format!("agent work\n\nEntire-Checkpoint: {id}"),
    ]);
}

fn labels(json: &Value) -> Vec<&str> {
    json["lines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["attribution"].as_str().unwrap())
        .collect()
}

#[test]
fn blame_attributes_the_lines_every_agents_transcript_shows_written() {
    let env = TestEnv::new();
    for (name, agent, id, short, _, _) in AGENTS {
        checkpoint(
            &env,
            id,
            &std::fs::read(transcript_fixture(name)).unwrap(),
            agent,
        );
        let written = format!("notes written by {short}\nsecond line from {short}\n");
        let mut files = vec![(
            format!("agents/{short}.txt"),
            format!("{written}edited by hand\n"),
        )];
        if *short == "kiro" {
            // Kiro kept only the path of this write: listed as written, no line attributed.
            files.push(("agents/kiro-paths.txt".to_owned(), "from kiro\n".to_owned()));
        }
        let files: Vec<(&str, String)> =
            files.iter().map(|(p, t)| (p.as_str(), t.clone())).collect();
        commit(&env, &files, id);
    }
    for (_, agent, id, short, format, tool) in AGENTS {
        let file = format!("agents/{short}.txt");
        let out = env.run(Store::Branch, &["blame", &file, "--json", "--no-fetch"]);
        let err = assert_code(&out, 0, &format!("blame of {agent}'s file"));
        assert!(err.is_empty(), "{agent}: no warning: {err}");
        let json = parse_json(&out.stdout);
        crate::schemas::assert_valid("blame.json", &format!("blame of {agent}'s file"), &json);
        assert_eq!(
            labels(&json),
            ["agent", "agent", "commit-linked"],
            "{agent}: {json:#}"
        );
        assert_eq!(json["lines"][0]["write"]["tool"], *tool, "{agent}");
        assert_eq!(json["lines"][0]["checkpoints"][0], *id);
        let session = &json["checkpoints"][0]["sessions"][0];
        assert_eq!(session["format"], *format, "{agent}: {session}");
        assert_eq!(session["agent"], *agent);
        assert_eq!(session["transcript"], "read");

        // why: the prompt before the write, whatever the format.
        let why = env.ok_json(
            Store::Branch,
            &["why", &format!("{file}:2"), "--json", "--no-fetch"],
        );
        crate::schemas::assert_valid("why.json", &format!("why of {agent}'s line"), &why);
        assert_eq!(
            why["agent_write"]["prompt"]["text"],
            format!("write the {short} notes file"),
            "{agent}: {why:#}"
        );
    }
    let kiro = env.ok_json(
        Store::Branch,
        &["blame", "agents/kiro-paths.txt", "--json", "--no-fetch"],
    );
    assert_eq!(labels(&kiro), ["commit-linked"]);

    // show: each session's format, prompts and the files it wrote, for every format.
    for (_, _, id, short, format, _) in AGENTS {
        let out = env.ok(Store::Branch, &["show", id, "--no-fetch"]);
        for want in [
            format!("  format   {format}\n"),
            format!("  asked    write the {short} notes file\n"),
        ] {
            assert!(out.contains(&want), "{want:?} in:\n{out}");
        }
        let wrote = out
            .lines()
            .find(|l| l.starts_with("  wrote    "))
            .unwrap_or("");
        assert!(
            wrote.ends_with(&format!("agents/{short}.txt")) || *short == "kiro",
            "{out}"
        );
    }
    let out = env.ok(Store::Branch, &["show", "a00000000005", "--no-fetch"]);
    assert!(
        out.contains("  wrote    agents/kiro.txt, agents/kiro-paths.txt\n"),
        "{out}"
    );
}

#[test]
fn a_transcript_in_no_known_format_is_one_summary_line_and_the_lines_commit_linked() {
    let env = TestEnv::new();
    let id = "b00000000001";
    let other = "b00000000002";
    checkpoint(&env, id, b"just some text\nnot json\n", "Claude Code");
    checkpoint(&env, other, b"{\n  \"kind\": \"other\"\n}\n", "Someone");
    commit(&env, &[("a.txt", "one line\ntwo lines\n".to_owned())], id);
    commit(
        &env,
        &[("a.txt", "one line\ntwo lines\nthree\n".to_owned())],
        other,
    );
    let refs = env.refs_snapshot();
    let out = env.run(Store::Branch, &["blame", "a.txt", "--json", "--no-fetch"]);
    let err = assert_code(&out, 0, "blame with transcripts of no known format");
    assert_eq!(err.lines().count(), 1, "one summary line: {err}");
    for what in [
        "2 transcript(s) in no format whose writes blame reads",
        &format!("checkpoint {id} session 0 0/full.jsonl (not JSON)"),
        &format!("checkpoint {other} session 0 0/full.jsonl (JSON of no known agent's format)"),
    ] {
        assert!(err.contains(what), "{what}: {err}");
    }
    let json = parse_json(&out.stdout);
    assert_eq!(labels(&json), ["commit-linked"; 3]);
    assert_eq!(
        json["checkpoints"][0]["sessions"][0]["transcript"],
        "not_jsonl"
    );
    assert_eq!(
        json["checkpoints"][1]["sessions"][0]["transcript"],
        "unknown_format"
    );
    // The human form says it once too.
    let human = env.run(Store::Branch, &["blame", "a.txt", "--no-fetch"]);
    assert_eq!(stderr(&human).lines().count(), 1, "{}", stderr(&human));
    let shown = env.run(Store::Branch, &["show", id, "--no-fetch"]);
    assert_code(&shown, 0, "show of a transcript in no known format");
    assert_eq!(env.refs_snapshot(), refs, "nothing written");
}
