//! Checkpoint-side commit links: the root `metadata.json`'s `linked_commits`, a list of
//! `{"sha": "<40 or 64 hex>", "repo": "<optional>"}` naming commits linked to the checkpoint
//! without an `Entire-Checkpoint` trailer (docs/format.md, "Metadata fields"). The commits of a
//! checkpoint are its trailers ∪ these links. Entries are unioned, never dropped: an entry this
//! version cannot use (a `sha` that is no full object ID, fields it does not know) is kept as it
//! is, and only skipped when links are read.

use serde_json::{Map, Value};

use crate::model::documents::CheckpointSummary;

/// The root key of the links.
pub const LINKED_COMMITS: &str = "linked_commits";

/// The longest refused entry quoted in a diagnostic, in characters.
const QUOTED_CHARS: usize = 80;

/// What a root summary's `linked_commits` names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LinkedCommits {
    /// Each valid entry's `sha`, once, in the order listed.
    pub shas: Vec<String>,
    /// Each entry skipped, as a diagnostic says why (the entry quoted, cut short).
    pub refused: Vec<String>,
}

/// Whether `sha` is a full object ID as the reference writes one: 40 (SHA-1) or 64 (SHA-256)
/// lowercase hexadecimal digits. Anything else is never used as a revision: it could name a
/// ref, a range or an option.
pub fn is_commit_sha(sha: &str) -> bool {
    matches!(sha.len(), 40 | 64) && sha.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// The entry's `sha`, when it is a string.
fn sha_of(entry: &Value) -> Option<&str> {
    entry.get("sha").and_then(Value::as_str)
}

/// `value` as a diagnostic quotes it: its JSON, cut at [`QUOTED_CHARS`] characters.
fn quoted(value: &Value) -> String {
    let text = value.to_string();
    match text.char_indices().nth(QUOTED_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

impl CheckpointSummary {
    /// The commits `linked_commits` names: valid entries and why each other was skipped. An
    /// absent or `null` key names none; any other value that is no array is one refused entry.
    pub fn linked_commits(&self) -> LinkedCommits {
        let mut out = LinkedCommits::default();
        let entries = match self.extra.get(LINKED_COMMITS) {
            None | Some(Value::Null) => return out,
            Some(Value::Array(entries)) => entries,
            Some(other) => {
                out.refused
                    .push(format!("{LINKED_COMMITS} is no list: {}", quoted(other)));
                return out;
            }
        };
        for entry in entries {
            match sha_of(entry) {
                Some(sha) if is_commit_sha(sha) => {
                    if !out.shas.iter().any(|s| s == sha) {
                        out.shas.push(sha.to_owned());
                    }
                }
                _ => out.refused.push(format!(
                    "{LINKED_COMMITS} entry {} names no commit (a sha of 40 or 64 lowercase hex digits)",
                    quoted(entry)
                )),
            }
        }
        out
    }

    /// Adds `{"sha": ...}` for each of `shas` that `linked_commits` does not list, after those it
    /// lists; returns how many were added. A `linked_commits` that is no list is kept whole
    /// under the new list's first entry as `"kept"` rather than dropped.
    pub fn link_commits(&mut self, shas: &[String]) -> usize {
        let entries: Vec<Value> = shas
            .iter()
            .map(|sha| serde_json::json!({ "sha": sha }))
            .collect();
        self.union_links(&entries)
    }

    /// Adds each of `entries` (whole, `repo` and unknown fields kept) that `linked_commits` does
    /// not list (the same `sha`, or the same entry when it has no string `sha`); returns how
    /// many were added.
    pub fn union_links(&mut self, entries: &[Value]) -> usize {
        if entries.is_empty() {
            return 0;
        }
        let mut list = match self.extra.remove(LINKED_COMMITS) {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list,
            // Never dropped: a value of another shape is kept as an entry of the list.
            Some(other) => vec![Value::Object(Map::from_iter([("kept".to_owned(), other)]))],
        };
        let before = list.len();
        for entry in entries {
            let listed = list.iter().any(|l| match (sha_of(l), sha_of(entry)) {
                (Some(a), Some(b)) => a == b,
                _ => l == entry,
            });
            if !listed {
                list.push(entry.clone());
            }
        }
        let added = list.len() - before;
        self.extra
            .insert(LINKED_COMMITS.to_owned(), Value::Array(list));
        added
    }

    /// The entries of `linked_commits` as stored (none when it is absent or no list).
    pub fn link_entries(&self) -> &[Value] {
        match self.extra.get(LINKED_COMMITS) {
            Some(Value::Array(list)) => list,
            _ => &[],
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "0123456789abcdef0123456789abcdef01234567";

    fn summary(links: Value) -> CheckpointSummary {
        let mut s = CheckpointSummary::default();
        s.extra.insert(LINKED_COMMITS.to_owned(), links);
        s
    }

    #[test]
    fn valid_entries_are_read_and_hostile_ones_refused() {
        let b = "f".repeat(64);
        let s = summary(serde_json::json!([
            {"sha": A, "repo": "gh/o/r"},
            {"sha": b},
            {"sha": A},
            {"sha": "--upload-pack=x"},
            {"sha": "HEAD"},
            {"sha": A.to_uppercase()},
            {"sha": 7},
            "loose",
        ]));
        let links = s.linked_commits();
        assert_eq!(links.shas, [A.to_owned(), b]);
        assert_eq!(links.refused.len(), 5, "{:?}", links.refused);
        assert!(links.refused[0].contains("--upload-pack=x"));
        let odd = summary(serde_json::json!({"sha": A})).linked_commits();
        assert!(odd.shas.is_empty());
        assert_eq!(odd.refused.len(), 1);
        assert_eq!(
            summary(Value::Null).linked_commits(),
            LinkedCommits::default()
        );
    }

    #[test]
    fn links_are_unioned_by_sha_and_never_dropped() {
        let mut s = summary(serde_json::json!([{"sha": A, "repo": "gh/o/r"}, {"x": 1}]));
        let b = "1".repeat(40);
        assert_eq!(s.link_commits(&[A.to_owned(), b.clone()]), 1);
        assert_eq!(s.link_commits(std::slice::from_ref(&b)), 0, "idempotent");
        assert_eq!(
            s.extra[LINKED_COMMITS],
            serde_json::json!([{"sha": A, "repo": "gh/o/r"}, {"x": 1}, {"sha": b}])
        );
        let mut odd = summary(serde_json::json!("not a list"));
        odd.link_commits(std::slice::from_ref(&b));
        assert_eq!(
            odd.extra[LINKED_COMMITS],
            serde_json::json!([{"kept": "not a list"}, {"sha": b}])
        );
    }
}
