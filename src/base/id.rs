//! Checkpoint IDs: the legacy 12-character lowercase hex form and the 26-character canonical ULID.
//!
//! A [`CheckpointId`] can only be built by parsing or minting, so holding one proves the string is
//! valid. Parsing is strict: ULIDs must be canonical (uppercase Crockford base32, no alias
//! letters, first character `0`–`7`), because the `ulid` crate alone accepts lowercase input and
//! wraps an overflowing first character (docs/format.md, "Checkpoint IDs").

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Length of a legacy hex checkpoint ID.
pub const HEX_LEN: usize = 12;
/// Length of a ULID checkpoint ID, and the longest ID of any kind.
pub const ULID_LEN: usize = 26;
/// `display_short` truncates non-ULID IDs to this many characters.
pub const SHORT_ID_LEN: usize = 12;

/// The digits of a canonical ULID (Crockford's base 32, upper case), what
/// [`is_crockford_upper`] matches.
#[cfg(test)]
const CROCKFORD: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/// The two ID formats. The store decides which one is minted: hex under a git-branch primary,
/// ULID under a git-refs primary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum IdKind {
    /// 12 lowercase hex characters (6 random bytes).
    Hex,
    /// 26-character canonical ULID (48-bit millisecond time + 80 random bits).
    Ulid,
}

/// The error for a string that is neither a hex ID nor a canonical ULID.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "invalid checkpoint ID {input:?}: must be 12 lowercase hex characters or a 26-character ULID"
)]
pub struct InvalidIdError {
    /// The rejected input, verbatim.
    pub input: String,
}

/// A validated checkpoint ID.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CheckpointId(String);

fn is_hex_id(s: &str) -> bool {
    s.len() == HEX_LEN
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether each byte is a digit of a canonical ULID (Crockford's base 32, upper case): a table
/// rather than a search of the alphabet, since `list` tests every character of every
/// checkpoint ID it reads.
const CROCKFORD_UPPER: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = matches!(b as u8, b'0'..=b'9' | b'A'..=b'H' | b'J' | b'K' | b'M' | b'N' | b'P'..=b'T' | b'V'..=b'Z');
        b += 1;
    }
    table
};

fn is_ulid_id(s: &str) -> bool {
    let bytes = s.as_bytes();
    // 26 canonical Crockford digits with a first digit of at most 7 are exactly 128 bits, so
    // what passes decodes and prints back unchanged (`canonical_ulids_parse` tests the round
    // trip): no decoding here.
    bytes.len() == ULID_LEN
        && (b'0'..=b'7').contains(&bytes[0])
        && bytes.iter().all(|&b| CROCKFORD_UPPER[usize::from(b)])
}

/// The kind of `s`, or `None` when it is not a valid checkpoint ID. Hex is tested first.
pub fn kind_of(s: &str) -> Option<IdKind> {
    if is_hex_id(s) {
        Some(IdKind::Hex)
    } else if is_ulid_id(s) {
        Some(IdKind::Ulid)
    } else {
        None
    }
}

/// [`CheckpointId::display_short`] of a valid ID's text `s` (its kind is its length).
pub fn display_short(s: &str) -> &str {
    if s.len() == ULID_LEN {
        s
    } else {
        &s[..SHORT_ID_LEN.min(s.len())]
    }
}

/// The refs-namespace shard of any string: its last two characters (the whole string when it is
/// shorter). Works on unvalidated input so that ref-name parsing can check future ID formats.
pub fn shard_for(s: &str) -> &str {
    // The second character from the end starts the shard; a string of fewer is its own shard.
    let start = s.char_indices().rev().nth(1).map_or(0, |(i, _)| i);
    &s[start..]
}

/// The cheap gate for prefix lookup: could `s` be the start of some checkpoint ID?
pub fn could_be_prefix(s: &str) -> bool {
    let b = s.as_bytes();
    let hex = !b.is_empty()
        && b.len() <= HEX_LEN
        && b.iter()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(c));
    let ulid = !b.is_empty()
        && b.len() <= ULID_LEN
        && (b'0'..=b'7').contains(&b[0])
        && b.iter().all(|&c| CROCKFORD_UPPER[usize::from(c)]);
    hex || ulid
}

impl CheckpointId {
    /// Parses and validates `s`.
    pub fn parse(s: &str) -> Result<Self, InvalidIdError> {
        match kind_of(s) {
            Some(_) => Ok(CheckpointId(s.to_owned())),
            None => Err(InvalidIdError {
                input: s.to_owned(),
            }),
        }
    }

    /// Mints a fresh ID of the given kind: hex from 6 random bytes, or a ULID at the current UTC
    /// millisecond with 80 random bits.
    pub fn mint(kind: IdKind) -> Self {
        match kind {
            IdKind::Hex => {
                let bytes: [u8; HEX_LEN / 2] = rand::random();
                CheckpointId(data_encoding::HEXLOWER.encode(&bytes))
            }
            IdKind::Ulid => {
                let ms = std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_millis() as u64)
                    .unwrap_or(0);
                Self::mint_ulid_at(ms)
            }
        }
    }

    /// Mints a ULID at a given Unix time in milliseconds (used by migrations that keep a
    /// checkpoint's original time).
    pub fn mint_ulid_at(unix_ms: u64) -> Self {
        let random: u128 = rand::random::<u128>() & ((1u128 << 80) - 1);
        let ulid = ulid::Ulid::from_parts(unix_ms & ((1u64 << 48) - 1), random);
        CheckpointId(ulid.to_string())
    }

    /// The ID as a string.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The ID's format.
    pub fn kind(&self) -> IdKind {
        if self.0.len() == HEX_LEN {
            IdKind::Hex
        } else {
            IdKind::Ulid
        }
    }

    /// The refs-namespace shard: the last two characters, for both kinds.
    pub fn shard(&self) -> &str {
        &self.0[self.0.len() - 2..]
    }

    /// The path of the checkpoint inside the v1 branch tree: `id[:2]/id[2:]`.
    pub fn v1_path(&self) -> String {
        format!("{}/{}", &self.0[..2], &self.0[2..])
    }

    /// The form shown to people: ULIDs in full (their prefixes are timestamps shared by nearby
    /// checkpoints), anything else truncated to 12 characters.
    pub fn display_short(&self) -> &str {
        display_short(&self.0)
    }

    /// For a ULID, the Unix time in milliseconds it was minted at; `None` for hex.
    pub fn ulid_time_ms(&self) -> Option<u64> {
        match self.kind() {
            IdKind::Ulid => ulid::Ulid::from_string(&self.0)
                .ok()
                .map(|u| u.timestamp_ms()),
            IdKind::Hex => None,
        }
    }
}

impl fmt::Display for CheckpointId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl FromStr for CheckpointId {
    type Err = InvalidIdError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse(s)
    }
}

impl AsRef<str> for CheckpointId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Serialize for CheckpointId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for CheckpointId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        CheckpointId::parse(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn the_crockford_table_is_the_alphabet() {
        for b in 0..=u8::MAX {
            assert_eq!(
                CROCKFORD_UPPER[usize::from(b)],
                CROCKFORD.contains(&b),
                "{b}"
            );
        }
    }

    #[test]
    fn reference_vectors() {
        assert_eq!(kind_of("a1b2c3d4e5f6"), Some(IdKind::Hex));
        assert_eq!(kind_of("01KVBJCWYA4YW6J5M9GP655HZN"), Some(IdKind::Ulid));
        assert_eq!(kind_of("0123456789ABCDEFGHJKMNPQRS"), Some(IdKind::Ulid));
        assert_eq!(kind_of("8123456789ABCDEFGHJKMNPQRS"), None);
        assert_eq!(kind_of("A1B2C3D4E5F6"), None);
        assert_eq!(kind_of("01kvbjcwya4yw6j5m9gp655hzn"), None);
        for alias in ["I", "L", "O", "U"] {
            assert_eq!(kind_of(&format!("01KVBJCWYA4YW6J5M9GP655HZ{alias}")), None);
        }
        assert_eq!(kind_of("01KVBJCWYA4YW6J5M9GP655HZ"), None);
        assert_eq!(kind_of("a1b2c3d4e5f6a"), None);
        assert_eq!(kind_of(""), None);
        assert_eq!(kind_of("../x"), None);
    }

    #[test]
    fn shards_and_paths() {
        let hex = CheckpointId::parse("a1b2c3d4e5f6").unwrap();
        assert_eq!(hex.shard(), "f6");
        assert_eq!(hex.v1_path(), "a1/b2c3d4e5f6");
        let ulid = CheckpointId::parse("01KVBJCWYA4YW6J5M9GP655HZN").unwrap();
        assert_eq!(ulid.shard(), "ZN");
        assert_eq!(
            CheckpointId::parse("0123456789ABCDEFGHJKMNPQRS")
                .unwrap()
                .shard(),
            "RS"
        );
        assert_eq!(shard_for("XYZ"), "YZ");
        assert_eq!(shard_for("a"), "a");
        assert_eq!(shard_for("ab"), "ab");
    }

    #[test]
    fn error_text_matches_reference() {
        let err = CheckpointId::parse("../x").unwrap_err();
        assert_eq!(
            err.to_string(),
            "invalid checkpoint ID \"../x\": must be 12 lowercase hex characters or a 26-character ULID"
        );
    }

    #[test]
    fn display_short() {
        let ulid = CheckpointId::parse("01KVBJCWYA4YW6J5M9GP655HZN").unwrap();
        assert_eq!(ulid.display_short(), "01KVBJCWYA4YW6J5M9GP655HZN");
        let hex = CheckpointId::parse("a1b2c3d4e5f6").unwrap();
        assert_eq!(hex.display_short(), "a1b2c3d4e5f6");
    }

    #[test]
    fn prefix_gate() {
        assert!(could_be_prefix("a1"));
        assert!(could_be_prefix("01KV"));
        assert!(could_be_prefix("8"), "a hex prefix");
        assert!(!could_be_prefix("8Z"));
        assert!(!could_be_prefix(""));
        assert!(!could_be_prefix("a1b2c3d4e5f6a"));
        assert!(!could_be_prefix("../"));
        assert!(could_be_prefix("0123456789ABCDEFGHJKMNPQRS"));
    }

    #[test]
    fn minting() {
        let h = CheckpointId::mint(IdKind::Hex);
        assert_eq!(h.kind(), IdKind::Hex);
        assert_eq!(kind_of(h.as_str()), Some(IdKind::Hex));
        let u = CheckpointId::mint(IdKind::Ulid);
        assert_eq!(kind_of(u.as_str()), Some(IdKind::Ulid));
        let json = serde_json::to_string(&u).unwrap();
        let back: CheckpointId = serde_json::from_str(&json).unwrap();
        assert_eq!(back, u);
        let at = CheckpointId::mint_ulid_at(1_767_225_600_000);
        assert_eq!(at.ulid_time_ms(), Some(1_767_225_600_000));
        assert_eq!(h.ulid_time_ms(), None);
    }

    #[test]
    fn json_decode_validates() {
        assert!(serde_json::from_str::<CheckpointId>("\"A1B2C3D4E5F6\"").is_err());
    }

    proptest! {
        #[test]
        fn any_hex_of_12_parses(s in "[0-9a-f]{12}") {
            let id = CheckpointId::parse(&s).unwrap();
            prop_assert_eq!(id.kind(), IdKind::Hex);
            prop_assert_eq!(id.shard(), &s[10..]);
            prop_assert_eq!(id.v1_path(), format!("{}/{}", &s[..2], &s[2..]));
        }

        #[test]
        fn canonical_ulids_parse(s in "[0-7][0-9ABCDEFGHJKMNPQRSTVWXYZ]{25}") {
            let id = CheckpointId::parse(&s).unwrap();
            prop_assert_eq!(id.kind(), IdKind::Ulid);
            prop_assert!(could_be_prefix(&s[..5]));
            prop_assert_eq!(ulid::Ulid::from_string(&s).unwrap().to_string(), s);
        }

        #[test]
        fn lowercase_or_overflowing_ulids_rejected(s in "[0-7][0-9ABCDEFGHJKMNPQRSTVWXYZ]{25}", hi in "[89A-Z]") {
            prop_assert!(CheckpointId::parse(&s.to_lowercase()).is_err() || s.chars().all(|c| c.is_ascii_digit()));
            let overflow = format!("{hi}{}", &s[1..]);
            prop_assert!(CheckpointId::parse(&overflow).is_err());
        }

        #[test]
        fn parse_never_panics_and_accepts_only_valid(s in "\\PC{0,30}") {
            if let Ok(id) = CheckpointId::parse(&s) {
                prop_assert_eq!(id.as_str(), s.as_str());
                prop_assert!(s.len() == HEX_LEN || s.len() == ULID_LEN);
            }
        }

        #[test]
        fn minted_ulids_round_trip(ms in 0u64..(1u64 << 48)) {
            let id = CheckpointId::mint_ulid_at(ms);
            prop_assert_eq!(CheckpointId::parse(id.as_str()).unwrap(), id.clone());
            prop_assert_eq!(id.ulid_time_ms(), Some(ms));
        }
    }
}
