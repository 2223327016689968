//! Hook managers that run our hooks from their own configuration: husky (a line at the end of
//! each of its scripts) and lefthook (jobs in the per-clone `lefthook-local.yml`). Their
//! re-installs rewrite only their own hook files, never that configuration, so ours keeps
//! running; `hooks uninstall` takes out exactly what `hooks install` put in.

use std::path::{Path, PathBuf};

use super::{io, HookError, HOOK_NAMES};
use crate::git::repo::Repo;

/// The comment line above each line we add to a husky script (and that starts the
/// `lefthook-local.yml` we write): how `hooks uninstall` finds what is ours.
const ADDED_MARK: &str =
    "# Entire checkpoints: added by `git entire-checkpoint hooks install`, removed by `hooks uninstall`";

/// lefthook's main configuration files, any of which makes lefthook the manager.
const LEFTHOOK_CONFIGS: [&str; 4] = [
    "lefthook.yml",
    ".lefthook.yml",
    "lefthook.yaml",
    ".lefthook.yaml",
];

/// lefthook's per-clone configuration files, merged over the main one (never committed).
const LEFTHOOK_LOCAL: [&str; 4] = [
    "lefthook-local.yml",
    ".lefthook-local.yml",
    "lefthook-local.yaml",
    ".lefthook-local.yaml",
];

/// A hook manager whose configuration can run our hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Manager {
    /// husky: git runs the hooks of `.husky/_` (husky 9; `.husky` itself before), each of which
    /// runs the script of the same name in `scripts` (the `.husky` directory).
    Husky {
        /// The directory of husky's scripts.
        scripts: PathBuf,
    },
    /// lefthook: its hooks run the jobs of `lefthook.yml` and `lefthook-local.yml` in `root`.
    Lefthook {
        /// The work tree root.
        root: PathBuf,
        /// The hooks directory lefthook installs its hooks into.
        hooks: PathBuf,
    },
}

impl Manager {
    /// The manager that owns the hooks directory `dir` of `repo`, if any.
    pub fn detect(repo: &Repo, dir: &Path) -> Option<Manager> {
        let named = |p: &Path, name: &str| p.file_name().is_some_and(|n| n == name);
        if named(dir, ".husky") {
            return Some(Manager::Husky {
                scripts: dir.to_path_buf(),
            });
        }
        if let Some(scripts) = dir
            .parent()
            .filter(|p| named(dir, "_") && named(p, ".husky"))
        {
            return Some(Manager::Husky {
                scripts: scripts.to_path_buf(),
            });
        }
        let root = repo.workdir()?;
        let hooks_are_lefthooks = HOOK_NAMES.iter().any(|n| is_lefthook_hook(&dir.join(n)));
        (hooks_are_lefthooks || LEFTHOOK_CONFIGS.iter().any(|f| root.join(f).exists())).then(|| {
            Manager::Lefthook {
                root: root.to_path_buf(),
                hooks: dir.to_path_buf(),
            }
        })
    }

    /// The managers whose configuration may still hold ours although `owner` (what
    /// [`Manager::detect`] found) is not them: husky's scripts stay in `.husky` after husky is
    /// uninstalled (husky 9 has no uninstall: `core.hooksPath` is unset, the scripts stay), and
    /// our `lefthook-local.yml` stays after `lefthook uninstall`, so `hooks uninstall` takes ours
    /// out of them too.
    pub fn leftovers(repo: &Repo, owner: Option<&Manager>) -> Vec<Manager> {
        let Some(root) = repo.workdir() else {
            return Vec::new();
        };
        let mut out = Vec::new();
        let scripts = root.join(".husky");
        if !matches!(owner, Some(Manager::Husky { .. })) && scripts.is_dir() {
            out.push(Manager::Husky { scripts });
        }
        let ours_local = LEFTHOOK_LOCAL
            .iter()
            .any(|f| read(&root.join(f)).starts_with(ADDED_MARK));
        if !matches!(owner, Some(Manager::Lefthook { .. })) && ours_local {
            out.push(Manager::Lefthook {
                root: root.to_path_buf(),
                hooks: super::hooks_dir(repo),
            });
        }
        out
    }

    /// The manager's name.
    pub fn name(&self) -> &'static str {
        match self {
            Manager::Husky { .. } => "husky",
            Manager::Lefthook { .. } => "lefthook",
        }
    }

    /// Whether the manager's configuration runs our `hook`: a line that calls our entry point
    /// for it, whether `hooks install` added it or a person did. (lefthook's YAML is not parsed:
    /// the call anywhere in its configuration counts.)
    pub fn runs_ours(&self, hook: &str) -> bool {
        let call = entry_point(hook);
        match self {
            Manager::Husky { scripts } => read(&scripts.join(hook)).contains(&call),
            Manager::Lefthook { root, .. } => LEFTHOOK_CONFIGS
                .iter()
                .chain(&LEFTHOOK_LOCAL)
                .any(|f| read(&root.join(f)).contains(&call)),
        }
    }

    /// Refuses to wire ours where the manager's configuration cannot take it: a
    /// `lefthook-local.yml` that is not ours and lacks our jobs is left alone
    /// ([`HookError::Managed`], with the jobs to add). Nothing is written either way.
    pub fn check_wirable(&self) -> Result<(), HookError> {
        let Manager::Lefthook { root, .. } = self else {
            return Ok(());
        };
        match LEFTHOOK_LOCAL
            .iter()
            .map(|f| root.join(f))
            .find(|p| p.exists())
        {
            Some(path)
                if !read(&path).starts_with(ADDED_MARK)
                    && !HOOK_NAMES.iter().all(|h| self.runs_ours(h)) =>
            {
                Err(HookError::Managed {
                    manager: self.name(),
                    file: path.display().to_string(),
                    lines: lefthook_jobs(&[], true),
                    command: "git entire-checkpoint hooks install --force".to_owned(),
                })
            }
            _ => Ok(()),
        }
    }

    /// Makes the manager's configuration run each of our hooks it does not run yet, after
    /// [`Manager::check_wirable`]. `users` are the user's hooks that ours chains and that ran
    /// until now (lefthook: ours is about to be moved aside to `<hook>.old`, where it does not
    /// run them): lefthook runs them, with every hook of the user's that its install displaces
    /// now. Returns one sentence per change, then the warnings (one sentence each), for the user.
    pub fn wire(&self, users: &[PathBuf]) -> Result<(Vec<String>, Vec<String>), HookError> {
        self.check_wirable()?;
        match self {
            Manager::Husky { scripts } => Ok((wire_husky(scripts)?, Vec::new())),
            Manager::Lefthook { root, hooks } => wire_lefthook(root, hooks, users),
        }
    }

    /// Takes out what [`Manager::wire`] put in; returns one sentence per change. `moved` are
    /// the user's hooks that taking ours out of the hooks directory put back, from where ours
    /// chained them to where ours was: lefthook keeps running one it ran that is now where it
    /// never runs a hook itself (`<hook>.old`).
    pub fn unwire(&self, moved: &[(PathBuf, PathBuf)]) -> Result<Vec<String>, HookError> {
        let mut out = Vec::new();
        match self {
            Manager::Husky { scripts } => {
                for hook in HOOK_NAMES {
                    let path = scripts.join(hook);
                    let text = read(&path);
                    let Some(rest) = without_added_line(&text) else {
                        continue;
                    };
                    if rest.trim().is_empty() {
                        std::fs::remove_file(&path)
                            .map_err(io(format!("remove {}", path.display())))?;
                        out.push(format!("removed {}", path.display()));
                    } else {
                        write_keeping_mode(&path, &rest)?;
                        out.push(format!("took ours out of {}", path.display()));
                    }
                }
            }
            Manager::Lefthook { root, hooks } => {
                let Some(path) = LEFTHOOK_LOCAL
                    .iter()
                    .map(|f| root.join(f))
                    .find(|p| read(p).starts_with(ADDED_MARK))
                else {
                    return Ok(out);
                };
                // The user's hooks it runs keep running until lefthook's own uninstall puts
                // them back.
                let text = read(&path);
                let mut users = running_users_hooks(hooks, &text);
                for (from, to) in moved {
                    let old = to.extension().is_some_and(|e| e == "old");
                    if old && runs_users_hook(&text, from) && !users.contains(to) {
                        users.push(to.clone());
                    }
                }
                users.sort();
                if users.is_empty() {
                    std::fs::remove_file(&path)
                        .map_err(io(format!("remove {}", path.display())))?;
                    out.push(format!("removed {}", path.display()));
                } else {
                    write_lefthook_local(&path, &users, false)?;
                    out.push(format!(
                        "took ours out of {path}; it still runs {} (lefthook never runs a hook it keeps as .old itself): after `lefthook uninstall`, which puts them back in place, delete {path}",
                        names(&users),
                        path = path.display(),
                    ));
                }
            }
        }
        Ok(out)
    }
}

/// Writes our `lefthook-local.yml` (unless one that runs ours is there) and runs
/// `lefthook install`. lefthook moves a hook it finds in its place that is not its own to
/// `<hook>.old` and never runs it: each hook of the user's it is about to displace, each in
/// `chained` (ours chains them, and ran them until now), and each our file already runs, is run
/// by a job of the file, before ours.
fn wire_lefthook(
    root: &Path,
    hooks: &Path,
    chained: &[PathBuf],
) -> Result<(Vec<String>, Vec<String>), HookError> {
    let mut out = Vec::new();
    let mut newly_run = Vec::new();
    let existing = LEFTHOOK_LOCAL
        .iter()
        .map(|f| root.join(f))
        .find(|p| p.exists());
    let path = existing.unwrap_or_else(|| root.join(LEFTHOOK_LOCAL[0]));
    let text = read(&path);
    let displaced = displaced_by_lefthook(root, hooks);
    if path.exists() && !text.starts_with(ADDED_MARK) {
        // The user's own file, which runs ours already (check_wirable), and which we do not
        // edit: lefthook's install would silently disable the hooks it displaces.
        let kept = chained
            .iter()
            .chain(&displaced)
            .cloned()
            .collect::<Vec<_>>();
        if !kept.is_empty() {
            let warning = format!(
                "lefthook would not run your hooks {} once installed; add them to {} as jobs, then run `lefthook install`",
                names(&kept),
                path.display()
            );
            return Ok((out, vec![warning]));
        }
    } else {
        let mut users = running_users_hooks(hooks, &text);
        for p in chained {
            if !users.contains(p) {
                newly_run.push(p);
            }
        }
        for p in chained.iter().chain(&displaced) {
            if !users.contains(p) {
                users.push(p.clone());
            }
        }
        users.sort();
        if text != lefthook_local(&users, true) {
            write_lefthook_local(&path, &users, true)?;
            out.push(format!(
                "wrote {}: lefthook runs ours from there (a per-clone file lefthook never commits)",
                path.display()
            ));
        }
    }
    for p in &displaced {
        out.push(format!(
            "lefthook moves your hook {} to {}.old, where it never runs it: {} runs it, before ours",
            hooks.join(hook_of(p)).display(),
            hook_of(p),
            path.display()
        ));
    }
    for p in newly_run {
        out.push(format!(
            "{} runs your {hook} hook {}, before ours: lefthook never runs the {hook}.old it moves a hook to",
            path.display(),
            p.display(),
            hook = hook_of(p),
        ));
    }
    // lefthook installs a git hook only for the hooks its configuration has jobs for.
    match std::process::Command::new("lefthook")
        .arg("install")
        .current_dir(root)
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(o) if o.status.success() => Ok((out, Vec::new())),
        _ => Ok((out, vec![
            "could not run `lefthook install`: run it, so that lefthook installs the hooks it runs ours from"
                .to_owned(),
        ])),
    }
}

/// The git hooks a `lefthook install` in `root` writes into `hooks`: ours, and each hook a
/// top-level key of lefthook's configuration names.
fn lefthook_installs(root: &Path, hook: &str) -> bool {
    HOOK_NAMES.contains(&hook)
        || LEFTHOOK_CONFIGS.iter().chain(&LEFTHOOK_LOCAL).any(|f| {
            read(&root.join(f))
                .lines()
                .any(|l| l.trim_end() == format!("{hook}:"))
        })
}

/// The user's hooks (neither lefthook's nor ours) that `lefthook install` in `root` is about to
/// move to `<hook>.old`, as the paths they will have there.
fn displaced_by_lefthook(root: &Path, hooks: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(hooks)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|name| !name.contains('.') && lefthook_installs(root, name))
        .filter(|name| is_users_hook(&hooks.join(name)))
        .filter(|name| !hooks.join(format!("{name}.old")).exists())
        .map(|name| hooks.join(format!("{name}.old")))
        .collect();
    out.sort();
    out
}

/// The user's hooks in `hooks` (kept as `<hook>.old` by lefthook, or chained by ours) that our
/// `lefthook-local.yml` (`text`) runs.
fn running_users_hooks(hooks: &Path, text: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(hooks)
        .into_iter()
        .flatten()
        .filter_map(|e| Some(e.ok()?.path()))
        .filter(|p| is_users_hook(p) && runs_users_hook(text, p))
        .collect();
    out.sort();
    out
}

/// Whether our `lefthook-local.yml` (`text`) has a job that runs the user's hook at `path`.
fn runs_users_hook(text: &str, path: &Path) -> bool {
    text.contains(&yaml_quoted(&users_job_run(path)))
}

/// Whether the file at `path` is a hook of the user's: neither lefthook's nor ours.
fn is_users_hook(path: &Path) -> bool {
    path.is_file() && !is_lefthook_hook(path) && !super::is_ours(path)
}

/// Whether the hook file at `path` is lefthook's.
pub(super) fn is_lefthook_hook(path: &Path) -> bool {
    read(path).contains("lefthook")
}

/// The git hook a hook file kept under another name (`<hook>.old`, `<hook>.pre-entire.002`)
/// is for: git's hook names have no dot.
fn hook_of(kept: &Path) -> &str {
    kept.file_name()
        .and_then(|s| s.to_str())
        .and_then(|s| s.split('.').next())
        .unwrap_or_default()
}

/// The kept hooks' file names, for the user.
fn names(kept: &[PathBuf]) -> String {
    kept.iter()
        .map(|p| p.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The command a lefthook job runs the user's hook kept at `path` with: with git's arguments
/// (`{0}`), shell-quoted (the path may hold any character).
fn users_job_run(path: &Path) -> String {
    format!("{} {{0}}", super::shell_quoted(&path.display().to_string()))
}

/// `text` as a single-quoted YAML scalar.
fn yaml_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// Our `lefthook-local.yml` ([`lefthook_local`]), written to `path`.
fn write_lefthook_local(path: &Path, users: &[PathBuf], ours: bool) -> Result<(), HookError> {
    crate::base::fs::write_atomic(path, lefthook_local(users, ours).as_bytes(), 0o644)
        .map_err(|e| io(format!("write {}", path.display()))(e).into())
}

/// The text of our `lefthook-local.yml`: for each hook, a job for each of the user's hooks kept
/// in `users` (with git's input: lefthook hands it to every job that asks), then ours when
/// `ours`.
fn lefthook_local(users: &[PathBuf], ours: bool) -> String {
    format!("{ADDED_MARK}\n{}", lefthook_jobs(users, ours))
}

/// Adds our line to the end of each of husky's scripts that lacks one (creating the script
/// where there is none), so that husky runs it after the team's own lines.
fn wire_husky(scripts: &Path) -> Result<Vec<String>, HookError> {
    let mut changed = Vec::new();
    for hook in HOOK_NAMES {
        let path = scripts.join(hook);
        let text = read(&path);
        if text.contains(&entry_point(hook)) {
            continue;
        }
        let args = if hook == "post-commit" { "" } else { "\"$@\"" };
        let sep = if text.is_empty() || text.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        let added = format!("{text}{sep}{ADDED_MARK}\n{}\n", guarded(hook, args));
        if path.exists() {
            write_keeping_mode(&path, &added)?;
        } else {
            // Executable: husky before 9 has git run these scripts directly.
            crate::base::fs::write_atomic(&path, added.as_bytes(), 0o755)
                .map_err(io(format!("write {}", path.display())))?;
        }
        changed.push(path.display().to_string());
    }
    if changed.is_empty() {
        return Ok(Vec::new());
    }
    Ok(vec![format!(
        "added ours to husky's scripts {}: commit them so every clone runs ours (the line does nothing where git-entire-checkpoint is not installed)",
        changed.join(", ")
    )])
}

/// `text` without our added line and the mark above it, or `None` when it has none.
fn without_added_line(text: &str) -> Option<String> {
    let start = text.find(&format!("{ADDED_MARK}\n"))?;
    let after_mark = start + ADDED_MARK.len() + 1;
    let end = text[after_mark..]
        .find('\n')
        .map_or(text.len(), |i| after_mark + i + 1);
    Some(format!("{}{}", &text[..start], &text[end..]))
}

/// The jobs for lefthook running each of the user's hooks kept in `users`, then ours when
/// `ours`, grouped by git hook (`{1}`, `{0}`: git's first and all arguments; `use_stdin` hands
/// git's input to a job that reads it).
fn lefthook_jobs(users: &[PathBuf], ours: bool) -> String {
    const OURS: [(&str, &str, bool); 4] = [
        ("pre-push", "{1} {2}", false),
        ("prepare-commit-msg", "{0}", false),
        ("post-commit", "", false),
        ("post-rewrite", "{1}", true),
    ];
    let mut hooks: Vec<&str> = OURS.iter().filter(|_| ours).map(|(h, ..)| *h).collect();
    for u in users {
        if !hooks.contains(&hook_of(u)) {
            hooks.push(hook_of(u));
        }
    }
    let mut out = String::new();
    for hook in hooks {
        out.push_str(&format!("{hook}:\n  jobs:\n"));
        for u in users.iter().filter(|u| hook_of(u) == hook) {
            out.push_str(&format!(
                "    - name: {}\n      run: {}\n      use_stdin: true\n",
                yaml_quoted(&format!("your {hook} hook ({})", u.display())),
                yaml_quoted(&users_job_run(u)),
            ));
        }
        if let Some((_, args, stdin)) = OURS.iter().filter(|_| ours).find(|(h, ..)| *h == hook) {
            out.push_str(&format!(
                "    - name: entire-checkpoints\n      run: {}\n{}",
                yaml_quoted(&guarded(hook, args)),
                if *stdin {
                    "      use_stdin: true\n"
                } else {
                    ""
                }
            ));
        }
    }
    out
}

/// The call of our entry point for `hook`, as every line that runs ours has it.
fn entry_point(hook: &str) -> String {
    match hook {
        "pre-push" => "git entire-prepush".to_owned(),
        _ => format!("git entire-checkpoint hook {hook}"),
    }
}

/// Our command for `hook` in a manager's configuration, `args` standing for git's arguments. It
/// does nothing where this tool is not installed (a teammate's clone) and never fails the git
/// command.
fn guarded(hook: &str, args: &str) -> String {
    let bin = match hook {
        "pre-push" => "git-entire-prepush",
        _ => "git-entire-checkpoint",
    };
    let call = [entry_point(hook), args.to_owned()].join(" ");
    format!(
        "if command -v {bin} >/dev/null 2>&1; then {} || true; fi",
        call.trim_end()
    )
}

/// A file's text, empty when it cannot be read.
fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

fn write_keeping_mode(path: &Path, text: &str) -> Result<(), HookError> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).map_or(0o644, |m| m.permissions().mode() & 0o7777);
    crate::base::fs::write_atomic(path, text.as_bytes(), mode)
        .map_err(|e| io(format!("write {}", path.display()))(e).into())
}
