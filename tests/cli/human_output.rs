//! How human output looks on a terminal: one date format in the local time zone (`--date`), and
//! the pager (docs/cli.md, "Human output").

use crate::env::{assert_success, fetch_bin, path_str, Store, TestEnv};
use crate::fixtures::{write_std, CREATED_AT, HEX_ID, HEX_ID_2, TRANSCRIPT};

/// stdout of `git-entire-checkpoint <args>` under `TZ=tz`.
fn in_zone(env: &TestEnv, tz: &str, args: &[&str]) -> String {
    let out = env
        .cmd_as(Store::Refs)
        .env("TZ", tz)
        .args(args)
        .output()
        .unwrap();
    assert_success(&out, args);
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn times_are_shown_in_one_format_in_the_local_zone() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    // CREATED_AT is 2026-10-01T19:12:01.19884Z; the commits are dated 2026-01-01 00:00 UTC.
    for (tz, created, committed) in [
        (
            "UTC0",
            "2026-10-01 19:12:01 +0000",
            "2026-01-01 00:00:00 +0000",
        ),
        (
            "JST-9",
            "2026-10-02 04:12:01 +0900",
            "2026-01-01 09:00:00 +0900",
        ),
    ] {
        let list = in_zone(&env, tz, &["list"]);
        assert!(list.contains(created), "{tz} list:\n{list}");
        let show = in_zone(&env, tz, &["show", HEX_ID]);
        assert!(
            show.contains(&format!("created  {created}")),
            "{tz} show:\n{show}"
        );
        let log = in_zone(&env, tz, &["log", HEX_ID]);
        assert!(log.contains(committed), "{tz} log:\n{log}");
    }
    let strict = in_zone(&env, "JST-9", &["list", "--date=iso-strict"]);
    assert!(strict.contains("2026-10-02T04:12:01+09:00"), "{strict}");
    let unix = in_zone(&env, "JST-9", &["show", HEX_ID, "--date", "unix"]);
    assert!(unix.contains("created  1790881921\n"), "{unix}");
    let relative = in_zone(&env, "UTC0", &["log", HEX_ID, "--date=relative"]);
    assert!(relative.contains(" ago "), "{relative}");
    // JSON keeps the stored value, whatever the zone.
    let json = in_zone(&env, "JST-9", &["list", "--json"]);
    assert!(
        json.contains(&format!("\"created_at\": \"{CREATED_AT}\"")),
        "{json}"
    );
}

/// `git-entire-checkpoint <args>` run on a pseudo-terminal (util-linux `script`) in the
/// repository, with a pager that marks each line it receives, and `extra` environment; what the
/// terminal showed.
fn on_terminal(env: &TestEnv, args: &str, extra: &[(&str, &str)]) -> String {
    on_terminal_in(env, env.repo(), &crate::env::checkpoint_bin(), args, extra)
}

/// [`on_terminal`] of the binary `program` in `dir`.
fn on_terminal_in(
    env: &TestEnv,
    dir: &std::path::Path,
    program: &std::path::Path,
    args: &str,
    extra: &[(&str, &str)],
) -> String {
    let command = format!("'{}' {args}", program.display());
    let mut cmd = env.bin_cmd(std::path::Path::new("script"));
    cmd.current_dir(dir)
        .args(["-q", "-e", "-c", &command, "/dev/null"])
        .env("ENTIRE_CHECKPOINTS_PRIMARY", Store::Refs.name())
        .env("GIT_PAGER", "sed 's/^/PAGED: /'")
        .write_stdin("");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    assert_success(&out, &["script", args]);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn read_commands_page_on_a_terminal_as_git_does() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    for args in [
        "list".to_owned(),
        format!("show {HEX_ID}"),
        format!("log {HEX_ID}"),
        format!("cat {HEX_ID} metadata.json"),
    ] {
        let shown = on_terminal(&env, &args, &[]);
        assert!(shown.contains("PAGED: "), "{args} is paged:\n{shown}");
        let plain = on_terminal(&env, &format!("--no-pager {args}"), &[]);
        assert!(
            !plain.contains("PAGED: ") && plain.contains(HEX_ID),
            "{args} --no-pager:\n{plain}"
        );
    }
    // git started a pager already (`git -p`, `pager.entire-checkpoint`).
    let inside = on_terminal(&env, "list", &[("GIT_PAGER_IN_USE", "true")]);
    assert!(
        !inside.contains("PAGED: ") && inside.contains(HEX_ID),
        "{inside}"
    );
    // `pager.entire-checkpoint=false` turns it off, a string is the pager.
    env.git(&["config", "pager.entire-checkpoint", "false"]);
    let off = on_terminal(&env, "list", &[]);
    assert!(!off.contains("PAGED: ") && off.contains(HEX_ID), "{off}");
    env.git(&["config", "pager.entire-checkpoint", "sed 's/^/OURS: /'"]);
    let ours = on_terminal(&env, "list", &[]);
    assert!(ours.contains("OURS: "), "{ours}");
    // Not a terminal: never paged, whatever the settings.
    env.git(&["config", "--unset", "pager.entire-checkpoint"]);
    let piped = env
        .cmd_as(Store::Refs)
        .env("GIT_PAGER", "sed 's/^/PAGED: /'")
        .arg("list")
        .output()
        .unwrap();
    assert_success(&piped, &["list"]);
    assert!(!String::from_utf8_lossy(&piped.stdout).contains("PAGED: "));
}

#[test]
fn fetching_many_shows_progress_on_a_terminal_only() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let remote = env.bare_remote("origin");
    env.ok(Store::Refs, &["push", "origin"]);
    let clone = env.root().join("clone");
    env.git(&["clone", "-q", path_str(&remote), path_str(&clone)]);
    let fetch = fetch_bin();
    let shown = on_terminal_in(&env, &clone, &fetch, "origin --all", &[]);
    assert!(shown.contains("entire: fetching checkpoints"), "{shown}");
    assert!(
        shown.contains("entire: fetched 1, already present 0"),
        "{shown}"
    );
    let quiet = on_terminal_in(&env, &clone, &fetch, "-q origin --all", &[]);
    assert!(
        !quiet.contains("fetching checkpoints"),
        "-q: no progress: {quiet}"
    );
    let piped = env
        .bin_cmd(&fetch)
        .current_dir(&clone)
        .args(["origin", "--all"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&piped.stderr);
    assert!(
        !stderr.contains("fetching checkpoints"),
        "not a terminal: {stderr}"
    );
}

#[test]
fn pushing_migrating_collecting_and_hydrating_show_progress_on_a_terminal_only() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    write_std(&env, Store::Branch, HEX_ID_2, "sess-1", TRANSCRIPT);
    let remote = env.bare_remote("origin");
    let migrated = on_terminal(&env, "migrate", &[]);
    assert!(
        migrated.contains("entire: migrating checkpoints"),
        "{migrated}"
    );
    assert!(migrated.contains("Migrated 1 checkpoint(s)"), "{migrated}");
    let pushed = on_terminal(&env, "push origin --all", &[]);
    assert!(
        pushed.contains("entire: pushing checkpoint refs"),
        "{pushed}"
    );
    assert!(
        pushed.contains("pushing 2 checkpoint ref(s) to origin... done"),
        "one summary line: {pushed}"
    );
    let collected = on_terminal(&env, "gc --keep-days 0 --dry-run", &[]);
    assert!(
        collected.contains("entire: examining checkpoint refs"),
        "{collected}"
    );
    let clone = env.root().join("clone");
    env.git(&["clone", "-q", path_str(&remote), path_str(&clone)]);
    let program = crate::env::checkpoint_bin();
    let hydrated = on_terminal_in(
        &env,
        &clone,
        &program,
        "--no-pager list --remote --hydrate",
        &[],
    );
    assert!(
        hydrated.contains("entire: reading remote checkpoints"),
        "{hydrated}"
    );
    for args in ["-q push origin --all", "-q gc --keep-days 0 --dry-run"] {
        let quiet = on_terminal(&env, args, &[]);
        assert!(!quiet.contains("entire: "), "{args}: no progress: {quiet}");
    }
    // Not a terminal: no bar.
    let piped = env.run(Store::Refs, &["gc", "--keep-days", "0", "--dry-run"]);
    assert_success(&piped, &["gc"]);
    assert!(!crate::env::stderr(&piped).contains("examining"));
}
