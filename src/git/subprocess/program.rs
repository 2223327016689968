//! Which git runs (the one that runs us, found once) and its version, found once per process
//! through the user's memo, and whether we support it.

use std::ffi::OsString;
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use super::{Git, GitError};
use crate::git::version::{BinaryId, GitVersion, VersionMemo};

/// The git this process runs, found once: the `git` of `GIT_EXEC_PATH` when it has one (git sets
/// it for the hooks and subcommands it runs, so that a hook runs the git that runs the hook,
/// even when a hook manager or a GUI client changed `PATH`), else the first `git` on `PATH`, as
/// an absolute path. Just `git` when neither has one (spawning it then fails and says so).
pub fn program() -> &'static Path {
    static PROGRAM: OnceLock<std::path::PathBuf> = OnceLock::new();
    PROGRAM.get_or_init(|| {
        find_program(std::env::var_os("GIT_EXEC_PATH"), std::env::var_os("PATH"))
            .unwrap_or_else(|| "git".into())
    })
}

/// Where [`program`] finds git, given `GIT_EXEC_PATH` and `PATH`.
fn find_program(exec_path: Option<OsString>, path: Option<OsString>) -> Option<std::path::PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    let from_exec = exec_path
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(&d).join("git"));
    let on_path = path
        .iter()
        .flat_map(std::env::split_paths)
        // An empty entry is the current directory, as for execvp.
        .map(|d| match d.as_os_str().is_empty() {
            true => Path::new(".").join("git"),
            false => d.join("git"),
        });
    from_exec
        .into_iter()
        .chain(on_path)
        .find(|p| runnable(p))
        .and_then(|p| std::path::absolute(p).ok())
}

/// The version of [`program`], found once per process: from the user's memo of their git
/// binaries when this binary is in it, else by asking it (`git --version`, remembered then).
pub fn version() -> Result<GitVersion, GitError> {
    static VERSION: OnceLock<Result<GitVersion, GitError>> = OnceLock::new();
    VERSION
        .get_or_init(|| {
            let program = program();
            let memo = VersionMemo::of_user();
            let id = BinaryId::of(program);
            let remembered = match (&memo, &id) {
                (Some(memo), Some(id)) => memo.recall(program, id),
                _ => None,
            };
            let text = match remembered {
                Some(text) => text,
                None => {
                    let text = ask_version()?;
                    if let (Some(memo), Some(id)) = (&memo, &id) {
                        if GitVersion::parse(&text).is_some() {
                            memo.remember(program, id, &text);
                        }
                    }
                    text
                }
            };
            GitVersion::parse(&text).ok_or_else(|| GitError::UnknownVersion {
                text,
                program: program.to_owned(),
            })
        })
        .clone()
}

/// What `git --version` prints, without its `git version ` prefix.
fn ask_version() -> Result<String, GitError> {
    let mut git = Git::new(Path::new("/")).args(["--version"]);
    git.gated = false;
    let out = git.run(Duration::from_secs(10))?;
    let text = out.stdout.trim();
    Ok(text.strip_prefix("git version ").unwrap_or(text).to_owned())
}

/// The version of [`program`] when it is one we support ([`MIN_GIT_VERSION`] or newer), else
/// [`GitError::TooOld`] naming it, the version it is and the version needed. Every git call
/// checks it before it starts; commands that must not write anything with an old git call it
/// first.
pub fn require_supported() -> Result<GitVersion, GitError> {
    let v = version()?;
    if v.is_supported() {
        return Ok(v);
    }
    Err(GitError::TooOld {
        found: v.to_string(),
        program: program().to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_git_on_path_is_supported() {
        assert!(require_supported().is_ok_and(|v| v.is_supported()));
        assert!(program().is_absolute());
    }

    /// A hook runs the git that runs it: `GIT_EXEC_PATH`'s when it has one, else `PATH`'s.
    #[test]
    fn finds_the_git_that_runs_us() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let make = |sub: &str, mode: u32| {
            let d = dir.path().join(sub);
            std::fs::create_dir_all(&d).unwrap();
            let git = d.join("git");
            std::fs::write(&git, "").unwrap();
            std::fs::set_permissions(&git, std::fs::Permissions::from_mode(mode)).unwrap();
            d
        };
        let exec = make("libexec", 0o755);
        let first = make("first", 0o644);
        let second = make("second", 0o755);
        let path = std::env::join_paths([&first, &second]).unwrap();
        let found =
            |e: Option<&Path>| find_program(e.map(|p| p.as_os_str().into()), Some(path.clone()));
        assert_eq!(found(Some(&exec)), Some(exec.join("git")));
        // Not executable: skipped, as execvp does.
        assert_eq!(found(None), Some(second.join("git")));
        assert_eq!(
            found(Some(&dir.path().join("none"))),
            Some(second.join("git"))
        );
        assert_eq!(find_program(None, None), None);
    }
}
