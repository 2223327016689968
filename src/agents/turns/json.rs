//! Reading JSON values the way every agent's reader does: a string or nothing, the text of a
//! string or of a list of parts, an array or nothing.

use serde_json::Value;

/// The text of a string, or of a list of parts (strings, or objects with a `text`), joined by
/// newlines; "" for anything else.
/// The JSON lines of `transcript` that hold `needle` (its other lines are not parsed), parsed;
/// lines that do not parse are skipped.
pub(crate) fn lines_holding<'t>(
    transcript: &'t [u8],
    needle: &'t str,
) -> impl Iterator<Item = Value> + 't {
    transcript
        .split(|&b| b == b'\n')
        .filter(move |line| memchr::memmem::find(line, needle.as_bytes()).is_some())
        .filter_map(|line| serde_json::from_slice::<Value>(line).ok())
}

pub(crate) fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(s) => Some(s.as_str()),
                other => other.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The string at `key` of `v` ("" when absent or not a string).
pub(crate) fn str_at<'v>(v: &'v Value, key: &str) -> &'v str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The array at `key` of `v` (empty when absent or not an array): a document transcript's
/// messages (Gemini CLI, OpenCode) or turns (Kiro).
pub(crate) fn array_at<'v>(v: &'v Value, key: &str) -> &'v [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The integer at `pointer` of `v` (0 when absent or not an integer): a token count.
pub(crate) fn int(v: &Value, pointer: &str) -> i64 {
    v.pointer(pointer).and_then(Value::as_i64).unwrap_or(0)
}
