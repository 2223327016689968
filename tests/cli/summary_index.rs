//! The summary index `list` reads git-refs checkpoints through (docs/format.md, "The summary
//! index"): whatever state the file is in, `list` prints exactly what it prints without it; a
//! damaged file is ignored with a warning and replaced; records of refs that moved or are gone
//! are recomputed or dropped; racing listings and writes leave a valid index; `doctor` reports
//! a damaged index or a record that disagrees with its checkpoint, and `--fix` deletes it.

use std::os::unix::fs::symlink;
use std::path::PathBuf;
use std::process::Output;

use entire_checkpoints::store::summary::{checksum, MAX_BYTES, TRAILER_LEN};

use crate::env::{checkpoint_ref, stderr, Store, TestEnv, REFS_PREFIX};
use crate::list::many_checkpoints;

/// The summary index of the test repository.
pub fn index_path(env: &TestEnv) -> PathBuf {
    env.common_dir().join("entire").join("summary-index")
}

/// The warning `list` prints for a damaged index.
const WARNING: &str = "warning: summary index ";

fn list(env: &TestEnv) -> Output {
    env.run(Store::Refs, &["list", "--json"])
}

/// `list --json` computed from the checkpoints alone (the index deleted first); leaves a fresh
/// index behind.
fn uncached(env: &TestEnv) -> Output {
    let _ = std::fs::remove_file(index_path(env));
    let out = list(env);
    assert!(index_path(env).is_file(), "the listing wrote the index");
    out
}

/// The record count in the index's header.
fn record_count(env: &TestEnv) -> u32 {
    let bytes = std::fs::read(index_path(env)).expect("read the index");
    u32::from_le_bytes(bytes[8..12].try_into().unwrap())
}

/// Asserts that a listing through a damaged index equals `want`, warns once naming `why`, and
/// left a valid index (the next listing does not warn and uses it).
fn assert_ignored_and_rebuilt(env: &TestEnv, want: &Output, why: &str) {
    let got = list(env);
    assert_eq!(got.stdout, want.stdout, "{why}: the same lines");
    assert_eq!(got.status.code(), want.status.code(), "{why}");
    let err = stderr(&got);
    assert!(
        err.contains(WARNING) && err.contains(why),
        "{why}: a warning on stderr:\n{err}"
    );
    assert!(
        err.contains("error: unreadable checkpoint:"),
        "{why}: the unreadable checkpoint is still reported:\n{err}"
    );
    let meta = std::fs::symlink_metadata(index_path(env)).expect("the index was rewritten");
    assert!(meta.is_file(), "{why}: a regular file again");
    let again = list(env);
    assert_eq!(again.stdout, want.stdout, "{why}: the rebuilt index");
    assert_eq!(
        again.stderr, want.stderr,
        "{why}: no warning after the rebuild"
    );
}

/// Rewrites the trailing checksum so that a hand-edited index passes it.
fn reseal(bytes: &mut [u8]) {
    let body = bytes.len() - TRAILER_LEN;
    let sum = checksum(&bytes[..body]);
    bytes[body..].copy_from_slice(&sum);
}

/// An edit that damages a valid index's bytes.
type Damaging = Box<dyn Fn(&mut Vec<u8>)>;

#[test]
fn damaged_index_files_are_ignored_and_rebuilt() {
    let env = TestEnv::new();
    many_checkpoints(&env, 10);
    let want = uncached(&env);
    assert_eq!(want.status.code(), Some(1), "one checkpoint is unreadable");
    let path = index_path(&env);
    let valid = std::fs::read(&path).unwrap();
    assert_eq!(&valid[..4], b"ECSI");
    assert_eq!(
        record_count(&env),
        22,
        "every checkpoint, the one whose metadata.json does not parse with why"
    );

    let damage: Vec<(&str, Damaging)> = vec![
        (
            "truncated or corrupt",
            Box::new(|b| b.truncate(b.len() / 2)),
        ),
        (
            "truncated or corrupt",
            Box::new(|b| b.truncate(b.len() - 1)),
        ),
        ("not a summary index", Box::new(|b| b.clear())),
        (
            "truncated or corrupt",
            Box::new(|b| {
                let mid = b.len() / 2;
                b[mid] ^= 0x20;
            }),
        ),
        ("format version 9", Box::new(|b| b[4] = 9)),
        (
            "not a summary index",
            Box::new(|b| *b = b"{\"not\": \"an index\"}\n".to_vec()),
        ),
    ];
    for (why, f) in damage {
        let mut bytes = valid.clone();
        f(&mut bytes);
        std::fs::write(&path, &bytes).unwrap();
        assert_ignored_and_rebuilt(&env, &want, why);
    }

    // Larger than any index may be: refused before it is read.
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(MAX_BYTES + 1).unwrap();
    drop(file);
    assert_ignored_and_rebuilt(&env, &want, "too large");

    // A symbolic link, here to a valid index elsewhere: never followed, never written through.
    let elsewhere = env.root().join("elsewhere-index");
    std::fs::write(&elsewhere, &valid).unwrap();
    std::fs::remove_file(&path).unwrap();
    symlink(&elsewhere, &path).unwrap();
    assert_ignored_and_rebuilt(&env, &want, "not a regular file");
    assert_eq!(
        std::fs::read(&elsewhere).unwrap(),
        valid,
        "the link's target is untouched"
    );

    // A FIFO: opening it must not block the listing.
    std::fs::remove_file(&path).unwrap();
    let made = std::process::Command::new("mkfifo").arg(&path).status();
    assert!(made.is_ok_and(|s| s.success()), "mkfifo");
    assert_ignored_and_rebuilt(&env, &want, "not a regular file");

    // A directory cannot be replaced: listings still print the same and do not warn forever
    // about a file they cannot write.
    std::fs::remove_file(&path).unwrap();
    std::fs::create_dir(&path).unwrap();
    for _ in 0..2 {
        let got = list(&env);
        assert_eq!(got.stdout, want.stdout, "a directory in place of the index");
        assert_eq!(got.status.code(), want.status.code());
    }
}

#[test]
fn moved_and_deleted_refs_are_recomputed_not_trusted() {
    let env = TestEnv::new();
    let (ids, _) = many_checkpoints(&env, 10);
    uncached(&env);
    assert_eq!(record_count(&env), 22);

    // A new session moves one ref; another ref is moved by hand onto a third checkpoint's
    // commit (its record's tip no longer matches); a fourth ref is deleted.
    env.ok(
        Store::Refs,
        &[
            "write",
            "--id",
            &ids[0],
            "--session",
            "sess-new",
            "--agent",
            "Late Agent",
        ],
    );
    let third_tip = env.rev(&checkpoint_ref(&ids[3])).unwrap();
    env.git(&["update-ref", &checkpoint_ref(&ids[2]), &third_tip]);
    env.git(&["update-ref", "-d", &checkpoint_ref(&ids[4])]);

    let got = list(&env);
    assert!(!stderr(&got).contains(WARNING), "staleness is no damage");
    assert_eq!(
        got.stdout,
        uncached(&env).stdout,
        "as if there were no index"
    );
    let entries: Vec<serde_json::Value> = serde_json::from_slice(&got.stdout).unwrap();
    let moved = entries
        .iter()
        .find(|e| e["checkpoint_id"] == ids[0].as_str())
        .expect("listed");
    assert_eq!(moved["agent"], "Late Agent", "the moved ref's new line");
    assert!(entries
        .iter()
        .all(|e| e["checkpoint_id"] != ids[4].as_str()));
    assert_eq!(
        record_count(&env),
        21,
        "the deleted ref's record was dropped"
    );
}

#[test]
fn racing_listings_and_writes_leave_a_valid_index() {
    let env = TestEnv::new();
    let (ids, _) = many_checkpoints(&env, 10);
    let _ = std::fs::remove_file(index_path(&env));
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..3 {
                    let out = list(&env);
                    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
                    assert!(!stderr(&out).contains(WARNING), "{}", stderr(&out));
                }
            });
        }
        s.spawn(|| {
            for (n, id) in ids.iter().take(6).enumerate() {
                let session = format!("sess-race-{n}");
                env.ok(Store::Refs, &["write", "--id", id, "--session", &session]);
            }
        });
    });
    let after = list(&env);
    assert!(!stderr(&after).contains(WARNING), "{}", stderr(&after));
    assert_eq!(after.stdout, uncached(&env).stdout);
    let leftovers: Vec<String> = std::fs::read_dir(env.common_dir().join("entire"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("summary-index") && n != "summary-index")
        .collect();
    assert!(leftovers.is_empty(), "temp files left: {leftovers:?}");
    assert_eq!(env.refs_under(REFS_PREFIX).len(), 22);
}

/// A record that passes every check but disagrees with its checkpoint (written by hand, or by a
/// bug) is what `list` would trust; `doctor` finds it by reading the checkpoints, and `--fix`
/// deletes the index, after which `list` is right again.
#[test]
fn doctor_reports_a_wrong_record_and_a_damaged_index() {
    let env = TestEnv::new();
    many_checkpoints(&env, 10);
    let want = uncached(&env);
    let path = index_path(&env);
    let doctor = |fix: bool| {
        let mut args = vec!["doctor", "--json"];
        if fix {
            args.push("--fix");
        }
        let out = env.run(Store::Refs, &args);
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == "summary-index")
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(doctor(false).is_empty(), "a fresh index is healthy");

    let mut bytes = std::fs::read(&path).unwrap();
    let at = bytes
        .windows(11)
        .position(|w| w == b"Claude Code")
        .expect("an agent in the index");
    bytes[at..at + 11].copy_from_slice(b"Forged Name");
    reseal(&mut bytes);
    std::fs::write(&path, &bytes).unwrap();
    let trusted = list(&env);
    assert_ne!(trusted.stdout, want.stdout, "list reads the index");
    assert!(String::from_utf8_lossy(&trusted.stdout).contains("Forged Name"));

    let found = doctor(false);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["severity"], "warning");
    assert!(
        found[0]["message"].as_str().unwrap().contains("differ"),
        "{found:?}"
    );
    let fixed = doctor(true);
    assert_eq!(fixed[0]["fixed"], true, "{fixed:?}");
    assert!(!path.exists(), "--fix deletes the index");
    assert_eq!(list(&env).stdout, want.stdout);

    std::fs::write(&path, b"garbage").unwrap();
    let found = doctor(false);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("not a summary index"),
        "{found:?}"
    );
    assert_eq!(doctor(true)[0]["fixed"], true);
    assert!(!path.exists());
    assert!(doctor(false).is_empty());
}
