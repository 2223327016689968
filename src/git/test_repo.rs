//! Temporary repositories for the library's unit tests: the one place a test makes one.

use tempfile::TempDir;

use crate::git::repo::Repo;

/// A new, empty, non-bare repository (`git2::Repository::init`) in a new temporary directory,
/// removed when the returned [`TempDir`] is dropped, with libgit2's handle on it: for a test
/// that lays out objects, refs or files before the code under test opens the repository.
pub(crate) fn init() -> (TempDir, git2::Repository) {
    let dir = tempfile::tempdir().expect("create a temporary directory");
    let raw = git2::Repository::init(dir.path()).expect("initialise a repository");
    (dir, raw)
}

/// [`init`], opened as a command opens its repository ([`Repo::open`]).
pub(crate) fn open() -> (TempDir, Repo) {
    let (dir, _) = init();
    let repo = Repo::open(dir.path()).expect("open the new repository");
    (dir, repo)
}

/// Sets `key` to `value` in `repo`'s own config, as `git config` would.
pub(crate) fn set_config(repo: &Repo, key: &str, value: &str) {
    repo.git
        .config()
        .and_then(|mut c| c.set_str(key, value))
        .expect("set a config value");
}

/// The text of blob `spec` (`<commit>:<path>`, as git names it) of `repo`, read by `git
/// cat-file`: what a test checks a store wrote, not through the store's own reader.
pub(crate) fn cat_blob(repo: &Repo, spec: &str) -> String {
    let out = crate::git::subprocess::Git::new(repo.git_dir())
        .env("GIT_DIR", repo.git_dir())
        .args(["cat-file", "blob", spec])
        .run(std::time::Duration::from_secs(60))
        .expect("run git cat-file");
    assert!(out.success(), "git cat-file blob {spec}: {}", out.stderr);
    out.stdout
}

/// A new root commit of the empty tree with `message`, by `t <t@example.com>` now, on no ref.
pub(crate) fn empty_commit(raw: &git2::Repository, message: &str) -> git2::Oid {
    let sig = git2::Signature::now("t", "t@example.com").expect("make a signature");
    let tree = raw
        .treebuilder(None)
        .and_then(|b| b.write())
        .and_then(|id| raw.find_tree(id))
        .expect("write the empty tree");
    raw.commit(None, &sig, &sig, message, &tree, &[])
        .expect("write a commit")
}
