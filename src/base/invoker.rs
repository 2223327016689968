//! The `git` process a hook runs under, and what it was asked to do.
//!
//! git tells a hook little about the command that runs it: `prepare-commit-msg` cannot tell an
//! amend with `-m` from a new commit, and `pre-push` is not told about `--dry-run`. Where the
//! platform exposes process arguments (`/proc`, else `ps`), the nearest `git` ancestor that is
//! not one of ours (`git entire-...`, as the hook scripts call us) is read. Where it cannot be
//! read the answer is "not known", and callers keep their default behaviour.

use std::path::Path;

/// The arguments of the `git` command this process runs under, if they can be read.
pub fn invoking_git() -> Option<Vec<String>> {
    let mut pid = std::process::id();
    for _ in 0..8 {
        let (parent, _) = process(pid)?;
        if parent <= 1 {
            return None;
        }
        let (_, args) = process(parent)?;
        let is_git = args.first().is_some_and(|a| {
            Path::new(a)
                .file_name()
                .is_some_and(|n| n == "git" || n == "git.exe")
        });
        if is_git && !args.iter().any(|a| a.starts_with("entire-")) {
            return Some(args);
        }
        pid = parent;
    }
    None
}

/// The subcommand of a `git` command line and the arguments after it, git's own options before
/// it (`-C <dir>`, `-c <name>=<value>`, `--no-pager`, ...) skipped.
fn subcommand(args: &[String]) -> Option<(&str, &[String])> {
    // git's own options that take a value as the next argument.
    const GLOBAL_WITH_VALUE: [&str; 4] = ["-C", "-c", "--git-dir", "--work-tree"];
    let mut i = 1;
    while let Some(a) = args.get(i) {
        match a.as_str() {
            a if GLOBAL_WITH_VALUE.contains(&a) => i += 2,
            a if a.starts_with('-') => i += 1,
            a => return Some((a, &args[i + 1..])),
        }
    }
    None
}

/// The git commands that make commits out of existing ones (each pick, reword, squash, revert or
/// replayed commit runs the commit hooks), as the subcommand of the invoking git or the first
/// word of `GIT_REFLOG_ACTION` (`rebase (reword)`, `pull --rebase`).
pub const RECREATING: [&str; 5] = ["rebase", "cherry-pick", "revert", "pull", "am"];

/// Whether `args` (a `git` command line) are one of the [`RECREATING`] commands.
pub fn recreates_commits(args: &[String]) -> bool {
    subcommand(args).is_some_and(|(c, _)| RECREATING.contains(&c))
}

/// Whether `args` (a `git` command line) are a `git push` with `--dry-run` or `-n`.
pub fn is_dry_run_push(args: &[String]) -> bool {
    let Some(("push", rest)) = subcommand(args) else {
        return false;
    };
    // Options of `git push` that take their value as the next argument.
    const WITH_VALUE: [&str; 4] = ["-o", "--push-option", "--repo", "--receive-pack"];
    let mut value_next = false;
    for a in rest {
        if std::mem::take(&mut value_next) {
            continue;
        }
        match a.as_str() {
            "--" => return false,
            "--dry-run" => return true,
            a if WITH_VALUE.contains(&a) => value_next = true,
            a if a.starts_with('-') && !a.starts_with("--") => {
                // A cluster such as `-fn`; `-o` ends it with its value.
                for c in a.chars().skip(1) {
                    match c {
                        'n' => return true,
                        'o' => break,
                        _ => {}
                    }
                }
                value_next = a.ends_with('o');
            }
            _ => {}
        }
    }
    false
}

/// `(parent pid, arguments)` of process `pid`: from `/proc` where there is one, else `ps`
/// (whose arguments are split at spaces; enough to find an option).
fn process(pid: u32) -> Option<(u32, Vec<String>)> {
    let proc_dir = Path::new("/proc").join(pid.to_string());
    if let (Ok(stat), Ok(cmdline)) = (
        std::fs::read_to_string(proc_dir.join("stat")),
        std::fs::read(proc_dir.join("cmdline")),
    ) {
        // `pid (comm) state ppid ...`; comm may hold spaces and parentheses.
        let after = &stat[stat.rfind(')')? + 1..];
        let parent = after.split_whitespace().nth(1)?.parse().ok()?;
        let args = cmdline
            .split(|&b| b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).into_owned())
            .collect();
        return Some((parent, args));
    }
    let out = std::process::Command::new("ps")
        .args(["-o", "ppid=", "-o", "args=", "-p", &pid.to_string()])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let mut words = text.split_whitespace();
    let parent = words.next()?.parse().ok()?;
    Some((parent, words.map(str::to_owned).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split(' ').map(str::to_owned).collect()
    }

    #[test]
    fn dry_run_pushes_are_told_apart() {
        for yes in [
            "git push --dry-run origin main",
            "git push -n",
            "git -C /r push -fn origin",
            "git -c push.default=current push -u -n origin",
        ] {
            assert!(is_dry_run_push(&args(yes)), "{yes}");
        }
        for no in [
            "git push origin main",
            "git push -o n origin",
            "git push --push-option -n origin",
            "git push -- -n",
            "git commit -n",
            "git -c core.x=-n push origin",
        ] {
            assert!(!is_dry_run_push(&args(no)), "{no}");
        }
    }

    #[test]
    fn commands_that_recreate_commits_are_told_apart() {
        for yes in [
            "git rebase -q --onto a b",
            "/usr/lib/git-core/git -c x=y cherry-pick main",
            "git -C /r revert --no-edit HEAD",
            "git pull --rebase",
        ] {
            assert!(recreates_commits(&args(yes)), "{yes}");
        }
        for no in [
            "git commit -m rebase",
            "git -c rebase push",
            "git",
            "git -C",
        ] {
            assert!(!recreates_commits(&args(no)), "{no}");
        }
    }

    #[test]
    fn this_process_runs_under_no_git() {
        // The test binary is started by cargo, not by git (or by a git that is one of ours).
        if let Some(a) = invoking_git() {
            assert!(!is_dry_run_push(&a));
        }
    }
}
