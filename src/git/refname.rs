//! Names of checkpoint refs: `refs/entire/checkpoints/<shard>/<id>`, with `<shard>` the last two
//! characters of the ID (docs/format.md, "Ref names" and "Case folding").
//!
//! On case-insensitive filesystems a ULID shard such as `6B` can land in an existing hex shard
//! directory `6b`, and after `git pack-refs` the packed name carries the folded spelling. Every
//! ID therefore has at most one alternate spelling ([`CheckpointRef::folded`]); resolution tries
//! the canonical spelling first and then the folded one, and writes go to whichever exists.

use std::fmt;

use crate::base::id::{self, CheckpointId};

/// The namespace every checkpoint ref lives under.
pub const CHECKPOINT_REF_PREFIX: &str = "refs/entire/checkpoints/";

/// The error for an ID that cannot name a ref. [`CheckpointId`] is always valid, so this only
/// comes from [`ref_name_for`] on raw strings.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot build checkpoint ref: invalid checkpoint ID {0:?}")]
pub struct RefNameError(pub String);

/// Why a ref under the prefix is not a checkpoint ref. Such refs are foreign (leftovers of other
/// designs such as `v1/main` or `v2/full/...`): never listed, pushed or deleted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ForeignRef {
    /// Not under `refs/entire/checkpoints/` at all.
    #[error("{0} is not under {CHECKPOINT_REF_PREFIX}")]
    OutsidePrefix(String),
    /// Not exactly `<shard>/<id>`, or the shard does not match the ID.
    #[error("{0} is not of the form {CHECKPOINT_REF_PREFIX}<shard>/<id>")]
    BadShape(String),
    /// Consistently sharded, but the leaf is not an ID format this version knows.
    #[error("{0} names an unknown checkpoint ID format")]
    UnknownIdFormat(String),
}

/// A checkpoint ref: an ID plus the exact spelling of its ref name (canonical or case-folded).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CheckpointRef {
    name: String,
    id: CheckpointId,
}

/// Builds the canonical ref name of a raw ID string; an invalid ID is an error, never a malformed
/// ref such as `refs/entire/checkpoints//`.
pub fn ref_name_for(raw: &str) -> Result<String, RefNameError> {
    CheckpointId::parse(raw)
        .map(|id| CheckpointRef::canonical(&id).name)
        .map_err(|_| RefNameError(raw.to_owned()))
}

/// The opposite-case spelling of a shard: lowercase if that differs, else uppercase; `None` when
/// both are the same (an all-digit shard).
fn fold_shard(shard: &str) -> Option<String> {
    let lower = shard.to_ascii_lowercase();
    if lower != shard {
        return Some(lower);
    }
    let upper = shard.to_ascii_uppercase();
    (upper != shard).then_some(upper)
}

/// Why a ref name's tail is no checkpoint ref's ([`check_tail`]).
enum TailError {
    /// As [`ForeignRef::BadShape`].
    Shape,
    /// As [`ForeignRef::UnknownIdFormat`].
    IdFormat,
}

/// Checks a ref name's tail after [`CHECKPOINT_REF_PREFIX`] as [`CheckpointRef::parse`] checks
/// it, allocating nothing for a canonical spelling; returns its checkpoint ID's text and whether
/// the shard is the canonical spelling.
fn check_tail(tail: &str) -> Result<(&str, bool), TailError> {
    let (shard, leaf) = tail.split_once('/').ok_or(TailError::Shape)?;
    if shard.is_empty() || leaf.is_empty() || leaf.contains('/') {
        return Err(TailError::Shape);
    }
    if !id::shard_for(leaf).eq_ignore_ascii_case(shard) {
        return Err(TailError::Shape);
    }
    if id::kind_of(leaf).is_none() {
        return Err(TailError::IdFormat);
    }
    // A valid ID is ASCII: its shard (`CheckpointId::shard`) is its last two bytes. One of the
    // two spellings, compared without building their names: `list` parses every checkpoint ref.
    let canonical = &leaf[leaf.len() - 2..];
    if shard == canonical {
        Ok((leaf, true))
    } else if fold_shard(canonical).as_deref() == Some(shard) {
        Ok((leaf, false))
    } else {
        Err(TailError::Shape)
    }
}

/// Whether `tail` (`<shard>/<id>`) after [`CHECKPOINT_REF_PREFIX`] names a checkpoint ref, as
/// [`CheckpointRef::parse`] of the whole name would say, without building the name.
pub fn is_checkpoint_tail(tail: &str) -> bool {
    check_tail(tail).is_ok()
}

/// The checkpoint ID's text of a ref name's tail `<shard>/<id>` after [`CHECKPOINT_REF_PREFIX`]
/// and whether its shard is the canonical spelling ([`CheckpointRef::is_canonical`]), when
/// [`CheckpointRef::parse`] of the whole name would accept it; without building a value.
pub fn parse_tail(tail: &str) -> Option<(&str, bool)> {
    check_tail(tail).ok()
}

impl CheckpointRef {
    /// The canonical ref of `id`.
    pub fn canonical(id: &CheckpointId) -> Self {
        CheckpointRef {
            name: format!("{CHECKPOINT_REF_PREFIX}{}/{}", id.shard(), id),
            id: id.clone(),
        }
    }

    /// The case-folded spelling of `id`'s ref, if its shard has letters.
    pub fn folded(id: &CheckpointId) -> Option<Self> {
        fold_shard(id.shard()).map(|shard| CheckpointRef {
            name: format!("{CHECKPOINT_REF_PREFIX}{shard}/{id}"),
            id: id.clone(),
        })
    }

    /// Both spellings of `id`'s ref, canonical first.
    pub fn spellings(id: &CheckpointId) -> Vec<Self> {
        let mut v = vec![Self::canonical(id)];
        v.extend(Self::folded(id));
        v
    }

    /// Parses a full ref name. The tail must be exactly `<shard>/<id>` with the shard in one of
    /// the ID's two spellings ([`CheckpointRef::spellings`]): a mixed-case shard such as `zN` is
    /// neither, so reads (which try only those two) could never find it.
    pub fn parse(name: &str) -> Result<Self, ForeignRef> {
        let tail = name
            .strip_prefix(CHECKPOINT_REF_PREFIX)
            .ok_or_else(|| ForeignRef::OutsidePrefix(name.to_owned()))?;
        let unknown = || ForeignRef::UnknownIdFormat(name.to_owned());
        let (leaf, _) = check_tail(tail).map_err(|e| match e {
            TailError::Shape => ForeignRef::BadShape(name.to_owned()),
            TailError::IdFormat => unknown(),
        })?;
        Ok(CheckpointRef {
            name: name.to_owned(),
            id: CheckpointId::parse(leaf).map_err(|_| unknown())?,
        })
    }

    /// The full ref name, in the spelling this value was built or parsed with.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The checkpoint ID.
    pub fn id(&self) -> &CheckpointId {
        &self.id
    }

    /// Whether this is the canonical spelling.
    pub fn is_canonical(&self) -> bool {
        // Every value is `<prefix><shard>/<id>` in one of the two spellings.
        self.name
            .strip_prefix(CHECKPOINT_REF_PREFIX)
            .and_then(|tail| tail.split_once('/'))
            .is_some_and(|(shard, _)| shard == self.id.shard())
    }
}

impl fmt::Display for CheckpointRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.name)
    }
}

impl crate::base::error::ExitStatus for RefNameError {
    fn exit_code(&self) -> i32 {
        crate::base::error::FAILURE
    }
}

impl crate::base::error::ExitStatus for ForeignRef {
    fn exit_code(&self) -> i32 {
        match self {
            ForeignRef::OutsidePrefix(_)
            | ForeignRef::BadShape(_)
            | ForeignRef::UnknownIdFormat(_) => crate::base::error::FAILURE,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn id(s: &str) -> CheckpointId {
        CheckpointId::parse(s).unwrap()
    }

    #[test]
    fn canonical_names() {
        assert_eq!(
            CheckpointRef::canonical(&id("a1b2c3d4e5f6")).name(),
            "refs/entire/checkpoints/f6/a1b2c3d4e5f6"
        );
        assert_eq!(
            CheckpointRef::canonical(&id("01KVBJCWYA4YW6J5M9GP655HZN")).name(),
            "refs/entire/checkpoints/ZN/01KVBJCWYA4YW6J5M9GP655HZN"
        );
    }

    #[test]
    fn invalid_ids_build_no_ref() {
        for raw in ["", "not-an-id", "A1B2C3D4E5F6"] {
            let err = ref_name_for(raw).unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("cannot build checkpoint ref: invalid checkpoint ID {raw:?}")
            );
        }
    }

    #[test]
    fn rejected_shapes() {
        for name in [
            "refs/heads/entire/checkpoints/v1",
            "refs/entire/checkpoints/a1/a1b2c3d4e5f6",
            "refs/entire/checkpoints/f6/a1b2c3d4e5f6/0",
            "refs/entire/checkpoints/a1/",
            "refs/entire/checkpoints/a1b2c3d4e5f6",
            "refs/entire/checkpoints/",
            "refs/entire/checkpoints/v1/main",
            "refs/entire/checkpoints/v2/full/0000000000001",
        ] {
            assert!(
                CheckpointRef::parse(name).is_err(),
                "{name} should not parse"
            );
        }
        assert!(matches!(
            CheckpointRef::parse("refs/entire/checkpoints/in/main"),
            Err(ForeignRef::UnknownIdFormat(_))
        ));
    }

    #[test]
    fn case_folded_shard() {
        let ulid = id("01M2DCHJCHTR9T9MZTSB7WV76B");
        let folded = "refs/entire/checkpoints/6b/01M2DCHJCHTR9T9MZTSB7WV76B";
        let parsed = CheckpointRef::parse(folded).unwrap();
        assert_eq!(parsed.id(), &ulid);
        assert!(!parsed.is_canonical());
        assert_eq!(CheckpointRef::folded(&ulid).unwrap().name(), folded);
        let digits = id("01M2DCHJCHTR9T9MZTSB7WV712");
        assert!(CheckpointRef::folded(&digits).is_none());
        assert_eq!(CheckpointRef::spellings(&digits).len(), 1);
        let hex = id("a1b2c3d4e5f6");
        assert_eq!(
            CheckpointRef::folded(&hex).unwrap().name(),
            "refs/entire/checkpoints/F6/a1b2c3d4e5f6"
        );
    }

    /// Found by the `ref_name` fuzz target: `zN` matched the shard `ZN` case-insensitively, so
    /// the ref parsed (and was listed and pushed) although no read could ever locate it.
    #[test]
    fn mixed_case_shard_is_foreign() {
        for name in [
            "refs/entire/checkpoints/zN/01KVBJCWYA4YW6J5M9GP655HZN",
            "refs/entire/checkpoints/Zn/01KVBJCWYA4YW6J5M9GP655HZN",
        ] {
            assert_eq!(
                CheckpointRef::parse(name),
                Err(ForeignRef::BadShape(name.to_owned()))
            );
        }
        for name in [
            "refs/entire/checkpoints/ZN/01KVBJCWYA4YW6J5M9GP655HZN",
            "refs/entire/checkpoints/zn/01KVBJCWYA4YW6J5M9GP655HZN",
        ] {
            assert!(CheckpointRef::parse(name).is_ok(), "{name}");
        }
    }

    proptest! {
        /// `parse_tail` (what `list` parses every ref with) says what `CheckpointRef::parse`
        /// says, of any tail: the same ID, the same spelling, the same refusals.
        #[test]
        fn parse_tail_agrees_with_parse(
            tail in "([0-9a-zA-Z]{0,3}/)?([0-9a-f]{12}|[0-7][0-9A-Za-z]{25}|[0-9a-zA-Z/]{0,27})",
        ) {
            let name = format!("{CHECKPOINT_REF_PREFIX}{tail}");
            let parsed = CheckpointRef::parse(&name).ok();
            let want = parsed.as_ref().map(|r| (r.id().as_str(), r.is_canonical()));
            prop_assert_eq!(parse_tail(&tail), want);
            prop_assert_eq!(is_checkpoint_tail(&tail), parsed.is_some());
        }

        #[test]
        fn round_trip(s in "([0-9a-f]{12}|[0-7][0-9ABCDEFGHJKMNPQRSTVWXYZ]{25})") {
            let id = CheckpointId::parse(&s).unwrap();
            for spelling in CheckpointRef::spellings(&id) {
                let parsed = CheckpointRef::parse(spelling.name()).unwrap();
                prop_assert_eq!(&parsed, &spelling);
                let tail = &spelling.name()[CHECKPOINT_REF_PREFIX.len()..];
                prop_assert_eq!(parse_tail(tail), Some((s.as_str(), spelling.is_canonical())));
                for mixed in [tail.to_ascii_lowercase(), tail.to_ascii_uppercase()] {
                    let want = CheckpointRef::parse(&format!("{CHECKPOINT_REF_PREFIX}{mixed}"))
                        .ok()
                        .map(|r| (r.id().to_string(), r.is_canonical()));
                    let got = parse_tail(&mixed).map(|(id, c)| (id.to_owned(), c));
                    prop_assert_eq!(got, want);
                }
            }
            let canonical = CheckpointRef::canonical(&id);
            prop_assert_eq!(ref_name_for(&s).unwrap(), canonical.name().to_owned());
        }

        #[test]
        fn parse_never_panics(s in "refs/entire/checkpoints/\\PC{0,40}") {
            let _ = CheckpointRef::parse(&s);
        }
    }
}
