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
        let hooks_are_lefthooks = HOOK_NAMES
            .iter()
            .any(|n| read(&dir.join(n)).contains("lefthook"));
        (hooks_are_lefthooks || LEFTHOOK_CONFIGS.iter().any(|f| root.join(f).exists())).then(|| {
            Manager::Lefthook {
                root: root.to_path_buf(),
            }
        })
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
            Manager::Lefthook { root } => LEFTHOOK_CONFIGS
                .iter()
                .chain(&LEFTHOOK_LOCAL)
                .any(|f| read(&root.join(f)).contains(&call)),
        }
    }

    /// Makes the manager's configuration run each of our hooks it does not run yet. Returns one
    /// sentence per change, for the user. A `lefthook-local.yml` that is not ours and lacks our
    /// jobs is left alone: [`HookError::Managed`], with the jobs to add.
    pub fn wire(&self) -> Result<Vec<String>, HookError> {
        match self {
            Manager::Husky { scripts } => wire_husky(scripts),
            Manager::Lefthook { root } => self.wire_lefthook(root),
        }
    }

    /// Takes out what [`Manager::wire`] put in; returns one sentence per change.
    pub fn unwire(&self) -> Result<Vec<String>, HookError> {
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
            Manager::Lefthook { root } => {
                let Some(path) = LEFTHOOK_LOCAL
                    .iter()
                    .map(|f| root.join(f))
                    .find(|p| read(p).starts_with(ADDED_MARK))
                else {
                    return Ok(out);
                };
                std::fs::remove_file(&path).map_err(io(format!("remove {}", path.display())))?;
                out.push(format!("removed {}", path.display()));
            }
        }
        Ok(out)
    }

    fn wire_lefthook(&self, root: &Path) -> Result<Vec<String>, HookError> {
        let mut out = Vec::new();
        let existing = LEFTHOOK_LOCAL
            .iter()
            .map(|f| root.join(f))
            .find(|p| p.exists());
        match existing {
            Some(_) if HOOK_NAMES.iter().all(|h| self.runs_ours(h)) => {}
            Some(path) => {
                return Err(HookError::Managed {
                    manager: self.name(),
                    file: path.display().to_string(),
                    lines: lefthook_jobs(),
                    command: "git entire-checkpoint hooks install --force".to_owned(),
                })
            }
            None => {
                let path = root.join(LEFTHOOK_LOCAL[0]);
                let text = format!("{ADDED_MARK}\n{}", lefthook_jobs());
                crate::base::fs::write_atomic(&path, text.as_bytes(), 0o644)
                    .map_err(io(format!("write {}", path.display())))?;
                out.push(format!(
                    "wrote {}: lefthook runs ours from there (a per-clone file lefthook never commits)",
                    path.display()
                ));
            }
        }
        // lefthook installs a git hook only for the hooks its configuration has jobs for.
        match std::process::Command::new("lefthook")
            .arg("install")
            .current_dir(root)
            .stdin(std::process::Stdio::null())
            .output()
        {
            Ok(o) if o.status.success() => {}
            _ => out.push(
                "could not run `lefthook install`: run it, so that lefthook installs the hooks it runs ours from"
                    .to_owned(),
            ),
        }
        Ok(out)
    }
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

/// The jobs of ours for a lefthook configuration (`{1}`, `{0}`: git's first and all
/// arguments; `use_stdin` hands git's input to the one job that reads it).
fn lefthook_jobs() -> String {
    let job = |hook: &str, args: &str, stdin: bool| {
        format!(
            "{hook}:\n  jobs:\n    - name: entire-checkpoints\n      run: '{}'\n{}",
            guarded(hook, args),
            if stdin { "      use_stdin: true\n" } else { "" }
        )
    };
    [
        job("pre-push", "{1} {2}", false),
        job("prepare-commit-msg", "{0}", false),
        job("post-commit", "", false),
        job("post-rewrite", "{1}", true),
    ]
    .concat()
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
