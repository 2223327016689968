//! The two formats a repository declares in its config, read once when it is opened: how it
//! names objects (`extensions.objectFormat`: SHA-1 or SHA-256) and how it stores refs
//! (`extensions.refStorage`: the files backend or reftable). Everything that parses, prints or
//! stores an object ID asks the repository's [`ObjectFormat`]; everything that reads or writes a
//! ref goes through the backend its [`RefFormat`] picks (`git::refs`).

use std::path::Path;

use git2::Oid;

/// The hash function naming a repository's objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectFormat {
    /// SHA-1: 20-byte IDs, 40 hex digits (every repository before git 2.29, and still the
    /// default).
    Sha1,
    /// SHA-256: 32-byte IDs, 64 hex digits (`git init --object-format=sha256`; Git 3.0's
    /// default).
    Sha256,
}

impl ObjectFormat {
    /// Both formats, SHA-1 first.
    pub const ALL: [ObjectFormat; 2] = [ObjectFormat::Sha1, ObjectFormat::Sha256];

    /// The number of hex digits of an ID.
    pub const fn hex_len(self) -> usize {
        match self {
            ObjectFormat::Sha1 => 40,
            ObjectFormat::Sha256 => 64,
        }
    }

    /// The number of bytes of an ID.
    pub const fn raw_len(self) -> usize {
        self.hex_len() / 2
    }

    /// The name git gives it (`extensions.objectFormat`, `git rev-parse --show-object-format`).
    pub const fn name(self) -> &'static str {
        match self {
            ObjectFormat::Sha1 => "sha1",
            ObjectFormat::Sha256 => "sha256",
        }
    }

    /// The format whose IDs have `hex_len` hex digits.
    pub fn of_hex_len(hex_len: usize) -> Option<ObjectFormat> {
        ObjectFormat::ALL
            .into_iter()
            .find(|f| f.hex_len() == hex_len)
    }

    /// The format whose IDs have `raw_len` bytes.
    pub fn of_raw_len(raw_len: usize) -> Option<ObjectFormat> {
        ObjectFormat::ALL
            .into_iter()
            .find(|f| f.raw_len() == raw_len)
    }

    /// The all-zero ID of this format (git's "no object": a ref that must not exist yet).
    pub fn zero(self) -> Oid {
        match self {
            ObjectFormat::Sha1 => Oid::ZERO_SHA1,
            ObjectFormat::Sha256 => Oid::ZERO_SHA256,
        }
    }

    /// The config lines declaring this format in a repository we create (a side repository, the
    /// partial cache): its objects are the user's repository's, so its format must be too.
    pub(crate) const fn config_lines(self) -> &'static str {
        match self {
            ObjectFormat::Sha1 => "[core]\n\trepositoryformatversion = 0\n",
            ObjectFormat::Sha256 => {
                "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n"
            }
        }
    }

    /// libgit2's name for it.
    pub(crate) fn git2(self) -> git2::ObjectFormat {
        match self {
            ObjectFormat::Sha1 => git2::ObjectFormat::Sha1,
            ObjectFormat::Sha256 => git2::ObjectFormat::Sha256,
        }
    }

    /// Parses a full hex ID of this format (either case). An ID of the other format is refused
    /// with an error that says which it is, so a SHA-256 ID given to a SHA-1 repository (or the
    /// reverse) is named as such rather than as "invalid".
    pub fn parse(self, hex: &str) -> Result<Oid, OidError> {
        let valid_hex = hex.bytes().all(|b| b.is_ascii_hexdigit());
        match ObjectFormat::of_hex_len(hex.len()) {
            Some(f) if f == self && valid_hex => self
                .parse_bytes(hex.as_bytes())
                .ok_or_else(|| OidError::NotHex(hex.to_owned())),
            Some(other) if valid_hex => Err(OidError::OtherFormat {
                id: hex.to_owned(),
                found: other,
                expected: self,
            }),
            _ => Err(OidError::NotHex(hex.to_owned())),
        }
    }

    /// Parses a full hex ID of this format (either case) from bytes, `None` when it is not one:
    /// [`ObjectFormat::parse`] without the error's words, decoded through a table (`list` reads
    /// every checkpoint ref's ID; libgit2's parse cost 640 instructions an ID).
    pub fn parse_bytes(self, hex: &[u8]) -> Option<Oid> {
        if hex.len() != self.hex_len() {
            return None;
        }
        let mut raw = [0u8; ObjectFormat::Sha256.raw_len()];
        for (byte, pair) in raw.iter_mut().zip(hex.chunks_exact(2)) {
            let (high, low) = (
                HEX_VALUE[usize::from(pair[0])],
                HEX_VALUE[usize::from(pair[1])],
            );
            if (high | low) > 0x0f {
                return None;
            }
            *byte = (high << 4) | low;
        }
        ObjectFormat::from_raw(&raw[..self.raw_len()])
    }

    /// Parses a full hex ID of either format, telling them apart by length (for IDs whose
    /// repository is not at hand, such as those read back from our own files, which are
    /// compared with the repository's IDs afterwards).
    pub fn parse_any(hex: &str) -> Result<Oid, OidError> {
        match ObjectFormat::of_hex_len(hex.len()) {
            Some(f) => f.parse(hex),
            None => Err(OidError::NotHex(hex.to_owned())),
        }
    }

    /// An ID from its raw bytes (20 or 32), `None` for any other length.
    pub fn from_raw(bytes: &[u8]) -> Option<Oid> {
        ObjectFormat::of_raw_len(bytes.len())?;
        Oid::from_bytes(bytes).ok()
    }
}

/// The value of each byte as a hex digit (either case), 0xff for a byte that is none.
const HEX_VALUE: [u8; 256] = {
    let mut table = [0xff; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = match b as u8 {
            d @ b'0'..=b'9' => d - b'0',
            d @ b'a'..=b'f' => d - b'a' + 10,
            d @ b'A'..=b'F' => d - b'A' + 10,
            _ => 0xff,
        };
        b += 1;
    }
    table
};

impl std::fmt::Display for ObjectFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ObjectFormat::Sha1 => "SHA-1",
            ObjectFormat::Sha256 => "SHA-256",
        })
    }
}

/// A string that is not an object ID of the expected format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OidError {
    /// Not 40 or 64 hex digits.
    #[error("{0:?} is not an object ID (40 hex digits for SHA-1, 64 for SHA-256)")]
    NotHex(String),
    /// A well-formed ID of the other format.
    #[error("{id} is a {found} object ID, but this repository uses {expected} ({} hex digits)", .expected.hex_len())]
    OtherFormat {
        /// The ID given.
        id: String,
        /// Its format (by its length).
        found: ObjectFormat,
        /// The repository's.
        expected: ObjectFormat,
    },
}

/// How a repository stores its refs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefFormat {
    /// Loose files under `refs/` and a `packed-refs` file: read directly or through libgit2.
    Files,
    /// `reftable` (git 2.45+, Git 3.0's default): libgit2 cannot read it; every ref read and
    /// write goes through git.
    Reftable,
}

impl RefFormat {
    /// The name git gives it (`extensions.refStorage`, `git init --ref-format`).
    pub const fn name(self) -> &'static str {
        match self {
            RefFormat::Files => "files",
            RefFormat::Reftable => "reftable",
        }
    }

    /// The oldest git that reads this format.
    pub const fn git_needed(self) -> (u32, u32) {
        match self {
            RefFormat::Files => (0, 0),
            RefFormat::Reftable => (2, 45),
        }
    }
}

/// The formats a repository's config declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Formats {
    /// `extensions.objectFormat` (SHA-1 when unset).
    pub objects: ObjectFormat,
    /// `extensions.refStorage` (files when unset).
    pub refs: RefFormat,
}

impl Formats {
    /// The formats of a classic repository: SHA-1, files.
    pub const CLASSIC: Formats = Formats {
        objects: ObjectFormat::Sha1,
        refs: RefFormat::Files,
    };

    /// Reads them from the `config` file of the repository whose common dir is `common_dir`.
    /// Extensions count only there, as git reads them (an included file or the global config
    /// cannot declare them), and only with `core.repositoryFormatVersion` 1. A value this
    /// version does not know is an error naming it.
    pub fn read(common_dir: &Path) -> Result<Formats, String> {
        let text = match std::fs::read(common_dir.join("config")) {
            Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Err(_) => return Ok(Formats::CLASSIC),
        };
        let (mut version, mut objects, mut refs) = (0, None, None);
        let mut section = String::new();
        for line in text.lines() {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix('[') {
                let name = rest.split([']', ' ', '"']).next().unwrap_or_default();
                section = name.to_ascii_lowercase();
                // `[core] bare = true` on the same line as the header: rare, handled below.
                let Some((_, after)) = rest.split_once(']') else {
                    continue;
                };
                if after.trim().is_empty() {
                    continue;
                }
                assign(
                    &section,
                    after.trim(),
                    &mut version,
                    &mut objects,
                    &mut refs,
                );
                continue;
            }
            assign(&section, line, &mut version, &mut objects, &mut refs);
        }
        if version < 1 {
            return Ok(Formats::CLASSIC);
        }
        let objects = match objects.as_deref() {
            None | Some("sha1") => ObjectFormat::Sha1,
            Some("sha256") => ObjectFormat::Sha256,
            Some(other) => {
                return Err(format!(
                    "unknown object format {other:?} (extensions.objectFormat)"
                ))
            }
        };
        let refs = match refs.as_deref() {
            None | Some("files") => RefFormat::Files,
            Some("reftable") => RefFormat::Reftable,
            Some(other) => {
                return Err(format!(
                    "unknown ref storage format {other:?} (extensions.refStorage)"
                ))
            }
        };
        Ok(Formats { objects, refs })
    }
}

/// Takes one `key = value` line of `section` into the values [`Formats::read`] looks for.
fn assign(
    section: &str,
    line: &str,
    version: &mut u32,
    objects: &mut Option<String>,
    refs: &mut Option<String>,
) {
    if line.starts_with(['#', ';']) {
        return;
    }
    let Some((key, value)) = line.split_once('=') else {
        return;
    };
    let key = key.trim().to_ascii_lowercase();
    // Values are bare words here; a trailing comment or quotes around them are dropped.
    let value = value
        .split(['#', ';'])
        .next()
        .unwrap_or_default()
        .trim()
        .trim_matches('"')
        .to_ascii_lowercase();
    match (section, key.as_str()) {
        ("core", "repositoryformatversion") => *version = value.parse().unwrap_or(0),
        ("extensions", "objectformat") => *objects = Some(value),
        ("extensions", "refstorage") => *refs = Some(value),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The table's parse is libgit2's: the same ID for a hex ID of the format in either
        /// case, nothing for a wrong length or a byte that is no hex digit.
        #[test]
        fn ids_parse_as_libgit2_parses_them(
            sha256 in proptest::bool::ANY,
            hex in "[0-9a-fA-F]{64}",
            junk in "[^0-9a-fA-F]",
            at in 0usize..64,
        ) {
            let format = if sha256 { ObjectFormat::Sha256 } else { ObjectFormat::Sha1 };
            let hex = &hex[..format.hex_len()];
            let want = Oid::from_str_ext(hex, format.git2()).unwrap();
            proptest::prop_assert_eq!(format.parse_bytes(hex.as_bytes()), Some(want));
            proptest::prop_assert_eq!(format.parse(hex), Ok(want));
            let mut bad = hex.as_bytes().to_vec();
            let at = at % bad.len();
            bad.splice(at..=at, junk.bytes());
            proptest::prop_assert_eq!(format.parse_bytes(&bad), None);
            proptest::prop_assert_eq!(format.parse_bytes(&hex.as_bytes()[1..]), None);
        }
    }

    fn formats(config: &str) -> Result<Formats, String> {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("config"), config).unwrap();
        Formats::read(dir.path())
    }

    #[test]
    fn reads_the_extensions_of_a_version_1_repository() {
        assert_eq!(formats("[core]\n\tbare = false\n"), Ok(Formats::CLASSIC));
        let both = formats(
            "[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n\trefStorage = reftable\n",
        )
        .unwrap();
        assert_eq!(both.objects, ObjectFormat::Sha256);
        assert_eq!(both.refs, RefFormat::Reftable);
        // Extensions of a version 0 repository are not read, as git does not read them.
        assert_eq!(
            formats(
                "[core]\n\trepositoryformatversion = 0\n[extensions]\n\trefstorage = reftable\n"
            ),
            Ok(Formats::CLASSIC)
        );
        // Another section's key of the same name is not an extension.
        assert_eq!(
            formats(
                "[core]\n\trepositoryformatversion = 1\n[remote \"x\"]\n\trefstorage = reftable\n"
            ),
            Ok(Formats::CLASSIC)
        );
        let err = formats("[core]\nrepositoryformatversion=1\n[extensions]\nrefstorage = other\n")
            .unwrap_err();
        assert!(err.contains("\"other\""), "{err}");
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(Formats::read(dir.path()), Ok(Formats::CLASSIC));
    }

    #[test]
    fn ids_of_either_format_are_parsed_by_the_format_expected() {
        let sha1 = "a".repeat(40);
        let sha256 = "b".repeat(64);
        assert_eq!(ObjectFormat::Sha1.parse(&sha1).unwrap().to_string(), sha1);
        assert_eq!(
            ObjectFormat::Sha256.parse(&sha256).unwrap().to_string(),
            sha256
        );
        let err = ObjectFormat::Sha1.parse(&sha256).unwrap_err();
        assert!(matches!(
            err,
            OidError::OtherFormat {
                found: ObjectFormat::Sha256,
                ..
            }
        ));
        assert!(err.to_string().contains("SHA-256 object ID"), "{err}");
        assert!(err.to_string().contains("uses SHA-1"), "{err}");
        assert!(matches!(
            ObjectFormat::Sha256.parse(&sha1),
            Err(OidError::OtherFormat {
                found: ObjectFormat::Sha1,
                ..
            })
        ));
        for bad in ["", "abc", &"g".repeat(40), &"a".repeat(41)] {
            assert!(
                matches!(ObjectFormat::Sha1.parse(bad), Err(OidError::NotHex(_))),
                "{bad}"
            );
            assert!(ObjectFormat::parse_any(bad).is_err(), "{bad}");
        }
        assert_eq!(
            ObjectFormat::parse_any(&sha256).unwrap().object_format(),
            git2::ObjectFormat::Sha256
        );
        assert_eq!(ObjectFormat::Sha256.zero().to_string(), "0".repeat(64));
        assert_eq!(ObjectFormat::Sha1.zero().to_string(), "0".repeat(40));
        let raw = [7u8; 32];
        assert_eq!(
            ObjectFormat::from_raw(&raw).map(|o| o.object_format()),
            Some(git2::ObjectFormat::Sha256)
        );
        assert!(ObjectFormat::from_raw(&[1u8; 21]).is_none());
    }
}
