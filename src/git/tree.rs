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
pub struct TreeBuilder<'r>(pub(in crate::git) git2::TreeBuilder<'r>);

impl TreeBuilder<'_> {
    /// Sets entry `name` to `oid` with `mode`, replacing any of that name.
    pub fn insert(&mut self, name: &str, oid: Oid, mode: i32) -> Result<(), LibGitError> {
        self.0.insert(name, oid, mode)?;
        Ok(())
    }

    /// Removes entry `name`.
    pub fn remove(&mut self, name: &str) -> Result<(), LibGitError> {
        Ok(self.0.remove(name)?)
    }

    /// The ID of its entry `name`, if it has one.
    pub fn get_id(&self, name: &str) -> Option<Oid> {
        self.0.get(name).ok().flatten().map(|e| e.id())
    }

    /// Writes the tree, and returns it.
    pub fn write(&self) -> Result<Oid, LibGitError> {
        Ok(self.0.write()?)
    }
}

/// Edits of a tree at paths of any depth, written with
/// [`crate::git::objects::Objects::write_edits`]: the trees on the way are rewritten, the rest
/// shared.
pub struct TreeEdits(pub(in crate::git) git2::build::TreeUpdateBuilder);

impl Default for TreeEdits {
    fn default() -> Self {
        TreeEdits(git2::build::TreeUpdateBuilder::new())
    }
}

impl TreeEdits {
    /// Puts tree `oid` at `path` (`/`-separated), replacing what is there.
    pub fn put_tree(&mut self, path: &str, oid: Oid) -> &mut Self {
        self.0.upsert(path, oid, git2::FileMode::Tree);
        self
    }
}
