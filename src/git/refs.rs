//! Every ref read and write of a [`Repo`], through the backend its ref format needs.
//!
//! - **files** (loose files and `packed-refs`): one ref is looked up by reading its loose file or
//!   binary-searching the sorted `packed-refs` (`ref_lookup`), a namespace is listed as one
//!   sorted stream of both, and a checkpoint ref is moved by git's own lock protocol
//!   (`ref_update`); libgit2 answers whatever those leave undecided.
//! - **reftable**, or any other format: libgit2 cannot read it, and our own readers of the files
//!   backend must never look at it, so every read and write goes through git itself
//!   (`for-each-ref`, `rev-parse`, `update-ref`).
//!
//! Either way, a multi-ref change is one `git update-ref --stdin` transaction
//! (`start`/`prepare`/`commit`), atomic in both backends. Nothing above `git/` knows which
//! backend answered.

use std::time::Duration;

use git2::Oid;

use crate::git::format::RefFormat;
use crate::git::ref_lookup::{FilesBackend, Lookup};
use crate::git::ref_update::{self, Cas};
use crate::git::repo::{git_err, Repo, RepoError};
use crate::git::subprocess::{first_error_line, require_supported, Git, GitError};

/// How long one local ref command may take (a transaction of a million refs included).
const REF_BUDGET: Duration = Duration::from_secs(600);

/// Why a compare-and-swap of a ref did not happen.
#[derive(Debug, thiserror::Error)]
pub enum RefUpdateError {
    /// The ref was not at the value expected (it moved, was created or was deleted
    /// meanwhile); nothing changed.
    #[error("{name}: the ref moved meanwhile (it is not at the commit expected)")]
    Moved {
        /// The ref.
        name: String,
    },
    /// Another writer holds the ref's lock; nothing changed.
    #[error("{name}: the ref is locked by another writer")]
    Locked {
        /// The ref.
        name: String,
    },
    /// The update failed for another reason (a name collision, an I/O error, git failing).
    #[error(transparent)]
    Repo(#[from] RepoError),
}

impl RefUpdateError {
    /// Whether another writer won a race (the ref moved, or is being moved): worth rebuilding
    /// from the new value and trying again.
    pub fn lost_race(&self) -> bool {
        matches!(
            self,
            RefUpdateError::Moved { .. } | RefUpdateError::Locked { .. }
        )
    }
}

impl crate::base::error::ExitStatus for RefUpdateError {
    fn exit_code(&self) -> i32 {
        match self {
            RefUpdateError::Moved { .. } | RefUpdateError::Locked { .. } => {
                crate::base::error::FAILURE
            }
            RefUpdateError::Repo(e) => e.exit_code(),
        }
    }
}

/// One change of a [`Repo::update_refs`] transaction; each is checked against the value it
/// expects, under the ref's lock.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RefEdit {
    /// Creates `name` at `new`; fails if it exists.
    Create {
        /// The ref.
        name: String,
        /// Its value.
        new: Oid,
    },
    /// Moves `name` from `old` to `new`.
    Update {
        /// The ref.
        name: String,
        /// The new value.
        new: Oid,
        /// The value it must have.
        old: Oid,
    },
    /// Deletes `name` if it is at `old`.
    Delete {
        /// The ref.
        name: String,
        /// The value it must have.
        old: Oid,
    },
}

impl RefEdit {
    /// The ref it changes.
    pub fn name(&self) -> &str {
        match self {
            RefEdit::Create { name, .. }
            | RefEdit::Update { name, .. }
            | RefEdit::Delete { name, .. } => name,
        }
    }

    /// Its line of an `update-ref --stdin -z` script (NUL-terminated fields; the zero ID of
    /// the repository's format means "must not exist").
    fn script(&self, zero: Oid, out: &mut Vec<u8>) {
        let fields = match self {
            RefEdit::Create { name, new } => format!("update {name}\0{new}\0{zero}\0"),
            RefEdit::Update { name, new, old } => format!("update {name}\0{new}\0{old}\0"),
            RefEdit::Delete { name, old } => format!("delete {name}\0{old}\0"),
        };
        out.extend_from_slice(fields.as_bytes());
    }
}

/// What [`Repo::for_each_ref`] hands its callback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Listed<'a> {
    /// One ref: its name, and its target (`None` for a symbolic ref).
    Ref(&'a str, Option<Oid>),
    /// Forget every ref given so far: the listing starts again (from another reader).
    Restart,
}

impl Repo {
    /// `git` on this repository, addressed explicitly (`GIT_DIR`), so that it works whatever
    /// `safe.bareRepository` says and wherever the process runs.
    pub(crate) fn git_cmd(&self) -> Git {
        Git::new(self.workdir().unwrap_or(self.common_dir()))
            .env("GIT_DIR", self.git_dir())
            .env_remove("GIT_COMMON_DIR")
    }

    /// The files backend of this repository, for our own readers and writer of it (only ever
    /// used when that is its ref format).
    fn files_backend(&self) -> FilesBackend<'_> {
        FilesBackend {
            common_dir: self.common_dir(),
            format: self.object_format(),
            packed: Some(&self.packed_refs),
        }
    }

    /// Runs a local git command of the ref backend: its output, or an error naming `what`.
    fn run_git(&self, git: Git, what: &str) -> Result<crate::git::subprocess::Output, RepoError> {
        git.run(REF_BUDGET).map_err(|source| RepoError::Command {
            context: what.to_owned(),
            source,
        })
    }

    /// The object `name` (a full ref name) points at, `None` when the ref does not exist. In the
    /// files backend: the loose file or a binary search of the sorted `packed-refs` (cost
    /// independent of the number of refs), libgit2 for what that cannot decide (symbolic refs,
    /// unsorted `packed-refs`).
    pub(crate) fn ref_tip(&self, name: &str) -> Result<Option<Oid>, RepoError> {
        match self.ref_format() {
            RefFormat::Files => match self.files_backend().lookup(name) {
                Lookup::Found(oid) => Ok(Some(oid)),
                Lookup::Missing => Ok(None),
                Lookup::Unknown => match self.git.refname_to_id(name) {
                    Ok(oid) => Ok(Some(oid)),
                    Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(None),
                    Err(e) => Err(git_err(format!("resolve {name}"))(e)),
                },
            },
            RefFormat::Reftable => {
                let mut found = None;
                self.list_with_git(name, &mut |n, oid| {
                    if n == name {
                        found = oid;
                    }
                })?;
                Ok(found)
            }
        }
    }

    /// The refs among `names` (full ref names) that exist, with their targets: [`Repo::ref_tip`]
    /// of each, asked of git in one `for-each-ref --stdin` where a lookup is a process.
    pub(crate) fn ref_tips(
        &self,
        names: &[String],
    ) -> Result<std::collections::HashMap<String, Oid>, RepoError> {
        let mut out = std::collections::HashMap::new();
        match self.ref_format() {
            RefFormat::Files => {
                for name in names {
                    if let Some(oid) = self.ref_tip(name)? {
                        out.insert(name.clone(), oid);
                    }
                }
            }
            RefFormat::Reftable => {
                if names.is_empty() {
                    return Ok(out);
                }
                let wanted: std::collections::HashSet<&str> =
                    names.iter().map(String::as_str).collect();
                let input: String = names.iter().map(|n| format!("{n}\n")).collect();
                let out_git = self.run_git(
                    self.git_cmd()
                        .args([
                            "for-each-ref",
                            "--format=%(objectname) %(symref) %(refname)",
                            "--stdin",
                        ])
                        .input(input.into_bytes()),
                    "look refs up",
                )?;
                self.parse_listing(&out_git, "for-each-ref --stdin", &mut |name, oid| {
                    if let (true, Some(oid)) = (wanted.contains(name), oid) {
                        out.insert(name.to_owned(), oid);
                    }
                })?;
            }
        }
        Ok(out)
    }

    /// Calls `each` with every ref whose name starts with `prefix` (ending in `/`), in byte
    /// order of name, with its target (`None` for a symbolic ref). In the files backend this is
    /// one sorted stream of the loose and packed refs (memory grows with the loose ones only);
    /// when that reader meets what it cannot decide, `each` gets [`Listed::Restart`] (forget
    /// every ref given so far) and the whole listing again from libgit2. Otherwise
    /// `git for-each-ref`.
    pub(crate) fn for_each_ref(
        &self,
        prefix: &str,
        each: &mut dyn FnMut(Listed<'_>),
    ) -> Result<(), RepoError> {
        match self.ref_format() {
            RefFormat::Files => {
                let direct = self
                    .files_backend()
                    .for_each_under(prefix, |n, oid| each(Listed::Ref(n, Some(oid))));
                if direct.is_some() {
                    return Ok(());
                }
                each(Listed::Restart);
                let mut listed: Vec<(String, Option<Oid>)> = Vec::new();
                let iter = self
                    .git
                    .references_glob(&format!("{prefix}*"))
                    .map_err(git_err(format!("list {prefix}")))?;
                for r in iter {
                    let r = r.map_err(git_err(format!("list {prefix}")))?;
                    listed.push((
                        String::from_utf8_lossy(r.name_bytes()).into_owned(),
                        r.target(),
                    ));
                }
                listed.sort_unstable_by(|a, b| a.0.cmp(&b.0));
                for (n, oid) in &listed {
                    each(Listed::Ref(n, *oid));
                }
                Ok(())
            }
            RefFormat::Reftable => {
                self.list_with_git(prefix, &mut |n, oid| each(Listed::Ref(n, oid)))
            }
        }
    }

    /// Every ref under `prefix` (ending in `/`) as [`Repo::for_each_ref`] lists them, collected.
    pub(crate) fn refs_under(&self, prefix: &str) -> Result<Vec<(String, Option<Oid>)>, RepoError> {
        let mut out = Vec::new();
        self.for_each_ref(prefix, &mut |r| match r {
            Listed::Ref(name, oid) => out.push((name.to_owned(), oid)),
            Listed::Restart => out.clear(),
        })?;
        Ok(out)
    }

    /// Whether any ref's name starts with `prefix` (ending in `/`).
    pub(crate) fn has_refs_under(&self, prefix: &str) -> Result<bool, RepoError> {
        let mut any = false;
        self.for_each_ref(prefix, &mut |r| any = matches!(r, Listed::Ref(..)))?;
        Ok(any)
    }

    /// `git for-each-ref` of `pattern` (a ref name or a prefix ending in `/`), in byte order.
    fn list_with_git(
        &self,
        pattern: &str,
        each: &mut dyn FnMut(&str, Option<Oid>),
    ) -> Result<(), RepoError> {
        let out = self.run_git(
            self.git_cmd().args([
                "for-each-ref",
                "--format=%(objectname) %(symref) %(refname)",
                "--end-of-options",
                pattern,
            ]),
            "list refs",
        )?;
        self.parse_listing(&out, pattern, each)
    }

    /// The refs of a `for-each-ref --format='%(objectname) %(symref) %(refname)'` run.
    fn parse_listing(
        &self,
        out: &crate::git::subprocess::Output,
        what: &str,
        each: &mut dyn FnMut(&str, Option<Oid>),
    ) -> Result<(), RepoError> {
        if !out.success() {
            return Err(RepoError::GitFailed {
                context: format!("git for-each-ref {what}"),
                message: first_error_line(&out.stderr),
            });
        }
        let format = self.object_format();
        for line in out.stdout.lines() {
            let mut fields = line.splitn(3, ' ');
            let (Some(hex), Some(symref), Some(name)) =
                (fields.next(), fields.next(), fields.next())
            else {
                return Err(unfamiliar(line));
            };
            let oid = format.parse(hex).map_err(|_| unfamiliar(line))?;
            each(name, symref.is_empty().then_some(oid));
        }
        Ok(())
    }

    /// Moves `name` to `new` only if it is at `old` (`None`: only if it does not exist),
    /// checked under the ref's lock. In the files backend, checkpoint refs are moved directly
    /// ([`ref_update`]) and anything else goes through libgit2; otherwise `git update-ref`.
    /// `reflog` is the message of the ref's log entry, where one is kept.
    pub(crate) fn set_ref_matching(
        &self,
        name: &str,
        new: Oid,
        old: Option<Oid>,
        reflog: &str,
    ) -> Result<(), RefUpdateError> {
        let zero = self.object_format().zero();
        match self.ref_format() {
            RefFormat::Files => {
                let logs_all = self
                    .config_string("core.logAllRefUpdates")
                    .is_some_and(|v| v.eq_ignore_ascii_case("always"));
                let expected = old.unwrap_or(zero);
                match ref_update::compare_and_swap(
                    self.files_backend(),
                    name,
                    new,
                    expected,
                    logs_all,
                ) {
                    Cas::Done => Ok(()),
                    Cas::Mismatch => Err(RefUpdateError::Moved { name: name.into() }),
                    Cas::Locked => Err(RefUpdateError::Locked { name: name.into() }),
                    Cas::NotHandled => {
                        match self
                            .git
                            .reference_matching(name, new, true, expected, reflog)
                        {
                            Ok(_) => Ok(()),
                            Err(e) => Err(match e.code() {
                                git2::ErrorCode::Modified | git2::ErrorCode::Exists => {
                                    RefUpdateError::Moved { name: name.into() }
                                }
                                git2::ErrorCode::Locked => {
                                    RefUpdateError::Locked { name: name.into() }
                                }
                                _ => git_err(format!("update {name}"))(e).into(),
                            }),
                        }
                    }
                }
            }
            RefFormat::Reftable => {
                let edit = match old {
                    Some(old) => RefEdit::Update {
                        name: name.into(),
                        new,
                        old,
                    },
                    None => RefEdit::Create {
                        name: name.into(),
                        new,
                    },
                };
                self.update_refs(&[edit], reflog)
            }
        }
    }

    /// Creates the refs `new` (none may exist; each name once), all or none. In the files
    /// backend, checkpoint refs are merged into `packed-refs` under its lock (`ref_update`), so
    /// that a bulk fetch of a million refs does not become a million loose files; anything that
    /// path does not handle (a reflog due, a name collision, an unusual `packed-refs`), and any
    /// other backend, is one `git update-ref --stdin` transaction.
    pub(crate) fn create_refs(
        &self,
        new: &[(String, Oid)],
        reflog: &str,
    ) -> Result<(), RefUpdateError> {
        let first = || new.first().map(|(n, _)| n.clone()).unwrap_or_default();
        if new.is_empty() {
            return Ok(());
        }
        if self.ref_format() == RefFormat::Files {
            let logs_all = self
                .config_string("core.logAllRefUpdates")
                .is_some_and(|v| v.eq_ignore_ascii_case("always"));
            match ref_update::create_packed(self.files_backend(), new, logs_all) {
                Cas::Done => return Ok(()),
                Cas::Mismatch => return Err(RefUpdateError::Moved { name: first() }),
                Cas::Locked => return Err(RefUpdateError::Locked { name: first() }),
                Cas::NotHandled => {}
            }
        }
        let edits: Vec<RefEdit> = new
            .iter()
            .map(|(name, new)| RefEdit::Create {
                name: name.clone(),
                new: *new,
            })
            .collect();
        self.update_refs(&edits, reflog)
    }

    /// Points `name` at `new` whatever it points at now (a remote-tracking ref, which git
    /// forces too).
    pub(crate) fn set_ref(&self, name: &str, new: Oid, reflog: &str) -> Result<(), RepoError> {
        match self.ref_format() {
            RefFormat::Files => self
                .git
                .reference(name, new, true, reflog)
                .map(|_| ())
                .map_err(git_err(format!("update {name}"))),
            RefFormat::Reftable => {
                let out = self.run_git(
                    self.git_cmd().args([
                        "update-ref",
                        "-m",
                        reflog,
                        "--end-of-options",
                        name,
                        &new.to_string(),
                    ]),
                    "update a ref",
                )?;
                match out.success() {
                    true => Ok(()),
                    false => Err(RepoError::GitFailed {
                        context: format!("update {name}"),
                        message: first_error_line(&out.stderr),
                    }),
                }
            }
        }
    }

    /// Applies `edits` as one `git update-ref --stdin` transaction: all of them or none, in
    /// either backend. A ref that is not at the value its edit expects fails the whole
    /// transaction with [`RefUpdateError::Moved`] naming it (the first git names).
    pub(crate) fn update_refs(
        &self,
        edits: &[RefEdit],
        reflog: &str,
    ) -> Result<(), RefUpdateError> {
        if edits.is_empty() {
            return Ok(());
        }
        let zero = self.object_format().zero();
        let mut script = b"start\0".to_vec();
        for e in edits {
            e.script(zero, &mut script);
        }
        script.extend_from_slice(b"prepare\0commit\0");
        let out = self.run_git(
            self.git_cmd()
                .args(["update-ref", "-m", reflog, "--stdin", "-z"])
                .input(script),
            "update refs",
        )?;
        if out.success() {
            return Ok(());
        }
        Err(classify_update_failure(&out.stderr).unwrap_or_else(|| {
            RefUpdateError::Repo(RepoError::GitFailed {
                context: format!("update {} ref(s)", edits.len()),
                message: first_error_line(&out.stderr),
            })
        }))
    }

    /// Packs the refs under `prefix` (ending in `/`): `git pack-refs --include <prefix>*` (git
    /// before 2.42 has no `--include` and packs every ref instead). In a reftable repository
    /// this compacts its tables.
    pub(crate) fn pack_refs(&self, prefix: &str) -> Result<(), RepoError> {
        let pattern = format!("{prefix}*");
        let version = require_supported().map_err(|source| RepoError::Command {
            context: "pack refs".into(),
            source,
        })?;
        let args = match version.has_pack_refs_include() {
            true => vec!["pack-refs", "--include", &pattern],
            false => vec!["pack-refs", "--all"],
        };
        let out = self.run_git(self.git_cmd().args(args), "pack refs")?;
        match out.success() {
            true => Ok(()),
            false => Err(RepoError::GitFailed {
                context: "git pack-refs".into(),
                message: first_error_line(&out.stderr),
            }),
        }
    }

    /// The commit `rev` names (any revision git understands, peeled to a commit), `None` when
    /// it names none.
    pub(crate) fn resolve_commit(&self, rev: &str) -> Option<Oid> {
        match self.ref_format() {
            RefFormat::Files => Some(
                self.git
                    .revparse_single(rev)
                    .ok()?
                    .peel_to_commit()
                    .ok()?
                    .id(),
            ),
            RefFormat::Reftable => {
                let out = self
                    .run_git(
                        self.git_cmd().args([
                            "rev-parse",
                            "--verify",
                            "--quiet",
                            "--end-of-options",
                            &format!("{rev}^{{commit}}"),
                        ]),
                        "resolve a revision",
                    )
                    .ok()?;
                if !out.success() {
                    return None;
                }
                self.object_format().parse(out.stdout.trim()).ok()
            }
        }
    }

    /// The full name of the branch `HEAD` names (checked out, or unborn), `None` when detached.
    pub(crate) fn head_ref(&self) -> Option<String> {
        match self.ref_format() {
            RefFormat::Files => {
                let head = self.git.find_reference("HEAD").ok()?;
                head.symbolic_target().ok().flatten().map(str::to_owned)
            }
            RefFormat::Reftable => {
                let out = self
                    .run_git(
                        self.git_cmd().args(["symbolic-ref", "-q", "HEAD"]),
                        "read HEAD",
                    )
                    .ok()?;
                let name = out.stdout.trim();
                (out.success() && !name.is_empty()).then(|| name.to_owned())
            }
        }
    }
}

/// Output of git's ref commands this module does not understand.
fn unfamiliar(line: &str) -> RepoError {
    RepoError::GitFailed {
        context: "list refs".into(),
        message: format!("unfamiliar output from git for-each-ref: {line:?}"),
    }
}

/// A failed `update-ref` transaction that lost a race: the ref was not at the value expected,
/// or its lock was held. git's messages, identical in both backends since 2.45:
/// `cannot lock ref '<name>': is at <oid> but expected <oid>`, `... reference already exists`,
/// `... unable to resolve reference '<name>'` (expected a value, found none); a held lock is
/// `Unable to create '<...>.lock': File exists` (files) or `cannot lock references` (reftable).
fn classify_update_failure(stderr: &str) -> Option<RefUpdateError> {
    let line = stderr.lines().find(|l| l.contains("cannot lock ref"))?;
    let quoted_after = |marker: &str| {
        line.split(marker)
            .nth(1)
            .and_then(|rest| rest.split('\'').next())
            .map(str::to_owned)
    };
    let name = quoted_after("cannot lock ref '")
        .or_else(|| quoted_after("for ref '"))
        .unwrap_or_default();
    if line.contains("File exists") || line.contains("cannot lock references") {
        return Some(RefUpdateError::Locked { name });
    }
    if line.contains("but expected")
        || line.contains("reference already exists")
        || line.contains("unable to resolve reference")
    {
        return Some(RefUpdateError::Moved { name });
    }
    None
}

impl From<GitError> for RefUpdateError {
    fn from(source: GitError) -> Self {
        RefUpdateError::Repo(RepoError::Command {
            context: "update refs".into(),
            source,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn update_failures_are_classified_from_gits_messages() {
        // Captured from git 2.47, files and reftable backends.
        let moved = [
            "fatal: update_ref failed for ref 'refs/x/y': cannot lock ref 'refs/x/y': reference already exists\n",
            "fatal: update_ref failed for ref 'refs/x/y': cannot lock ref 'refs/x/y': is at 99150db028e21e931df8ae6a39a0ef022ea99ca3 but expected ee4270f28cc169e591b78e7e44a521684c1700d5\n",
            "fatal: update_ref failed for ref 'refs/x/z': cannot lock ref 'refs/x/z': unable to resolve reference 'refs/x/z'\n",
            "fatal: prepare: cannot lock ref 'refs/x/w': reference already exists\n",
        ];
        for m in moved {
            match classify_update_failure(m) {
                Some(RefUpdateError::Moved { name }) => assert!(name.starts_with("refs/x/"), "{m}"),
                other => panic!("{m}: {other:?}"),
            }
        }
        let locked = "fatal: update_ref failed for ref 'refs/x/q': cannot lock ref 'refs/x/q': Unable to create '/r/.git/refs/x/q.lock': File exists.\n\nAnother git process seems to be running in this repository";
        assert!(matches!(
            classify_update_failure(locked),
            Some(RefUpdateError::Locked { .. })
        ));
        match classify_update_failure(
            "fatal: update_ref failed for ref 'refs/x/q': cannot lock references\n",
        ) {
            Some(RefUpdateError::Locked { name }) => assert_eq!(name, "refs/x/q"),
            other => panic!("{other:?}"),
        }
        // A name collision is no race: reported as git says it.
        assert!(classify_update_failure(
            "fatal: update_ref failed for ref 'refs/x': 'refs/x/y' exists; cannot create 'refs/x'\n"
        )
        .is_none());
    }

    /// libgit2 reads refs of the files backend only: outside `git/`, no code may ask it for
    /// one (test fixtures aside), or a reftable repository would silently look empty.
    #[test]
    fn refs_are_read_and_written_through_this_module_only() {
        let calls = regex::Regex::new(
            r"\.(references_glob|references|find_reference|refname_to_id|reference|reference_matching|reference_symbolic|revparse|revparse_single|revparse_ext|head|set_head|push_head|push_ref|push_glob|push_range|find_branch|branches)\(",
        )
        .unwrap();
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut offenders = Vec::new();
        let mut dirs = vec![src.clone()];
        while let Some(dir) = dirs.pop() {
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    if path != src.join("git") {
                        dirs.push(path);
                    }
                    continue;
                }
                if path.extension().is_none_or(|e| e != "rs") || path.ends_with("store/tests.rs") {
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap();
                // Unit tests build their fixtures with libgit2 directly.
                let code = text.split("#[cfg(test)]").next().unwrap_or_default();
                for (n, line) in code.lines().enumerate() {
                    if calls.is_match(line) && !line.trim_start().starts_with("//") {
                        offenders.push(format!("{}:{}: {}", path.display(), n + 1, line.trim()));
                    }
                }
            }
        }
        assert!(
            offenders.is_empty(),
            "libgit2 ref calls outside git/:\n{}",
            offenders.join("\n")
        );
    }

    #[test]
    fn transaction_scripts_are_nul_terminated() {
        let zero = Oid::ZERO_SHA1;
        let a = Oid::from_str("1111111111111111111111111111111111111111").unwrap();
        let mut out = Vec::new();
        RefEdit::Create {
            name: "refs/a".into(),
            new: a,
        }
        .script(zero, &mut out);
        RefEdit::Delete {
            name: "refs/b".into(),
            old: a,
        }
        .script(zero, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            format!("update refs/a\0{a}\0{zero}\0delete refs/b\0{a}\0")
        );
    }
}
