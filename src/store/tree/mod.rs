//! Building and reading one checkpoint's subtree, shared by both git-backed stores.
//!
//! A checkpoint subtree holds `metadata.json` (the root summary) and one directory per session
//! slot (`0/`, `1/`, ...). The git-refs store commits it as the whole tree of a ref; the
//! git-branch store splices it into the v1 branch at `id[:2]/id[2:]`. The only difference
//! visible inside is the prefix of the paths in the summary's `sessions[]` entries, which is
//! `""` for git-refs and `/<id[:2]>/<id[2:]>` on the branch (docs/format.md, "One checkpoint").
//!
//! [`read`] reads a subtree back, [`write`] builds one; the names of the files in it are here.

mod read;
mod write;

pub(crate) use read::{
    read_blob_in, read_chunks, read_documents, read_summary, subject, tree_within, Documents,
    TreeFiles,
};
pub(crate) use write::{
    build_backfill, build_session, entry_paths_of, insert_blob, recompute_summary, Change,
    SlotTarget,
};

/// The version string written into `cli_version`: ours, marked as this implementation in the
/// SemVer build metadata so a reader can tell writers apart.
pub const CLI_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), "+entire-checkpoints-rs");

const METADATA: &str = "metadata.json";
const CONTENT_HASH: &str = "content_hash.txt";
const PROMPT: &str = "prompt.txt";
const COMPACT_TRANSCRIPT: &str = "transcript.jsonl";
const PROMPT_SEPARATOR: &str = "\n\n---\n\n";
/// Session metadata key (ours; readers ignore unknown keys) counting redacted secrets.
pub const REDACTIONS_KEY: &str = "redactions";

const MODE_BLOB: i32 = 0o100644;
const MODE_TREE: i32 = 0o040000;
