//! Checkpoint refs read and moved without loading every ref: loose refs, a sorted `packed-refs`
//! searched directly (with peeled tag lines and both shard spellings), and a `packed-refs`
//! without the `sorted` trait that must still work through the full ref database. Every result
//! is checked with plain git.

use serde_json::json;

use crate::env::{assert_code, checkpoint_ref, Store, TestEnv, REFS_PREFIX};
use crate::fixtures::{
    checkpoint_node, hand_made_ref, root_metadata_json, write_std, TRANSCRIPT, TRANSCRIPT_2,
    ULID_ID,
};

/// A ULID whose shard (`6B`) has letters, stored under the other-case shard `6b`.
const FOLD_ULID: &str = "01M2DCHJCHTR9T9MZTSB7WV76B";
const MISSING_ULID: &str = "01M2DCHJCHTR9T9MZTSB7WV76C";

/// A repository with `ULID_ID` written by us, `FOLD_ULID` made by hand under its folded shard,
/// 300 filler checkpoint refs around them and an annotated tag (a peeled line), all packed.
fn packed_repo() -> TestEnv {
    let env = TestEnv::with_files_refs();
    write_std(&env, Store::Refs, ULID_ID, "sess-1", TRANSCRIPT);
    let node = checkpoint_node(
        FOLD_ULID,
        "hand-sess",
        root_metadata_json(FOLD_ULID, "").as_bytes(),
        TRANSCRIPT,
    );
    hand_made_ref(
        &env,
        &format!("{REFS_PREFIX}6b/{FOLD_ULID}"),
        FOLD_ULID,
        &node,
    );
    let tip = env.rev(&checkpoint_ref(ULID_ID)).unwrap();
    let filler: String = (0..300)
        .map(|i| {
            let id = format!("{i:012x}");
            format!("create {REFS_PREFIX}{}/{id} {tip}\n", &id[10..])
        })
        .collect();
    env.git_stdin(&["update-ref", "--stdin"], filler.as_bytes());
    env.git(&["tag", "-a", "-m", "annotated", "v1.0", "HEAD"]);
    env.git(&["pack-refs", "--all"]);
    let packed = std::fs::read_to_string(env.common_dir().join("packed-refs")).unwrap();
    assert!(
        packed.lines().next().unwrap().contains(" sorted"),
        "{packed}"
    );
    assert!(packed.lines().any(|l| l.starts_with('^')), "a peeled line");
    assert!(!env.common_dir().join(checkpoint_ref(ULID_ID)).exists());
    env
}

fn show(env: &TestEnv, id: &str) -> serde_json::Value {
    env.ok_json(Store::Refs, &["show", id, "--json", "--no-fetch"])
}

/// Reads, an update and a create in a packed namespace, then the same reads loose.
fn reads_and_writes(env: &TestEnv) {
    let r = checkpoint_ref(ULID_ID);
    let old = env.rev(&r).unwrap();
    assert_eq!(show(env, ULID_ID)["commit"], json!(old));
    let folded = format!("{REFS_PREFIX}6b/{FOLD_ULID}");
    let v = show(env, FOLD_ULID);
    assert_eq!(v["ref"], json!(folded));
    assert_eq!(v["commit"], json!(env.rev(&folded).unwrap()));
    let out = env.run(Store::Refs, &["show", MISSING_ULID, "--no-fetch"]);
    assert_code(&out, 3, "show of a missing checkpoint");

    // An update of the packed ref: a child of the packed tip, visible to git.
    write_std(env, Store::Refs, ULID_ID, "sess-2", TRANSCRIPT_2);
    let new = env.rev(&r).unwrap();
    assert_ne!(new, old);
    assert_eq!(env.parents(&new), vec![old]);
    assert_eq!(show(env, ULID_ID)["commit"], json!(new));
    // The folded spelling is advanced, not shadowed by a canonical twin.
    write_std(env, Store::Refs, FOLD_ULID, "sess-2", TRANSCRIPT_2);
    assert_eq!(env.rev(&checkpoint_ref(FOLD_ULID)), None);
    assert_eq!(env.parents(&env.rev(&folded).unwrap()).len(), 1);
    // A create next to the packed refs.
    write_std(env, Store::Refs, MISSING_ULID, "sess-1", TRANSCRIPT);
    let created = checkpoint_ref(MISSING_ULID);
    let meta = env.git(&["cat-file", "-p", &format!("{created}:metadata.json")]);
    assert!(meta.contains(MISSING_ULID), "{meta}");
    assert_eq!(
        env.parents(&env.rev(&created).unwrap()),
        Vec::<String>::new()
    );
    let names = env.git(&["for-each-ref", "--format=%(refname)", REFS_PREFIX]);
    assert_eq!(names.lines().count(), 303, "{names}");
    for id in [ULID_ID, MISSING_ULID] {
        let lock = env
            .common_dir()
            .join(format!("{}.lock", checkpoint_ref(id)));
        assert!(!lock.exists(), "no lock file is left behind");
    }
    let fsck = env.git(&["fsck", "--no-dangling"]);
    assert!(!fsck.contains("error"), "{fsck}");
}

#[test]
fn sorted_packed_refs_are_searched_and_updated() {
    let env = packed_repo();
    reads_and_writes(&env);
    // The written refs are loose now, over their packed entries; pack again and read.
    env.git(&["pack-refs", "--all"]);
    assert_eq!(
        show(&env, MISSING_ULID)["commit"],
        json!(env.rev(&checkpoint_ref(MISSING_ULID)).unwrap())
    );
}

/// Rewrites `packed-refs` with its records in reverse order (each with its peeled line) under a
/// header without `sorted`: only the full ref database can read it.
fn unsort_packed_refs(env: &TestEnv) {
    let path = env.common_dir().join("packed-refs");
    let text = std::fs::read_to_string(&path).unwrap();
    // Records in reverse order (each with its peeled line) under a header without `sorted`.
    let mut records: Vec<String> = Vec::new();
    for line in text.lines().skip(1) {
        match line.strip_prefix('^') {
            Some(_) => records.last_mut().unwrap().push_str(&format!("\n{line}")),
            None => records.push(line.to_owned()),
        }
    }
    records.reverse();
    std::fs::write(
        &path,
        format!("# pack-refs with: peeled \n{}\n", records.join("\n")),
    )
    .unwrap();
}

#[test]
fn packed_refs_without_the_sorted_trait_still_work() {
    let env = packed_repo();
    unsort_packed_refs(&env);
    assert_eq!(env.git(&["for-each-ref", REFS_PREFIX]).lines().count(), 302);
    reads_and_writes(&env);
}

/// `list` enumerates the refs itself (loose files over sorted `packed-refs` lines) exactly as the
/// full ref database does: a loose ref written over its packed line, a folded shard, peeled
/// lines, and with `packed-refs` removed.
#[test]
fn list_enumerates_loose_and_packed_refs_as_git_does() {
    let env = packed_repo();
    // A second session makes the ref loose, over its stale packed line.
    write_std(&env, Store::Refs, ULID_ID, "sess-2", TRANSCRIPT_2);
    assert!(env.common_dir().join(checkpoint_ref(ULID_ID)).exists());
    let list = || env.ok_json(Store::Refs, &["list", "--json"]);
    let direct = list();
    let entries = direct.as_array().unwrap();
    assert_eq!(entries.len(), 302);
    let entry = |id: &str| {
        entries
            .iter()
            .find(|e| e["checkpoint_id"] == json!(id))
            .cloned()
    };
    assert_eq!(
        entry(ULID_ID).unwrap()["session_count"],
        json!(2),
        "the loose ref wins"
    );
    assert!(entry(FOLD_ULID).is_some());
    unsort_packed_refs(&env);
    assert_eq!(list(), direct, "through libgit2");
    // Every ref loose, no packed-refs at all.
    let refs = env.git(&["for-each-ref", "--format=%(objectname) %(refname)"]);
    std::fs::remove_file(env.common_dir().join("packed-refs")).unwrap();
    let stdin: String = refs
        .lines()
        .map(|l| {
            let (oid, name) = l.split_once(' ').unwrap();
            format!("update {name} {oid}\n")
        })
        .collect();
    env.git_stdin(&["update-ref", "--stdin"], stdin.as_bytes());
    assert_eq!(list(), direct, "loose only");
}

#[test]
fn loose_refs_are_read_directly() {
    let env = TestEnv::with_files_refs();
    write_std(&env, Store::Refs, ULID_ID, "sess-1", TRANSCRIPT);
    let r = checkpoint_ref(ULID_ID);
    let loose = std::fs::read_to_string(env.common_dir().join(&r)).unwrap();
    assert_eq!(loose.trim(), env.rev(&r).unwrap());
    assert_eq!(show(&env, ULID_ID)["commit"], json!(loose.trim()));
    write_std(&env, Store::Refs, ULID_ID, "sess-2", TRANSCRIPT_2);
    assert_eq!(
        env.parents(&env.rev(&r).unwrap()),
        vec![loose.trim().to_owned()]
    );
}
