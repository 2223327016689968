//! What a file-writing tool call wrote, read from its arguments whatever the agent names them:
//! the file is the first of `file_path`, `filePath`, `path`, `notebook_path`, `absolute_path`,
//! `target_file`, `filename`; the text the first of `content`, `contents`, `file_text`,
//! `new_string`, `newString`, `new_str`, `newText`, `new_text`, `new_source`, `code_edit`, or every
//! `edits[]` item's new text; a patch (`patchText`, `patch`, `input`) in the `apply_patch`
//! form names its files itself. A call that names a file but holds no text (Kiro records only
//! the path) is a write of no lines: the file is listed as written, no line is attributed.

use serde_json::Value;

use super::json::str_at;
use super::patch::patch_files;

const FILE_KEYS: [&str; 7] = [
    "file_path",
    "filePath",
    "path",
    "notebook_path",
    "absolute_path",
    "target_file",
    "filename",
];

const TEXT_KEYS: [&str; 10] = [
    "content",
    "contents",
    "file_text",
    "new_string",
    "newString",
    "new_str",
    "newText",
    "new_text",
    "new_source",
    "code_edit",
];

const OLD_KEYS: [&str; 5] = ["old_string", "oldString", "old_str", "oldText", "old_text"];

const PATCH_KEYS: [&str; 3] = ["patchText", "patch", "input"];

/// What a call with arguments `args` is about, to show beside its tool: the file it names, else
/// its command (a string, or a list of words), pattern, query, URL or description, else the
/// first line of arguments that are a string; "" when none is found.
pub(crate) fn subject(args: &Value) -> String {
    if let Value::String(s) = args {
        return s.lines().next().unwrap_or("").to_owned();
    }
    if let Some(file) = FILE_KEYS
        .iter()
        .map(|k| str_at(args, k))
        .find(|s| !s.is_empty())
    {
        return file.to_owned();
    }
    for key in ["command", "cmd", "pattern", "query", "url", "description"] {
        match args.get(key) {
            Some(Value::String(s)) if !s.is_empty() => return s.clone(),
            Some(Value::Array(words)) if !words.is_empty() => {
                let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
                return words.join(" ");
            }
            _ => {}
        }
    }
    String::new()
}

/// What a call wrote to one file.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Wrote {
    pub(super) file: String,
    /// The text it wrote.
    pub(super) text: String,
    /// The text it replaced, when its arguments say ("" otherwise).
    pub(super) replaced: String,
}

/// Each file the call with arguments `args` wrote, with the text it wrote there and the text it
/// replaced: the first of `old_string`, `oldString`, `old_str`, `oldText` (or every `edits[]`
/// item's), or a patch's `-` lines.
pub(super) fn written(args: &Value) -> Vec<Wrote> {
    let patch = match args {
        Value::String(s) => Some(s.as_str()),
        _ => PATCH_KEYS
            .iter()
            .map(|k| str_at(args, k))
            .find(|s| !s.is_empty()),
    };
    if let Some(patch) = patch.filter(|p| p.contains("*** Begin Patch")) {
        return patch_files(patch)
            .into_iter()
            .map(|f| Wrote {
                file: f.file,
                text: f.added.join("\n"),
                replaced: f.removed.join("\n"),
            })
            .collect();
    }
    let Some(file) = FILE_KEYS
        .iter()
        .map(|k| str_at(args, k))
        .find(|s| !s.is_empty())
    else {
        return Vec::new();
    };
    let of = |keys: &[&str]| match keys.iter().find_map(|k| args.get(k)?.as_str()) {
        Some(t) => t.to_owned(),
        None => args
            .get("edits")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| keys.iter().find_map(|k| e.get(k)?.as_str()))
            .collect::<Vec<_>>()
            .join("\n"),
    };
    vec![Wrote {
        file: file.to_owned(),
        text: of(&TEXT_KEYS),
        replaced: of(&OLD_KEYS),
    }]
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_file_and_text_whatever_the_keys() {
        let w = |v: Value| -> Vec<(String, String)> {
            written(&v).into_iter().map(|w| (w.file, w.text)).collect()
        };
        assert_eq!(
            w(json!({"filePath": "/p/a.ts", "oldString": "x", "newString": "y"})),
            [("/p/a.ts".to_owned(), "y".to_owned())]
        );
        assert_eq!(
            w(json!({"path": "a.md", "file_text": "# A\n"})),
            [("a.md".to_owned(), "# A\n".to_owned())]
        );
        assert_eq!(
            w(
                json!({"path": "p.go", "edits": [{"oldText": "a", "newText": "b"}, {"newText": "c"}]})
            ),
            [("p.go".to_owned(), "b\nc".to_owned())]
        );
        assert_eq!(
            w(json!({"path": "kiro/README.md"})),
            [("kiro/README.md".to_owned(), String::new())]
        );
        assert_eq!(
            w(
                json!({"patchText": "*** Begin Patch\n*** Add File: x.ts\n+let x = 1\n*** End Patch"})
            ),
            [("x.ts".to_owned(), "let x = 1".to_owned())]
        );
        assert!(w(json!({"command": "ls"})).is_empty());
        assert_eq!(subject(&json!({"command": "ls -la", "path": "src"})), "src");
        assert_eq!(
            subject(&json!({"command": ["bash", "-lc", "ls"]})),
            "bash -lc ls"
        );
        assert_eq!(
            subject(&json!("*** Begin Patch\n*** Add File: a")),
            "*** Begin Patch"
        );
        assert_eq!(subject(&json!({"x": 1})), "");
        assert!(w(json!({"file_path": 7})).is_empty());
        let replaced =
            |v: Value| -> Vec<String> { written(&v).into_iter().map(|w| w.replaced).collect() };
        assert_eq!(
            replaced(json!({"filePath": "a", "oldString": "x", "newString": "y"})),
            ["x"]
        );
        assert_eq!(
            replaced(
                json!({"path": "p", "edits": [{"oldText": "a", "newText": "b"}, {"oldText": "c"}]})
            ),
            ["a\nc"]
        );
        assert_eq!(
            replaced(
                json!({"patch": "*** Begin Patch\n*** Update File: x\n-gone\n+kept\n*** End Patch"})
            ),
            ["gone"]
        );
        assert_eq!(replaced(json!({"path": "n.md", "content": "x"})), [""]);
    }
}
