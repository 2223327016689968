//! What [`extract`](crate::agents::extract) reads of a transcript: its prompts and its
//! file-writing tool calls, kept by the [`Turns`] sink [`AgentWrites`]; and how `blame` matches
//! a write's lines and file to a repository's.

use serde::{Deserialize, Serialize};

use super::prompt::{prompt_text, repeats};
use super::Turns;
use crate::agents::id::TranscriptFormat;

/// A user turn that prompted the agent.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Prompt {
    /// What the user typed.
    pub text: String,
    /// The entry's time, RFC 3339 ("" when it has none).
    pub timestamp: String,
    /// Where it is: the line number in a JSONL transcript, the message's number in a
    /// transcript that is one JSON document (both from 1).
    pub entry: usize,
}

/// One file-writing tool call; its lines of type `L` (a store of them may keep them its own way:
/// [`AgentWrites::map_lines`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWrite<L = Vec<String>> {
    /// The tool (`Edit`, `Write`, `apply_patch`, `write_file`, ...).
    pub tool: String,
    /// The file as the tool call names it (absolute or relative to the agent's directory).
    pub file: String,
    /// The lines it wrote, trailing whitespace trimmed.
    pub lines: L,
    /// The prompt before it: an index into [`AgentWrites::prompts`].
    pub prompt: Option<usize>,
    /// The entry's time, RFC 3339 ("" when it has none).
    pub timestamp: String,
    /// Where it is, as [`Prompt::entry`].
    pub entry: usize,
}

/// Everything [`extract`](crate::agents::extract) read from one transcript (its writes' lines of
/// type `L`, as [`AgentWrite`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentWrites<L = Vec<String>> {
    /// The format recognised.
    pub format: TranscriptFormat,
    /// The file-writing tool calls, in transcript order.
    pub writes: Vec<AgentWrite<L>>,
    /// The prompts, in transcript order.
    pub prompts: Vec<Prompt>,
    /// Lines that are JSON (1 for a transcript that is one JSON document).
    pub json_lines: usize,
    /// Non-empty lines that are not JSON (skipped).
    pub skipped_lines: usize,
}

impl AgentWrites {
    pub(crate) fn new(format: TranscriptFormat) -> Self {
        AgentWrites {
            format,
            writes: Vec::new(),
            prompts: Vec::new(),
            json_lines: 0,
            skipped_lines: 0,
        }
    }

    /// Whether the transcript is JSON at all: some line is JSON, or it is empty.
    pub fn is_json(&self) -> bool {
        self.json_lines > 0 || self.skipped_lines == 0
    }

    /// The files the session wrote, in the order first written, each once.
    pub fn files(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        for w in &self.writes {
            if !out.contains(&w.file.as_str()) {
                out.push(&w.file);
            }
        }
        out
    }
}

impl<L> AgentWrites<L> {
    /// A copy of these writes with each write's lines turned by `lines` (given the write's file),
    /// or the first error it gives.
    pub fn map_lines<M, E>(
        &self,
        mut lines: impl FnMut(&str, &L) -> Result<M, E>,
    ) -> Result<AgentWrites<M>, E> {
        let writes = self
            .writes
            .iter()
            .map(|w| {
                Ok(AgentWrite {
                    tool: w.tool.clone(),
                    file: w.file.clone(),
                    lines: lines(&w.file, &w.lines)?,
                    prompt: w.prompt,
                    timestamp: w.timestamp.clone(),
                    entry: w.entry,
                })
            })
            .collect::<Result<_, E>>()?;
        Ok(AgentWrites {
            format: self.format,
            writes,
            prompts: self.prompts.clone(),
            json_lines: self.json_lines,
            skipped_lines: self.skipped_lines,
        })
    }
}

impl Turns for AgentWrites {
    const EVERY_ENTRY: bool = false;

    /// Records `text` as a prompt unless the harness injected it or it repeats the last one.
    fn prompt(&mut self, text: String, timestamp: &str, entry: usize) {
        let Some(text) = prompt_text(text) else {
            return;
        };
        if repeats(self.prompts.last().map(|p| p.text.as_str()), &text) {
            return;
        }
        self.prompts.push(Prompt {
            text,
            timestamp: timestamp.to_owned(),
            entry,
        });
    }

    /// Records a call of `tool` that wrote `text` to `file` (nothing when no file is named).
    fn write(&mut self, tool: &str, file: &str, text: &str, timestamp: &str, entry: usize) {
        if file.is_empty() {
            return;
        }
        self.writes.push(AgentWrite {
            tool: tool.to_owned(),
            file: file.to_owned(),
            lines: text.lines().map(|l| l.trim_end().to_owned()).collect(),
            prompt: self.prompts.len().checked_sub(1),
            timestamp: timestamp.to_owned(),
            entry,
        });
    }
}

/// Whether a line of code is evidence on its own: after trimming, it holds at least one
/// letter or digit. Blank lines and lines of punctuation only (`}`, `)`, `*/`) are written
/// everywhere, so finding one in a tool call proves nothing.
pub fn is_evidence(line: &str) -> bool {
    line.chars().any(char::is_alphanumeric)
}

/// Whether the file a tool call names (`tool_path`) is `repo_path` (relative to the top of
/// the repository): equal once `./` and backslashes are normalised, or ending in `/<repo_path>`.
/// Agents name files by absolute paths in their own checkout, which may be anywhere.
pub fn same_file(tool_path: &str, repo_path: &str) -> bool {
    // Compared byte by byte with `\` read as `/`, without a normalised copy: blame asks this of
    // every write of every session it reads.
    let slash = |b: u8| if b == b'\\' { b'/' } else { b };
    let mut tool = tool_path.as_bytes();
    while let [b'.', s, rest @ ..] = tool {
        if slash(*s) != b'/' {
            break;
        }
        tool = rest;
    }
    let repo = repo_path.trim_start_matches("./").as_bytes();
    if repo.is_empty() || tool.len() < repo.len() {
        return false;
    }
    let (rest, tail) = tool.split_at(tool.len() - repo.len());
    tail.iter().zip(repo).all(|(&t, &r)| slash(t) == r)
        && rest.last().is_none_or(|&b| slash(b) == b'/')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evidence_and_file_matching() {
        assert!(is_evidence("\treturn nil"));
        for weak in ["", "   ", "}", "\t});", "*/", "]"] {
            assert!(!is_evidence(weak), "{weak:?}");
        }
        assert!(same_file("/home/u/proj/src/a.go", "src/a.go"));
        assert!(same_file("./src/a.go", "src/a.go"));
        assert!(same_file("src\\a.go", "src/a.go"));
        assert!(!same_file("/home/u/proj/xsrc/a.go", "src/a.go"));
        assert!(!same_file("/home/u/proj/src/a.go", "a.go.bak"));
        assert!(!same_file("a.go", ""));
        assert!(same_file(".\\.\\src\\a.go", "src/a.go"));
        assert!(same_file("C:\\w\\src\\a.go", "./src/a.go"));
        assert!(!same_file("C:\\w\\xsrc\\a.go", "src/a.go"));
        assert!(!same_file("rc/a.go", "src/a.go"));
        assert!(same_file("/a.go", "a.go"));
        assert!(
            !same_file("src/a.go", "src\\a.go"),
            "the repository's path is taken as it is"
        );
    }

    proptest::proptest! {
        /// The comparison without a copy answers as comparing the normalised copy did.
        #[test]
        fn same_file_is_the_normalised_comparison(
            tool in "[./\\\\ab]{0,8}",
            repo in "[./\\\\ab]{0,6}",
        ) {
            let normalised = tool.replace('\\', "/");
            let t = normalised.trim_start_matches("./");
            let r = repo.trim_start_matches("./");
            let expected = !r.is_empty()
                && (t == r || t.strip_suffix(r).is_some_and(|rest| rest.ends_with('/')));
            proptest::prop_assert_eq!(same_file(&tool, &repo), expected);
        }
    }

    #[test]
    fn files_are_listed_once_in_the_order_first_written() {
        let mut w = AgentWrites::new(TranscriptFormat::Pi);
        for f in ["b.go", "a.go", "b.go"] {
            w.write("write", f, "x", "", 1);
        }
        assert_eq!(w.files(), ["b.go", "a.go"]);
    }
}
