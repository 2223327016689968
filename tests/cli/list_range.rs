//! `list <revision-range>` on real repositories and remotes: the linked commits of a range in
//! `git log`'s order, a fresh clone fetching the missing checkpoints in one batch (counted on
//! the remote side: one listing and one fetch, two `git upload-pack`s), a `--single-branch` clone of the v1 branch store,
//! links kept by the rewrite map after an amend and a rebase, a trailer whose checkpoint exists
//! nowhere, and input git or we refuse.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::env::{assert_code, checkpoint_ref, parse_json, stdout, Store, TestEnv};
use crate::fixtures::{HEX_ID, HEX_ID_2, TRANSCRIPT, ULID_ID};

/// A ULID no store holds.
const NOWHERE: &str = "01KVBJCWYA4YW6J5M9GP655HZZ";

/// Writes checkpoint `id` under `store` in `dir`, then commits with `subject` and a trailer
/// for each of `links`; returns the commit.
fn linked(env: &TestEnv, dir: &Path, store: Store, subject: &str, links: &[&str]) -> String {
    for id in links.iter().filter(|id| **id != NOWHERE) {
        env.write(store, "sess-1")
            .id(id)
            .transcript_bytes(TRANSCRIPT)
            .in_dir(dir)
            .ok();
    }
    let trailers: Vec<String> = links
        .iter()
        .map(|id| format!("Entire-Checkpoint: {id}"))
        .collect();
    let message = match trailers.is_empty() {
        true => subject.to_owned(),
        false => format!("{subject}\n\n{}", trailers.join("\n")),
    };
    env.git_in(dir, &["commit", "-q", "--allow-empty", "-m", &message]);
    env.git_in(dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

/// Commits `commits` (subject, links) with their git-refs checkpoints, pushes both to a bare
/// `origin` and clones it: returns the remote and the fresh clone, which has no checkpoint.
fn published(env: &TestEnv, commits: &[(&str, &[&str])]) -> (PathBuf, PathBuf) {
    let origin = env.bare_remote("origin");
    let repo = env.repo().to_path_buf();
    for (subject, links) in commits {
        linked(env, &repo, Store::Refs, subject, links);
    }
    env.git(&["push", "-q", "origin", "main"]);
    env.ok(Store::Refs, &["push", "origin"]);
    let clone = env.clone_of(&origin, "clone", &[]);
    (origin, clone)
}

/// The commits and checkpoint IDs of a `list <range> --json` document.
fn shape(doc: &Value) -> Vec<(String, Vec<(String, bool)>)> {
    doc["commits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            let ids = c["checkpoints"]
                .as_array()
                .unwrap()
                .iter()
                .map(|cp| {
                    (
                        cp["checkpoint_id"].as_str().unwrap().to_owned(),
                        cp["found"].as_bool().unwrap(),
                    )
                })
                .collect();
            (c["commit"].as_str().unwrap().to_owned(), ids)
        })
        .collect()
}

/// How many times the remote served a fetch (`git upload-pack`) in a `GIT_TRACE` file.
fn upload_packs(trace: &Path) -> usize {
    std::fs::read_to_string(trace)
        .unwrap_or_default()
        .lines()
        .filter(|l| l.contains("built-in: git upload-pack"))
        .count()
}

/// `list <args>` in `dir` under `store` with `GIT_TRACE` to `trace`: the output.
fn traced(
    env: &TestEnv,
    store: Store,
    dir: &Path,
    trace: &Path,
    args: &[&str],
) -> std::process::Output {
    let _ = std::fs::remove_file(trace);
    env.cmd_as(store)
        .current_dir(dir)
        .env("GIT_TRACE", trace)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_linked_commits_of_a_range_are_listed_newest_first_with_their_checkpoints() {
    for store in Store::ALL {
        let env = TestEnv::new();
        let repo = env.repo().to_path_buf();
        env.git(&["branch", "base"]);
        let first = linked(&env, &repo, store, "first", &[HEX_ID]);
        linked(&env, &repo, store, "no link", &[]);
        let ids: &[&str] = match store {
            Store::Refs => &[ULID_ID, HEX_ID],
            Store::Branch => &[HEX_ID_2, HEX_ID],
        };
        let third = linked(&env, &repo, store, "third", ids);
        let doc = env.ok_json(store, &["list", "base..main", "--json"]);
        assert_eq!(
            shape(&doc),
            [
                (
                    third.clone(),
                    ids.iter().map(|i| (i.to_string(), true)).collect()
                ),
                (first.clone(), vec![(HEX_ID.to_owned(), true)]),
            ],
            "{store:?}: {doc:#}"
        );
        assert_eq!(doc["scanned"], 3);
        assert_eq!(doc["commits"][0]["subject"], "third");
        assert_eq!(doc["commits"][0]["checkpoints"][0]["session_count"], 1);
        assert_eq!(doc["commits"][0]["checkpoints"][0]["store"], store.name());

        let out = env.run(store, &["list", "-n", "1"]);
        let stderr = assert_code(&out, 0, "list -n 1");
        let text = stdout(&out);
        assert!(text.starts_with(&format!("{} ", &third[..12])), "{text}");
        assert!(text.contains("third"), "{text}");
        assert_eq!(text.lines().count(), 1 + ids.len(), "{text}");
        assert!(
            stderr.contains("1 commit(s) scanned, 1 with checkpoints"),
            "{stderr}"
        );
        // Without a range, list is the list of every checkpoint.
        assert_eq!(
            env.ok_json(store, &["list", "--json"])
                .as_array()
                .unwrap()
                .len(),
            2
        );
    }
}

#[test]
fn a_fresh_clone_fetches_the_missing_checkpoints_in_one_batch() {
    let env = TestEnv::new();
    let (origin, clone) = published(&env, &[("one", &[ULID_ID]), ("two", &[HEX_ID, HEX_ID_2])]);
    assert!(env.checkpoint_tips_in(&clone).is_empty());

    let trace = env.root().join("trace.txt");
    let out = traced(
        &env,
        Store::Refs,
        &clone,
        &trace,
        &["list", "main", "--json"],
    );
    assert_code(&out, 0, "list main in a fresh clone");
    let doc = parse_json(&out.stdout);
    let found: Vec<bool> = shape(&doc)
        .iter()
        .flat_map(|(_, ids)| ids.iter().map(|(_, f)| *f))
        .collect();
    assert_eq!(found, [true, true, true], "{doc:#}");
    assert_eq!(
        upload_packs(&trace),
        2,
        "one listing and one fetch for three checkpoints"
    );
    for id in [ULID_ID, HEX_ID, HEX_ID_2] {
        assert_eq!(
            env.checkpoint_tips_in(&clone).get(&checkpoint_ref(id)),
            env.checkpoint_tips().get(&checkpoint_ref(id)),
            "{id} fetched whole"
        );
    }
    // Everything is local now: no fetch at all.
    let again = traced(&env, Store::Refs, &clone, &trace, &["list", "main"]);
    assert_code(&again, 0, "list main again");
    assert_eq!(upload_packs(&trace), 0);

    // --no-fetch in another fresh clone: not found, and nothing fetched.
    let other = env.clone_of(&origin, "other", &[]);
    let out = traced(
        &env,
        Store::Refs,
        &other,
        &trace,
        &["list", "main", "--no-fetch", "--json"],
    );
    assert_code(&out, 0, "list --no-fetch");
    assert_eq!(upload_packs(&trace), 0);
    let doc = parse_json(&out.stdout);
    assert_eq!(doc["commits"][0]["checkpoints"][0]["found"], false);
}

#[test]
fn commits_after_one_whose_checkpoint_is_fetched_keep_git_logs_order() {
    // The newest and the oldest commit link checkpoints this clone has; the middle one links
    // one only the remote has. The listing is written as git log prints the range, but the
    // middle commit waits for the batch fetch, and the oldest waits behind it.
    let env = TestEnv::new();
    let (_, clone) = published(&env, &[("elsewhere", &[HEX_ID])]);
    let oldest = linked(&env, &clone, Store::Refs, "oldest", &[HEX_ID_2]);
    let message = format!("middle\n\nEntire-Checkpoint: {HEX_ID}");
    env.git_in(&clone, &["commit", "-q", "--allow-empty", "-m", &message]);
    let middle = env.git_in(&clone, &["rev-parse", "HEAD"]).trim().to_owned();
    let newest = linked(&env, &clone, Store::Refs, "newest", &[ULID_ID]);
    assert_eq!(
        env.checkpoint_tips_in(&clone).len(),
        2,
        "HEX_ID is not here"
    );
    // A listing writes the summary index, which the range then reads while git log runs.
    env.ok_in(Store::Refs, &clone, &["list"]);
    assert!(env
        .common_dir_in(&clone)
        .join("entire/summary-index")
        .is_file());

    let trace = env.root().join("trace.txt");
    let out = traced(
        &env,
        Store::Refs,
        &clone,
        &trace,
        &["list", "origin/main..HEAD"],
    );
    let err = assert_code(&out, 0, "list with a fetch mid-range");
    let text = stdout(&out);
    let heads: Vec<&str> = text.lines().filter(|l| !l.starts_with(' ')).collect();
    let order: Vec<String> = [&newest, &middle, &oldest]
        .iter()
        .map(|c| c[..12].to_owned())
        .collect();
    assert_eq!(
        heads.iter().map(|l| l[..12].to_owned()).collect::<Vec<_>>(),
        order,
        "{text}"
    );
    assert!(!text.contains("not found"), "{text}\n{err}");
    assert_eq!(upload_packs(&trace), 2, "one listing and one fetch");
    assert!(env
        .checkpoint_tips_in(&clone)
        .contains_key(&checkpoint_ref(HEX_ID)));
}

#[test]
fn a_single_branch_clone_reads_the_v1_branch_of_the_remote() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    let repo = env.repo().to_path_buf();
    let b = linked(&env, &repo, Store::Branch, "first", &[HEX_ID_2]);
    let c = linked(&env, &repo, Store::Branch, "on the branch", &[HEX_ID]);
    env.git(&["push", "-q", "origin", "main"]);
    env.ok(Store::Branch, &["push", "origin"]);
    let clone = env.clone_of(&origin, "single", &["--single-branch"]);
    let trace = env.root().join("trace.txt");
    let out = traced(
        &env,
        Store::Branch,
        &clone,
        &trace,
        &["list", "-n", "2", "--json"],
    );
    assert_code(&out, 0, "list -n 2 in a single-branch clone");
    let doc = parse_json(&out.stdout);
    assert_eq!(
        shape(&doc),
        [
            (c, vec![(HEX_ID.to_owned(), true)]),
            (b, vec![(HEX_ID_2.to_owned(), true)])
        ],
        "{doc:#}"
    );
    let fetches = upload_packs(&trace);
    // The remote has no checkpoint refs here: its listing says so, and one fetch of the v1
    // branch finds both (docs/decisions.md).
    assert!(
        fetches <= 2,
        "the listing, then the branch: {fetches}\n{}",
        std::fs::read_to_string(&trace).unwrap()
    );
}

#[test]
fn links_survive_an_amend_and_a_rebase_through_the_rewrite_map() {
    let env = TestEnv::new();
    env.ok_default(&["enable"]);
    let (_, id) = crate::rewrite::linked_commit(&env, None, "a.txt", "to reword");
    let new = crate::rewrite::amend_dropping_the_trailer(&env, None);
    let doc = env.ok_json_default(&["list", "-n", "1", "--json"]);
    assert_eq!(shape(&doc), [(new, vec![(id.clone(), true)])], "{doc:#}");

    env.git(&["branch", "-q", "base", "HEAD~1"]);
    env.git(&["checkout", "-q", "base"]);
    env.git(&["commit", "-q", "--allow-empty", "-m", "new base"]);
    env.git(&["checkout", "-q", "main"]);
    env.git_hooked_ok(None, env.repo(), &["rebase", "-q", "base"]);
    let newer = env.rev("HEAD").unwrap();
    let doc = env.ok_json_default(&["list", "base..main", "--json"]);
    assert_eq!(shape(&doc), [(newer, vec![(id, true)])], "{doc:#}");
}

#[test]
fn a_trailer_to_a_checkpoint_that_exists_nowhere_is_shown_as_not_found() {
    let env = TestEnv::new();
    let origin = env.bare_remote("origin");
    let repo = env.repo().to_path_buf();
    let c = linked(&env, &repo, Store::Refs, "dangling", &[HEX_ID, NOWHERE]);
    env.git(&["push", "-q", "origin", "main"]);
    env.ok(Store::Refs, &["push", "origin"]);
    let clone = env.clone_of(&origin, "clone", &[]);
    let out = env.run_in(Store::Refs, &clone, &["list", "-n", "1", "--json"]);
    assert_code(&out, 0, "a missing checkpoint is no failure");
    let doc = parse_json(&out.stdout);
    assert_eq!(
        shape(&doc),
        [(
            c.clone(),
            vec![(HEX_ID.to_owned(), true), (NOWHERE.to_owned(), false)]
        )]
    );
    assert_eq!(
        doc["commits"][0]["checkpoints"][1],
        json!({"checkpoint_id": NOWHERE, "found": false})
    );
    let text = env.ok_in(Store::Refs, &clone, &["list", "-n", "1"]);
    assert!(
        text.lines()
            .any(|l| l.trim_start().starts_with(NOWHERE) && l.ends_with("not found")),
        "{text}"
    );
}

#[test]
fn a_range_git_rejects_and_options_we_refuse_are_usage_errors() {
    let env = TestEnv::new();
    let marker = env.root().join("marker");
    let marker_opt = format!("--output={}", marker.display());
    for (args, says) in [
        (&["list", "nosuch..main"][..], "not a revision range"),
        (&["list", &marker_opt], "unexpected argument"),
        (
            &["list", "--", &marker_opt],
            "is not a revision-range option",
        ),
        (&["list", "-n", "x"], "invalid value"),
        (&["list", "main", "--ids"], "cannot be used with"),
    ] {
        let out = env.run(Store::Refs, args);
        let stderr = assert_code(&out, 2, &args.join(" "));
        assert!(stderr.contains(says), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert!(!marker.exists(), "no option reached git");
}

/// A range naming more checkpoints than `list` reads one by one takes them from the summary
/// index: the same entries, the missing one still shown as not found.
#[test]
fn a_range_of_many_checkpoints_reads_them_through_the_summary_index() {
    let env = TestEnv::new();
    let repo = env.repo().to_path_buf();
    env.git(&["branch", "base"]);
    let mut ids = Vec::new();
    for i in 0..65u64 {
        let id = format!("{:012x}", 0xabc0_0000_0000u64 + i);
        linked(&env, &repo, Store::Refs, &format!("change {i}"), &[&id]);
        ids.push(id);
    }
    linked(&env, &repo, Store::Refs, "dangling", &[NOWHERE]);
    // With the index (read while git log runs), then without it: the listing is read once the
    // range has named 64 checkpoints, and rebuilds the index.
    let index = env
        .common_dir_in(&repo)
        .join("entire")
        .join("summary-index");
    for with_index in [true, false] {
        if !with_index {
            std::fs::remove_file(&index).expect("list wrote the summary index");
        }
        let doc = env.ok_json(Store::Refs, &["list", "base..main", "--no-fetch", "--json"]);
        let listed: Vec<(String, bool)> =
            shape(&doc).into_iter().flat_map(|(_, cps)| cps).collect();
        let mut expected: Vec<(String, bool)> = vec![(NOWHERE.to_owned(), false)];
        expected.extend(ids.iter().rev().map(|id| (id.clone(), true)));
        assert_eq!(listed, expected, "with the index: {with_index}");
        let first = &doc["commits"][1]["checkpoints"][0];
        assert_eq!(first["session_count"], 1, "{first}");
        assert_eq!(first["session_ids"], json!(["sess-1"]), "{first}");
        assert_eq!(first["store"], "git-refs");
    }
    assert!(index.is_file(), "the listing rebuilt the index");
}

#[test]
fn every_command_finds_links_by_the_references_rule_not_gits_trailer_paragraph() {
    let env = TestEnv::new();
    let repo = env.repo().to_path_buf();
    for id in [HEX_ID, HEX_ID_2] {
        env.write(Store::Branch, "sess-1")
            .id(id)
            .transcript_bytes(TRANSCRIPT)
            .in_dir(&repo)
            .ok();
    }
    let commit = |file: &str, message: &str| {
        env.write_file(file, b"line\n");
        env.git(&["add", file]);
        env.git(&["commit", "-q", "-m", message]);
        env.rev("HEAD").unwrap()
    };
    // A GitHub squash merge: a Co-authored-by paragraph after the link (git sees no trailer).
    let squash = commit(
        "a.txt",
        &format!("Squash (#1)\n\nbody\n\nEntire-Checkpoint: {HEX_ID}\n\nCo-authored-by: A <a@example.com>\n"),
    );
    // No blank line before the link.
    let glued = commit(
        "b.txt",
        &format!("chore: version packages\nEntire-Checkpoint: {HEX_ID_2}"),
    );
    // A placeholder and a lowercase key: no link (the first said malformed).
    let placeholder = commit("c.txt", "notes\n\nEntire-Checkpoint: [commit hash]\n");
    let lowercase = commit("d.txt", &format!("lower\n\nentire-checkpoint: {HEX_ID}\n"));

    let out = env.run(Store::Branch, &["list", "main", "--json"]);
    let err = assert_code(&out, 0, "list main");
    assert!(
        err.contains("malformed Entire-Checkpoint trailer \"[commit\""),
        "{err}"
    );
    assert_eq!(
        shape(&parse_json(&out.stdout)),
        [
            (glued.clone(), vec![(HEX_ID_2.to_owned(), true)]),
            (squash.clone(), vec![(HEX_ID.to_owned(), true)]),
        ]
    );
    // show and blame see the same links.
    for (commit, id) in [(&squash, HEX_ID), (&glued, HEX_ID_2)] {
        let v = env.ok_json(Store::Branch, &["show", commit, "--json"]);
        assert_eq!(v["checkpoint_id"], id);
    }
    let blamed = env.ok_json(Store::Branch, &["blame", "a.txt", "--json", "--no-fetch"]);
    assert_eq!(blamed["lines"][0]["checkpoints"], json!([HEX_ID]));
    for commit in [&placeholder, &lowercase] {
        assert_code(
            &env.run(Store::Branch, &["show", commit, "--json"]),
            3,
            "show of a commit that links nothing",
        );
    }
    let blamed = env.ok_json(Store::Branch, &["blame", "d.txt", "--json", "--no-fetch"]);
    assert_eq!(blamed["lines"][0]["checkpoints"], json!([]));
}
