//! The commit integration, driven through real `git` and the installed hooks: `session
//! record/list/discard`, `prepare-commit-msg` (the `Entire-Checkpoint:` trailer), `post-commit`
//! (condensation of the staged sessions into the checkpoint), amend, rebase, cherry-pick,
//! linked worktrees, `show <commit>` and the `demo` command (docs/cli.md; docs/how-it-works.md,
//! "Commits"; docs/format.md, "Trailers"; docs/hooks.md).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::env::{
    hooks_dir, is_hex12, is_ulid, parse_json, path_str, path_with_bins, text, Store, TestEnv,
    REFS_PREFIX, V1_BRANCH,
};

pub(crate) const SESSION: &str = "sess-commit-1";
pub(crate) const LINE_1: &str = "{\"type\":\"user\",\"message\":\"add a greeting\"}";
const LINE_2: &str = "{\"type\":\"assistant\",\"message\":\"added hello.txt\"}";
const LINE_3: &str = "{\"type\":\"user\",\"message\":\"now a farewell\"}";
const LINE_4: &str = "{\"type\":\"assistant\",\"message\":\"added bye.txt\"}";

pub(crate) fn install_hooks(env: &TestEnv) {
    env.ok_default(&["hooks", "install"]);
}

/// `session record --session <sid> [--transcript <file>] <extra...>` in `dir`.
pub(crate) fn record(
    env: &TestEnv,
    dir: &Path,
    sid: &str,
    transcript: Option<&[u8]>,
    extra: &[&str],
) {
    let mut args: Vec<String> = vec!["session".into(), "record".into(), "--session".into()];
    args.push(sid.into());
    if let Some(t) = transcript {
        let file = env.input(t);
        args.push("--transcript".into());
        args.push(path_str(&file).into());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    env.ok_primary_in(None, dir, &refs);
}

pub(crate) fn lines(ls: &[&str]) -> Vec<u8> {
    let mut out = Vec::new();
    for l in ls {
        out.extend_from_slice(l.as_bytes());
        out.push(b'\n');
    }
    out
}

/// Writes `file` in `dir`, stages it and commits with `-m msg` through the hooks; returns the
/// new HEAD and git's stderr.
pub(crate) fn commit_in(
    env: &TestEnv,
    dir: &Path,
    primary: Option<Store>,
    file: &str,
    msg: &str,
) -> (String, String) {
    let path = dir.join(file);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&path, format!("{file} {msg}\n")).expect("write work tree file");
    env.git_in(dir, &["add", "--", file]);
    let stderr = env.git_hooked_ok(primary, dir, &["commit", "-q", "-m", msg]);
    let head = env.git_in(dir, &["rev-parse", "HEAD"]).trim().to_string();
    (head, stderr)
}

pub(crate) fn commit(
    env: &TestEnv,
    primary: Option<Store>,
    file: &str,
    msg: &str,
) -> (String, String) {
    commit_in(env, env.repo(), primary, file, msg)
}

/// The values of the `Entire-Checkpoint:` trailer lines of a commit's message, in order.
pub(crate) fn trailer_ids(env: &TestEnv, commit: &str) -> Vec<String> {
    env.message(commit)
        .lines()
        .filter_map(|l| l.strip_prefix("Entire-Checkpoint:"))
        .map(|v| v.trim().to_string())
        .collect()
}

/// The one `Entire-Checkpoint` ID of a commit (asserts there is exactly one).
pub(crate) fn the_trailer(env: &TestEnv, commit: &str) -> String {
    let ids = trailer_ids(env, commit);
    assert_eq!(
        ids.len(),
        1,
        "exactly one Entire-Checkpoint trailer on {commit}:\n{}",
        env.message(commit)
    );
    ids[0].clone()
}

/// Every checkpoint ref and the v1 branch, with their objects (for "nothing was written").
pub(crate) fn checkpoint_state(env: &TestEnv) -> String {
    let mut s = env.git(&[
        "for-each-ref",
        "--format=%(refname) %(objectname)",
        REFS_PREFIX,
    ]);
    s.push_str(&env.rev(V1_BRANCH).unwrap_or_default());
    s
}

fn sessions_json(env: &TestEnv, dir: &Path) -> Vec<Value> {
    let out = env.run_primary_in(None, dir, &["session", "list", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    match parse_json(&out.stdout) {
        Value::Array(a) => a,
        other => panic!("session list --json is an array: {other}"),
    }
}

pub(crate) fn session_entry(env: &TestEnv, dir: &Path, sid: &str) -> Value {
    sessions_json(env, dir)
        .into_iter()
        .find(|s| s["session_id"] == json!(sid))
        .unwrap_or_else(|| panic!("session {sid} is listed"))
}

/// The number of commits in the history of the ref holding `id`.
fn history_len(env: &TestEnv, store: Store, id: &str) -> usize {
    env.git(&["rev-list", "--count", &env.store_ref(store, id)])
        .trim()
        .parse()
        .unwrap()
}

pub(crate) fn show_json(env: &TestEnv, target: &str) -> Value {
    parse_json(env.ok_default(&["show", target, "--json"]).as_bytes())
}

// ---------------------------------------------------------------------------------------------
// Hooks install
// ---------------------------------------------------------------------------------------------

#[test]
fn hooks_install_writes_the_four_hooks_and_chains_a_foreign_one() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    let dir = hooks_dir(&env);
    std::fs::create_dir_all(&dir).unwrap();
    let log = env.root().join("inputs").join("foreign-ran");
    let foreign = format!(
        "#!/bin/sh\nprintf 'foreign %s\\n' \"$1\" >> '{}'\nexit 0\n",
        path_str(&log)
    );
    std::fs::write(dir.join("prepare-commit-msg"), &foreign).unwrap();
    std::fs::set_permissions(
        dir.join("prepare-commit-msg"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    install_hooks(&env);
    for name in [
        "pre-push",
        "prepare-commit-msg",
        "post-commit",
        "post-rewrite",
    ] {
        let path = dir.join(name);
        let script = std::fs::read_to_string(&path).unwrap_or_else(|_| panic!("{name} written"));
        assert!(script.starts_with("#!"), "{name} is a script");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert!(mode & 0o111 != 0, "{name} is executable");
        if name != "pre-push" {
            assert!(
                script.contains(&format!("entire checkpoint hook {name}")),
                "{name} calls the hook entry point:\n{script}"
            );
        }
    }
    assert_eq!(
        std::fs::read_to_string(dir.join("prepare-commit-msg.pre-entire")).unwrap(),
        foreign,
        "the foreign hook is kept as .pre-entire"
    );
    let status = parse_json(env.ok_default(&["status", "--json"]).as_bytes());
    for name in ["pre-push", "post-commit", "prepare-commit-msg"] {
        assert!(crate::env::hook_is_ours(&status, name), "status: {status}");
    }
    let hooks = parse_json(env.ok_default(&["hooks", "status", "--json"]).as_bytes());
    assert_eq!(hooks["directory"], json!(path_str(&dir)), "{hooks}");
    assert_eq!(hooks["shared"], json!(null), "{hooks}");
    let of = |name: &str| {
        hooks["hooks"]
            .as_array()
            .and_then(|a| a.iter().find(|h| h["name"] == json!(name)))
            .cloned()
            .unwrap_or_else(|| panic!("{name} in hooks status --json: {hooks}"))
    };
    assert_eq!(of("post-commit")["state"], json!("installed"));
    assert_eq!(of("prepare-commit-msg")["state"], json!("chained"));
    assert_eq!(
        of("prepare-commit-msg")["chains"],
        json!(["prepare-commit-msg.pre-entire"])
    );
    assert_eq!(
        of("pre-push")["path"],
        json!(path_str(&dir.join("pre-push")))
    );

    // The chained hook runs (first), and ours still adds the trailer.
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let (head, _) = commit(&env, Some(Store::Refs), "a.txt", "with chained hook");
    let ran = std::fs::read_to_string(&log).expect("the chained hook ran");
    assert!(ran.starts_with("foreign "), "{ran}");
    assert!(is_ulid(&the_trailer(&env, &head)));
}

/// Binaries gone from where `hooks install` found them: the hooks run the ones on PATH with a
/// warning, and without any the commit still succeeds (warning, no trailer).
#[test]
fn when_the_binaries_moved_the_hooks_use_path_or_warn_and_the_commit_succeeds() {
    // The last commit runs /usr/bin/git, which may know no other ref backend.
    let env = TestEnv::with_files_refs();
    install_hooks(&env);
    for name in ["prepare-commit-msg", "post-commit"] {
        let path = hooks_dir(&env).join(name);
        let script = std::fs::read_to_string(&path).unwrap();
        let moved = script
            .lines()
            .map(|l| match l.starts_with("bin_dir=") {
                true => "bin_dir='/nonexistent/moved'",
                false => l,
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&path, moved).unwrap();
    }
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let (head, stderr) = commit(&env, None, "a.txt", "from PATH");
    assert!(
        stderr.contains("/nonexistent/moved/git-entire-checkpoint is gone"),
        "{stderr}"
    );
    the_trailer(&env, &head);

    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_2])), &[]);
    env.write_file("b.txt", b"b\n");
    env.git(&["add", "b.txt"]);
    let out = env
        .git_command_in(env.repo(), &["commit", "-q", "-m", "no binary"])
        .env("PATH", "/usr/bin:/bin")
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "commit succeeds:\n{stderr}");
    assert!(stderr.contains("warning"), "a warning:\n{stderr}");
    assert_eq!(env.subject("HEAD"), "no binary");
    assert!(trailer_ids(&env, "HEAD").is_empty());
}

// ---------------------------------------------------------------------------------------------
// Session staging
// ---------------------------------------------------------------------------------------------

#[test]
fn session_record_stages_replaces_the_transcript_appends_prompts_and_merges_files() {
    let env = TestEnv::new();
    let t1 = lines(&[LINE_1]);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&t1),
        &[
            "--prompt",
            "first",
            "--files-touched",
            "a.txt",
            "--agent",
            "Claude Code",
            "--model",
            "opus",
        ],
    );
    let dir = env.common_dir().join("entire/sessions").join(SESSION);
    assert!(dir.join("state.json").is_file(), "state.json staged");
    assert_eq!(std::fs::read(dir.join("transcript")).unwrap(), t1);

    let t2 = lines(&[LINE_1, LINE_2]);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&t2),
        &["--prompt", "second", "--files-touched", "b.txt"],
    );
    record(
        &env,
        env.repo(),
        SESSION,
        None,
        &["--files-touched", "a.txt"],
    );
    assert_eq!(
        std::fs::read(dir.join("transcript")).unwrap(),
        t2,
        "the transcript is replaced"
    );
    let state = parse_json(&std::fs::read(dir.join("state.json")).unwrap());
    assert_eq!(state["prompts"], json!(["first", "second"]), "{state}");
    let mut files: Vec<String> = state["files_touched"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    files.sort();
    assert_eq!(files, ["a.txt", "b.txt"], "files merged without duplicates");

    let entry = session_entry(&env, env.repo(), SESSION);
    assert_eq!(entry["prompt_count"], json!(2), "{entry}");
    assert_eq!(entry["pending"], json!(true), "{entry}");
    assert_eq!(entry["last_checkpoint"], json!(null), "{entry}");
    assert!(entry["worktree"].as_str().is_some_and(|w| !w.is_empty()));
    let plain = env.ok_default(&["session", "list"]);
    assert!(plain.contains(SESSION), "{plain}");

    env.ok_default(&["session", "discard", SESSION]);
    assert!(sessions_json(&env, env.repo()).is_empty());
    let out = env.run_default(&["session", "discard", SESSION]);
    assert_ne!(out.status.code(), Some(0), "discarding an unknown session");
    assert!(!text(&out.stderr).trim().is_empty());

    // Nothing staged any more: a commit gets no trailer.
    install_hooks(&env);
    let (head, _) = commit(&env, None, "c.txt", "after discard");
    assert!(trailer_ids(&env, &head).is_empty());
}

#[test]
fn invalid_session_ids_are_refused_and_nothing_is_staged() {
    let env = TestEnv::new();
    let long = "a".repeat(300);
    for sid in ["../x", "a/b", "", long.as_str()] {
        let out = env.run_default(&["session", "record", "--session", sid, "--prompt", "p"]);
        assert_ne!(out.status.code(), Some(0), "session ID {sid:?} is refused");
        assert!(
            !text(&out.stderr).trim().is_empty(),
            "a message for {sid:?}"
        );
    }
    let sessions = env.common_dir().join("entire").join("sessions");
    let staged: Vec<_> = std::fs::read_dir(&sessions)
        .map(|d| {
            d.filter_map(Result::ok)
                .map(|e| e.file_name())
                .filter(|n| !n.to_string_lossy().starts_with('.'))
                .collect()
        })
        .unwrap_or_default();
    assert!(staged.is_empty(), "nothing staged: {staged:?}");
    assert!(!env.common_dir().join("entire").join("x").exists());
    assert!(!env.common_dir().join("x").exists());
    assert!(sessions_json(&env, env.repo()).is_empty());
}

// ---------------------------------------------------------------------------------------------
// Commit → checkpoint
// ---------------------------------------------------------------------------------------------

#[test]
fn a_commit_with_a_staged_session_is_linked_and_condensed() {
    let env = TestEnv::new();
    install_hooks(&env);
    let transcript = lines(&[LINE_1, LINE_2]);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&transcript),
        &[
            "--prompt",
            "add a greeting",
            "--prompt",
            "and make it loud",
            "--files-touched",
            "hello.txt",
            "--files-touched",
            "not-committed.txt",
            "--agent",
            "Claude Code",
            "--model",
            "claude-opus",
            "--token-usage",
            r#"{"input_tokens":120,"cache_creation_tokens":0,"cache_read_tokens":7,"output_tokens":30,"api_call_count":2}"#,
        ],
    );
    env.write_file("hello.txt", b"HELLO\n");
    env.write_file("other.txt", b"other\n");
    env.git(&["add", "hello.txt", "other.txt"]);
    let stderr = env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        // Not -q: `git commit -q` silences our informational lines too (tests/cli/messages.rs).
        &["commit", "-m", "Add greeting", "-m", "Body text."],
    );
    let head = env.rev("HEAD").unwrap();
    let id = the_trailer(&env, &head);
    assert!(is_ulid(&id), "a ULID under git-refs: {id}");
    assert!(
        env.message(&head)
            .ends_with(&format!("Body text.\n\nEntire-Checkpoint: {id}\n")),
        "the trailer follows a blank line:\n{}",
        env.message(&head)
    );

    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["checkpoint_id"], json!(id), "{meta}");
    assert_eq!(meta["session_id"], json!(SESSION));
    assert_eq!(meta["commit_sha"], json!(head));
    assert_eq!(meta["branch"], json!("main"));
    assert_eq!(meta["strategy"], json!("manual-commit"));
    assert_eq!(meta["agent"], json!("Claude Code"));
    assert_eq!(meta["model"], json!("claude-opus"));
    assert_eq!(meta["token_usage"]["input_tokens"], json!(120), "{meta}");
    assert_eq!(meta["token_usage"]["output_tokens"], json!(30), "{meta}");
    assert_eq!(
        meta["files_touched"],
        json!(["hello.txt"]),
        "the commit's files that the session touched"
    );
    assert_eq!(
        stderr
            .lines()
            .filter(|l| l.starts_with("entire:"))
            .collect::<Vec<_>>(),
        [format!("entire: checkpoint {id}: 1 session(s) condensed")],
        "a commit says one line of ours: {stderr}"
    );
    assert!(
        meta.get("checkpoint_transcript_start").is_none(),
        "no start offset for the first window: {meta}"
    );
    assert_eq!(env.blob(Store::Refs, &id, "0/full.jsonl"), transcript);
    assert_eq!(
        env.blob_text(Store::Refs, &id, "0/prompt.txt"),
        "add a greeting\n\n---\n\nand make it loud"
    );
    assert_eq!(
        env.ls_tree(&format!("{}:", env.store_ref(Store::Refs, &id)))
            .iter()
            .filter(|n| n.chars().all(|c| c.is_ascii_digit()))
            .count(),
        1,
        "one slot"
    );
    let tip = env.tip(Store::Refs, &id);
    assert_eq!(
        env.message(&tip),
        format!(
            "Checkpoint: {id}\n\nAdd greeting\n\nEntire-Session: {SESSION}\nEntire-Strategy: manual-commit\nEntire-Agent: Claude Code\n"
        )
    );
    assert!(!stderr.contains("warning"), "no warnings:\n{stderr}");

    let entry = session_entry(&env, env.repo(), SESSION);
    assert_eq!(entry["pending"], json!(false), "{entry}");
    assert_eq!(entry["last_checkpoint"], json!(id), "{entry}");

    // show HEAD resolves the trailer.
    let shown = show_json(&env, "HEAD");
    assert_eq!(shown["checkpoint_id"], json!(id), "{shown}");
    assert_eq!(shown["sessions"][0]["commit_sha"], json!(head));
}

/// Which of the session's recorded files the commit left out is a diagnostic: said with
/// `ENTIRE_LOG=info` (or `-v`), not by every commit.
#[test]
fn the_files_a_commit_left_out_are_said_when_asked() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1])),
        &["--files-touched", "in.txt", "--files-touched", "out.txt"],
    );
    env.write_file("in.txt", b"in\n");
    env.git(&["add", "in.txt"]);
    let out = env
        .git_hooked_command(None, env.repo(), &["commit", "-q", "-m", "in"])
        .env("ENTIRE_LOG", "info")
        .output()
        .unwrap();
    assert!(out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "entire: info: session {SESSION}: left out of the checkpoint, not changed by this commit: out.txt"
        )),
        "{stderr}"
    );
}

#[test]
fn the_default_primary_mints_a_hex_id_on_the_v1_branch() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1])),
        &["--prompt", "p1"],
    );
    let (head, _) = commit(&env, None, "a.txt", "default primary");
    let id = the_trailer(&env, &head);
    assert!(is_hex12(&id), "12-hex without settings: {id}");
    let meta = env.json(Store::Branch, &id, "0/metadata.json");
    assert_eq!(meta["commit_sha"], json!(head));
    assert_eq!(
        meta["files_touched"],
        json!(["a.txt"]),
        "all the commit's files when the session recorded none"
    );
    assert_eq!(
        env.blob(Store::Branch, &id, "0/full.jsonl"),
        lines(&[LINE_1])
    );
    assert_eq!(env.blob_text(Store::Branch, &id, "0/prompt.txt"), "p1");
}

#[test]
fn settings_select_the_git_refs_primary_for_the_hooks() {
    let env = TestEnv::new();
    env.write_file(
        ".entire/settings.json",
        br#"{"checkpoints":{"primary":{"type":"git-refs"}}}"#,
    );
    env.git(&["add", ".entire/settings.json"]);
    env.git(&["commit", "-q", "-m", "settings"]);
    install_hooks(&env);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let (head, _) = commit(&env, None, "a.txt", "refs by settings");
    let id = the_trailer(&env, &head);
    assert!(is_ulid(&id), "a ULID under the git-refs settings: {id}");
    assert_eq!(
        env.json(Store::Refs, &id, "0/metadata.json")["commit_sha"],
        json!(head)
    );
}

#[test]
fn a_commit_without_staged_activity_gets_no_trailer_and_writes_nothing() {
    let env = TestEnv::new();
    install_hooks(&env);
    let before = checkpoint_state(&env);
    let (head, _) = commit(&env, Some(Store::Refs), "a.txt", "no session");
    assert!(trailer_ids(&env, &head).is_empty());
    assert_eq!(env.message(&head), "no session\n");
    assert_eq!(checkpoint_state(&env), before);
}

#[test]
fn a_second_commit_condenses_only_new_activity() {
    let env = TestEnv::new();
    install_hooks(&env);
    let first = lines(&[LINE_1, LINE_2]);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&first),
        &["--prompt", "one"],
    );
    let (c1, _) = commit(&env, Some(Store::Refs), "a.txt", "first");
    let id1 = the_trailer(&env, &c1);

    // Nothing new: no trailer, nothing written.
    let before = checkpoint_state(&env);
    let (c2, _) = commit(&env, Some(Store::Refs), "b.txt", "second, idle");
    assert!(trailer_ids(&env, &c2).is_empty(), "{}", env.message(&c2));
    assert_eq!(checkpoint_state(&env), before);

    // New activity: a new checkpoint with only the new prompts and the window start.
    let second = lines(&[LINE_1, LINE_2, LINE_3, LINE_4]);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&second),
        &["--prompt", "two", "--prompt", "three"],
    );
    let (c3, _) = commit(&env, Some(Store::Refs), "c.txt", "third");
    let id3 = the_trailer(&env, &c3);
    assert_ne!(id3, id1);
    let meta = env.json(Store::Refs, &id3, "0/metadata.json");
    assert_eq!(meta["commit_sha"], json!(c3));
    assert_eq!(meta["checkpoint_transcript_start"], json!(2), "{meta}");
    assert_eq!(
        env.blob_text(Store::Refs, &id3, "0/prompt.txt"),
        "two\n\n---\n\nthree"
    );
    assert_eq!(env.blob(Store::Refs, &id3, "0/full.jsonl"), second);
    // The first checkpoint is untouched.
    assert_eq!(history_len(&env, Store::Refs, &id1), 1);
    assert_eq!(env.blob_text(Store::Refs, &id1, "0/prompt.txt"), "one");
    assert_eq!(
        session_entry(&env, env.repo(), SESSION)["last_checkpoint"],
        json!(id3)
    );
}

#[test]
fn two_pending_sessions_share_one_checkpoint_in_two_slots() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(
        &env,
        env.repo(),
        "sess-a",
        Some(&lines(&[LINE_1])),
        &["--prompt", "from a"],
    );
    record(
        &env,
        env.repo(),
        "sess-b",
        Some(&lines(&[LINE_3])),
        &["--prompt", "from b"],
    );
    let (head, _) = commit(&env, Some(Store::Refs), "a.txt", "both");
    let id = the_trailer(&env, &head);
    let mut sids: Vec<String> = ["0", "1"]
        .iter()
        .map(|slot| {
            env.json(Store::Refs, &id, &format!("{slot}/metadata.json"))["session_id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    sids.sort();
    assert_eq!(sids, ["sess-a", "sess-b"]);
    assert!(!env.exists(Store::Refs, &id, "2"));
    // The writes cache holds both sessions, each under the checkpoint's final tree
    // (docs/format.md, "The writes cache"): the first blame reads no transcript.
    let tree = env.git(&[
        "rev-parse",
        &format!("{}^{{tree}}", crate::env::checkpoint_ref(&id)),
    ]);
    let cache = env.repo().join(".git/entire/writes-cache");
    let mut dirs: Vec<String> = std::fs::read_dir(&cache)
        .unwrap()
        .map(|e| {
            let entry: Value =
                serde_json::from_slice(&std::fs::read(e.unwrap().path()).unwrap()).unwrap();
            assert_eq!(entry["tree"], tree.trim(), "{entry:#}");
            entry["dir"].as_str().unwrap().to_owned()
        })
        .collect();
    dirs.sort();
    assert_eq!(dirs, ["0", "1"]);
}

#[test]
fn an_existing_valid_trailer_is_kept() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let given = "01KVBJCWYA4YW6J5M9GP655HZN";
    env.write_file("a.txt", b"a\n");
    env.git(&["add", "a.txt"]);
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &[
            "commit",
            "-q",
            "-m",
            "keep mine",
            "-m",
            &format!("Entire-Checkpoint: {given}"),
        ],
    );
    assert_eq!(trailer_ids(&env, "HEAD"), [given], "no second trailer");
    let meta = env.json(Store::Refs, given, "0/metadata.json");
    assert_eq!(meta["session_id"], json!(SESSION));
    assert_eq!(meta["commit_sha"], json!(env.rev("HEAD").unwrap()));
}

#[test]
fn a_merge_commit_gets_no_trailer() {
    let env = TestEnv::new();
    install_hooks(&env);
    env.git(&["checkout", "-q", "-b", "feature"]);
    commit(&env, Some(Store::Refs), "f.txt", "feature work");
    env.git(&["checkout", "-q", "main"]);
    commit(&env, Some(Store::Refs), "m.txt", "main work");
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &["merge", "-q", "--no-ff", "-m", "Merge feature", "feature"],
    );
    let head = env.rev("HEAD").unwrap();
    assert_eq!(env.parents(&head).len(), 2, "a merge commit");
    assert!(
        trailer_ids(&env, &head).is_empty(),
        "{}",
        env.message(&head)
    );
}

#[test]
fn a_malformed_trailer_is_ignored_with_a_warning_and_nothing_is_condensed() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let before = checkpoint_state(&env);
    let msg = env.input_file(
        "malformed-msg",
        b"Broken link\n\nEntire-Checkpoint: nothex\n",
    );
    env.write_file("a.txt", b"a\n");
    env.git(&["add", "a.txt"]);
    let out = env.git_hooked(
        Some(Store::Refs),
        env.repo(),
        &["commit", "-q", "--no-verify", "-F", path_str(&msg)],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the commit succeeds:\n{stderr}");
    let head = env.rev("HEAD").unwrap();
    assert_eq!(env.subject(&head), "Broken link");
    let valid: Vec<String> = trailer_ids(&env, &head)
        .into_iter()
        .filter(|v| is_ulid(v) || is_hex12(v))
        .collect();
    assert!(valid.is_empty(), "no valid trailer was added: {valid:?}");
    assert!(
        stderr.contains("nothex") && stderr.contains("malformed"),
        "a warning names the malformed trailer:\n{stderr}"
    );
    assert_eq!(checkpoint_state(&env), before, "nothing condensed");
    assert_eq!(
        session_entry(&env, env.repo(), SESSION)["pending"],
        json!(true)
    );
}

#[test]
fn post_commit_trouble_is_a_warning_and_the_commit_succeeds() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let state = env
        .common_dir()
        .join("entire/sessions")
        .join(SESSION)
        .join("state.json");
    std::fs::write(&state, b"{ this is not json").unwrap();
    env.write_file("a.txt", b"a\n");
    env.git(&["add", "a.txt"]);
    let out = env.git_hooked(
        Some(Store::Refs),
        env.repo(),
        &["commit", "-q", "-m", "corrupt session"],
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the commit succeeds:\n{stderr}");
    assert_eq!(env.subject("HEAD"), "corrupt session");
    assert!(
        stderr.contains("warning: ") && stderr.contains("session discard"),
        "a warning naming the repair:\n{stderr}"
    );
}

#[test]
fn no_verify_still_makes_the_checkpoint() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1])),
        &["--prompt", "p"],
    );
    env.write_file("a.txt", b"a\n");
    env.git(&["add", "a.txt"]);
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &["commit", "-q", "--no-verify", "-m", "skip verify"],
    );
    let head = env.rev("HEAD").unwrap();
    let id = the_trailer(&env, &head);
    assert_eq!(
        env.json(Store::Refs, &id, "0/metadata.json")["commit_sha"],
        json!(head)
    );
}

#[test]
fn an_editor_commit_gets_the_trailer_after_cleanup() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    env.write_file("a.txt", b"a\n");
    env.git(&["add", "a.txt"]);
    let out = env
        .git_hooked_command(
            Some(Store::Refs),
            env.repo(),
            &["commit", "-q", "-e", "-m", "Edited subject"],
        )
        .env("GIT_EDITOR", "true")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let head = env.rev("HEAD").unwrap();
    let id = the_trailer(&env, &head);
    assert_eq!(
        env.message(&head),
        format!("Edited subject\n\nEntire-Checkpoint: {id}\n")
    );
    assert_eq!(
        env.json(Store::Refs, &id, "0/metadata.json")["commit_sha"],
        json!(head)
    );
}

#[test]
fn a_detached_head_commit_records_no_branch() {
    let env = TestEnv::new();
    install_hooks(&env);
    env.git(&["checkout", "-q", "--detach"]);
    record(&env, env.repo(), SESSION, Some(&lines(&[LINE_1])), &[]);
    let (head, _) = commit(&env, Some(Store::Refs), "a.txt", "detached");
    let id = the_trailer(&env, &head);
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["commit_sha"], json!(head));
    assert!(
        meta.get("branch").is_none() || meta["branch"] == json!(""),
        "no branch when detached: {meta}"
    );
}

#[test]
fn session_record_reads_the_transcript_from_stdin() {
    let env = TestEnv::new();
    let t = lines(&[LINE_1, LINE_2]);
    let out = env
        .cmd()
        .args([
            "session",
            "record",
            "--session",
            SESSION,
            "--transcript",
            "-",
        ])
        .write_stdin(t.clone())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let staged = env.common_dir().join("entire/sessions").join(SESSION);
    assert_eq!(std::fs::read(staged.join("transcript")).unwrap(), t);
}

// ---------------------------------------------------------------------------------------------
// Rewrites
// ---------------------------------------------------------------------------------------------

#[test]
fn amend_without_new_activity_keeps_the_trailer_and_writes_nothing() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1])),
        &["--prompt", "p"],
    );
    let (c1, _) = commit(&env, Some(Store::Refs), "a.txt", "to amend");
    let id = the_trailer(&env, &c1);
    let before = checkpoint_state(&env);
    env.write_file("a.txt", b"amended content\n");
    env.git(&["add", "a.txt"]);
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &["commit", "-q", "--amend", "--no-edit"],
    );
    let c2 = env.rev("HEAD").unwrap();
    assert_ne!(c1, c2);
    assert_eq!(
        trailer_ids(&env, &c2),
        std::slice::from_ref(&id),
        "the same one trailer"
    );
    assert_eq!(checkpoint_state(&env), before, "no new checkpoint commit");
    assert_eq!(env.refs_under(REFS_PREFIX).len(), 1);

    // Amending with a new message keeps the trailer too.
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &[
            "commit",
            "-q",
            "--amend",
            "-m",
            "reworded",
            "-m",
            &format!("Entire-Checkpoint: {id}"),
        ],
    );
    assert_eq!(trailer_ids(&env, "HEAD"), [id]);
    assert_eq!(checkpoint_state(&env), before);
}

/// Records more of [`SESSION`] (prompt `second`), changes `a.txt` and runs
/// `git commit -q --amend <args>`; returns the longer transcript.
pub(crate) fn amend_after_new_activity(
    env: &TestEnv,
    primary: Option<Store>,
    args: &[&str],
) -> Vec<u8> {
    let longer = lines(&[LINE_1, LINE_2, LINE_3]);
    record(
        env,
        env.repo(),
        SESSION,
        Some(&longer),
        &["--prompt", "second"],
    );
    env.write_file("a.txt", b"amended\n");
    env.git(&["add", "a.txt"]);
    let mut full = vec!["commit", "-q", "--amend"];
    full.extend_from_slice(args);
    env.git_hooked_ok(primary, env.repo(), &full);
    longer
}

#[test]
fn amend_after_new_activity_condenses_into_the_same_checkpoint_and_slot() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1, LINE_2])),
        &["--prompt", "first"],
    );
    let (c1, _) = commit(&env, Some(Store::Refs), "a.txt", "to amend");
    let id = the_trailer(&env, &c1);
    let tip1 = env.tip(Store::Refs, &id);

    let longer = amend_after_new_activity(&env, Some(Store::Refs), &["--no-edit"]);
    let c2 = env.rev("HEAD").unwrap();
    assert_eq!(
        trailer_ids(&env, &c2),
        std::slice::from_ref(&id),
        "no second ID minted"
    );
    assert_eq!(env.refs_under(REFS_PREFIX).len(), 1, "no second checkpoint");
    let tip2 = env.tip(Store::Refs, &id);
    assert_ne!(tip1, tip2, "the checkpoint was rewritten");
    assert_eq!(env.parents(&tip2), [tip1], "as a new commit on its ref");
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["commit_sha"], json!(c2), "{meta}");
    assert_eq!(meta["session_id"], json!(SESSION));
    assert!(
        !env.exists(Store::Refs, &id, "1"),
        "the same slot, not a second"
    );
    let summary = env.json(Store::Refs, &id, "metadata.json");
    assert_eq!(summary["sessions"].as_array().map(Vec::len), Some(1));
    assert_eq!(env.blob(Store::Refs, &id, "0/full.jsonl"), longer);
    let prompt = env.blob_text(Store::Refs, &id, "0/prompt.txt");
    assert!(
        prompt.contains("first") && prompt.contains("second"),
        "the amended checkpoint covers the whole window: {prompt:?}"
    );
    assert!(
        meta.get("checkpoint_transcript_start").is_none(),
        "the amended window still starts at line 0: {meta}"
    );

    // The next commit's window starts after everything the amended checkpoint covered.
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1, LINE_2, LINE_3, LINE_4])),
        &["--prompt", "third"],
    );
    let (c3, _) = commit(&env, Some(Store::Refs), "c.txt", "next");
    let id3 = the_trailer(&env, &c3);
    assert_ne!(id3, id);
    assert_eq!(env.blob_text(Store::Refs, &id3, "0/prompt.txt"), "third");
    assert_eq!(
        env.json(Store::Refs, &id3, "0/metadata.json")["checkpoint_transcript_start"],
        json!(3)
    );
}

#[test]
fn rebase_and_cherry_pick_keep_trailers_and_show_resolves_them() {
    let env = TestEnv::new();
    install_hooks(&env);
    env.git(&["checkout", "-q", "-b", "feature"]);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1])),
        &["--prompt", "p"],
    );
    let (f1, _) = commit(&env, Some(Store::Refs), "f.txt", "feature commit");
    let id = the_trailer(&env, &f1);
    env.git(&["checkout", "-q", "main"]);
    commit(&env, Some(Store::Refs), "m.txt", "main moves on");

    // cherry-pick onto main
    env.git_hooked_ok(Some(Store::Refs), env.repo(), &["cherry-pick", "feature"]);
    let picked = env.rev("HEAD").unwrap();
    assert_ne!(picked, f1);
    assert_eq!(trailer_ids(&env, &picked), std::slice::from_ref(&id));
    assert_eq!(show_json(&env, &picked)["checkpoint_id"], json!(id));

    // rebase feature onto main~1.. i.e. onto "main moves on"
    env.git(&["checkout", "-q", "feature"]);
    env.git_hooked_ok(Some(Store::Refs), env.repo(), &["rebase", "-q", "main~1"]);
    let rebased = env.rev("HEAD").unwrap();
    assert_ne!(rebased, f1);
    assert_eq!(env.subject(&rebased), "feature commit");
    assert_eq!(trailer_ids(&env, &rebased), std::slice::from_ref(&id));
    assert_eq!(show_json(&env, "HEAD")["checkpoint_id"], json!(id));
    assert_eq!(env.refs_under(REFS_PREFIX).len(), 1, "no checkpoint minted");
}

// ---------------------------------------------------------------------------------------------
// show <commit>
// ---------------------------------------------------------------------------------------------

#[test]
fn show_resolves_commits_and_a_squash_shows_both_checkpoints() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1])),
        &["--prompt", "one"],
    );
    let (c1, _) = commit(&env, Some(Store::Refs), "a.txt", "one");
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1, LINE_2])),
        &["--prompt", "two"],
    );
    let (c2, _) = commit(&env, Some(Store::Refs), "b.txt", "two");
    let id1 = the_trailer(&env, &c1);
    let id2 = the_trailer(&env, &c2);
    assert_eq!(show_json(&env, "HEAD")["checkpoint_id"], json!(id2));
    assert_eq!(show_json(&env, "main~1")["checkpoint_id"], json!(id1));
    let plain = env.ok_default(&["show", "main~1"]);
    assert!(plain.contains(&id1), "{plain}");

    // Squash both into one commit carrying both trailers.
    env.git(&["reset", "-q", "--soft", "HEAD~2"]);
    let msg = env.input_file(
        "squash-msg",
        format!("squashed\n\nEntire-Checkpoint: {id1}\nEntire-Checkpoint: {id2}\n").as_bytes(),
    );
    env.git_hooked_ok(
        Some(Store::Refs),
        env.repo(),
        &["commit", "-q", "-F", path_str(&msg)],
    );
    assert_eq!(trailer_ids(&env, "HEAD"), [id1.clone(), id2.clone()]);
    let docs = show_json(&env, "HEAD");
    let arr = docs
        .as_array()
        .unwrap_or_else(|| panic!("an array: {docs}"));
    let ids: Vec<&Value> = arr.iter().map(|d| &d["checkpoint_id"]).collect();
    assert_eq!(ids, [&json!(id1), &json!(id2)]);
    let plain = env.ok_default(&["show", "HEAD"]);
    assert!(plain.contains(&id1) && plain.contains(&id2), "{plain}");
}

// ---------------------------------------------------------------------------------------------
// Worktrees
// ---------------------------------------------------------------------------------------------

#[test]
fn a_linked_worktrees_session_is_condensed_only_by_its_own_commits() {
    let env = TestEnv::new();
    install_hooks(&env);
    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", "-b", "feature", path_str(&wt)]);
    record(
        &env,
        &wt,
        "sess-wt",
        Some(&lines(&[LINE_1])),
        &["--prompt", "in the worktree"],
    );
    let before = checkpoint_state(&env);
    let (main_commit, _) = commit(&env, Some(Store::Refs), "m.txt", "main commit");
    assert!(trailer_ids(&env, &main_commit).is_empty());
    assert_eq!(checkpoint_state(&env), before);
    assert_eq!(session_entry(&env, &wt, "sess-wt")["pending"], json!(true));

    let (wt_commit, _) = commit_in(&env, &wt, Some(Store::Refs), "w.txt", "worktree commit");
    let id = the_trailer(&env, &wt_commit);
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["session_id"], json!("sess-wt"));
    assert_eq!(meta["commit_sha"], json!(wt_commit));
    assert_eq!(meta["branch"], json!("feature"));
    assert_eq!(
        env.blob_text(Store::Refs, &id, "0/prompt.txt"),
        "in the worktree"
    );
    assert_eq!(session_entry(&env, &wt, "sess-wt")["pending"], json!(false));
}

/// A session goes with the worktree where it was last recorded: recorded in the main worktree,
/// then again from a linked one, it is condensed by the linked worktree's commit (trailer and
/// checkpoint), and the main worktree's next commit takes nothing.
#[test]
fn a_session_recorded_again_in_another_worktree_moves_there() {
    let env = TestEnv::new();
    install_hooks(&env);
    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", "-b", "feature", path_str(&wt)]);
    record(
        &env,
        env.repo(),
        SESSION,
        Some(&lines(&[LINE_1])),
        &["--prompt", "here"],
    );
    record(
        &env,
        &wt,
        SESSION,
        Some(&lines(&[LINE_1, LINE_2])),
        &["--prompt", "there"],
    );
    let (wt_commit, _) = commit_in(&env, &wt, Some(Store::Refs), "w.txt", "worktree commit");
    let id = the_trailer(&env, &wt_commit);
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["session_id"], json!(SESSION));
    assert_eq!(meta["commit_sha"], json!(wt_commit));
    assert_eq!(
        env.blob(Store::Refs, &id, "0/full.jsonl"),
        lines(&[LINE_1, LINE_2])
    );
    let before = checkpoint_state(&env);
    let (main_commit, _) = commit(&env, Some(Store::Refs), "m.txt", "main commit");
    assert!(trailer_ids(&env, &main_commit).is_empty());
    assert_eq!(checkpoint_state(&env), before);
}

fn concurrent_worktree_commits(store: Store) {
    let env = TestEnv::new();
    install_hooks(&env);
    let wts: Vec<PathBuf> = (0..2).map(|i| env.root().join(format!("wt{i}"))).collect();
    for (i, wt) in wts.iter().enumerate() {
        env.git(&[
            "worktree",
            "add",
            "-q",
            "-b",
            &format!("b{i}"),
            path_str(wt),
        ]);
        record(
            &env,
            wt,
            &format!("sess-wt{i}"),
            Some(&lines(&[LINE_1])),
            &["--prompt", &format!("prompt {i}")],
        );
        std::fs::write(wt.join(format!("f{i}.txt")), b"x\n").unwrap();
        env.git_in(wt, &["add", "."]);
    }
    let children: Vec<_> = wts
        .iter()
        .map(|wt| {
            env.git_hooked_command(Some(store), wt, &["commit", "-q", "-m", "concurrent"])
                .spawn()
                .expect("spawn git commit")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    }
    let mut ids = Vec::new();
    for (i, wt) in wts.iter().enumerate() {
        let head = env.git_in(wt, &["rev-parse", "HEAD"]).trim().to_string();
        let id = the_trailer(&env, &head);
        let meta = env.json(store, &id, "0/metadata.json");
        assert_eq!(meta["session_id"], json!(format!("sess-wt{i}")), "{meta}");
        assert_eq!(meta["commit_sha"], json!(head));
        assert!(!env.exists(store, &id, "1"), "only its own session");
        ids.push(id);
    }
    assert_ne!(ids[0], ids[1]);
}

both_stores! {
    two_worktrees_committing_at_once => concurrent_worktree_commits;
}

// ---------------------------------------------------------------------------------------------
// demo
// ---------------------------------------------------------------------------------------------

#[test]
fn demo_runs_the_whole_story() {
    let env = TestEnv::without_repo();
    let out = env
        .cmd()
        .current_dir(env.root())
        .env("PATH", path_with_bins())
        .arg("demo")
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "demo:\n{stdout}\n{}",
        text(&out.stderr)
    );
    assert!(stdout.contains("Done"), "{stdout}");
    // Each step is printed so that it can be pasted into a shell: through `sh`, the printed
    // `session record` line gives git exactly the arguments the demo used.
    let line = stdout
        .lines()
        .find(|l| l.contains("session record"))
        .unwrap_or_else(|| panic!("no session record step: {stdout}"));
    let command = line
        .strip_prefix("$ (")
        .and_then(|l| l.strip_suffix(')'))
        .and_then(|l| l.split_once(" && git "))
        .map(|(_, args)| args)
        .unwrap_or_else(|| panic!("a step is `$ (cd DIR && git ARGS)`: {line}"));
    let out = std::process::Command::new("sh")
        .args(["-c", &format!("printf '%s\\n' {command}")])
        .output()
        .unwrap();
    let argv: Vec<String> = text(&out.stdout).lines().map(str::to_owned).collect();
    assert!(
        argv.windows(2)
            .any(|w| w[0] == "--agent" && w[1] == "Demo Agent")
            && argv
                .windows(2)
                .any(|w| w[0] == "--prompt" && w[1] == "add hello.txt"),
        "the printed step splits back into the demo's arguments: {argv:?}"
    );
}
