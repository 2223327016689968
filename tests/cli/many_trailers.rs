//! A commit that names many checkpoints (issue 55, item 4b): every command that reads a commit's
//! `Entire-Checkpoint:` trailers asks the remote for all the missing ones in one batch, not once
//! per trailer, and reads at most `MAX_TRAILERS` (256) of one message, saying how many it
//! ignored. A counting remote (`git http-backend` on 127.0.0.1) says what each command asked.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::ask_once::served_clone;
use crate::env::{assert_code, checkpoint_ref, path_str, stdout, HttpBackend, Store, TestEnv};
use crate::fixtures::{write_std, HEX_ID, HEX_ID_2, TRANSCRIPT, ULID_ID};
use crate::remote_fetch::statuses;

/// The trailers one message is read for (the program's `MAX_TRAILERS`).
const BOUND: usize = 256;
/// The trailers of the many-trailer commit: `BOUND` read, the rest ignored.
const TRAILERS: usize = 300;
/// The checkpoints the remote holds, among the trailers read.
const PRESENT: [&str; 3] = [HEX_ID, HEX_ID_2, ULID_ID];
/// Upload-pack requests a command may make, however many trailers it reads: a negotiation is
/// two or three requests (advertisement, ref listing, fetch), and a read asks for the refs'
/// canonical spellings, the case-folded ones of the ULIDs it lacks and the v1 branch (5 and 6
/// measured; one per trailer, 305, before).
const REQUESTS: usize = 8;

/// The trailer IDs of the commit, in message order: absent hex IDs and absent ULIDs, with the
/// `PRESENT` ones at 0, 100 and 200.
fn trailer_ids() -> Vec<String> {
    (0..TRAILERS)
        .map(|i| match (i, i % 2) {
            (0, _) => PRESENT[0].to_owned(),
            (100, _) => PRESENT[1].to_owned(),
            (200, _) => PRESENT[2].to_owned(),
            (_, 0) => format!("{:012x}", 0x0bad_0000_0000_u64 + i as u64),
            _ => format!("01KVBJCWYA4YW6J5M9GP6{i:05}"),
        })
        .collect()
}

/// The writer's `PRESENT` checkpoints and a commit whose message carries every one of
/// [`trailer_ids`], pushed to `<root>/served/origin.git` (served over smart HTTP); a fresh clone
/// of it over HTTP, with default settings. Returns the server and the clone.
fn world(env: &TestEnv) -> (HttpBackend, PathBuf) {
    // Where the default settings look: hex IDs on the v1 branch, ULIDs under their refs.
    for id in PRESENT {
        let store = match id.len() {
            12 => Store::Branch,
            _ => Store::Refs,
        };
        write_std(env, store, id, "sess-1", TRANSCRIPT);
    }
    let trailers: String = trailer_ids()
        .iter()
        .map(|id| format!("Entire-Checkpoint: {id}\n"))
        .collect();
    let message = env.input_file("message.txt", format!("many\n\n{trailers}").as_bytes());
    env.git(&["commit", "-q", "--allow-empty", "-F", path_str(&message)]);
    let (_, server, clone) = served_clone(
        env,
        &[
            "main",
            crate::env::V1_BRANCH,
            "refs/entire/checkpoints/*:refs/entire/checkpoints/*",
        ],
    );
    (server, clone)
}

/// Runs `args` of `program` in `dir` with default settings; the output and how many
/// upload-pack requests the server got meanwhile.
fn counted(
    env: &TestEnv,
    server: &HttpBackend,
    dir: &Path,
    program: Option<&Path>,
    args: &[&str],
) -> (Output, usize) {
    let before = server.upload_pack_requests();
    let out = match program {
        Some(p) => env.program_in(p, dir).args(args).output().unwrap(),
        None => env.run_primary_in(None, dir, args),
    };
    (out, server.upload_pack_requests() - before)
}

#[test]
fn a_commit_with_many_trailers_asks_the_remote_once_and_reads_a_bounded_number() {
    let env = TestEnv::new();
    let (server, clone) = world(&env);
    let ids = trailer_ids();
    let ignored = format!(
        "HEAD: ignoring {} Entire-Checkpoint trailers beyond the first {BOUND}",
        TRAILERS - BOUND
    );

    // show: the present ones shown, each absent one named, the ignored ones never asked for.
    let (out, asked) = counted(&env, &server, &clone, None, &["show", "HEAD"]);
    let err = assert_code(&out, 0, "show HEAD");
    assert!(asked <= REQUESTS, "show HEAD asked {asked} times:\n{err}");
    let shown = stdout(&out);
    for id in PRESENT {
        assert!(shown.contains(id), "{id} is shown:\n{shown}");
    }
    assert_eq!(err.matches(&ignored).count(), 1, "one warning:\n{err}");
    for id in &ids[..BOUND] {
        assert!(
            PRESENT.contains(&id.as_str())
                || err.contains(&format!("no checkpoint matches \"{id}\"")),
            "absent {id} is named:\n{err}"
        );
    }
    for id in &ids[BOUND..] {
        assert!(!err.contains(id.as_str()), "{id} is ignored:\n{err}");
    }
    let fetched: Vec<String> = env.checkpoint_tips_in(&clone).into_keys().collect();
    assert_eq!(
        fetched,
        [checkpoint_ref(ULID_ID)],
        "only the ULID has a ref"
    );

    // git entire-fetch --for asks again for every absent one, in one batch too.
    let fetch = crate::env::fetch_bin();
    let (out, asked) = counted(
        &env,
        &server,
        &clone,
        Some(&fetch),
        &["--for", "HEAD", "--json"],
    );
    let err = assert_code(&out, 0, "git entire-fetch --for HEAD");
    assert!(
        asked <= REQUESTS,
        "entire-fetch asked {asked} times:\n{err}"
    );
    assert_eq!(
        err.matches("ignoring 44 Entire-Checkpoint").count(),
        1,
        "{err}"
    );
    let got = statuses(&out);
    assert_eq!(got.len(), BOUND, "one outcome per trailer read: {got:?}");
    for id in &ids[..BOUND] {
        let want = match PRESENT.contains(&id.as_str()) {
            true => "present",
            false => "not_found",
        };
        assert_eq!(got.get(id).map(String::as_str), Some(want), "{id}");
    }
}
