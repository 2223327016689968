//! `report <range>` and `show --html`: one self-contained page of the sessions behind a range,
//! built from a transcript full of markup that must stay text. Checked in the file (everything
//! escaped, the policy that forbids scripts and requests, the style allowed by its hash) and,
//! where Debian's `chromium` is installed, in a real headless browser: the page loads with no
//! console error and no refused style, and no payload runs (each would mark `<body>`); a
//! screenshot of it is kept under `target/report-screenshots/`.

use std::path::Path;
use std::process::Command as StdCommand;

use sha2::{Digest, Sha256};

use crate::blame::history;
use crate::env::{skip, Store, TestEnv};
use crate::fixtures::HEX_ID;

/// Each payload would set `data-pwned` on `<body>` if it ran.
const SCRIPT: &str = "<script>document.body.setAttribute('data-pwned','script')</script>";
const IMG: &str = "<img src=x onerror=\"document.body.setAttribute('data-pwned','img')\">";
const STYLE_BREAK: &str =
    "</style><script>document.body.setAttribute('data-pwned','style')</script>";

/// A Claude Code transcript whose prompt, tool call, written file name and content, and tool
/// output hold the payloads.
fn hostile_transcript() -> String {
    let lines = [
        serde_json::json!({"type": "user", "message": {"role": "user", "content": format!("please fix {SCRIPT}")}, "timestamp": "2026-01-01T09:00:00Z"}),
        serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "Write", "input": {"file_path": format!("/w/proj/{STYLE_BREAK}.txt"), "content": format!("a [link](javascript:alert(1)) {IMG}\n")}}]}, "timestamp": "2026-01-01T09:00:01Z"}),
        serde_json::json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": format!("wrote {IMG}")}]}, "timestamp": "2026-01-01T09:00:02Z"}),
        serde_json::json!({"type": "assistant", "message": {"role": "assistant", "content": [{"type": "text", "text": format!("Done: {SCRIPT} ``` fenced")}]}, "timestamp": "2026-01-01T09:00:03Z"}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A repository whose last commit links a checkpoint of the hostile transcript.
fn hostile_repo(env: &TestEnv) {
    env.write(Store::Refs, "sess-1")
        .id(HEX_ID)
        .transcript_bytes(hostile_transcript().as_bytes())
        .ok();
    env.git(&[
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        &format!("fix it\n\nEntire-Checkpoint: {HEX_ID}"),
    ]);
}

/// Checks the page as a file: no markup of the transcript's, every payload shown as text, the
/// policy, and the one style it allows by hash.
fn assert_page_is_inert(html: &str) {
    for raw in [
        SCRIPT,
        IMG,
        STYLE_BREAK,
        "<script",
        "<img",
        "onerror=\"",
        "javascript:alert(1))",
    ] {
        if raw == "javascript:alert(1))" {
            // As text it may stay: it is not a link.
            assert!(!html.contains("href=\"javascript:"), "a javascript: link");
            continue;
        }
        assert!(!html.contains(raw), "raw {raw:?} in the page");
    }
    assert!(html.contains("&lt;script&gt;document.body.setAttribute(&#39;data-pwned&#39;,&#39;script&#39;)&lt;/script&gt;"));
    assert!(html.contains("&lt;/style&gt;"));
    assert_eq!(html.matches("<style>").count(), 1);
    let style = html
        .split("<style>")
        .nth(1)
        .unwrap()
        .split("</style>")
        .next()
        .unwrap();
    let hash = data_encoding::BASE64.encode(&Sha256::digest(style.as_bytes()));
    assert!(
        html.contains(&format!(
            "content=\"default-src 'none'; style-src 'sha256-{hash}'; base-uri 'none'; form-action 'none'\""
        )),
        "the policy allows exactly the page's style"
    );
    assert!(
        !html.contains("http://") && !html.contains("https://"),
        "nothing to fetch"
    );
}

/// Loads `page` in headless Chromium: its DOM after load, and what the browser logged.
fn in_browser(page: &Path, screenshot_name: &str) -> Option<(String, String)> {
    let chromium = ["chromium", "chromium-browser"].into_iter().find(|c| {
        StdCommand::new(c)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    });
    let Some(chromium) = chromium else {
        skip("chromium is not installed (.ci/run installs Debian's package)");
        return None;
    };
    let url = format!("file://{}", page.display());
    let run = |extra: &[String]| {
        let out = StdCommand::new(chromium)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--no-first-run",
            ])
            .args(["--enable-logging=stderr", "--v=0"])
            .arg(format!(
                "--user-data-dir={}",
                page.with_extension("profile").display()
            ))
            .args(extra)
            .arg(&url)
            .output()
            .expect("run chromium");
        assert!(
            out.status.success(),
            "chromium: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        out
    };
    let dom = run(&["--dump-dom".to_owned()]);
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/report-screenshots");
    std::fs::create_dir_all(&shots).unwrap();
    let shot = shots.join(format!("{screenshot_name}.png"));
    run(&[
        format!("--screenshot={}", shot.display()),
        "--window-size=1200,900".to_owned(),
    ]);
    assert!(shot.exists());
    Some((
        String::from_utf8_lossy(&dom.stdout).into_owned(),
        String::from_utf8_lossy(&dom.stderr).into_owned(),
    ))
}

fn assert_loads_clean(page: &Path, name: &str) {
    assert_loads_clean_of(page, name, "please fix");
}

/// Loads `page` as [`in_browser`] does: it rendered (`shown` is in its DOM), nothing ran and
/// nothing was logged.
fn assert_loads_clean_of(page: &Path, name: &str, shown: &str) {
    let Some((dom, log)) = in_browser(page, name) else {
        return;
    };
    // The payloads are on the page as text; run, any of them would give `<body>` an attribute.
    assert!(dom.contains("<body>"), "a payload ran: {dom}");
    assert!(dom.contains(shown), "the page rendered: {dom}");
    for bad in ["Refused to", "Uncaught", "Content Security Policy", "ERR_"] {
        assert!(!log.contains(bad), "the browser logged {bad:?}: {log}");
    }
}

#[test]
fn a_range_report_shows_the_sessions_as_text_and_runs_nothing() {
    let env = TestEnv::new();
    hostile_repo(&env);
    let page = env.root().join("report.html");
    let out = env.run(
        Store::Refs,
        &["report", "HEAD~1..HEAD", "-o", page.to_str().unwrap()],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "the page went to the file");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_page_is_inert(&html);
    assert!(
        html.contains("fix it") && html.contains(HEX_ID),
        "the commit and its checkpoint"
    );
    assert!(
        html.contains("<span class=\"add\">+a [link]"),
        "what the agent wrote, as a diff"
    );
    assert_loads_clean(&page, "range-report");
}

#[test]
fn show_html_is_the_same_page_for_one_checkpoint() {
    let env = TestEnv::new();
    hostile_repo(&env);
    let html = env.ok(Store::Refs, &["show", "HEAD", "--html"]);
    assert_page_is_inert(&html);
    let page = env.root().join("show.html");
    std::fs::write(&page, &html).unwrap();
    assert_loads_clean(&page, "show-html");
}

#[test]
fn the_markdown_report_fences_what_the_transcript_holds() {
    let env = TestEnv::new();
    hostile_repo(&env);
    let md = env.ok(Store::Refs, &["report", "HEAD~1..HEAD", "--markdown"]);
    assert!(md.starts_with("# Sessions behind 1 of 1 commits"), "{md}");
    // Every transcript text is in a fence longer than any backtick run it holds.
    assert!(
        md.contains(&format!("````\nDone: {SCRIPT} ``` fenced\n````")),
        "{md}"
    );
    let outside: String = md.split("```").step_by(2).collect();
    assert!(!outside.contains("<script"), "markup outside a fence: {md}");
}

#[test]
fn a_bad_range_is_refused_and_writes_nothing() {
    let env = TestEnv::new();
    hostile_repo(&env);
    let page = env.root().join("never.html");
    let out = env.run(
        Store::Refs,
        &["report", "no-such-rev..HEAD", "-o", page.to_str().unwrap()],
    );
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!page.exists());
}

#[test]
fn the_report_charts_the_ai_share_of_each_commit_and_file() {
    let env = TestEnv::new();
    // add hello: 3 of its 6 lines by Claude Code; a note: 1 line by a person; add bye: its 1
    // line by Codex (stats' known answers).
    history(&env, Store::Refs);
    let page = env.root().join("shares.html");
    env.ok(
        Store::Refs,
        &["report", "main~3..main", "-o", page.to_str().unwrap()],
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(
        html.contains("4 of the 8 lines the range adds were written by an agent (50%)"),
        "{html}"
    );
    let charts: Vec<&str> = html
        .split("<svg class=\"chart\"")
        .skip(1)
        .map(|c| c.split("</svg>").next().unwrap())
        .collect();
    assert_eq!(charts.len(), 2, "one per commit, one per file: {html}");
    let bar = |chart: &str, label: &str| {
        let row = chart
            .split("<g>")
            .find(|r| r.contains(label))
            .unwrap_or_else(|| panic!("no row {label}: {chart}"));
        let width = |fill: &str| -> u32 {
            let rect = row.split("<rect").find(|r| r.contains(fill)).unwrap();
            let w = rect.split("width=\"").nth(1).unwrap();
            w[..w.find('"').unwrap()].parse().unwrap()
        };
        (
            width("#d0d7de"),
            width("#8250df"),
            row.split("<text").last().unwrap().to_owned(),
        )
    };
    // Bars as long as the lines added (6 is the most), the agent's part of each filled.
    let (whole, agent, share) = bar(charts[0], "add hello");
    assert_eq!((whole, agent), (300, 150));
    assert!(share.contains(">50% of 6<"), "{share}");
    let (whole, agent, share) = bar(charts[0], "a note");
    assert_eq!((whole, agent), (50, 0));
    assert!(share.contains(">0% of 1<"), "{share}");
    let (_, _, share) = bar(charts[0], "add bye");
    assert!(share.contains(">100% of 1<"), "{share}");
    let file = crate::blame::FILE;
    let (whole, agent, share) = bar(charts[1], file);
    assert_eq!((whole, agent), (300, 150));
    assert!(share.contains(">50% of 8<"), "{share}");
    assert_loads_clean_of(&page, "ai-share", "add hello");

    let md = env.ok(Store::Refs, &["report", "main~3..main", "--markdown"]);
    assert!(md.contains("add hello | 6 | 3 | 50% |"), "{md}");
    assert!(md.contains(&format!("| {file} | 8 | 4 | 50% |")), "{md}");
}
