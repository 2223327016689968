//! `doctor [--fix] [--json]`: every check gets its damage made with plain git (update-ref,
//! hand-written files, hash-object/mktree/commit-tree), is reported in both outputs, and the
//! repair of `--fix` is verified with git itself.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use crate::commit_hooks::{checkpoint_state, install_hooks};
use crate::env::{
    assert_code, checkpoint_ref, hooks_dir, path_str, sha256_hex, write_settings,
    write_strategy_options, Store, TestEnv, REFS_PREFIX, V1_BRANCH,
};
use crate::fixtures::{
    blob, checkpoint_node, commit_tree, hand_made, hand_made_ref, root_metadata_json,
    session_metadata_json, tree, write_node, write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2,
    ULID_ID,
};
use crate::rewrite::{amend_dropping_the_trailer, linked_commit};

const QUEUE: &str = "entire-checkpoint-push-queue.jsonl";

fn run(env: &TestEnv, store: Store, args: &[&str]) -> Output {
    let mut all = vec!["doctor"];
    all.extend_from_slice(args);
    env.run(store, &all)
}

/// `doctor --json [--fix]`: asserts the exit code and returns the document.
fn json(env: &TestEnv, store: Store, fix: bool, code: i32) -> Value {
    let mut args = vec!["--json"];
    if fix {
        args.push("--fix");
    }
    let out = run(env, store, &args);
    assert_code(&out, code, &format!("doctor {args:?}"));
    crate::env::parse_json(&out.stdout)
}

/// The findings of `code` as `(subject, fixed)`.
fn found(doc: &Value, code: &str) -> Vec<(String, bool)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .map(|f| {
            (
                f["subject"].as_str().unwrap().to_owned(),
                f["fixed"].as_bool().unwrap(),
            )
        })
        .collect()
}

fn codes(doc: &Value) -> Vec<String> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_owned())
        .collect()
}

/// The human output under `store` (`None`: the repository's own settings): asserts the exit
/// code and that a line names `code` and `subject`.
fn human_names(
    env: &TestEnv,
    store: impl Into<Option<Store>>,
    code: i32,
    finding: &str,
    subject: &str,
) {
    let out = env.run_primary_in(store.into(), env.repo(), &["doctor"]);
    assert_code(&out, code, "doctor");
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.contains(&format!(" {finding} ")) && l.contains(subject)),
        "no {finding} line for {subject}:\n{text}"
    );
}

/// A repository with our hooks installed (so the hook checks are quiet).
fn env_with_hooks() -> TestEnv {
    let env = TestEnv::new();
    env.ok(Store::Refs, &["hooks", "install"]);
    env
}

/// [`env_with_hooks`] with a remote `origin` that has checkpoint `HEX_ID` from a real push (so
/// the destination is registered and has a delivery record).
fn pushed_env() -> (TestEnv, std::path::PathBuf) {
    let env = env_with_hooks();
    let remote = env.bare_remote("origin");
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    env.ok(Store::Refs, &["push"]);
    (env, remote)
}

fn queue_text(env: &TestEnv) -> String {
    std::fs::read_to_string(env.common_dir().join(QUEUE)).unwrap_or_default()
}

/// The per-destination queue of the remote at `url` (keyed by a hash of the push URL).
fn destination_queue(env: &TestEnv, url: &Path) -> std::path::PathBuf {
    let fp = &sha256_hex(path_str(url).as_bytes())[..20];
    env.common_dir()
        .join("entire/push-queues")
        .join(format!("{fp}.jsonl"))
}

#[test]
fn healthy_repository_exits_zero_in_both_outputs() {
    let (env, remote) = pushed_env();
    let out = run(&env, Store::Refs, &[]);
    assert_code(&out, 0, "doctor");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "no problems found\n");
    let doc = json(&env, Store::Refs, false, 0);
    assert_eq!(doc["healthy"], true);
    assert_eq!(doc["problems"], 0);
    assert!(codes(&doc).is_empty(), "{doc}");
    // --fix on a healthy repository changes nothing.
    let before = env.refs_snapshot();
    json(&env, Store::Refs, true, 0);
    assert_eq!(env.refs_snapshot(), before);
    assert_eq!(
        crate::env::rev_in(&env, &remote, &checkpoint_ref(HEX_ID)),
        env.rev(&checkpoint_ref(HEX_ID))
    );
}

#[test]
fn unqueued_unpushed_refs_are_enqueued_and_then_pushed() {
    let (env, remote) = pushed_env();
    // A checkpoint made behind the queue's back, and an advance of the pushed one likewise.
    hand_made(&env, Store::Refs, HEX_ID_2, None);
    let old = env.rev(&checkpoint_ref(HEX_ID)).unwrap();
    let tree = env.git(&["rev-parse", &format!("{old}^{{tree}}")]);
    let advanced = commit_tree(&env, tree.trim(), Some(&old), "Checkpoint: again\n");
    env.git(&["update-ref", &checkpoint_ref(HEX_ID), &advanced]);
    assert!(!queue_text(&env).contains(HEX_ID_2));

    human_names(
        &env,
        Store::Refs,
        1,
        "unqueued-unpushed",
        &checkpoint_ref(HEX_ID_2),
    );
    let doc = json(&env, Store::Refs, false, 1);
    let mut want = vec![
        (checkpoint_ref(HEX_ID), false),
        (checkpoint_ref(HEX_ID_2), false),
    ];
    want.sort();
    let mut got = found(&doc, "unqueued-unpushed");
    got.sort();
    assert_eq!(got, want);
    for f in findings_of(&doc, "unqueued-unpushed") {
        assert_eq!(
            crate::env::repair_args(f).unwrap(),
            ["entire-checkpoint", "push", "--all"]
        );
    }

    let fixed = json(&env, Store::Refs, true, 0);
    assert!(found(&fixed, "unqueued-unpushed").iter().all(|(_, f)| *f));
    let queue = queue_text(&env);
    assert!(queue.contains(&checkpoint_ref(HEX_ID_2)), "{queue}");
    assert!(queue.contains(&checkpoint_ref(HEX_ID)), "{queue}");
    // Queued now: no longer a finding, and the next push delivers both.
    assert!(found(&json(&env, Store::Refs, false, 0), "unqueued-unpushed").is_empty());
    env.ok(Store::Refs, &["push"]);
    let on_remote = env.checkpoint_tips_in(&remote);
    assert_eq!(on_remote[&checkpoint_ref(HEX_ID)], advanced);
    assert_eq!(
        on_remote[&checkpoint_ref(HEX_ID_2)],
        env.rev(&checkpoint_ref(HEX_ID_2)).unwrap()
    );
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());
}

#[test]
fn a_ref_lost_from_one_destination_queue_is_found_for_that_destination() {
    let (env, _origin) = pushed_env();
    let backup = env.bare_remote("backup");
    env.ok(Store::Refs, &["push", "backup"]);
    write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT);
    // Delivered to origin; queued for backup, until that queue record is lost.
    env.ok(Store::Refs, &["push", "origin"]);
    let backup_queue = destination_queue(&env, &backup);
    assert!(std::fs::read_to_string(&backup_queue)
        .unwrap()
        .contains(HEX_ID_2));
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());
    std::fs::remove_file(&backup_queue).unwrap();

    let doc = json(&env, Store::Refs, false, 1);
    assert_eq!(
        found(&doc, "unqueued-unpushed"),
        [(checkpoint_ref(HEX_ID_2), false)]
    );
    let message = doc["findings"][0]["message"].as_str().unwrap();
    assert!(message.ends_with("not delivered to backup"), "{message}");
    json(&env, Store::Refs, true, 0);
    env.ok(Store::Refs, &["push", "backup"]);
    assert_eq!(
        crate::env::rev_in(&env, &backup, &checkpoint_ref(HEX_ID_2)),
        env.rev(&checkpoint_ref(HEX_ID_2))
    );
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());
}

#[test]
fn never_pushed_refs_are_not_findings_and_lost_records_are_informational() {
    let env = env_with_hooks();
    env.bare_remote("origin");
    // No push registered a destination yet: the first push reconciles everything.
    hand_made(&env, Store::Refs, HEX_ID, None);
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());
    env.ok(Store::Refs, &["push", "--all"]);
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());
    // A destination whose delivery record is gone (pushed by an older version).
    std::fs::remove_dir_all(env.common_dir().join("entire/push-delivered")).unwrap();
    hand_made(&env, Store::Refs, HEX_ID_2, None);
    let doc = json(&env, Store::Refs, false, 0);
    assert_eq!(
        found(&doc, "delivery-unrecorded"),
        [("origin".into(), false)]
    );
    assert!(found(&doc, "unqueued-unpushed").is_empty());
    // The repair it names, run as given, rebuilds the record; then the check works again.
    let f = findings_of(&doc, "delivery-unrecorded")[0];
    let argv = crate::env::repair_args(f).unwrap();
    assert_eq!(argv, ["entire-checkpoint", "push", "origin", "--all"]);
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    env.git_hooked_ok(Some(Store::Refs), env.repo(), &argv);
    let doc = json(&env, Store::Refs, false, 0);
    assert!(codes(&doc).is_empty(), "{doc}");
}

#[test]
fn fetched_checkpoints_count_as_delivered() {
    let (env, remote) = pushed_env();
    // Another clone writes a checkpoint to the remote; this one fetches it.
    env.clone_of(&remote, "other", &[]);
    let tree = write_node(
        &env,
        &checkpoint_node(
            HEX_ID_2,
            "s2",
            root_metadata_json(HEX_ID_2, "").as_bytes(),
            TRANSCRIPT_2,
        ),
    );
    let c = commit_tree(&env, &tree, None, "Checkpoint: other\n");
    env.git(&[
        "push",
        "-q",
        "origin",
        &format!("{c}:{}", checkpoint_ref(HEX_ID_2)),
    ]);
    env.bin_cmd(&crate::env::fetch_bin())
        .args(["origin", HEX_ID_2])
        .assert()
        .success();
    assert_eq!(env.rev(&checkpoint_ref(HEX_ID_2)), Some(c));
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());
}

#[test]
fn queue_orphans_are_dropped_and_live_entries_kept() {
    let (env, remote) = pushed_env();
    write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT);
    // The shared queue names a ref that is gone; so does the destination's queue.
    let gone = checkpoint_ref("0123456789ab");
    let line = format!("{{\"ref\":\"{gone}\"}}\n");
    std::fs::OpenOptions::new()
        .append(true)
        .open(env.common_dir().join(QUEUE))
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()))
        .unwrap();
    let dest = destination_queue(&env, &remote);
    let gone2 = checkpoint_ref("ba9876543210");
    std::fs::write(&dest, format!("{{\"ref\":\"{gone2}\"}}\n")).unwrap();

    human_names(&env, Store::Refs, 1, "queue-orphan", &gone);
    let doc = json(&env, Store::Refs, false, 1);
    let mut got = found(&doc, "queue-orphan");
    got.sort();
    let mut want = vec![(gone.clone(), false), (gone2.clone(), false)];
    want.sort();
    assert_eq!(got, want);

    let fixed = json(&env, Store::Refs, true, 0);
    assert!(found(&fixed, "queue-orphan").iter().all(|(_, f)| *f));
    let queue = queue_text(&env);
    assert!(!queue.contains(&gone), "{queue}");
    assert!(
        queue.contains(&checkpoint_ref(HEX_ID_2)),
        "live entry kept: {queue}"
    );
    assert!(!std::fs::read_to_string(&dest)
        .unwrap_or_default()
        .contains(&gone2));
}

#[test]
fn foreign_and_malformed_refs_are_reported_and_never_touched() {
    let env = env_with_hooks();
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    let tip = env.rev(&checkpoint_ref(HEX_ID)).unwrap();
    let foreign = [
        format!("{REFS_PREFIX}f6/not-an-id-f6"),
        format!("{REFS_PREFIX}v1/main"),
        format!("{REFS_PREFIX}v2/full/0001"),
    ];
    let malformed = [
        format!("{REFS_PREFIX}x/f6/{HEX_ID}"),
        format!("{REFS_PREFIX}zz/{HEX_ID}"),
    ];
    for r in foreign.iter().chain(&malformed) {
        env.git(&["update-ref", r, &tip]);
    }
    human_names(&env, Store::Refs, 1, "malformed-ref", &malformed[0]);
    let doc = json(&env, Store::Refs, false, 1);
    let mut f = found(&doc, "foreign-ref");
    f.sort();
    assert_eq!(f, foreign.map(|r| (r, false)));
    let mut m = found(&doc, "malformed-ref");
    m.sort();
    let mut want = malformed.clone().map(|r| (r, false)).to_vec();
    want.sort();
    assert_eq!(m, want);
    let before = env.refs_snapshot();
    let fixed = json(&env, Store::Refs, true, 1);
    assert_eq!(env.refs_snapshot(), before, "--fix touches none of them");
    assert_eq!(found(&fixed, "malformed-ref").len(), 2);
}

const FOLD_ULID: &str = "01M2DCHJCHTR9T9MZTSB7WV76B";

/// Checkpoint `FOLD_ULID` written twice under its canonical ref: `(canonical ref, folded
/// spelling, first commit, tip)`.
fn two_commit_checkpoint(env: &TestEnv) -> (String, String, String, String) {
    let canonical = checkpoint_ref(FOLD_ULID);
    let folded = format!("{REFS_PREFIX}6b/{FOLD_ULID}");
    write_std(env, Store::Refs, FOLD_ULID, "sess-a", TRANSCRIPT);
    let first = env.rev(&canonical).unwrap();
    write_std(env, Store::Refs, FOLD_ULID, "sess-a", TRANSCRIPT_2);
    let tip = env.rev(&canonical).unwrap();
    (canonical, folded, first, tip)
}

#[test]
fn case_duplicates_collapse_keeping_every_commit() {
    let env = env_with_hooks();
    let (canonical, folded, _, canon_tip) = two_commit_checkpoint(&env);
    let node = checkpoint_node(
        FOLD_ULID,
        "sess-b",
        root_metadata_json(FOLD_ULID, "").as_bytes(),
        TRANSCRIPT,
    );
    let folded_tip = hand_made_ref(&env, &folded, FOLD_ULID, &node);
    let commits: Vec<String> = env
        .git(&["rev-list", &canon_tip, &folded_tip])
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(commits.len(), 3);

    human_names(&env, Store::Refs, 1, "case-duplicate", &canonical);
    let doc = json(&env, Store::Refs, false, 1);
    assert_eq!(found(&doc, "case-duplicate"), [(canonical.clone(), false)]);
    assert_eq!(env.rev(&folded), Some(folded_tip.clone()), "report only");

    let fixed = json(&env, Store::Refs, true, 0);
    assert_eq!(found(&fixed, "case-duplicate"), [(canonical.clone(), true)]);
    assert_eq!(
        env.refs_under(REFS_PREFIX),
        std::slice::from_ref(&canonical)
    );
    let tip = env.rev(&canonical).unwrap();
    for c in &commits {
        assert!(env.is_ancestor(c, &tip), "{c} still reachable");
    }
    assert_eq!(env.parents(&tip), [canon_tip, folded_tip]);
    // The merged tree holds both sessions; the ref is queued for push.
    let root: Value =
        serde_json::from_str(&env.git(&["cat-file", "-p", &format!("{canonical}:metadata.json")]))
            .unwrap();
    assert_eq!(root["sessions"].as_array().unwrap().len(), 2, "{root}");
    assert!(queue_text(&env).contains(&canonical));
    let after = json(&env, Store::Refs, false, 0);
    assert!(codes(&after).is_empty(), "{after}");
}

#[test]
fn case_duplicate_that_is_an_ancestor_is_folded_without_a_merge() {
    let env = env_with_hooks();
    let (canonical, folded, first, tip) = two_commit_checkpoint(&env);
    env.git(&["update-ref", &folded, &first]);
    let doc = json(&env, Store::Refs, true, 0);
    assert_eq!(found(&doc, "case-duplicate"), [(canonical.clone(), true)]);
    assert_eq!(
        env.refs_under(REFS_PREFIX),
        std::slice::from_ref(&canonical)
    );
    assert_eq!(env.rev(&canonical), Some(tip), "no new commit");
}

#[test]
fn corrupt_checkpoints_are_reported_and_never_changed() {
    let env = env_with_hooks();
    let ids = [
        "0000000000a1",
        "0000000000b2",
        "0000000000c3",
        "0000000000d4",
        "0000000000e5",
    ];
    // A ref to a blob; no root metadata.json; another checkpoint's ID; a second slot
    // directory sessions[] does not list; JSON that does not parse.
    let b = env.git_stdin(&["hash-object", "-w", "--stdin"], b"not a commit");
    env.git(&["update-ref", &checkpoint_ref(ids[0]), &b]);
    let no_meta = tree(vec![("0", tree(vec![("full.jsonl", blob(TRANSCRIPT))]))]);
    hand_made_ref(&env, &checkpoint_ref(ids[1]), ids[1], &no_meta);
    hand_made(
        &env,
        Store::Refs,
        ids[2],
        Some(root_metadata_json(HEX_ID, "").as_bytes()),
    );
    let extra_slot = tree(vec![
        (
            "metadata.json",
            blob(root_metadata_json(ids[3], "").as_bytes()),
        ),
        (
            "0",
            tree(vec![(
                "metadata.json",
                blob(session_metadata_json(ids[3], "s").as_bytes()),
            )]),
        ),
        (
            "1",
            tree(vec![(
                "metadata.json",
                blob(session_metadata_json(ids[3], "t").as_bytes()),
            )]),
        ),
    ]);
    hand_made_ref(&env, &checkpoint_ref(ids[3]), ids[3], &extra_slot);
    hand_made(&env, Store::Refs, ids[4], Some(b"{ not json"));

    human_names(
        &env,
        Store::Refs,
        1,
        "corrupt-checkpoint",
        &checkpoint_ref(ids[2]),
    );
    let doc = json(&env, Store::Refs, false, 1);
    let mut got: Vec<String> = found(&doc, "corrupt-checkpoint")
        .into_iter()
        .map(|(s, _)| s)
        .collect();
    got.sort();
    let corrupt = [ids[0], ids[1], ids[2], ids[4]].map(checkpoint_ref);
    assert_eq!(got, corrupt);
    // The session directory sessions[] does not list is information, not corruption.
    assert_eq!(
        found(&doc, "unlisted-sessions"),
        [(checkpoint_ref(ids[3]), false)]
    );
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "unlisted-sessions")
        .unwrap();
    assert_eq!(finding["severity"], "info");
    assert!(
        finding["message"].as_str().unwrap().contains("(1/)"),
        "{finding}"
    );
    let before = env.refs_snapshot();
    let fixed = json(&env, Store::Refs, true, 1);
    assert_eq!(env.refs_snapshot(), before, "never deleted or rewritten");
    assert_eq!(found(&fixed, "corrupt-checkpoint").len(), 4);
}

#[test]
fn unlisted_session_directories_on_the_v1_branch_are_information() {
    let env = env_with_hooks();
    let extra = tree(vec![
        (
            "metadata.json",
            blob(
                root_metadata_json(HEX_ID, &crate::env::tree_prefix(Store::Branch, HEX_ID))
                    .as_bytes(),
            ),
        ),
        (
            "0",
            tree(vec![(
                "metadata.json",
                blob(session_metadata_json(HEX_ID, "s").as_bytes()),
            )]),
        ),
        (
            "6",
            tree(vec![(
                "metadata.json",
                blob(session_metadata_json(HEX_ID, "t").as_bytes()),
            )]),
        ),
    ]);
    crate::fixtures::hand_made_branch(&env, HEX_ID, &extra);
    let subject = format!("{V1_BRANCH}:{}/{}", &HEX_ID[..2], &HEX_ID[2..]);
    let doc = json(&env, Store::Branch, false, 0);
    assert_eq!(found(&doc, "unlisted-sessions"), [(subject, false)]);
}

#[test]
fn ulids_on_the_v1_branch_are_reported_under_a_git_branch_primary() {
    let env = env_with_hooks();
    hand_made(&env, Store::Branch, ULID_ID, None);
    let subject = format!("{V1_BRANCH}:{}/{}", &ULID_ID[..2], &ULID_ID[2..]);
    human_names(&env, Store::Branch, 1, "ulid-on-v1", &subject);
    let doc = json(&env, Store::Branch, false, 1);
    assert_eq!(found(&doc, "ulid-on-v1"), [(subject, false)]);
    let before = env.refs_snapshot();
    json(&env, Store::Branch, true, 1);
    assert_eq!(env.refs_snapshot(), before);
    // Under a git-refs primary the v1 branch is a mirror that may hold any ID.
    assert!(found(&json(&env, Store::Refs, false, 0), "ulid-on-v1").is_empty());
}

/// A local v1 branch (checkpoint `HEX_ID`) and a remote `origin` whose v1 branch (checkpoint
/// `HEX_ID_2`) shares no history with it, fetched: `(env, remote, their tip, our tip)`.
fn disconnected_v1() -> (TestEnv, std::path::PathBuf, String, String) {
    let env = env_with_hooks();
    let remote = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    // The remote's v1 branch: an unrelated history.
    let theirs_tree = write_node(
        &env,
        &tree(vec![(
            &HEX_ID_2[..2],
            tree(vec![(
                &HEX_ID_2[2..],
                checkpoint_node(
                    HEX_ID_2,
                    "remote-sess",
                    root_metadata_json(
                        HEX_ID_2,
                        &format!("/{}/{}", &HEX_ID_2[..2], &HEX_ID_2[2..]),
                    )
                    .as_bytes(),
                    TRANSCRIPT_2,
                ),
            )]),
        )]),
    );
    let theirs = commit_tree(&env, &theirs_tree, None, "Checkpoint: remote\n");
    env.git(&["push", "-q", "origin", &format!("{theirs}:{V1_BRANCH}")]);
    env.git(&["fetch", "-q", "origin"]);
    let ours = hand_made(&env, Store::Branch, HEX_ID, None);

    (env, remote, theirs, ours)
}

/// Both checkpoints are in the local v1 tip, which descends from the remote's tip.
fn assert_v1_joined(env: &TestEnv, theirs: &str) -> String {
    let tip = env.rev(V1_BRANCH).unwrap();
    assert!(env.is_ancestor(theirs, &tip));
    for id in [HEX_ID, HEX_ID_2] {
        env.git(&[
            "cat-file",
            "-e",
            &format!("{tip}:{}/{}/metadata.json", &id[..2], &id[2..]),
        ]);
    }
    tip
}

#[test]
fn a_disconnected_v1_branch_is_reported_with_the_push_that_repairs_it() {
    let (env, remote, theirs, ours) = disconnected_v1();
    human_names(&env, Store::Branch, 1, "v1-disconnected", V1_BRANCH);
    let doc = json(&env, Store::Branch, false, 1);
    assert_eq!(
        found(&doc, "v1-disconnected"),
        [(V1_BRANCH.to_owned(), false)]
    );
    let f = &doc["findings"].as_array().unwrap()[0];
    let argv = crate::env::repair_args(f).unwrap();
    assert_eq!(argv, ["entire-checkpoint", "push", "origin"]);
    assert_eq!(env.rev(V1_BRANCH), Some(ours), "reporting changes nothing");

    // The named repair, run as given, works: afterwards both histories are one and doctor is
    // quiet.
    let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
    env.git_hooked_ok(Some(Store::Branch), env.repo(), &argv);
    let tip = assert_v1_joined(&env, &theirs);
    assert_eq!(crate::env::rev_in(&env, &remote, V1_BRANCH), Some(tip));
    assert!(found(&json(&env, Store::Branch, false, 0), "v1-disconnected").is_empty());
}

#[test]
fn fix_replays_a_disconnected_v1_branch_offline_and_the_push_is_a_fast_forward() {
    let (env, remote, theirs, ours) = disconnected_v1();
    // No network: the remote's URL leads nowhere while doctor runs.
    env.git(&["remote", "set-url", "origin", "/nonexistent/remote.git"]);
    let doc = json(&env, Store::Branch, true, 0);
    assert_eq!(
        found(&doc, "v1-disconnected"),
        [(V1_BRANCH.to_owned(), true)]
    );
    let tip = assert_v1_joined(&env, &theirs);
    assert_ne!(tip, ours);
    assert!(found(&json(&env, Store::Branch, false, 0), "v1-disconnected").is_empty());
    env.git(&["remote", "set-url", "origin", path_str(&remote)]);
    assert_eq!(
        crate::env::rev_in(&env, &remote, V1_BRANCH),
        Some(theirs.clone()),
        "doctor pushed nothing"
    );
    // A plain fast-forward push now lands it (git's own: without our pre-push hook, which now
    // finds our binaries wherever PATH is, and would push the queued branch first).
    env.git(&["push", "-q", "--no-verify", "origin", V1_BRANCH]);
    assert_eq!(crate::env::rev_in(&env, &remote, V1_BRANCH), Some(tip));
}

#[test]
fn the_policy_ref_is_informational() {
    let env = env_with_hooks();
    let head = env.rev("HEAD").unwrap();
    env.git(&["update-ref", "refs/entire/policies/checkpoint", &head]);
    let doc = json(&env, Store::Refs, false, 0);
    assert_eq!(
        found(&doc, "policy-ref"),
        [("refs/entire/policies/checkpoint".to_owned(), false)]
    );
    assert_eq!(doc["findings"][0]["severity"], "info");
    assert_eq!(doc["healthy"], true);
    json(&env, Store::Refs, true, 0);
    assert_eq!(env.rev("refs/entire/policies/checkpoint"), Some(head));
}

#[test]
fn stale_ref_locks_are_removed_and_fresh_ones_kept() {
    // Lock files next to loose refs are the files backend's.
    let env = TestEnv::with_files_refs();
    env.ok(Store::Refs, &["hooks", "install"]);
    write_std(&env, Store::Refs, HEX_ID, "s1", TRANSCRIPT);
    write_std(&env, Store::Refs, HEX_ID_2, "s1", TRANSCRIPT);
    let common = env.common_dir();
    let stale = common.join(format!("{}.lock", checkpoint_ref(HEX_ID)));
    let fresh = common.join(format!("{}.lock", checkpoint_ref(HEX_ID_2)));
    for p in [&stale, &fresh] {
        std::fs::write(p, b"").unwrap();
    }
    let two_hours_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(7200);
    std::fs::File::options()
        .write(true)
        .open(&stale)
        .unwrap()
        .set_modified(two_hours_ago)
        .unwrap();
    // The stale lock blocks writes to that checkpoint.
    let blocked = env.run(
        Store::Refs,
        &["write", "--session", "s2", "--id", HEX_ID, "--prompt", "p"],
    );
    assert!(!blocked.status.success(), "the lock blocks the write");

    let subject = format!("{}.lock", checkpoint_ref(HEX_ID));
    human_names(&env, Store::Refs, 1, "stale-lock", &subject);
    let doc = json(&env, Store::Refs, false, 1);
    assert_eq!(found(&doc, "stale-lock"), [(subject.clone(), false)]);
    let fixed = json(&env, Store::Refs, true, 0);
    assert_eq!(found(&fixed, "stale-lock"), [(subject, true)]);
    assert!(!stale.exists());
    assert!(fresh.exists(), "a recent lock may be held: kept");
    env.ok(
        Store::Refs,
        &["write", "--session", "s2", "--id", HEX_ID, "--prompt", "p"],
    );
}

/// Checkpoints turned on for this clone without our hooks installed (`"enabled": true`).
fn enabled_without_hooks(env: &TestEnv) {
    env.write_file(".git/entire/settings.local.json", b"{\"enabled\": true}\n");
}

/// A repository that never enabled checkpoints, and one after `disable` (which records
/// `"enabled": false` for the clone): doctor finds them healthy, exit 0, whatever hooks are
/// (not) there.
#[test]
fn doctor_is_clean_where_checkpoints_were_never_enabled_or_were_disabled() {
    let env = TestEnv::new();
    let doc = json(&env, Store::Refs, false, 0);
    assert!(codes(&doc).is_empty(), "{doc}");
    let dir = hooks_dir(&env);
    std::fs::create_dir_all(&dir).unwrap();
    crate::env::write_executable(&dir.join("pre-push"), "#!/bin/sh\necho mine\n");
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());

    env.ok_default(&["enable"]);
    let out = env.ok_default(&["disable"]);
    assert!(
        out.contains("enabled: false (.git/entire/settings.local.json)"),
        "{out}"
    );
    let local =
        std::fs::read_to_string(env.repo().join(".git/entire/settings.local.json")).unwrap();
    let local: Value = serde_json::from_str(&local).unwrap();
    assert_eq!(local["enabled"], false, "{local}");
    let doc = json(&env, Store::Refs, false, 0);
    assert!(codes(&doc).is_empty(), "{doc}");
    // enable turns it back on for the clone.
    let out = env.ok_default(&["enable"]);
    assert!(
        out.contains("enabled: true (.git/entire/settings.local.json)"),
        "{out}"
    );
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());
}

#[test]
fn missing_hooks_are_installed_and_foreign_ones_left_alone() {
    let env = TestEnv::new();
    enabled_without_hooks(&env);
    let dir = hooks_dir(&env);
    let doc = json(&env, Store::Refs, false, 1);
    // None of ours: one finding for the clone, not one per hook.
    assert_eq!(
        found(&doc, "hook-missing"),
        vec![(dir.display().to_string(), false)],
        "{doc}"
    );
    human_names(
        &env,
        Store::Refs,
        1,
        "hook-missing",
        "this clone has no hooks: run `git entire-checkpoint enable`",
    );
    let fixed = json(&env, Store::Refs, true, 0);
    assert!(found(&fixed, "hook-missing").iter().all(|(_, f)| *f));
    for name in [
        "pre-push",
        "post-commit",
        "prepare-commit-msg",
        "post-rewrite",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        assert!(text.contains("Entire checkpoints hook"), "{name}");
    }

    // A foreign hook: reported, and --fix does not move it.
    let env = TestEnv::new();
    enabled_without_hooks(&env);
    let dir = hooks_dir(&env);
    std::fs::create_dir_all(&dir).unwrap();
    crate::env::write_executable(&dir.join("pre-push"), "#!/bin/sh\necho mine\n");
    let doc = json(&env, Store::Refs, true, 1);
    let pre_push = path_str(&dir.join("pre-push")).to_owned();
    assert_eq!(found(&doc, "hook-foreign"), [(pre_push, false)]);
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push")).unwrap(),
        "#!/bin/sh\necho mine\n"
    );
    assert!(
        !dir.join("post-commit").exists(),
        "nothing installed beside it"
    );
}

#[test]
fn hooks_shadowed_by_core_hooks_path_are_reported_and_installed_there() {
    let env = env_with_hooks();
    env.git(&["config", "core.hooksPath", ".githooks"]);
    let shadow = env.repo().join(".githooks");
    let subject = path_str(&shadow).to_owned();
    human_names(&env, Store::Refs, 1, "hooks-path-shadowed", &subject);
    let doc = json(&env, Store::Refs, false, 1);
    assert_eq!(
        found(&doc, "hooks-path-shadowed"),
        [(subject.clone(), false)]
    );
    // The directory is outside the git dir, so shared: --fix does not write there, and the
    // repair is the command that does.
    let fixed = json(&env, Store::Refs, true, 1);
    assert_eq!(
        found(&fixed, "hooks-path-shadowed"),
        [(subject.clone(), false)]
    );
    assert!(!shadow.join("pre-push").exists());
    let repairs: Vec<Vec<String>> = fixed["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(crate::env::repair_args)
        .collect();
    assert!(
        !repairs.is_empty()
            && repairs
                .iter()
                .all(|r| *r == ["entire-checkpoint", "hooks", "install", "--shared"]),
        "{fixed}"
    );
    let argv: Vec<&str> = repairs[0].iter().map(String::as_str).collect();
    env.git_hooked_ok(Some(Store::Refs), env.repo(), &argv);
    assert!(std::fs::read_to_string(shadow.join("pre-push"))
        .unwrap()
        .contains("Entire checkpoints hook"));
    assert!(codes(&json(&env, Store::Refs, false, 0)).is_empty());
}

#[test]
fn invalid_settings_are_a_finding() {
    let env = env_with_hooks();
    env.write_file(
        ".entire/settings.json",
        br#"{"checkpoints": {"primary": {"type": "nonsense"}}}"#,
    );
    let out = env
        .cmd()
        .args(["doctor", "--json"])
        .output()
        .expect("run doctor");
    assert_code(&out, 1, "doctor");
    let doc = crate::env::parse_json(&out.stdout);
    assert_eq!(codes(&doc), ["topology-invalid"]);
}

#[test]
fn unsupported_repositories_exit_128_with_a_finding() {
    // Formats no version knows (a future git's): written by hand, since git refuses them too.
    for format in ["refStorage = newtable", "objectFormat = sha3"] {
        let env = TestEnv::without_repo();
        env.init_repo(&[]);
        let config = env.repo().join(".git/config");
        let text = std::fs::read_to_string(&config)
            .unwrap()
            .replace("repositoryformatversion = 0", "repositoryformatversion = 1");
        std::fs::write(&config, format!("{text}[extensions]\n\t{format}\n")).unwrap();
        let out = run(&env, Store::Refs, &["--json"]);
        let stderr = assert_code(&out, 128, format);
        assert!(stderr.contains("unsupported repository"), "{stderr}");
        let doc = crate::env::parse_json(&out.stdout);
        assert_eq!(codes(&doc), ["unsupported-repo"], "{format}");
        let out = run(&env, Store::Refs, &[]);
        assert_code(&out, 128, format);
        assert!(String::from_utf8_lossy(&out.stdout).contains("unsupported-repo"));
    }
}

#[test]
fn bad_invocations() {
    let env = TestEnv::without_repo();
    let out = run(&env, Store::Refs, &[]);
    let stderr = assert_code(&out, 128, "doctor outside a repository");
    assert!(stderr.contains("not a git repository"), "{stderr}");
    assert!(out.stdout.is_empty());
    let env = env_with_hooks();
    let before = env.refs_snapshot();
    let out = run(&env, Store::Refs, &["--repair"]);
    assert_code(&out, 2, "unknown flag");
    assert_eq!(env.refs_snapshot(), before);
}

#[test]
fn output_shapes_are_stable() {
    let env = env_with_hooks();
    let head = env.rev("HEAD").unwrap();
    env.git(&["update-ref", "refs/entire/policies/checkpoint", &head]);
    env.git(&["update-ref", &format!("{REFS_PREFIX}zz/{HEX_ID}"), &head]);
    let out = run(&env, Store::Refs, &["--json"]);
    let stderr = assert_code(&out, 1, "doctor --json");
    assert!(stderr.starts_with("error: 1 problem(s) found"), "{stderr}");
    let doc = crate::env::parse_json(&out.stdout);
    assert_eq!(
        crate::env::keys(&doc),
        ["healthy", "problems", "fixed", "findings"]
    );
    assert_eq!(doc["healthy"], false);
    assert_eq!(doc["problems"], 1);
    assert_eq!(doc["fixed"], 0);
    let findings = doc["findings"].as_array().unwrap();
    assert_eq!(findings.len(), 2);
    for f in findings {
        assert_eq!(
            crate::env::keys(f),
            ["code", "severity", "subject", "message", "repair", "advice", "fixed"]
        );
    }
    // A malformed ref is a human decision: advice, no command.
    assert_eq!(findings[0]["severity"], "warning");
    assert!(findings[0]["repair"].is_null(), "{doc}");
    assert!(findings[0]["advice"].is_string(), "{doc}");
    assert_eq!(findings[1]["severity"], "info");
    assert!(findings[1]["repair"].is_null());
    assert!(findings[1]["advice"].is_null());

    // Human: one line per finding, `<severity> <code> <subject>: <message>`, in the same order.
    let out = run(&env, Store::Refs, &[]);
    assert_code(&out, 1, "doctor");
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), findings.len(), "{text}");
    for (line, f) in lines.iter().zip(findings) {
        let head = format!(
            "{} {} {}: ",
            f["severity"].as_str().unwrap(),
            f["code"].as_str().unwrap(),
            f["subject"].as_str().unwrap()
        );
        let squeezed = line.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(squeezed.starts_with(head.trim_end()), "{line} / {head}");
    }
}

#[test]
fn many_checkpoint_refs_on_the_code_remote_are_a_warning_until_a_checkpoint_remote_is_set() {
    let (env, _origin) = pushed_env();
    write_std(&env, Store::Refs, HEX_ID_2, "s2", TRANSCRIPT_2);
    env.ok(Store::Refs, &["push"]);
    let doc = json(&env, Store::Refs, false, 0);
    assert!(found(&doc, "remote-ref-count").is_empty(), "{doc}");

    // The count recorded by the pushes (2) is above a threshold of 1: a warning, offline.
    write_strategy_options(
        &env,
        serde_json::json!({"checkpoint_ref_warn_threshold": 1}),
    );
    let doc = json(&env, Store::Refs, true, 1);
    assert_eq!(
        found(&doc, "remote-ref-count"),
        [("origin".to_owned(), false)]
    );
    let finding = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["code"] == "remote-ref-count")
        .unwrap();
    assert_eq!(finding["severity"], "warning");
    let message = finding["message"].as_str().unwrap();
    assert!(message.contains("holds 2 checkpoint refs"), "{message}");
    assert!(message.contains("checkpoint_remote"), "{message}");
    human_names(&env, Store::Refs, 1, "remote-ref-count", "origin");

    // A dedicated checkpoint remote carries no code: nothing to warn about.
    let cp = env.new_bare("cp");
    write_strategy_options(
        &env,
        serde_json::json!({
            "checkpoint_ref_warn_threshold": 1,
            "checkpoint_remote": {"url": path_str(&cp)}
        }),
    );
    env.trust_in(env.repo());
    let doc = json(&env, Store::Refs, false, 0);
    assert!(found(&doc, "remote-ref-count").is_empty(), "{doc}");

    // An invalid checkpoint remote (of the per-clone file: the committed one's is not used
    // before `trust`, which refuses it) is an error finding, and the secret is never shown.
    crate::env::write_settings_text(
        &env,
        "settings.local.json",
        &serde_json::json!({"strategy_options": {
            "checkpoint_remote": {"url": "https://user:hunter2@example.invalid/cp.git"}
        }})
        .to_string(),
    );
    let out = run(&env, Store::Refs, &["--json"]);
    assert_code(&out, 1, "doctor --json");
    let doc = crate::env::parse_json(&out.stdout);
    assert_eq!(
        found(&doc, "checkpoint-remote-invalid"),
        [(".git/entire/settings.local.json".to_owned(), false)]
    );
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!all.contains("hunter2"), "{all}");
}

// Trailers of the current branch's history: dangling, malformed, linked but never pushed.

/// A hex ID and a ULID that no store and no remote holds.
const NOWHERE_HEX: &str = "0123456789ab";
const NOWHERE_ULID: &str = "01KVBJCWYA4YW6J5M9GP655HZM";

/// `doctor --json` under `primary` (`None`: the repository's own settings): asserts the exit
/// code and returns the document.
fn doctor_json(env: &TestEnv, primary: Option<Store>, code: i32) -> Value {
    let out = env.run_primary_in(primary, env.repo(), &["doctor", "--json"]);
    assert_code(&out, code, "doctor --json");
    crate::env::parse_json(&out.stdout)
}

/// The findings of `code`, whole.
pub(crate) fn findings_of<'d>(doc: &'d Value, code: &str) -> Vec<&'d Value> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["code"] == code)
        .collect()
}

/// The short SHA git shows for `commit`.
fn short(env: &TestEnv, commit: &str) -> String {
    env.git(&["rev-parse", "--short", commit]).trim().to_owned()
}

/// A commit through the hooks with `subject` and the trailer `Entire-Checkpoint: <value>`.
fn commit_with_trailer(
    env: &TestEnv,
    primary: Option<Store>,
    subject: &str,
    value: &str,
) -> String {
    let trailer = format!("Entire-Checkpoint: {value}");
    env.git_hooked_ok(
        primary,
        env.repo(),
        &[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            subject,
            "-m",
            &trailer,
        ],
    );
    env.rev("HEAD").unwrap()
}

/// Asserts the findings of `code` are about `commits` (newest first), each message naming the
/// ID it links and the commit's subject line.
fn assert_trailer_findings(env: &TestEnv, doc: &Value, code: &str, commits: &[(&str, &str)]) {
    let got = findings_of(doc, code);
    let subjects: Vec<&str> = got.iter().map(|f| f["subject"].as_str().unwrap()).collect();
    let expected: Vec<String> = commits.iter().map(|(c, _)| short(env, c)).collect();
    assert_eq!(subjects, expected, "{code}: {doc}");
    for (f, (commit, id)) in got.iter().zip(commits) {
        let message = f["message"].as_str().unwrap();
        assert!(message.contains(id), "{message} names {id}");
        assert!(message.contains(&env.subject(commit)), "{message}");
    }
}

/// Every kind of link in one history over a bare remote: a pushed checkpoint (no finding), a
/// checkpoint never pushed, one linked only through the rewrite map (its commit's trailer was
/// dropped by an amend), dangling hex and ULID trailers and a malformed one. The repair of the
/// unpushed ones is the push the finding names; the dangling ones cannot be brought back, and
/// `--fix` acknowledges them (recorded in this clone) without changing any ref.
fn trailers_dangling_unpushed_and_rewritten(primary: Option<Store>) {
    let env = TestEnv::new();
    install_hooks(&env);
    env.bare_remote("origin");
    let (pushed, pushed_id) = linked_commit(&env, primary, "a.txt", "pushed work");
    env.git_hooked_ok(primary, env.repo(), &["push", "-q", "origin", "main"]);
    // The hook defers the first v1 push to a remote that had no branch yet: push it now.
    env.ok_primary_in(primary, env.repo(), &["push"]);
    let (never, never_id) = linked_commit(&env, primary, "b.txt", "never pushed");
    let hex = commit_with_trailer(&env, primary, "names a hex nowhere", NOWHERE_HEX);
    let ulid = commit_with_trailer(&env, primary, "names a ULID nowhere", NOWHERE_ULID);
    let malformed = commit_with_trailer(&env, primary, "a typo", "not-an-id");
    let (_, reworded_id) = linked_commit(&env, primary, "c.txt", "to be reworded");
    let reworded = amend_dropping_the_trailer(&env, primary);

    let before = checkpoint_state(&env);
    let doc = doctor_json(&env, primary, 1);
    assert_trailer_findings(
        &env,
        &doc,
        "trailer-dangling",
        &[(&ulid, NOWHERE_ULID), (&hex, NOWHERE_HEX)],
    );
    assert_trailer_findings(
        &env,
        &doc,
        "trailer-malformed",
        &[(&malformed, "not-an-id")],
    );
    assert_trailer_findings(
        &env,
        &doc,
        "checkpoint-unpushed",
        &[(&reworded, &reworded_id), (&never, &never_id)],
    );
    let all = doc.to_string();
    assert!(!all.contains(&short(&env, &pushed)), "{all}");
    assert!(!all.contains(&pushed_id), "{all}");
    for f in findings_of(&doc, "trailer-dangling") {
        assert_eq!(f["severity"], "warning");
        assert!(
            f["repair"].is_null(),
            "nothing destructive is suggested: {f}"
        );
        assert!(
            f["advice"].as_str().unwrap().contains("doctor --fix"),
            "acknowledging is: {f}"
        );
    }
    for f in findings_of(&doc, "checkpoint-unpushed") {
        assert_eq!(f["severity"], "warning");
        assert_eq!(
            crate::env::repair_args(f).unwrap(),
            ["entire-checkpoint", "push"]
        );
    }
    assert!(findings_of(&doc, "trailers-unverified").is_empty(), "{doc}");
    human_names(&env, primary, 1, "trailer-dangling", &short(&env, &hex));

    // --fix changes no ref and acknowledges the dangling ones; the named repair delivers the
    // unpushed ones.
    let fixed = env.run_primary_in(primary, env.repo(), &["doctor", "--json", "--fix"]);
    assert_code(&fixed, 1, "doctor --fix");
    assert_eq!(checkpoint_state(&env), before);
    let fixed = crate::env::parse_json(&fixed.stdout);
    for f in findings_of(&fixed, "trailer-dangling") {
        assert_eq!(f["fixed"], true, "{f}");
    }
    env.ok_primary_in(primary, env.repo(), &["push"]);
    let doc = doctor_json(&env, primary, 1);
    assert!(findings_of(&doc, "checkpoint-unpushed").is_empty(), "{doc}");
    assert!(findings_of(&doc, "trailer-dangling").is_empty(), "{doc}");
    assert_eq!(codes(&doc), ["trailer-malformed"], "{doc}");
}

every_primary! {
    trailers_dangling_unpushed_and_rewritten;
}

#[test]
fn the_trailer_depth_bounds_the_history_read_and_is_clamped() {
    let env = TestEnv::new();
    install_hooks(&env);
    env.bare_remote("origin");
    let oldest = commit_with_trailer(&env, None, "oldest", NOWHERE_HEX);
    let middle = commit_with_trailer(&env, None, "middle", NOWHERE_ULID);
    let newest = commit_with_trailer(&env, None, "newest", "bad-value");
    let depth = |file: &str, v: Value| {
        write_settings(
            &env,
            file,
            &serde_json::json!({"strategy_options": {"doctor_trailer_depth": v}}),
        );
    };
    let subjects = |doc: &Value| -> Vec<String> {
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"].as_str().unwrap().starts_with("trailer-"))
            .map(|f| f["subject"].as_str().unwrap().to_owned())
            .collect()
    };
    let all: Vec<String> = [&newest, &middle, &oldest]
        .iter()
        .map(|c| short(&env, c))
        .collect();
    assert_eq!(
        subjects(&doctor_json(&env, None, 1)),
        all,
        "the default reads them all"
    );
    depth("settings.local.json", serde_json::json!(2));
    assert_eq!(subjects(&doctor_json(&env, None, 1)), all[..2]);
    // The local file wins; the committed one is clamped: any value ends somewhere.
    depth("settings.json", serde_json::json!(u64::MAX));
    assert_eq!(subjects(&doctor_json(&env, None, 1)), all[..2]);
    std::fs::remove_file(env.repo().join(".git/entire/settings.local.json")).unwrap();
    assert_eq!(subjects(&doctor_json(&env, None, 1)), all);
    // 0 reads no commit; a value that is not a whole number is ignored.
    depth("settings.json", serde_json::json!(0));
    let doc = doctor_json(&env, None, 0);
    assert!(subjects(&doc).is_empty(), "{doc}");
    depth("settings.json", serde_json::json!("ten"));
    assert_eq!(subjects(&doctor_json(&env, None, 1)), all);
}

/// An unreachable remote: the trailer check says it could not ask (a warning, after one
/// attempt), claims nothing it cannot know, and the local findings are all there.
#[test]
fn an_unreachable_remote_makes_the_links_unverified_and_local_findings_stay() {
    let env = TestEnv::new();
    install_hooks(&env);
    env.bare_remote("origin");
    linked_commit(&env, None, "a.txt", "never pushed");
    commit_with_trailer(&env, None, "names a hex nowhere", NOWHERE_HEX);
    let malformed = commit_with_trailer(&env, None, "a typo", "not-an-id");
    env.git(&["remote", "set-url", "origin", "/nonexistent/remote.git"]);
    let head = env.rev("HEAD").unwrap();
    env.git(&["update-ref", &format!("{REFS_PREFIX}zz/{HEX_ID}"), &head]);

    let doc = doctor_json(&env, None, 1);
    let unverified = findings_of(&doc, "trailers-unverified");
    assert_eq!(unverified.len(), 1, "{doc}");
    assert_eq!(unverified[0]["severity"], "warning");
    assert_eq!(unverified[0]["subject"], "origin");
    let message = unverified[0]["message"].as_str().unwrap();
    assert!(message.contains("could not ask origin"), "{message}");
    assert!(
        message.contains("1 link(s) held here may be unpushed and 1 held nowhere"),
        "{message}"
    );
    assert!(findings_of(&doc, "trailer-dangling").is_empty(), "{doc}");
    assert!(findings_of(&doc, "checkpoint-unpushed").is_empty(), "{doc}");
    assert_trailer_findings(
        &env,
        &doc,
        "trailer-malformed",
        &[(&malformed, "not-an-id")],
    );
    assert_eq!(
        findings_of(&doc, "malformed-ref").len(),
        1,
        "the other checks ran: {doc}"
    );

    // A remote that accepts the connection and never answers ends at the network deadline.
    let server = crate::env::StalledServer::start();
    env.git(&["remote", "set-url", "origin", &server.http_url()]);
    let started = std::time::Instant::now();
    let out = env
        .cmd()
        .env("ENTIRE_NETWORK_TIMEOUT_SECONDS", "2")
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{:?}",
        started.elapsed()
    );
    assert_code(&out, 1, "doctor against a stalled remote");
    let doc = crate::env::parse_json(&out.stdout);
    assert_eq!(findings_of(&doc, "trailers-unverified").len(), 1, "{doc}");
}

/// Without any remote there is nowhere a checkpoint could be pushed: a link held here is fine,
/// one held nowhere dangles.
#[test]
fn without_a_remote_only_links_held_nowhere_are_findings() {
    let env = TestEnv::new();
    install_hooks(&env);
    linked_commit(&env, None, "a.txt", "local only");
    let hex = commit_with_trailer(&env, None, "names a hex nowhere", NOWHERE_HEX);
    let doc = doctor_json(&env, None, 1);
    assert_trailer_findings(&env, &doc, "trailer-dangling", &[(&hex, NOWHERE_HEX)]);
    assert_eq!(
        codes(&doc),
        ["trailer-dangling"],
        "nothing else, no network: {doc}"
    );
}
