//! The commits of a range with the lines each adds: one `git log -p -U0` read into typed
//! records. What it counts is what `git log --numstat` counts: each commit against its first
//! parent, renames detected, merges without a diff, binary files without lines. And what a
//! review's range is compared with when none is named: the upstream, else the default branch.

use std::path::Path;
use std::time::Duration;

use crate::git::repo::Identity;
use crate::git::subprocess::{first_error_line, Git, GitError};

/// One commit of the range and what it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatchCommit {
    /// The full hash.
    pub sha: String,
    /// How many parents it has (a merge has two or more, and no diff here).
    pub parents: usize,
    /// The author.
    pub author: Identity,
    /// The author time, RFC 3339 in the author's zone.
    pub authored_at: String,
    /// The subject line.
    pub subject: String,
    /// The whole message.
    pub message: String,
    /// The files it changed, in git's order.
    pub files: Vec<FilePatch>,
}

/// One file a commit changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FilePatch {
    /// Its path in the commit (the old path when the commit deletes it).
    pub path: String,
    /// How many lines the commit adds to it.
    pub added: usize,
    /// Those lines, without their newline.
    pub added_lines: Vec<String>,
    /// How many lines it removes.
    pub removed: usize,
    /// Whether git sees it as binary (no lines counted, as `--numstat`'s `-`).
    pub binary: bool,
}

/// Why the commits of a range could not be read.
#[derive(Debug, thiserror::Error)]
pub enum PatchError {
    /// git could not run or ran out of time.
    #[error(transparent)]
    Git(#[from] GitError),
    /// git refused the range.
    #[error("{0}")]
    Rejected(String),
}

/// Marks the start of a commit's record: the patch lines that follow a record all start with
/// a diff's own markers, never with this.
const RECORD: char = '\u{1}';

/// The commits `options` and `revisions` select (as `git log` takes them, the revisions after
/// `--end-of-options`), newest first, each with the lines it adds, read in `cwd`.
pub fn log_patches(
    cwd: &Path,
    options: &[String],
    revisions: &[String],
    deadline: Duration,
) -> Result<Vec<PatchCommit>, PatchError> {
    let out = Git::new(cwd)
        // Paths as they are, not C-quoted (only a name with a quote, a backslash or a control
        // character still is).
        .args(["-c", "core.quotePath=false", "log", "-p", "-U0", "-M"])
        // The diff the repository's own settings would change is not the one counted: no
        // colour, no external diff, no text conversion, the whole tree (`diff.relative`), no
        // signature lines among the records (`log.showSignature`), git's own prefixes.
        .args([
            "--no-color",
            "--no-ext-diff",
            "--no-textconv",
            "--no-relative",
        ])
        .args(["--no-show-signature"])
        .args(["--src-prefix=a/", "--dst-prefix=b/"])
        .args([format!(
            "--format={RECORD}%H%x00%P%x00%an%x00%ae%x00%aI%x00%s%x00%B%x00"
        )])
        .args(options)
        .args(["--end-of-options"])
        .args(revisions)
        .args(["--"])
        .run(deadline)?;
    if !out.success() {
        return Err(PatchError::Rejected(first_error_line(&out.stderr)));
    }
    Ok(parse(&out.stdout))
}

/// How long asking for a branch's upstream or the default branch may take.
const LOOKUP_BUDGET: Duration = Duration::from_secs(30);

/// The upstream of the branch checked out in `cwd` (`origin/topic`), `None` when it has none
/// (or HEAD is detached).
pub fn upstream(cwd: &Path) -> Result<Option<String>, GitError> {
    let out = Git::new(cwd)
        .args([
            "rev-parse",
            "--abbrev-ref",
            "--symbolic-full-name",
            "@{upstream}",
        ])
        .run(LOOKUP_BUDGET)?;
    Ok(out
        .success()
        .then(|| out.stdout.trim().to_owned())
        .filter(|u| !u.is_empty()))
}

/// The repository's default branch as seen from `cwd`: what `origin/HEAD` points at, else the
/// first of `origin/main`, `origin/master`, `main`, `master` that exists; `None` when none does.
pub fn default_branch(cwd: &Path) -> Result<Option<String>, GitError> {
    let out = Git::new(cwd)
        .args([
            "symbolic-ref",
            "--quiet",
            "--short",
            "refs/remotes/origin/HEAD",
        ])
        .run(LOOKUP_BUDGET)?;
    if out.success() && !out.stdout.trim().is_empty() {
        return Ok(Some(out.stdout.trim().to_owned()));
    }
    const CANDIDATES: [&str; 4] = [
        "refs/remotes/origin/main",
        "refs/remotes/origin/master",
        "refs/heads/main",
        "refs/heads/master",
    ];
    let out = Git::new(cwd)
        .args(["for-each-ref", "--format=%(refname)"])
        .args(CANDIDATES)
        .run(LOOKUP_BUDGET)?;
    let found: Vec<&str> = out.stdout.lines().collect();
    Ok(CANDIDATES.iter().find(|c| found.contains(c)).map(|c| {
        c.trim_start_matches("refs/remotes/")
            .trim_start_matches("refs/heads/")
            .to_owned()
    }))
}

/// The records of `log_patches`' output.
fn parse(stdout: &str) -> Vec<PatchCommit> {
    let mut commits = Vec::new();
    let mut rest = stdout;
    while let Some(at) = rest.find(RECORD) {
        rest = &rest[at + RECORD.len_utf8()..];
        let mut fields = rest.splitn(8, '\0');
        let mut next = || fields.next().unwrap_or("");
        let (sha, parents, name, email, date, subject, message) =
            (next(), next(), next(), next(), next(), next(), next());
        let tail = fields.next().unwrap_or("");
        // The patch runs to the next record, which starts a line.
        let end = tail
            .find(&format!("\n{RECORD}"))
            .map_or(tail.len(), |e| e + 1);
        commits.push(PatchCommit {
            sha: sha.to_owned(),
            parents: parents.split_whitespace().count(),
            author: Identity {
                name: name.to_owned(),
                email: email.to_owned(),
            },
            authored_at: date.to_owned(),
            subject: subject.to_owned(),
            message: message.to_owned(),
            files: files(&tail[..end]),
        });
        rest = &tail[end..];
    }
    commits
}

/// The files of one commit's patch.
fn files(patch: &str) -> Vec<FilePatch> {
    let mut files: Vec<FilePatch> = Vec::new();
    // Whether the lines read are a hunk's (else a file's header).
    let mut in_hunk = false;
    for line in patch.lines() {
        if let Some(names) = line.strip_prefix("diff --git ") {
            files.push(FilePatch {
                path: header_path(names),
                added: 0,
                added_lines: Vec::new(),
                removed: 0,
                binary: false,
            });
            in_hunk = false;
            continue;
        }
        let Some(file) = files.last_mut() else {
            continue;
        };
        if in_hunk {
            if let Some(text) = line.strip_prefix('+') {
                file.added += 1;
                file.added_lines.push(text.to_owned());
            } else if line.starts_with('-') {
                file.removed += 1;
            }
            continue;
        }
        if line.starts_with("@@") {
            in_hunk = true;
        } else if let Some(path) = line.strip_prefix("+++ b/") {
            file.path = unquote(path);
        } else if let Some(path) = line.strip_prefix("--- a/") {
            // Kept only when the file is deleted (`+++ /dev/null` follows).
            file.path = unquote(path);
        } else if line.starts_with("Binary files ") {
            file.binary = true;
        }
    }
    files
}

/// The new path of `diff --git a/<old> b/<new>`, for a file whose patch has no `+++` line
/// (binary, a mode change): exact when both names are the same, as they are then.
fn header_path(names: &str) -> String {
    // `a/<path> b/<path>`: two halves, one character apart, that name the same path.
    let half = names.len() / 2;
    let same = names
        .get(..half)
        .and_then(|old| old.strip_prefix("a/"))
        .zip(names.get(half + 1..).and_then(|new| new.strip_prefix("b/")))
        .filter(|(old, new)| old == new);
    match same {
        Some((_, new)) => new.to_owned(),
        None => names
            .rsplit_once(" b/")
            .map_or(names, |(_, new)| new)
            .to_owned(),
    }
}

/// A path as a patch header writes it: with a tab after it when it holds a space, and
/// C-quoted when it holds a quote, a backslash or a control character.
fn unquote(path: &str) -> String {
    let path = path.strip_suffix('\t').unwrap_or(path);
    let Some(quoted) = path.strip_prefix('"').and_then(|p| p.strip_suffix('"')) else {
        return path.to_owned();
    };
    let mut bytes = Vec::with_capacity(quoted.len());
    let mut chars = quoted.bytes();
    while let Some(b) = chars.next() {
        if b != b'\\' {
            bytes.push(b);
            continue;
        }
        match chars.next() {
            Some(b'n') => bytes.push(b'\n'),
            Some(b't') => bytes.push(b'\t'),
            Some(b'a') => bytes.push(7),
            Some(b'b') => bytes.push(8),
            Some(b'f') => bytes.push(12),
            Some(b'r') => bytes.push(b'\r'),
            Some(b'v') => bytes.push(11),
            Some(d @ b'0'..=b'7') => {
                let mut v = u32::from(d - b'0');
                for _ in 0..2 {
                    if let Some(d) = chars.next() {
                        v = v * 8 + u32::from(d.wrapping_sub(b'0'));
                    }
                }
                bytes.push(v as u8);
            }
            Some(other) => bytes.push(other),
            None => {}
        }
    }
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_give_each_commit_its_added_lines_and_removed_count() {
        let out = concat!(
            "\u{1}bbb\0aaa\0Ann\0ann@x\02026-01-02T00:00:00+00:00\0second\0second\n\nbody\n\0\n",
            "diff --git a/src/a.go b/src/a.go\n",
            "index 1..2 100644\n",
            "--- a/src/a.go\n",
            "+++ b/src/a.go\n",
            "@@ -1 +1,2 @@\n",
            "-old\n",
            "+new\n",
            "++++ not a header\n",
            "\\ No newline at end of file\n",
            "diff --git a/gone.txt b/gone.txt\n",
            "deleted file mode 100644\n",
            "--- a/gone.txt\n",
            "+++ /dev/null\n",
            "@@ -1,2 +0,0 @@\n",
            "-x\n",
            "-y\n",
            "diff --git a/img.png b/img.png\n",
            "Binary files a/img.png and b/img.png differ\n",
            "\u{1}aaa\0\0Bob\0bob@x\02026-01-01T00:00:00+00:00\0first\0first\n\0\n",
            "diff --git a/with space.txt b/with space.txt\n",
            "new file mode 100644\n",
            "--- /dev/null\n",
            "+++ b/with space.txt\t\n",
            "@@ -0,0 +1 @@\n",
            "+hello\n",
        );
        let commits = parse(out);
        assert_eq!(commits.len(), 2);
        let (second, first) = (&commits[0], &commits[1]);
        assert_eq!(second.sha, "bbb");
        assert_eq!(second.parents, 1);
        assert_eq!(second.author.name, "Ann");
        assert_eq!(second.message, "second\n\nbody\n");
        assert_eq!(second.files.len(), 3);
        assert_eq!(second.files[0].path, "src/a.go");
        assert_eq!(second.files[0].added_lines, ["new", "+++ not a header"]);
        assert_eq!(second.files[0].added, 2);
        assert_eq!(second.files[0].removed, 1);
        assert_eq!(second.files[1].path, "gone.txt");
        assert_eq!(second.files[1].removed, 2);
        assert!(second.files[2].binary && second.files[2].added == 0);
        assert_eq!(second.files[2].path, "img.png");
        assert_eq!(first.parents, 0);
        assert_eq!(first.files[0].path, "with space.txt");
        assert_eq!(first.files[0].added_lines, ["hello"]);
    }

    #[test]
    fn quoted_paths_are_read_back() {
        assert_eq!(unquote("\"a\\\"b\\\\c\\303\\251\""), "a\"b\\cé");
        assert_eq!(unquote("plain"), "plain");
    }
}
