//! Pushing checkpoints to real bare remotes: `git entire-checkpoint push [<REMOTE>] [--all]`,
//! `git entire-prepush <remote> [<url>]` and the installed pre-push hook
//! (docs/how-it-works.md, "The push queue and delivery" and "Pushes"; docs/format.md, "The push
//! queue" and "Wire behaviour"; docs/cli.md; docs/decisions.md, "Divergence is merged by
//! session" and "Delivery is tracked per remote").
//!
//! Every bare remote made here carries a server-side `update` hook that refuses a
//! non-fast-forward update (or a deletion) of anything under `refs/entire/` or
//! `refs/heads/entire/` and leaves a marker file when it had to: the client must never force,
//! so every test asserts the marker never appears. The same hook refuses the refs listed in the
//! remote's `reject-refs` file, and a `pre-receive` hook refuses a whole push that contains a ref
//! listed in `pre-receive-reject` and logs the number of ref updates of every push it receives.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::env::{
    assert_code, checkpoint_ref, hooks_dir, json_in, parse_json, path_str, prepush_bin, refs_in,
    rev_in, sha256_hex, write_executable, Store, TestEnv, V1_BRANCH,
};
use crate::fixtures::{HEX_ID, HEX_ID_2, TRANSCRIPT, TRANSCRIPT_2, ULID_ID};

/// Left in a remote by its `update` hook when a client tried a non-fast-forward update.
const FORCED_MARKER: &str = "FORCED-PUSH-ATTEMPTED";
/// Refs listed here (one a line) are refused by the remote's `update` hook.
const REJECT_REFS: &str = "reject-refs";
/// A push containing a ref listed here is refused as a whole by the remote's `pre-receive` hook.
const PRE_RECEIVE_REJECT: &str = "pre-receive-reject";
/// The remote's `pre-receive` hook appends the number of ref updates of every push here.
const PUSH_SIZES: &str = "push-sizes";
const QUEUE_FILE: &str = "entire-checkpoint-push-queue.jsonl";
const QUEUE_LOCK: &str = "entire-checkpoint-push-queue.lock";
const PASSWORD: &str = "s3cret";
const SECRET_URL: &str = "https://user:s3cret@127.0.0.1:1/x.git";
const THIRD_HEX_ID: &str = "0123456789ab";

// ---------------------------------------------------------------------------------------------
// Remotes
// ---------------------------------------------------------------------------------------------

/// Installs the guard (`update`) and the logging/rejecting `pre-receive` hook in a bare remote.
fn install_server_hooks(remote: &Path) {
    let dir = path_str(remote);
    let update = format!(
        r#"#!/bin/sh
# Test guard: checkpoint refs only ever move forward; listed refs are refused.
dir='{dir}'
if [ -f "$dir/{REJECT_REFS}" ] && grep -qxF "$1" "$dir/{REJECT_REFS}"; then
    echo "test policy: refusing $1" >&2
    exit 1
fi
case "$1" in
refs/entire/*|refs/heads/entire/*)
    if [ -n "$(printf '%s' "$2" | tr -d 0)" ] && ! git merge-base --is-ancestor "$2" "$3"; then
        echo "$1 $2 $3" >> "$dir/{FORCED_MARKER}"
        echo "test guard: non-fast-forward update of $1 refused" >&2
        exit 1
    fi
    ;;
esac
exit 0
"#
    );
    let pre_receive = format!(
        r#"#!/bin/sh
dir='{dir}'
input=$(cat)
printf '%s\n' "$input" | grep -c . >> "$dir/{PUSH_SIZES}"
if [ -f "$dir/{PRE_RECEIVE_REJECT}" ]; then
    while read -r bad; do
        if printf '%s\n' "$input" | awk '{{print $3}}' | grep -qxF "$bad"; then
            echo "test policy: a push containing $bad is refused" >&2
            exit 1
        fi
    done < "$dir/{PRE_RECEIVE_REJECT}"
fi
exit 0
"#
    );
    write_executable(&remote.join("hooks").join("update"), &update);
    write_executable(&remote.join("hooks").join("pre-receive"), &pre_receive);
}

/// A bare repository `<tmp>/<name>.git` with the server hooks, not added as a remote.
fn bare_with_server_hooks(env: &TestEnv, name: &str) -> PathBuf {
    let path = env.new_bare(name);
    install_server_hooks(&path);
    path
}

/// A bare repository with the server hooks, added as remote `name`.
pub(crate) fn add_remote(env: &TestEnv, name: &str) -> PathBuf {
    let path = env.bare_remote(name);
    install_server_hooks(&path);
    path
}

pub(crate) fn assert_never_forced(remote: &Path) {
    let marker = remote.join(FORCED_MARKER);
    assert!(
        !marker.exists(),
        "a non-fast-forward update was attempted on {}:\n{}",
        remote.display(),
        std::fs::read_to_string(&marker).unwrap_or_default()
    );
}

/// The session IDs of a checkpoint in a repository, by slot, read from `N/metadata.json`.
pub(crate) fn session_ids_in(env: &TestEnv, dir: &Path, id: &str) -> Vec<String> {
    let r = checkpoint_ref(id);
    let root = json_in(env, dir, &format!("{r}:metadata.json"));
    let n = root["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("root summary has no sessions array: {root}"))
        .len();
    (0..n)
        .map(|slot| {
            let m = json_in(env, dir, &format!("{r}:{slot}/metadata.json"));
            m["session_id"]
                .as_str()
                .unwrap_or_else(|| panic!("slot {slot} has no session_id: {m}"))
                .to_string()
        })
        .collect()
}

/// A clone of `remote` at `<tmp>/<name>` that also holds every checkpoint ref of the remote.
fn second_clone(env: &TestEnv, remote: &Path, name: &str) -> PathBuf {
    let dir = env.clone_of(remote, name, &[]);
    env.git_in(
        &dir,
        &[
            "fetch",
            "-q",
            "origin",
            "+refs/entire/checkpoints/*:refs/entire/checkpoints/*",
        ],
    );
    dir
}

// ---------------------------------------------------------------------------------------------
// The local repository: queue files, writes, pushes
// ---------------------------------------------------------------------------------------------

pub(crate) fn queue_path(env: &TestEnv) -> PathBuf {
    env.common_dir().join(QUEUE_FILE)
}

/// The shared queue file's bytes (`None` when it does not exist).
fn queue_bytes(env: &TestEnv) -> Option<Vec<u8>> {
    std::fs::read(queue_path(env)).ok()
}

/// The refs named by parseable lines of a queue file (empty when it does not exist).
pub(crate) fn refs_of_queue_file(path: &Path) -> Vec<String> {
    let Ok(text) = std::fs::read_to_string(path) else {
        return Vec::new();
    };
    text.lines()
        .filter_map(|l| serde_json::from_str::<Value>(l.trim()).ok())
        .filter_map(|v| v["ref"].as_str().map(str::to_string))
        .collect()
}

/// Every ref named in the shared queue or in any per-destination queue.
pub(crate) fn all_queued_refs(env: &TestEnv) -> Vec<String> {
    let mut refs = refs_of_queue_file(&queue_path(env));
    let dir = env.common_dir().join("entire").join("push-queues");
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "jsonl") {
                refs.extend(refs_of_queue_file(&path));
            }
        }
    }
    refs
}

/// `write --session <session> [--id <id>] --transcript <file> --files-touched <files>...` in
/// `dir` under `store`; returns the checkpoint ID it printed.
fn write_full(
    env: &TestEnv,
    store: Store,
    dir: &Path,
    id: Option<&str>,
    session: &str,
    transcript: &[u8],
    files: &[&str],
) -> String {
    let mut write = env
        .write(store, session)
        .transcript_bytes(transcript)
        .prompt("do the thing")
        .in_dir(dir);
    if let Some(id) = id {
        write = write.id(id);
    }
    let write = write.files_touched(files);
    let out = write.run();
    assert_code(&out, 0, &format!("{:?}", write.argv()));
    let id = String::from_utf8(out.stdout).expect("utf-8 ID");
    let id = id.trim().to_string();
    assert!(!id.is_empty(), "write printed no ID");
    id
}

/// A git-refs write in the repository; returns the ID.
fn write(env: &TestEnv, id: Option<&str>, session: &str, transcript: &[u8]) -> String {
    write_full(
        env,
        Store::Refs,
        env.repo(),
        id,
        session,
        transcript,
        &["a.go"],
    )
}

/// `git entire-checkpoint push <args>` (git-refs primary) in the repository.
fn push(env: &TestEnv, args: &[&str]) -> Output {
    push_in(env, env.repo(), args)
}

fn push_in(env: &TestEnv, dir: &Path, args: &[&str]) -> Output {
    let mut full = vec!["push"];
    full.extend_from_slice(args);
    env.run_in(Store::Refs, dir, &full)
}

/// `git entire-prepush <args>` under `store` with `stdin`.
fn prepush_as(env: &TestEnv, store: Store, args: &[&str], stdin: &str) -> Output {
    env.bin_cmd(&prepush_bin())
        .env("ENTIRE_CHECKPOINTS_PRIMARY", store.name())
        .args(args)
        .write_stdin(stdin.as_bytes().to_vec())
        .output()
        .expect("run git-entire-prepush")
}

fn prepush(env: &TestEnv, args: &[&str], stdin: &str) -> Output {
    prepush_as(env, Store::Refs, args, stdin)
}

/// What git writes on a pre-push hook's stdin when pushing `main` to a remote that lacks it.
fn main_push_line(env: &TestEnv) -> String {
    let head = env.rev("HEAD").expect("HEAD");
    format!(
        "refs/heads/main {head} refs/heads/main {}\n",
        env.zero_oid()
    )
}

/// Whether ours runs as the pre-push hook, as `status --json` says.
fn pre_push_is_ours(env: &TestEnv) -> bool {
    let out = env.run_in(Store::Refs, env.repo(), &["status", "--json"]);
    assert_code(&out, 0, "status --json");
    crate::env::hook_is_ours(&parse_json(&out.stdout), "pre-push")
}

/// Directories under the common dir that look like a git repository (a `HEAD` file and an
/// `objects` entry), other than the common dir itself: leftover side repositories.
fn leftover_side_repos(env: &TestEnv) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if !path.is_dir() {
                continue;
            }
            if path.join("HEAD").is_file() && path.join("objects").exists() {
                out.push(path.clone());
            }
            walk(&path, out);
        }
    }
    let common = env.common_dir();
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(&common) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !path.is_dir() || ["objects", "refs", "logs", "worktrees", "hooks"].contains(&&*name) {
            continue;
        }
        if path.join("HEAD").is_file() && path.join("objects").exists() {
            out.push(path.clone());
        }
        walk(&path, &mut out);
    }
    out
}

fn warning_lines(stderr: &str) -> Vec<&str> {
    stderr.lines().filter(|l| l.contains("warning")).collect()
}

// ---------------------------------------------------------------------------------------------
// The queue and the happy path
// ---------------------------------------------------------------------------------------------

/// A git-refs write announces its ref in the shared queue of the common dir: one
/// `{"ref":"<name>"}` line, mode 0600, lock sidecar beside it (docs/format.md, "The push queue").
#[test]
fn write_appends_the_ref_to_the_shared_queue() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    let path = queue_path(&env);
    let text = std::fs::read_to_string(&path).expect("queue file exists after a write");
    let line = format!("{{\"ref\":\"{}\"}}", checkpoint_ref(HEX_ID));
    assert!(
        text.lines().any(|l| l == line),
        "queue lacks the line {line}:\n{text}"
    );
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "queue file mode");
    assert!(
        env.common_dir().join(QUEUE_LOCK).exists(),
        "lock sidecar {QUEUE_LOCK} beside the queue"
    );
    assert_eq!(env.queued(), 1);
}

/// `push origin` delivers every queued ref (a ref written twice counts once), prints the one
/// progress line, empties every queue, and leaves the repository's own refs exactly as they were
/// (the push runs from a side repository that is cleaned up).
#[test]
fn push_delivers_queued_refs_and_empties_the_queues() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID), "sess-2", TRANSCRIPT_2);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    let minted = write(&env, None, "sess-3", TRANSCRIPT);
    assert_eq!(
        minted.len(),
        26,
        "a git-refs primary mints a ULID: {minted}"
    );
    assert_eq!(env.queued(), 3, "three distinct refs are waiting");

    let before = env.refs_snapshot();
    let stderr = assert_code(&push(&env, &["origin"]), 0, "push origin");
    assert!(
        stderr.contains("entire: pushing 3 checkpoint ref(s) to origin... done"),
        "progress line missing:\n{stderr}"
    );
    assert!(warning_lines(&stderr).is_empty(), "no warnings:\n{stderr}");
    let local = env.checkpoint_tips();
    assert_eq!(local.len(), 3);
    assert_eq!(
        refs_in(&env, &origin, "refs/"),
        local,
        "the remote holds exactly the checkpoint refs, at the local commits"
    );
    assert_eq!(
        env.refs_snapshot(),
        before,
        "pushing adds, moves or removes no ref of the repository"
    );
    assert_eq!(env.queued(), 0, "nothing waits after a confirmed push");
    assert_eq!(all_queued_refs(&env), Vec::<String>::new());
    assert_eq!(
        leftover_side_repos(&env),
        Vec::<PathBuf>::new(),
        "temporary side repositories are removed"
    );
    assert_never_forced(&origin);
}

/// The default remote is origin, else the only remote.
#[test]
fn push_without_a_remote_uses_origin_else_the_only_remote() {
    let env = TestEnv::new();
    let only = add_remote(&env, "upstream");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    assert_code(&push(&env, &[]), 0, "push with one remote");
    assert_eq!(env.checkpoint_tips_in(&only), env.checkpoint_tips());

    let env = TestEnv::new();
    let other = add_remote(&env, "other");
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    assert_code(&push(&env, &[]), 0, "push with origin and another remote");
    assert_eq!(env.checkpoint_tips_in(&origin), env.checkpoint_tips());
    assert!(
        env.checkpoint_tips_in(&other).is_empty(),
        "only origin is pushed to"
    );
}

/// The pre-push entry point, given git's arguments and stdin, pushes the queued checkpoint refs
/// (and nothing of the user's: git sends those itself) and exits 0.
#[test]
fn prepush_pushes_the_queue_with_gits_arguments_and_stdin() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let stdin = main_push_line(&env);
    let out = prepush(&env, &["origin", path_str(&origin)], &stdin);
    let stderr = assert_code(&out, 0, "git-entire-prepush origin <url>");
    assert!(
        stderr.contains("entire: pushing 2 checkpoint ref(s) to origin... done"),
        "progress line missing:\n{stderr}"
    );
    assert_eq!(
        refs_in(&env, &origin, "refs/"),
        env.checkpoint_tips(),
        "exactly the checkpoint refs, not the user's branch"
    );
    assert_eq!(env.queued(), 0);
    assert_never_forced(&origin);
}

/// With nothing queued (or everything already delivered) a push is silent and needs no network.
#[test]
fn nothing_to_push_is_silent() {
    let env = TestEnv::new();
    env.git(&["remote", "add", "origin", "/nonexistent/path.git"]);
    let stderr = assert_code(&push(&env, &["origin"]), 0, "push with no checkpoints");
    assert_eq!(stderr.trim(), "", "no checkpoints: no output, no network");
    let out = prepush(&env, &["origin", "/nonexistent/path.git"], "");
    let stderr = assert_code(&out, 0, "prepush with no checkpoints");
    assert_eq!(stderr.trim(), "", "no checkpoints: no output, no network");

    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    assert_code(&push(&env, &["origin"]), 0, "first push");
    let stderr = assert_code(&push(&env, &["origin"]), 0, "second push");
    assert_eq!(stderr.trim(), "", "everything delivered: nothing to say");
    assert_eq!(env.checkpoint_tips_in(&origin), env.checkpoint_tips());
}

/// A checkpoint that grew (another session) is pushed again as a fast-forward.
#[test]
fn an_advanced_checkpoint_is_pushed_as_a_fast_forward() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    assert_code(&push(&env, &["origin"]), 0, "first push");
    let name = checkpoint_ref(HEX_ID);
    let first = rev_in(&env, &origin, &name).expect("pushed");
    write(&env, Some(HEX_ID), "sess-2", TRANSCRIPT_2);
    assert_eq!(env.queued(), 1);
    assert_code(&push(&env, &["origin"]), 0, "second push");
    let second = rev_in(&env, &origin, &name).expect("still there");
    assert_eq!(Some(second.clone()), env.rev(&name));
    assert_ne!(first, second);
    assert!(env.is_ancestor_in(&origin, &first, &second));
    assert_eq!(
        session_ids_in(&env, &origin, HEX_ID),
        vec!["sess-1", "sess-2"]
    );
    assert_eq!(env.queued(), 0);
    assert_never_forced(&origin);
}

/// More than 200 queued refs go out in several `git push`es of at most 200 refs each.
#[test]
fn pushes_are_chunked_at_200_refs() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    for i in 0..205 {
        write(&env, None, &format!("sess-{i}"), TRANSCRIPT);
    }
    assert_eq!(env.queued(), 205);
    let stderr = assert_code(&push(&env, &["origin"]), 0, "push of 205 refs");
    assert!(
        stderr.contains("entire: pushing 205 checkpoint ref(s) to origin... done"),
        "{stderr}"
    );
    assert_eq!(env.checkpoint_tips_in(&origin), env.checkpoint_tips());
    assert_eq!(env.checkpoint_tips().len(), 205);
    let sizes: Vec<usize> = std::fs::read_to_string(origin.join(PUSH_SIZES))
        .expect("the remote received pushes")
        .lines()
        .map(|l| l.trim().parse().expect("a count"))
        .collect();
    assert!(
        sizes.len() >= 2,
        "205 refs need at least two pushes: {sizes:?}"
    );
    assert!(
        sizes.iter().all(|&n| n <= 200),
        "no push carries more than 200 refs: {sizes:?}"
    );
    assert_eq!(
        sizes.iter().sum::<usize>(),
        205,
        "each ref sent once: {sizes:?}"
    );
    assert_eq!(env.queued(), 0);
    assert_never_forced(&origin);
}

// ---------------------------------------------------------------------------------------------
// Stale, garbage and foreign queue entries (docs/format.md, "The push queue")
// ---------------------------------------------------------------------------------------------

/// A queued ref that was deleted locally is dropped, not pushed.
#[test]
fn stale_queue_entries_are_dropped() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    let stale = checkpoint_ref(HEX_ID_2);
    env.git(&["update-ref", "-d", &stale]);
    let stderr = assert_code(&push(&env, &["origin"]), 0, "push with a stale entry");
    assert!(
        stderr.contains("entire: pushing 1 checkpoint ref(s) to origin... done"),
        "{stderr}"
    );
    let remote = env.checkpoint_tips_in(&origin);
    assert_eq!(remote, env.checkpoint_tips());
    assert!(!remote.contains_key(&stale), "the stale ref is not pushed");
    assert_eq!(env.queued(), 0, "the stale entry is gone from every queue");
    assert!(!all_queued_refs(&env).contains(&stale));
}

/// Malformed, blank and duplicate lines in the shared queue are skipped: counted once or not at
/// all, the valid refs still delivered.
#[test]
fn garbage_and_duplicate_queue_lines_are_skipped() {
    use std::io::Write;
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    let dup = format!("{{\"ref\":\"{}\"}}\n", checkpoint_ref(HEX_ID));
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(queue_path(&env))
        .expect("queue exists");
    for line in [
        "not json\n",
        "\n",
        "   \n",
        "{\"ref\":\"\"}\n",
        "{}\n",
        "[1, 2]\n",
        "{\"ref\": 5}\n",
        dup.as_str(),
        dup.as_str(),
        "{\"ref\":\"refs/entire/checkpoints/f6/a1b2c3d4e5f6\"",
    ] {
        f.write_all(line.as_bytes()).unwrap();
    }
    drop(f);
    assert_eq!(env.queued(), 2, "two distinct valid refs");
    let stderr = assert_code(&push(&env, &["origin"]), 0, "push with a dirty queue");
    assert!(
        stderr.contains("entire: pushing 2 checkpoint ref(s) to origin... done"),
        "{stderr}"
    );
    assert_eq!(refs_in(&env, &origin, "refs/"), env.checkpoint_tips());
    assert_eq!(env.queued(), 0);
    assert_never_forced(&origin);
}

/// Queue lines naming refs outside the checkpoint namespace, or foreign refs inside it, are
/// never pushed (docs/decisions.md, "Foreign refs are never touched").
#[test]
fn foreign_refs_named_in_the_queue_are_never_pushed() {
    use std::io::Write;
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    let head = env.rev("HEAD").unwrap();
    let foreign = "refs/entire/checkpoints/v1/main";
    env.git(&["update-ref", foreign, &head]);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(queue_path(&env))
        .expect("queue exists");
    for r in ["refs/heads/main", foreign, "refs/tags/nope"] {
        writeln!(f, "{{\"ref\":\"{r}\"}}").unwrap();
    }
    drop(f);
    assert_code(&push(&env, &["origin"]), 0, "push");
    let remote = refs_in(&env, &origin, "refs/");
    assert_eq!(
        remote.keys().collect::<Vec<_>>(),
        vec![&checkpoint_ref(HEX_ID)],
        "only the checkpoint ref reaches the remote"
    );
    assert_code(&push(&env, &["origin", "--all"]), 0, "push --all");
    let remote = refs_in(&env, &origin, "refs/");
    assert_eq!(
        remote.keys().collect::<Vec<_>>(),
        vec![&checkpoint_ref(HEX_ID)],
        "--all pushes no foreign ref either"
    );
}

// ---------------------------------------------------------------------------------------------
// Delivery per remote (docs/decisions.md, "Delivery is tracked per remote")
// ---------------------------------------------------------------------------------------------

/// Pushing to remote A does not make remote B miss checkpoints: B's first push sends everything,
/// and a later checkpoint waits for B until B confirmed it (the reference loses this: #1635).
#[test]
fn a_second_remote_receives_every_checkpoint() {
    let env = TestEnv::new();
    let a = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    assert_code(&push(&env, &["origin"]), 0, "push to A");
    assert_eq!(env.checkpoint_tips_in(&a).len(), 3);
    assert_eq!(env.queued(), 0);

    let b = add_remote(&env, "backup");
    let stderr = assert_code(&push(&env, &["backup"]), 0, "first push to B");
    assert_eq!(
        env.checkpoint_tips_in(&b),
        env.checkpoint_tips(),
        "B gets all three although the queue was drained by A:\n{stderr}"
    );

    let fourth = write(&env, None, "sess-4", TRANSCRIPT_2);
    assert_code(&push(&env, &["origin"]), 0, "push the fourth to A");
    assert!(env
        .checkpoint_tips_in(&a)
        .contains_key(&checkpoint_ref(&fourth)));
    assert!(!env
        .checkpoint_tips_in(&b)
        .contains_key(&checkpoint_ref(&fourth)));
    assert!(
        all_queued_refs(&env).contains(&checkpoint_ref(&fourth)),
        "the fourth is still in a queue file for B"
    );
    // `status --json` is checked at the end, so a miscount does not hide the delivery to B.
    let waiting_for_b = env.queued();
    assert_code(&push(&env, &["backup"]), 0, "push the fourth to B");
    assert_eq!(env.checkpoint_tips_in(&b), env.checkpoint_tips());
    assert_eq!(env.checkpoint_tips_in(&a), env.checkpoint_tips());
    assert_eq!(env.queued(), 0);
    assert_eq!(all_queued_refs(&env), Vec::<String>::new());
    assert_never_forced(&a);
    assert_never_forced(&b);
    assert_eq!(
        waiting_for_b, 1,
        "status --json `queued` counts the fourth while it waits for B"
    );
}

/// A remote whose URL changed is a new destination: it receives every checkpoint.
#[test]
fn a_remote_with_a_new_url_receives_every_checkpoint() {
    let env = TestEnv::new();
    let old = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    assert_code(&push(&env, &["origin"]), 0, "push to the old URL");
    assert_eq!(env.checkpoint_tips_in(&old).len(), 2);
    let new = bare_with_server_hooks(&env, "moved");
    env.git(&["remote", "set-url", "origin", path_str(&new)]);
    assert_code(&push(&env, &["origin"]), 0, "push to the new URL");
    assert_eq!(env.checkpoint_tips_in(&new), env.checkpoint_tips());
    assert_never_forced(&new);
}

/// A checkpoint whose queue record was lost is still delivered by `push --all` and by the first
/// push to a new remote; `--all` also brings a remote that is behind up to date.
#[test]
fn push_all_delivers_checkpoints_whose_queue_line_was_lost() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    assert_code(&push(&env, &["origin"]), 0, "first push");
    let old_tip = rev_in(&env, &origin, &checkpoint_ref(HEX_ID)).unwrap();

    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID), "sess-2", TRANSCRIPT_2);
    std::fs::write(queue_path(&env), b"").expect("truncate the queue");
    let stderr = assert_code(&push(&env, &["origin", "--all"]), 0, "push --all");
    assert_eq!(
        env.checkpoint_tips_in(&origin),
        env.checkpoint_tips(),
        "--all sends the unqueued checkpoint and the advanced one:\n{stderr}"
    );
    let new_tip = rev_in(&env, &origin, &checkpoint_ref(HEX_ID)).unwrap();
    assert!(env.is_ancestor_in(&origin, &old_tip, &new_tip));
    assert_never_forced(&origin);

    // A checkpoint never queued at all reaches a remote added later.
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    std::fs::write(queue_path(&env), b"").expect("truncate the queue");
    let second = add_remote(&env, "second");
    assert_code(&push(&env, &["second"]), 0, "first push to a new remote");
    assert_eq!(env.checkpoint_tips_in(&second), env.checkpoint_tips());
    assert_eq!(env.checkpoint_tips().len(), 3);
    assert_never_forced(&second);
}

// ---------------------------------------------------------------------------------------------
// Divergence recovery (docs/decisions.md, "Divergence is merged by session")
// ---------------------------------------------------------------------------------------------

/// The remote's copy moved on (another machine added a session): the push fetches it, merges by
/// session (remote sessions keep their slots, local-only ones are appended, root summary
/// recomputed), and pushes a fast-forward; the old remote tip stays an ancestor.
#[test]
fn a_diverged_checkpoint_is_merged_by_session_and_pushed_as_a_fast_forward() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    env.git(&["push", "-q", "origin", "main"]);
    let name = checkpoint_ref(HEX_ID);
    let t1 = b"{\"type\":\"user\",\"message\":\"one\"}\n".as_slice();
    let t2 = b"{\"type\":\"user\",\"message\":\"two\"}\n".as_slice();
    let t3 = b"{\"type\":\"user\",\"message\":\"three\"}\n".as_slice();
    write_full(
        &env,
        Store::Refs,
        env.repo(),
        Some(HEX_ID),
        "sess-1",
        t1,
        &["a.go"],
    );
    assert_code(&push(&env, &["origin"]), 0, "first push");

    let laptop = second_clone(&env, &origin, "laptop");
    write_full(
        &env,
        Store::Refs,
        &laptop,
        Some(HEX_ID),
        "sess-2",
        t2,
        &["b.go"],
    );
    assert_code(
        &push_in(&env, &laptop, &["origin"]),
        0,
        "push from the other clone",
    );
    let remote_before = rev_in(&env, &origin, &name).unwrap();
    assert_eq!(
        session_ids_in(&env, &origin, HEX_ID),
        vec!["sess-1", "sess-2"]
    );

    write_full(
        &env,
        Store::Refs,
        env.repo(),
        Some(HEX_ID),
        "sess-3",
        t3,
        &["c.go"],
    );
    let stderr = assert_code(
        &push(&env, &["origin"]),
        0,
        "push of the diverged checkpoint",
    );
    let remote_after = rev_in(&env, &origin, &name).unwrap();
    assert_ne!(
        remote_after, remote_before,
        "the merged checkpoint landed:\n{stderr}"
    );
    assert!(
        env.is_ancestor_in(&origin, &remote_before, &remote_after),
        "the remote's commit is preserved as an ancestor"
    );
    assert_eq!(
        env.rev(&name),
        Some(remote_after.clone()),
        "the local ref moved to the pushed merge"
    );
    assert_eq!(
        session_ids_in(&env, &origin, HEX_ID),
        vec!["sess-1", "sess-2", "sess-3"],
        "remote sessions keep their slots, the local-only one is appended"
    );
    let root = json_in(&env, &origin, &format!("{name}:metadata.json"));
    let paths: Vec<&str> = root["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["metadata"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        paths,
        vec!["/0/metadata.json", "/1/metadata.json", "/2/metadata.json"]
    );
    assert_eq!(
        root["files_touched"],
        json!(["a.go", "b.go", "c.go"]),
        "root summary recomputed over all sessions: {root}"
    );
    let counts: u64 = (0..3)
        .map(|s| {
            json_in(&env, &origin, &format!("{name}:{s}/metadata.json"))["checkpoints_count"]
                .as_u64()
                .unwrap()
        })
        .sum();
    assert_eq!(root["checkpoints_count"], json!(counts), "{root}");
    for (slot, t) in [(0, t1), (1, t2), (2, t3)] {
        assert_eq!(
            env.git_bytes_in(
                &origin,
                &["cat-file", "blob", &format!("{name}:{slot}/full.jsonl")]
            ),
            t,
            "slot {slot} transcript"
        );
    }
    assert_eq!(env.queued(), 0);
    assert_never_forced(&origin);
}

/// Both sides rewrote session `sess-1` of one checkpoint; returns (the remote's transcript of
/// slot 0 after the push, the push's stderr) and checks the invariants of every such merge.
fn same_session_rewritten_on_both_sides(local: &[u8], remote: &[u8]) -> (Vec<u8>, String) {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    env.git(&["push", "-q", "origin", "main"]);
    let name = checkpoint_ref(ULID_ID);
    let base = b"{\"type\":\"user\",\"message\":\"start\"}\n".as_slice();
    write(&env, Some(ULID_ID), "sess-1", base);
    assert_code(&push(&env, &["origin"]), 0, "first push");

    let laptop = second_clone(&env, &origin, "laptop");
    write_full(
        &env,
        Store::Refs,
        &laptop,
        Some(ULID_ID),
        "sess-1",
        remote,
        &["a.go"],
    );
    assert_code(
        &push_in(&env, &laptop, &["origin"]),
        0,
        "push from the other clone",
    );
    let remote_before = rev_in(&env, &origin, &name).unwrap();

    write(&env, Some(ULID_ID), "sess-1", local);
    let stderr = assert_code(&push(&env, &["origin"]), 0, "push of the diverged session");
    let remote_after = rev_in(&env, &origin, &name).unwrap();
    assert!(
        env.is_ancestor_in(&origin, &remote_before, &remote_after),
        "the remote's commit is an ancestor of the pushed one:\n{stderr}"
    );
    assert_eq!(
        env.rev(&name),
        Some(remote_after),
        "local ref equals the remote ref"
    );
    assert_eq!(
        session_ids_in(&env, &origin, ULID_ID),
        vec!["sess-1"],
        "one session, one slot"
    );
    let transcript = env.git_bytes_in(
        &origin,
        &["cat-file", "blob", &format!("{name}:0/full.jsonl")],
    );
    let hash = env.git_in(
        &origin,
        &["cat-file", "blob", &format!("{name}:0/content_hash.txt")],
    );
    assert_eq!(
        hash,
        format!("sha256:{}", sha256_hex(&transcript)),
        "content hash matches the kept transcript"
    );
    assert!(
        stderr.lines().any(|l| l.contains("sess-1")),
        "a line on stderr names the session:\n{stderr}"
    );
    assert_eq!(env.queued(), 0);
    assert_never_forced(&origin);
    (transcript, stderr)
}

const LINE_1: &str = "{\"type\":\"user\",\"message\":\"start\"}\n";
const LINE_2: &str = "{\"type\":\"assistant\",\"message\":\"working\"}\n";
const LINE_3: &str = "{\"type\":\"assistant\",\"message\":\"finished\"}\n";

#[test]
fn same_session_conflict_the_remote_transcript_that_extends_the_local_one_wins() {
    let local = format!("{LINE_1}{LINE_2}");
    let remote = format!("{LINE_1}{LINE_2}{LINE_3}");
    let (kept, stderr) = same_session_rewritten_on_both_sides(local.as_bytes(), remote.as_bytes());
    assert_eq!(
        String::from_utf8_lossy(&kept),
        remote,
        "the longer transcript that starts with the other wins:\n{stderr}"
    );
}

#[test]
fn same_session_conflict_the_local_transcript_that_extends_the_remote_one_wins() {
    let local = format!("{LINE_1}{LINE_2}{LINE_3}");
    let remote = format!("{LINE_1}{LINE_2}");
    let (kept, stderr) = same_session_rewritten_on_both_sides(local.as_bytes(), remote.as_bytes());
    assert_eq!(String::from_utf8_lossy(&kept), local, "{stderr}");
}

#[test]
fn same_session_conflict_without_an_extension_keeps_the_local_transcript() {
    let local = format!("{LINE_1}{{\"type\":\"assistant\",\"message\":\"local\"}}\n");
    let remote = format!("{LINE_1}{{\"type\":\"assistant\",\"message\":\"remote, longer\"}}\n");
    let (kept, stderr) = same_session_rewritten_on_both_sides(local.as_bytes(), remote.as_bytes());
    assert_eq!(String::from_utf8_lossy(&kept), local, "{stderr}");
}

// ---------------------------------------------------------------------------------------------
// Server rejection, unreachable remotes, credentials, settings (docs/how-it-works.md, "Pushes";
// docs/configuration.md, "Pushing")
// ---------------------------------------------------------------------------------------------

/// The server refuses one ref: the others land, the refused one stays queued with one warning
/// naming it, is not rewritten locally, and is tried again by the next push.
fn one_ref_refused_by_the_server(reject_file: &str) {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let refused = checkpoint_ref(HEX_ID_2);
    let refused_tip = env.rev(&refused).unwrap();
    std::fs::write(origin.join(reject_file), format!("{refused}\n")).unwrap();

    // A refused ref fails the push (exit 1), and the others land.
    let stderr = assert_code(&push(&env, &["origin"]), 1, "push with one refused ref");
    let remote = env.checkpoint_tips_in(&origin);
    for id in [HEX_ID, ULID_ID] {
        assert_eq!(
            remote.get(&checkpoint_ref(id)),
            env.rev(&checkpoint_ref(id)).as_ref(),
            "{id} lands although another ref is refused:\n{stderr}"
        );
    }
    assert!(
        !remote.contains_key(&refused),
        "the refused ref is not there"
    );
    assert!(
        all_queued_refs(&env).contains(&refused),
        "the refused ref stays in a queue file:\n{stderr}"
    );
    // `status --json` is checked at the end, so a miscount does not hide the retry behaviour.
    let queued_after_refusal = env.queued();
    let warnings = warning_lines(&stderr);
    assert_eq!(warnings.len(), 1, "exactly one warning:\n{stderr}");
    assert!(
        warnings[0].contains(&refused),
        "the warning names the ref:\n{stderr}"
    );
    assert_eq!(
        env.rev(&refused),
        Some(refused_tip),
        "a refused ref is not fetched and replayed"
    );

    // Still refused: tried again, still queued, still one warning.
    let stderr = assert_code(&push(&env, &["origin"]), 1, "second push, still refused");
    let warnings = warning_lines(&stderr);
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(warnings[0].contains(&refused), "{stderr}");
    assert!(all_queued_refs(&env).contains(&refused));
    let queued_after_second_refusal = env.queued();

    // Policy lifted: the next push delivers it.
    std::fs::remove_file(origin.join(reject_file)).unwrap();
    let stderr = assert_code(
        &push(&env, &["origin"]),
        0,
        "push after the policy was lifted",
    );
    assert_eq!(
        env.checkpoint_tips_in(&origin),
        env.checkpoint_tips(),
        "the previously refused ref is retried and lands:\n{stderr}"
    );
    assert_eq!(env.queued(), 0);
    assert_never_forced(&origin);
    assert_eq!(
        (queued_after_refusal, queued_after_second_refusal),
        (1, 1),
        "status --json `queued` counts the refused ref while it waits"
    );
}

#[test]
fn a_ref_refused_by_an_update_hook_stays_queued_and_the_rest_land() {
    one_ref_refused_by_the_server(REJECT_REFS);
}

#[test]
fn a_ref_refused_by_a_pre_receive_hook_stays_queued_and_the_rest_land() {
    one_ref_refused_by_the_server(PRE_RECEIVE_REJECT);
}

/// An unreachable remote: `push` exits 1 and the pre-push hook 0 (the user's push goes on), each
/// with one line naming the remote; the queue file byte-identical.
fn unreachable_remote(url: &str) {
    let env = TestEnv::new();
    let remote = "unreachable-remote";
    env.git(&["remote", "add", remote, url]);
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    let before = queue_bytes(&env).expect("queue file");
    let check = |out: &Output, code: i32, what: &str| {
        let stderr = assert_code(out, code, what);
        let naming: Vec<&str> = stderr.lines().filter(|l| l.contains(remote)).collect();
        assert_eq!(
            naming.len(),
            1,
            "{what}: one line names the remote:\n{stderr}"
        );
        let kind = if code == 0 { "warning" } else { "error" };
        assert!(
            naming[0].contains(kind),
            "{what}: it is an {kind}:\n{stderr}"
        );
        assert!(naming[0].contains("stay queued"), "{what}: {stderr}");
        assert_eq!(
            queue_bytes(&env).as_deref(),
            Some(before.as_slice()),
            "{what}: the queue file is unchanged (content and order)"
        );
        assert_eq!(env.queued(), 3, "{what}");
    };
    check(&push(&env, &[remote]), 1, "push to an unreachable remote");
    check(&push(&env, &[]), 1, "push to the only (unreachable) remote");
    check(
        &prepush(&env, &[remote, url], &main_push_line(&env)),
        0,
        "prepush to an unreachable remote",
    );
    check(
        &push(&env, &[remote, "--all"]),
        1,
        "push --all to an unreachable remote",
    );
}

#[test]
fn push_to_a_remote_that_does_not_exist_fails() {
    let env = TestEnv::new();
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let err = assert_code(&push(&env, &["nosuch"]), 1, "push nosuch");
    assert!(err.contains("nosuch"), "{err}");
    assert_eq!(env.queued(), 1, "the ref stays queued");
}

#[test]
fn an_unreachable_path_remote_keeps_the_queue() {
    unreachable_remote("/nonexistent/path.git");
}

#[test]
fn an_unreachable_https_remote_keeps_the_queue() {
    unreachable_remote("https://127.0.0.1:1/x.git");
}

/// A password in a remote URL is never printed, whatever the command and verbosity.
#[test]
fn a_password_in_a_remote_url_is_never_printed() {
    let env = TestEnv::new();
    env.git(&["remote", "add", "origin", SECRET_URL]);
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let line = main_push_line(&env);
    let runs: Vec<(String, Output)> = vec![
        ("push origin".into(), push(&env, &["origin"])),
        ("push <url>".into(), push(&env, &[SECRET_URL])),
        ("push".into(), push(&env, &[])),
        ("push --all origin".into(), push(&env, &["origin", "--all"])),
        (
            "push --all <url>".into(),
            push(&env, &[SECRET_URL, "--all"]),
        ),
        (
            "-vv push origin".into(),
            env.run_in(Store::Refs, env.repo(), &["-vv", "push", "origin"]),
        ),
        (
            "prepush origin <url>".into(),
            prepush(&env, &["origin", SECRET_URL], &line),
        ),
        (
            "prepush <url> <url>".into(),
            prepush(&env, &[SECRET_URL, SECRET_URL], &line),
        ),
    ];
    for (what, out) in &runs {
        // The remote is unreachable: `push` fails, the hook never does.
        let code = if what.starts_with("prepush") { 0 } else { 1 };
        let stderr = assert_code(out, code, what);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            !stdout.contains(PASSWORD) && !stderr.contains(PASSWORD),
            "{what} printed the password:\nstdout:\n{stdout}\nstderr:\n{stderr}"
        );
    }
    for args in [vec!["status"], vec!["status", "--json"]] {
        let out = env.run_in(Store::Refs, env.repo(), &args);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            !text.contains(PASSWORD),
            "{args:?} printed the password:\n{text}"
        );
    }
    assert_eq!(env.queued(), 2, "nothing was delivered anywhere");
}

/// `push_sessions: false` turns pushing off: nothing is pushed and the queue is untouched
/// (docs/configuration.md, "Pushing"); turning it back on delivers what waited.
#[test]
fn push_sessions_false_pushes_nothing_and_keeps_the_queue() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    env.write_file(
        ".entire/settings.json",
        br#"{"strategy_options": {"push_sessions": false}}"#,
    );
    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    let before = queue_bytes(&env).expect("queue file");
    assert_code(&push(&env, &["origin"]), 0, "push with push_sessions false");
    assert_code(
        &prepush(&env, &["origin", path_str(&origin)], &main_push_line(&env)),
        0,
        "prepush with push_sessions false",
    );
    assert_code(
        &push(&env, &["origin", "--all"]),
        0,
        "push --all with push_sessions false",
    );
    assert!(
        refs_in(&env, &origin, "refs/").is_empty(),
        "nothing reaches the remote"
    );
    assert_eq!(queue_bytes(&env), Some(before), "the queue is untouched");
    assert_eq!(env.queued(), 2);
    // A per-clone file that sets another strategy option leaves the committed
    // `push_sessions: false` in force: options override key by key, not block by block.
    env.write_file(
        ".git/entire/settings.local.json",
        br#"{"strategy_options": {"filtered_fetches": false}}"#,
    );
    assert_code(
        &push(&env, &["origin"]),
        0,
        "push with a local options block",
    );
    assert!(
        refs_in(&env, &origin, "refs/").is_empty(),
        "the committed push_sessions: false still applies"
    );
    std::fs::remove_file(env.repo().join(".git/entire/settings.local.json")).unwrap();

    std::fs::remove_file(env.repo().join(".entire/settings.json")).unwrap();
    assert_code(
        &push(&env, &["origin"]),
        0,
        "push with pushing enabled again",
    );
    assert_eq!(env.checkpoint_tips_in(&origin), env.checkpoint_tips());
    assert_eq!(env.checkpoint_tips_in(&origin).len(), 2);
}

// ---------------------------------------------------------------------------------------------
// Hooks
// ---------------------------------------------------------------------------------------------

#[test]
fn hooks_install_writes_an_executable_pre_push_and_status_reports_it() {
    use std::os::unix::fs::PermissionsExt;
    let env = TestEnv::new();
    assert!(!pre_push_is_ours(&env));
    let out = env.run_in(Store::Refs, env.repo(), &["hooks", "install"]);
    assert_code(&out, 0, "hooks install");
    let hook = hooks_dir(&env).join("pre-push");
    let text = std::fs::read_to_string(&hook).expect("pre-push written");
    assert!(
        text.contains("Entire checkpoints hook"),
        "marker line:\n{text}"
    );
    assert!(text.starts_with("#!"), "a script:\n{text}");
    let mode = std::fs::metadata(&hook).unwrap().permissions().mode();
    assert!(mode & 0o111 != 0, "pre-push is executable ({mode:o})");
    // Installing again replaces ours; it never chains our own hook.
    let out = env.run_in(Store::Refs, env.repo(), &["hooks", "install"]);
    assert_code(&out, 0, "hooks install again");
    assert!(!hooks_dir(&env).join("pre-push.pre-entire").exists());

    let out = env.run_in(Store::Refs, env.repo(), &["hooks", "status"]);
    assert_code(&out, 0, "hooks status");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = stdout
        .lines()
        .find(|l| l.starts_with("pre-push"))
        .unwrap_or_else(|| panic!("hooks status lists pre-push:\n{stdout}"));
    assert!(line.contains("installed"), "{line}");
    assert!(pre_push_is_ours(&env));
}

/// A pre-existing pre-push hook is kept as `pre-push.pre-entire` and chained: it runs first with
/// git's arguments and stdin; its failure fails the push; uninstall restores it. A real
/// `git push` with the hook delivers the queued checkpoints.
#[test]
fn a_foreign_pre_push_hook_is_chained_and_restored() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    let log = env.root().join("inputs");
    let foreign = format!(
        "#!/bin/sh\nprintf '%s\\n' \"$@\" > '{0}/hook-args'\ncat > '{0}/hook-stdin'\n[ -f '{0}/hook-fail' ] && exit 3\nexit 0\n",
        path_str(&log)
    );
    let dir = hooks_dir(&env);
    write_executable(&dir.join("pre-push"), &foreign);

    let out = env.run_in(Store::Refs, env.repo(), &["hooks", "install"]);
    assert_code(&out, 0, "hooks install over a foreign hook");
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push.pre-entire")).expect("foreign hook kept"),
        foreign
    );
    assert!(std::fs::read_to_string(dir.join("pre-push"))
        .unwrap()
        .contains("Entire checkpoints hook"));
    let out = env.run_in(Store::Refs, env.repo(), &["hooks", "status"]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("pre-push") && l.contains("installed")),
        "{stdout}"
    );
    assert!(pre_push_is_ours(&env));

    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    let expected_stdin = main_push_line(&env);
    let out = env.git_hooked(
        Some(Store::Refs),
        env.repo(),
        &["push", "-q", "origin", "main"],
    );
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "git push with the hook:\n{stderr}");
    assert_eq!(
        std::fs::read_to_string(log.join("hook-args")).expect("the chained hook ran"),
        format!("origin\n{}\n", path_str(&origin)),
        "the chained hook gets git's arguments"
    );
    assert_eq!(
        std::fs::read_to_string(log.join("hook-stdin")).unwrap(),
        expected_stdin,
        "the chained hook gets git's stdin"
    );
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
    assert_eq!(
        env.checkpoint_tips_in(&origin),
        env.checkpoint_tips(),
        "the hook delivered the checkpoints:\n{stderr}"
    );
    assert_eq!(env.queued(), 0);

    // The chained hook's failure fails the user's push.
    std::fs::write(log.join("hook-fail"), b"").unwrap();
    env.write_file("two.txt", b"2\n");
    env.git(&["add", "two.txt"]);
    env.git(&["commit", "-q", "-m", "two"]);
    let remote_main = rev_in(&env, &origin, "refs/heads/main");
    let out = env.git_hooked(
        Some(Store::Refs),
        env.repo(),
        &["push", "-q", "origin", "main"],
    );
    assert!(
        !out.status.success(),
        "a failing chained hook fails git push:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), remote_main);
    // Also where no temporary file can be made: the chained hook still runs, with git's input.
    std::fs::remove_file(log.join("hook-stdin")).unwrap();
    let out = env
        .git_hooked_command(
            Some(Store::Refs),
            env.repo(),
            &["push", "-q", "origin", "main"],
        )
        .env("TMPDIR", "/nonexistent/entire-tmp")
        .output()
        .expect("run git");
    assert!(
        !out.status.success(),
        "without a usable TMPDIR the chained hook still refuses:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        !std::fs::read_to_string(log.join("hook-stdin"))
            .unwrap()
            .is_empty(),
        "and it got git's input"
    );
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), remote_main);

    let out = env.run_in(Store::Refs, env.repo(), &["hooks", "uninstall"]);
    assert_code(&out, 0, "hooks uninstall");
    assert_eq!(
        std::fs::read_to_string(dir.join("pre-push")).unwrap(),
        foreign,
        "uninstall restores the foreign hook"
    );
    assert!(!dir.join("pre-push.pre-entire").exists());
    assert!(!pre_push_is_ours(&env));
    assert_never_forced(&origin);
}

/// `core.hooksPath` is honoured (a directory outside the git dir needs `--shared`), and a real
/// `git push` through the hook there delivers the queued checkpoints.
#[test]
fn hooks_install_honours_core_hooks_path_and_git_push_delivers() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    env.git(&["config", "core.hooksPath", "custom-hooks"]);
    let out = env.run_in(Store::Refs, env.repo(), &["hooks", "install", "--shared"]);
    assert_code(&out, 0, "hooks install with core.hooksPath");
    let dir = hooks_dir(&env);
    assert_eq!(dir, env.repo().join("custom-hooks"));
    assert!(std::fs::read_to_string(dir.join("pre-push"))
        .expect("pre-push in core.hooksPath")
        .contains("Entire checkpoints hook"));
    assert!(
        !env.common_dir().join("hooks").join("pre-push").exists(),
        "nothing written to .git/hooks"
    );
    assert!(pre_push_is_ours(&env));

    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    write(&env, Some(HEX_ID_2), "sess-1", TRANSCRIPT);
    let out = env.git_hooked(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "git push:\n{stderr}");
    assert!(
        stderr.contains("entire: pushing 2 checkpoint ref(s) to origin... done"),
        "the hook reported its push:\n{stderr}"
    );
    assert_eq!(env.checkpoint_tips_in(&origin), env.checkpoint_tips());
    assert_eq!(rev_in(&env, &origin, "refs/heads/main"), env.rev("main"));
    assert_eq!(env.queued(), 0);
    assert_never_forced(&origin);
}

/// A hooks directory of husky before 9 (`core.hooksPath` `.husky`, whose scripts git runs
/// directly): ours is a line added to each script, the scripts git runs, and a real push
/// delivers.
#[test]
fn hooks_install_adds_ours_to_the_scripts_of_a_husky_hooks_dir() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write_executable(&env.repo().join(".husky/pre-commit"), "#!/bin/sh\nexit 0\n");
    env.git(&["config", "core.hooksPath", ".husky"]);
    let out = env.run_in(Store::Refs, env.repo(), &["hooks", "install"]);
    assert_code(&out, 0, "hooks install under husky");
    let script = std::fs::read_to_string(env.repo().join(".husky/pre-push")).unwrap();
    assert!(script.contains("git entire-prepush \"$@\""), "{script}");
    assert!(pre_push_is_ours(&env));

    write(&env, Some(HEX_ID), "sess-1", TRANSCRIPT);
    let out = env.git_hooked(Some(Store::Refs), env.repo(), &["push", "origin", "main"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(env.checkpoint_tips_in(&origin), env.checkpoint_tips());
}

// ---------------------------------------------------------------------------------------------
// Worktrees and concurrency
// ---------------------------------------------------------------------------------------------

/// A linked worktree enqueues into the one queue of the common dir; the main worktree's push
/// delivers its checkpoint.
#[test]
fn worktrees_share_one_queue() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    let wt = env.root().join("wt");
    env.git(&["worktree", "add", "-q", "-b", "feature", path_str(&wt)]);
    let id = write_full(
        &env,
        Store::Refs,
        &wt,
        None,
        "sess-wt",
        TRANSCRIPT,
        &["a.go"],
    );
    let name = checkpoint_ref(&id);
    assert_eq!(env.common_dir_in(&wt), env.common_dir());
    assert!(
        refs_of_queue_file(&queue_path(&env)).contains(&name),
        "the worktree's write is in the common dir's queue"
    );
    assert_eq!(env.queued(), 1, "the main worktree sees it waiting");
    let stderr = assert_code(&push(&env, &["origin"]), 0, "push from the main worktree");
    assert_eq!(
        rev_in(&env, &origin, &name),
        env.rev(&name),
        "the worktree's checkpoint is delivered:\n{stderr}"
    );
    assert_eq!(
        env.queued_in(Some(Store::Refs), &wt),
        0,
        "the worktree sees nothing waiting"
    );
    assert_never_forced(&origin);
}

/// Two pushes at once: both exit 0, every ref lands, every queue ends empty.
#[test]
fn two_concurrent_pushes_deliver_everything_once() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    for i in 0..30 {
        write(&env, None, &format!("sess-{i}"), TRANSCRIPT);
    }
    let children: Vec<_> = (0..2)
        .map(|_| {
            env.std_cmd(Store::Refs)
                .args(["push", "origin"])
                .spawn()
                .expect("spawn push")
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().expect("wait for push");
        assert_code(&out, 0, "concurrent push");
    }
    assert_eq!(env.checkpoint_tips_in(&origin), env.checkpoint_tips());
    assert_eq!(env.checkpoint_tips().len(), 30);
    assert_eq!(env.queued(), 0);
    assert_eq!(
        all_queued_refs(&env),
        Vec::<String>::new(),
        "every queue is empty"
    );
    assert_never_forced(&origin);
}

// ---------------------------------------------------------------------------------------------
// git-branch primary
// ---------------------------------------------------------------------------------------------

/// The git-branch primary pushes the v1 branch, deferred while the remote has no
/// remote-tracking refs (so it never becomes an empty forge's default branch), and pushed once
/// the user has fetched (docs/how-it-works.md, "Pushes").
#[test]
fn git_branch_primary_pushes_v1_only_after_the_remote_is_tracked() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write_full(
        &env,
        Store::Branch,
        env.repo(),
        Some(HEX_ID),
        "sess-1",
        TRANSCRIPT,
        &["a.go"],
    );
    assert!(env.rev(V1_BRANCH).is_some());
    let url = path_str(&origin).to_string();
    let out = prepush_as(
        &env,
        Store::Branch,
        &["origin", &url],
        &main_push_line(&env),
    );
    assert_code(&out, 0, "prepush before any fetch");
    assert!(
        refs_in(&env, &origin, "refs/").is_empty(),
        "deferred: the remote gets nothing while refs/remotes/origin/ is empty"
    );

    env.git(&["push", "-q", "origin", "main"]);
    env.git(&["fetch", "-q", "origin"]);
    let out = prepush_as(&env, Store::Branch, &["origin", &url], "");
    let stderr = assert_code(&out, 0, "prepush after a fetch");
    assert_eq!(
        rev_in(&env, &origin, V1_BRANCH),
        env.rev(V1_BRANCH),
        "v1 pushed once the remote is tracked:\n{stderr}"
    );
    assert!(
        env.checkpoint_tips_in(&origin).is_empty(),
        "no git-refs refs for a git-branch primary"
    );

    let first = env.rev(V1_BRANCH).unwrap();
    write_full(
        &env,
        Store::Branch,
        env.repo(),
        Some(HEX_ID_2),
        "sess-1",
        TRANSCRIPT,
        &["a.go"],
    );
    let out = env.run_in(Store::Branch, env.repo(), &["push", "origin"]);
    assert_code(&out, 0, "push of the advanced v1 branch");
    let second = rev_in(&env, &origin, V1_BRANCH).unwrap();
    assert_eq!(Some(second.clone()), env.rev(V1_BRANCH));
    assert!(env.is_ancestor_in(&origin, &first, &second));
    assert_never_forced(&origin);
}

/// A v1 branch that moved on the remote is synced without force: both machines' checkpoints end
/// up in the pushed tree and the remote's tip stays an ancestor (docs/how-it-works.md, "Pushes").
#[test]
fn git_branch_primary_syncs_a_diverged_v1_branch_without_force() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    env.git(&["push", "-q", "origin", "main"]);
    env.git(&["fetch", "-q", "origin"]);
    write_full(
        &env,
        Store::Branch,
        env.repo(),
        Some(HEX_ID),
        "sess-1",
        TRANSCRIPT,
        &["a.go"],
    );
    assert_code(
        &env.run_in(Store::Branch, env.repo(), &["push", "origin"]),
        0,
        "first push",
    );
    assert_eq!(rev_in(&env, &origin, V1_BRANCH), env.rev(V1_BRANCH));

    let laptop = env.clone_of(&origin, "laptop", &[]);
    env.git_in(
        &laptop,
        &[
            "fetch",
            "-q",
            "origin",
            &format!("+{V1_BRANCH}:{V1_BRANCH}"),
        ],
    );
    write_full(
        &env,
        Store::Branch,
        &laptop,
        Some(HEX_ID_2),
        "sess-2",
        TRANSCRIPT_2,
        &["b.go"],
    );
    assert_code(
        &env.run_in(Store::Branch, &laptop, &["push", "origin"]),
        0,
        "push from the other clone",
    );
    let remote_before = rev_in(&env, &origin, V1_BRANCH).unwrap();

    write_full(
        &env,
        Store::Branch,
        env.repo(),
        Some(THIRD_HEX_ID),
        "sess-3",
        TRANSCRIPT,
        &["c.go"],
    );
    let out = prepush_as(
        &env,
        Store::Branch,
        &["origin", path_str(&origin)],
        &main_push_line(&env),
    );
    let stderr = assert_code(&out, 0, "prepush of the diverged v1 branch");
    let remote_after = rev_in(&env, &origin, V1_BRANCH).unwrap();
    assert!(
        env.is_ancestor_in(&origin, &remote_before, &remote_after),
        "the remote's v1 tip is an ancestor of the pushed one:\n{stderr}"
    );
    assert_eq!(env.rev(V1_BRANCH), Some(remote_after.clone()));
    for id in [HEX_ID, HEX_ID_2, THIRD_HEX_ID] {
        let spec = format!("{remote_after}:{}/{}/metadata.json", &id[..2], &id[2..]);
        assert!(
            env.git_command_in(&origin, &["cat-file", "-e", &spec])
                .status()
                .unwrap()
                .success(),
            "checkpoint {id} is in the pushed v1 tree"
        );
    }
    assert_never_forced(&origin);
}

/// Two machines create the same checkpoint without seeing each other's: the histories share no
/// commit. The second push merges by session on top of the remote's history (never a reset
/// that drops data, never forced).
#[test]
fn a_disconnected_history_is_merged_not_reset() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    env.git(&["push", "-q", "origin", "main"]);
    let name = checkpoint_ref(HEX_ID);
    // The laptop clones before the checkpoint exists anywhere.
    let laptop = env.clone_of(&origin, "laptop", &[]);
    write(&env, Some(HEX_ID), "desk-session", TRANSCRIPT);
    assert_code(&push(&env, &["origin"]), 0, "push from the desk");
    let remote_before = rev_in(&env, &origin, &name).unwrap();
    write_full(
        &env,
        Store::Refs,
        &laptop,
        Some(HEX_ID),
        "laptop-session",
        TRANSCRIPT_2,
        &["b.go"],
    );
    let laptop_first = rev_in(&env, &laptop, &name).unwrap();
    // Both are single orphan commits, and different: the histories share nothing.
    assert_ne!(laptop_first, remote_before);
    for (dir, tip) in [(&laptop, &laptop_first), (&origin, &remote_before)] {
        let count = env.git_in(dir, &["rev-list", "--count", tip.as_str()]);
        assert_eq!(count.trim(), "1", "the two histories are disconnected");
    }
    let stderr = assert_code(
        &push_in(&env, &laptop, &["origin"]),
        0,
        "push from the laptop",
    );
    let mut sessions = session_ids_in(&env, &origin, HEX_ID);
    sessions.sort();
    assert_eq!(sessions, vec!["desk-session", "laptop-session"], "{stderr}");
    let remote_after = rev_in(&env, &origin, &name).unwrap();
    assert!(env.is_ancestor_in(&origin, &remote_before, &remote_after));
    assert_eq!(rev_in(&env, &laptop, &name), Some(remote_after));
    assert_never_forced(&origin);
}

/// `git push --dry-run` (and `-n`) publishes nothing: the pre-push hook runs, but the checkpoint
/// refs stay queued and never reach the remote, which it says as information (a dry run is
/// what the user asked for: no `warning:`); the real push then sends them.
#[test]
fn a_dry_run_push_publishes_no_checkpoint() {
    let env = TestEnv::new();
    let origin = add_remote(&env, "origin");
    write(&env, Some(ULID_ID), "sess-1", TRANSCRIPT);
    assert_code(
        &env.run_in(Store::Refs, env.repo(), &["hooks", "install"]),
        0,
        "hooks install",
    );
    for flag in ["--dry-run", "-n"] {
        let out = env.git_hooked(
            Some(Store::Refs),
            env.repo(),
            &["push", flag, "origin", "main"],
        );
        assert!(out.status.success(), "git push {flag}: {out:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("entire: dry run: checkpoint refs were not pushed")
                && !err.contains("warning:"),
            "git push {flag}: {err}"
        );
        assert!(
            env.checkpoint_tips_in(&origin).is_empty(),
            "git push {flag} pushed checkpoint refs"
        );
        assert_eq!(env.queued(), 1, "still queued after {flag}");
    }
    let out = env.git_hooked(
        Some(Store::Refs),
        env.repo(),
        &["push", "-q", "origin", "main"],
    );
    assert!(out.status.success(), "{out:?}");
    assert_eq!(env.checkpoint_tips_in(&origin).len(), 1);
}
