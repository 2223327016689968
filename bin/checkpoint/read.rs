//! The read commands: `show`, `cat`, `log`, `list`.

use std::borrow::Cow;
use std::fmt::Write as _;
use std::io::Write;

use serde::Serialize;
use serde_json::Value;

use entire_checkpoints::base::error::error_chain;
use entire_checkpoints::base::id;
use entire_checkpoints::base::json::empty_as_null;
use entire_checkpoints::git::repo::Repo;
use entire_checkpoints::model::documents::prompt_subject;
use entire_checkpoints::ops::range::{self, Linked};
use entire_checkpoints::ops::read::{
    self, layout_of, AgentWrites, Checkpoint, CheckpointFiles, CheckpointInfo, CommitInfo,
    ListLine, Shown, TranscriptFormat,
};
use entire_checkpoints::ops::rewrites;
use entire_checkpoints::ops::writes_cache::WritesCache;
use entire_checkpoints::ops::{Remote, Topology};

use super::args::{DateFormat, RangeArgs, ShowArgs};
use super::conversation;
use super::dates;
use super::pager;
use super::style::{escape, Slot, Style};
use crate::common::cli::{info, warn, warn_with_hint};
use crate::common::error::{CliError, Result};
use crate::common::output::{print_json, write_stdout};
use crate::common::progress::Bar;
use crate::common::text::escape_lines;

/// `show`: the checkpoints its target names, as documents, or the transcript of a session.
pub fn show(repo: &Repo, topo: &Topology<'_>, a: ShowArgs, style: &Style) -> Result<()> {
    let checkpoints = read::checkpoints(repo, topo, &a.target, |m| warn(false, m))?;
    if a.html {
        return super::report::show(repo, topo, &checkpoints);
    }
    let mut docs = Vec::new();
    for cp in &checkpoints {
        let slot = a.session.as_deref().map(|s| cp.slot_of(s)).transpose()?;
        if a.transcript {
            transcript(topo, cp, slot, (a.raw, a.json), style)?;
            continue;
        }
        let cache = (!a.json).then(|| WritesCache::in_common_dir(repo.common_dir()));
        docs.push((cp, ShowDoc::read(topo, cp, slot, cache.as_ref())?));
    }
    if a.transcript {
        return Ok(());
    }
    if a.json {
        match docs.as_slice() {
            [(_, one)] => print_json(one),
            _ => print_json(&docs.iter().map(|(_, d)| d).collect::<Vec<_>>()),
        }
    } else {
        let now = dates::now();
        let map = rewrites::RewriteMap::load(repo).ok();
        let text: Vec<String> = docs
            .iter()
            .map(|(cp, d)| {
                let code = read::code_commits(repo, map.as_ref(), cp);
                d.human(cp, &code, a.date.date, now, style)
            })
            .collect();
        write_stdout(text.join("\n").as_bytes())
    }
}

/// Streams the transcript of session `slot` (default: the latest) to stdout, memory bounded
/// whatever its size: on a terminal (or its pager) as a conversation unless `raw` or `json`
/// ([`conversation`]), else the stored bytes ([`stream_stored`]; to a terminal with `json`,
/// their control characters written out).
fn transcript(
    topo: &Topology<'_>,
    cp: &Checkpoint,
    slot: Option<usize>,
    (raw, json): (bool, bool),
    style: &Style,
) -> Result<()> {
    read::transcript(topo, cp, slot, |stream| {
        if raw || json || pager::output() == pager::Output::Other {
            // `--json` asks for the stored document, not for what a remote stored to drive the
            // terminal: on a terminal its control characters are written out, as `cat`'s are.
            return stream_stored(stream, raw);
        }
        conversation::show(stream, style)?;
        Ok(())
    })?
}

/// Copies stored content to stdout as it is read, so memory stays bounded whatever its size:
/// byte for byte into a pipe or a file, or with `raw`; to a terminal (or its pager) with every
/// control character but newline and tab written out ([`escape_lines`]), so that what a remote
/// stored cannot drive the terminal.
fn stream_stored(mut stream: impl std::io::Read, raw: bool) -> Result<()> {
    let mut out = std::io::stdout().lock();
    if raw || pager::output() == pager::Output::Other {
        std::io::copy(&mut stream, &mut out)?;
    } else {
        escape_stream(&mut stream, &mut out)?;
    }
    out.flush()?;
    Ok(())
}

/// [`escape_lines`] over a stream, a bounded piece at a time; a character cut by a piece's end
/// waits for the next piece, so it is decoded whole.
fn escape_stream(stream: &mut impl std::io::Read, out: &mut impl Write) -> std::io::Result<()> {
    let mut buf = vec![0u8; 64 * 1024];
    let mut carried = 0;
    loop {
        let n = match stream.read(&mut buf[carried..]) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let filled = carried + n;
        // At the end everything goes (an incomplete character as U+FFFD); else at most the
        // three bytes of a character not yet complete wait.
        let whole = match (n, std::str::from_utf8(&buf[..filled])) {
            (0, _) | (_, Ok(_)) => filled,
            (_, Err(e)) if e.error_len().is_none() => e.valid_up_to(),
            (_, Err(_)) => filled,
        };
        let text = String::from_utf8_lossy(&buf[..whole]);
        out.write_all(escape_lines(&text).as_bytes())?;
        if n == 0 {
            return Ok(());
        }
        buf.copy_within(whole..filled, 0);
        carried = filled - whole;
    }
}

/// The author of a checkpoint's commit.
#[derive(Serialize)]
struct Author {
    name: String,
    email: String,
}

/// The shown sessions' `<slot>/metadata.json` as stored, each read and decoded only as it is
/// written out (a checkpoint may list many sessions); nothing without `files` (the human form).
struct SessionDocs<'t> {
    files: Option<Box<dyn CheckpointFiles + 't>>,
    id: String,
    dirs: Vec<String>,
}

impl Serialize for SessionDocs<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::{Error, SerializeSeq};
        let Some(files) = &self.files else {
            return s.collect_seq(std::iter::empty::<Value>());
        };
        let mut seq = s.serialize_seq(Some(self.dirs.len()))?;
        for dir in &self.dirs {
            let path = format!("{dir}/metadata.json");
            let bytes = files
                .read(&path)
                .map_err(|e| S::Error::custom(error_chain(&e)))?;
            let doc: Value = serde_json::from_slice(&bytes).map_err(|e| {
                S::Error::custom(format!("checkpoint {}: {path} is corrupt: {e}", self.id))
            })?;
            seq.serialize_element(&doc)?;
        }
        seq.end()
    }
}

/// `show --json`: one checkpoint with its stored documents as they are.
#[derive(Serialize)]
struct ShowDoc<'t> {
    checkpoint_id: String,
    store: &'static str,
    #[serde(rename = "ref")]
    ref_name: String,
    commit: String,
    author: Author,
    /// `metadata.json`.
    summary: Value,
    /// Each shown session's `<slot>/metadata.json`.
    sessions: SessionDocs<'t>,
    /// The shown sessions whose directories `sessions[]` does not list (their slots), if any.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    unlisted_sessions: Vec<usize>,
    /// The slots of the shown sessions.
    #[serde(skip)]
    slots: Vec<usize>,
    /// The first line of each shown session's first prompt, where it has one.
    #[serde(skip)]
    prompts: Vec<Option<String>>,
    /// What each shown session's transcript shows (human output only): its writes, or why
    /// they could not be read; `None` when no transcript is stored.
    #[serde(skip)]
    transcripts: Vec<Option<std::result::Result<AgentWrites, String>>>,
}

impl<'t> ShowDoc<'t> {
    /// The documents of `cp` ([`read::documents`]), of all sessions or only the one in slot
    /// `only`: as stored for `--json` (without a writes `cache`), for people with one.
    fn read(
        topo: &'t Topology<'_>,
        cp: &Checkpoint,
        only: Option<usize>,
        cache: Option<&WritesCache>,
    ) -> Result<ShowDoc<'t>> {
        let d = read::documents(topo, cp, only, cache)?;
        Ok(ShowDoc {
            checkpoint_id: cp.id.as_str().to_owned(),
            store: cp.store.name(),
            ref_name: cp.ref_name.clone(),
            commit: cp.commit.clone(),
            author: Author {
                name: d.author.name,
                email: d.author.email,
            },
            summary: d.summary,
            sessions: SessionDocs {
                files: d.files,
                id: cp.id.to_string(),
                dirs: d.dirs,
            },
            unlisted_sessions: d
                .slots
                .iter()
                .copied()
                .filter(|&s| s >= cp.listed)
                .collect(),
            slots: d.slots,
            prompts: d.prompts,
            transcripts: d.transcripts,
        })
    }

    /// `show`: a header for the checkpoint and a block per session; `code_commits` are the
    /// commits that link the checkpoint. Everything the checkpoint says is escaped.
    fn human(
        &self,
        cp: &Checkpoint,
        code_commits: &[String],
        date: DateFormat,
        now: i64,
        style: &Style,
    ) -> String {
        let mut out = format!(
            "{} {}\n",
            style.paint(Slot::Header, "Checkpoint"),
            style.paint(Slot::Id, &cp.id)
        );
        let field = |out: &mut String, k: &str, v: &dyn std::fmt::Display| {
            let _ = writeln!(out, "  {k:<9}{v}");
        };
        field(
            &mut out,
            "store",
            &format_args!(
                "{} ({})",
                layout_of(&cp.ref_name).unwrap_or(cp.store.name()),
                escape(&cp.ref_name)
            ),
        );
        field(
            &mut out,
            "storage",
            &format_args!(
                "{} (the checkpoint's own commit)",
                style.paint(Slot::Id, &cp.commit)
            ),
        );
        for code in code_commits {
            field(&mut out, "code", &style.paint(Slot::Id, escape(code)));
        }
        let Author { name, email } = &self.author;
        if !name.is_empty() || !email.is_empty() {
            field(
                &mut out,
                "author",
                &format_args!("{} <{}>", escape(name), escape(email)),
            );
        }
        let created = cp.created_at();
        if !created.is_empty() {
            field(&mut out, "created", &escape(&date.show(&created, now)));
        }
        let summary = &cp.summary;
        if !summary.branch.is_empty() {
            field(&mut out, "branch", &escape(&summary.branch));
        }
        if let Some(t) = &summary.token_usage {
            field(&mut out, "tokens", &t.total());
        }
        field(&mut out, "files", &list_or_none(&summary.files_touched));
        field(&mut out, "sessions", &cp.sessions.len());
        for (i, (&slot, prompt)) in self.slots.iter().zip(&self.prompts).enumerate() {
            let s = &cp.sessions[slot];
            let _ = writeln!(
                out,
                "\n{}  {}",
                style.paint(Slot::Header, format_args!("Session {slot}")),
                escape(&s.session_id)
            );
            if slot >= cp.listed {
                let dir = escape(&cp.session_dirs[slot]);
                field(
                    &mut out,
                    "listed",
                    &format_args!("no: directory {dir}/ is not in sessions[]"),
                );
            }
            if let Some(p) = prompt {
                field(&mut out, "prompt", &escape(p));
            }
            if !s.commit_sha.is_empty() && s.commit_sha != cp.summary.commit_sha {
                field(
                    &mut out,
                    "code",
                    &style.paint(Slot::Id, escape(&s.commit_sha)),
                );
            }
            if !s.agent.is_empty() {
                field(&mut out, "agent", &escape(&s.agent));
            }
            if !s.model.is_empty() {
                field(&mut out, "model", &escape(&s.model));
            }
            if !s.created_at.is_empty() {
                field(&mut out, "created", &escape(&date.show(&s.created_at, now)));
            }
            field(&mut out, "files", &list_or_none(&s.files_touched));
            if let Some(t) = &s.token_usage {
                field(&mut out, "tokens", &t.total());
            }
            if let Some(intent) = s.intent() {
                field(&mut out, "intent", &escape(intent));
            }
            if let Some(Some(t)) = self.transcripts.get(i) {
                transcript_view(&mut out, t);
            }
        }
        out
    }
}

/// How many prompts a session's block shows before it says how many more there are.
const PROMPTS_SHOWN: usize = 5;

/// The short view of a session's transcript: its format, its prompts (the first line of each)
/// and the files its tool calls wrote.
fn transcript_view(out: &mut String, t: &std::result::Result<AgentWrites, String>) {
    let writes = match t {
        Ok(w) => w,
        Err(why) => {
            out.push_str(&format!("  {:<9}{}\n", "format", escape(why)));
            return;
        }
    };
    let format = match writes.format {
        TranscriptFormat::Unknown => "unknown (no prompt or write is read from it)",
        f => f.name(),
    };
    out.push_str(&format!("  {:<9}{format}\n", "format"));
    let shown = writes.prompts.iter().take(PROMPTS_SHOWN);
    for (n, p) in shown.enumerate() {
        let line = prompt_subject(p.text.as_bytes()).unwrap_or_default();
        let line = escape(&line);
        out.push_str(&format!(
            "  {:<9}{line}\n",
            if n == 0 { "asked" } else { "" }
        ));
    }
    if writes.prompts.len() > PROMPTS_SHOWN {
        let more = writes.prompts.len() - PROMPTS_SHOWN;
        out.push_str(&format!("  {:<9}({more} more)\n", ""));
    }
    if writes.format != TranscriptFormat::Unknown {
        out.push_str(&format!(
            "  {:<9}{}\n",
            "wrote",
            list_or_none(&writes.files())
        ));
    }
}

/// The items joined by commas (escaped), or `(none)`.
fn list_or_none(items: &[impl AsRef<str>]) -> String {
    if items.is_empty() {
        "(none)".to_owned()
    } else {
        let items: Vec<&str> = items.iter().map(AsRef::as_ref).collect();
        escape(&items.join(", ")).into_owned()
    }
}

/// `cat`: one file of the checkpoint `target` names (as for `show`), as stored.
pub fn cat(repo: &Repo, topo: &Topology<'_>, target: &str, path: &str, raw: bool) -> Result<()> {
    read::cat(
        repo,
        topo,
        target,
        path,
        |m| warn(false, m),
        |stream| stream_stored(stream, raw),
    )?
}

/// `log`: the history of the checkpoint `target` names (as for `show`).
pub fn log(
    repo: &Repo,
    topo: &Topology<'_>,
    target: &str,
    json: bool,
    date: DateFormat,
    style: &Style,
) -> Result<()> {
    let history = read::log(repo, topo, target, |m| warn(false, m))?;
    if json {
        print_json(&history)
    } else {
        write_stdout(log_human(&history, date, style).as_bytes())
    }
}

/// `log`: one line per commit.
fn log_human(history: &[CommitInfo], date: DateFormat, style: &Style) -> String {
    let now = dates::now();
    history
        .iter()
        .map(|c| {
            format!(
                "{} {} {} <{}> {}\n",
                style.paint(Slot::Id, &c.commit[..c.commit.len().min(12)]),
                date.show(&c.authored_at, now),
                escape(&c.author.name),
                escape(&c.author.email),
                escape(&c.subject)
            )
        })
        .collect()
}

/// What `list` was asked.
pub struct ListArgs {
    /// `--json`.
    pub json: bool,
    /// `--ids`.
    pub ids: bool,
    /// `--limit`.
    pub limit: Option<usize>,
    /// `--remote [<R>]`.
    pub remote: Option<Option<Remote>>,
    /// `--hydrate`.
    pub hydrate: bool,
    /// `--no-fetch`.
    pub no_fetch: bool,
    /// `--date`.
    pub date: DateFormat,
    /// `-q`: no progress.
    pub quiet: bool,
}

/// `list`: every checkpoint, newest first; with `--remote` the remote's too. Fails after the
/// list when the remote cannot be listed or a checkpoint cannot be read.
pub fn list<'r>(repo: &'r Repo, topo: &Topology<'r>, a: ListArgs, style: &Style) -> Result<()> {
    let bar =
        (a.hydrate && a.remote.is_some()).then(|| Bar::new("reading remote checkpoints", a.quiet));
    let progress = |done, total| bar.iter().for_each(|b| b.set(done, total));
    let ask = read::ListAsk {
        remote: a.remote,
        hydrate: a.hydrate,
    };
    let listed = read::list(repo, topo, ask, &progress);
    bar.iter().for_each(Bar::finish);
    let read::Listed {
        shown,
        index_damage,
        remote_failure,
    } = listed?;
    // The local checkpoints are still listed; the command fails after.
    let failed = remote_failure.map(|(r, reason)| {
        CliError::Failed(format!(
            "could not list the checkpoints of {r} (local checkpoints listed only): {reason}"
        ))
    });
    if let Some(damage) = index_damage {
        warn(false, error_chain(&damage));
    }
    let limit = a.limit.unwrap_or(usize::MAX);
    // Written as it is rendered, through one buffer: no copy of the whole output in memory.
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    if a.json {
        write_list_json(&mut out, shown.lines().take(limit))?;
    } else if a.ids {
        for line in shown.lines().take(limit) {
            writeln!(out, "{}", line.id)?;
        }
    } else {
        list_human(shown.lines().take(limit), a.date, style, &mut out)?;
    }
    out.flush()?;
    drop(out);
    if let (Shown::Local(_), false, false) = (&shown, a.json, a.ids) {
        say_remote_only(read::remote_only(repo, &shown, !a.no_fetch), a.quiet);
    }
    let unreadable = shown.lines().take(limit).filter_map(|l| l.unreadable);
    let mut count = 0;
    for reason in unreadable {
        crate::common::cli::to_stderr(&format!(
            "error: unreadable checkpoint: {}\n",
            escape_lines(reason)
        ));
        count += 1;
    }
    if let Some(e) = failed {
        return Err(e);
    }
    if count > 0 {
        return Err(format!("{count} checkpoint(s) could not be read").into());
    }
    Ok(())
}

/// After the human `list`: how many checkpoints the checkpoint remote holds that are not here
/// ([`read::remote_only`]), with the command that fetches them.
fn say_remote_only(known: Option<read::RemoteOnly>, quiet: bool) {
    let Some(read::RemoteOnly { remote, count, age }) = known else {
        return;
    };
    let when = match age {
        0..5 => "just now".to_owned(),
        _ => format!("{} ago", read::age(age)),
    };
    let checkpoints = if count == 1 {
        "checkpoint"
    } else {
        "checkpoints"
    };
    warn_with_hint(
        quiet,
        format!("{remote} holds {count} {checkpoints} not fetched here (listed {when})"),
        Some("`git entire-fetch --all` fetches them; `git entire-checkpoint list --remote` lists them"),
    );
}

/// `list --json`: the stable shape of cli.md.
#[derive(Serialize)]
struct ListEntry<'a> {
    checkpoint_id: &'a str,
    store: &'static str,
    #[serde(serialize_with = "empty_as_null")]
    created_at: &'a str,
    session_count: usize,
    session_ids: Vec<&'a str>,
    /// The last session's agent.
    #[serde(serialize_with = "empty_as_null")]
    agent: &'a str,
    /// Every session's agent, each once, the last session's last.
    agents: Vec<&'a str>,
    subject: &'a str,
    remote_only: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
}

impl<'a> From<ListLine<'a>> for ListEntry<'a> {
    fn from(i: ListLine<'a>) -> Self {
        let agents: Vec<&str> = i.agents().collect();
        ListEntry {
            checkpoint_id: i.id,
            store: i.store.name(),
            created_at: i.created_at,
            session_count: i.session_count,
            session_ids: i.session_ids,
            agent: agents.last().copied().unwrap_or_default(),
            agents,
            subject: i.subject,
            remote_only: i.remote_only,
            error: i.unreadable,
        }
    }
}

/// `list --json`: `lines` as an array of [`ListEntry`] and a final newline, byte for byte what
/// serde_json's pretty printer makes of them (a test holds the two together), written directly:
/// through serde, the output was a third of a long listing's instructions, most of it spent
/// escaping strings that need none.
fn write_list_json<'a>(
    out: &mut impl Write,
    lines: impl Iterator<Item = ListLine<'a>>,
) -> std::io::Result<()> {
    // Whole entries are written into `buf`, which goes out when it fills.
    const FLUSH_AT: usize = 60 * 1024;
    let mut buf = Vec::with_capacity(FLUSH_AT + 4096);
    buf.push(b'[');
    let mut empty = true;
    // The agents of one entry, split once for `agent` and `agents`.
    let mut agents = Vec::new();
    for l in lines {
        agents.clear();
        agents.extend(l.agents());
        buf.extend_from_slice(if empty { b"\n  {" } else { b",\n  {" });
        empty = false;
        key(&mut buf, "checkpoint_id", true);
        json_str(&mut buf, l.id);
        key(&mut buf, "store", false);
        json_str(&mut buf, l.store.name());
        key(&mut buf, "created_at", false);
        str_or_null(&mut buf, l.created_at);
        key(&mut buf, "session_count", false);
        buf.extend_from_slice(l.session_count.to_string().as_bytes());
        key(&mut buf, "session_ids", false);
        str_array(&mut buf, l.session_ids.iter().copied());
        key(&mut buf, "agent", false);
        str_or_null(&mut buf, agents.last().copied().unwrap_or_default());
        key(&mut buf, "agents", false);
        str_array(&mut buf, agents.iter().copied());
        key(&mut buf, "subject", false);
        json_str(&mut buf, l.subject);
        key(&mut buf, "remote_only", false);
        buf.extend_from_slice(if l.remote_only { b"true" } else { b"false" });
        if let Some(error) = l.unreadable {
            key(&mut buf, "error", false);
            json_str(&mut buf, error);
        }
        buf.extend_from_slice(b"\n  }");
        if buf.len() >= FLUSH_AT {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    buf.extend_from_slice(if empty { b"]\n" } else { b"\n]\n" });
    out.write_all(&buf)
}

/// A member's key of a [`write_list_json`] entry, after the previous member unless `first`.
fn key(buf: &mut Vec<u8>, name: &str, first: bool) {
    buf.extend_from_slice(if first { b"\n    \"" } else { b",\n    \"" });
    buf.extend_from_slice(name.as_bytes());
    buf.extend_from_slice(b"\": ");
}

/// `s` as a JSON string: as it is between quotes when nothing in it needs escaping (no control
/// character, quote or backslash; serde_json leaves the rest alone), else escaped by serde_json.
fn json_str(buf: &mut Vec<u8>, s: &str) {
    // Folded without stopping early, so the test runs over many bytes at a time.
    let escaped = s
        .bytes()
        .fold(false, |e, b| e | (b < 0x20) | (b == b'"') | (b == b'\\'));
    if !escaped {
        buf.push(b'"');
        buf.extend_from_slice(s.as_bytes());
        buf.push(b'"');
    } else {
        serde_json::to_writer(&mut *buf, s).expect("a string serializes into memory");
    }
}

/// [`json_str`], or `null` for an empty `s` ([`empty_as_null`]).
fn str_or_null(buf: &mut Vec<u8>, s: &str) {
    match s {
        "" => buf.extend_from_slice(b"null"),
        s => json_str(buf, s),
    }
}

/// An array of strings as a member's value of a [`write_list_json`] entry.
fn str_array<'a>(buf: &mut Vec<u8>, items: impl Iterator<Item = &'a str>) {
    buf.push(b'[');
    let mut empty = true;
    for item in items {
        buf.extend_from_slice(if empty { b"\n      " } else { b",\n      " });
        empty = false;
        json_str(buf, item);
    }
    if !empty {
        buf.extend_from_slice(b"\n    ");
    }
    buf.push(b']');
}

/// `list`: one line per checkpoint, written to `out`.
fn list_human<'a>(
    all: impl Iterator<Item = ListLine<'a>>,
    date: DateFormat,
    style: &Style,
    out: &mut impl Write,
) -> std::io::Result<()> {
    let now = dates::now();
    let mut line = String::with_capacity(128);
    for i in all {
        line.clear();
        list_line(&mut line, i, date, now, style);
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// One checkpoint as `list` shows it, appended to `line`: ID, time, store, sessions, agent, and
/// what it was about (the first line of its first prompt, cut to the terminal's width).
fn list_line(line: &mut String, i: ListLine<'_>, date: DateFormat, now: i64, style: &Style) {
    let sessions = match (i.session_count, i.unreadable) {
        (_, Some(_)) => "unreadable".to_owned(),
        // Known only by its ref on the remote: how many sessions it has is not known.
        _ if i.remote_only => "? sessions".to_owned(),
        (1, None) => "1 session".to_owned(),
        (n, None) => format!("{n} sessions"),
    };
    let (agent, agent_slot) = if i.unreadable.is_some() {
        (Cow::Borrowed("(see stderr)"), Some(Slot::Missing))
    } else if i.remote_only {
        (Cow::Borrowed("(remote only)"), Some(Slot::RemoteOnly))
    } else if i.agent.is_empty() {
        (Cow::Borrowed("-"), None)
    } else {
        (escape(i.agent), None)
    };
    // Columns padded by hand: `format!` with padded fields costs thousands of instructions a
    // line, and `list` may print 100,000 of them. Widths count the text, not its colors.
    let id = id::display_short(i.id);
    let cells: [(&str, usize, Option<Slot>); 4] = [
        (id, 26, Some(Slot::Id)),
        (&date.show(i.created_at, now), 25, None),
        (i.store.name(), 10, None),
        (&sessions, 11, None),
    ];
    for (text, width, slot) in cells {
        match slot {
            Some(slot) if style.is_colored() => {
                let _ = write!(line, "{}", style.paint(slot, text));
            }
            _ => line.push_str(text),
        }
        let pad = width - width.min(text.chars().count());
        line.extend(std::iter::repeat_n(' ', pad + 2));
    }
    match agent_slot {
        Some(slot) if style.is_colored() => {
            let _ = write!(line, "{}", style.paint(slot, &agent));
        }
        _ => line.push_str(&agent),
    }
    if !i.subject.is_empty() {
        let pad = AGENT_WIDTH - AGENT_WIDTH.min(agent.chars().count());
        line.extend(std::iter::repeat_n(' ', pad));
        style.append_subject(line, i.subject);
    }
}

/// The agent column's width when a subject follows it ("Claude Code", "Copilot CLI").
const AGENT_WIDTH: usize = 12;

/// The range of `list` as `git log` words: the options as `--name=value`, then the revisions;
/// empty when none was given.
pub fn range_words(r: &RangeArgs) -> Vec<String> {
    let mut out = Vec::new();
    let valued = [
        ("--max-count", r.max_count.map(|n| n.to_string())),
        ("--skip", r.skip.map(|n| n.to_string())),
        ("--since", r.since.clone()),
        ("--until", r.until.clone()),
        ("--author", r.author.clone()),
        ("--committer", r.committer.clone()),
        ("--grep", r.grep.clone()),
    ];
    for (name, value) in valued {
        if let Some(v) = value {
            out.push(format!("{name}={v}"));
        }
    }
    let flags = [
        ("--first-parent", r.first_parent),
        ("--no-merges", r.no_merges),
        ("--merges", r.merges),
        ("--all", r.all),
    ];
    out.extend(
        flags
            .iter()
            .filter(|(_, on)| *on)
            .map(|(f, _)| f.to_string()),
    );
    out.extend(r.revisions.iter().cloned());
    out
}

/// `list <revision-range>`: each commit of the range that links checkpoints, with them, written
/// as the range is read in the `human` date format and style (without: JSON, one document at
/// the end); the number of commits scanned on stderr. Fails after the listing when the batch fetch failed or a checkpoint cannot be read.
pub fn list_range(
    repo: &Repo,
    topo: &Topology<'_>,
    log: range::RangeLog,
    fetch_from: Option<Remote>,
    human: Option<(DateFormat, &Style)>,
    quiet: bool,
) -> Result<()> {
    let now = dates::now();
    let json = human.is_none();
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut doc = RangeJson::default();
    let (mut linked, mut unreadable) = (0, Vec::new());
    let mut written = Ok(());
    let summary = range::list(
        repo,
        topo,
        log,
        fetch_from,
        move |m| warn(quiet, m),
        |c| {
            linked += 1;
            unreadable.extend(c.checkpoints.iter().filter_map(|cp| match cp {
                Linked::Listed(CheckpointInfo {
                    unreadable: Some(reason),
                    ..
                }) => Some(reason.clone()),
                _ => None,
            }));
            match human {
                None => doc.push(&c),
                Some((date, style)) if written.is_ok() => {
                    written = write_range_commit(&mut out, &c, date, now, style);
                }
                Some(_) => {}
            }
        },
    )?;
    written?;
    if json {
        out.write_all(&doc.finish(summary.scanned))?;
    }
    out.flush()?;
    drop(out);
    info(
        quiet,
        format!(
            "{} commit(s) scanned, {linked} with checkpoints",
            summary.scanned
        ),
    );
    if !summary.history_ends_at.is_empty() {
        info(
            quiet,
            format!(
                "history ends at {} (a shallow clone): `git fetch --deepen=<n>` or `git fetch --unshallow` reads further",
                summary.history_ends_at.join(", ")
            ),
        );
    }
    for reason in &unreadable {
        crate::common::cli::to_stderr(&format!(
            "error: unreadable checkpoint: {}\n",
            escape_lines(reason)
        ));
    }
    if let Some(e) = summary.fetch_failure {
        return Err(e.into());
    }
    if !unreadable.is_empty() {
        return Err(format!("{} checkpoint(s) could not be read", unreadable.len()).into());
    }
    Ok(())
}

/// One commit of `list <revision-range>`: its line, then one line per checkpoint.
fn write_range_commit(
    out: &mut impl Write,
    c: &range::RangeCommit,
    date: DateFormat,
    now: i64,
    style: &Style,
) -> std::io::Result<()> {
    let mut text = format!(
        "{} {} {}\n",
        style.paint(Slot::Id, &c.sha[..c.sha.len().min(12)]),
        date.show(&c.authored_at, now),
        escape(&c.subject)
    );
    for cp in &c.checkpoints {
        text.push_str("    ");
        match cp {
            Linked::Listed(info) => list_line(&mut text, info.line(), date, now, style),
            Linked::NotFound(id) => {
                let short = id::display_short(id.as_str());
                let pad = 26 - 26.min(short.len());
                let _ = write!(
                    text,
                    "{}{:pad$}  {}",
                    style.paint(Slot::Id, short),
                    "",
                    style.paint(Slot::Missing, "not found")
                );
            }
        }
        text.push('\n');
    }
    out.write_all(text.as_bytes())
}

/// `list <revision-range> --json` (docs/schema/list-range.json): `{"commits": [...],
/// "scanned": N}`, pretty-printed as serde_json prints the whole document, but built commit by
/// commit while the range is read.
#[derive(Default)]
struct RangeJson {
    text: Vec<u8>,
    commits: usize,
}

impl RangeJson {
    /// Adds a commit to `commits`.
    fn push(&mut self, c: &range::RangeCommit) {
        let element = serde_json::to_vec_pretty(&RangeCommitDoc::of(c))
            .expect("a document of strings, numbers and booleans serializes");
        self.text.extend_from_slice(match self.commits {
            0 => b"{\n  \"commits\": [\n    ",
            _ => b",\n    ",
        });
        // A JSON string holds no raw newline: each newline of the element is between tokens,
        // where the document's deeper indentation goes.
        for (i, line) in element.split(|&b| b == b'\n').enumerate() {
            if i > 0 {
                self.text.extend_from_slice(b"\n    ");
            }
            self.text.extend_from_slice(line);
        }
        self.commits += 1;
    }

    /// The whole document, with `scanned`, and a final newline.
    fn finish(mut self, scanned: usize) -> Vec<u8> {
        match self.commits {
            0 => self.text.extend_from_slice(b"{\n  \"commits\": []"),
            _ => self.text.extend_from_slice(b"\n  ]"),
        }
        self.text
            .extend_from_slice(format!(",\n  \"scanned\": {scanned}\n}}\n").as_bytes());
        self.text
    }
}

/// One commit of [`RangeJson`].
#[derive(Serialize)]
struct RangeCommitDoc<'a> {
    commit: &'a str,
    authored_at: &'a str,
    subject: &'a str,
    checkpoints: Vec<RangeCheckpoint<'a>>,
}

/// One checkpoint of a commit: its `list --json` entry, or only its ID when no store has it.
#[derive(Serialize)]
#[serde(untagged)]
enum RangeCheckpoint<'a> {
    Found {
        #[serde(flatten)]
        entry: ListEntry<'a>,
        found: bool,
    },
    NotFound {
        checkpoint_id: &'a str,
        found: bool,
    },
}

impl<'a> RangeCommitDoc<'a> {
    fn of(c: &'a range::RangeCommit) -> Self {
        RangeCommitDoc {
            commit: &c.sha,
            authored_at: &c.authored_at,
            subject: &c.subject,
            checkpoints: c
                .checkpoints
                .iter()
                .map(|cp| match cp {
                    Linked::Listed(info) => RangeCheckpoint::Found {
                        entry: ListEntry::from(info.line()),
                        found: true,
                    },
                    Linked::NotFound(id) => RangeCheckpoint::NotFound {
                        checkpoint_id: id.as_str(),
                        found: false,
                    },
                })
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use entire_checkpoints::base::id::CheckpointId;
    use entire_checkpoints::ops::read::StoreKind;

    /// A reader that hands out `step` bytes at a time.
    struct Trickle<'a> {
        bytes: &'a [u8],
        step: usize,
    }

    impl std::io::Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            let n = self.step.min(buf.len()).min(self.bytes.len());
            buf[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_stream_is_escaped_whatever_its_pieces() {
        let text = "naïve \x1b[2J ✓\n\u{202e}日本\n";
        let want = escape_lines(text).into_owned();
        for step in 1..=8 {
            let mut out = Vec::new();
            let mut stream = Trickle {
                bytes: text.as_bytes(),
                step,
            };
            escape_stream(&mut stream, &mut out).unwrap();
            assert_eq!(
                String::from_utf8(out).unwrap(),
                want,
                "{step} bytes at a time"
            );
        }
    }

    #[test]
    fn the_range_document_built_commit_by_commit_is_what_serde_json_prints() {
        let info = CheckpointInfo {
            id: CheckpointId::parse("a1b2c3d4e5f6").unwrap(),
            store: StoreKind::GitRefs,
            created_at: "2026-01-01T00:00:00Z".into(),
            session_count: 2,
            session_ids: vec!["s1".into(), "s \"2\"\n".into()],
            agent: "Claude Code".into(),
            subject: "add \"the\" parser".into(),
            remote_only: false,
            unreadable: None,
            linked_commits: Vec::new(),
            refused_links: Vec::new(),
        };
        let commit = |sha: &str, checkpoints| range::RangeCommit {
            sha: sha.into(),
            authored_at: "2026-01-02T03:04:05+01:00".into(),
            subject: "a subject with \"quotes\", braces {} and a tab\t".into(),
            checkpoints,
        };
        let missing = CheckpointId::parse("01KVBJCWYA4YW6J5M9GP655HZN").unwrap();
        let commits = [
            commit("1".repeat(40).as_str(), vec![Linked::Listed(info.clone())]),
            commit(
                "2".repeat(40).as_str(),
                vec![Linked::NotFound(missing), Linked::Listed(info)],
            ),
        ];
        for n in 0..=commits.len() {
            let mut doc = RangeJson::default();
            for c in &commits[..n] {
                doc.push(c);
            }
            let elements: Vec<serde_json::Value> = commits[..n]
                .iter()
                .map(|c| serde_json::to_value(RangeCommitDoc::of(c)).unwrap())
                .collect();
            let whole = serde_json::json!({"commits": elements, "scanned": 7});
            let want = serde_json::to_string_pretty(&whole).unwrap() + "\n";
            assert_eq!(
                String::from_utf8(doc.finish(7)).unwrap(),
                want,
                "{n} commits"
            );
        }
    }

    proptest::proptest! {
        /// `list --json` written directly is what serde_json's pretty printer makes of the
        /// entries, whatever their strings hold and however many there are.
        #[test]
        fn the_list_is_written_as_serde_json_writes_it(
            lines in proptest::collection::vec((
                "[0-9A-Z]{26}",
                proptest::bool::ANY,
                "\\PC{0,8}|[\"\\\\\\x00-\\x1f\\x7f é✓]{0,4}",
                0usize..3,
                proptest::collection::vec("\\PC{0,6}|\\x01|\"", 0..3),
                "(\\PC{0,5}(, )?){0,3}",
                "\\PC{0,10}|[\"\\\\\\n\\t]{1,3}",
                proptest::bool::ANY,
                proptest::option::of("\\PC{0,8}"),
            ), 0..4)
        ) {
            let lines: Vec<ListLine> = lines
                .iter()
                .map(|(id, refs, created, count, sids, agent, subject, remote, error)| ListLine {
                    id,
                    store: if *refs { StoreKind::GitRefs } else { StoreKind::GitBranch },
                    created_at: created,
                    session_count: *count,
                    session_ids: sids.iter().map(String::as_str).collect(),
                    agent,
                    subject,
                    remote_only: *remote,
                    unreadable: error.as_deref(),
                    linked_commits: vec![],
                    refused_links: vec![],
                })
                .collect();
            let mut direct = Vec::new();
            write_list_json(&mut direct, lines.iter().cloned()).unwrap();
            let entries: Vec<ListEntry> = lines.into_iter().map(ListEntry::from).collect();
            let want = serde_json::to_string_pretty(&entries).unwrap() + "\n";
            proptest::prop_assert_eq!(String::from_utf8(direct).unwrap(), want);
        }
    }
}
