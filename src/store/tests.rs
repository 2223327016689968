//! In-process tests of tree building, publishing, slot handling and merging, through the
//! git-refs and git-branch stores on a fresh repository (no subprocess, no network). Results
//! are checked with `git cat-file` and the object facade, not only through the stores' own
//! readers.

use crate::git::objects::Oid;
use crate::git::refs::RefEdit;

use crate::base::id::CheckpointId;
use crate::base::session_id::SessionId;
use crate::git::repo::{Identity, Repo};
use crate::git::test_repo;
use crate::store::branch::{GitBranchStore, RemoteCopy};
use crate::store::merge::merge_trees;
use crate::store::on_demand::{BranchFetch, FetchError};
use crate::store::refs::GitRefsStore;
use crate::store::{Backfill, CheckpointReader, CheckpointWriter, SessionWrite};

const ULID: &str = "01JQ7Z8X9Y2K3M4N5P6Q7R8S9T";
const HEX: &str = "a1b2c3d4e5f6";

fn write(id: &str, session: &str, transcript: &[u8]) -> SessionWrite {
    SessionWrite {
        checkpoint_id: CheckpointId::parse(id).unwrap(),
        session_id: SessionId::parse(session).unwrap(),
        strategy: "manual-commit".into(),
        branch: "main".into(),
        commit_sha: String::new(),
        created_at: "2026-01-01T00:00:00Z".into(),
        transcript: Some(transcript.to_vec()),
        transcript_redacted_by: None,
        transcript_hash: None,
        prompts: vec![format!("prompt of {session}")],
        files_touched: vec!["b.rs".into(), "a.rs".into(), "a.rs".into()],
        agent: "Claude Code".into(),
        model: "m".into(),
        token_usage: None,
        checkpoints_count: 1,
        checkpoint_transcript_start: 0,
        commit_subject: None,
        author: Some(Identity {
            name: "Tester".into(),
            email: "t@example.com".into(),
        }),
        redactions: 0,
        tasks: Vec::new(),
        kind: String::new(),
        linked_commits: Vec::new(),
    }
}

/// The text of `path` in the tree of commit `tip`, read with `git cat-file`.
fn blob(repo: &Repo, tip: &str, path: &str) -> String {
    test_repo::cat_blob(repo, &format!("{tip}:{path}"))
}

/// Commit `hex` of `repo`.
fn commit<'r>(repo: &'r Repo, hex: &str) -> crate::git::objects::Commit<'r> {
    repo.objects()
        .find_commit(Oid::from_str(hex).unwrap())
        .unwrap()
}

#[test]
fn a_session_builds_the_documented_tree_and_publishes_its_ref() {
    let (_dir, repo) = test_repo::open();
    let store = GitRefsStore::new(&repo);
    let out = store
        .write_session(&write(ULID, "s-1", b"{\"a\":1}\n"))
        .unwrap();
    assert!(out.changed);
    assert_eq!(out.ref_name, format!("refs/entire/checkpoints/9T/{ULID}"));
    let tip = repo.ref_tip(&out.ref_name).unwrap().unwrap();
    assert_eq!(tip.to_string(), out.commit);
    let root: serde_json::Value =
        serde_json::from_str(&blob(&repo, &out.commit, "metadata.json")).unwrap();
    assert_eq!(root["checkpoint_id"], ULID);
    assert_eq!(root["sessions"].as_array().unwrap().len(), 1);
    let session: serde_json::Value =
        serde_json::from_str(&blob(&repo, &out.commit, "0/metadata.json")).unwrap();
    assert_eq!(session["session_id"], "s-1");
    assert_eq!(
        session["files_touched"],
        serde_json::json!(["b.rs", "a.rs"]),
        "de-duplicated, first occurrence kept"
    );
    assert_eq!(blob(&repo, &out.commit, "0/full.jsonl"), "{\"a\":1}\n");
    assert_eq!(blob(&repo, &out.commit, "0/prompt.txt"), "prompt of s-1");
    let commit = commit(&repo, &out.commit);
    assert_eq!(commit.author().name, "Tester");
    assert_eq!(commit.parent_count(), 0);
}

#[test]
fn the_same_write_again_builds_the_same_tree_and_a_new_session_takes_the_next_slot() {
    let (_dir, repo) = test_repo::open();
    let store = GitRefsStore::new(&repo);
    let first = store.write_session(&write(ULID, "s-1", b"one\n")).unwrap();
    let again = store.write_session(&write(ULID, "s-1", b"one\n")).unwrap();
    let tree_of = |c: &str| commit(&repo, c).tree_id();
    assert_eq!(
        tree_of(&again.commit),
        tree_of(&first.commit),
        "tree building is deterministic"
    );

    let second = store.write_session(&write(ULID, "s-2", b"two\n")).unwrap();
    assert!(second.changed);
    assert_eq!(blob(&repo, &second.commit, "1/full.jsonl"), "two\n");
    // Rewriting the first session reuses its slot.
    let replaced = store
        .write_session(&write(ULID, "s-1", b"one, longer\n"))
        .unwrap();
    assert_eq!(
        blob(&repo, &replaced.commit, "0/full.jsonl"),
        "one, longer\n"
    );
    assert_eq!(blob(&repo, &replaced.commit, "1/full.jsonl"), "two\n");
    let parent = commit(&repo, &replaced.commit).parent_id(0).unwrap();
    assert_eq!(
        parent.to_string(),
        second.commit,
        "each write is one commit on the last"
    );

    let cp = store
        .read(&CheckpointId::parse(ULID).unwrap())
        .unwrap()
        .unwrap();
    assert_eq!(cp.slot_of("s-2").unwrap(), 1);
    assert_eq!(cp.slot_of("0").unwrap(), 0);
    assert!(cp.slot_of("s-3").is_err());
}

#[test]
fn a_transcript_backfill_for_an_unknown_session_goes_to_the_latest_slot() {
    let (_dir, repo) = test_repo::open();
    let store = GitRefsStore::new(&repo);
    store.write_session(&write(ULID, "s-1", b"one\n")).unwrap();
    store.write_session(&write(ULID, "s-2", b"two\n")).unwrap();
    let out = store
        .backfill(&Backfill::Transcript {
            id: CheckpointId::parse(ULID).unwrap(),
            session_id: Some(SessionId::parse("nobody").unwrap()),
            transcript: b"final\n".to_vec(),
            prompts: Vec::new(),
        })
        .unwrap();
    assert_eq!(blob(&repo, &out.commit, "1/full.jsonl"), "final\n");
    assert_eq!(blob(&repo, &out.commit, "0/full.jsonl"), "one\n");
    let summary = store.backfill(&Backfill::Summary {
        id: CheckpointId::parse(ULID).unwrap(),
        session_id: Some(SessionId::parse("nobody").unwrap()),
        summary: serde_json::json!({"intent": "x"}),
    });
    assert!(summary.is_err(), "a summary names its session exactly");
    let missing = store.backfill(&Backfill::Attribution {
        id: CheckpointId::parse(HEX).unwrap(),
        attribution: serde_json::json!({}),
    });
    assert!(missing.is_err(), "a backfill never creates");
}

#[test]
fn the_branch_store_keeps_every_checkpoint_under_its_shard_on_one_branch() {
    let (_dir, repo) = test_repo::open();
    let store = GitBranchStore::primary(&repo);
    let a = store.write_session(&write(HEX, "s-1", b"one\n")).unwrap();
    let b = store
        .write_session(&write("0123456789ab", "s-1", b"two\n"))
        .unwrap();
    assert_eq!(a.ref_name, "refs/heads/entire/checkpoints/v1");
    assert_eq!(
        blob(&repo, &b.commit, "a1/b2c3d4e5f6/0/full.jsonl"),
        "one\n"
    );
    assert_eq!(
        blob(&repo, &b.commit, "01/23456789ab/0/full.jsonl"),
        "two\n"
    );
    let ids = store.ids().unwrap();
    assert_eq!(ids.len(), 2);
    assert!(
        store.write_session(&write(ULID, "s-1", b"x\n")).is_err(),
        "a ULID never goes to a git-branch primary"
    );
}

/// Commits on the v1 branch, as another tool might, the tree of its tip with checkpoint `id`'s
/// subtree set to `subtree` (or removed), by `author`, with the message `subject`.
fn commit_on_branch(repo: &Repo, id: &str, subtree: Option<Oid>, author: &str, subject: &str) {
    let objects = repo.objects();
    let branch = "refs/heads/entire/checkpoints/v1";
    let old = repo.ref_tip(branch).unwrap().unwrap();
    let tip = objects.find_commit(old).unwrap();
    let root = tip.tree().unwrap();
    let (shard, rest) = id.split_at(2);
    let shard_tree = root
        .get_name(shard)
        .map(|e| objects.find_tree(e.id()).unwrap());
    let mut sb = objects.tree_builder(shard_tree.as_ref()).unwrap();
    match subtree {
        Some(t) => sb.insert(rest, t, 0o040000).unwrap(),
        None => sb.remove(rest).unwrap(),
    }
    let mut rb = objects.tree_builder(Some(&root)).unwrap();
    rb.insert(shard, sb.write().unwrap(), 0o040000).unwrap();
    let tree = objects.find_tree(rb.write().unwrap()).unwrap();
    let who = Identity {
        name: author.into(),
        email: format!("{author}@example.com"),
    };
    let sig = repo.signature(&who, "AUTHOR").unwrap();
    let new = objects.commit(&sig, &sig, subject, &tree, &[&tip]).unwrap();
    let edit = RefEdit::Update {
        name: branch.into(),
        new,
        old,
    };
    repo.update_refs(&[edit], "test").unwrap();
}

#[test]
fn the_branch_author_is_the_newest_checkpoint_commit_else_the_oldest_change() {
    let (_dir, repo) = test_repo::open();
    let store = GitBranchStore::primary(&repo);
    let by = |w: SessionWrite, name: &str| SessionWrite {
        author: Some(Identity {
            name: name.into(),
            email: format!("{name}@example.com"),
        }),
        ..w
    };
    let other = "0123456789ab";
    let first = store
        .write_session(&by(write(HEX, "s-1", b"one\n"), "first"))
        .unwrap();
    let two = store
        .write_session(&by(write(other, "s-1", b"two\n"), "other"))
        .unwrap();
    store
        .write_session(&by(write(HEX, "s-2", b"more\n"), "later"))
        .unwrap();
    // As `show` asks: for a checkpoint read from the branch's tip (some of the checkpoints
    // below are grafted subtrees that do not read as themselves, so the read is made up).
    let author = |id: &str| {
        let read = store.read(&CheckpointId::parse(HEX).unwrap()).unwrap();
        let tip = store.tip().unwrap().unwrap().to_string();
        let cp = crate::store::Checkpoint {
            id: CheckpointId::parse(id).unwrap(),
            commit: tip,
            ..read.unwrap()
        };
        store.author(&cp).unwrap().map(|i| i.name)
    };
    assert_eq!(
        author(HEX).as_deref(),
        Some("later"),
        "the newest `Checkpoint: <id>` commit"
    );
    assert_eq!(author(other).as_deref(), Some("other"));
    assert_eq!(author("abcdefabcdef"), None, "absent");

    // A checkpoint no `Checkpoint: <id>` commit wrote: the commit that brought its current
    // line of history, not one before it was removed.
    let subtree_of = |hex: &str, id: &str| {
        let path = format!("{}/{}", &id[..2], &id[2..]);
        commit(&repo, hex)
            .tree()
            .unwrap()
            .get_path(&path)
            .unwrap()
            .id()
    };
    let custom = "fedcba987654";
    let (one, other_tree) = (
        subtree_of(&first.commit, HEX),
        subtree_of(&two.commit, other),
    );
    commit_on_branch(&repo, custom, Some(one), "gone", "import");
    commit_on_branch(&repo, custom, None, "remover", "remove");
    commit_on_branch(&repo, custom, Some(one), "starter", "import again");
    commit_on_branch(&repo, custom, Some(other_tree), "follower", "edit");
    commit_on_branch(&repo, other, Some(one), "bystander", "unrelated");
    assert_eq!(author(custom).as_deref(), Some("starter"));
    assert_eq!(
        author(HEX).as_deref(),
        Some("later"),
        "found past unrelated commits"
    );
}

#[test]
fn merging_two_versions_keeps_every_session_of_both() {
    let (_dir, repo) = test_repo::open();
    let id = CheckpointId::parse(ULID).unwrap();
    let store = GitRefsStore::new(&repo);
    let base = store.write_session(&write(ULID, "s-1", b"one\n")).unwrap();
    let local = store
        .write_session(&write(ULID, "s-2", b"local\n"))
        .unwrap();
    // The other side: the same base plus a different session, published elsewhere.
    let rewind = RefEdit::Update {
        name: base.ref_name.clone(),
        new: Oid::from_str(&base.commit).unwrap(),
        old: Oid::from_str(&local.commit).unwrap(),
    };
    repo.update_refs(&[rewind], "test").unwrap();
    let remote = store
        .write_session(&write(ULID, "s-3", b"remote\n"))
        .unwrap();
    let tree_of = |c: &str| {
        repo.objects()
            .find_commit(Oid::from_str(c).unwrap())
            .unwrap()
            .tree()
            .unwrap()
    };
    let merged = merge_trees(
        repo.objects(),
        &id,
        &tree_of(&local.commit),
        &tree_of(&remote.commit),
        "",
        &Default::default(),
    )
    .unwrap();
    let tree = repo.objects().find_tree(merged.tree).unwrap();
    let mut transcripts = Vec::new();
    for slot in ["0", "1", "2"] {
        let entry = tree.get_path(&format!("{slot}/full.jsonl")).unwrap();
        transcripts.push(test_repo::cat_blob(&repo, &entry.id().to_string()));
    }
    transcripts.sort();
    assert_eq!(transcripts, ["local\n", "one\n", "remote\n"]);
    let root = tree.get_path("metadata.json").unwrap().id().to_string();
    let root: serde_json::Value = serde_json::from_str(&test_repo::cat_blob(&repo, &root)).unwrap();
    assert_eq!(root["sessions"].as_array().unwrap().len(), 3);
}

/// A remote whose fetch brings its copy of the v1 branch to `tip` (held here already), as
/// `git fetch` into the tracking ref would.
struct CopyAt<'r> {
    repo: &'r Repo,
    tip: Oid,
}

impl BranchFetch for CopyAt<'_> {
    fn fetch_copies(&self, tracking: &str, _copies: &str) -> Result<bool, FetchError> {
        let edit = RefEdit::Create {
            name: tracking.to_owned(),
            new: self.tip,
        };
        self.repo.update_refs(&[edit], "test").unwrap();
        Ok(true)
    }
}

#[test]
fn a_batch_of_reads_reads_the_copy_its_own_fetch_brought() {
    let (_dir, repo) = test_repo::open();
    let written = GitBranchStore::primary(&repo)
        .write_session(&write(HEX, "s-1", b"one\n"))
        .unwrap();
    // Only the remote holds the checkpoint: the local branch is gone.
    let tip = Oid::from_str(&written.commit).unwrap();
    let gone = RefEdit::Delete {
        name: written.ref_name.clone(),
        old: tip,
    };
    repo.update_refs(&[gone], "test").unwrap();
    let mut store = GitBranchStore::primary(&repo);
    let fetcher = CopyAt { repo: &repo, tip };
    store.set_remote(RemoteCopy::new(
        "refs/remotes/origin/entire/checkpoints/v1".to_owned(),
        "refs/entire-copies/origin/".to_owned(),
        Some(Box::new(fetcher)),
    ));
    let id = CheckpointId::parse(HEX).unwrap();
    store.batch(|| {
        // The batch resolves the refs it reads once: here, none is there.
        assert!(!store.holds(&id).unwrap());
        // A miss fetches the copy; the batch then reads it.
        let cp = store
            .read(&id)
            .unwrap()
            .expect("read from the fetched copy");
        assert_eq!(cp.commit, written.commit);
        assert!(store.holds(&id).unwrap());
    });
}
