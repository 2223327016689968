//! Everything that talks to git itself: the opened repository and its one ref compare-and-swap,
//! files-backend ref reads, checkpoint ref names, the one `git` subprocess wrapper, validated
//! remote URLs, side repositories, and `git blame` parsed into typed records. Knows
//! nothing of checkpoints' stores.

pub mod blame;
pub(crate) mod ref_lookup;
pub(crate) mod ref_update;
pub mod refname;
pub mod repo;
pub(crate) mod side;
pub mod subprocess;
pub mod url;
