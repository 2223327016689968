//! Text from checkpoints and remotes, made safe to show on a terminal.
//!
//! Whatever a checkpoint holds (prompts, summaries, agent and model names, branches, file names,
//! commit subjects) was written by whoever could push to the remote. Printed raw, an escape
//! sequence in it could retitle or clear the terminal, hide text, or fake output; a
//! bidirectional override could show text in another order than it is (docs/security.md,
//! "Text from a checkpoint is shown safely"). Human output therefore writes every such
//! character out visibly; `--json` escapes them by JSON's own rules.

use std::borrow::Cow;
use std::fmt::Write as _;

/// Whether `c` must not reach a terminal as it is: the C0 controls (but tab), DEL, the C1
/// controls, and the formatting characters that reorder or break text (bidirectional marks,
/// embeddings, overrides and isolates, line and paragraph separators).
fn unsafe_char(c: char) -> bool {
    matches!(c,
        '\0'..='\x08' | '\n'..='\x1f' | '\x7f'..='\u{9f}'
        | '\u{061c}' | '\u{200e}' | '\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every character of [`unsafe_char`] but newlines written out (see
/// [`escape_except`]): for diagnostics and multi-line blocks, whose line breaks are their own.
pub fn escape_lines(text: &str) -> Cow<'_, str> {
    escape_except(text, |c| c == '\n')
}

/// `text` with every character of [`unsafe_char`] that `keep` does not keep written out: ESC as
/// `\e`, newline and carriage return as `\n` and `\r`, the others as `\u{hex}` (`\u{202e}`).
/// Borrowed when there is nothing to escape, which is nearly always.
pub fn escape_except(text: &str, keep: impl Fn(char) -> bool) -> Cow<'_, str> {
    let Some(first) = text.find(|c| unsafe_char(c) && !keep(c)) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str(&text[..first]);
    for c in text[first..].chars() {
        match c {
            c if !unsafe_char(c) || keep(c) => out.push(c),
            '\x1b' => out.push_str("\\e"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c => {
                let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn escape(text: &str) -> Cow<'_, str> {
        escape_except(text, |_| false)
    }

    #[test]
    fn terminal_controls_are_written_out() {
        assert_eq!(
            escape("a\x1b]0;owned\x07b\x1b[2Jc"),
            "a\\e]0;owned\\u{7}b\\e[2Jc"
        );
        assert_eq!(escape("x\u{202e}gnp.exe"), "x\\u{202e}gnp.exe");
        assert_eq!(escape("\u{9b}31m\u{7f}"), "\\u{9b}31m\\u{7f}");
        assert_eq!(escape("line\r\nnext"), "line\\r\\nnext");
        assert_eq!(escape_lines("one\ntwo\x1b"), "one\ntwo\\e");
    }

    #[test]
    fn ordinary_text_is_borrowed() {
        for text in ["", "add the parser", "tab\there", "naïve – 日本語 ✓"] {
            assert!(matches!(escape(text), Cow::Borrowed(_)), "{text:?}");
        }
    }
}
