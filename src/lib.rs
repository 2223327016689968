//! entire-checkpoints: AI coding-session checkpoints stored inside a git repository.
//!
//! The library holds everything but argument parsing and printing: checkpoint IDs and ref names,
//! the JSON documents, the two git-backed stores and the topology that routes between them.
//! Binaries map its typed errors to exit codes with [`exit::code_for`].

#![warn(missing_docs)]

pub mod checkpoint_remote;
pub mod commit_hooks;
mod crashpoint;
pub mod doctor;
pub mod exit;
pub mod fetch;
mod fsutil;
pub mod gc;
pub mod git;
pub mod hooks;
pub mod id;
pub mod invoker;
mod merge;
pub mod migrate;
pub mod model;
pub mod partial;
mod publish;
pub mod push;
pub mod queue;
pub mod redact;
mod ref_lookup;
mod ref_update;
pub mod refname;
pub mod registry;
pub mod remote;
pub mod repo;
pub mod rewrites;
pub mod scale;
pub mod session;
pub mod session_id;
pub mod settings;
mod side;
pub mod store;
pub mod timefmt;
pub mod topology;
pub mod trailers;
pub mod transcript;
mod tree;

pub use tree::CLI_VERSION;
