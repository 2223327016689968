//! How human output looks on a terminal: one date format in the local time zone (`--date`), and
//! the pager (docs/cli.md, "Human output").

use crate::env::{
    assert_success, fetch_bin, on_terminal, on_terminal_in, path_str, text, Store, TestEnv,
};
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

/// The color git's yellow commit hashes have, as our IDs have it.
const YELLOW: &str = "\x1b[33m";

#[test]
fn color_follows_gits_rules() {
    let env = TestEnv::new();
    write_std(&env, Store::Refs, HEX_ID, "sess-1", TRANSCRIPT);
    let id = format!("{YELLOW}{HEX_ID}");
    // On a terminal (`TERM=xterm`, through the pager), IDs are colored like git's commit hashes, and the
    // headings of show are bold.
    let listed = on_terminal(&env, "list", &[]);
    assert!(listed.contains(&id), "{listed:?}");
    let shown = on_terminal(&env, &format!("show {HEX_ID}"), &[]);
    assert!(shown.contains("\x1b[1mCheckpoint"), "{shown:?}");
    assert!(
        shown.contains(&id) && shown.contains("\x1b[1mSession 0"),
        "{shown:?}"
    );
    let logged = on_terminal(&env, &format!("--no-pager log {HEX_ID}"), &[]);
    assert!(logged.contains(YELLOW), "{logged:?}");
    // Each rule that turns it off: the flag, the command's key, color.ui, color.pager for the
    // pager, NO_COLOR, a dumb or absent terminal; JSON never has color.
    let plain = |args: &str, extra: &[(&str, &str)], why: &str| {
        let shown = on_terminal(&env, args, extra);
        assert!(!shown.contains('\x1b'), "{why}: {shown:?}");
        assert!(shown.contains(HEX_ID), "{why}: {shown:?}");
    };
    plain("list --color=never", &[], "--color=never");
    plain("list", &[("TERM", "dumb")], "TERM=dumb");
    plain("list", &[("NO_COLOR", "1")], "NO_COLOR");
    plain("list --json --color=always", &[], "--json");
    env.git(&["config", "color.pager", "false"]);
    plain("list", &[], "color.pager=false, paged");
    let unpaged = on_terminal(&env, "--no-pager list", &[]);
    assert!(
        unpaged.contains(&id),
        "color.pager is only for the pager: {unpaged:?}"
    );
    env.git(&["config", "--unset", "color.pager"]);
    env.git(&["config", "color.ui", "never"]);
    plain("list", &[], "color.ui=never");
    let forced = on_terminal(&env, "list --color", &[]);
    assert!(
        forced.contains(&id),
        "--color wins over color.ui: {forced:?}"
    );
    env.git(&["config", "color.entire-checkpoint", "auto"]);
    let own_key = on_terminal(&env, "list", &[]);
    assert!(own_key.contains(&id), "the command's key wins: {own_key:?}");
    env.git(&["config", "--unset", "color.ui"]);
    // NO_COLOR gives way to an explicit choice.
    let asked = on_terminal(&env, "list --color=always", &[("NO_COLOR", "1")]);
    assert!(asked.contains(&id), "{asked:?}");
    // Into a pipe: never, unless asked (by the flag or by `always` in the config).
    let piped = |args: &[&str]| text(&env.cmd_as(Store::Refs).args(args).output().unwrap().stdout);
    assert!(!piped(&["list"]).contains('\x1b'));
    assert!(piped(&["list", "--color=always"]).contains(&id));
    env.git(&["config", "color.entire-checkpoint", "always"]);
    assert!(piped(&["list"]).contains(&id));
    // A slot's color in git's syntax.
    env.git(&["config", "color.entire-checkpoint.id", "bold red"]);
    let red = piped(&["list"]);
    assert!(
        red.contains("\x1b[31m") && red.contains("\x1b[1m") && !red.contains(YELLOW),
        "{red:?}"
    );
}

#[test]
fn checkpoint_text_is_escaped_in_human_output() {
    let env = TestEnv::new();
    let transcript = env.input(b"{\"t\":\"\x1b]0;owned\x07\"}\n");
    let hostile = "add the \x1b]0;owned\x07parser\x1b[2J \u{202e}txt.exe";
    env.ok(
        Store::Refs,
        &[
            "write",
            "--session",
            "s1",
            "--id",
            HEX_ID,
            "--transcript",
            path_str(&transcript),
            "--prompt",
            hostile,
            "--agent",
            "Agent\x1b[31m",
            "--model",
            "m\u{9b}2J",
            "--branch",
            "b\rfake",
            "--files-touched",
            "x\x1b[8m.go",
        ],
    );
    let want = "add the \\e]0;owned\\u{7}parser\\e[2J \\u{202e}txt.exe";
    for args in [vec!["list"], vec!["show", HEX_ID]] {
        let shown = text(&env.cmd_as(Store::Refs).args(&args).output().unwrap().stdout);
        assert!(
            !shown.contains('\x1b') && !shown.contains('\u{202e}'),
            "{args:?}: {shown:?}"
        );
        assert!(shown.contains(want), "{args:?}: {shown:?}");
        assert!(shown.contains("Agent\\e[31m"), "{args:?}: {shown:?}");
    }
    let shown = text(
        &env.cmd_as(Store::Refs)
            .args(["show", HEX_ID])
            .output()
            .unwrap()
            .stdout,
    );
    for field in ["m\\u{9b}2J", "b\\rfake", "x\\e[8m.go"] {
        assert!(shown.contains(field), "{field}: {shown:?}");
    }
    // On a terminal, through the pager too; JSON escapes by its own rules.
    let dumb = [("TERM", "dumb")];
    let on_tty = on_terminal(&env, &format!("show {HEX_ID}"), &dumb);
    assert!(
        on_tty.contains(want) && !on_tty.contains('\x1b'),
        "{on_tty:?}"
    );
    let json = text(
        &env.cmd_as(Store::Refs)
            .args(["list", "--json"])
            .output()
            .unwrap()
            .stdout,
    );
    assert!(json.contains("\\u001b]0;owned\\u0007parser"), "{json}");
    // The stored bytes: as they are into a pipe, escaped on a terminal unless --raw.
    let piped = env
        .cmd_as(Store::Refs)
        .args(["show", HEX_ID, "--transcript"])
        .output()
        .unwrap();
    assert!(piped.stdout.contains(&0x1b), "a pipe gets the bytes");
    for args in [
        format!("show {HEX_ID} --transcript"),
        format!("cat {HEX_ID} 0/full.jsonl"),
    ] {
        let escaped = on_terminal(&env, &args, &dumb);
        assert!(
            escaped.contains("\\e]0;owned\\u{7}") && !escaped.contains('\x1b'),
            "{args}: {escaped:?}"
        );
        let raw = on_terminal(&env, &format!("{args} --raw"), &dumb);
        assert!(raw.contains("\x1b]0;owned\x07"), "{args} --raw: {raw:?}");
    }
}

#[test]
fn list_says_what_each_checkpoint_was_about() {
    let env = TestEnv::new();
    let transcript = env.input(TRANSCRIPT);
    let long = "Refactor the parser so that every token carries its span, then \
                update each caller and the error messages that print positions";
    let write = |id: &str, prompts: &[&str]| {
        let mut args = vec!["write", "--session", "s1", "--id", id];
        args.extend(["--transcript", path_str(&transcript)]);
        for p in prompts {
            args.extend(["--prompt", p]);
        }
        env.ok(Store::Refs, &args);
    };
    write(
        HEX_ID,
        &[&format!("\n  {long}\nwith a second line"), "a later prompt"],
    );
    write(HEX_ID_2, &[]);
    let listed = text(&env.cmd_as(Store::Refs).arg("list").output().unwrap().stdout);
    let line = listed.lines().find(|l| l.starts_with(HEX_ID)).unwrap();
    assert!(
        line.ends_with(&format!("  {long}")),
        "never cut into a pipe: {line:?}"
    );
    let bare = listed.lines().find(|l| l.starts_with(HEX_ID_2)).unwrap();
    assert!(bare.ends_with("  -"), "no prompt, no subject: {bare:?}");
    let json = env.ok_json(Store::Refs, &["list", "--json"]);
    let entry = |id: &str| {
        json.as_array()
            .unwrap()
            .iter()
            .find(|e| e["checkpoint_id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(entry(HEX_ID)["subject"], long);
    assert_eq!(entry(HEX_ID_2)["subject"], "");
    // On a terminal, cut to its width like a line of git log --oneline.
    let shown = on_terminal(
        &env,
        "--no-pager list",
        &[("COLUMNS", "120"), ("TERM", "dumb")],
    );
    let line = shown.lines().find(|l| l.starts_with(HEX_ID)).unwrap();
    assert!(line.trim_end().ends_with('…'), "{line:?}");
    assert!(line.trim_end().chars().count() <= 120, "{line:?}");
    // The same from the summary index, the second time.
    let again = text(&env.cmd_as(Store::Refs).arg("list").output().unwrap().stdout);
    assert_eq!(again, listed);
    // And for staged sessions.
    env.ok(
        Store::Refs,
        &[
            "session",
            "record",
            "--session",
            "s9",
            "--prompt",
            "stage the lexer\nmore",
        ],
    );
    let staged = env.ok(Store::Refs, &["session", "list"]);
    assert!(
        staged.trim_end().ends_with("  stage the lexer"),
        "{staged:?}"
    );
}
