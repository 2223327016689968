//! Checkpoints that live on a remote, end to end with a writer repository, a bare `origin` and a
//! second clone: on-demand fetch in `show`/`cat`/`log`/`backfill`, absence versus transport
//! failure, ref negotiation limited to the requested ref, `git entire-fetch` statuses, foreign
//! refs, `--for` ranges, `list --remote`, and read routing when the refs fetch fails
//! (docs/how-it-works.md, "Fetches" and "Where reads look"; docs/cli.md).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::env::{
    assert_code, assert_success, checkpoint_ids, checkpoint_ref, json_in, output_text, parse_json,
    path_str, refs_in, rev_in, stderr, text, Store, TestEnv, REFS_PREFIX,
};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2, ULID_ID};

const THIRD_HEX_ID: &str = "0123456789ab";
pub(crate) const ABSENT_ID: &str = "0badc0ffee00";
pub(crate) const PASSWORD: &str = "s3cret";
pub(crate) const SECRET_URL: &str = "https://user:s3cret@127.0.0.1:1/x.git";
/// A ref under the checkpoint prefix that is not a checkpoint (another tool's namespace).
const FOREIGN_REF: &str = "refs/entire/checkpoints/v1/main";
/// A valid ID under the wrong shard: not a checkpoint ref either.
const WRONG_SHARD_REF: &str = "refs/entire/checkpoints/zz/0123456789ab";

// ---------------------------------------------------------------------------------------------
// The world: writer repo (`env.repo()`), bare `origin`, and a second clone
// ---------------------------------------------------------------------------------------------

pub(crate) struct World {
    pub(crate) env: TestEnv,
    pub(crate) remote: PathBuf,
    pub(crate) clone: PathBuf,
}

/// A writer repository with a bare `origin` (holding `main`) and a plain `git clone` of it at
/// `<tmp>/clone` (no checkpoint refs).
pub(crate) fn world() -> World {
    let env = TestEnv::new();
    let remote = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    let clone = plain_clone(&env, &remote, "clone", &[]);
    World { env, remote, clone }
}

fn plain_clone(env: &TestEnv, remote: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let dir = env.clone_of(remote, name, extra);
    assert!(
        env.checkpoint_tips_in(&dir).is_empty(),
        "a plain clone has no checkpoint refs"
    );
    dir
}

/// Writes a checkpoint in the writer repository and pushes it with `push origin`; returns the
/// remote's tip of its ref.
pub(crate) fn publish(w: &World, id: &str, session: &str, transcript: &[u8]) -> String {
    write_std(&w.env, Store::Refs, id, session, transcript);
    let out = w.env.run_in(Store::Refs, w.env.repo(), &["push", "origin"]);
    assert_success(&out, &["push", "origin"]);
    let tip = rev_in(&w.env, &w.remote, &checkpoint_ref(id))
        .unwrap_or_else(|| panic!("push origin did not deliver {id}"));
    assert_eq!(
        w.env.rev(&checkpoint_ref(id)).as_deref(),
        Some(tip.as_str()),
        "the remote holds the writer's tip of {id}"
    );
    tip
}

/// `write --session <s> --id <id> --transcript <t>` in `dir` under git-refs.
fn write_in(env: &TestEnv, dir: &Path, id: &str, session: &str, transcript: &[u8]) -> Output {
    env.write(Store::Refs, session)
        .id(id)
        .transcript_bytes(transcript)
        .prompt("do the thing")
        .files_touched(&["a.go"])
        .in_dir(dir)
        .run()
}

/// `backfill summary <id> --summary <file>` in `dir`.
fn backfill_summary_in(env: &TestEnv, dir: &Path, id: &str, intent: &str) -> Output {
    let doc = json!({"intent": intent, "outcome": "done"});
    let file = env.input(doc.to_string().as_bytes());
    env.run_in(
        Store::Refs,
        dir,
        &["backfill", "summary", id, "--summary", path_str(&file)],
    )
}

fn parents_in(env: &TestEnv, dir: &Path, commit: &str) -> Vec<String> {
    env.git_in(dir, &["rev-list", "--parents", "-n", "1", commit])
        .split_whitespace()
        .skip(1)
        .map(str::to_string)
        .collect()
}

/// A parentless commit on the empty tree, made in `dir`.
fn empty_commit_in(env: &TestEnv, dir: &Path, message: &str) -> String {
    let tree = env.git_stdin_in(dir, &["mktree"], b"");
    assert_eq!(tree, env.empty_tree());
    env.git_stdin_in(dir, &["commit-tree", &tree], message.as_bytes())
}

/// Adds the foreign refs (not checkpoints, though under the prefix) to a bare remote.
fn add_foreign_refs(w: &World) -> String {
    let commit = empty_commit_in(&w.env, &w.remote, "someone else's ref\n");
    for r in [FOREIGN_REF, WRONG_SHARD_REF] {
        w.env.git_in(&w.remote, &["update-ref", r, &commit]);
    }
    commit
}

/// The `{"checkpoint_id": status}` map of a `git entire-fetch --json` document.
pub(crate) fn statuses(out: &Output) -> BTreeMap<String, String> {
    let v = parse_json(&out.stdout);
    let arr = v
        .as_array()
        .unwrap_or_else(|| panic!("git entire-fetch --json prints an array: {v}"));
    let mut map = BTreeMap::new();
    for e in arr {
        let id = e["checkpoint_id"]
            .as_str()
            .unwrap_or_else(|| panic!("entry without checkpoint_id: {e}"))
            .to_string();
        let status = e["status"]
            .as_str()
            .unwrap_or_else(|| panic!("entry without status: {e}"))
            .to_string();
        assert!(
            ["fetched", "present", "not_found", "diverged", "failed"].contains(&status.as_str()),
            "unknown status {status:?} in {e}"
        );
        map.insert(id, status);
    }
    map
}

fn list_json_in(env: &TestEnv, dir: &Path, args: &[&str]) -> (Vec<Value>, String) {
    let mut full = vec!["list"];
    full.extend_from_slice(args);
    full.push("--json");
    let out = env.run_in(Store::Refs, dir, &full);
    assert_code(&out, 0, &format!("{full:?}"));
    let v = parse_json(&out.stdout);
    let arr = v
        .as_array()
        .unwrap_or_else(|| panic!("list --json is an array: {v}"))
        .clone();
    (arr, stderr(&out))
}

fn entry<'a>(entries: &'a [Value], id: &str) -> &'a Value {
    entries
        .iter()
        .find(|e| e["checkpoint_id"] == json!(id))
        .unwrap_or_else(|| panic!("{id} not listed: {entries:?}"))
}

fn listed_ids(entries: &[Value]) -> BTreeSet<String> {
    checkpoint_ids(entries).into_iter().collect()
}

/// Points `origin` of `dir` at a path that does not exist.
fn break_origin(env: &TestEnv, dir: &Path) -> PathBuf {
    let missing = env.root().join("no-such-remote.git");
    env.git_in(dir, &["remote", "set-url", "origin", path_str(&missing)]);
    missing
}

/// `YYYY-MM-DDTHH:MM:SS` (UTC) of a ULID's timestamp, decoded independently of the product.
fn ulid_second(id: &str) -> String {
    const ALPHABET: &[u8] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let ms = id[..10].bytes().fold(0u64, |acc, c| {
        let v = ALPHABET
            .iter()
            .position(|&a| a == c)
            .expect("Crockford character") as u64;
        acc * 32 + v
    });
    let secs = (ms / 1000) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

// ---------------------------------------------------------------------------------------------
// On-demand fetch in read commands and backfill
// ---------------------------------------------------------------------------------------------

#[test]
fn show_in_a_fresh_clone_fetches_exactly_the_requested_ref() {
    let w = world();
    let tip = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["show", HEX_ID, "--json"]);
    assert_code(&out, 0, "show of a checkpoint only the remote has");
    let v = parse_json(&out.stdout);
    assert_eq!(v["checkpoint_id"], json!(HEX_ID));
    assert_eq!(v["store"], json!("git-refs"));
    assert_eq!(v["commit"], json!(tip));
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([(checkpoint_ref(HEX_ID), tip)]),
        "the local ref equals the remote's and no other checkpoint ref appeared"
    );
}

#[test]
fn cat_in_a_fresh_clone_fetches_exactly_the_requested_ref() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let tip = publish(&w, ULID_ID, "sess-1", TRANSCRIPT_2);
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["cat", ULID_ID, "0/full.jsonl"]);
    assert_code(&out, 0, "cat of a checkpoint only the remote has");
    assert_eq!(out.stdout, TRANSCRIPT_2, "cat prints the remote transcript");
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([(checkpoint_ref(ULID_ID), tip)]),
    );
}

#[test]
fn log_in_a_fresh_clone_fetches_exactly_the_requested_ref() {
    let w = world();
    let tip = publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["log", HEX_ID_2, "--json"]);
    assert_code(&out, 0, "log of a checkpoint only the remote has");
    let v = parse_json(&out.stdout);
    let arr = v.as_array().unwrap_or_else(|| panic!("log --json: {v}"));
    assert!(!arr.is_empty(), "the fetched history has commits: {v}");
    assert!(
        v.to_string().contains(&tip),
        "the log shows the remote tip {tip}: {v}"
    );
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([(checkpoint_ref(HEX_ID_2), tip)]),
    );
}

#[test]
fn backfill_of_a_checkpoint_missing_locally_fetches_and_builds_on_the_remote_tip() {
    let w = world();
    let tip = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    let out = backfill_summary_in(&w.env, &w.clone, HEX_ID, "Remote intent");
    assert_code(
        &out,
        0,
        "backfill summary of a checkpoint only the remote has",
    );
    let r = checkpoint_ref(HEX_ID);
    let new_tip = rev_in(&w.env, &w.clone, &r).expect("the backfilled ref exists locally");
    assert_ne!(new_tip, tip, "the backfill made a new commit");
    assert_eq!(
        parents_in(&w.env, &w.clone, &new_tip),
        vec![tip],
        "the backfill commit's parent is the remote tip"
    );
    let m0 = json_in(&w.env, &w.clone, &format!("{r}:0/metadata.json"));
    assert_eq!(m0["summary"]["intent"], json!("Remote intent"));
    assert_eq!(m0["session_id"], json!("sess-1"));
    assert_eq!(w.env.checkpoint_refs_in(&w.clone), vec![r]);
}

#[test]
fn the_only_remote_is_used_when_there_is_no_origin() {
    let w = world();
    let tip = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let upstream = plain_clone(&w.env, &w.remote, "upstream-clone", &["-o", "upstream"]);
    let out = w
        .env
        .run_in(Store::Refs, &upstream, &["show", HEX_ID, "--json"]);
    assert_code(&out, 0, "show with a single remote named upstream");
    assert_eq!(parse_json(&out.stdout)["commit"], json!(tip));
    assert_eq!(
        w.env.checkpoint_tips_in(&upstream),
        BTreeMap::from([(checkpoint_ref(HEX_ID), tip)])
    );
}

#[test]
fn remote_flag_overrides_origin_and_no_fetch_disables_it() {
    let w = world();
    let tip = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    // The clone's origin is an empty (reachable) repository; the checkpoints live on `other`.
    let empty = w.env.new_bare("empty");
    w.env
        .git_in(&w.clone, &["remote", "set-url", "origin", path_str(&empty)]);
    w.env
        .git_in(&w.clone, &["remote", "add", "other", path_str(&w.remote)]);

    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["show", HEX_ID, "--json"]);
    assert_code(&out, 3, "origin (the default) lacks the checkpoint");
    let out = w.env.run_in(
        Store::Refs,
        &w.clone,
        &[
            "show",
            HEX_ID_2,
            "--json",
            "--no-fetch",
            "--remote",
            "other",
        ],
    );
    assert_code(&out, 3, "--no-fetch wins over --remote");
    assert!(
        w.env.checkpoint_refs_in(&w.clone).is_empty(),
        "nothing fetched"
    );

    let out = w.env.run_in(
        Store::Refs,
        &w.clone,
        &["show", HEX_ID, "--json", "--remote", "other"],
    );
    assert_code(&out, 0, "show --remote other");
    assert_eq!(parse_json(&out.stdout)["commit"], json!(tip));
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([(checkpoint_ref(HEX_ID), tip)]),
        "only the requested ref came from `other`"
    );
}

#[test]
fn a_checkpoint_present_locally_never_fetches() {
    let w = world();
    let tip = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    break_origin(&w.env, w.env.repo());
    let repo = w.env.repo();
    let out = w.env.run_in(Store::Refs, repo, &["show", HEX_ID, "--json"]);
    assert_code(
        &out,
        0,
        "show of a local checkpoint with origin unreachable",
    );
    assert_eq!(parse_json(&out.stdout)["commit"], json!(tip));
    let out = w
        .env
        .run_in(Store::Refs, repo, &["cat", HEX_ID, "0/full.jsonl"]);
    assert_code(&out, 0, "cat of a local checkpoint with origin unreachable");
    assert_eq!(out.stdout, TRANSCRIPT);
    let out = w.env.run_in(Store::Refs, repo, &["log", HEX_ID, "--json"]);
    assert_code(&out, 0, "log of a local checkpoint with origin unreachable");
    let out = backfill_summary_in(&w.env, repo, HEX_ID, "Local intent");
    assert_code(
        &out,
        0,
        "backfill of a local checkpoint with origin unreachable",
    );
    let new_tip = w.env.rev(&checkpoint_ref(HEX_ID)).unwrap();
    assert_eq!(w.env.parents(&new_tip), vec![tip]);
}

#[test]
fn write_never_fetches() {
    // Unreachable origin: a write of a new checkpoint succeeds.
    let w = world();
    break_origin(&w.env, &w.clone);
    let out = write_in(&w.env, &w.clone, HEX_ID, "sess-1", TRANSCRIPT);
    assert_code(&out, 0, "write with origin unreachable");
    assert!(rev_in(&w.env, &w.clone, &checkpoint_ref(HEX_ID)).is_some());

    // Reachable origin that holds the same ID: the write creates it locally from scratch and
    // fetches nothing (a create never consults the remote; push merges later).
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    let out = write_in(&w.env, &w.clone, HEX_ID, "sess-9", TRANSCRIPT_2);
    assert_code(&out, 0, "write of an ID the remote has");
    let r = checkpoint_ref(HEX_ID);
    let local = rev_in(&w.env, &w.clone, &r).expect("the written ref");
    assert!(
        parents_in(&w.env, &w.clone, &local).is_empty(),
        "the create did not build on the remote's commit"
    );
    let root = json_in(&w.env, &w.clone, &format!("{r}:metadata.json"));
    assert_eq!(
        root["sessions"].as_array().map(Vec::len),
        Some(1),
        "only the locally written session: {root}"
    );
    assert_eq!(w.env.checkpoint_refs_in(&w.clone), vec![r]);
}

// ---------------------------------------------------------------------------------------------
// Absent versus failure
// ---------------------------------------------------------------------------------------------

/// The four commands that fetch on demand, for a checkpoint `id`.
fn on_demand_commands(env: &TestEnv, id: &str) -> Vec<Vec<String>> {
    let summary = env.input(br#"{"intent":"x","outcome":"y"}"#);
    vec![
        vec!["show".into(), id.into(), "--json".into()],
        vec!["cat".into(), id.into(), "metadata.json".into()],
        vec!["log".into(), id.into(), "--json".into()],
        vec![
            "backfill".into(),
            "summary".into(),
            id.into(),
            "--summary".into(),
            path_str(&summary).into(),
        ],
    ]
}

fn run_owned(env: &TestEnv, dir: &Path, args: &[String]) -> Output {
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    env.run_in(Store::Refs, dir, &args)
}

#[test]
fn an_id_the_remote_lacks_exits_3_in_every_fetching_command() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    for args in on_demand_commands(&w.env, ABSENT_ID) {
        let out = run_owned(&w.env, &w.clone, &args);
        assert_code(&out, 3, &format!("{args:?} of an ID the remote lacks"));
    }
    let out = w.env.fetch_in(&w.clone, &["origin", ABSENT_ID, "--json"]);
    assert_code(&out, 3, "git entire-fetch of an ID the remote lacks");
    assert_eq!(
        statuses(&out),
        BTreeMap::from([(ABSENT_ID.to_string(), "not_found".to_string())])
    );
    assert!(w.env.checkpoint_refs_in(&w.clone).is_empty());
}

#[test]
fn no_remotes_means_absent_exit_3() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    for args in on_demand_commands(&env, ABSENT_ID) {
        let out = run_owned(&env, env.repo(), &args);
        assert_code(&out, 3, &format!("{args:?} without any remote"));
    }
}

#[test]
fn an_unreachable_remote_is_exit_1_naming_it_never_not_found() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let missing = break_origin(&w.env, &w.clone);
    let missing = path_str(&missing).to_string();
    let mut runs: Vec<(String, Output)> = on_demand_commands(&w.env, HEX_ID)
        .into_iter()
        .map(|args| (format!("{args:?}"), run_owned(&w.env, &w.clone, &args)))
        .collect();
    runs.push((
        "git entire-fetch origin <id>".into(),
        w.env.fetch_in(&w.clone, &["origin", HEX_ID]),
    ));
    for (what, out) in runs {
        let stderr = assert_code(&out, 1, &format!("{what} with origin unreachable"));
        assert!(
            stderr.contains("origin") || stderr.contains(&missing),
            "{what}: the message names the remote:\n{stderr}"
        );
        assert!(
            !stderr.to_lowercase().contains("not found"),
            "{what}: a transport failure is never reported as not found:\n{stderr}"
        );
    }
    assert!(w.env.checkpoint_refs_in(&w.clone).is_empty());
}

#[test]
fn entire_fetch_json_reports_failed_for_an_unreachable_remote() {
    let w = world();
    break_origin(&w.env, &w.clone);
    let out = w.env.fetch_in(&w.clone, &["origin", HEX_ID, "--json"]);
    assert_code(&out, 1, "git entire-fetch --json with origin unreachable");
    assert_eq!(
        statuses(&out),
        BTreeMap::from([(HEX_ID.to_string(), "failed".to_string())])
    );
}

#[test]
fn a_password_in_the_remote_url_is_never_printed() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID_2, "sess-1", TRANSCRIPT);
    env.git(&["remote", "add", "origin", SECRET_URL]);
    let mut runs: Vec<(String, Output)> = on_demand_commands(&env, HEX_ID)
        .into_iter()
        .map(|args| (format!("{args:?}"), run_owned(&env, env.repo(), &args)))
        .collect();
    for args in [
        vec!["origin", HEX_ID],
        vec!["origin", HEX_ID, "--json"],
        vec!["--all"],
    ] {
        runs.push((
            format!("git entire-fetch {args:?}"),
            env.fetch_in(env.repo(), &args),
        ));
    }
    for args in [
        vec!["list", "--remote"],
        vec!["list", "--remote", "--json"],
        vec!["show", HEX_ID, "--remote", SECRET_URL],
    ] {
        runs.push((
            format!("{args:?}"),
            env.run_in(Store::Refs, env.repo(), &args),
        ));
    }
    for (what, out) in runs {
        let all = format!("{}{}", text(&out.stdout), stderr(&out));
        assert!(
            !all.contains(PASSWORD),
            "{what} printed the password:\n{all}"
        );
        if what.starts_with("[\"show\"") {
            assert_code(&out, 1, &what);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Only the requested ref is negotiated
// ---------------------------------------------------------------------------------------------

/// Distinct `refs/entire/checkpoints/...` names mentioned in a packet trace.
fn checkpoint_names_in_trace(trace: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for token in trace.split(|c: char| c.is_whitespace() || c == '\0') {
        if let Some(pos) = token.find(REFS_PREFIX) {
            let name = token[pos..]
                .trim_end_matches("^{}")
                .trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
            names.insert(name.to_string());
        }
    }
    names
}

#[test]
fn only_the_requested_ref_is_negotiated_among_2000() {
    let w = world();
    let tip = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let filler = empty_commit_in(&w.env, &w.remote, "filler\n");
    let mut lines = String::new();
    for i in 0..2000u64 {
        let id = format!("{:012x}", 0x1000_0000_0000u64 + i);
        lines.push_str(&format!("create {} {filler}\n", checkpoint_ref(&id)));
    }
    w.env
        .git_stdin_in(&w.remote, &["update-ref", "--stdin"], lines.as_bytes());
    assert_eq!(w.env.checkpoint_tips_in(&w.remote).len(), 2001);

    let trace = w.env.root().join("packet-trace.txt");
    let out = w
        .env
        .cmd_as(Store::Refs)
        .current_dir(&w.clone)
        .env("GIT_TRACE_PACKET", &trace)
        .args(["show", HEX_ID, "--json"])
        .output()
        .expect("run show");
    assert_code(&out, 0, "show among 2000 remote checkpoints");
    assert_eq!(parse_json(&out.stdout)["commit"], json!(tip));
    let text = std::fs::read_to_string(&trace).unwrap_or_else(|e| {
        panic!(
            "GIT_TRACE_PACKET file {} not written ({e}): did show talk to the remote?",
            trace.display()
        )
    });
    let names = checkpoint_names_in_trace(&text);
    assert!(
        !names.is_empty() && names.len() <= 5,
        "the packet trace should mention only the requested checkpoint ref, found {} names \
         (first: {:?})",
        names.len(),
        names.iter().take(5).collect::<Vec<_>>()
    );
    assert!(
        names.contains(&checkpoint_ref(HEX_ID)),
        "the requested ref was negotiated: {names:?}"
    );
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([(checkpoint_ref(HEX_ID), tip)]),
        "exactly one checkpoint ref exists locally"
    );
}

// ---------------------------------------------------------------------------------------------
// git entire-fetch
// ---------------------------------------------------------------------------------------------

#[test]
fn entire_fetch_json_reports_fetched_present_and_not_found() {
    let w = world();
    let a = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let b = publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    let out = w.env.fetch_in(&w.clone, &["origin", HEX_ID, "--json"]);
    assert_code(&out, 0, "fetch one");
    assert_eq!(
        statuses(&out),
        BTreeMap::from([(HEX_ID.to_string(), "fetched".to_string())])
    );
    let out = w
        .env
        .fetch_in(&w.clone, &["origin", HEX_ID, HEX_ID_2, "--json"]);
    assert_code(&out, 0, "fetch a present and a missing one");
    assert_eq!(
        statuses(&out),
        BTreeMap::from([
            (HEX_ID.to_string(), "present".to_string()),
            (HEX_ID_2.to_string(), "fetched".to_string()),
        ])
    );
    let out = w.env.fetch_in(&w.clone, &[HEX_ID, ABSENT_ID, "--json"]);
    assert_code(&out, 3, "a named ID exists nowhere");
    assert_eq!(
        statuses(&out),
        BTreeMap::from([
            (HEX_ID.to_string(), "present".to_string()),
            (ABSENT_ID.to_string(), "not_found".to_string()),
        ])
    );
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([(checkpoint_ref(HEX_ID), a), (checkpoint_ref(HEX_ID_2), b)])
    );
}

#[test]
fn fetch_all_again_reports_present_fetches_nothing_and_sums_up() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    let first = w.env.fetch_in(&w.clone, &["origin", "--all"]);
    let stderr = assert_code(&first, 0, "first fetch --all");
    assert!(
        stderr.contains("entire: fetched 2, already present 0"),
        "{stderr}"
    );
    assert_eq!(String::from_utf8_lossy(&first.stdout).lines().count(), 2);
    let before = w.env.checkpoint_tips_in(&w.clone);
    let trace = w.env.root().join("again-trace.txt");
    let again = w
        .env
        .bin_cmd(&crate::env::fetch_bin())
        .current_dir(&w.clone)
        .env("GIT_TRACE", &trace)
        .args(["origin", "--all"])
        .output()
        .unwrap();
    let stderr = assert_code(&again, 0, "second fetch --all");
    assert!(
        stderr.contains("entire: fetched 0, already present 2"),
        "{stderr}"
    );
    assert!(again.stdout.is_empty(), "nothing new to report on stdout");
    let traced = std::fs::read_to_string(&trace).unwrap_or_default();
    assert!(
        !traced
            .lines()
            // The v1 branch and the archived layouts are fetched again (into their copies, in
            // the side repository's `refs/fetched/`); no checkpoint ref is.
            .any(|l| l.contains("git fetch")
                && l.contains("refs/entire/checkpoints/")
                && !l.contains("refs/fetched/")),
        "no checkpoint ref was fetched again:\n{traced}"
    );
    assert_eq!(w.env.checkpoint_tips_in(&w.clone), before);
    let json = w.env.fetch_in(&w.clone, &["origin", "--all", "--json"]);
    assert_eq!(
        statuses(&json),
        BTreeMap::from([
            (HEX_ID.to_string(), "present".to_string()),
            (ULID_ID.to_string(), "present".to_string()),
        ])
    );
}

#[test]
fn fetch_all_leaves_foreign_refs_on_the_remote() {
    let w = world();
    let a = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let b = publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    add_foreign_refs(&w);
    let out = w.env.fetch_in(&w.clone, &["origin", "--all", "--json"]);
    assert_code(&out, 0, "fetch --all");
    let st = statuses(&out);
    assert_eq!(
        st.get(HEX_ID).map(String::as_str),
        Some("fetched"),
        "{st:?}"
    );
    assert_eq!(
        st.get(ULID_ID).map(String::as_str),
        Some("fetched"),
        "{st:?}"
    );
    assert_eq!(st.len(), 2, "only checkpoints are reported: {st:?}");
    assert_eq!(
        refs_in(&w.env, &w.clone, "refs/entire/"),
        BTreeMap::from([(checkpoint_ref(HEX_ID), a), (checkpoint_ref(ULID_ID), b)]),
        "foreign refs under the prefix are not fetched"
    );
}

#[test]
fn fetch_all_never_rewinds_a_local_checkpoint_that_is_ahead() {
    let w = world();
    let remote_tip = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let other = publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    let out = w.env.fetch_in(&w.clone, &["origin", HEX_ID]);
    assert_code(&out, 0, "fetch one");
    let out = write_in(&w.env, &w.clone, HEX_ID, "sess-2", TRANSCRIPT_2);
    assert_code(&out, 0, "advance the local checkpoint");
    let ahead = rev_in(&w.env, &w.clone, &checkpoint_ref(HEX_ID)).unwrap();
    assert_eq!(
        parents_in(&w.env, &w.clone, &ahead),
        vec![remote_tip],
        "the local checkpoint is strictly ahead of the remote's tip"
    );
    let out = w.env.fetch_in(&w.clone, &["origin", "--all", "--json"]);
    assert_code(&out, 0, "fetch --all with a local checkpoint ahead");
    let st = statuses(&out);
    assert!(
        !matches!(
            st.get(HEX_ID).map(String::as_str),
            Some("diverged" | "failed")
        ),
        "a checkpoint ahead of the remote is neither diverged nor failed: {st:?}"
    );
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([
            (checkpoint_ref(HEX_ID), ahead),
            (checkpoint_ref(HEX_ID_2), other),
        ]),
        "the local checkpoint ahead is not rewound"
    );
}

#[test]
fn fetch_all_reports_a_diverged_checkpoint_and_keeps_the_local_hash() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let out = w.env.fetch_in(&w.clone, &["origin", HEX_ID]);
    assert_code(&out, 0, "fetch one");
    let remote_tip = publish(&w, HEX_ID, "sess-2", TRANSCRIPT_2);
    let out = write_in(&w.env, &w.clone, HEX_ID, "sess-3", TRANSCRIPT_2);
    assert_code(&out, 0, "advance the clone's copy differently");
    let local = rev_in(&w.env, &w.clone, &checkpoint_ref(HEX_ID)).unwrap();
    assert_ne!(local, remote_tip);
    let out = w.env.fetch_in(&w.clone, &["origin", "--all", "--json"]);
    let st = statuses(&out);
    assert_eq!(
        st.get(HEX_ID).map(String::as_str),
        Some("diverged"),
        "stderr:\n{}",
        stderr(&out)
    );
    assert_eq!(
        rev_in(&w.env, &w.clone, &checkpoint_ref(HEX_ID)),
        Some(local),
        "a diverged checkpoint keeps its local hash"
    );
}

/// Commits an empty change in `dir` with `message`.
fn commit_in(env: &TestEnv, dir: &Path, message: &str) {
    env.git_in(dir, &["commit", "-q", "--allow-empty", "-m", message]);
}

#[test]
fn fetch_for_counts_every_trailer_skips_present_ones_and_warns_on_malformed() {
    let w = world();
    let a = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let b = publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    let c = publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    publish(&w, THIRD_HEX_ID, "sess-1", TRANSCRIPT);
    // The clone already has HEX_ID_2.
    let out = w.env.fetch_in(&w.clone, &["origin", HEX_ID_2]);
    assert_code(&out, 0, "fetch one");
    commit_in(
        &w.env,
        &w.clone,
        &format!(
            "several\n\nEntire-Checkpoint: {HEX_ID}\nEntire-Checkpoint: {HEX_ID_2}\nEntire-Checkpoint: {ULID_ID}\n"
        ),
    );
    commit_in(
        &w.env,
        &w.clone,
        "broken\n\nEntire-Checkpoint: not-a-checkpoint\n",
    );
    commit_in(&w.env, &w.clone, "plain commit\n");
    let out = w.env.fetch_in(
        &w.clone,
        &["origin", "--for", "origin/main..HEAD", "--json"],
    );
    let stderr = assert_code(&out, 0, "fetch --for origin/main..HEAD");
    assert_eq!(
        statuses(&out),
        BTreeMap::from([
            (HEX_ID.to_string(), "fetched".to_string()),
            (HEX_ID_2.to_string(), "present".to_string()),
            (ULID_ID.to_string(), "fetched".to_string()),
        ])
    );
    assert!(
        stderr.contains("not-a-checkpoint"),
        "a malformed trailer ID gives a warning naming it:\n{stderr}"
    );
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([
            (checkpoint_ref(HEX_ID), a),
            (checkpoint_ref(HEX_ID_2), b),
            (checkpoint_ref(ULID_ID), c),
        ]),
        "exactly the trailers' checkpoints, nothing else"
    );
}

#[test]
fn fetch_for_a_range_without_trailers_fetches_nothing() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    commit_in(&w.env, &w.clone, "no trailers here\n");
    let out = w.env.fetch_in(
        &w.clone,
        &["origin", "--for", "origin/main..HEAD", "--json"],
    );
    assert_code(&out, 0, "fetch --for a range without trailers");
    assert!(statuses(&out).is_empty());
    let out = w.env.fetch_in(&w.clone, &["--for", "origin/main..HEAD"]);
    assert_code(&out, 0, "fetch --for (default remote) without trailers");
    assert!(w.env.checkpoint_refs_in(&w.clone).is_empty());
}

// ---------------------------------------------------------------------------------------------
// list --remote
// ---------------------------------------------------------------------------------------------

#[test]
fn list_remote_adds_remote_only_checkpoints() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    publish(&w, HEX_ID_2, "sess-1", TRANSCRIPT);
    publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    add_foreign_refs(&w);
    let out = w.env.fetch_in(&w.clone, &["origin", HEX_ID]);
    assert_code(&out, 0, "fetch one");

    let (local, _) = list_json_in(&w.env, &w.clone, &[]);
    assert_eq!(
        listed_ids(&local),
        BTreeSet::from([HEX_ID.to_string()]),
        "plain list shows local checkpoints only"
    );
    let expected = BTreeSet::from([
        HEX_ID.to_string(),
        HEX_ID_2.to_string(),
        ULID_ID.to_string(),
    ]);
    for args in [vec!["--remote"], vec!["--remote", "origin"]] {
        let (entries, _) = list_json_in(&w.env, &w.clone, &args);
        assert_eq!(
            listed_ids(&entries),
            expected,
            "list {args:?}: local plus remote-only, foreign refs not listed: {entries:?}"
        );
        assert_eq!(entries.len(), 3, "each checkpoint once: {entries:?}");
        assert_eq!(entry(&entries, HEX_ID)["remote_only"], json!(false));
        let hex = entry(&entries, HEX_ID_2);
        assert_eq!(hex["remote_only"], json!(true), "{hex}");
        assert_eq!(
            hex["created_at"],
            json!(null),
            "a hex stub has no time: {hex}"
        );
        let ulid = entry(&entries, ULID_ID);
        assert_eq!(ulid["remote_only"], json!(true), "{ulid}");
        let created = ulid["created_at"].as_str().unwrap_or_default();
        assert!(
            created.starts_with(&ulid_second(ULID_ID)),
            "a ULID stub's created_at comes from the ULID ({}): {ulid}",
            ulid_second(ULID_ID)
        );
    }
    let human = w.env.run_in(Store::Refs, &w.clone, &["list", "--remote"]);
    let text = String::from_utf8_lossy(&human.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with(HEX_ID_2))
        .unwrap_or_default();
    assert!(
        line.contains("? sessions") && line.contains("(remote only)"),
        "a remote-only checkpoint's session count is unknown, not 0: {text}"
    );
}

#[test]
fn list_remote_with_an_unreachable_remote_lists_local_and_fails_once() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let out = w.env.fetch_in(&w.clone, &["origin", HEX_ID]);
    assert_code(&out, 0, "fetch one");
    break_origin(&w.env, &w.clone);
    let (local, _) = list_json_in(&w.env, &w.clone, &[]);
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["list", "--remote", "--json"]);
    let stderr = assert_code(&out, 1, "list --remote of an unreachable remote");
    let entries = parse_json(&out.stdout);
    assert_eq!(entries.as_array(), Some(&local), "the local list");
    // One error of ours, then what git said on its own line.
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("git said: "))
        .collect();
    assert_eq!(lines.len(), 1, "exactly one error:\n{stderr}");
    assert!(lines[0].contains("origin"), "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// Routing with fetch
// ---------------------------------------------------------------------------------------------

#[test]
fn a_v1_hex_checkpoint_is_shown_when_the_refs_fetch_fails() {
    let env = TestEnv::new();
    write_std(&env, Store::Branch, HEX_ID, "sess-1", TRANSCRIPT);
    assert!(env.refs_under(REFS_PREFIX).is_empty());
    let missing = env.root().join("no-such-remote.git");
    env.git(&["remote", "add", "origin", path_str(&missing)]);
    let out = env.run_in(Store::Refs, env.repo(), &["show", HEX_ID, "--json"]);
    assert_code(
        &out,
        0,
        "show of a v1-only hex checkpoint, refs fetch failing",
    );
    let v = parse_json(&out.stdout);
    assert_eq!(v["store"], json!("git-branch"));
    assert_eq!(v["checkpoint_id"], json!(HEX_ID));
}

// ---------------------------------------------------------------------------------------------
// More of the same contract: side effects of an on-demand fetch, every command under
// `--no-fetch` and against a refusing remote, `--all` fast-forwards, the shape of remote-only
// list entries, and routing that never serves a ULID from the branch
// ---------------------------------------------------------------------------------------------

/// A second ULID (canonical: Crockford base32, first character `0`–`7`).
const ULID_ID_2: &str = "01KVBJCWYB7Q2M3N4P5R6S8T9V";
/// A remote that refuses us (nothing listens on port 1): stands in for a rejected auth.
const REFUSING_URL: &str = "https://127.0.0.1:1/x.git";

/// Directories left under the common dir's `entire/tmp` (where side repositories live).
fn leftover_tmp_dirs(env: &TestEnv, dir: &Path) -> Vec<PathBuf> {
    let tmp = env.common_dir_in(dir).join("entire").join("tmp");
    std::fs::read_dir(tmp)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.path())
                .filter(|p| p.is_dir())
                .collect()
        })
        .unwrap_or_default()
}

/// Asserts exit 1 with a message naming `remote`, and never "not found".
fn assert_remote_failure(out: &Output, remote: &str, what: &str) {
    let stderr = assert_code(out, 1, what);
    assert!(
        stderr.contains(remote),
        "{what}: the message names the remote {remote:?}:\n{stderr}"
    );
    assert!(
        !stderr.to_lowercase().contains("not found"),
        "{what}: a transport failure is never reported as not found:\n{stderr}"
    );
}

/// Milliseconds since the epoch in a ULID's first ten characters.
fn ulid_ms(id: &str) -> i128 {
    const ALPHABET: &str = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    id[..10].chars().fold(0i128, |acc, c| {
        acc * 32 + ALPHABET.find(c).expect("Crockford character") as i128
    })
}

fn rfc3339_ms(s: &str) -> i128 {
    let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|e| panic!("created_at {s:?} is not RFC 3339: {e}"));
    t.unix_timestamp_nanos() / 1_000_000
}

/// An on-demand fetch changes nothing but the one checkpoint ref: every other ref of the clone
/// (branches, remote-tracking refs, tags) is as it was, the clone's `FETCH_HEAD` is not written
/// (`--no-write-fetch-head` in a side repository), and no side repository is left behind.
#[test]
fn an_on_demand_fetch_changes_nothing_but_the_one_ref() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let tip = publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    w.env.git_in(&w.remote, &["tag", "v1.0", "main"]);
    let fetch_head = w.env.common_dir_in(&w.clone).join("FETCH_HEAD");
    let fetch_head_before = std::fs::read(&fetch_head).ok();
    let before = refs_in(&w.env, &w.clone, "refs/");
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["show", ULID_ID, "--json"]);
    assert_code(&out, 0, "show of a checkpoint only the remote has");
    let mut expected = before.clone();
    expected.insert(checkpoint_ref(ULID_ID), tip.clone());
    assert_eq!(
        refs_in(&w.env, &w.clone, "refs/"),
        expected,
        "exactly the requested checkpoint ref appeared; no other ref (no tag, no \
         remote-tracking ref) changed"
    );
    assert_eq!(
        rev_in(&w.env, &w.clone, &checkpoint_ref(ULID_ID)),
        rev_in(&w.env, &w.remote, &checkpoint_ref(ULID_ID)),
        "the local ref equals the remote's"
    );
    assert_eq!(
        std::fs::read(&fetch_head).ok(),
        fetch_head_before,
        "the clone's FETCH_HEAD is not written"
    );
    assert_eq!(
        leftover_tmp_dirs(&w.env, &w.clone),
        Vec::<PathBuf>::new(),
        "the temporary side repository is removed"
    );
    // Now local: it reads with the remote gone.
    break_origin(&w.env, &w.clone);
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["show", ULID_ID, "--json"]);
    assert_code(&out, 0, "show of a fetched checkpoint without the remote");
    assert_eq!(parse_json(&out.stdout)["commit"], json!(tip));
}

/// `--no-fetch` disables the on-demand fetch of `cat`, `log` and `backfill` too: exit 3 and no
/// ref appears; without it the same `cat` fetches.
#[test]
fn no_fetch_disables_the_on_demand_fetch_of_every_command() {
    let w = world();
    let tip = publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    let before = refs_in(&w.env, &w.clone, "refs/");
    for mut args in on_demand_commands(&w.env, ULID_ID) {
        args.push("--no-fetch".into());
        let out = run_owned(&w.env, &w.clone, &args);
        assert_code(
            &out,
            3,
            &format!("{args:?} of a checkpoint only the remote has"),
        );
        assert_eq!(
            refs_in(&w.env, &w.clone, "refs/"),
            before,
            "{args:?} fetched nothing"
        );
    }
    let out = w
        .env
        .run_in(Store::Refs, &w.clone, &["cat", ULID_ID, "0/full.jsonl"]);
    assert_code(&out, 0, "cat without --no-fetch");
    assert_eq!(out.stdout, TRANSCRIPT);
    assert_eq!(
        rev_in(&w.env, &w.clone, &checkpoint_ref(ULID_ID)),
        Some(tip)
    );
}

/// A remote that refuses the connection (as a rejected authentication would) is a failure for
/// every command, exit 1 naming that remote, never "not found" — also when chosen with
/// `--remote`, and for `git entire-fetch`.
#[test]
fn a_refusing_remote_is_exit_1_naming_it_for_every_command() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    w.env
        .git_in(&w.clone, &["remote", "add", "refusing", REFUSING_URL]);
    for id in [HEX_ID, ULID_ID_2] {
        for mut args in on_demand_commands(&w.env, id) {
            args.extend(["--remote".to_string(), "refusing".to_string()]);
            let out = run_owned(&w.env, &w.clone, &args);
            assert_remote_failure(&out, "refusing", &format!("{args:?}"));
        }
    }
    let out = w
        .env
        .fetch_in(&w.clone, &["refusing", HEX_ID, ULID_ID_2, "--json"]);
    assert_remote_failure(&out, "refusing", "git entire-fetch refusing <ids> --json");
    for (id, status) in statuses(&out) {
        assert_eq!(status, "failed", "{id} through a refusing remote");
    }
    let out = w.env.fetch_in(&w.clone, &["refusing", "--all"]);
    assert_remote_failure(&out, "refusing", "git entire-fetch refusing --all");
    assert!(
        w.env.checkpoint_refs_in(&w.clone).is_empty(),
        "nothing fetched"
    );
}

/// A password in a URL given on the command line (`--remote <url>`, or the remote argument of
/// `git entire-fetch`) is never printed either, at any verbosity.
#[test]
fn a_password_in_a_url_given_on_the_command_line_is_never_printed() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID_2, "sess-1", TRANSCRIPT);
    let mut runs: Vec<(String, Output)> = Vec::new();
    for args in on_demand_commands(&env, ULID_ID) {
        let mut with = args.clone();
        with.extend(["--remote".to_string(), SECRET_URL.to_string()]);
        runs.push((format!("{with:?}"), run_owned(&env, env.repo(), &with)));
        let mut verbose = vec!["-vv".to_string()];
        verbose.extend(with);
        runs.push((
            format!("{verbose:?}"),
            run_owned(&env, env.repo(), &verbose),
        ));
    }
    runs.push((
        "list --remote <url> --json".into(),
        env.run_in(
            Store::Refs,
            env.repo(),
            &["list", "--remote", SECRET_URL, "--json"],
        ),
    ));
    for args in [
        vec![SECRET_URL, ULID_ID],
        vec![SECRET_URL, ULID_ID, "--json"],
        vec![SECRET_URL, "--all", "--json"],
    ] {
        runs.push((
            format!("git entire-fetch {args:?}"),
            env.fetch_in(env.repo(), &args),
        ));
    }
    for (what, out) in &runs {
        let all = output_text(out);
        assert!(
            !all.contains(PASSWORD),
            "{what} printed the password:\n{all}"
        );
    }
    let out = env.fetch_in(env.repo(), &[SECRET_URL, ULID_ID]);
    assert_code(&out, 1, "git entire-fetch <unreachable url> <id>");
}

/// A named ID that exists nowhere makes `git entire-fetch` exit 3, but the named IDs that do
/// exist are still fetched, and IDs not named are not.
#[test]
fn a_missing_named_id_does_not_stop_the_others() {
    let w = world();
    let a = publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    publish(&w, ULID_ID_2, "sess-1", TRANSCRIPT);
    let out = w.env.fetch_in(&w.clone, &[ABSENT_ID, ULID_ID, "--json"]);
    let stderr = assert_code(&out, 3, "one named ID exists nowhere");
    assert!(
        stderr.contains(ABSENT_ID),
        "the missing ID is named:\n{stderr}"
    );
    assert_eq!(
        statuses(&out),
        BTreeMap::from([
            (ABSENT_ID.to_string(), "not_found".to_string()),
            (ULID_ID.to_string(), "fetched".to_string()),
        ])
    );
    assert_eq!(
        w.env.checkpoint_tips_in(&w.clone),
        BTreeMap::from([(checkpoint_ref(ULID_ID), a)]),
        "the existing one was fetched, the unnamed one was not"
    );
}

/// `--all` fast-forwards a local checkpoint that is behind the remote.
#[test]
fn fetch_all_fast_forwards_a_checkpoint_behind_the_remote() {
    let w = world();
    let first = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    let out = w.env.fetch_in(&w.clone, &["origin", HEX_ID]);
    assert_code(&out, 0, "fetch one");
    let second = publish(&w, HEX_ID, "sess-2", TRANSCRIPT_2);
    assert_eq!(parents_in(&w.env, &w.remote, &second), vec![first]);
    let out = w.env.fetch_in(&w.clone, &["--all", "--json"]);
    assert_code(&out, 0, "fetch --all with a checkpoint behind");
    assert_eq!(
        statuses(&out).get(HEX_ID).map(String::as_str),
        Some("fetched")
    );
    assert_eq!(
        rev_in(&w.env, &w.clone, &checkpoint_ref(HEX_ID)),
        Some(second),
        "the local ref fast-forwarded to the remote's tip"
    );
}

/// A remote-only entry of `list --remote` has the same keys, in the same order, as a local
/// entry; a ULID's `created_at` is exactly its ULID time; a checkpoint only the clone has stays
/// a local entry; and listing fetches nothing (names only).
#[test]
fn list_remote_entries_have_the_local_shape_and_nothing_is_fetched() {
    let w = world();
    publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    publish(&w, ULID_ID, "sess-1", TRANSCRIPT);
    let out = write_in(&w.env, &w.clone, ULID_ID_2, "clone-sess", TRANSCRIPT_2);
    assert_code(&out, 0, "a checkpoint only the clone has");
    let before = refs_in(&w.env, &w.clone, "refs/");
    let (entries, _) = list_json_in(&w.env, &w.clone, &["--remote"]);
    assert_eq!(
        listed_ids(&entries),
        BTreeSet::from([
            HEX_ID.to_string(),
            ULID_ID.to_string(),
            ULID_ID_2.to_string()
        ])
    );
    let local = entry(&entries, ULID_ID_2);
    assert_eq!(local["remote_only"], json!(false), "{local}");
    assert_eq!(local["session_ids"], json!(["clone-sess"]), "{local}");
    for id in [HEX_ID, ULID_ID] {
        let e = entry(&entries, id);
        assert_eq!(e["remote_only"], json!(true), "{e}");
        assert_eq!(
            crate::env::keys(e),
            crate::env::keys(local),
            "a remote-only entry has the shape of a local one"
        );
    }
    let created = entry(&entries, ULID_ID)["created_at"]
        .as_str()
        .expect("created_at string")
        .to_string();
    assert_eq!(
        rfc3339_ms(&created),
        ulid_ms(ULID_ID),
        "created_at of a remote-only ULID is its ULID time"
    );
    assert_eq!(
        refs_in(&w.env, &w.clone, "refs/"),
        before,
        "list --remote enumerates names; it fetches nothing"
    );
}

/// With the refs fetch failing, a v1-only hex checkpoint is still served to `cat` and to
/// `show --remote <refusing>` from the branch; a ULID is never served from the branch, so its
/// fetch failure stays a failure (exit 1), even when a stray copy sits on the v1 branch (laid
/// out by hand: the CLI refuses to write one there).
#[test]
fn routing_serves_hex_from_the_branch_but_never_a_ulid_when_the_fetch_fails() {
    let env = TestEnv::new();
    crate::fixtures::hand_made(&env, Store::Branch, ULID_ID, None);
    write_std(&env, Store::Branch, HEX_ID, "branch-sess", TRANSCRIPT);
    let stray = format!(
        "{}:{}/metadata.json",
        crate::env::V1_BRANCH,
        crate::env::branch_dir(ULID_ID)
    );
    assert!(
        env.git_output(&["cat-file", "-e", &stray]).status.success(),
        "the stray ULID copy is on the v1 branch"
    );
    assert!(env.refs_under(REFS_PREFIX).is_empty());
    let missing = env.root().join("no-such-remote.git");
    env.git(&["remote", "add", "origin", path_str(&missing)]);
    let out = env.run_in(Store::Refs, env.repo(), &["cat", HEX_ID, "0/full.jsonl"]);
    assert_code(
        &out,
        0,
        "cat of a v1-only hex checkpoint, refs fetch failing",
    );
    assert_eq!(out.stdout, TRANSCRIPT);
    let out = env.run_in(
        Store::Refs,
        env.repo(),
        &["show", HEX_ID, "--json", "--remote", REFUSING_URL],
    );
    assert_code(
        &out,
        0,
        "show of a v1-only hex checkpoint, --remote refusing",
    );
    let v = parse_json(&out.stdout);
    assert_eq!(v["store"], json!("git-branch"), "{v}");
    assert_eq!(v["sessions"][0]["session_id"], json!("branch-sess"));
    let out = env.run_in(Store::Refs, env.repo(), &["show", ULID_ID, "--json"]);
    assert_remote_failure(&out, "origin", "show of a ULID with origin unreachable");
}

/// The README's `pullc` alias, with the arguments git appends to it.
const README_PULLC: &str = "!f() { git pull \"$@\" && git entire-fetch --for ORIG_HEAD..HEAD; }; f";

#[test]
fn the_readme_pullc_alias_pulls_and_fetches_the_new_commits_checkpoints() {
    let readme = include_str!("../../README.md");
    assert!(
        readme.contains(&format!("git config alias.pullc '{README_PULLC}'")),
        "the test runs the alias the README gives"
    );
    let w = world();
    let tip = publish(&w, HEX_ID, "sess-1", TRANSCRIPT);
    w.env.write_file("work.txt", b"work\n");
    w.env.git(&["add", "work.txt"]);
    w.env.git(&[
        "commit",
        "-q",
        "-m",
        &format!("Work\n\nEntire-Checkpoint: {HEX_ID}\n"),
    ]);
    w.env.git(&["push", "-q", "origin", "main"]);
    w.env
        .git_in(&w.clone, &["config", "alias.pullc", README_PULLC]);
    w.env.git_in(&w.clone, &["config", "pull.rebase", "false"]);
    let out = w
        .env
        .git_command_in(&w.clone, &["pullc", "origin", "main"])
        .env("PATH", crate::env::path_with_bins())
        .output()
        .unwrap();
    assert_code(&out, 0, "git pullc origin main");
    assert_eq!(
        rev_in(&w.env, &w.clone, &checkpoint_ref(HEX_ID)).as_deref(),
        Some(tip.as_str()),
        "the pulled commit's checkpoint was fetched"
    );
}
