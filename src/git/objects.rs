//! The objects of a repository, as the layers above see them: their IDs ([`Oid`]), and blobs
//! whose size has no bound, streamed from `git cat-file`, which inflates a large blob piece by
//! piece (git stores blobs over `core.bigFileThreshold` undeltified and streams them), so
//! neither process ever holds it whole.

use std::path::Path;

use crate::git::repo::{Identity, LibGitError, Repo, Signature};
use crate::git::subprocess::{Git, GitError, Stream};
pub use crate::git::tree::{ObjectKind, Tree, TreeBuilder, TreeEdits, TreeEntry};

/// The ID of an object, of either format ([`crate::git::format::ObjectFormat`]). It is
/// libgit2's for now: every layer above names it from here, so that its representation can
/// change in this one place.
pub use git2::Oid;

/// The bytes of blob `oid` of the repository whose git dir is `git_dir`, as a stream.
pub fn stream_blob(git_dir: &Path, oid: &str) -> Result<Stream, GitError> {
    Git::new(git_dir)
        .env("GIT_DIR", git_dir)
        .args(["cat-file", "blob", oid])
        .stream()
}

/// The SHA-1 ID `data` has as a blob, whatever any repository's format: a stable name derived
/// from contents (not an object of any repository).
pub fn sha1_blob_id(data: &[u8]) -> Result<Oid, LibGitError> {
    Ok(Oid::hash_object(git2::ObjectType::Blob, data)?)
}

/// A commit and what it changed against its first parent.
#[derive(Debug, Clone)]
pub struct CommitChange {
    /// The commit.
    pub id: Oid,
    /// Its message (lossily UTF-8).
    pub message: String,
    /// The paths it changed (both sides of a rename), `/`-separated, each once, in the diff's
    /// order.
    pub paths: Vec<String>,
}

/// Walks of the commit graph and reads of single commits, for the layers above that need an
/// answer about history and no libgit2 type.
impl Repo {
    /// Whether `commit` descends from `ancestor` (is reachable back to it, and is not it).
    pub fn is_descendant_of(&self, commit: Oid, ancestor: Oid) -> Result<bool, LibGitError> {
        Ok(self.git.graph_descendant_of(commit, ancestor)?)
    }

    /// Whether the histories of `a` and `b` meet (they have a merge base).
    pub fn histories_meet(&self, a: Oid, b: Oid) -> bool {
        self.merge_base(a, b).is_some()
    }

    /// The best common ancestor of `a` and `b`, or `None` when their histories do not meet
    /// (or cannot be read).
    pub fn merge_base(&self, a: Oid, b: Oid) -> Option<Oid> {
        self.git.merge_base(a, b).ok()
    }

    /// The ID `data` has as a blob of this repository's format; nothing is written.
    pub fn hash_blob(&self, data: &[u8]) -> Result<Oid, LibGitError> {
        Ok(Oid::hash_object_ext(
            git2::ObjectType::Blob,
            data,
            self.object_format().git2(),
        )?)
    }

    /// The commits reachable from `from` and not from `hide`, newest first (parents after
    /// their children, then by time), at most `limit`.
    pub fn commits_newest_first(
        &self,
        from: &[Oid],
        hide: Option<Oid>,
        limit: usize,
    ) -> Result<Vec<Oid>, LibGitError> {
        let mut walk = self.git.revwalk()?;
        for tip in from {
            walk.push(*tip)?;
        }
        if let Some(hide) = hide {
            walk.hide(hide)?;
        }
        walk.set_sorting(git2::Sort::TOPOLOGICAL | git2::Sort::TIME)?;
        Ok(walk.take(limit).collect::<Result<_, _>>()?)
    }

    /// The shortest abbreviation of commit `id` that is unique here (at least `core.abbrev`
    /// digits), or its full ID when that cannot be worked out.
    pub fn short_id(&self, id: Oid) -> String {
        self.git
            .find_object(id, None)
            .and_then(|o| o.short_id())
            .map_or_else(
                |_| id.to_string(),
                |b| String::from_utf8_lossy(&b).into_owned(),
            )
    }

    /// When commit `id` was made: its committer time, in seconds since the epoch.
    pub fn commit_time(&self, id: Oid) -> Result<i64, LibGitError> {
        Ok(self.git.find_commit(id)?.time().seconds())
    }

    /// The commit `rev` names (any commit-ish) and its raw message, or `None` when it names
    /// none.
    pub fn commit_and_message(&self, rev: &str) -> Option<(Oid, Vec<u8>)> {
        let commit = self.git.find_commit(self.resolve_commit(rev)?).ok()?;
        Some((commit.id(), commit.message_bytes().to_vec()))
    }

    /// The URL pushes to the configured remote `name` go to (its `pushurl`, else its `url`),
    /// or `None` when no remote of that name is configured.
    pub fn push_url(&self, name: &str) -> Option<String> {
        let remote = self.git.find_remote(name).ok()?;
        remote
            .pushurl()
            .ok()
            .flatten()
            .or_else(|| remote.url().ok())
            .map(str::to_owned)
    }

    /// The commit `rev` names and what it changed against its first parent (everything, for
    /// a root commit); an error when `rev` names no commit.
    pub fn commit_change(&self, rev: &str) -> Result<CommitChange, LibGitError> {
        let git = &self.git;
        let head = self
            .resolve_commit(rev)
            .ok_or_else(|| git2::Error::from_str("the revision names no commit"))
            .and_then(|oid| git.find_commit(oid))?;
        let tree = head.tree()?;
        let parent_tree = head.parents().next().and_then(|p| p.tree().ok());
        let diff = git.diff_tree_to_tree(parent_tree.as_ref(), Some(&tree), None)?;
        let mut paths = Vec::new();
        for d in diff.deltas() {
            for f in [d.new_file().path(), d.old_file().path()]
                .into_iter()
                .flatten()
            {
                let p = f.to_string_lossy().replace('\\', "/");
                if !paths.contains(&p) {
                    paths.push(p);
                }
            }
        }
        Ok(CommitChange {
            id: head.id(),
            message: String::from_utf8_lossy(head.message_bytes()).into_owned(),
            paths,
        })
    }
}

/// The object database of a repository, for reading and writing blobs, trees and commits
/// without naming libgit2: of a [`Repo`] ([`Repo::objects`]), of a side repository, or of a
/// [`ScratchObjects`]. A handle: copying it copies a reference.
#[derive(Clone, Copy)]
pub struct Objects<'r>(
    &'r git2::Repository,
    /// Whether the packs were listed again, for a handle that does it once
    /// ([`Repo::list_packs_again_once`]).
    Option<&'r std::cell::Cell<bool>>,
    /// Whether its objects are files of an object directory (not a [`ScratchObjects`]'s
    /// memory).
    bool,
);

impl Repo {
    /// The object database of this repository.
    pub fn objects(&self) -> Objects<'_> {
        Objects(&self.git, self.packs_listed_again.as_ref(), true)
    }
}

impl<'r> Objects<'r> {
    /// The git dir of the repository it belongs to (a scratch one has none of its own).
    pub fn git_dir(self) -> &'r Path {
        self.0.path()
    }

    /// The tree `oid`.
    pub fn find_tree(self, oid: Oid) -> Result<Tree<'r>, LibGitError> {
        Ok(Tree(self.0.find_tree(oid)?))
    }

    /// The commit `oid`.
    pub fn find_commit(self, oid: Oid) -> Result<Commit<'r>, LibGitError> {
        Ok(Commit(self.0.find_commit(oid)?))
    }

    /// The whole contents of blob `oid`.
    pub fn read_blob(self, oid: Oid) -> Result<Vec<u8>, LibGitError> {
        Ok(self.0.find_blob(oid)?.content().to_vec())
    }

    /// Those of `oids` the object database does not hold (a partial clone's promised objects),
    /// in the order given. The packs are listed again once, at the first object not found
    /// ([`Lookups`]), not once for every one.
    pub fn missing(self, oids: impl IntoIterator<Item = Oid>) -> Result<Vec<Oid>, LibGitError> {
        let mut lookups = Lookups::new(self.0.odb()?, self.1);
        Ok(oids.into_iter().filter(|o| !lookups.holds(*o)).collect())
    }

    /// The size and kind of object `oid`, read from its header without inflating it. An object
    /// not held is [`LibGitError::is_not_found`], after the packs were listed again, as libgit2
    /// does at every miss, unless the handle lists them once and already has ([`Lookups`]).
    pub fn header(self, oid: Oid) -> Result<(usize, Option<ObjectKind>), LibGitError> {
        let (size, kind) = Lookups::new(self.0.odb()?, self.1).header(oid)?;
        Ok((size, ObjectKind::of(Some(kind))))
    }

    /// The kind of object `oid`, when the database holds it (the object is parsed).
    pub fn kind_of(self, oid: Oid) -> Result<Option<ObjectKind>, LibGitError> {
        Ok(ObjectKind::of(self.0.find_object(oid, None)?.kind()))
    }

    /// Writes `data` as a blob ([`crate::git::loose`]; the database's write, which writes
    /// nothing when the object is already there, where that leaves it).
    pub fn write_blob(self, data: &[u8]) -> Result<Oid, LibGitError> {
        Ok(crate::git::loose::write_object(
            self.0,
            self.2,
            git2::ObjectType::Blob,
            data,
        )?)
    }

    /// A builder of a tree starting from `base`'s entries (none when `None`).
    pub fn tree_builder(self, base: Option<&Tree<'_>>) -> Result<TreeBuilder<'r>, LibGitError> {
        Ok(TreeBuilder {
            builder: self.0.treebuilder(base.map(|t| &t.0))?,
            repo: self.0,
            on_disk: self.2,
        })
    }

    /// Writes `edits` applied to `base`, and returns the new tree. A path whose way down
    /// crosses an entry that is not a tree, or that is both put and below another put, is an
    /// error, and nothing of it is written.
    pub fn write_edits(self, base: &Tree<'_>, edits: &mut TreeEdits) -> Result<Oid, LibGitError> {
        let mut root = Edit::Below(std::collections::BTreeMap::new());
        for (path, oid) in std::mem::take(&mut edits.0) {
            let mut at = &mut root;
            for name in path.split('/') {
                let Edit::Below(children) = at else {
                    return Err(edit_conflict(&path));
                };
                at = children
                    .entry(name.to_owned())
                    .or_insert_with(|| Edit::Below(std::collections::BTreeMap::new()));
            }
            if matches!(at, Edit::Below(c) if !c.is_empty()) {
                return Err(edit_conflict(&path));
            }
            *at = Edit::Put(oid);
        }
        let Edit::Below(children) = root else {
            return Err(edit_conflict(""));
        };
        self.write_below(Some(base), &children)
    }

    /// Writes `base` (or a new tree) with `children` put in it, and returns it.
    fn write_below(
        self,
        base: Option<&Tree<'_>>,
        children: &std::collections::BTreeMap<String, Edit>,
    ) -> Result<Oid, LibGitError> {
        let mut builder = self.tree_builder(base)?;
        for (name, edit) in children {
            let oid = match edit {
                Edit::Put(oid) => *oid,
                Edit::Below(grandchildren) => {
                    let sub = match base.and_then(|b| b.get_name(name)) {
                        Some(e) if e.kind() == Some(ObjectKind::Tree) => {
                            Some(self.find_tree(e.id())?)
                        }
                        Some(_) => return Err(edit_conflict(name)),
                        None => None,
                    };
                    self.write_below(sub.as_ref(), grandchildren)?
                }
            };
            builder.insert(name, oid, 0o040000)?;
        }
        builder.write()
    }

    /// The paths (both sides of a rename, raw) that differ between trees `old` and `new`.
    pub fn changed_paths(
        self,
        old: Oid,
        new: Oid,
    ) -> Result<std::collections::BTreeSet<Vec<u8>>, LibGitError> {
        let diff = self.diff(old, new)?;
        Ok(diff
            .deltas()
            .flat_map(|d| [d.old_file().path_bytes(), d.new_file().path_bytes()])
            .flatten()
            .map(<[u8]>::to_vec)
            .collect())
    }

    /// The patch ID of the change from tree `old` to tree `new` (as `git patch-id` gives it:
    /// the same for the same change made on different bases).
    pub fn patch_id(self, old: Oid, new: Oid) -> Result<Oid, LibGitError> {
        Ok(self.diff(old, new)?.patchid(None)?)
    }

    fn diff(self, old: Oid, new: Oid) -> Result<git2::Diff<'r>, LibGitError> {
        let (old, new) = (self.0.find_tree(old)?, self.0.find_tree(new)?);
        Ok(self.0.diff_tree_to_tree(Some(&old), Some(&new), None)?)
    }

    /// Writes a commit of `tree` on `parents` (in order), and returns it. No ref moves.
    pub fn commit(
        self,
        author: &Signature,
        committer: &Signature,
        message: &str,
        tree: &Tree<'_>,
        parents: &[&Commit<'_>],
    ) -> Result<Oid, LibGitError> {
        let parents: Vec<&git2::Commit<'_>> = parents.iter().map(|c| &c.0).collect();
        let data =
            self.0
                .commit_create_buffer(&author.0, &committer.0, message, &tree.0, &parents)?;
        Ok(crate::git::loose::write_object(
            self.0,
            self.2,
            git2::ObjectType::Commit,
            &data,
        )?)
    }
}

/// What [`Objects::write_edits`] does at a path: put a tree there, or edit the tree there.
enum Edit {
    Put(Oid),
    Below(std::collections::BTreeMap<String, Edit>),
}

/// The error of edits of a tree that cannot be made.
fn edit_conflict(path: &str) -> LibGitError {
    git2::Error::new(
        git2::ErrorCode::Invalid,
        git2::ErrorClass::Tree,
        format!("cannot put a tree at '{path}': a path on its way is not a tree, or is also put"),
    )
    .into()
}

/// Look-ups of whether objects are held that list the packs again at most once. libgit2 lists
/// the pack directory again (a directory scan and a probe of its multi-pack index) every time
/// an object is not found, so that a pack another process added since (`git fetch`, `git gc`)
/// is seen: a warm blame over checkpoints whose transcripts are mostly absent (a partial
/// clone's) scanned the directory 78 times. Here the first miss lists them again, for every
/// object asked after it (of one call, or of the handle's whole life when it does it once:
/// [`Repo::list_packs_again_once`]); a pack added after that is not seen.
struct Lookups<'r> {
    odb: git2::Odb<'r>,
    listed_again: bool,
    /// The handle's own record, when it lists them once in its life.
    handle: Option<&'r std::cell::Cell<bool>>,
}

impl<'r> Lookups<'r> {
    fn new(odb: git2::Odb<'r>, handle: Option<&'r std::cell::Cell<bool>>) -> Self {
        Lookups {
            odb,
            listed_again: handle.is_some_and(std::cell::Cell::get),
            handle,
        }
    }

    /// Whether the database holds `oid`.
    fn holds(&mut self, oid: Oid) -> bool {
        let no_listing = git2::OdbLookupFlags::NO_REFRESH;
        if self.odb.exists_ext(oid, no_listing) {
            return true;
        }
        if self.listed_again {
            return false;
        }
        self.mark_listed_again();
        if let Err(e) = self.odb.refresh() {
            log::info!("listing the packs again: {}", e.message());
        }
        self.odb.exists_ext(oid, no_listing)
    }

    /// The size and type of `oid`, from its header. Read at once (one look-up; libgit2 lists the
    /// packs again itself when it misses) until the packs were listed again; after that, only
    /// once a look-up that lists nothing has found it.
    fn header(&mut self, oid: Oid) -> Result<(usize, git2::ObjectType), git2::Error> {
        if self.listed_again && !self.odb.exists_ext(oid, git2::OdbLookupFlags::NO_REFRESH) {
            return Err(git2::Error::new(
                git2::ErrorCode::NotFound,
                git2::ErrorClass::Odb,
                format!("object not found - no match for id ({oid})"),
            ));
        }
        let read = self.odb.read_header(oid);
        if read
            .as_ref()
            .is_err_and(|e| e.code() == git2::ErrorCode::NotFound)
        {
            self.mark_listed_again();
        }
        read
    }

    fn mark_listed_again(&mut self) {
        self.listed_again = true;
        if let Some(handle) = self.handle {
            handle.set(true);
        }
    }
}

/// An object database in memory, written to and read from but never saved: for trees built
/// only to be looked at (the file-system mirror's).
pub struct ScratchObjects(git2::Repository);

impl ScratchObjects {
    /// A new, empty one.
    pub fn new() -> Result<Self, LibGitError> {
        let odb = git2::Odb::new()?;
        odb.add_new_mempack_backend(1000)?;
        Ok(ScratchObjects(git2::Repository::from_odb(odb)?))
    }

    /// Its object database.
    pub fn objects(&self) -> Objects<'_> {
        Objects(&self.0, None, false)
    }
}

/// A commit read from an object database.
#[derive(Clone)]
pub struct Commit<'r>(git2::Commit<'r>);

impl<'r> Commit<'r> {
    /// Its ID.
    pub fn id(&self) -> Oid {
        self.0.id()
    }

    /// Its tree.
    pub fn tree(&self) -> Result<Tree<'r>, LibGitError> {
        Ok(Tree(self.0.tree()?))
    }

    /// The ID of its tree.
    pub fn tree_id(&self) -> Oid {
        self.0.tree_id()
    }

    /// Its parents, in order (those that can be read).
    pub fn parents(&self) -> impl Iterator<Item = Commit<'r>> + '_ {
        self.0.parents().map(Commit)
    }

    /// Its author: name and email (lossily UTF-8).
    pub fn author(&self) -> Identity {
        let a = self.0.author();
        Identity {
            name: String::from_utf8_lossy(a.name_bytes()).into_owned(),
            email: String::from_utf8_lossy(a.email_bytes()).into_owned(),
        }
    }

    /// When it was authored: seconds since the epoch, and the author's zone offset in minutes.
    pub fn author_when(&self) -> (i64, i32) {
        let when = self.0.author().when();
        (when.seconds(), when.offset_minutes())
    }

    /// The first paragraph of its message, on one line (empty when it has none).
    pub fn summary(&self) -> String {
        self.0.summary().ok().flatten().unwrap_or("").to_owned()
    }

    /// When it was made: its committer time, in seconds since the epoch.
    pub fn time(&self) -> i64 {
        self.0.time().seconds()
    }

    /// Its author and when it was authored, to make another commit with.
    pub fn author_signature(&self) -> Signature {
        Signature(self.0.author().to_owned())
    }

    /// The first paragraph of its message, raw (`None` when it has none).
    pub fn summary_bytes(&self) -> Option<&[u8]> {
        self.0.summary_bytes()
    }

    /// The ID of its parent number `n` (from 0).
    pub fn parent_id(&self, n: usize) -> Result<Oid, LibGitError> {
        Ok(self.0.parent_id(n)?)
    }

    /// How many parents it has.
    pub fn parent_count(&self) -> usize {
        self.0.parent_count()
    }

    /// Its raw message.
    pub fn message_bytes(&self) -> &[u8] {
        self.0.message_bytes()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::git::test_repo;

    /// Runs git with `args` in the repository whose git dir is `git_dir`, `input` on its
    /// standard input.
    fn git(git_dir: &Path, args: &[&str], input: &[u8]) {
        let out = Git::new(git_dir)
            .env("GIT_DIR", git_dir)
            .args(args)
            .input(input.to_vec())
            .run(Duration::from_secs(60))
            .expect("run git");
        assert!(out.success(), "git {args:?}: {}", out.stderr);
    }

    /// Writes `data` as a blob into a new pack of `repo`, as another process (`git fetch`,
    /// `git gc`) adds one; returns its ID.
    fn pack_blob(repo: &Repo, data: &[u8]) -> Oid {
        let oid = Oid::hash_object(git2::ObjectType::Blob, data).expect("hash");
        let (_other, raw) = test_repo::init();
        git(raw.path(), &["hash-object", "-w", "--stdin"], data);
        let pack = repo.git_dir().join("objects").join("pack").join("pack");
        let pack = pack.to_str().expect("a UTF-8 path");
        git(
            raw.path(),
            &["pack-objects", "-q", pack],
            format!("{oid}\n").as_bytes(),
        );
        oid
    }

    fn blob_id(data: &[u8]) -> Oid {
        Oid::hash_object(git2::ObjectType::Blob, data).expect("hash")
    }

    /// An object packed by another process after the handle listed the packs is found, by
    /// `header` and by `missing`: a miss lists them again.
    #[test]
    fn an_object_packed_after_the_packs_were_listed_is_found() {
        let (_dir, repo) = test_repo::open();
        let objects = repo.objects();
        let data = b"packed by another process\n";
        let absent = blob_id(b"never written");
        assert!(objects
            .header(blob_id(data))
            .expect_err("not yet")
            .is_not_found());
        assert_eq!(objects.missing([absent]).expect("look up"), vec![absent]);

        let oid = pack_blob(&repo, data);
        assert_eq!(
            objects.header(oid).expect("packed now"),
            (data.len(), Some(ObjectKind::Blob))
        );
        assert_eq!(
            objects.missing([absent, oid]).expect("look up"),
            vec![absent]
        );
        assert!(objects.header(absent).expect_err("absent").is_not_found());
    }

    /// A handle that lists the packs again once does it at its first miss: a pack added
    /// before it is seen, one added after it is not (its callers read such objects again
    /// through another handle).
    #[test]
    fn a_handle_that_lists_the_packs_once_does_it_at_its_first_miss() {
        let (dir, repo) = test_repo::open();
        let mut once = Repo::open(dir.path()).expect("open again");
        once.list_packs_again_once();
        let objects = once.objects();
        // Its packs are listed (there are none) when it first reads an object.
        let loose = objects.write_blob(b"loose").expect("write a blob");
        assert!(objects.header(loose).is_ok());

        let before = pack_blob(&repo, b"before the first miss\n");
        assert!(
            objects.header(before).is_ok(),
            "the first miss lists the packs"
        );
        assert!(objects.header(blob_id(b"absent")).is_err());
        let after = pack_blob(&repo, b"after the first miss\n");
        assert!(objects
            .header(after)
            .expect_err("not listed again")
            .is_not_found());
        assert_eq!(objects.missing([after]).expect("look up"), vec![after]);
        // Through a handle of the default kind, it is found.
        assert!(repo.objects().header(after).is_ok());
    }
}
