//! `git blame --porcelain` of one file, run through the one `git` wrapper and parsed into
//! typed records. No value of the caller becomes an option: the path follows `--`, and the line
//! range and the revision are validated first ([`LineRange`], [`BlameRev`]).

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use crate::base::error::{ExitStatus, FAILURE, USAGE};
use crate::git::subprocess::{first_error_line, Git, GitError, Running};

/// The most one `git blame` may take (a local command: generous, but never a hang).
const BLAME_BUDGET: Duration = Duration::from_secs(600);

/// Errors blaming a file.
#[derive(Debug, thiserror::Error)]
pub enum BlameError {
    /// git could not be run, or did not finish in time.
    #[error(transparent)]
    Git(#[from] GitError),
    /// The range is not `<start>[,<end>]` or `<start>,+<count>` with lines counted from 1.
    #[error("-L {0:?}: expected <start>,<end> or <start>,+<count>, with lines counted from 1")]
    BadRange(String),
    /// The revision would be read as an option.
    #[error("revision {0:?} starts with '-'")]
    BadRev(String),
    /// The path is not in the revision blamed.
    #[error("{path}: no such file in {rev}")]
    NotInRevision {
        /// The path as given.
        path: String,
        /// The revision (`the working tree` when none was given).
        rev: String,
    },
    /// The path is a directory of the working tree: blame reads one file.
    #[error("{0}: is a directory; blame reads a file")]
    Directory(String),
    /// The file is binary: lines mean nothing.
    #[error("{0}: binary file, nothing to blame line by line")]
    Binary(String),
    /// git refused the request (a line out of range, a revision it does not know).
    #[error("git blame {path}: {message}")]
    Rejected {
        /// The path as given.
        path: String,
        /// git's error line.
        message: String,
    },
    /// git's output is not the porcelain format this parser knows.
    #[error("git blame: unfamiliar output line {0:?}")]
    Unfamiliar(String),
}

impl ExitStatus for BlameError {
    fn exit_code(&self) -> i32 {
        match self {
            BlameError::Git(e) => e.exit_code(),
            BlameError::BadRange(_)
            | BlameError::BadRev(_)
            | BlameError::NotInRevision { .. }
            | BlameError::Directory(_)
            | BlameError::Binary(_)
            | BlameError::Rejected { .. } => USAGE,
            BlameError::Unfamiliar(_) => FAILURE,
        }
    }
}

/// A range of lines, 1-based and inclusive; `end: None` runs to the end of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineRange {
    /// The first line.
    pub start: usize,
    /// The last line, if bounded.
    pub end: Option<usize>,
}

impl LineRange {
    /// Parses `<start>`, `<start>,`, `<start>,<end>` or `<start>,+<count>` (git's numeric
    /// forms; its `/regex/` and `:funcname` forms are refused). Lines count from 1 and `end`
    /// is not before `start`.
    pub fn parse(text: &str) -> Result<LineRange, BlameError> {
        let bad = || BlameError::BadRange(text.to_owned());
        let number = |s: &str| -> Result<usize, BlameError> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return Err(bad());
            }
            s.parse::<usize>().ok().filter(|&n| n > 0).ok_or_else(bad)
        };
        let (start, end) = match text.split_once(',') {
            None => (number(text)?, None),
            Some((s, "")) => (number(s)?, None),
            Some((s, e)) => {
                let start = number(s)?;
                let end = match e.strip_prefix('+') {
                    Some(count) => start.checked_add(number(count)? - 1).ok_or_else(bad)?,
                    None => number(e)?,
                };
                (start, Some(end))
            }
        };
        if end.is_some_and(|e| e < start) {
            return Err(bad());
        }
        Ok(LineRange { start, end })
    }

    /// One line.
    pub fn single(line: usize) -> LineRange {
        LineRange {
            start: line,
            end: Some(line),
        }
    }

    /// The `-L` value git is given (numbers only).
    fn arg(&self) -> String {
        match self.end {
            Some(end) => format!("{},{end}", self.start),
            None => format!("{},", self.start),
        }
    }
}

/// A revision to blame at, checked not to start with `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameRev(String);

impl BlameRev {
    /// `rev`, unless git would read it as an option (or it is empty).
    pub fn parse(rev: &str) -> Result<BlameRev, BlameError> {
        if rev.is_empty() || rev.starts_with('-') {
            return Err(BlameError::BadRev(rev.to_owned()));
        }
        Ok(BlameRev(rev.to_owned()))
    }

    /// The revision as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Minutes east of UTC of a `+hhmm`/`-hhmm` zone as git writes it; 0 when it does not parse.
fn tz_minutes(tz: &str) -> i32 {
    let (sign, digits) = match tz.as_bytes().first() {
        Some(b'-') => (-1, &tz[1..]),
        Some(b'+') => (1, &tz[1..]),
        _ => return 0,
    };
    match (digits.len(), digits.parse::<i32>()) {
        (4, Ok(n)) => sign * (n / 100 * 60 + n % 100),
        _ => 0,
    }
}

/// What git blame says of one commit (the same for every line it blames).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BlameCommit {
    /// Its full SHA (all zeros for lines not committed yet).
    pub sha: String,
    /// `author`.
    pub author: String,
    /// `author-mail`, without the angle brackets.
    pub author_mail: String,
    /// `author-time`, seconds since the epoch.
    pub author_time: i64,
    /// `author-tz`, the author's offset from UTC in minutes.
    pub author_tz_minutes: i32,
    /// `summary`: the subject line.
    pub summary: String,
    /// `filename`: the file's path in this commit, relative to the top of the repository
    /// (renames followed).
    pub filename: String,
    /// `boundary`: the commit is the boundary of the range blamed (a root commit, with `-b`
    /// off, is one too).
    pub boundary: bool,
}

impl BlameCommit {
    /// Whether the line is not committed yet (the working tree's changes): git gives it the
    /// all-zero ID of the repository's format (40 or 64 zeros).
    pub fn is_uncommitted(&self) -> bool {
        self.sha.bytes().all(|b| b == b'0')
    }
}

/// One line of the file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlameLine {
    /// Its number in the file blamed (1-based).
    pub line: usize,
    /// Its number in the commit that introduced it.
    pub orig_line: usize,
    /// That commit: an index into [`Blame::commits`].
    pub commit: usize,
    /// The line's text, without its newline.
    pub text: String,
}

/// A parsed blame: the commits once each, and the lines pointing at them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Blame {
    /// Each commit once, in order of first appearance.
    pub commits: Vec<BlameCommit>,
    /// The lines, in file order.
    pub lines: Vec<BlameLine>,
}

/// A `git blame` started by [`start`], running while the caller works.
pub struct PendingBlame {
    git: Running,
    path: String,
    rev: Option<BlameRev>,
}

/// Starts blaming `path` (relative to `cwd`, as git takes it) at `rev` (default: the working
/// tree), lines `range` (default: all); [`PendingBlame::finish`] reads the result.
pub fn start(
    cwd: &Path,
    path: &str,
    range: Option<LineRange>,
    rev: Option<&BlameRev>,
) -> Result<PendingBlame, BlameError> {
    // `--porcelain`, not `--line-porcelain`: the same records, but each commit's details once
    // rather than on every line, which git formats again for each (half its time on a 600-line
    // file of 60 commits; docs/performance.md).
    let mut git = Git::new(cwd).args(["blame", "--porcelain"]);
    if let Some(r) = range {
        git = git.args(["-L".to_owned(), r.arg()]);
    }
    if let Some(rev) = rev {
        git = git.args([rev.as_str()]);
    }
    Ok(PendingBlame {
        git: git.args(["--", path]).start(BLAME_BUDGET)?,
        path: path.to_owned(),
        rev: rev.cloned(),
    })
}

impl PendingBlame {
    /// The file being blamed, as the caller named it.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The revision being blamed (`None`: the working tree).
    pub fn rev(&self) -> Option<&BlameRev> {
        self.rev.as_ref()
    }

    /// Waits for git and parses what it printed.
    pub fn finish(self) -> Result<Blame, BlameError> {
        let PendingBlame { git, path, rev } = self;
        let out = git.wait()?;
        if !out.success() {
            let message = first_error_line(&out.stderr);
            let message = message
                .strip_prefix("fatal: ")
                .unwrap_or(&message)
                .to_owned();
            // git says a directory of the working tree is no such path: say what it is.
            if rev.is_none() && std::path::Path::new(&path).is_dir() {
                return Err(BlameError::Directory(path));
            }
            if message.starts_with("no such path") || message.contains("no such file or directory")
            {
                return Err(BlameError::NotInRevision {
                    path,
                    rev: rev.map_or("the working tree".to_owned(), |r| r.0),
                });
            }
            return Err(BlameError::Rejected { path, message });
        }
        let blame = parse_porcelain(&out.stdout)?;
        // git's own test: a NUL byte makes a file binary.
        if blame.lines.iter().any(|l| l.text.contains('\0')) {
            return Err(BlameError::Binary(path));
        }
        Ok(blame)
    }
}

/// Parses the output of `git blame --porcelain` (or `--line-porcelain`): per line a header
/// `<sha> <orig line> <final line> [<group size>]`, `key value` lines, then the text after a tab.
/// A commit's details (`author`, `summary`, ...) are kept from its first header; later headers
/// of the same commit carry fewer keys, or none. Keys it does not know are skipped (git adds
/// them over time); any other shape is refused.
pub fn parse_porcelain(text: &str) -> Result<Blame, BlameError> {
    let mut blame = Blame::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut lines = text.split_inclusive('\n');
    let unfamiliar = |l: &str| BlameError::Unfamiliar(l.trim_end_matches('\n').to_owned());
    while let Some(header) = lines.next() {
        let header_text = header.trim_end_matches('\n');
        let mut words = header_text.split(' ');
        let (Some(sha), Some(orig), Some(fin)) = (words.next(), words.next(), words.next()) else {
            return Err(unfamiliar(header));
        };
        if !(sha.len() == 40 || sha.len() == 64) || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(unfamiliar(header));
        }
        let (Ok(orig_line), Ok(line)) = (orig.parse::<usize>(), fin.parse::<usize>()) else {
            return Err(unfamiliar(header));
        };
        let mut commit = BlameCommit {
            sha: sha.to_owned(),
            ..BlameCommit::default()
        };
        let text = loop {
            let Some(l) = lines.next() else {
                return Err(unfamiliar(header));
            };
            if let Some(content) = l.strip_prefix('\t') {
                break content.strip_suffix('\n').unwrap_or(content);
            }
            let l = l.trim_end_matches('\n');
            let (key, value) = l.split_once(' ').unwrap_or((l, ""));
            match key {
                "author" => commit.author = value.to_owned(),
                "author-mail" => {
                    commit.author_mail = value
                        .strip_prefix('<')
                        .and_then(|v| v.strip_suffix('>'))
                        .unwrap_or(value)
                        .to_owned()
                }
                "author-time" => commit.author_time = value.parse().unwrap_or_default(),
                "author-tz" => commit.author_tz_minutes = tz_minutes(value),
                "summary" => commit.summary = value.to_owned(),
                "filename" => commit.filename = value.to_owned(),
                "boundary" => commit.boundary = true,
                _ if !key.is_empty()
                    && key.bytes().all(|b| b.is_ascii_lowercase() || b == b'-') => {}
                _ => return Err(unfamiliar(l)),
            }
        };
        let at = match index.get(sha) {
            Some(&i) => i,
            None => {
                blame.commits.push(commit);
                index.insert(sha.to_owned(), blame.commits.len() - 1);
                blame.commits.len() - 1
            }
        };
        blame.lines.push(BlameLine {
            line,
            orig_line,
            commit: at,
            text: text.to_owned(),
        });
    }
    Ok(blame)
}

#[cfg(test)]
mod tests {
    use super::*;

    const A: &str = "1111111111111111111111111111111111111111";
    const B: &str = "2222222222222222222222222222222222222222";

    fn entry(sha: &str, orig: usize, fin: usize, file: &str, text: &str) -> String {
        format!(
            "{sha} {orig} {fin} 1\nauthor Ann\nauthor-mail <ann@example.com>\nauthor-time 1767225600\n\
             author-tz +0000\ncommitter Ann\ncommitter-mail <ann@example.com>\n\
             committer-time 1767225600\ncommitter-tz +0000\nsummary add {file}\n\
             previous 3333333333333333333333333333333333333333 old.go\nfilename {file}\n\t{text}\n"
        )
    }

    #[test]
    fn parses_line_porcelain_into_commits_and_lines() {
        let out = [
            entry(A, 1, 1, "a.go", "package a"),
            entry(B, 4, 2, "b.go", "\tfunc x() {}"),
            entry(A, 2, 3, "a.go", ""),
        ]
        .concat();
        let blame = parse_porcelain(&out).unwrap();
        assert_eq!(blame.commits.len(), 2);
        assert_eq!(blame.commits[0].author_mail, "ann@example.com");
        assert_eq!(blame.commits[1].filename, "b.go");
        assert_eq!(blame.commits[0].author_time, 1767225600);
        let texts: Vec<(&str, usize, usize)> = blame
            .lines
            .iter()
            .map(|l| (l.text.as_str(), l.line, l.commit))
            .collect();
        assert_eq!(
            texts,
            [("package a", 1, 0), ("\tfunc x() {}", 2, 1), ("", 3, 0)]
        );
    }

    #[test]
    fn parses_porcelain_whose_details_come_once_per_commit() {
        // `--porcelain`: a group's first header carries the commit's details the first time the
        // commit appears, `filename` on every group; the other lines, the header alone.
        let first = entry(A, 1, 1, "a.go", "package a").replacen(" 1 1 1\n", " 1 1 2\n", 1);
        let out = format!(
            "{first}{A} 2 2\n\tfunc a() {{}}\n{B} 7 3 1\nauthor Bo\nauthor-mail <bo@example.com>\n\
             author-time 1767225601\nsummary fix b\nfilename b.go\n\tb()\n\
             {A} 9 4 1\nprevious 3333333333333333333333333333333333333333 a.go\nfilename a.go\n\t}}\n"
        );
        let blame = parse_porcelain(&out).unwrap();
        assert_eq!(blame.commits.len(), 2);
        assert_eq!(
            (
                blame.commits[0].author.as_str(),
                blame.commits[0].summary.as_str()
            ),
            ("Ann", "add a.go"),
            "a later header of the commit does not wipe its details"
        );
        assert_eq!(blame.commits[1].author_mail, "bo@example.com");
        let lines: Vec<(usize, usize, usize, &str)> = blame
            .lines
            .iter()
            .map(|l| (l.line, l.orig_line, l.commit, l.text.as_str()))
            .collect();
        assert_eq!(
            lines,
            [
                (1, 1, 0, "package a"),
                (2, 2, 0, "func a() {}"),
                (3, 7, 1, "b()"),
                (4, 9, 0, "}")
            ]
        );
    }

    #[test]
    fn uncommitted_lines_have_the_zero_id_of_either_format() {
        let sha256 = "5".repeat(64);
        let out = [
            entry(&"0".repeat(40), 1, 1, "a.go", "wip"),
            entry(&"0".repeat(64), 2, 2, "a.go", "wip"),
            entry(&sha256, 3, 3, "a.go", "done"),
            entry(A, 4, 4, "a.go", "done"),
        ]
        .concat();
        let blame = parse_porcelain(&out).unwrap();
        let uncommitted: Vec<bool> = blame
            .commits
            .iter()
            .map(BlameCommit::is_uncommitted)
            .collect();
        assert_eq!(uncommitted, [true, true, false, false]);
    }

    #[test]
    fn refuses_what_is_not_porcelain() {
        assert!(parse_porcelain("not a header\n").is_err());
        assert!(parse_porcelain(&format!("{A} 1 1\nauthor Ann\n")).is_err());
        assert!(parse_porcelain(&format!("{A} 1 1\nAuthor: Ann\n\tx\n")).is_err());
        assert_eq!(parse_porcelain("").unwrap(), Blame::default());
    }

    #[test]
    fn ranges_and_revisions_are_validated() {
        assert_eq!(
            LineRange::parse("3,7").unwrap(),
            LineRange {
                start: 3,
                end: Some(7)
            }
        );
        assert_eq!(LineRange::parse("3,+2").unwrap().end, Some(4));
        assert_eq!(LineRange::parse("3").unwrap().end, None);
        assert_eq!(LineRange::parse("3,").unwrap().end, None);
        for bad in ["", "0", "-1", "7,3", "a,b", "/re/", "1,-2", "1,+0", " 1"] {
            assert!(LineRange::parse(bad).is_err(), "{bad}");
        }
        assert!(BlameRev::parse("--output=x").is_err());
        assert!(BlameRev::parse("").is_err());
        assert_eq!(BlameRev::parse("HEAD~2").unwrap().as_str(), "HEAD~2");
    }
}
