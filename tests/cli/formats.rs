//! Repositories in the formats Git 3.0 makes the default: refs in reftable
//! (`git init --ref-format=reftable`), objects named by SHA-256 (`--object-format=sha256`), and
//! both at once under `safe.bareRepository=explicit`. The whole user story runs in each, and its
//! results are checked with git itself: enable, a commit that condenses a staged session, a push
//! through the pre-push hook, a teammate's fresh clone that shows the commit's checkpoint,
//! `entire-fetch --all`, `list --remote`, `doctor`, `blame`, `migrate` of a v1 checkpoint and
//! `gc` of what the remote holds.

use std::path::{Path, PathBuf};

use crate::blame::{AGENT_VERSION, CLAUDE, FILE};
use crate::commit_hooks::{record, the_trailer};
use crate::env::{
    assert_code, assert_fsck_clean, checkpoint_ids, checkpoint_ref, parse_json, path_str, Store,
    TestEnv, REFS_PREFIX,
};
use crate::fixtures::HEX_ID;
use crate::schemas::assert_valid;

/// The formats of a test repository and of its remote, as `git init` options.
#[derive(Clone, Copy, Debug)]
struct Formats {
    init: &'static [&'static str],
    /// `safe.bareRepository=explicit` in the global config.
    explicit_bare: bool,
}

const REFTABLE: Formats = Formats {
    init: &["--ref-format=reftable"],
    explicit_bare: false,
};
const SHA256: Formats = Formats {
    init: &["--object-format=sha256"],
    explicit_bare: false,
};
const GIT3: Formats = Formats {
    init: &["--object-format=sha256", "--ref-format=reftable"],
    explicit_bare: true,
};

/// `git --git-dir=<bare> <args>` (a bare repository is always addressed explicitly, so this
/// works under `safe.bareRepository=explicit`).
fn bare_git(env: &TestEnv, bare: &Path, args: &[&str]) -> String {
    let mut all = vec!["--git-dir", path_str(bare)];
    all.extend_from_slice(args);
    env.git_in(env.root(), &all)
}

/// A writer repository in `formats` with one commit, a bare `origin` in the same formats
/// holding `main`, and the hooks installed by `enable --store git-refs`.
fn writer(formats: Formats) -> (TestEnv, PathBuf) {
    let env = TestEnv::without_repo();
    if formats.explicit_bare {
        env.git(&["config", "--global", "safe.bareRepository", "explicit"]);
    }
    env.init_repo(formats.init);
    env.write_file("README.md", b"hello\n");
    env.git(&["add", "README.md"]);
    env.git(&["commit", "-q", "-m", "initial commit"]);
    let origin = env.root().join("origin.git");
    let mut init = vec!["init", "-q", "--bare", "-b", "main"];
    init.extend_from_slice(formats.init);
    init.push(path_str(&origin));
    env.git_in(env.root(), &init);
    env.git(&["remote", "add", "origin", path_str(&origin)]);
    env.git(&["push", "-q", "origin", "main"]);
    env.ok_default(&["enable", "--store", "git-refs"]);
    (env, origin)
}

/// `git rev-parse --show-object-format` and `--show-ref-format` of `dir`.
fn formats_of(env: &TestEnv, dir: &Path) -> (String, String) {
    let out = env.git_in(
        dir,
        &["rev-parse", "--show-object-format", "--show-ref-format"],
    );
    let mut lines = out.lines().map(str::to_owned);
    (lines.next().unwrap(), lines.next().unwrap())
}

fn user_story(formats: Formats) {
    let what = format!("{formats:?}");
    if formats.init.contains(&"--ref-format=reftable")
        && !crate::env::git_at_least(2, 45, "reftable repositories")
    {
        return;
    }
    let (env, origin) = writer(formats);
    let (objects, refs) = formats_of(&env, env.repo());
    let hex_len = if objects == "sha256" { 64 } else { 40 };

    // A staged session condensed into the checkpoint of the next commit.
    record(&env, env.repo(), "sess-1", Some(CLAUDE.as_bytes()), &[]);
    env.write_file(FILE, AGENT_VERSION.as_bytes());
    env.git(&["add", FILE]);
    env.git_hooked_ok(None, env.repo(), &["commit", "-q", "-m", "add hello"]);
    let head = env.rev("HEAD").unwrap();
    assert_eq!(head.len(), hex_len, "{what}");
    let id = the_trailer(&env, &head);
    let name = checkpoint_ref(&id);
    let tip = env.git(&["rev-parse", &name]).trim().to_owned();
    assert_eq!(tip.len(), hex_len, "{what}: the ref's commit");
    let summary = env.git(&["cat-file", "-p", &format!("{name}:metadata.json")]);
    assert!(summary.contains(&id), "{what}: {summary}");

    // A legacy checkpoint on the v1 branch, migrated into a ref.
    let t = env.input_file("legacy.jsonl", b"{\"type\":\"user\",\"n\":1}\n");
    env.write(Store::Branch, "sess-legacy")
        .id(HEX_ID)
        .transcript(&t)
        .ok();
    env.ok_default(&["migrate"]);
    env.git(&[
        "cat-file",
        "-e",
        &format!("{}:metadata.json", checkpoint_ref(HEX_ID)),
    ]);

    // The pre-push hook pushes the checkpoints with the branch.
    env.git_hooked_ok(None, env.repo(), &["push", "-q", "origin", "main"]);
    env.ok_default(&["push", "origin"]);
    let remote_refs = bare_git(
        &env,
        &origin,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            REFS_PREFIX,
        ],
    );
    assert!(
        remote_refs.contains(&format!("{name} {tip}")),
        "{what}: {remote_refs}"
    );
    assert!(
        remote_refs.contains(&checkpoint_ref(HEX_ID)),
        "{what}: {remote_refs}"
    );
    assert_eq!(
        env.queued_in(None, env.repo()),
        0,
        "{what}: nothing left queued"
    );

    // A teammate's fresh clone, in the same formats.
    let teammate = env.root().join("teammate");
    let mut clone = vec!["clone", "-q"];
    if refs == "reftable" {
        clone.push("--ref-format=reftable");
    }
    clone.extend_from_slice(&[path_str(&origin), path_str(&teammate)]);
    env.git_in(env.root(), &clone);
    assert_eq!(
        formats_of(&env, &teammate),
        (objects.clone(), refs.clone()),
        "{what}"
    );
    let shown = parse_json(
        env.ok_primary_in(None, &teammate, &["show", "HEAD", "--json"])
            .as_bytes(),
    );
    assert_valid("show.json", &format!("{what}: show --json"), &shown);
    let shown = if shown.is_array() {
        shown[0].clone()
    } else {
        shown
    };
    assert_eq!(shown["checkpoint_id"], id.as_str(), "{what}: {shown}");
    let listed = parse_json(
        env.ok_primary_in(None, &teammate, &["list", "--remote", "--json"])
            .as_bytes(),
    );
    let mut ids = checkpoint_ids(listed.as_array().unwrap());
    ids.sort();
    let mut expected = vec![id.clone(), HEX_ID.to_owned()];
    expected.sort();
    assert_eq!(ids, expected, "{what}: list --remote");
    let fetched = env.entire_fetch(&teammate, &["origin", "--all"]);
    assert!(
        fetched
            .as_array()
            .unwrap()
            .iter()
            .all(|o| o["status"] == "fetched" || o["status"] == "present"),
        "{what}: {fetched}"
    );
    let local = env.git_in(
        &teammate,
        &[
            "for-each-ref",
            "--format=%(refname) %(objectname)",
            REFS_PREFIX,
        ],
    );
    assert!(local.contains(&format!("{name} {tip}")), "{what}: {local}");
    assert!(local.contains(&checkpoint_ref(HEX_ID)), "{what}: {local}");

    for (schema, args, commit) in [
        ("log.json", vec!["log", id.as_str(), "--json"], &tip),
        ("list-range.json", vec!["list", "main", "--json"], &head),
    ] {
        let out = parse_json(env.ok_primary_in(None, &teammate, &args).as_bytes());
        assert_valid(schema, &format!("{what}: {args:?}"), &out);
        assert!(
            out.to_string().contains(commit.as_str()),
            "{what}: {args:?} names {commit}: {out}"
        );
    }

    // A filtered fetch into the partial cache (created in the repository's object format);
    // the transcript follows on read.
    bare_git(&env, &origin, &["config", "uploadpack.allowFilter", "true"]);
    let partial = env.root().join("partial");
    let mut clone = vec!["clone", "-q"];
    if refs == "reftable" {
        clone.push("--ref-format=reftable");
    }
    clone.extend_from_slice(&[path_str(&origin), path_str(&partial)]);
    env.git_in(env.root(), &clone);
    let fetched = env.entire_fetch(&partial, &["--filter=blob:none", "origin", &id]);
    assert_eq!(fetched[0]["status"], "fetched", "{what}: {fetched}");
    assert_eq!(fetched[0]["partial"], true, "{what}: {fetched}");
    let transcript = env.ok_primary_in(None, &partial, &["cat", &id, "0/full.jsonl"]);
    assert_eq!(transcript, CLAUDE, "{what}: the transcript fetched on read");

    env.ok_primary_in(None, &teammate, &["enable"]);
    let out = env.run_primary_in(None, &teammate, &["doctor", "--json"]);
    let doctor = parse_json(&out.stdout);
    assert_code(&out, 0, &format!("{what}: doctor {doctor}"));
    assert_eq!(doctor["healthy"], true, "{what}: {doctor}");

    let blame = parse_json(
        env.ok_primary_in(None, &teammate, &["blame", FILE, "--json"])
            .as_bytes(),
    );
    let agent_lines = blame["lines"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|l| l["attribution"] == "agent")
        .count();
    assert!(agent_lines > 0, "{what}: {blame}");

    // gc deletes the local refs the remote holds; the checkpoint is still read from there.
    let gc = env.ok_json_default(&["gc", "--keep-days", "0", "--json"]);
    assert!(env.checkpoint_refs().is_empty(), "{what}: {gc}");
    let again = parse_json(env.ok_default(&["show", &id, "--json"]).as_bytes());
    assert_eq!(again["checkpoint_id"], id.as_str(), "{what}");
    assert_eq!(
        env.git(&["rev-parse", &name]).trim(),
        tip,
        "{what}: fetched back"
    );

    for dir in [env.repo(), teammate.as_path()] {
        assert_fsck_clean(&env, dir);
        if refs == "reftable" {
            // Nothing wrote refs as the files backend would (git keeps `refs/heads` a file
            // there, so that older gits refuse the repository).
            let git_dir = dir.join(".git");
            assert!(!git_dir.join("packed-refs").exists(), "{what}");
            assert!(!git_dir.join("refs/entire").exists(), "{what}");
            assert!(git_dir.join("refs/heads").is_file(), "{what}");
        }
    }
}

#[test]
fn the_user_story_in_a_reftable_repository() {
    user_story(REFTABLE);
}

#[test]
fn the_user_story_in_a_sha256_repository() {
    user_story(SHA256);
}

#[test]
fn the_user_story_with_git3_defaults_and_explicit_bare_repositories() {
    user_story(GIT3);
}
