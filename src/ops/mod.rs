//! The operations commands run: staged sessions, the commit hooks and their installation, the
//! rewrite map, gc, migration and doctor. Each is one entry point over the layers below.

pub mod commit_hooks;
pub mod doctor;
pub mod gc;
pub mod hooks;
pub mod migrate;
pub mod rewrites;
pub mod session;
