//! Which gits we support, and remembering which git binary is which version.
//!
//! Every git call we make works with git [`MIN_GIT_VERSION`] and newer (docs/decisions.md,
//! "The oldest git we support"). Where a newer git offers an option worth having, a capability
//! method says whether this git has it ([`GitVersion::has_pack_refs_include`]) and the caller
//! chooses once, before running git.
//!
//! Asking git its version costs a process (about 2 ms), which is as much as a whole `show`.
//! [`VersionMemo`] remembers the version of each git binary the user runs, by the binary's
//! identity (device, inode, size, modification time), in the user's cache directory, so that
//! a command asks only when the binary is new or was replaced.

use std::fmt;
use std::path::{Path, PathBuf};

/// The oldest git we support: `git fetch --no-write-fetch-head`, the newest option our git calls
/// need, came with 2.29 (as did SHA-256 repositories).
pub const MIN_GIT_VERSION: GitVersion = GitVersion::new(2, 29, 0);

/// `git pack-refs --include` (and `--exclude`).
const PACK_REFS_INCLUDE: GitVersion = GitVersion::new(2, 42, 0);

/// A git release, as `git --version` names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GitVersion {
    major: u32,
    minor: u32,
    patch: u32,
}

impl GitVersion {
    /// `major.minor.patch`.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        GitVersion {
            major,
            minor,
            patch,
        }
    }

    /// The release `text` names: `git --version`'s output (`git version 2.39.5 (Apple
    /// Git-154)`) or the version alone (`2.47.0.rc1.windows.1`). A patch level that is not a
    /// number (`2.45.GIT`, a build from git's own tree) counts as 0. `None` when there is no
    /// `major.minor` to read.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        let text = text.strip_prefix("git version ").unwrap_or(text);
        let mut parts = text
            .split(|c: char| c.is_whitespace() || c == '-')
            .next()?
            .split('.');
        let major = parts.next()?.parse().ok()?;
        let minor = parts.next()?.parse().ok()?;
        let patch = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        Some(GitVersion::new(major, minor, patch))
    }

    /// Whether every git call we make works with this git.
    pub fn is_supported(self) -> bool {
        self >= MIN_GIT_VERSION
    }

    /// Whether `git pack-refs` takes `--include <pattern>` (2.42); older ones pack every ref
    /// with `--all`.
    pub fn has_pack_refs_include(self) -> bool {
        self >= PACK_REFS_INCLUDE
    }
}

impl fmt::Display for GitVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// The most binaries the memo remembers (the oldest are forgotten first).
const MEMO_ENTRIES: usize = 16;
/// The largest memo file read.
const MEMO_MAX_BYTES: u64 = 16 << 10;

/// The versions of the git binaries this user ran, in `$XDG_CACHE_HOME/entire-checkpoints/`
/// (else `~/.cache/entire-checkpoints/`): one line per binary, its identity, `git --version`'s
/// text and its path. A binary replaced in place (an upgrade) has another identity, so it is
/// asked again.
pub(crate) struct VersionMemo {
    file: PathBuf,
}

/// What identifies one git binary on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BinaryId(String);

impl BinaryId {
    /// The identity of the file at `program` (following symbolic links, so a link moved to
    /// another git is another identity); `None` when it cannot be read.
    pub(crate) fn of(program: &Path) -> Option<Self> {
        use std::os::unix::fs::MetadataExt;
        let m = std::fs::metadata(program).ok()?;
        Some(BinaryId(format!(
            "{}:{}:{}:{}.{}",
            m.dev(),
            m.ino(),
            m.size(),
            m.mtime(),
            m.mtime_nsec()
        )))
    }
}

impl VersionMemo {
    /// The memo of the user whose `HOME` (or `XDG_CACHE_HOME`) this process has; `None` without
    /// either.
    pub(crate) fn of_user() -> Option<Self> {
        let base = std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
            .or_else(|| {
                std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|h| h.join(".cache"))
            })?;
        Some(VersionMemo {
            file: base.join("entire-checkpoints").join("git-versions"),
        })
    }

    /// The lines of the memo (none when it is missing or unreadable).
    fn lines(&self) -> Vec<String> {
        match crate::base::fs::read_cache_file(&self.file, MEMO_MAX_BYTES) {
            Ok(Some(bytes)) => String::from_utf8_lossy(&bytes)
                .lines()
                .map(str::to_owned)
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The `git --version` text remembered for `program` with identity `id`.
    pub(crate) fn recall(&self, program: &Path, id: &BinaryId) -> Option<String> {
        let program = program.to_str()?;
        self.lines().into_iter().find_map(|line| {
            let mut fields = line.splitn(3, '\t');
            let (key, text, path) = (fields.next()?, fields.next()?, fields.next()?);
            (key == id.0 && path == program && GitVersion::parse(text).is_some())
                .then(|| text.to_owned())
        })
    }

    /// Remembers that `program` with identity `id` said `text`. Best effort: a memo that cannot
    /// be written only means asking git again next time.
    pub(crate) fn remember(&self, program: &Path, id: &BinaryId, text: &str) {
        let Some(path) = program.to_str() else { return };
        if [path, text].iter().any(|f| f.contains(['\t', '\n', '\r'])) {
            return;
        }
        let mut lines: Vec<String> = self
            .lines()
            .into_iter()
            .filter(|l| l.splitn(3, '\t').nth(2) != Some(path))
            .collect();
        lines.push(format!("{}\t{text}\t{path}", id.0));
        let keep = lines.len().saturating_sub(MEMO_ENTRIES);
        let body: String = lines[keep..].iter().map(|l| format!("{l}\n")).collect();
        let Some(dir) = self.file.parent() else {
            return;
        };
        if let Err(e) = std::fs::create_dir_all(dir)
            .and_then(|()| crate::base::fs::write_cache_file(&self.file, body.as_bytes()))
        {
            log::debug!(
                "cannot remember git's version in {}: {e}",
                self.file.display()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_gits_print() {
        let v = |s| GitVersion::parse(s).map(|v| v.to_string());
        assert_eq!(v("git version 2.47.3\n").as_deref(), Some("2.47.3"));
        assert_eq!(
            v("git version 2.39.5 (Apple Git-154)").as_deref(),
            Some("2.39.5")
        );
        assert_eq!(v("2.45.GIT").as_deref(), Some("2.45.0"));
        assert_eq!(v("2.47.0.rc1.windows.1").as_deref(), Some("2.47.0"));
        assert_eq!(v("git version 2.30.2-1").as_deref(), Some("2.30.2"));
        assert_eq!(v("git version 3.0"), Some("3.0.0".into()));
        assert_eq!(v("version unknown"), None);
        assert_eq!(v(""), None);
    }

    #[test]
    fn supported_and_capabilities() {
        let v = |s| GitVersion::parse(s).unwrap();
        assert!(!v("2.28.9").is_supported());
        assert!(v("2.29.0").is_supported());
        assert!(v("2.39.5").is_supported() && !v("2.39.5").has_pack_refs_include());
        assert!(v("2.42.0").has_pack_refs_include());
        assert!(v("3.0.0").is_supported() && v("3.0.0").has_pack_refs_include());
        assert!(v("2.100.0") > v("2.99.0"));
    }

    #[test]
    fn the_memo_remembers_each_binary_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let memo = VersionMemo {
            file: dir.path().join("cache/git-versions"),
        };
        let git = dir.path().join("git");
        std::fs::write(&git, "one").unwrap();
        let id = BinaryId::of(&git).unwrap();
        assert_eq!(memo.recall(&git, &id), None);
        memo.remember(&git, &id, "2.39.5 (Apple Git-154)");
        assert_eq!(
            memo.recall(&git, &id).as_deref(),
            Some("2.39.5 (Apple Git-154)")
        );
        // Replaced (an upgrade): another identity, asked again.
        std::fs::write(&git, "another binary").unwrap();
        let new_id = BinaryId::of(&git).unwrap();
        assert_ne!(id, new_id);
        assert_eq!(memo.recall(&git, &new_id), None);
        memo.remember(&git, &new_id, "2.47.3");
        assert_eq!(memo.recall(&git, &new_id).as_deref(), Some("2.47.3"));
        assert_eq!(memo.lines().len(), 1, "one line per binary");
        // Another path with the same identity is another binary as far as the memo knows.
        assert_eq!(memo.recall(&dir.path().join("other"), &new_id), None);
        // Bounded.
        for i in 0..40 {
            memo.remember(&dir.path().join(format!("git{i}")), &new_id, "2.47.3");
        }
        assert_eq!(memo.lines().len(), MEMO_ENTRIES);
    }
}
