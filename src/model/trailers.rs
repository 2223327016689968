//! `Entire-Checkpoint:` trailers on user commits (docs/format.md, "Trailers"): a commit may carry
//! several (a squash); all are read, de-duplicated in order, and each token is validated.

use crate::base::id::CheckpointId;

/// The trailer key that links a user commit to its checkpoint.
pub const CHECKPOINT_TRAILER: &str = "Entire-Checkpoint";

/// What one trailer line held.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrailerValue {
    /// A valid checkpoint ID.
    Valid(CheckpointId),
    /// A token that is not a valid ID (reported as a warning by callers).
    Malformed(String),
}

/// Every `Entire-Checkpoint:` value of a commit message, in order, duplicates dropped.
pub fn checkpoint_trailers(message: &str) -> Vec<TrailerValue> {
    let mut out: Vec<TrailerValue> = Vec::new();
    for line in message.lines() {
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        if !key.trim_end().eq_ignore_ascii_case(CHECKPOINT_TRAILER)
            || key.starts_with(char::is_whitespace)
        {
            continue;
        }
        let token = value.split_whitespace().next().unwrap_or("");
        if token.is_empty() {
            continue;
        }
        let v = match CheckpointId::parse(token) {
            Ok(id) => TrailerValue::Valid(id),
            Err(_) => TrailerValue::Malformed(token.to_owned()),
        };
        if !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_all_trailers_in_order() {
        let msg = "Fix it\n\nbody\n\nEntire-Checkpoint: a1b2c3d4e5f6\nEntire-Checkpoint: 01KVBJCWYA4YW6J5M9GP655HZN\nEntire-Checkpoint: a1b2c3d4e5f6\nEntire-Checkpoint: nope\n";
        let t = checkpoint_trailers(msg);
        assert_eq!(t.len(), 3);
        assert_eq!(
            t[0],
            TrailerValue::Valid(CheckpointId::parse("a1b2c3d4e5f6").unwrap())
        );
        assert_eq!(t[2], TrailerValue::Malformed("nope".into()));
        assert!(checkpoint_trailers("no trailers here").is_empty());
    }
}
