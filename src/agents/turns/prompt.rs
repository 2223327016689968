//! What of a user turn is a prompt: the rules every sink applies to what a reader reports as
//! a user turn.
//!
//! The slash-command parser is Claude Code's format (`<command-name>` tags), yet it runs on
//! every agent's prompts, not in Claude Code's folder: another agent's user turn that starts
//! with such tags is a prompt by it, where it would otherwise start with `<` and be dropped as
//! injected. Running it on Claude Code's prompts only would change what is read from such a
//! transcript.

/// A prompt's text as the user typed it (a slash command as `/name args`), or `None` when the
/// harness injected it (it starts with `<`), it is a `[Request interrupted ...` marker, or it is
/// empty.
pub(crate) fn prompt_text(text: String) -> Option<String> {
    let text = slash_command(&text).unwrap_or(text);
    let trimmed = text.trim();
    let injected = trimmed.is_empty()
        || trimmed.starts_with('<')
        || trimmed.starts_with("[Request interrupted");
    (!injected).then_some(text)
}

/// Whether `text` repeats the prompt before it (Codex logs each prompt twice: as a message and
/// as an event).
pub(crate) fn repeats(last: Option<&str>, text: &str) -> bool {
    last.is_some_and(|l| l.trim() == text.trim())
}

/// Claude Code's harness commands that never prompt the model (they change a setting, print,
/// or end the session).
const LOCAL_COMMANDS: &[&str] = &[
    "/clear",
    "/compact",
    "/config",
    "/copy",
    "/cost",
    "/exit",
    "/help",
    "/login",
    "/logout",
    "/model",
    "/permissions",
    "/resume",
    "/status",
    "/theme",
    "/vim",
];

/// A slash command the user typed, which Claude Code records as
/// `<command-name>/goal</command-name> ... <command-args>text</command-args>`: the prompt
/// `/goal text`, or an empty prompt (dropped) for a command that does not prompt the model.
fn slash_command(text: &str) -> Option<String> {
    let between = |open: &str, close: &str| -> Option<&str> {
        let start = text.find(open)? + open.len();
        let len = text[start..].find(close)?;
        Some(text[start..start + len].trim())
    };
    let name = between("<command-name>", "</command-name>")?;
    if !text.trim_start().starts_with("<command-") {
        return None;
    }
    if LOCAL_COMMANDS.contains(&name) {
        return Some(String::new());
    }
    let args = between("<command-args>", "</command-args>").unwrap_or("");
    Some(format!("{name} {args}").trim().to_owned())
}
