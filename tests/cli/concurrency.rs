//! Many real processes writing at once (issue 7; docs/decisions.md, "No lost checkpoint"): writers
//! of new checkpoints, writers of other sessions into one shared checkpoint and backfills of that
//! checkpoint all race, on each store. Afterwards every write that reported success is in git
//! (checked with `git cat-file` / `git for-each-ref`), every session has exactly one slot, no JSONL
//! line is corrupt, the push queue names every written ref and one push delivers exactly the local
//! refs to a bare remote. Only the final state is asserted, never timing.

use std::collections::{BTreeMap, BTreeSet};
use std::process::Output;

use serde_json::json;

use crate::crash::assert_queues_well_formed;
use crate::env::{
    assert_code, assert_fsck_clean, assert_jsonl, branch_dir, checkpoint_ref, path_str, refs_in,
    Store, TestEnv, REFS_PREFIX, V1_BRANCH,
};
use crate::fixtures::HEX_ID;
use crate::push::{
    add_remote, all_queued_refs, assert_never_forced, queue_path, refs_of_queue_file,
};

/// Threads that each run [`ROUNDS`] processes one after another: at most this many of our
/// processes run at once.
const SHARED_WRITERS: usize = 5;
const NEW_WRITERS: usize = 5;
const BACKFILLERS: usize = 2;
const ROUNDS: usize = 3;

/// The checkpoint every shared writer and backfiller targets.
const SHARED_ID: &str = HEX_ID;

/// What one process was asked to do and how it ended.
enum Job {
    /// `write --id SHARED_ID --session <session>`.
    Shared {
        session: String,
        transcript: Vec<u8>,
    },
    /// `write --session <session>` minting a new ID.
    New {
        session: String,
        transcript: Vec<u8>,
    },
    /// `backfill transcript SHARED_ID --session <session>`.
    Backfill {
        session: String,
        transcript: Vec<u8>,
    },
}

/// A transcript unique to one job: two JSONL lines naming it.
fn transcript_for(tag: &str) -> Vec<u8> {
    format!(
        "{{\"type\":\"user\",\"message\":\"{tag}\"}}\n{{\"type\":\"assistant\",\"message\":\"done {tag}\"}}\n"
    )
    .into_bytes()
}

fn run_job(env: &TestEnv, store: Store, job: &Job, file_tag: &str) -> Output {
    let file = |transcript: &[u8]| env.input_file(&format!("{file_tag}.jsonl"), transcript);
    match job {
        Job::Shared {
            session,
            transcript,
        } => env
            .write(store, session)
            .id(SHARED_ID)
            .transcript(&file(transcript))
            .run(),
        Job::New {
            session,
            transcript,
        } => env
            .write(store, session)
            .transcript(&file(transcript))
            .run(),
        Job::Backfill {
            session,
            transcript,
        } => env
            .std_cmd(store)
            .args(["backfill", "transcript", SHARED_ID, "--session", session])
            .args(["--transcript", path_str(&file(transcript))])
            .output()
            .expect("run git-entire-checkpoint"),
    }
}

/// The session IDs of `id`'s slots in order, read from each `N/metadata.json` with `git
/// cat-file`; also checks the root summary lists as many sessions.
fn slot_sessions(env: &TestEnv, store: Store, id: &str) -> Vec<String> {
    let root = env.json(store, id, "metadata.json");
    assert_eq!(root["checkpoint_id"], json!(id), "root of {id}: {root}");
    let n = root["sessions"].as_array().expect("sessions[]").len();
    (0..n)
        .map(|slot| {
            let m = env.json(store, id, &format!("{slot}/metadata.json"));
            m["session_id"].as_str().expect("session_id").to_string()
        })
        .collect()
}

/// The slot of `session` in `id` and the transcript stored there.
fn transcript_of(env: &TestEnv, store: Store, id: &str, session: &str) -> Vec<u8> {
    let slot = slot_sessions(env, store, id)
        .iter()
        .position(|s| s == session)
        .unwrap_or_else(|| panic!("session {session} has no slot in {id}"));
    env.blob(store, id, &format!("{slot}/full.jsonl"))
}

/// The IDs of the checkpoints a store holds, read with plain git.
fn stored_ids(env: &TestEnv, store: Store) -> BTreeSet<String> {
    match store {
        Store::Refs => env
            .refs_under(REFS_PREFIX)
            .iter()
            .map(|r| r.rsplit('/').next().unwrap().to_string())
            .collect(),
        Store::Branch => env
            .git(&["ls-tree", "-d", "--name-only", "-r", V1_BRANCH])
            .lines()
            .filter(|p| p.len() > 3 && p.as_bytes()[2] == b'/' && !p[3..].contains('/'))
            .map(|p| p.replace('/', ""))
            .collect(),
    }
}

fn writers_and_backfills_race(store: Store) {
    let env = TestEnv::new();
    // The backfilled sessions exist before the race starts.
    let backfilled: Vec<String> = (0..BACKFILLERS)
        .map(|b| format!("backfilled-{b}"))
        .collect();
    for s in &backfilled {
        let job = Job::Shared {
            session: s.clone(),
            transcript: transcript_for(&format!("{s}-initial")),
        };
        assert_code(&run_job(&env, store, &job, s), 0, "seed write");
    }

    // One plan per thread: ROUNDS jobs run one after another.
    let plan = |make: &dyn Fn(usize) -> Job| (0..ROUNDS).map(make).collect::<Vec<Job>>();
    let mut plans: Vec<Vec<Job>> = Vec::new();
    for w in 0..SHARED_WRITERS {
        plans.push(plan(&|r| {
            let session = format!("shared-{w}-{r}");
            let transcript = transcript_for(&session);
            Job::Shared {
                session,
                transcript,
            }
        }));
    }
    for w in 0..NEW_WRITERS {
        plans.push(plan(&|r| {
            let session = format!("new-{w}-{r}");
            let transcript = transcript_for(&session);
            Job::New {
                session,
                transcript,
            }
        }));
    }
    for s in &backfilled {
        plans.push(plan(&|r| Job::Backfill {
            session: s.clone(),
            transcript: transcript_for(&format!("{s}-final-{r}")),
        }));
    }
    let results: Vec<Vec<Output>> = std::thread::scope(|scope| {
        let handles: Vec<_> = plans
            .iter()
            .enumerate()
            .map(|(t, jobs)| {
                let env = &env;
                scope.spawn(move || {
                    jobs.iter()
                        .enumerate()
                        .map(|(r, job)| run_job(env, store, job, &format!("job-{t}-{r}")))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });

    // A process either succeeds or, having lost the compare-and-swap race 16 times, gives up
    // with exit 1 and says so (docs/decisions.md, "Compare-and-swap with bounded retries"),
    // leaving nothing behind; any other outcome is a bug.
    // Only what succeeded is expected below, and every success must be there.
    let mut new_ids: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    // The shared checkpoint's sessions with the transcript of their last successful write.
    let mut sessions: BTreeMap<String, Vec<u8>> = backfilled
        .iter()
        .map(|s| (s.clone(), transcript_for(&format!("{s}-initial"))))
        .collect();
    let (mut gave_up, mut succeeded) = (Vec::new(), BTreeSet::new());
    for (jobs, outs) in plans.iter().zip(&results) {
        for (job, out) in jobs.iter().zip(outs) {
            let kind = match job {
                Job::Shared { .. } => "shared write",
                Job::New { .. } => "new checkpoint",
                Job::Backfill { .. } => "backfill",
            };
            if !out.status.success() {
                let stderr = assert_code(out, 1, kind);
                assert!(stderr.contains("after 16 attempts"), "{kind}: {stderr}");
                gave_up.push(kind);
                continue;
            }
            succeeded.insert(kind);
            match job {
                Job::New { transcript, .. } => {
                    let id = String::from_utf8(out.stdout.clone()).unwrap();
                    new_ids.insert(id.trim().to_string(), transcript.clone());
                }
                // A backfiller runs its rounds in order, so its last success is what is stored.
                Job::Shared {
                    session,
                    transcript,
                }
                | Job::Backfill {
                    session,
                    transcript,
                } => {
                    sessions.insert(session.clone(), transcript.clone());
                }
            }
        }
    }
    let total: usize = plans.iter().map(Vec::len).sum();
    eprintln!(
        "{store:?}: {} processes in {} threads, {} gave up after 16 lost races: {gave_up:?}",
        total,
        plans.len(),
        gave_up.len()
    );
    assert_eq!(
        succeeded.len(),
        3,
        "every kind of job succeeded at least once"
    );
    let new_successes = plans
        .iter()
        .flatten()
        .filter(|j| matches!(j, Job::New { .. }))
        .count()
        - gave_up.iter().filter(|k| **k == "new checkpoint").count();
    assert_eq!(new_ids.len(), new_successes, "every minted ID is distinct");

    // The store holds exactly the shared checkpoint and the new ones.
    let mut want_ids: BTreeSet<String> = new_ids.keys().cloned().collect();
    want_ids.insert(SHARED_ID.to_string());
    assert_eq!(stored_ids(&env, store), want_ids);

    // Shared checkpoint: one slot per session, none lost or duplicated, each with its own bytes.
    let slots = slot_sessions(&env, store, SHARED_ID);
    let distinct: BTreeSet<&String> = slots.iter().collect();
    assert_eq!(distinct.len(), slots.len(), "a duplicated slot: {slots:?}");
    assert_eq!(
        distinct.into_iter().collect::<Vec<_>>(),
        sessions.keys().collect::<Vec<_>>()
    );
    for (session, transcript) in &sessions {
        assert_eq!(
            &transcript_of(&env, store, SHARED_ID, session),
            transcript,
            "the transcript of {session}'s last successful write"
        );
    }
    for slot in 0..slots.len() {
        assert_jsonl(
            &env.blob(store, SHARED_ID, &format!("{slot}/full.jsonl")),
            &format!("{SHARED_ID} slot {slot}"),
        );
    }
    // New checkpoints: each holds its one session and its transcript.
    for (id, transcript) in &new_ids {
        assert_eq!(slot_sessions(&env, store, id).len(), 1, "{id}");
        assert_eq!(&env.blob(store, id, "0/full.jsonl"), transcript, "{id}");
    }
    assert_fsck_clean(&env, env.repo());
    assert_delivered(&env, store, &want_ids);
}

/// The queue is well formed and names every checkpoint ref; one push delivers exactly the
/// local refs (git-refs) or the v1 branch (git-branch) and leaves every queue empty.
fn assert_delivered(env: &TestEnv, store: Store, ids: &BTreeSet<String>) {
    let origin = add_remote(env, "origin");
    match store {
        Store::Refs => {
            assert_queues_well_formed(env);
            let queued: BTreeSet<String> =
                refs_of_queue_file(&queue_path(env)).into_iter().collect();
            let want: BTreeSet<String> = ids.iter().map(|id| checkpoint_ref(id)).collect();
            assert_eq!(queued, want, "the queue names every written ref");
            let out = env.run(store, &["push", "origin"]);
            assert_code(&out, 0, "push after the race");
            let local = env.checkpoint_tips();
            assert_eq!(local.len(), ids.len());
            assert_eq!(env.checkpoint_tips_in(&origin), local);
            assert_eq!(all_queued_refs(env), Vec::<String>::new(), "queues drained");
        }
        Store::Branch => {
            // The v1 branch is pushed once the remote is tracked (docs/how-it-works.md, "Pushes").
            env.git(&["push", "-q", "origin", "main"]);
            env.git(&["fetch", "-q", "origin"]);
            let out = env.run(store, &["push", "origin"]);
            assert_code(&out, 0, "push after the race");
            let remote = refs_in(env, &origin, V1_BRANCH);
            assert_eq!(remote.get(V1_BRANCH), env.rev(V1_BRANCH).as_ref());
            for id in ids {
                let spec = format!("{V1_BRANCH}:{}/metadata.json", branch_dir(id));
                env.git_in(&origin, &["cat-file", "-e", &spec]);
            }
        }
    }
    assert_never_forced(&origin);
}

both_stores! {
    writers_and_backfills_race_without_loss => writers_and_backfills_race;
}
