//! Hostile checkpoint data (docs/security.md, "Hostile data cannot stall or exhaust a read"): a
//! checkpoint whose `sessions[]` names thousands of directories sharing one subtree reads in
//! linear time and past a cap is one clear error naming the setting; transcripts of any size are
//! streamed by `cat` and `show --transcript`, their chunks joined as stored; the caps come from
//! the per-clone settings only. (The 100,000-session and 2 GiB measurements are in
//! `benches/hostile.sh`.)

use serde_json::{json, Value};

use crate::env::{output_text, parse_json, stderr, stdout, write_settings_text, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, TRANSCRIPT};

/// Rewrites checkpoint `HEX_ID` (git-refs) so that its `sessions[]` names `n` directories that
/// all share the subtree of slot 0: cheap to send, costly to read naively.
fn many_sessions(env: &TestEnv, n: usize) {
    let r = crate::env::checkpoint_ref(HEX_ID);
    let slot = env.git(&["rev-parse", &format!("{r}:0")]);
    let slot = slot.trim();
    let mut meta: Value =
        serde_json::from_str(&env.git(&["cat-file", "blob", &format!("{r}:metadata.json")]))
            .unwrap();
    meta["sessions"] = Value::Array(
        (0..n)
            .map(|i| {
                json!({"metadata": format!("/{i}/metadata.json"), "transcript": format!("/{i}/full.jsonl"),
                       "content_hash": format!("/{i}/content_hash.txt"), "prompt": ""})
            })
            .collect(),
    );
    let blob = env.git_stdin(
        &["hash-object", "-w", "--stdin"],
        meta.to_string().as_bytes(),
    );
    let mut entries = format!("100644 blob {}\tmetadata.json\n", blob.trim());
    for i in 0..n {
        entries.push_str(&format!("040000 tree {slot}\t{i}\n"));
    }
    let tree = env.git_stdin(&["mktree"], entries.as_bytes());
    let tip = env.git(&["rev-parse", &r]);
    let commit = env.git(&["commit-tree", tree.trim(), "-p", tip.trim(), "-m", "many"]);
    env.git(&["update-ref", &r, commit.trim()]);
}

fn limits(env: &TestEnv, limits: Value) {
    write_settings_text(
        env,
        "settings.local.json",
        &json!({ "limits": limits }).to_string(),
    );
}

#[test]
fn a_checkpoint_naming_thousands_of_sessions_reads_linearly_and_past_the_cap_is_one_error() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    many_sessions(&env, 3000);
    let v = env.ok_json(Store::Refs, &["show", HEX_ID, "--json"]);
    assert_eq!(v["sessions"].as_array().map(Vec::len), Some(3000));
    let human = env.ok(Store::Refs, &["show", HEX_ID, "--no-pager"]);
    assert!(
        human.contains("sessions 3000"),
        "{}",
        &human[..human.len().min(600)]
    );
    let listed = env.ok_json(Store::Refs, &["list", "--json"]);
    assert_eq!(listed[0]["session_count"], json!(3000));
    assert_eq!(env.ok(Store::Refs, &["list", "--ids"]).trim(), HEX_ID);
    let transcript = env.ok(
        Store::Refs,
        &["show", HEX_ID, "--transcript", "--session", "2999"],
    );
    assert_eq!(transcript.as_bytes(), TRANSCRIPT);

    // Past the cap of the per-clone settings: one error naming the checkpoint and the setting.
    limits(&env, json!({"sessions_per_checkpoint": 1000}));
    let before = env.refs_snapshot();
    for args in [
        &["show", HEX_ID][..],
        &["show", HEX_ID, "--transcript"],
        &["cat", HEX_ID, "metadata.json"],
        &["write", "--id", HEX_ID, "--session", "s2"],
    ] {
        let out = env.run(Store::Refs, args);
        assert_eq!(
            out.status.code(),
            Some(1),
            "{args:?}: {}",
            output_text(&out)
        );
        let err = stderr(&out);
        assert!(
            err.contains(&format!("checkpoint {HEX_ID}: metadata.json sessions[] is 3000 sessions, more than the limit of 1000 (limits.sessions_per_checkpoint")),
            "{args:?}: {err}"
        );
    }
    assert_eq!(env.refs_snapshot(), before, "nothing written");
    let out = env.run(Store::Refs, &["list"]);
    assert!(
        stdout(&out).contains(HEX_ID),
        "listed as unreadable: {}",
        output_text(&out)
    );

    limits(&env, json!({"tree_entries": 100}));
    let out = env.run(Store::Refs, &["show", HEX_ID]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    assert!(
        stderr(&out).contains("limits.tree_entries"),
        "{}",
        output_text(&out)
    );

    // The committed file's limits are ignored: the data and the settings may come from the same
    // stranger.
    std::fs::remove_file(env.repo().join(".git/entire/settings.local.json")).unwrap();
    write_settings_text(
        &env,
        "settings.json",
        r#"{"limits": {"sessions_per_checkpoint": 1}}"#,
    );
    env.ok(Store::Refs, &["show", HEX_ID, "--json"]);
}

/// Rewrites checkpoint `HEX_ID` (git-refs) so that its `sessions[]` names `n` directories that
/// all share one subtree whose `metadata.json` carries an unknown key padded to `pad` bytes:
/// a few KB on the wire, `n` times `pad` for a reader that copies the document per session.
fn sessions_sharing_a_padded_document(env: &TestEnv, n: usize, pad: usize) {
    let r = crate::env::checkpoint_ref(HEX_ID);
    let mut session: Value =
        serde_json::from_str(&env.git(&["cat-file", "blob", &format!("{r}:0/metadata.json")]))
            .unwrap();
    session["padding"] = Value::String("a".repeat(pad));
    let doc = env.git_stdin(
        &["hash-object", "-w", "--stdin"],
        session.to_string().as_bytes(),
    );
    let mut slot = String::new();
    for line in env.git(&["ls-tree", &format!("{r}:0")]).lines() {
        if !line.ends_with("\tmetadata.json") {
            slot.push_str(line);
            slot.push('\n');
        }
    }
    slot.push_str(&format!("100644 blob {}\tmetadata.json\n", doc.trim()));
    let slot = env.git_stdin(&["mktree"], slot.as_bytes());
    let mut root = format!(
        "100644 blob {}\tmetadata.json\n",
        env.git(&["rev-parse", &format!("{r}:metadata.json")])
            .trim()
    );
    for i in 0..n {
        root.push_str(&format!("040000 tree {}\t{i}\n", slot.trim()));
    }
    let tree = env.git_stdin(&["mktree"], root.as_bytes());
    let tip = env.git(&["rev-parse", &r]);
    let commit = env.git(&["commit-tree", tree.trim(), "-p", tip.trim(), "-m", "padded"]);
    env.git(&["update-ref", &r, commit.trim()]);
}

/// A session document is parsed only up to `limits.document_bytes` (larger is one error naming
/// the setting, read from its header, never inflated), and sessions naming one document share
/// one copy of it: what `show --json` prints is each session's, and the read stays bounded.
#[test]
fn an_oversized_session_document_is_one_error_and_a_shared_one_is_read_once() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    many_sessions(&env, 8);
    sessions_sharing_a_padded_document(&env, 8, 17 << 20);
    let before = env.refs_snapshot();
    for args in [
        &["show", HEX_ID][..],
        &["show", HEX_ID, "--json"],
        &["write", "--id", HEX_ID, "--session", "s2"],
    ] {
        let out = env.run(Store::Refs, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains(&format!("checkpoint {HEX_ID}: 0/metadata.json is ")),
            "{args:?}: {err}"
        );
        assert!(
            err.contains("more than the limit of 16777216 (limits.document_bytes"),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "one line: {err}");
    }
    assert_eq!(env.refs_snapshot(), before, "nothing written");
    let out = env.run(Store::Refs, &["list"]);
    assert!(stdout(&out).contains(HEX_ID), "{}", output_text(&out));

    limits(&env, json!({"document_bytes": 32 << 20}));
    let v = env.ok_json(Store::Refs, &["show", HEX_ID, "--json"]);
    let sessions = v["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 8);
    for s in sessions {
        assert_eq!(s["session_id"], "s1");
    }
}

/// Writes checkpoint `HEX_ID` (git-refs) whose session 0 transcript is stored as the given
/// chunks (`full.jsonl`, `full.jsonl.001`, ...).
fn chunked(env: &TestEnv, chunks: &[&[u8]]) {
    write_std(env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let r = crate::env::checkpoint_ref(HEX_ID);
    let mut slot = String::new();
    for line in env.git(&["ls-tree", &format!("{r}:0")]).lines() {
        if !line.ends_with("\tfull.jsonl") {
            slot.push_str(line);
            slot.push('\n');
        }
    }
    for (n, chunk) in chunks.iter().enumerate() {
        let blob = env.git_stdin(&["hash-object", "-w", "--stdin"], chunk);
        let name = if n == 0 {
            "full.jsonl".to_owned()
        } else {
            format!("full.jsonl.{n:03}")
        };
        slot.push_str(&format!("100644 blob {}\t{name}\n", blob.trim()));
    }
    let slot = env.git_stdin(&["mktree"], slot.as_bytes());
    let mut root = String::new();
    for line in env.git(&["ls-tree", &r]).lines() {
        if line.ends_with("\t0") {
            root.push_str(&format!("040000 tree {}\t0\n", slot.trim()));
        } else {
            root.push_str(line);
            root.push('\n');
        }
    }
    let tree = env.git_stdin(&["mktree"], root.as_bytes());
    let tip = env.git(&["rev-parse", &r]);
    let commit = env.git(&["commit-tree", tree.trim(), "-p", tip.trim(), "-m", "chunks"]);
    env.git(&["update-ref", &r, commit.trim()]);
}

#[test]
fn transcripts_of_any_size_are_streamed_and_their_chunks_joined() {
    // A chunk larger than what is read through libgit2 comes from `git cat-file` as a stream.
    let line = format!(
        "{{\"type\":\"user\",\"message\":\"{}\"}}\n",
        "x".repeat(1000)
    );
    let big = line.repeat(9 * 1024).into_bytes();
    let env = TestEnv::new();
    chunked(&env, &[b"{\"a\":1}", &big, b"{\"c\":3}\n"]);
    let mut want = b"{\"a\":1}\n".to_vec();
    want.extend_from_slice(&big);
    want.extend_from_slice(b"\n{\"c\":3}\n");
    for args in [
        &["cat", HEX_ID, "0/full.jsonl"][..],
        &["show", HEX_ID, "--transcript", "--no-pager"],
    ] {
        let out = env.run(Store::Refs, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert!(
            out.stdout == want,
            "{args:?}: {} bytes, want {}",
            out.stdout.len(),
            want.len()
        );
    }
    // Over the cap on reading into memory, it is still streamed whole.
    limits(&env, json!({"blob_bytes": 4096}));
    let out = env.run(Store::Refs, &["cat", HEX_ID, "0/full.jsonl"]);
    assert!(
        out.status.success() && out.stdout == want,
        "{}",
        stderr(&out)
    );
    let v = parse_json(&env.run(Store::Refs, &["show", HEX_ID, "--json"]).stdout);
    assert_eq!(v["checkpoint_id"], json!(HEX_ID));
}

/// Runs `cmd`, killing it if it runs longer than `limit`; its output, and whether it finished.
fn bounded(
    mut cmd: std::process::Command,
    limit: std::time::Duration,
) -> (bool, std::process::Output) {
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        if child.try_wait().unwrap().is_some() {
            return (true, child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let _ = child.kill();
    (false, child.wait_with_output().unwrap())
}

/// Files of ours under the git dir replaced by a FIFO, a link to `/dev/zero` or a link out of
/// `.git`: no command or hook waits on them, reads them without bound or writes through them.
#[test]
fn files_we_own_are_never_read_through_a_link_fifo_or_device() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let common = env.common_dir();
    let outside = env.root().join("outside");
    std::fs::write(&outside, b"").unwrap();
    // The queue (which held one ref) replaced by a FIFO nobody writes to.
    let queue = common.join("entire-checkpoint-push-queue.jsonl");
    std::fs::remove_file(&queue).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(&queue)
        .status()
        .unwrap();
    assert!(fifo.success());
    let entire = common.join("entire");
    std::fs::create_dir_all(&entire).unwrap();
    for (name, target) in [
        ("rewrite-map.json", std::path::Path::new("/dev/zero")),
        ("remote-ref-counts.json", std::path::Path::new("/dev/zero")),
        ("push-destinations.json", outside.as_path()),
    ] {
        let _ = std::fs::remove_file(entire.join(name));
        std::os::unix::fs::symlink(target, entire.join(name)).unwrap();
    }
    for args in [
        &["push", "origin"][..],
        &["status"],
        &["list"],
        &["show", HEX_ID],
    ] {
        let mut cmd = std::process::Command::new(crate::env::checkpoint_bin());
        for (k, v) in env.env_vars() {
            match v {
                Some(v) => cmd.env(k, v),
                None => cmd.env_remove(k),
            };
        }
        cmd.env("ENTIRE_CHECKPOINTS_PRIMARY", "git-refs")
            .current_dir(env.repo())
            .args(args);
        let (finished, out) = bounded(cmd, std::time::Duration::from_secs(60));
        assert!(finished, "{args:?} hung: {}", output_text(&out));
    }
    assert_eq!(
        std::fs::read(&outside).unwrap(),
        b"",
        "nothing written through the link"
    );
    assert!(env.checkpoint_refs_in(&origin).len() <= 1);
}

/// Many checkpoint refs at one commit whose root document does not parse: each is listed as
/// unreadable with the same reason (the document is remembered as corrupt after its first
/// parse, and the reason given again is the same), and `show` of any of them names it. The
/// summary index records them, so the next `list` does not read the document again.
#[test]
fn refs_sharing_one_corrupt_document_are_each_reported_with_its_reason() {
    let env = TestEnv::new();
    let doc = env.git_stdin(&["hash-object", "-w", "--stdin"], b"{\"sessions\": [");
    let tree = env.git_stdin(
        &["mktree"],
        format!("100644 blob {}\tmetadata.json\n", doc.trim()).as_bytes(),
    );
    let commit = env.git(&["commit-tree", tree.trim(), "-m", "corrupt"]);
    let ids: Vec<String> = (0..5).map(|i| format!("{i:010x}a{i}")).collect();
    for id in &ids {
        env.git(&["update-ref", &crate::env::checkpoint_ref(id), commit.trim()]);
    }
    let out = env.run(Store::Refs, &["list", "--json"]);
    let listed = parse_json(&out.stdout);
    let lines = listed.as_array().unwrap();
    assert_eq!(lines.len(), 5, "{}", output_text(&out));
    // Each names its own checkpoint, then the same reason.
    let reasons: Vec<&str> = lines
        .iter()
        .map(|l| l["error"].as_str().unwrap_or_default())
        .map(|e| e.split_once(": ").map_or(e, |(_, reason)| reason))
        .collect();
    assert!(
        reasons[0].starts_with("metadata.json is corrupt: invalid root metadata.json: EOF"),
        "{reasons:?}"
    );
    assert!(reasons.iter().all(|r| *r == reasons[0]), "{reasons:?}");

    // Recorded: with the document gone from the object store, `list` still says what it said
    // (reading it again would say the blob is missing).
    let again = |env: &TestEnv| {
        let out = env.run(Store::Refs, &["list", "--json"]);
        parse_json(&out.stdout)
    };
    let doc = doc.trim();
    let loose = env
        .repo()
        .join(format!(".git/objects/{}/{}", &doc[..2], &doc[2..]));
    let kept = std::fs::read(&loose).unwrap();
    std::fs::remove_file(&loose).unwrap();
    assert_eq!(again(&env), listed, "read from the summary index");
    std::fs::write(&loose, kept).unwrap();
    let out = env.run(Store::Refs, &["show", &ids[3]]);
    assert_eq!(out.status.code(), Some(1), "{}", output_text(&out));
    assert!(
        stderr(&out).contains(&format!("checkpoint {}: metadata.json is corrupt", ids[3])),
        "{}",
        output_text(&out)
    );
}
