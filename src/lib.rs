//! entire-checkpoints: AI coding-session checkpoints stored inside a git repository.
//!
//! The library holds everything but argument parsing and printing. Its layers, each importing
//! only the ones before it (docs/architecture.md draws them; `.ci/layers` checks it):
//! [`base`] → [`model`] → [`agents`] → [`config`] → [`git`] → [`store`] → [`remote`] →
//! [`topology`] → [`ops`].
//! Every error type decides its exit code through [`base::error::ExitStatus`].

#![warn(missing_docs)]

pub mod agents;
pub mod base;
pub mod config;
pub mod git;
pub mod model;
pub mod ops;
pub mod remote;
pub mod store;
pub mod topology;

pub use store::tree::CLI_VERSION;
