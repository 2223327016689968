//! `report` and `show --html`: the sessions behind a range of commits (or one checkpoint) as ONE
//! self-contained file a reviewer can open, attach or paste (docs/review.md): HTML with its
//! style inline and no script at all, or Markdown for a terminal or a pull-request comment.
//!
//! Transcript text is hostile input (a prompt or a tool's output may hold `<script>`,
//! `</style>` or `<img onerror>`): every text goes through [`esc`], the page's
//! Content-Security-Policy forbids every script, request and frame and allows only the page's own
//! style (by its hash), so even a mistake in escaping could not run anything. Long texts are
//! folded (`<details>`), each is cut after [`TEXT_LINES`] lines or [`TEXT_BYTES`] bytes with
//! the count of what is left out, and a session shows at most [`SESSION_FOLDED_BYTES`] of
//! folded text, so a 13 MB session makes a page of bounded size; the whole transcript stays one
//! command away (`show <id> --transcript --raw`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufReader, Write};

use sha2::{Digest, Sha256};

use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::ops::range::{self, Linked, RangeArgs, RangeCommit};
use entire_checkpoints::ops::read::conversation::{self, Event, Tally, Turn};
use entire_checkpoints::ops::read::{self as ops_read, Checkpoint};
use entire_checkpoints::ops::stats::{self, GroupBy, Lines, StatsError, StatsReport};
use entire_checkpoints::ops::{Remote, Topology};

use super::stats::{cut_chars, percent};
use crate::common::cli::{info, warn};
use crate::common::error::Result;

/// Lines of one text (a tool's output, a reply, an entry of no known shape) shown before the
/// rest is counted instead.
const TEXT_LINES: usize = 100;
/// Bytes of one text shown before the rest is counted instead.
const TEXT_BYTES: usize = 16 << 10;
/// Bytes of folded texts (tools' outputs, thinking, entries of no known shape) one session
/// shows: past them, a folded text shows only its label and line count. Prompts, replies and
/// what the agent wrote are always shown (each cut as any text is).
const SESSION_FOLDED_BYTES: usize = 256 << 10;

/// Rows of a chart; the rest are counted.
const CHART_ROWS: usize = 40;
/// Characters of a chart's label (a commit's subject, a file's path) shown.
const LABEL_CHARS: usize = 40;

/// The page's whole style: its hash is what the Content-Security-Policy allows.
const STYLE: &str = "body{font:15px/1.45 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem 1.5rem;color:#1f2328;background:#fff}\
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem;margin-top:2.5rem}h3{font-size:1.05rem;margin-top:1.8rem}\
pre{white-space:pre-wrap;word-break:break-word;margin:.3rem 0;font:13px/1.4 ui-monospace,monospace}\
table{border-collapse:collapse;max-width:100%}td,th{word-break:break-word;border:1px solid #d0d7de;padding:.2rem .5rem;text-align:left;vertical-align:top}\
.prompt{background:#ddf4ff;border-left:4px solid #0969da;padding:.4rem .7rem;margin:1.2rem 0 .5rem}\
.reply{padding:.2rem .7rem}.tool,.output,.thinking,.raw{margin:.2rem .7rem}\
summary{cursor:pointer;color:#57606a}.tool>summary{color:#1f2328}\
.subagent{border-left:3px solid #8250df;padding-left:.7rem;margin:.4rem 0}\
.chart{display:block;max-width:100%;margin:.8rem 0}\
.add{background:#dafbe1}.del{background:#ffebe9}.more,.meta{color:#57606a;font-size:.9em}\
code{font:13px ui-monospace,monospace}";

/// `report`: the commits of the range that link checkpoints, each with its sessions, to
/// `output` (stdout when `None`), as HTML or with `markdown` as Markdown.
pub fn report(
    repo: &Repo,
    topo: &Topology<'_>,
    range: &RangeArgs,
    fetch_from: Option<Remote>,
    (markdown, output): (bool, Option<&std::path::Path>),
    quiet: bool,
) -> Result<()> {
    let log = range::start(std::path::Path::new("."), range)?;
    // The shares first: its one batch fetches what the range links and no store here holds.
    let cwd = std::env::current_dir()?;
    let shares = stats::stats(
        repo,
        topo,
        &cwd,
        range,
        Some(GroupBy::File),
        fetch_from.as_ref(),
        |_| {},
    );
    let mut commits = Vec::new();
    let summary = range::list(
        repo,
        topo,
        log,
        fetch_from,
        move |m| warn(quiet, m),
        |c| commits.push(c),
    )?;
    let mut sections = Vec::new();
    for c in &commits {
        let mut cps = Vec::new();
        for linked in &c.checkpoints {
            let id = match linked {
                Linked::Listed(info) => info.id.to_string(),
                Linked::NotFound(id) => id.to_string(),
            };
            let found = ops_read::checkpoints(repo, topo, &id, |m| warn(quiet, m));
            cps.push((id, found.ok().and_then(|mut v| v.pop())));
        }
        sections.push((c, cps));
    }
    let title = format!(
        "Sessions behind {} of {} commits",
        commits.len(),
        summary.scanned
    );
    let mut page = Page::new(markdown, &title);
    page.range_table(&sections);
    page.shares(shares);
    for (commit, cps) in &sections {
        for (id, cp) in cps {
            page.heading(2, &format!("{} {}", short(&commit.sha), commit.subject), id);
            match cp {
                Some(cp) => page.checkpoint(repo, topo, cp)?,
                None => page.note(&format!(
                    "checkpoint {id} is in no store here or on the remote"
                )),
            }
        }
    }
    write_out(&page.finish(), output)?;
    info(
        quiet,
        format!(
            "{} commit(s) scanned, {} with checkpoints",
            summary.scanned,
            commits.len()
        ),
    );
    if let Some(e) = summary.fetch_failure {
        return Err(e.into());
    }
    Ok(())
}

/// `show --html`: the checkpoints the target named, as one HTML page on stdout.
pub fn show(repo: &Repo, topo: &Topology<'_>, checkpoints: &[Checkpoint]) -> Result<()> {
    let title = match checkpoints {
        [one] => format!("Checkpoint {}", one.id),
        _ => format!("{} checkpoints", checkpoints.len()),
    };
    let mut page = Page::new(false, &title);
    for cp in checkpoints {
        let id = cp.id.to_string();
        page.heading(2, &format!("Checkpoint {id}"), &id);
        page.checkpoint(repo, topo, cp)?;
    }
    write_out(&page.finish(), None)
}

fn write_out(text: &str, output: Option<&std::path::Path>) -> Result<()> {
    match output {
        Some(path) => std::fs::write(path, text)
            .map_err(|e| format!("cannot write {}: {e}", path.display()).into()),
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()?;
            Ok(())
        }
    }
}

fn short(sha: &str) -> &str {
    &sha[..sha.len().min(12)]
}

/// `text` as HTML text or attribute value: every character that HTML gives a meaning escaped,
/// and the control characters a page cannot show replaced.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

/// A Markdown code fence longer than any run of backticks in `text`, so that nothing in it can
/// close the block.
fn fence(text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    "`".repeat(longest.max(2) + 1)
}

/// `text` cut after [`TEXT_LINES`] lines or [`TEXT_BYTES`] bytes, and how many lines were cut.
fn cut(text: &str) -> (&str, usize) {
    let mut end = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if n == TEXT_LINES || end + line.len() > TEXT_BYTES {
            let rest = text[end..].lines().count();
            return (&text[..end], rest);
        }
        end += line.len();
    }
    (text, 0)
}

/// A commit of the range and its checkpoints (each ID, and the checkpoint when it was found).
type Section<'c> = (&'c RangeCommit, Vec<(String, Option<Checkpoint>)>);

/// The page being written, HTML or Markdown.
struct Page {
    markdown: bool,
    out: String,
    /// What the current session may still show of folded texts.
    folded_left: usize,
    /// The current session's anchor, and how many of its prompts were shown: each prompt is
    /// `<anchor>-p<n>`, which each tool call that writes after it links to.
    session: (String, usize),
    /// The subagents' tasks of the current checkpoint not shown yet, by the ID of the tool call
    /// that started each: shown nested in that call, each once.
    tasks: BTreeMap<String, ops_read::Task>,
}

impl Page {
    fn new(markdown: bool, title: &str) -> Page {
        let mut out = String::new();
        if markdown {
            let _ = writeln!(out, "# {}\n", title);
        } else {
            let hash = data_encoding::BASE64.encode(&Sha256::digest(STYLE));
            let _ = write!(
                out,
                "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
                 <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-{hash}'; base-uri 'none'; form-action 'none'\">\n\
                 <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
                 <meta name=\"generator\" content=\"git entire-checkpoint\">\n\
                 <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
                esc(title),
                esc(title)
            );
        }
        Page {
            markdown,
            out,
            folded_left: 0,
            session: (String::new(), 0),
            tasks: BTreeMap::new(),
        }
    }

    fn finish(mut self) -> String {
        if !self.markdown {
            self.out.push_str("</body>\n</html>\n");
        }
        self.out
    }

    fn note(&mut self, text: &str) {
        if self.markdown {
            let _ = writeln!(self.out, "_{}_\n", text.replace('_', "\\_"));
        } else {
            let _ = writeln!(self.out, "<p class=\"meta\">{}</p>", esc(text));
        }
    }

    /// A heading; `anchor` (a checkpoint ID, checked) is the HTML section's `id`.
    fn heading(&mut self, level: usize, text: &str, anchor: &str) {
        if self.markdown {
            let _ = writeln!(self.out, "{} {}\n", "#".repeat(level), md_inline(text));
        } else {
            let _ = writeln!(
                self.out,
                "<h{level} id=\"cp-{}\">{}</h{level}>",
                esc(anchor),
                esc(text)
            );
        }
    }

    /// The commits of the range that link checkpoints: SHA, subject, checkpoints.
    fn range_table(&mut self, sections: &[Section<'_>]) {
        if self.markdown {
            self.out
                .push_str("| commit | subject | checkpoints |\n|---|---|---|\n");
            for (c, cps) in sections {
                let ids: Vec<_> = cps.iter().map(|(id, _)| format!("`{id}`")).collect();
                let _ = writeln!(
                    self.out,
                    "| `{}` | {} | {} |",
                    short(&c.sha),
                    md_inline(&c.subject).replace('|', "\\|"),
                    ids.join(" ")
                );
            }
            self.out.push('\n');
            return;
        }
        self.out
            .push_str("<table>\n<tr><th>commit</th><th>subject</th><th>checkpoints</th></tr>\n");
        for (c, cps) in sections {
            let ids: Vec<_> = cps
                .iter()
                .map(|(id, _)| format!("<a href=\"#cp-{0}\"><code>{0}</code></a>", esc(id)))
                .collect();
            let _ = writeln!(
                self.out,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(short(&c.sha)),
                esc(&c.subject),
                ids.join(" ")
            );
        }
        self.out.push_str("</table>\n");
    }

    /// The AI share of the range (`stats`' attribution) per commit and per file: bar charts
    /// (SVG) or tables; what kept it from being measured, or made it partial, said.
    fn shares(&mut self, shares: Result<StatsReport, StatsError>) {
        self.heading(2, "AI share", "ai-share");
        let s = match shares {
            Ok(s) => s,
            Err(e) => {
                self.note(&format!(
                    "not measured: {}",
                    entire_checkpoints::base::error::error_chain(&e)
                ));
                return;
            }
        };
        let t = &s.total;
        self.note(&format!(
            "{} of the {} lines the range adds were written by an agent ({}), by the sessions' own file-writing tool calls, as blame and stats attribute them",
            t.agent_written,
            t.added,
            percent(t.ai_share)
        ));
        for w in &s.warnings {
            self.note(&format!("partial: {w}"));
        }
        let commits: Vec<(String, Lines)> = s
            .commits
            .iter()
            .filter(|c| c.lines.added > 0)
            .map(|c| (format!("{} {}", short(&c.commit), c.subject), c.lines))
            .collect();
        let files: Vec<(String, Lines)> = s
            .groups
            .unwrap_or_default()
            .into_iter()
            .filter(|g| g.lines.added > 0)
            .map(|g| (g.key, g.lines))
            .collect();
        self.chart("per commit", &commits);
        self.chart("per file", &files);
    }

    /// One chart of `rows` (at most [`CHART_ROWS`], the rest counted): per row its label, a bar
    /// of its added lines as long as its share of the most any row adds, the agent's part of
    /// it filled, and the share.
    fn chart(&mut self, title: &str, rows: &[(String, Lines)]) {
        if rows.is_empty() {
            return;
        }
        let shown = &rows[..rows.len().min(CHART_ROWS)];
        if self.markdown {
            let _ = writeln!(
                self.out,
                "**{title}**\n\n| | added | by agents | share |\n|---|---:|---:|---:|"
            );
            for (label, l) in shown {
                let _ = writeln!(
                    self.out,
                    "| {} | {} | {} | {} |",
                    md_inline(&cut_chars(label, LABEL_CHARS)).replace('|', "\\|"),
                    l.added,
                    l.agent_written,
                    percent(l.ai_share)
                );
            }
            self.out.push('\n');
        } else {
            const ROW: usize = 22;
            const LABEL: usize = 310;
            const BAR: usize = 300;
            let most = shown.iter().map(|(_, l)| l.added).max().unwrap_or(1).max(1);
            let height = ROW * (shown.len() + 1);
            let _ = writeln!(
                self.out,
                "<svg class=\"chart\" role=\"img\" width=\"{w}\" height=\"{height}\" viewBox=\"0 0 {w} {height}\" font-family=\"ui-monospace,monospace\" font-size=\"12\"><title>AI share {title}</title>\n\
                 <text x=\"0\" y=\"15\" font-weight=\"bold\">{title}</text>\
                 <rect x=\"{LABEL}\" y=\"5\" width=\"12\" height=\"12\" fill=\"#8250df\"/><text x=\"{}\" y=\"15\">by agents</text>\
                 <rect x=\"{}\" y=\"5\" width=\"12\" height=\"12\" fill=\"#d0d7de\"/><text x=\"{}\" y=\"15\">other added lines</text>",
                LABEL + 16,
                LABEL + 100,
                LABEL + 116,
                w = LABEL + BAR + 90,
            );
            for (i, (label, l)) in shown.iter().enumerate() {
                let y = ROW * (i + 1);
                let whole = (l.added * BAR).div_ceil(most);
                let agent = (l.agent_written * BAR).div_ceil(most);
                let _ = writeln!(
                    self.out,
                    "<g><title>{}: {} of {} added lines by agents</title>\
                     <text x=\"0\" y=\"{}\">{}</text>\
                     <rect x=\"{LABEL}\" y=\"{}\" width=\"{whole}\" height=\"14\" fill=\"#d0d7de\"/>\
                     <rect x=\"{LABEL}\" y=\"{}\" width=\"{agent}\" height=\"14\" fill=\"#8250df\"/>\
                     <text x=\"{}\" y=\"{}\">{} of {}</text></g>",
                    esc(label),
                    l.agent_written,
                    l.added,
                    y + 15,
                    esc(&cut_chars(label, LABEL_CHARS)),
                    y + 4,
                    y + 4,
                    LABEL + BAR + 6,
                    y + 15,
                    percent(l.ai_share),
                    l.added,
                );
            }
            self.out.push_str("</svg>\n");
        }
        if rows.len() > shown.len() {
            self.note(&format!(
                "{} more (git entire-checkpoint stats --by file lists every one)",
                rows.len() - shown.len()
            ));
        }
    }

    /// One checkpoint: the commits that link it, files touched, and each session's
    /// conversation.
    fn checkpoint(&mut self, repo: &Repo, topo: &Topology<'_>, cp: &Checkpoint) -> Result<()> {
        let commits = ops_read::code_commits(repo, None, cp);
        let mut facts = vec![(
            "commits",
            commits
                .iter()
                .map(|c| short(c))
                .collect::<Vec<_>>()
                .join(", "),
        )];
        if let Some(t) = &cp.summary.token_usage {
            facts.push((
                "tokens",
                format!("{} in, {} out", t.input_tokens, t.output_tokens),
            ));
        }
        facts.push(("files touched", cp.summary.files_touched.join(", ")));
        facts.retain(|(_, v)| !v.is_empty());
        self.facts(&facts);
        for (slot, meta) in cp.sessions.iter().enumerate() {
            let mut about = vec![meta.agent.as_str(), meta.model.as_str()];
            about.retain(|s| !s.is_empty());
            let title = match about.is_empty() {
                true => format!("Session {slot}"),
                false => format!("Session {slot}: {}", about.join(", ")),
            };
            let anchor = format!("{}-{slot}", cp.id);
            self.heading(3, &title, &anchor);
            self.folded_left = SESSION_FOLDED_BYTES;
            self.session = (anchor, 0);
            let read = ops_read::transcript(topo, cp, Some(slot), |stream| {
                let mut events = Vec::new();
                let tally = conversation::read(BufReader::new(stream), |e| {
                    events.push(e);
                    Ok(())
                });
                tally.map(|t| (events, t))
            });
            match read {
                Ok(Ok((events, tally))) => {
                    let calls = events.iter().filter_map(|e| match &e.turn {
                        Turn::ToolCall(call) if !call.id.is_empty() => Some(call.id.as_str()),
                        _ => None,
                    });
                    self.tasks = match ops_read::tasks(topo, cp, calls) {
                        Ok(tasks) => tasks,
                        Err(e) => {
                            self.note(&format!(
                                "its subagents could not be read: {}",
                                entire_checkpoints::base::error::error_chain(&e)
                            ));
                            BTreeMap::new()
                        }
                    };
                    for e in &events {
                        self.event(e);
                    }
                    self.tally(&tally);
                }
                Ok(Err(e)) => self.note(&format!("the transcript could not be read: {e}")),
                Err(e) => self.note(&entire_checkpoints::base::error::error_chain(&e)),
            }
        }
        Ok(())
    }

    fn facts(&mut self, facts: &[(&str, String)]) {
        if self.markdown {
            for (k, v) in facts {
                let _ = writeln!(self.out, "- {k}: {}", md_inline(v));
            }
            self.out.push('\n');
            return;
        }
        self.out.push_str("<table class=\"meta\">\n");
        for (k, v) in facts {
            let _ = writeln!(self.out, "<tr><th>{k}</th><td>{}</td></tr>", esc(v));
        }
        self.out.push_str("</table>\n");
    }

    fn tally(&mut self, t: &Tally) {
        self.note(super::conversation::footer(t).trim());
    }

    fn event(&mut self, e: &Event) {
        match &e.turn {
            Turn::Prompt(text) => {
                self.session.1 += 1;
                self.text("prompt", None, text)
            }
            Turn::Reply(text) => self.text("reply", None, text),
            Turn::Thinking(text) => self.text("thinking", Some("thinking"), text),
            Turn::ToolOutput(text) => {
                let label = format!("output, {} lines", text.lines().count());
                self.text("output", Some(&label), text)
            }
            Turn::Raw(text) => self.text("raw", Some("an entry of no known shape"), text),
            Turn::ToolCall(call) => {
                let files: Vec<&str> = call.wrote.iter().map(|w| w.file.as_str()).collect();
                let about = if files.is_empty() {
                    call.subject.clone()
                } else {
                    files.join(", ")
                };
                let label = format!("{} {}", call.tool, about);
                let mut diff = String::new();
                for w in &call.wrote {
                    let _ = writeln!(diff, "--- {}", w.file);
                    for l in &w.replaced {
                        let _ = writeln!(diff, "-{l}");
                    }
                    for l in &w.lines {
                        let _ = writeln!(diff, "+{l}");
                    }
                }
                if self.markdown {
                    let _ = writeln!(self.out, "- **{}**", md_inline(&label));
                    if !diff.is_empty() {
                        let (shown, more) = cut(&diff);
                        self.code_block("diff", shown, more);
                    }
                    self.subagent(&call.id);
                    return;
                }
                let task = self.tasks.contains_key(&call.id);
                let open = if diff.is_empty() && !task {
                    ""
                } else {
                    " open"
                };
                let _ = write!(
                    self.out,
                    "<details class=\"tool\"{open}><summary>{}</summary>",
                    esc(label.trim())
                );
                let (anchor, prompt) = &self.session;
                if !diff.is_empty() && *prompt > 0 {
                    let _ = write!(
                        self.out,
                        "<p class=\"more\">written for <a href=\"#cp-{}-p{prompt}\">prompt {prompt}</a></p>",
                        esc(anchor)
                    );
                }
                let (shown, more) = cut(&diff);
                self.out.push_str("<pre>");
                for line in shown.lines() {
                    let class = match line.as_bytes().first() {
                        Some(b'+') => "add",
                        Some(b'-') if !line.starts_with("--- ") => "del",
                        _ => "",
                    };
                    let _ = writeln!(self.out, "<span class=\"{class}\">{}</span>", esc(line));
                }
                self.out.push_str("</pre>");
                self.more(more);
                self.subagent(&call.id);
                self.out.push_str("</details>\n");
            }
        }
    }

    /// The subagent the tool call `call` started, when the checkpoint keeps its task: its
    /// conversation, nested (each task shown once, so nesting ends).
    fn subagent(&mut self, call: &str) {
        let Some(task) = self.tasks.remove(call) else {
            return;
        };
        let label = match &task.subagent_type {
            Some(kind) => format!("subagent {kind}"),
            None => "subagent".to_owned(),
        };
        let events = task.transcript.and_then(|bytes| {
            let mut events = Vec::new();
            conversation::read(bytes.as_slice(), |e| {
                events.push(e);
                Ok(())
            })
            .map(|_| events)
            .map_err(|e| format!("its transcript could not be read: {e}"))
        });
        if self.markdown {
            let _ = writeln!(
                self.out,
                "<details open><summary>{}</summary>\n",
                esc(&label)
            );
        } else {
            let _ = writeln!(
                self.out,
                "<div class=\"subagent\"><p class=\"meta\">{}</p>",
                esc(&label)
            );
        }
        match events {
            Ok(events) => {
                for e in &events {
                    self.event(e);
                }
            }
            Err(why) => self.note(&why),
        }
        self.out.push_str(match self.markdown {
            true => "</details>\n\n",
            false => "</div>\n",
        });
    }

    /// A text of the conversation: shown in a block of `class`, or folded under `fold`.
    fn text(&mut self, class: &str, fold: Option<&str>, text: &str) {
        let (mut shown, mut more) = cut(text.trim_end());
        if fold.is_some() {
            if shown.len() > self.folded_left {
                (shown, more) = ("", text.lines().count());
            }
            self.folded_left -= shown.len();
        }
        if self.markdown {
            match fold {
                Some(label) => {
                    let _ = writeln!(self.out, "<details><summary>{}</summary>\n", esc(label));
                    self.code_block("", shown, more);
                    self.out.push_str("</details>\n\n");
                }
                None if class == "prompt" => {
                    self.out.push_str("**Prompt**\n\n");
                    self.code_block("", shown, more);
                }
                None => self.code_block("", shown, more),
            }
            return;
        }
        let _ = match fold {
            Some(label) => write!(
                self.out,
                "<details class=\"{class}\"><summary>{}</summary><pre>{}</pre>",
                esc(label),
                esc(shown)
            ),
            None if class == "prompt" => write!(
                self.out,
                "<div class=\"prompt\" id=\"cp-{}-p{}\"><pre>{}</pre>",
                esc(&self.session.0),
                self.session.1,
                esc(shown)
            ),
            None => write!(self.out, "<div class=\"{class}\"><pre>{}</pre>", esc(shown)),
        };
        self.more(more);
        self.out.push_str(if fold.is_some() {
            "</details>\n"
        } else {
            "</div>\n"
        });
    }

    fn more(&mut self, more: usize) {
        if more > 0 {
            let _ = write!(
                self.out,
                "<p class=\"more\">{more} more lines (the whole transcript: <code>git entire-checkpoint show &lt;id&gt; --transcript --raw</code>)</p>"
            );
        }
    }

    fn code_block(&mut self, lang: &str, text: &str, more: usize) {
        let f = fence(text);
        let _ = writeln!(self.out, "{f}{lang}\n{text}\n{f}");
        if more > 0 {
            let _ = writeln!(self.out, "_{more} more lines_");
        }
        self.out.push('\n');
    }
}

/// `text` on one Markdown line: line breaks as spaces, and the characters that would start
/// markup or HTML escaped.
fn md_inline(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => out.push(' '),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '\\' | '`' | '*' | '_' | '[' | ']' | '#' | '!' | '|' => {
                out.push('\\');
                out.push(c)
            }
            c if c.is_control() => out.push('\u{FFFD}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_text_is_escaped_and_cut() {
        assert_eq!(
            esc("<script>x</script>\"'&\u{1b}[31m"),
            "&lt;script&gt;x&lt;/script&gt;&quot;&#39;&amp;\u{FFFD}[31m"
        );
        assert_eq!(fence("a ``` b ````` c"), "``````");
        let long = "x\n".repeat(TEXT_LINES + 5);
        assert_eq!(cut(&long).1, 5);
        assert_eq!(md_inline("*a*<b>|\n"), "\\*a\\*&lt;b&gt;\\| ");
    }
}
