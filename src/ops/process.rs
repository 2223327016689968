//! What a binary asks of the git it runs, around its command: that git is one we support
//! (before anything else), the pager git would use for its output, and ending the gits still
//! running when the binary is interrupted.

pub use crate::git::subprocess::{
    before_spawn, kill_live_groups, pager_for, require_supported, terminating, GitError,
};
