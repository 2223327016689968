//! `list`: both backends, newest first, de-duplicated, foreign refs ignored.

use serde_json::{json, Value};

use crate::env::{
    assert_code, checkpoint_ids, checkpoint_ref, parse_json, Store, TestEnv, REFS_PREFIX,
};
use crate::fixtures::{
    checkpoint_node, hand_made_ref, root_metadata_json, HEX_ID, HEX_ID_2, TRANSCRIPT, ULID_ID,
};

both_stores! {
    newest_first_with_fields => newest_first_with_fields;
    empty_repository_lists_nothing => empty_repository_lists_nothing;
    limit_keeps_the_newest => limit_keeps_the_newest;
    human_output_lists_ids => human_output_lists_ids;
}

fn write_at(env: &TestEnv, store: Store, id: &str, session: &str, created_at: &str) {
    write_with(env, store, id, session, created_at, &[]);
}

/// [`write_at`] with `extra` arguments.
fn write_with(
    env: &TestEnv,
    store: Store,
    id: &str,
    session: &str,
    created_at: &str,
    extra: &[&str],
) {
    env.write(store, session)
        .id(id)
        .prompt("do the thing")
        .created_at(created_at)
        .args(extra)
        .ok();
}

fn list(env: &TestEnv, store: Store, extra: &[&str]) -> Vec<Value> {
    let mut args = vec!["list", "--json"];
    args.extend_from_slice(extra);
    let v = env.ok_json(store, &args);
    v.as_array()
        .unwrap_or_else(|| panic!("list --json is an array: {v}"))
        .clone()
}

fn newest_first_with_fields(store: Store) {
    let env = TestEnv::new();
    // Written newest-first in time order reversed, so write order alone cannot give the answer.
    write_at(&env, store, HEX_ID, "sess-1", "2026-05-01T10:00:00Z");
    write_at(&env, store, HEX_ID, "sess-2", "2026-05-01T10:00:00Z");
    write_at(&env, store, HEX_ID_2, "sess-3", "2026-04-01T10:00:00Z");
    write_at(
        &env,
        store,
        "c0c0c0c0c0c0",
        "sess-4",
        "2026-06-01T10:00:00Z",
    );
    let entries = list(&env, store, &[]);
    assert_eq!(checkpoint_ids(&entries), ["c0c0c0c0c0c0", HEX_ID, HEX_ID_2]);
    let e = &entries[1];
    for key in [
        "checkpoint_id",
        "store",
        "created_at",
        "session_count",
        "session_ids",
        "remote_only",
    ] {
        assert!(e.get(key).is_some(), "list entry lacks {key:?}: {e}");
    }
    assert_eq!(e["store"], json!(store.name()));
    assert!(
        e["created_at"]
            .as_str()
            .expect("created_at string")
            .starts_with("2026-05-01T10:00:00"),
        "created_at: {}",
        e["created_at"]
    );
    assert_eq!(e["session_count"], json!(2));
    assert_eq!(e["session_ids"], json!(["sess-1", "sess-2"]));
    assert_eq!(e["remote_only"], json!(false));
    assert_eq!(entries[2]["session_count"], json!(1));
    assert_eq!(entries[2]["session_ids"], json!(["sess-3"]));
}

fn empty_repository_lists_nothing(store: Store) {
    let env = TestEnv::new();
    assert_eq!(list(&env, store, &[]), Vec::<Value>::new());
}

fn limit_keeps_the_newest(store: Store) {
    let env = TestEnv::new();
    write_at(&env, store, HEX_ID, "sess-1", "2026-05-01T10:00:00Z");
    write_at(&env, store, HEX_ID_2, "sess-1", "2026-07-01T10:00:00Z");
    write_at(
        &env,
        store,
        "c0c0c0c0c0c0",
        "sess-1",
        "2026-06-01T10:00:00Z",
    );
    assert_eq!(
        checkpoint_ids(&list(&env, store, &["--limit", "1"])),
        [HEX_ID_2]
    );
    assert_eq!(
        checkpoint_ids(&list(&env, store, &["--limit", "2"])),
        [HEX_ID_2, "c0c0c0c0c0c0"]
    );
}

fn human_output_lists_ids(store: Store) {
    let env = TestEnv::new();
    write_at(&env, store, HEX_ID, "sess-1", "2026-05-01T10:00:00Z");
    write_at(&env, store, HEX_ID_2, "sess-2", "2026-06-01T10:00:00Z");
    let out = env.ok(store, &["list"]);
    let first = out.find(HEX_ID_2).expect("newer ID listed");
    let second = out.find(HEX_ID).expect("older ID listed");
    assert!(first < second, "newest first:\n{out}");
}

#[test]
fn unions_both_stores_and_dedups() {
    let env = TestEnv::new();
    write_at(
        &env,
        Store::Refs,
        ULID_ID,
        "sess-u",
        "2026-06-17T19:54:41.994Z",
    );
    write_at(
        &env,
        Store::Branch,
        HEX_ID_2,
        "sess-b",
        "2026-04-01T10:00:00Z",
    );
    // The same hex ID in both backends (e.g. during a rollout with a mirror).
    write_at(&env, Store::Refs, HEX_ID, "sess-h", "2026-05-01T10:00:00Z");
    write_at(
        &env,
        Store::Branch,
        HEX_ID,
        "sess-h",
        "2026-05-01T10:00:00Z",
    );
    assert!(env.rev(&checkpoint_ref(HEX_ID)).is_some());
    assert!(env.exists(Store::Branch, HEX_ID, "metadata.json"));

    for primary in Store::ALL {
        let entries = list(&env, primary, &[]);
        assert_eq!(
            checkpoint_ids(&entries),
            [ULID_ID, HEX_ID, HEX_ID_2],
            "under primary {}",
            primary.name()
        );
        assert_eq!(entries[0]["store"], json!("git-refs"));
        assert_eq!(entries[2]["store"], json!("git-branch"));
        assert_eq!(entries[1]["session_ids"], json!(["sess-h"]));
    }
}

#[test]
fn foreign_refs_are_ignored_and_never_touched() {
    let env = TestEnv::new();
    let main = env.rev("refs/heads/main").unwrap();
    // A valid-looking checkpoint commit, but under the wrong shard `a1` (the shard is `f6`).
    let node = checkpoint_node(
        HEX_ID,
        "hand-sess",
        root_metadata_json(HEX_ID, "").as_bytes(),
        TRANSCRIPT,
    );
    let wrong_shard = format!("{REFS_PREFIX}a1/{HEX_ID}");
    let cp = hand_made_ref(&env, &wrong_shard, HEX_ID, &node);
    let foreign = [
        (format!("{REFS_PREFIX}v1/main"), main.clone()),
        (format!("{REFS_PREFIX}v1/full"), cp.clone()),
        (format!("{REFS_PREFIX}v2/full/0000000000001"), main.clone()),
        (wrong_shard.clone(), cp.clone()),
    ];
    for (name, target) in &foreign {
        env.git(&["update-ref", name, target]);
    }

    for store in Store::ALL {
        assert_eq!(
            list(&env, store, &[]),
            Vec::<Value>::new(),
            "foreign refs listed"
        );
    }
    let out = env.run(Store::Refs, &["show", HEX_ID, "--json", "--no-fetch"]);
    assert_code(&out, 3, "a wrong-shard ref is not the checkpoint");

    // A real write creates the canonical ref from scratch, not on top of the foreign one.
    crate::fixtures::write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let tip = env.tip(Store::Refs, HEX_ID);
    assert!(
        env.parents(&tip).is_empty(),
        "orphan: not parented on a foreign ref"
    );
    let entries = list(&env, Store::Refs, &[]);
    assert_eq!(checkpoint_ids(&entries), [HEX_ID]);
    assert_eq!(entries[0]["session_ids"], json!(["sess-1"]));

    for (name, target) in &foreign {
        assert_eq!(
            env.rev(name).as_deref(),
            Some(target.as_str()),
            "foreign ref {name} changed or deleted"
        );
    }
}

/// Replicates checkpoint `template` as `copies` new git-refs checkpoints through one
/// `git fast-import` stream (fast enough for hundreds): every file with the template's ID
/// replaced by the copy's and the session time `marker` by `time(i)`, appended to `stream`.
pub fn replicate(
    env: &TestEnv,
    template: &str,
    marker: &str,
    ids: &[String],
    time: impl Fn(usize) -> String,
    stream: &mut Vec<u8>,
) {
    let tip = checkpoint_ref(template);
    let files = env.git(&["ls-tree", "-r", "--name-only", &tip]);
    let contents: Vec<(&str, Vec<u8>)> = files
        .lines()
        .map(|path| {
            (
                path,
                env.git_bytes(&["cat-file", "blob", &format!("{tip}:{path}")]),
            )
        })
        .collect();
    let replace = |bytes: &[u8], from: &str, to: &str| -> Vec<u8> {
        let mut out = Vec::with_capacity(bytes.len());
        let mut rest = bytes;
        while let Some(at) = rest.windows(from.len()).position(|w| w == from.as_bytes()) {
            out.extend_from_slice(&rest[..at]);
            out.extend_from_slice(to.as_bytes());
            rest = &rest[at + from.len()..];
        }
        out.extend_from_slice(rest);
        out
    };
    for (i, id) in ids.iter().enumerate() {
        let msg = format!("Checkpoint: {id}\n");
        stream.extend_from_slice(
            format!(
                "commit {}\ncommitter T <t@example.invalid> 1700000000 +0000\ndata {}\n{msg}",
                checkpoint_ref(id),
                msg.len()
            )
            .as_bytes(),
        );
        for (path, bytes) in &contents {
            let data = replace(&replace(bytes, template, id), marker, &time(i));
            stream.extend_from_slice(
                format!("M 100644 inline {path}\ndata {}\n", data.len()).as_bytes(),
            );
            stream.extend_from_slice(&data);
            stream.push(b'\n');
        }
    }
}

/// Checkpoints for listings of many: `one` (one session, Claude Code) and `two` (two sessions,
/// Codex then Gemini CLI) written by `write`, `per_shape` copies of each made by [`replicate`]
/// with session times that go back and forth across the ID order (two copies share each time, so
/// the ID breaks ties), and one copy of `two` replaced by a commit whose root `metadata.json` is
/// not JSON. Returns every readable ID (the two written first) and the unreadable one.
pub fn many_checkpoints(env: &TestEnv, per_shape: usize) -> (Vec<String>, String) {
    let store = Store::Refs;
    let marker = "2026-05-01T10:00:00Z";
    let one = "01KVBJCWYA4YW6J5M9GP000001";
    let two = "01KVBJCWYA4YW6J5M9GP000002";
    for (id, session, agent) in [
        (one, "sess-a", "Claude Code"),
        (two, "sess-b", "Codex"),
        (two, "sess-c", "Gemini CLI"),
    ] {
        write_with(env, store, id, session, marker, &["--agent", agent]);
    }
    let time = |i: usize| {
        let t = (i / 2) * 7919 % 600;
        format!(
            "2026-05-01T{:02}:{:02}:{:02}Z",
            t / 3600,
            t / 60 % 60,
            t % 60
        )
    };
    let make = |n: usize, from: usize| -> Vec<String> {
        (from..from + n)
            .map(|i| format!("01KVBJCWYA4YW6J5M9GQ{i:06}"))
            .collect()
    };
    let (ones, twos) = (make(per_shape, 0), make(per_shape, per_shape));
    let mut stream = Vec::new();
    replicate(env, one, marker, &ones, time, &mut stream);
    replicate(env, two, marker, &twos, |i| time(i + 1), &mut stream);
    let broken = twos[7].clone();
    stream.extend_from_slice(
        format!(
            "commit {}\ncommitter T <t@example.invalid> 1700000000 +0000\ndata 3\nbad\nM 100644 inline metadata.json\ndata 9\n{{not json\n",
            checkpoint_ref(&broken)
        )
        .as_bytes(),
    );
    env.git_stdin(&["fast-import", "--quiet"], &stream);
    assert_eq!(env.refs_under(REFS_PREFIX).len(), 2 + 2 * per_shape);
    let readable = [one.to_string(), two.to_string()]
        .into_iter()
        .chain(ones)
        .chain(twos)
        .filter(|id| *id != broken)
        .collect();
    (readable, broken)
}

/// A listing of hundreds of checkpoints says, entry by entry and in order, what `show --json`
/// says of each: the newest session time, the session IDs in slot order, the last session's
/// agent and every session's, and (as git reads it) the first line of the first prompt; an unreadable checkpoint is listed with its error (never left out) and `list` exits 1.
/// The listing read through the summary index the first listing wrote is the same, byte for
/// byte, and so is the one after the index is deleted.
#[test]
fn many_checkpoints_match_show() {
    let env = TestEnv::new();
    let store = Store::Refs;
    let (ids, broken) = many_checkpoints(&env, 300);
    let out = env.run(store, &["list", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "an unreadable checkpoint: exit 1"
    );
    let (bad, entries): (Vec<Value>, Vec<Value>) = parse_json(&out.stdout)
        .as_array()
        .expect("list --json is an array")
        .iter()
        .cloned()
        .partition(|e| e["checkpoint_id"] == json!(broken));
    assert_eq!(bad.len(), 1, "the unreadable checkpoint is listed");
    assert!(
        bad[0]["error"]
            .as_str()
            .is_some_and(|e| e.contains("metadata.json is corrupt")),
        "{}",
        bad[0]
    );
    assert!(!env
        .run(store, &["show", &broken, "--json"])
        .status
        .success());
    let mut expected: Vec<Value> = Vec::new();
    for id in ids {
        let shown = env.ok_json(store, &["show", &id, "--json"]);
        let sessions = shown["sessions"].as_array().expect("sessions").clone();
        let newest = sessions
            .iter()
            .map(|s| s["created_at"].as_str().expect("created_at").to_string())
            .max()
            .expect("a session");
        // The subject: the first line of the first session's prompts, as git reads them.
        let prompts = env.git_output(&[
            "cat-file",
            "-p",
            &format!("{}:0/prompt.txt", checkpoint_ref(&id)),
        ]);
        let subject = String::from_utf8_lossy(&prompts.stdout)
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("")
            .to_owned();
        assert!(!subject.is_empty(), "{id} has a prompt");
        // Every session's agent, each once, the last session's last.
        let mut agents: Vec<Value> = Vec::new();
        for s in &sessions {
            agents.retain(|a| *a != s["agent"]);
            agents.push(s["agent"].clone());
        }
        expected.push(json!({
            "checkpoint_id": id,
            "store": "git-refs",
            "created_at": newest,
            "session_count": sessions.len(),
            "session_ids": sessions.iter().map(|s| s["session_id"].clone()).collect::<Vec<_>>(),
            "agent": sessions.last().expect("a session")["agent"],
            "agents": agents,
            "subject": subject,
            "remote_only": false,
        }));
    }
    assert_eq!(expected.len(), 601);
    expected.sort_by(|a, b| {
        let key = |v: &Value| {
            (
                v["created_at"].as_str().unwrap().to_string(),
                v["checkpoint_id"].as_str().unwrap().to_string(),
            )
        };
        key(b).cmp(&key(a))
    });
    assert_eq!(entries.len(), expected.len());
    for (got, want) in entries.iter().zip(&expected) {
        assert_eq!(got, want);
    }

    let index = crate::summary_index::index_path(&env);
    assert!(index.is_file(), "the first listing wrote the summary index");
    for args in [&["list", "--json"][..], &["list"]] {
        let indexed = env.run(store, args);
        std::fs::remove_file(&index).expect("remove the index");
        let uncached = env.run(store, args);
        let rebuilt = env.run(store, args);
        for other in [&uncached, &rebuilt] {
            assert_eq!(
                indexed.stdout, other.stdout,
                "{args:?}: same output with and without the index"
            );
            assert_eq!(
                indexed.stderr, other.stderr,
                "{args:?}: the unreadable checkpoint is reported each time"
            );
            assert_eq!(other.status.code(), Some(1));
        }
        if args.len() == 2 {
            assert_eq!(indexed.stdout, out.stdout);
        } else {
            // The checkpoint of a Codex and a Gemini CLI session shows both.
            let text = String::from_utf8_lossy(&indexed.stdout);
            let two = text
                .lines()
                .find(|l| l.contains("01KVBJCWYA4YW6J5M9GP000002"))
                .expect("the two-session checkpoint is listed");
            assert!(two.contains("Codex, Gemini CLI"), "{two}");
        }
    }
}
