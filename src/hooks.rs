//! Where git looks for hooks, and whether ours are there.

use std::path::{Path, PathBuf};

use crate::repo::Repo;

/// The line that marks a hook script as ours (so it can be replaced, never a foreign one).
pub const HOOK_MARKER: &str = "Entire checkpoints hook";

/// The hooks this suite installs, in the order `status` reports them.
pub const HOOK_NAMES: [&str; 3] = ["pre-push", "post-commit", "prepare-commit-msg"];

/// The directory git runs hooks from: `core.hooksPath` (relative paths are relative to the work
/// tree root, as git resolves them; `~/` is the home directory), else `<common dir>/hooks`.
pub fn hooks_dir(repo: &Repo) -> PathBuf {
    match repo
        .config_string("core.hooksPath")
        .filter(|p| !p.is_empty())
    {
        Some(p) => {
            let path = match p.strip_prefix("~/") {
                Some(rest) => std::env::var_os("HOME")
                    .map(PathBuf::from)
                    .unwrap_or_default()
                    .join(rest),
                None => PathBuf::from(&p),
            };
            if path.is_absolute() {
                path
            } else {
                repo.workdir().unwrap_or(repo.git_dir()).join(path)
            }
        }
        None => repo.common_dir().join("hooks"),
    }
}

/// Whether the hook file at `path` is one of ours.
pub fn is_ours(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(HOOK_MARKER))
}

/// Whether our hook `name` is installed in `repo`'s hooks directory.
pub fn installed(repo: &Repo, name: &str) -> bool {
    is_ours(&hooks_dir(repo).join(name))
}
