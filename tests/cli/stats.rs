//! `stats` on real repositories: commits whose agent-written lines are known (blame's history:
//! a Claude Code session writes three lines that are evidence, a person adds one, a Codex
//! session one more), measured per commit, in total and grouped, in both stores; the default
//! range against the upstream and, without one, against the default branch.

use std::path::Path;

use serde_json::{json, Value};

use crate::blame::{history, FILE};
use crate::env::{assert_code, parse_json, stderr, Store, TestEnv};
use crate::fixtures::{HEX_ID, HEX_ID_2};

/// `(added, removed, agent_written, commit_linked, human)` of a row.
fn counts(row: &Value) -> [u64; 5] {
    [
        "added",
        "removed",
        "agent_written",
        "commit_linked",
        "human",
    ]
    .map(|k| row[k].as_u64().unwrap())
}

#[test]
fn stats_counts_the_lines_each_commit_adds_and_those_an_agent_wrote() {
    for store in Store::ALL {
        let env = TestEnv::new();
        history(&env, store);
        let json = env.ok_json(store, &["stats", "main~3..main", "--json"]);
        let commits = json["commits"].as_array().expect("commits");
        let subjects: Vec<&str> = commits
            .iter()
            .map(|c| c["subject"].as_str().unwrap())
            .collect();
        assert_eq!(subjects, ["add bye", "a note", "add hello"], "{store:?}");
        // add hello: six lines, of which the Write shows three (the blank and `}` are no
        // evidence, `// tweaked by hand` is not the Write's text).
        assert_eq!(counts(&commits[2]), [6, 0, 3, 3, 0], "{json:#}");
        assert_eq!(commits[2]["checkpoints"], json!([HEX_ID]));
        assert_eq!(
            commits[2]["agents"],
            json!([{"agent": "Claude Code", "model": "test-model", "lines": 3}])
        );
        assert_eq!(commits[2]["ai_share"], 0.5);
        assert_eq!(counts(&commits[1]), [1, 0, 0, 0, 1]);
        assert_eq!(commits[1]["checkpoints"], json!([]));
        assert_eq!(counts(&commits[0]), [1, 0, 1, 0, 0]);
        assert_eq!(commits[0]["checkpoints"], json!([HEX_ID_2]));
        assert_eq!(counts(&json["total"]), [8, 0, 4, 3, 1]);
        assert_eq!(json["total"]["ai_share"], 0.5);
        assert_eq!(
            json["agents"],
            json!([
                {"agent": "Claude Code", "model": "test-model", "lines": 3},
                {"agent": "Codex", "model": "test-model", "lines": 1},
            ])
        );
        // The commits as git sees them.
        assert_eq!(
            env.git(&["rev-parse", "main~2"]).trim(),
            commits[2]["commit"].as_str().unwrap()
        );
        let numstat = env.git(&["log", "--numstat", "--format=", "main~3..main"]);
        assert_eq!(
            numstat.lines().filter(|l| !l.is_empty()).count(),
            3,
            "{numstat}"
        );
        assert!(
            numstat.lines().all(|l| l.is_empty()
                || l.starts_with(&format!("1\t0\t{FILE}"))
                || l.starts_with(&format!("6\t0\t{FILE}"))),
            "{numstat}"
        );

        // The table: a row per commit, the total, the agents.
        let out = env.ok(store, &["stats", "main~3..main"]);
        assert!(out.contains("add hello"), "{out}");
        assert!(out.contains("(no checkpoint)"), "{out}");
        assert!(
            out.contains("3 commit(s), 8 line(s) added, 0 removed; 4 by agents (50%)"),
            "{out}"
        );
        assert!(
            out.contains("Claude Code, model test-model: 3 line(s)"),
            "{out}"
        );
    }
}

#[test]
fn stats_groups_by_file_author_and_agent() {
    let env = TestEnv::new();
    history(&env, Store::Refs);
    // A second file, by another author, no checkpoint.
    env.write_file("notes.txt", b"one\ntwo\n");
    env.git(&["add", "notes.txt"]);
    env.git(&[
        "commit",
        "-q",
        "--author=Other Person <other@example.com>",
        "-m",
        "notes",
    ]);
    let by = |what: &str| {
        let json = env.ok_json(
            Store::Refs,
            &["stats", "main~4..main", "--json", "--by", what],
        );
        assert_eq!(json["by"], what);
        json["groups"]
            .as_array()
            .expect("groups")
            .iter()
            .map(|g| (g["key"].as_str().unwrap().to_owned(), counts(g)))
            .collect::<Vec<_>>()
    };
    assert_eq!(
        by("file"),
        [
            (FILE.to_owned(), [8, 0, 4, 3, 1]),
            ("notes.txt".to_owned(), [2, 0, 0, 0, 2]),
        ]
    );
    let author = format!(
        "{} <{}>",
        env.git(&["config", "user.name"]).trim(),
        env.git(&["config", "user.email"]).trim()
    );
    assert_eq!(
        by("author"),
        [
            (author, [8, 0, 4, 3, 1]),
            (
                "Other Person <other@example.com>".to_owned(),
                [2, 0, 0, 0, 2]
            ),
        ]
    );
    assert_eq!(
        by("agent"),
        [
            ("people".to_owned(), [6, 0, 0, 3, 3]),
            ("Claude Code (test-model)".to_owned(), [3, 0, 3, 0, 0]),
            ("Codex (test-model)".to_owned(), [1, 0, 1, 0, 0]),
        ]
    );
}

#[test]
fn stats_without_a_range_reads_the_branch_against_its_upstream_else_the_default_branch() {
    let env = TestEnv::new();
    env.git(&["checkout", "-q", "-b", "topic"]);
    history(&env, Store::Refs);
    env.git(&["branch", "-q", "--set-upstream-to=main"]);
    let json = env.ok_json(Store::Refs, &["stats", "--json"]);
    assert_eq!(json["range"], "main..HEAD");
    assert_eq!(json["commits"].as_array().unwrap().len(), 3);
    assert_eq!(counts(&json["total"]), [8, 0, 4, 3, 1]);

    env.git(&["branch", "--unset-upstream"]);
    let out = env.run(Store::Refs, &["stats", "--json"]);
    let err = assert_code(&out, 0, "stats without an upstream");
    assert!(
        err.contains("HEAD has no upstream: reading its commits not on main"),
        "{err}"
    );
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["commits"].as_array().unwrap().len(), 3);

    // Nothing to compare with: a usage error that says to name a range.
    env.git(&["branch", "-q", "-m", "main", "trunk"]);
    let out = env.run(Store::Refs, &["stats"]);
    let err = assert_code(&out, 2, "stats with no base");
    assert!(err.contains("name a range"), "{err}");
    let out = env.run(Store::Refs, &["stats", "no-such..HEAD"]);
    assert!(
        stderr(&out).contains("not a revision range"),
        "{}",
        stderr(&out)
    );
    assert_code(&out, 2, "a bad range");
}

/// The lines `git log --numstat` counts in `range`: (added, removed).
fn numstat(env: &TestEnv, range: &str) -> (u64, u64) {
    let out = env.git(&[
        "-c",
        "diff.relative=false",
        "log",
        "--numstat",
        "-M",
        "--format=",
        range,
    ]);
    out.lines()
        .filter_map(|l| {
            let mut f = l.split('\t');
            Some((
                f.next()?.parse::<u64>().ok()?,
                f.next()?.parse::<u64>().ok()?,
            ))
        })
        .fold((0, 0), |(a, r), (x, y)| (a + x, r + y))
}

#[test]
fn stats_counts_what_numstat_counts_whatever_the_configuration() {
    let env = TestEnv::new();
    history(&env, Store::Refs);
    // A rename with an edit, a file outside `src/` (where stats runs), and a binary file, on
    // a branch merged without fast-forward.
    env.git(&["checkout", "-q", "-b", "side"]);
    env.git(&["mv", FILE, "src/greet.go"]);
    let text = env.git(&["show", &format!("HEAD:{FILE}")]);
    env.write_file("src/greet.go", format!("{text}// renamed\n").as_bytes());
    env.write_file("logo.bin", b"\0\x01\x02binary\n");
    env.write_file("notes.txt", b"outside src\n");
    env.git(&["add", "-A"]);
    env.git(&["commit", "-q", "-m", "rename"]);
    env.git(&["checkout", "-q", "main"]);
    env.git(&["merge", "-q", "--no-ff", "-m", "merge side", "side"]);
    // Settings that would change git's diff output, were they obeyed.
    for (key, value) in [
        ("diff.relative", "true"),
        ("diff.noprefix", "true"),
        ("color.ui", "always"),
        ("diff.external", "echo"),
        ("log.showSignature", "true"),
    ] {
        env.git(&["config", key, value]);
    }
    let (added, removed) = numstat(&env, "main~4..main");
    assert_eq!(
        (added, removed),
        (10, 0),
        "the history's 8 lines, the rename's 2"
    );
    let src = env.repo().join("src");
    let json = parse_json(
        env.ok_in(Store::Refs, &src, &["stats", "main~4..main", "--json"])
            .as_bytes(),
    );
    assert_eq!(json["total"]["added"], added, "{json:#}");
    assert_eq!(json["total"]["removed"], removed);
    let commit = |subject: &str| {
        json["commits"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["subject"] == subject)
            .unwrap_or_else(|| panic!("{subject}: {json:#}"))
            .clone()
    };
    assert_eq!(commit("merge side")["merge"], true);
    assert_eq!(counts(&commit("merge side")), [0, 0, 0, 0, 0]);
    assert_eq!(counts(&commit("rename")), [2, 0, 0, 0, 2]);
}

#[test]
fn stats_in_a_shallow_clone_says_where_history_ends() {
    let env = TestEnv::new();
    history(&env, Store::Refs);
    let remote = env.bare_remote("origin");
    env.git(&["push", "-q", "origin", "main"]);
    let url = format!("file://{}", crate::env::path_str(&remote));
    let clone = env.clone_of(Path::new(&url), "shallow", &["--depth", "2"]);
    let out = env.run_in(Store::Refs, &clone, &["stats", "HEAD", "--json"]);
    let err = assert_code(&out, 0, "stats in a shallow clone");
    let json = parse_json(&out.stdout);
    assert_eq!(json["commits"].as_array().unwrap().len(), 2, "{json:#}");
    let end = env.git_in(&clone, &["rev-parse", "HEAD~1"]);
    assert!(
        err.contains(&format!("history ends at {} (a shallow clone)", &end[..12])),
        "{err}"
    );
}
