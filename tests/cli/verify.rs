//! `verify` for CI on real repositories: a fresh clone whose commits link checkpoints the
//! remote holds (fetched in one batch), a commit linking a checkpoint nobody can fetch, and
//! `--require` on a commit carrying lines a session wrote while linking no checkpoint.

use serde_json::{json, Value};

use crate::blame::{checkpoint, commit, remote_and_clone, AGENT_VERSION, CLAUDE};
use crate::env::{assert_code, network_calls, parse_json, stdout, Store, TestEnv};
use crate::fixtures::HEX_ID;

/// A valid checkpoint ID that no store here or on the remote holds.
const NOWHERE: &str = "0badc0ffee42";

#[test]
fn verify_passes_when_the_remote_holds_every_linked_checkpoint_and_names_each_commit_that_links_one_nobody_can_fetch(
) {
    for store in Store::ALL {
        let env = TestEnv::new();
        let (_, clone) = remote_and_clone(&env, store);
        let out = env
            .cmd_as(store)
            .current_dir(&clone)
            .env("ENTIRE_LOG", "debug")
            .args(["verify", "main~3..main", "--json"])
            .output()
            .unwrap();
        let err = assert_code(&out, 0, "verify in a fresh clone");
        let json = parse_json(&out.stdout);
        assert_eq!(json["ok"], true, "{json:#}");
        assert_eq!(json["commit_count"], 3);
        assert_eq!(json["linked_commit_count"], 2);
        assert_eq!(json["failures"], json!([]));
        // Whether they exist needs no transcript: none is read.
        assert_eq!(json["checkpoints"][0]["status"], "read");
        assert_eq!(json["checkpoints"][0]["sessions"], json!([]));
        // One listing of the remote's checkpoints, one fetch of those it has.
        assert_eq!(network_calls(&err), 2, "{store:?}:\n{err}");

        // A commit naming a checkpoint that was never pushed, nor written.
        env.git_in(
            &clone,
            &[
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                &format!("lost\n\nEntire-Checkpoint: {NOWHERE}"),
            ],
        );
        let lost = env.git_in(&clone, &["rev-parse", "HEAD"]).trim().to_owned();
        let out = env.run_in(store, &clone, &["verify", "main~4..main"]);
        let err = assert_code(&out, 1, "verify with a lost checkpoint");
        let text = stdout(&out);
        assert!(text.contains(&format!("{} lost", &lost[..12])), "{text}");
        assert!(
            text.contains(&format!(
                "checkpoint {NOWHERE} is held neither here nor on the remote"
            )),
            "{text}"
        );
        assert!(err.contains("1 of 4 commit(s) fail verification"), "{err}");
        let out = env.run_in(store, &clone, &["verify", "main~4..main", "--json"]);
        assert_code(&out, 1, "verify --json with a lost checkpoint");
        let json = parse_json(&out.stdout);
        assert_eq!(json["ok"], false);
        assert_eq!(
            json["failures"],
            json!([{"commit": lost, "subject": "lost", "problems": [
                {"problem": "not_found", "checkpoint_id": NOWHERE}
            ]}])
        );
    }
}

#[test]
fn verify_require_fails_a_commit_carrying_a_sessions_lines_without_linking_it() {
    let env = TestEnv::new();
    // The agent's lines are committed without a trailer (its hooks did not run), and its
    // session is linked by the next commit.
    checkpoint(&env, env.repo(), Store::Refs, HEX_ID, CLAUDE, "Claude Code");
    commit(&env, AGENT_VERSION, "unlinked");
    let unlinked = env.git(&["rev-parse", "HEAD"]).trim().to_owned();
    env.write_file("notes.txt", b"a note\n");
    env.git(&["add", "notes.txt"]);
    env.git(&[
        "commit",
        "-q",
        "-m",
        &format!("notes\n\nEntire-Checkpoint: {HEX_ID}"),
    ]);
    assert_eq!(
        env.git(&[
            "for-each-ref",
            "--format=%(refname)",
            "refs/entire/checkpoints/"
        ])
        .lines()
        .count(),
        1
    );

    let json = env.ok_json(Store::Refs, &["verify", "main~2..main", "--json"]);
    assert_eq!(json["ok"], true, "without --require: {json:#}");
    let out = env.run(
        Store::Refs,
        &["verify", "main~2..main", "--require", "--json"],
    );
    assert_code(&out, 1, "verify --require");
    let json: Value = parse_json(&out.stdout);
    assert_eq!(json["require"], true);
    // The three lines of the Write that are evidence (blame's rule).
    assert_eq!(
        json["failures"],
        json!([{"commit": unlinked, "subject": "unlinked", "problems": [
            {"problem": "unlinked", "lines": 3, "written_in": [HEX_ID]}
        ]}])
    );
    // A person's commit of other lines passes.
    let out = env.run(Store::Refs, &["verify", "main~1..main", "--require"]);
    assert_code(&out, 0, "verify --require of the linked commit alone");
    assert!(
        stdout(&out).starts_with("ok: 1 commit(s), 1 linking checkpoints"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn verify_fails_a_trailer_that_names_no_checkpoint_and_refuses_a_bad_range() {
    let env = TestEnv::new();
    env.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "typo\n\nEntire-Checkpoint: not-an-id",
    ]);
    let out = env.run(Store::Refs, &["verify", "main~1..main", "--json"]);
    assert_code(&out, 1, "verify of a malformed trailer");
    let json = parse_json(&out.stdout);
    assert_eq!(
        json["failures"][0]["problems"],
        json!([{"problem": "malformed_trailer", "value": "not-an-id"}]),
        "{json:#}"
    );
    let out = env.run(Store::Refs, &["verify", "--no-such-option"]);
    assert_code(&out, 2, "an unknown option");
    let out = env.run(Store::Refs, &["verify", "nowhere..main"]);
    assert_code(&out, 2, "a range git rejects");
    assert!(stdout(&out).is_empty());
}
