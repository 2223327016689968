//! Leaf building blocks every layer uses: checkpoint and session IDs, time stamps, file
//! primitives, the lines of a text, work on a second thread, the crash-test hook, the invoking
//! `git` process. They import nothing of the crate.

pub(crate) mod crashpoint;
pub mod error;
pub(crate) mod fs;
pub mod id;
pub mod invoker;
pub mod json;
pub mod lines;
pub mod session_id;
pub(crate) mod threads;
pub mod time;
