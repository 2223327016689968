//! Writers and pushers killed part-way (issue 7): at the library's crash points
//! (`ENTIRE_TEST_CRASHPOINT`, see `src/base/crashpoint.rs`: the process aborts there without any
//! cleanup) and with SIGKILL while `git push` runs. Afterwards `git fsck` is clean, the
//! checkpoint being written is either fully there or absent, later writes work, and pushing
//! (`push`, and `push --all` where the crash lost the queue record) delivers every local
//! checkpoint to the bare remote, which is checked with `git for-each-ref` on both sides.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::commit_hooks::{commit_in, install_hooks, record, the_trailer, trailer_ids};
use crate::env::{
    assert_code, assert_fsck_clean, checkpoint_ref, path_str, rev_in, write_executable, Store,
    TestEnv, REFS_PREFIX, V1_BRANCH,
};
use crate::fixtures::{HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2, ULID_ID};
use crate::push::{add_remote, all_queued_refs, assert_never_forced};

/// The variable that arms a crash point in our binaries.
const CRASHPOINT: &str = "ENTIRE_TEST_CRASHPOINT";
/// Written after the crash, to show later writes are unaffected.
const LATER_ID: &str = "0123456789ab";
const SIGABRT: i32 = 6;

/// `git entire-checkpoint <args>` under `store`, with the crash point `point` armed; asserts it
/// died there.
fn run_until_crash(env: &TestEnv, store: Store, args: &[&str], point: &str) {
    let out = env
        .std_cmd(store)
        .env(CRASHPOINT, point)
        .args(args)
        .output()
        .expect("run git-entire-checkpoint");
    assert_eq!(
        out.status.signal(),
        Some(SIGABRT),
        "{args:?} did not die at {point}: {}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A repository with remote `origin` that already received one checkpoint (so the destination
/// is known and later pushes do not reconcile on their own). For git-branch the remote is
/// tracked, so the v1 branch is pushed (docs/how-it-works.md, "Pushes").
fn pushed_once(env: &TestEnv, store: Store) -> PathBuf {
    let origin = add_remote(env, "origin");
    env.git(&["push", "-q", "origin", "main"]);
    env.git(&["fetch", "-q", "origin"]);
    let first = env.input_file("first.jsonl", TRANSCRIPT_2);
    env.write(store, "first")
        .id(HEX_ID_2)
        .transcript(&first)
        .ok();
    assert_code(&env.run(store, &["push", "origin"]), 0, "first push");
    origin
}

/// The local and remote checkpoint data agree: the git-refs refs, or the v1 branch.
fn delivered(env: &TestEnv, store: Store, origin: &Path) -> bool {
    match store {
        Store::Refs => env.checkpoint_tips_in(origin) == env.checkpoint_tips(),
        Store::Branch => rev_in(env, origin, V1_BRANCH) == env.rev(V1_BRANCH),
    }
}

/// Every line of every queue file is a well-formed record naming a checkpoint ref.
pub(crate) fn assert_queues_well_formed(env: &TestEnv) {
    let common = env.common_dir();
    let mut files = vec![common.join("entire-checkpoint-push-queue.jsonl")];
    if let Ok(dir) = std::fs::read_dir(common.join("entire").join("push-queues")) {
        files.extend(dir.flatten().map(|e| e.path()));
    }
    for f in files
        .iter()
        .filter(|f| f.extension().is_some_and(|e| e == "jsonl"))
    {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        for line in text.lines() {
            let v: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: corrupt line {line:?}: {e}", f.display()));
            let r = v["ref"].as_str().unwrap_or_default();
            assert!(r.starts_with(REFS_PREFIX), "{}: {line}", f.display());
        }
    }
}

/// Whether checkpoint `id` exists; when it does, it holds exactly `session` with `transcript`.
fn written_whole(env: &TestEnv, store: Store, id: &str, session: &str, transcript: &[u8]) -> bool {
    if !env.exists(store, id, "") {
        return false;
    }
    let root = env.json(store, id, "metadata.json");
    assert_eq!(root["checkpoint_id"], json!(id), "{root}");
    assert_eq!(root["sessions"].as_array().map(Vec::len), Some(1), "{root}");
    let meta = env.json(store, id, "0/metadata.json");
    assert_eq!(meta["session_id"], json!(session), "{meta}");
    assert_eq!(env.blob(store, id, "0/full.jsonl"), transcript);
    true
}

/// What a writer killed at a point leaves, and what it takes to deliver it.
struct WriterCrash {
    point: &'static str,
    /// Whether the checkpoint exists after the crash.
    written: bool,
    /// Whether a plain `push` delivers it (else the queue record was lost and `push --all`,
    /// which reconciles with the remote, is the repair).
    plain_push_delivers: bool,
}

fn writer_killed(store: Store, crash: WriterCrash) {
    let env = TestEnv::new();
    let origin = pushed_once(&env, store);
    let transcript = env.input_file("crashed.jsonl", TRANSCRIPT);
    run_until_crash(
        &env,
        store,
        &env.write(store, "crashed")
            .id(HEX_ID)
            .transcript(&transcript)
            .argv(),
        crash.point,
    );
    assert_fsck_clean(&env, env.repo());
    assert_eq!(
        written_whole(&env, store, HEX_ID, "crashed", TRANSCRIPT),
        crash.written,
        "after a crash at {} the checkpoint is whole or absent as expected",
        crash.point
    );
    // The next write works (no stale lock, no torn queue line swallowing its record).
    let later = env.input_file("later.jsonl", TRANSCRIPT_2);
    env.write(store, "later")
        .id(LATER_ID)
        .transcript(&later)
        .ok();
    assert_code(
        &env.run(store, &["push", "origin"]),
        0,
        "push after the crash",
    );
    assert!(
        store == Store::Branch || rev_in(&env, &origin, &checkpoint_ref(LATER_ID)).is_some(),
        "the later checkpoint is delivered by a plain push"
    );
    assert_eq!(
        delivered(&env, store, &origin),
        crash.plain_push_delivers,
        "after a crash at {}, does a plain push deliver everything?",
        crash.point
    );
    if !crash.plain_push_delivers {
        assert_code(
            &env.run(store, &["push", "origin", "--all"]),
            0,
            "push --all",
        );
        assert!(delivered(&env, store, &origin), "push --all repairs");
    }
    assert_queues_well_formed(&env);
    assert_eq!(all_queued_refs(&env), Vec::<String>::new());
    assert_never_forced(&origin);
}

/// Killed after the new commit and its objects are stored, before the ref moves: the
/// checkpoint is absent (its objects are unreachable garbage, which fsck accepts).
fn writer_killed_before_ref_update(store: Store) {
    writer_killed(
        store,
        WriterCrash {
            point: "publish.before-ref-update",
            written: false,
            plain_push_delivers: true,
        },
    );
}

/// Killed right after the ref moved: the checkpoint is whole. On git-refs it was never
/// enqueued, so only the reconciling `push --all` delivers it; the v1 branch is always pushed.
fn writer_killed_after_ref_update(store: Store) {
    writer_killed(
        store,
        WriterCrash {
            point: "publish.after-ref-update",
            written: true,
            plain_push_delivers: store == Store::Branch,
        },
    );
}

/// A commit write the disk lost (issue 55, item 8c: a full disk did it without an error, and
/// libgit2's "target OID for the reference doesn't exist" was all the user saw): the write
/// fails with one line in our words naming the ref and the commit, moves no ref and queues
/// nothing; the next write works.
fn writer_whose_commit_is_lost(store: Store) {
    let env = TestEnv::new();
    crate::fixtures::write_std(&env, store, HEX_ID_2, "first", TRANSCRIPT_2);
    let before = env.refs_snapshot();
    let queued = all_queued_refs(&env);
    let transcript = env.input_file("lost.jsonl", TRANSCRIPT);
    let out = env
        .std_cmd(store)
        .env(CRASHPOINT, "publish.commit-lost")
        .args(
            env.write(store, "lost")
                .id(HEX_ID)
                .transcript(&transcript)
                .argv(),
        )
        .output()
        .unwrap();
    let err = assert_code(&out, 1, "a write whose commit the disk lost");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(
        !err.contains("class=") && !err.contains("target OID"),
        "our words: {err}"
    );
    let target = match store {
        Store::Refs => checkpoint_ref(HEX_ID),
        Store::Branch => V1_BRANCH.to_owned(),
    };
    assert!(
        err.contains(&format!("{target}: not updated: the commit "))
            && err.contains("is not in the object database (is the disk full"),
        "{err}"
    );
    assert_eq!(env.refs_snapshot(), before, "no ref moved");
    assert_eq!(all_queued_refs(&env), queued, "nothing queued");
    assert_fsck_clean(&env, env.repo());
    crate::fixtures::write_std(&env, store, HEX_ID, "lost", TRANSCRIPT);
    assert!(written_whole(&env, store, HEX_ID, "lost", TRANSCRIPT));
}

both_stores! {
    a_writer_whose_commit_the_disk_lost_says_so_and_moves_nothing => writer_whose_commit_is_lost;
    a_writer_killed_before_the_ref_update_leaves_no_checkpoint => writer_killed_before_ref_update;
    a_writer_killed_after_the_ref_update_leaves_a_whole_checkpoint => writer_killed_after_ref_update;
}

/// Killed half-way through appending its queue record: the checkpoint is whole, the queue ends
/// in a torn line that the next append does not swallow and the next drain drops.
#[test]
fn a_writer_killed_mid_queue_append_leaves_a_torn_line_that_heals() {
    writer_killed(
        Store::Refs,
        WriterCrash {
            point: "queue.mid-append",
            written: true,
            plain_push_delivers: false,
        },
    );
}

/// A pusher killed at `point` after three checkpoints were written: nothing is lost, and the
/// next plain push delivers everything.
fn pusher_killed(store: Store, point: &str) {
    let env = TestEnv::new();
    let origin = pushed_once(&env, store);
    for (i, id) in [HEX_ID, LATER_ID, ULID_ID].into_iter().enumerate() {
        if store == Store::Branch && id == ULID_ID {
            continue; // the git-branch primary refuses ULIDs
        }
        let t = env.input_file(&format!("t{i}.jsonl"), TRANSCRIPT);
        env.write(store, &format!("s{i}"))
            .id(id)
            .transcript(&t)
            .ok();
    }
    let local_before = env.refs_snapshot();
    run_until_crash(&env, store, &["push", "origin"], point);
    assert_eq!(
        env.refs_snapshot(),
        local_before,
        "a push moves no local ref"
    );
    assert_fsck_clean(&env, env.repo());
    assert_fsck_clean(&env, &origin);
    assert_queues_well_formed(&env);
    // Killed after `git push` returned, the remote is complete and only the queue lags.
    let after_git_push = matches!(point, "push.after-git-push" | "queue.before-rewrite#2");
    if store == Store::Refs {
        assert_eq!(
            delivered(&env, store, &origin),
            after_git_push,
            "killed at {point}: has the remote got everything yet?"
        );
    }
    assert_code(
        &env.run(store, &["push", "origin"]),
        0,
        "push after the crash",
    );
    assert!(
        delivered(&env, store, &origin),
        "the next push delivers everything after a kill at {point}"
    );
    assert_queues_well_formed(&env);
    assert_eq!(all_queued_refs(&env), Vec::<String>::new(), "{point}");
    assert_never_forced(&origin);
}

#[test]
fn a_pusher_killed_at_any_point_is_completed_by_the_next_push() {
    for point in [
        "push.after-fan-out",
        // The shared queue's rewrite that clears what was fanned out.
        "queue.before-rewrite#1",
        "push.before-git-push",
        "push.after-git-push",
        // The destination queue's rewrite that removes the landed refs.
        "queue.before-rewrite#2",
    ] {
        pusher_killed(Store::Refs, point);
    }
}

#[test]
fn a_v1_pusher_killed_around_git_push_is_completed_by_the_next_push() {
    for point in ["push.before-git-push", "push.after-git-push"] {
        pusher_killed(Store::Branch, point);
    }
}

/// Makes the remote's `pre-receive` hook block until the test opens the gate; returns the
/// "push started" marker and the gate.
pub(crate) fn gate_pushes(remote: &Path) -> (PathBuf, PathBuf) {
    let started = remote.join("push-started");
    let gate = remote.join("gate-open");
    write_executable(
        &remote.join("hooks").join("pre-receive"),
        &format!(
            "#!/bin/sh\ncat >/dev/null\ntouch '{}'\nwhile [ ! -f '{}' ]; do sleep 0.05; done\nexit 0\n",
            path_str(&started),
            path_str(&gate)
        ),
    );
    (started, gate)
}

/// Waits (bounded) until `marker` exists: a wait for the server, not a timing assertion.
pub(crate) fn wait_for(marker: &Path) {
    for _ in 0..3000 {
        if marker.exists() {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    panic!("{} never appeared", marker.display());
}

/// SIGHUP of the pusher's process group while `git push` is inside the remote, as when a
/// terminal is closed: the pusher kills its `git push` and the local transport's `receive-pack`
/// with the blocked `pre-receive` hook (they run in a process group of their own) and exits.
/// The local repository and the remote stay consistent and the next push delivers everything.
fn pusher_hung_up_during_git_push(store: Store) {
    let env = TestEnv::new();
    let origin = pushed_once(&env, store);
    let t = env.input_file("t.jsonl", TRANSCRIPT);
    env.write(store, "during").id(HEX_ID).transcript(&t).ok();
    let (started, gate) = gate_pushes(&origin);
    let mut child = env
        .std_cmd(store)
        .args(["push", "origin"])
        .process_group(0)
        .spawn()
        .expect("spawn push");
    wait_for(&started);
    let group = format!("-{}", child.id());
    let kill = std::process::Command::new("kill")
        .args(["-HUP", "--", &group])
        .status()
        .expect("run kill");
    assert!(kill.success(), "kill -HUP {group}");
    let status = child.wait().expect("reap the pusher");
    assert_eq!(status.code(), Some(128 + 1), "stopped by SIGHUP");
    assert!(
        !delivered(&env, store, &origin),
        "the remote did not get the checkpoint before the kill"
    );
    assert_fsck_clean(&env, env.repo());
    assert_queues_well_formed(&env);
    std::fs::write(&gate, "").expect("open the gate");
    let out: Output = env.run(store, &["push", "origin"]);
    assert_code(&out, 0, "push after SIGHUP");
    assert!(delivered(&env, store, &origin), "everything delivered");
    assert_fsck_clean(&env, &origin);
    if store == Store::Refs {
        assert_eq!(
            env.checkpoint_tips_in(&origin).len(),
            2,
            "both checkpoints on the remote"
        );
        assert_eq!(all_queued_refs(&env), Vec::<String>::new());
    }
    assert_never_forced(&origin);
}

both_stores! {
    a_pusher_hung_up_during_git_push_is_completed_by_the_next_push => pusher_hung_up_during_git_push;
}

/// `hooks install` and `hooks uninstall` killed where they move the user's hook (issue 55: a
/// kill between renaming the user's `pre-push` away and writing ours left no hook at all, and
/// the user's checks silently stopped; `pre-push` is the first hook installed, so none of ours
/// was there to put it back). At every such point the user's hook is in place and runs on the
/// next push; the install run again then runs it once per push, not twice.
#[test]
fn a_hooks_install_killed_half_way_never_leaves_the_users_hook_unrun() {
    let env = TestEnv::new();
    let dir = crate::env::hooks_dir(&env);
    env.bare_remote("origin");
    let log = env.root().join("user-hook.log");
    let users = format!("#!/bin/sh\necho ran >> '{}'\n", path_str(&log));
    write_executable(&dir.join("pre-push"), &users);
    let runs = || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let push = |n: usize| {
        env.git(&["commit", "-q", "--allow-empty", "-m", &format!("c{n}")]);
        env.git_hooked_ok(REFS, env.repo(), &["push", "-q", "origin", "HEAD:main"]);
    };

    run_until_crash(&env, Store::Refs, &["hooks", "install"], "hooks.after-keep");
    push(1);
    assert_eq!(runs(), 1, "the user's hook runs after a killed install");

    env.ok_default(&["hooks", "install"]);
    push(2);
    assert_eq!(
        runs(),
        2,
        "the user's hook runs once per push, through ours"
    );
    assert!(
        std::fs::read_to_string(dir.join("pre-push"))
            .unwrap()
            .contains("entire"),
        "ours is in place"
    );

    run_until_crash(
        &env,
        Store::Refs,
        &["hooks", "uninstall"],
        "hooks.before-put-back",
    );
    push(3);
    assert_eq!(runs(), 3, "the user's hook runs after a killed uninstall");
    env.ok_default(&["hooks", "uninstall"]);
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push")).unwrap(),
        users,
        "the user's hook is back in its place"
    );
    push(4);
    assert_eq!(runs(), 4);
}

/// The git-refs primary, for a test that pushes (git-branch waits for the remote's first branch).
const REFS: Option<Store> = Some(Store::Refs);

/// `session record` killed after saving the session, before it took the hooks' idle marker
/// away (issue 55: the marker stayed, and the commit hooks' fast path skipped the staged
/// session: the next commit linked nothing). The marker goes before the save too.
#[test]
fn a_session_record_killed_after_its_save_still_links_the_next_commit() {
    let env = TestEnv::new();
    install_hooks(&env);
    // A commit with nothing staged leaves the idle marker.
    commit_in(&env, env.repo(), None, "a.txt", "Nothing to link");
    let marker = PathBuf::from(env.git(&["rev-parse", "--git-common-dir"]).trim());
    let marker = env.repo().join(marker).join("entire/hooks-idle");
    assert!(marker.exists(), "the commit left the idle marker");

    let transcript = env.input(TRANSCRIPT);
    run_until_crash(
        &env,
        Store::Refs,
        &[
            "session",
            "record",
            "--session",
            "s1",
            "--transcript",
            path_str(&transcript),
        ],
        "session.after-save",
    );
    let (head, _) = commit_in(&env, env.repo(), None, "b.txt", "Work of s1");
    let id = the_trailer(&env, &head);
    let meta = env.json(Store::Branch, &id, "0/metadata.json");
    assert_eq!(meta["session_id"], json!("s1"), "{meta}");
}

/// Records session `s1`, then commits a file under `primary` with `post-commit` killed before
/// it condenses (the commit itself succeeds); returns the checkpoint its trailer names.
fn commit_with_post_commit_killed(env: &TestEnv, primary: Option<Store>) -> String {
    record(env, env.repo(), "s1", Some(TRANSCRIPT), &[]);
    std::fs::write(env.repo().join("a.txt"), "a\n").unwrap();
    env.git(&["add", "a.txt"]);
    let out = env
        .git_hooked_command(primary, env.repo(), &["commit", "-q", "-m", "Work of s1"])
        .env(CRASHPOINT, "post-commit.before-condense")
        .output()
        .unwrap();
    assert_code(&out, 0, "git commit (its post-commit killed)");
    the_trailer(env, "HEAD")
}

/// `post-commit` killed before it wrote the checkpoint its commit's trailer names (issue 55:
/// the trailer named a checkpoint that never existed, and the next commit took the session
/// into a checkpoint of its own). The next hook writes it, for that commit: a push (which
/// then delivers it), and a commit that follows links nothing new.
#[test]
fn a_commit_whose_post_commit_was_killed_gets_its_own_checkpoint() {
    let env = TestEnv::new();
    install_hooks(&env);
    let origin = env.bare_remote("origin");
    let id = commit_with_post_commit_killed(&env, REFS);
    let refs =
        |repo: &Path| env.git_in(repo, &["for-each-ref", "--format=%(refname)", REFS_PREFIX]);
    assert!(!refs(env.repo()).contains(&id), "nothing written yet");
    let doctor = env.run_primary_in(REFS, env.repo(), &["doctor", "--json"]);
    assert!(
        String::from_utf8_lossy(&doctor.stdout).contains("checkpoint-unwritten"),
        "doctor reports it: {}",
        String::from_utf8_lossy(&doctor.stdout)
    );

    // The push writes it first, and delivers it with the commit.
    let stderr = env.git_hooked_ok(REFS, env.repo(), &["push", "origin", "HEAD:main"]);
    assert!(stderr.contains("post-commit had not finished"), "{stderr}");
    assert!(refs(env.repo()).contains(&id), "written for its commit");
    assert!(refs(&origin).contains(&id), "pushed with the commit");
    let meta = env.json(Store::Refs, &id, "0/metadata.json");
    assert_eq!(meta["session_id"], json!("s1"), "{meta}");

    // The session is not staged any more: the next commit links nothing.
    let (next, _) = commit_in(&env, env.repo(), REFS, "b.txt", "By hand");
    assert!(
        !env.message(&next).contains("Entire-Checkpoint"),
        "{}",
        env.message(&next)
    );
    let doctor = env.run_primary_in(REFS, env.repo(), &["doctor", "--json"]);
    assert!(!String::from_utf8_lossy(&doctor.stdout).contains("checkpoint-unwritten"));
}

/// The same stop healed by the next commit's hook, and by `doctor --fix`.
#[test]
fn the_next_commit_or_doctor_fix_writes_a_killed_post_commits_checkpoint() {
    for by_doctor in [false, true] {
        let env = TestEnv::new();
        install_hooks(&env);
        let id = commit_with_post_commit_killed(&env, None);
        // More of the session after the stopped commit, then the next commit.
        record(&env, env.repo(), "s1", Some(TRANSCRIPT_2), &[]);
        if by_doctor {
            env.ok_default(&["doctor", "--fix"]);
        }
        let (next, _) = commit_in(&env, env.repo(), None, "b.txt", "Next");
        let meta = env.json(Store::Branch, &id, "0/metadata.json");
        assert_eq!(meta["session_id"], json!("s1"), "{meta}");
        assert_ne!(
            trailer_ids(&env, &next),
            vec![id.clone()],
            "the next commit does not take the stopped one's checkpoint"
        );
    }
}

/// A staged session whose `state.json` was torn (issue 55: every commit then linked nothing,
/// the valid session was never condensed either, `session list` exited 1 and `doctor` found
/// no problem). The torn one is passed over with a warning naming its repair; the others are
/// condensed; `session list` lists them; `doctor` reports it.
#[test]
fn a_corrupt_staged_session_holds_back_no_other() {
    let env = TestEnv::new();
    install_hooks(&env);
    record(&env, env.repo(), "s1", Some(TRANSCRIPT), &[]);
    record(&env, env.repo(), "s2", Some(TRANSCRIPT_2), &[]);
    let common = PathBuf::from(env.git(&["rev-parse", "--git-common-dir"]).trim());
    let state = env
        .repo()
        .join(common)
        .join("entire/sessions/s1/state.json");
    let text = std::fs::read(&state).unwrap();
    std::fs::write(&state, &text[..text.len() / 2]).unwrap();

    let (head, stderr) = commit_in(&env, env.repo(), None, "a.txt", "Work of s2");
    assert!(
        stderr.contains("s1") && stderr.contains("git entire-checkpoint session discard s1"),
        "{stderr}"
    );
    let id = the_trailer(&env, &head);
    let meta = env.json(Store::Branch, &id, "0/metadata.json");
    assert_eq!(meta["session_id"], json!("s2"), "{meta}");

    let out = env.run_default(&["session", "list", "--json"]);
    let stderr = assert_code(&out, 0, "session list");
    let listed = String::from_utf8_lossy(&out.stdout);
    assert!(listed.contains("s2") && !listed.contains("s1"), "{listed}");
    assert!(stderr.contains("session discard s1"), "{stderr}");

    let doctor = env.run_default(&["doctor", "--json"]);
    let doc = crate::env::parse_json(&doctor.stdout);
    let found = crate::doctor::findings_of(&doc, "session-unreadable");
    assert_eq!(found.len(), 1, "{doc}");
    assert_eq!(found[0]["subject"], json!("s1"), "{doc}");
    assert_eq!(
        crate::env::repair_args(found[0]).unwrap(),
        ["entire-checkpoint", "session", "discard", "s1"]
    );
}

/// Every `.lock` file git may leave in the ref store: under `refs/entire/`, and `packed-refs.lock`.
fn ref_locks(env: &TestEnv) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if p.extension().is_some_and(|x| x == "lock") {
                out.push(p);
            }
        }
    }
    let common = env
        .repo()
        .join(env.git(&["rev-parse", "--git-common-dir"]).trim());
    let mut out = Vec::new();
    walk(&common.join("refs/entire"), &mut out);
    let packed = common.join("packed-refs.lock");
    if packed.exists() {
        out.push(packed);
    }
    out
}

/// `gc` killed (SIGKILL: the OOM killer, a CI timeout) while git holds its ref transaction
/// (issue 55: git died by our death signal, SIGKILL, and could not remove its locks:
/// `packed-refs.lock` and a `.lock` per ref stayed, and every later gc, write and the user's own
/// `git branch -d` failed). A git on PATH that holds the transaction open (its script without
/// the final `commit`) makes the moment certain. git now gets SIGTERM, with the signals our
/// process blocks for its own handling unblocked, removes its locks, and the next gc works.
#[test]
fn a_killed_gc_leaves_no_ref_lock_behind() {
    let w = crate::gc::cases();
    let env = &w.env;
    let real_git = std::env::split_paths(&crate::env::path_with_bins())
        .map(|d| d.join("git"))
        .find(|p| p.is_file())
        .expect("git on PATH");
    let bin = env.root().join("holding-git");
    // Copies what the held transaction's git says into HOLDING: the kill below waits for its
    // `prepare: ok`, so that git holds every lock of the transaction and waits for input. A
    // kill while git was still taking them (the first lock seen) left one behind about once in
    // twelve runs on a loaded machine: a signal that lands as git creates a lock file, before
    // git has registered it for removal, leaves it.
    write_executable(
        &bin.join("git"),
        "#!/bin/bash\n\
         case \" $* \" in\n\
         *' update-ref '*'--stdin'*)\n\
             exec \"$REAL_GIT\" \"$@\" < <(python3 -c 'import sys; sys.stdout.buffer.write(sys.stdin.buffer.read().replace(b\"commit\\0\", b\"\"))'; sleep 20) > >(tee \"$HOLDING\") ;;\n\
         esac\n\
         exec \"$REAL_GIT\" \"$@\"\n",
    );
    let holding = env.root().join("holding");
    let mut path = vec![bin];
    path.extend(std::env::split_paths(&crate::env::path_with_bins()));
    let mut gc = env
        .std_cmd(Store::Refs)
        .env("PATH", std::env::join_paths(path).unwrap())
        .env("REAL_GIT", &real_git)
        .env("HOLDING", &holding)
        .args(["gc", "--keep-days", "30"])
        .spawn()
        .expect("run gc");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let prepared =
        || std::fs::read_to_string(&holding).is_ok_and(|said| said.contains("prepare: ok"));
    while !prepared() || ref_locks(env).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "gc never held a ref lock"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    gc.kill().unwrap();
    gc.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !ref_locks(env).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(
        ref_locks(env),
        Vec::<PathBuf>::new(),
        "git removed its locks"
    );
    let out = env.run(Store::Refs, &["gc", "--keep-days", "30"]);
    assert_code(&out, 0, "the next gc");
    assert_fsck_clean(env, env.repo());
}

/// A stderr that cannot be written (`/dev/full`: a full disk under a redirected log) never turns
/// a command into a panic (issue 55: exit 101 instead of the command's own code): what cannot be
/// said is dropped, and the exit code is the command's.
#[test]
fn a_full_stderr_never_panics() {
    let env = TestEnv::new();
    let full = || {
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap()
    };
    // An error (not found: 3), and a warning on a success (a session record where no hooks
    // are installed says they are not).
    let out = env
        .std_cmd(Store::Refs)
        .args(["show", "0123456789ab"])
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3), "show of a missing checkpoint");
    let transcript = env.input(TRANSCRIPT);
    let out = env
        .std_cmd(Store::Refs)
        .args(["session", "record", "--session", "s1", "--transcript"])
        .arg(&transcript)
        .stderr(full())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "session record, with its warning"
    );
}

/// A checkpoint ref whose tip is a blob or a tree (put there with plumbing): `show` and `list`
/// say what it is, as `doctor` does, in one line each and none of libgit2's internals (issue 55:
/// `class=Invalid (3); code=NotFound (-3)`, twice).
#[test]
fn a_checkpoint_ref_that_is_no_commit_is_said_in_our_words() {
    let env = TestEnv::new();
    let blob = env.git_stdin(&["hash-object", "-w", "--stdin"], b"hi\n");
    env.git(&["update-ref", &checkpoint_ref(HEX_ID), &blob]);
    let tree = env.git(&["write-tree"]).trim().to_owned();
    env.git(&["update-ref", &checkpoint_ref(HEX_ID_2), &tree]);
    for args in [&["show", HEX_ID][..], &["list"][..]] {
        let out = env.run(Store::Refs, args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(
            !stderr.contains("class=") && !stderr.contains("code="),
            "{args:?}: {stderr}"
        );
        assert!(
            stderr.contains(&format!("its tip {blob} is a blob, not a commit")),
            "{args:?}: {stderr}"
        );
        let said = stderr.matches("is a blob, not a commit").count();
        assert_eq!(said, 1, "said once: {args:?}: {stderr}");
    }
}
