//! `Entire-Checkpoint:` trailers on user commits (docs/format.md, "Trailers").
//!
//! One rule for every command, the reference's: a link is `Entire-Checkpoint:`, optional
//! whitespace (line breaks included), then a token in the shape of an ID (12 lowercase hex
//! characters or a 26-character ULID) followed by whitespace or the end of the message,
//! anywhere in the message. Not git's trailer rule (the last paragraph only), which misses the
//! link when a forge's squash merge appends a `Co-authored-by:` paragraph after it, or when no
//! blank line precedes it. The key is case-sensitive; IDs are validated, kept in order and
//! de-duplicated. A line that starts with the key but whose value is no ID is reported as
//! malformed, so a user learns why it links nothing. At most [`MAX_TRAILERS`] values are read
//! from one message; the rest are counted, so callers can say how many were ignored.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::base::id::CheckpointId;

/// The trailer key that links a user commit to its checkpoint.
pub const CHECKPOINT_TRAILER: &str = "Entire-Checkpoint";

/// How many distinct trailer values are read from one message. Each one read is looked up,
/// and fetched when missing; a message may carry any number (a commit with thousands made every
/// read that resolves it ask the remote thousands of times). A squash merge of a long branch
/// carries one per squashed commit: far fewer than this.
pub const MAX_TRAILERS: usize = 256;

/// What one trailer held.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TrailerValue {
    /// A valid checkpoint ID.
    Valid(CheckpointId),
    /// A line keyed `Entire-Checkpoint:` whose value is not an ID (reported as a warning by
    /// callers, never looked up).
    Malformed(String),
}

/// The reference's pattern: `\s` is ASCII whitespace as in Go, `$` the end of the message.
fn pattern() -> &'static regex::Regex {
    static RE: OnceLock<regex::Regex> = OnceLock::new();
    RE.get_or_init(|| {
        regex::Regex::new(
            r"Entire-Checkpoint:[\t\n\x0C\r ]*([0-9a-f]{12}|[0-9ABCDEFGHJKMNPQRSTVWXYZ]{26})(?:[\t\n\x0C\r ]|$)",
        )
        .expect("the trailer pattern compiles")
    })
}

/// The trailers read from one message: the first [`MAX_TRAILERS`] distinct values, and how
/// many more it carries.
#[derive(Debug, Default)]
pub struct Trailers {
    /// The values read, in order.
    pub values: Vec<TrailerValue>,
    /// The distinct values beyond [`MAX_TRAILERS`], not read.
    pub ignored: usize,
}

impl Trailers {
    /// The warning for the values not read (without the commit it is about); `None` when all
    /// were read.
    pub fn ignored_notice(&self) -> Option<String> {
        ignored_notice(self.ignored)
    }

    /// Adds `v` unless already `seen`: read while under the bound, else counted.
    fn add(&mut self, seen: &mut HashSet<TrailerValue>, v: TrailerValue) {
        if !seen.insert(v.clone()) {
            return;
        }
        match self.values.len() < MAX_TRAILERS {
            true => self.values.push(v),
            false => self.ignored += 1,
        }
    }
}

/// The warning for `ignored` trailer values not read from a message (or from several, each
/// over the bound), `None` for none.
pub fn ignored_notice(ignored: usize) -> Option<String> {
    (ignored > 0).then(|| {
        format!(
            "ignoring {ignored} Entire-Checkpoint trailers beyond the first {MAX_TRAILERS} of a commit message"
        )
    })
}

impl IntoIterator for Trailers {
    type Item = TrailerValue;
    type IntoIter = std::vec::IntoIter<TrailerValue>;

    fn into_iter(self) -> Self::IntoIter {
        self.values.into_iter()
    }
}

impl<'t> IntoIterator for &'t Trailers {
    type Item = &'t TrailerValue;
    type IntoIter = std::slice::Iter<'t, TrailerValue>;

    fn into_iter(self) -> Self::IntoIter {
        self.values.iter()
    }
}

/// Every checkpoint link of a commit message by the rule above, in order, duplicates dropped;
/// the malformed lines after the valid IDs; at most [`MAX_TRAILERS`] of them. Linear in the
/// message's length.
pub fn checkpoint_trailers(message: &str) -> Trailers {
    let mut out = Trailers::default();
    let mut seen = HashSet::new();
    let mut matched_at = HashSet::new();
    for c in pattern().captures_iter(message) {
        let whole = c.get(0).expect("group 0 always matches");
        matched_at.insert(whole.start());
        if let Ok(id) = CheckpointId::parse(&c[1]) {
            out.add(&mut seen, TrailerValue::Valid(id));
        }
    }
    let key = format!("{CHECKPOINT_TRAILER}:");
    let mut at = 0;
    for line in message.split_inclusive('\n') {
        let start = at;
        at += line.len();
        let Some(value) = line.strip_prefix(&key) else {
            continue;
        };
        if matched_at.contains(&start) {
            continue;
        }
        let token = value.split_whitespace().next().unwrap_or("");
        if !token.is_empty() {
            out.add(&mut seen, TrailerValue::Malformed(token.to_owned()));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(msg: &str) -> Vec<String> {
        checkpoint_trailers(msg)
            .into_iter()
            .filter_map(|t| match t {
                TrailerValue::Valid(id) => Some(id.to_string()),
                TrailerValue::Malformed(_) => None,
            })
            .collect()
    }

    #[test]
    fn reads_all_trailers_in_order() {
        let msg = "Fix it\n\nbody\n\nEntire-Checkpoint: a1b2c3d4e5f6\nEntire-Checkpoint: 01KVBJCWYA4YW6J5M9GP655HZN\nEntire-Checkpoint: a1b2c3d4e5f6\nEntire-Checkpoint: nope\n";
        let t = checkpoint_trailers(msg).values;
        assert_eq!(t.len(), 3);
        assert_eq!(
            t[0],
            TrailerValue::Valid(CheckpointId::parse("a1b2c3d4e5f6").unwrap())
        );
        assert_eq!(t[2], TrailerValue::Malformed("nope".into()));
        assert!(checkpoint_trailers("no trailers here").values.is_empty());
    }

    #[test]
    fn the_reference_rule_not_gits() {
        // A squash merge's Co-authored-by paragraph after the link; no blank line before it.
        assert_eq!(
            valid("Fix\n\nEntire-Checkpoint: c265b7484ddf\n\nCo-authored-by: A <a@b>\n"),
            ["c265b7484ddf"]
        );
        assert_eq!(
            valid("chore: version packages\nEntire-Checkpoint: ec8c7839d60e"),
            ["ec8c7839d60e"]
        );
        // Anywhere, even mid-line; whitespace between key and value may span lines.
        assert_eq!(
            valid("see Entire-Checkpoint:\n  a1b2c3d4e5f6 for it"),
            ["a1b2c3d4e5f6"]
        );
        // The key is case-sensitive, and the token must end at whitespace or the end.
        assert!(valid("entire-checkpoint: a1b2c3d4e5f6\n").is_empty());
        assert!(valid("Entire-Checkpoint: a1b2c3d4e5f6.\n").is_empty());
        assert!(valid("Entire-Checkpoint: a1b2c3d4e5f6a\n").is_empty());
        // The shape matches but the ULID overflows: not an ID.
        assert!(valid("Entire-Checkpoint: 8123456789ABCDEFGHJKMNPQRS\n").is_empty());
        // A placeholder line is reported, the real link beside it read.
        assert_eq!(
            checkpoint_trailers(
                "x\n\nEntire-Checkpoint: [commit hash]\nEntire-Checkpoint: 253376691760\n"
            )
            .values,
            [
                TrailerValue::Valid(CheckpointId::parse("253376691760").unwrap()),
                TrailerValue::Malformed("[commit".into())
            ]
        );
    }

    #[test]
    fn at_most_max_trailers_are_read_and_the_rest_counted() {
        let ids: Vec<String> = (0..MAX_TRAILERS + 10)
            .map(|i| format!("{:012x}", 0xabc0_0000_0000_u64 + i as u64))
            .collect();
        // Duplicates neither count against the bound nor as ignored.
        let msg: String = ids
            .iter()
            .chain(&ids)
            .map(|id| format!("Entire-Checkpoint: {id}\n"))
            .chain(["Entire-Checkpoint: nope\n".to_owned()])
            .collect();
        let t = checkpoint_trailers(&msg);
        assert_eq!(valid(&msg), ids[..MAX_TRAILERS]);
        assert_eq!(t.ignored, 11, "10 IDs and the malformed line");
        assert_eq!(
            t.ignored_notice().as_deref(),
            Some("ignoring 11 Entire-Checkpoint trailers beyond the first 256 of a commit message")
        );
        assert_eq!(checkpoint_trailers(&ids[0]).ignored_notice(), None);
    }
}
