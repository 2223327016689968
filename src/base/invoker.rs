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

/// Whether `args` (a `git` command line) are a `git push` with `--dry-run` or `-n`.
pub fn is_dry_run_push(args: &[String]) -> bool {
    // Options of `git push` that take a value: `-o` in a cluster, these as the next argument.
    const LONG_WITH_VALUE: [&str; 3] = ["--push-option", "--repo", "--receive-pack"];
    matches!(subcommand(args), Some(("push", rest))
        if has_option(rest, "--dry-run", 'n', &LONG_WITH_VALUE, &['o']))
}

/// Whether `args` (a `git` command line) give the subcommand `-q` or `--quiet` (`git commit -q`,
/// `git push --quiet`, `git commit -qm msg`).
pub fn is_quiet(args: &[String]) -> bool {
    // Short options of the commands that run hooks whose value follows (`-mmsg`, `-m msg`).
    const SHORT_WITH_VALUE: [char; 7] = ['m', 'F', 'c', 'C', 't', 'o', 'X'];
    const LONG_WITH_VALUE: [&str; 3] = ["--message", "--file", "--push-option"];
    subcommand(args).is_some_and(|(_, rest)| {
        has_option(rest, "--quiet", 'q', &LONG_WITH_VALUE, &SHORT_WITH_VALUE)
    })
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

/// Whether a subcommand's arguments give the option `long` or `-<short>`, alone or in a cluster
/// (`-fn`), before `--`. Values are never read as options: those of `long_with_value` (the next
/// argument) and of the letters in `short_with_value` (the rest of the word, or the next argument
/// when the letter ends it).
fn has_option(
    rest: &[String],
    long: &str,
    short: char,
    long_with_value: &[&str],
    short_with_value: &[char],
) -> bool {
    let mut value_next = false;
    for a in rest {
        if std::mem::take(&mut value_next) {
            continue;
        }
        match a.as_str() {
            "--" => return false,
            a if a == long => return true,
            a if long_with_value.contains(&a) => value_next = true,
            a if a.starts_with('-') && !a.starts_with("--") => {
                for (i, c) in a.char_indices().skip(1) {
                    if c == short {
                        return true;
                    }
                    if short_with_value.contains(&c) {
                        value_next = i + c.len_utf8() == a.len();
                        break;
                    }
                }
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

    /// Asserts `check` holds for every command line of `yes` and none of `no`.
    fn told_apart(check: fn(&[String]) -> bool, yes: &[&str], no: &[&str]) {
        for y in yes {
            assert!(check(&args(y)), "{y}");
        }
        for n in no {
            assert!(!check(&args(n)), "{n}");
        }
    }

    #[test]
    fn dry_run_pushes_are_told_apart() {
        told_apart(
            is_dry_run_push,
            &[
                "git push --dry-run origin main",
                "git push -n",
                "git -C /r push -fn origin",
                "git -c push.default=current push -u -n origin",
            ],
            &[
                "git push origin main",
                "git push -o n origin",
                "git push --push-option -n origin",
                "git push -- -n",
                "git commit -n",
                "git -c core.x=-n push origin",
            ],
        );
    }

    #[test]
    fn quiet_git_commands_are_told_apart() {
        told_apart(
            is_quiet,
            &[
                "git commit -q -m x",
                "git commit -qm x",
                "git push --quiet origin",
                "git -C /r push -q",
                "git rebase -q main",
            ],
            &[
                "git commit -m q",
                "git commit -mq",
                "git commit -m -q",
                "git commit --message -q",
                "git push origin -- -q",
                "git -c x.y=-q commit",
                "git commit",
            ],
        );
    }

    #[test]
    fn commands_that_recreate_commits_are_told_apart() {
        told_apart(
            recreates_commits,
            &[
                "git rebase -q --onto a b",
                "/usr/lib/git-core/git -c x=y cherry-pick main",
                "git -C /r revert --no-edit HEAD",
                "git pull --rebase",
            ],
            &[
                "git commit -m rebase",
                "git -c rebase push",
                "git",
                "git -C",
            ],
        );
    }

    #[test]
    fn this_process_runs_under_no_git() {
        // The test binary is started by cargo, not by git (or by a git that is one of ours).
        if let Some(a) = invoking_git() {
            assert!(!is_dry_run_push(&a));
        }
    }
}
