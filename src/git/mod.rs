//! Everything that talks to git itself, and the one seam through which the rest of the crate
//! reads and writes refs: the opened repository and its formats (object IDs of SHA-1 or
//! SHA-256, refs in files or reftable), every ref operation through the backend the format
//! needs (`refs`: our own readers of the files backend or git's plumbing), checkpoint ref
//! names, the object database (`objects`: blobs, of any size streamed, a large one written
//! compressed while its ID is computed in `loose`, commits, and trees read, built and edited in
//! `tree`), the one `git` subprocess wrapper and which gits it supports (`version`), validated
//! remote URLs, side repositories, `git blame` parsed into typed records, a range's `git log
//! -p` parsed into the lines each commit adds (`patch`), and what git knows of the settings
//! files (their approval, whether git tracks them). Knows nothing of checkpoints' stores.

pub mod blame;
pub mod config_file;
pub mod format;
mod loose;
pub mod objects;
pub mod patch;
pub mod plumbing;
mod ref_lookup;
mod ref_update;
pub mod refname;
pub mod refs;
pub mod repo;
pub(crate) mod side;
pub mod subprocess;
#[cfg(test)]
pub(crate) mod test_repo;
pub mod tree;
pub mod url;
pub mod version;
pub mod worktree;
