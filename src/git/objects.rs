//! Reading objects whose size has no bound: a blob streamed from `git cat-file`, which inflates
//! a large blob piece by piece (git stores blobs over `core.bigFileThreshold` undeltified and
//! streams them), so neither process ever holds it whole.

use std::path::Path;

use crate::git::subprocess::{Git, GitError, Stream};

/// The bytes of blob `oid` of the repository whose git dir is `git_dir`, as a stream.
pub fn stream_blob(git_dir: &Path, oid: &str) -> Result<Stream, GitError> {
    Git::new(git_dir)
        .env("GIT_DIR", git_dir)
        .args(["cat-file", "blob", oid])
        .stream()
}
