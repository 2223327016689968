//! Trees as the layers above see them: read ([`Tree`], its entries), built from a base
//! ([`TreeBuilder`], one level) or edited at paths ([`TreeEdits`], any depth), with no libgit2
//! type in sight. Made and written through [`crate::git::objects::Objects`].

use crate::git::repo::LibGitError;
// The ID type `objects` re-exports, named from libgit2 here: `objects` builds on this module.
use git2::Oid;

/// What kind of object an ID names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ObjectKind {
    /// File contents.
    Blob,
    /// A directory: names to blobs and trees.
    Tree,
    /// A commit.
    Commit,
    /// An annotated tag.
    Tag,
}

impl std::fmt::Display for ObjectKind {
    /// As git names it: `blob`, `tree`, `commit`, `tag`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ObjectKind::Blob => "blob",
            ObjectKind::Tree => "tree",
            ObjectKind::Commit => "commit",
            ObjectKind::Tag => "tag",
        })
    }
}

impl ObjectKind {
    pub(in crate::git) fn of(kind: Option<git2::ObjectType>) -> Option<ObjectKind> {
        match kind? {
            git2::ObjectType::Blob => Some(ObjectKind::Blob),
            git2::ObjectType::Tree => Some(ObjectKind::Tree),
            git2::ObjectType::Commit => Some(ObjectKind::Commit),
            git2::ObjectType::Tag => Some(ObjectKind::Tag),
            git2::ObjectType::Any => None,
        }
    }
}

/// A tree read from an object database.
pub struct Tree<'r>(pub(in crate::git) git2::Tree<'r>);

impl Tree<'_> {
    /// Its ID.
    pub fn id(&self) -> Oid {
        self.0.id()
    }

    /// How many entries it has.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether it has no entry.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Its entry named `name`, if any.
    pub fn get_name(&self, name: &str) -> Option<TreeEntry<'_>> {
        self.0.get_name(name).map(TreeEntry)
    }

    /// The entry at `path` (`/`-separated) below it; an error that
    /// [`LibGitError::is_not_found`] when there is none.
    pub fn get_path(&self, path: &str) -> Result<TreeEntry<'static>, LibGitError> {
        Ok(TreeEntry(self.0.get_path(std::path::Path::new(path))?))
    }

    /// Its entries, in git's order.
    pub fn iter(&self) -> impl Iterator<Item = TreeEntry<'_>> {
        self.0.iter().map(TreeEntry)
    }

    /// The entries naming blobs at any depth below it, parents' before their children's (git's
    /// order within a tree). Every tree below must be in the object database; the blobs need
    /// not be (a partial clone's).
    pub fn blobs(&self) -> Result<Vec<TreeEntry<'static>>, LibGitError> {
        let mut out = Vec::new();
        self.0.walk(git2::TreeWalkMode::PreOrder, |_, e| {
            if e.kind() == Some(git2::ObjectType::Blob) {
                out.push(TreeEntry(e.to_owned()));
            }
            git2::TreeWalkResult::Ok
        })?;
        Ok(out)
    }
}

/// One entry of a tree: a name, and the mode and ID of what it names.
pub struct TreeEntry<'t>(git2::TreeEntry<'t>);

impl TreeEntry<'_> {
    /// Its name, or `None` when it is not UTF-8.
    pub fn name(&self) -> Option<&str> {
        self.0.name().ok()
    }

    /// Its name, as stored.
    pub fn name_bytes(&self) -> &[u8] {
        self.0.name_bytes()
    }

    /// The ID of the object it names.
    pub fn id(&self) -> Oid {
        self.0.id()
    }

    /// The kind of the object it names, as its mode says.
    pub fn kind(&self) -> Option<ObjectKind> {
        ObjectKind::of(self.0.kind())
    }

    /// Its mode (`0o100644`, `0o040000`, ...).
    pub fn filemode(&self) -> i32 {
        self.0.filemode()
    }
}

/// A tree being built, one level, from a base's entries
/// ([`crate::git::objects::Objects::tree_builder`]).
pub struct TreeBuilder<'r> {
    pub(in crate::git) builder: git2::TreeBuilder<'r>,
    /// The repository it is written to.
    pub(in crate::git) repo: &'r git2::Repository,
    /// Whether its objects are files of an object directory ([`crate::git::loose`]).
    pub(in crate::git) on_disk: bool,
}

impl TreeBuilder<'_> {
    /// Sets entry `name` to `oid` with `mode`, replacing any of that name.
    pub fn insert(&mut self, name: &str, oid: Oid, mode: i32) -> Result<(), LibGitError> {
        self.builder.insert(name, oid, mode)?;
        Ok(())
    }

    /// Removes entry `name`.
    pub fn remove(&mut self, name: &str) -> Result<(), LibGitError> {
        Ok(self.builder.remove(name)?)
    }

    /// The ID of its entry `name`, if it has one.
    pub fn get_id(&self, name: &str) -> Option<Oid> {
        self.builder.get(name).ok().flatten().map(|e| e.id())
    }

    /// Writes the tree, and returns it. The entries are serialised here, as libgit2 and git
    /// serialise them, and the object written by [`crate::git::loose`].
    pub fn write(&mut self) -> Result<Oid, LibGitError> {
        let mut entries = Vec::with_capacity(self.builder.len());
        // Keeps every entry: it is the builder's one way to visit them.
        self.builder.filter(|e| {
            entries.push((e.filemode(), e.name_bytes().to_vec(), e.id()));
            true
        })?;
        let data = serialize(entries);
        Ok(crate::git::loose::write_object(
            self.repo,
            self.on_disk,
            git2::ObjectType::Tree,
            &data,
        )?)
    }
}

/// A tree object's bytes: for each entry in git's order, its mode in octal, a space, its name, a
/// NUL and its raw ID.
fn serialize(mut entries: Vec<(i32, Vec<u8>, Oid)>) -> Vec<u8> {
    entries.sort_unstable_by(|a, b| git_order(&a.1, a.0, &b.1, b.0));
    let mut out = Vec::with_capacity(entries.iter().map(|e| e.1.len() + 40).sum());
    for (mode, name, oid) in entries {
        out.extend_from_slice(format!("{mode:o} ").as_bytes());
        out.extend_from_slice(&name);
        out.push(0);
        out.extend_from_slice(oid.as_bytes());
    }
    out
}

/// Git's order of the entries of a tree: by name, bytewise, a tree's name compared as if it
/// ended in `/` (so `a.b` comes before the tree `a`, and the tree `a` before `a0`).
fn git_order(a: &[u8], a_mode: i32, b: &[u8], b_mode: i32) -> std::cmp::Ordering {
    let n = a.len().min(b.len());
    let end = |name: &[u8], mode: i32| match name.get(n) {
        Some(&c) => c,
        None if mode & 0o170000 == 0o040000 => b'/',
        None => 0,
    };
    a[..n]
        .cmp(&b[..n])
        .then_with(|| end(a, a_mode).cmp(&end(b, b_mode)))
}

/// Edits of a tree at paths of any depth, written with
/// [`crate::git::objects::Objects::write_edits`]: the trees on the way are rewritten, the rest
/// shared.
#[derive(Default)]
pub struct TreeEdits(pub(in crate::git) Vec<(String, Oid)>);

impl TreeEdits {
    /// Puts tree `oid` at `path` (`/`-separated), replacing what is there.
    pub fn put_tree(&mut self, path: &str, oid: Oid) -> &mut Self {
        self.0.push((path.to_owned(), oid));
        self
    }
}

#[cfg(test)]
mod tests {
    use crate::git::test_repo;

    /// Trees serialised here have the IDs libgit2 gives them, whatever the order of their names
    /// (a tree's sorts as if it ended in `/`).
    #[test]
    fn trees_are_serialised_as_libgit2_serialises_them() {
        let (_dir, repo) = test_repo::open();
        let objects = repo.objects();
        let blob = objects.write_blob(b"x").expect("blob");
        let mut sub = objects.tree_builder(None).expect("builder");
        sub.insert("f", blob, 0o100644).expect("insert");
        let tree = sub.write().expect("write");
        let names = [
            ("a", tree),
            ("a.b", blob),
            ("a0", blob),
            ("a-", tree),
            ("ab", tree),
            ("b", blob),
            ("\u{e9}", blob),
            ("Z", tree),
        ];
        let raw = git2::Repository::open(repo.git_dir()).expect("open");
        let mut ours = objects.tree_builder(None).expect("builder");
        let mut theirs = raw.treebuilder(None).expect("builder");
        for (name, oid) in names {
            let mode = if oid == tree { 0o040000 } else { 0o100644 };
            ours.insert(name, oid, mode).expect("insert");
            theirs.insert(name, oid, mode).expect("insert");
        }
        ours.insert("x", blob, 0o100755).expect("insert");
        theirs.insert("x", blob, 0o100755).expect("insert");
        assert_eq!(ours.write().expect("write"), theirs.write().expect("write"));
        let empty = objects
            .tree_builder(None)
            .expect("builder")
            .write()
            .expect("write");
        assert_eq!(
            empty.to_string(),
            "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
        );
    }
}
