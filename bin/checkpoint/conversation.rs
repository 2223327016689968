//! The conversation view of `show --transcript` on a terminal (docs/cli.md, "Reading a
//! transcript"): each prompt, the agent's replies and thinking, each tool call with what it is
//! about and a short diff of what it wrote, each tool's output, long texts elided; every entry of no known
//! shape as stored, marked `?`; then one line accounting for every entry. Written as the
//! transcript is read, every text escaped ([`escape`]).

use std::io::{BufReader, Read, Write};

use entire_checkpoints::ops::read::conversation::{self, Event, Tally, ToolCall, Turn};
use entire_checkpoints::ops::read::TranscriptFormat;

use super::style::{escape, Slot, Style};

/// Lines of a tool's output shown before the rest is elided.
const OUTPUT_LINES: usize = 5;
/// Lines a tool call replaced, and lines it wrote, in one file shown before the rest is elided.
const WRITTEN_LINES: usize = 10;
/// Lines of the agent's thinking shown before the rest is elided.
const THINKING_LINES: usize = 3;
/// Characters of one line shown before the rest of it is elided.
const LINE_CHARS: usize = 400;

/// Writes the conversation `transcript` records to stdout.
pub fn show(transcript: impl Read, style: &Style) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let reader = BufReader::with_capacity(64 * 1024, transcript);
    let tally = conversation::read(reader, |event| {
        out.write_all(render(&event, style).as_bytes())
    })?;
    out.write_all(footer(&tally).as_bytes())?;
    out.flush()
}

/// The lines showing `event`.
fn render(event: &Event, style: &Style) -> String {
    let mut out = String::new();
    match &event.turn {
        Turn::Prompt(text) => {
            out.push('\n');
            for line in text.trim().lines() {
                let line = format!("> {}", shown(line));
                out.push_str(&format!("{}\n", style.paint(Slot::Header, line)));
            }
            out.push('\n');
        }
        Turn::Reply(text) => block(&mut out, "  ", text.trim(), usize::MAX),
        Turn::Thinking(text) => block(&mut out, "  (thinking) ", text.trim(), THINKING_LINES),
        Turn::ToolCall(call) => tool_call(&mut out, call),
        Turn::ToolOutput(text) => block(&mut out, "    | ", text.trim_end(), OUTPUT_LINES),
        Turn::Raw(text) => block(&mut out, "  ? ", text, usize::MAX),
    }
    out
}

/// A tool call: `* <tool> <what it is about>`, then for each file it wrote a short diff: the
/// lines it replaced (`-`, when the call says) and those it wrote (`+`).
fn tool_call(out: &mut String, call: &ToolCall) {
    let files: Vec<&str> = call.wrote.iter().map(|w| w.file.as_str()).collect();
    let about = match files.is_empty() {
        true => call.subject.clone(),
        false => files.join(", "),
    };
    out.push_str(format!("  * {} {}", shown(&call.tool), shown(&about)).trim_end());
    out.push('\n');
    for w in &call.wrote {
        if call.wrote.len() > 1 {
            out.push_str(&format!("    {}\n", shown(&w.file)));
        }
        for (mark, lines) in [("-", &w.replaced), ("+", &w.lines)] {
            for line in lines.iter().take(WRITTEN_LINES) {
                out.push_str(format!("    {mark} {}", shown(line)).trim_end());
                out.push('\n');
            }
            more(out, &format!("    {mark} "), lines.len(), WRITTEN_LINES);
        }
    }
}

/// `text`, each line after `prefix` (the first `max` of them, then how many more).
fn block(out: &mut String, prefix: &str, text: &str, max: usize) {
    // A tool's output is marked on every line; other texts only on their first.
    let marked = prefix.ends_with("| ");
    let indent = " ".repeat(prefix.chars().count());
    let mut count = 0;
    for (i, line) in text.lines().enumerate() {
        count += 1;
        if i < max {
            let prefix = if i == 0 || marked { prefix } else { &indent };
            out.push_str(format!("{prefix}{}", shown(line)).trim_end());
            out.push('\n');
        }
    }
    more(out, if marked { prefix } else { &indent }, count, max);
}

/// `... N more lines` when `total` is more than the `shown` lines.
fn more(out: &mut String, indent: &str, total: usize, shown: usize) {
    if total > shown {
        let n = total - shown;
        let s = if n == 1 { "" } else { "s" };
        out.push_str(&format!("{indent}... {n} more line{s}\n"));
    }
}

/// One line as shown: escaped, cut after [`LINE_CHARS`] characters.
fn shown(line: &str) -> String {
    match line.char_indices().nth(LINE_CHARS) {
        None => escape(line).into_owned(),
        Some((at, _)) => {
            let rest = line[at..].chars().count();
            format!("{} ... ({rest} more characters)", escape(&line[..at]))
        }
    }
}

/// The line accounting for every entry.
pub(super) fn footer(t: &Tally) -> String {
    let format = match t.format {
        TranscriptFormat::Unknown => "no known format".to_owned(),
        f => f.name().to_owned(),
    };
    format!(
        "\n-- transcript ({format}): {} {}: {} shown, {} bookkeeping (not shown), {} of no known \
         shape (shown as stored, marked ?); the stored bytes: --raw\n",
        t.entries,
        t.unit.plural(),
        t.shown,
        t.bookkeeping,
        t.raw
    )
}
