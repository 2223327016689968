//! Where git looks for hooks, and whether ours are there.

pub mod fast;
mod managers;

use std::path::{Path, PathBuf};

pub use managers::Manager;

use crate::base::crashpoint::crashpoint;
use crate::base::error::io_context as io;
use crate::git::repo::Repo;

/// The line that marks a hook script as ours (so it can be replaced, never a foreign one).
pub const HOOK_MARKER: &str = "Entire checkpoints hook";

/// The hooks `status` reports on, in order.
pub const HOOK_NAMES: [&str; 4] = [
    "pre-push",
    "post-commit",
    "prepare-commit-msg",
    "post-rewrite",
];

/// The hook scripts `hooks install` writes: `(name, script)`. The scripts are the files of
/// `hooks/` in the source tree, compiled in.
pub const SCRIPTS: [(&str, &str); 4] = [
    ("pre-push", include_str!("../../../hooks/pre-push")),
    (
        "prepare-commit-msg",
        include_str!("../../../hooks/prepare-commit-msg"),
    ),
    ("post-commit", include_str!("../../../hooks/post-commit")),
    ("post-rewrite", include_str!("../../../hooks/post-rewrite")),
];

/// The hook `hooks install` adds only when checkpoint gc is enabled in settings
/// (`strategy_options.checkpoint_gc_days`): git's automatic maintenance then also drops local
/// checkpoint refs the checkpoint remote holds.
pub const GC_SCRIPT: (&str, &str) = ("pre-auto-gc", include_str!("../../../hooks/pre-auto-gc"));

/// The script `hooks uninstall` leaves where ours ran two or more other hooks for one hook name
/// (`@HOOK@` is that name): git runs one hook, so it runs each of them in turn, as ours did,
/// and nothing else ([`leave_chain`]).
const CHAIN: &str = include_str!("../../../hooks/chain");

/// The line that marks a hook script as the chain `hooks uninstall` left ([`CHAIN`]): not ours
/// (it runs nothing of checkpoints), but ours to replace or dissolve.
const CHAIN_MARKER: &str = "Entire checkpoints chain";

/// The line of each hook script that `hooks install` replaces with [`RUNNER`].
const RUNNER_LINE: &str = "# @entire-runner@ (`hooks install` puts hooks/runner.sh here)\n";

/// The shell function the hook scripts run our binaries with; `@BIN_DIR@` becomes the directory
/// `hooks install` ran from.
const RUNNER: &str = include_str!("../../../hooks/runner.sh");

/// `script` as `hooks install` writes it: [`RUNNER`] in place of its [`RUNNER_LINE`], running
/// our binaries from the directory of the running one (GUI git clients, IDEs and cron run hooks
/// without the user's PATH). Where that directory cannot be known, the hooks use PATH, and
/// `warnings` says so.
fn render(script: &str, warnings: &mut Vec<String>) -> String {
    let dir = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
        .and_then(|d| d.to_str().map(str::to_owned));
    let quoted = match &dir {
        Some(d) => shell_quoted(d),
        None => {
            let warning = "the directory of git-entire-checkpoint is not known: the hooks run our binaries from PATH, so a git client that runs hooks without your PATH skips them".to_owned();
            if !warnings.contains(&warning) {
                warnings.push(warning);
            }
            "''".to_owned()
        }
    };
    script.replace(RUNNER_LINE, &RUNNER.replace("@BIN_DIR@", &quoted))
}

/// `text` as one single-quoted word of a POSIX shell.
fn shell_quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

/// The suffix a foreign hook is renamed to when ours takes its place (and is chained).
pub const CHAINED_SUFFIX: &str = ".pre-entire";

/// Errors installing hooks.
#[derive(Debug, thiserror::Error)]
pub enum HookError {
    /// A hook manager's configuration file that is not ours lacks our hooks; nothing was
    /// written.
    #[error("{manager} manages this repository's git hooks, and {file} is not ours, so nothing was written. Add ours to it (docs/hooks.md has the snippet for {manager}):\n{lines}or install ours beside {manager}'s hooks (until {manager} installs its own again):\n    {command}")]
    Managed {
        /// The manager's name.
        manager: &'static str,
        /// The configuration file.
        file: String,
        /// What to add to it.
        lines: String,
        /// The `hooks install` command that installs beside the manager.
        command: String,
    },
    /// `--force` where husky owns the hooks: its hooks find the script to run by their own file
    /// name, so a renamed one (chained by ours) would silently skip the user's script.
    #[error("husky runs the script named like the hook that runs it, so ours cannot chain husky's hooks in {dir} (the user's scripts would stop running); nothing was written. Run without --force: husky's scripts then run ours:\n    git entire-checkpoint hooks install")]
    HuskyForced {
        /// The hooks directory.
        dir: String,
    },
    /// The hooks directory is shared with other repositories or tracked; nothing was written.
    #[error("git runs this repository's hooks from {dir}, which is shared: {why}. Nothing was written; to install there all the same:\n    git entire-checkpoint hooks install --shared")]
    Shared {
        /// The hooks directory.
        dir: String,
        /// Who else runs hooks from it.
        why: String,
    },
    /// A file operation failed.
    #[error(transparent)]
    Io(#[from] crate::base::error::IoError),
}

/// What happened to one hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookState {
    /// Ours, and nothing is chained.
    Installed,
    /// Ours, chaining the hooks that were there before (their file names, in the order they
    /// run).
    Chained(Vec<String>),
    /// Run by the hook manager (named): from its own configuration, or (pre-commit) as the hook
    /// it runs before its own, `<hook>.legacy`.
    Managed(&'static str),
    /// The chain `hooks uninstall` left where ours ran two or more hooks (the file names it
    /// runs, in order); ours is not installed.
    Chain(Vec<String>),
    /// Someone else's hook; ours is not installed.
    Foreign,
    /// No hook.
    Missing,
}

/// Whether the hook file at `path` is pre-commit's.
fn is_pre_commit_script(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains("File generated by pre-commit"))
}

/// Where our `name` hook goes in `dir`: `<name>`, or `<name>.legacy` where pre-commit's script
/// is `<name>`. pre-commit runs `<name>.legacy` first (its "migration mode", with git's
/// arguments, and git's input for pre-push), and its re-install keeps it; the one it finds at
/// `<name>` that is not its own, ours included, it moves there itself.
fn our_path(dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(name);
    if is_pre_commit_script(&path) {
        dir.join(format!("{name}.legacy"))
    } else {
        path
    }
}

fn write_script(path: &Path, text: &str) -> Result<(), HookError> {
    crate::base::fs::write_atomic(path, text.as_bytes(), 0o755)
        .map_err(|e| io(format!("write {}", path.display()))(e).into())
}

/// How `hooks install` may proceed.
#[derive(Debug, Clone, Copy, Default)]
pub struct InstallOptions {
    /// Install ours into the hooks directory even where lefthook owns it, rather than into its
    /// configuration.
    pub force: bool,
    /// Install even where the hooks directory is shared or tracked.
    pub shared: bool,
}

/// What `hooks install` did: each hook's state, and what the user should be told (hooks that
/// were found in our place and are now chained, a shared directory written to).
#[derive(Debug, Clone, Default)]
pub struct Installed {
    /// Each hook's state after the install.
    pub states: Vec<(String, HookState)>,
    /// What was changed besides each hook's state (a manager's configuration written, a
    /// user's hook that runs from elsewhere now, another directory cleaned), one sentence each:
    /// information, not warnings.
    pub done: Vec<String>,
    /// Warnings for the user, one sentence each.
    pub warnings: Vec<String>,
}

/// Installs our hooks. Ours are replaced; a foreign hook is renamed to `<name>.pre-entire` and
/// chained (run first, same arguments and input, its failure passed through). A foreign hook
/// found where ours was installed before (someone replaced ours) is chained too, after the ones
/// kept earlier, as `<name>.pre-entire.NNN`, with a warning naming it: no hook is ever kept
/// where it does not run. Where pre-commit's script is in place, ours goes where it runs it
/// ([`our_path`]). Where husky or lefthook owns the directory, ours goes into its configuration
/// instead ([`Manager::wire`]), unless `options.force`: under husky, ours left in its directory
/// by an earlier install are taken out (what they chained put back); under lefthook, ours also
/// goes to `<name>.old` ([`keep_ours_under_lefthook`]), which `lefthook uninstall` puts back in
/// place; under husky ours also goes into the default `hooks` directory, which git runs again once husky's `core.hooksPath` is unset, and
/// a plain install adds ours to husky's scripts where a `.husky` directory exists (husky's
/// later install then runs ours). A shared or tracked directory
/// ([`sharing`]) is left alone unless `options.shared`. `options.force` where husky owns the
/// directory is refused ([`HookError::HuskyForced`]).
pub fn install(repo: &Repo, options: InstallOptions) -> Result<Installed, HookError> {
    let dir = hooks_dir(repo);
    let manager = Manager::detect(repo, &dir);
    if options.force && matches!(manager, Some(Manager::Husky { .. })) {
        return Err(HookError::HuskyForced {
            dir: dir.display().to_string(),
        });
    }
    // `.entire/.gitignore` is written only once the install goes ahead: a refused install
    // changes nothing.
    if let Some(manager) = manager.filter(|_| !options.force) {
        manager.check_wirable()?;
        let mut warnings = Vec::new();
        let mut done = Vec::new();
        let users = match manager {
            Manager::Lefthook { .. } => {
                keep_ours_under_lefthook(&dir, &manager, &mut warnings, &mut done)?
            }
            Manager::Husky { .. } => {
                done.extend(take_ours_out(&dir)?);
                Vec::new()
            }
        };
        let (wired, wire_warnings) = manager.wire(&users)?;
        done.extend(wired);
        warnings.extend(wire_warnings);
        warnings.extend(ignore_local_files(repo));
        if let Manager::Husky { .. } = manager {
            // husky has no uninstall of its own: once `core.hooksPath` is unset, git runs the
            // default directory again, and ours must be there (inert until then).
            let default = repo.common_dir().join("hooks");
            if default != dir {
                write_ours(repo, &default, &mut warnings, &mut done)?;
                done.push(format!(
                    "installed ours in {} too: git runs them there once husky's core.hooksPath is unset",
                    default.display()
                ));
            }
        }
        return Ok(Installed {
            states: status(repo),
            done,
            warnings,
        });
    }
    let shared = sharing(repo, &dir);
    let mut warnings = Vec::new();
    let mut done = Vec::new();
    if let Some(why) = shared {
        if !options.shared {
            return Err(HookError::Shared {
                dir: dir.display().to_string(),
                why,
            });
        }
        warnings.push(format!(
            "installed into the shared hooks directory {}: {why}",
            dir.display()
        ));
    }
    warnings.extend(ignore_local_files(repo));
    let states = write_ours(repo, &dir, &mut warnings, &mut done)?;
    // husky's committed scripts run ours once husky is installed (it points core.hooksPath
    // away from `dir`, where ours would stop running). A `lefthook-local.yml` left behind is
    // not a lefthook to install again.
    for husky in Manager::leftovers(repo, None)
        .into_iter()
        .filter(|m| matches!(m, Manager::Husky { .. }))
    {
        done.extend(husky.wire(&[])?.0);
    }
    Ok(Installed {
        states,
        done,
        warnings,
    })
}

/// Writes our scripts into the hooks directory `dir`, chaining each foreign hook in our place,
/// and records `dir` for `hooks uninstall`. Returns each hook's state; adds what the user
/// should be told to `warnings` and `done`.
fn write_ours(
    repo: &Repo,
    dir: &Path,
    warnings: &mut Vec<String>,
    done: &mut Vec<String>,
) -> Result<Vec<(String, HookState)>, HookError> {
    std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
    let mut states = Vec::new();
    let gc = crate::ops::gc::enabled_in_settings(repo).then_some(GC_SCRIPT);
    for (name, script) in SCRIPTS.into_iter().chain(gc) {
        let path = our_path(dir, name);
        // The hooks a chain left by `hooks uninstall` runs are kept where ours runs them: ours
        // goes over the chain. A foreign hook is kept for ours to run, and stays in place until
        // ours goes over it: at no moment is there no hook.
        if path.exists() && !is_ours(&path) && !is_chain(&path) {
            warnings.extend(keep_foreign(dir, name, &path)?);
        }
        if path != dir.join(name) {
            done.extend(drop_chained_pre_commit(dir, name)?);
        }
        let text = render(script, warnings);
        write_script(&path, &text)?;
        states.push((name.to_string(), state(dir, name, None)));
    }
    record_written_dir(repo, dir)?;
    Ok(states)
}

/// The file where `hooks install` records each hooks directory it wrote ours into (one path a
/// line), so that `hooks uninstall` cleans every one of them, also after `core.hooksPath` moved
/// (a manager installed after ours, a `.githooks` folder).
fn written_dirs_file(repo: &Repo) -> PathBuf {
    repo.common_dir().join("entire").join("hook-dirs")
}

/// The hooks directories ours may be in: the one git uses now, those `hooks install` recorded,
/// and the default one (installs before they were recorded wrote there, or into the first).
fn written_dirs(repo: &Repo) -> Vec<PathBuf> {
    let recorded = std::fs::read_to_string(written_dirs_file(repo)).unwrap_or_default();
    let mut dirs = vec![hooks_dir(repo)];
    for dir in recorded
        .lines()
        .filter(|l| !l.is_empty())
        .map(PathBuf::from)
        .chain([repo.common_dir().join("hooks")])
    {
        if !dirs.contains(&dir) {
            dirs.push(dir);
        }
    }
    dirs
}

/// Adds `dir` to the [`written_dirs_file`].
fn record_written_dir(repo: &Repo, dir: &Path) -> Result<(), HookError> {
    let file = written_dirs_file(repo);
    let mut text = std::fs::read_to_string(&file).unwrap_or_default();
    let line = dir.display().to_string();
    if text.lines().any(|l| l == line) {
        return Ok(());
    }
    text.push_str(&line);
    text.push('\n');
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).map_err(io(format!("create {}", parent.display())))?;
    }
    crate::base::fs::write_atomic(&file, text.as_bytes(), 0o644)
        .map_err(|e| io(format!("write {}", file.display()))(e).into())
}

/// What [`heal`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Healed {
    /// Our hooks put back in place.
    pub put_back: Vec<String>,
    /// Our hooks whose place a hook manager (named) had taken, and which it runs now.
    pub run_by: Vec<(String, &'static str)>,
    /// git-lfs's hooks removed after its uninstall (file names in the hooks directory).
    pub lfs_removed: Vec<String>,
}

/// Puts ours back where another tool displaced one of our hooks after it was installed
/// (`git lfs install --force`, `pre-commit install -f`, a hook manager's install), as
/// `hooks install` does: the other tool's hook is kept and run, or the manager runs ours; and
/// finishes an uninstall of git-lfs that ours stood in the way of ([`drop_uninstalled_lfs`]).
/// Our hooks call this, so whichever of ours still runs heals the others. Nothing is done where
/// none of ours is installed in the hooks directory (ours run from a manager's configuration,
/// or by hand).
pub fn heal(repo: &Repo) -> Result<Healed, HookError> {
    let (mut put_back, mut run_by) = (Vec::new(), Vec::new());
    let displaced = displaced(repo);
    if !displaced.is_empty() {
        let installed = install(
            repo,
            InstallOptions {
                force: false,
                shared: true,
            },
        )?;
        for name in displaced {
            // pre-commit runs ours from `<hook>.legacy`, which is ours put back in a place.
            match installed.states.iter().find(|(n, _)| *n == name) {
                Some((_, HookState::Managed(m))) if *m != "pre-commit" => run_by.push((name, *m)),
                _ => put_back.push(name),
            }
        }
    }
    Ok(Healed {
        put_back,
        run_by,
        lfs_removed: drop_uninstalled_lfs(repo, &hooks_dir(repo))?,
    })
}

/// The hooks `git lfs install` writes.
const LFS_HOOKS: [&str; 4] = ["pre-push", "post-checkout", "post-commit", "post-merge"];

/// Whether `text` is git-lfs's own `hook` script: nothing but the shebang, the guard that
/// fails where git-lfs is missing, and the call of `git lfs <hook>`.
fn is_lfs_hook(text: &str, hook: &str) -> bool {
    let call = format!("git lfs {hook} \"$@\"");
    text.contains(&call)
        && text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .all(|l| l.starts_with("#!") || l.starts_with("command -v git-lfs ") || l == call)
}

/// `git lfs uninstall` removes git-lfs's `filter.lfs` configuration and its hooks, but stops at
/// the first hook that is not its own: ours, chaining LFS's `pre-push`. Once the configuration
/// is gone while ours chains one of LFS's hooks, this removes what that uninstall left: LFS's
/// hooks ours chains, and LFS's `post-checkout` and `post-merge`. (Otherwise, where git-lfs is
/// not installed any more, LFS's chained hook fails every push, telling the user to delete
/// ours.) Returns the file names removed.
fn drop_uninstalled_lfs(repo: &Repo, dir: &Path) -> Result<Vec<String>, HookError> {
    let lfs_text = |file: &str, hook: &str| {
        std::fs::read_to_string(dir.join(file)).is_ok_and(|t| is_lfs_hook(&t, hook))
    };
    let chained: Vec<String> = LFS_HOOKS
        .iter()
        .filter(|hook| {
            let path = our_path(dir, hook);
            is_ours(&path) || is_chain(&path)
        })
        .flat_map(|hook| {
            chained_hooks(dir, hook)
                .into_iter()
                .filter(|f| lfs_text(f, hook))
        })
        .collect();
    let configured = [
        "filter.lfs.process",
        "filter.lfs.clean",
        "filter.lfs.smudge",
    ]
    .iter()
    .any(|k| repo.config_string(k).is_some());
    if chained.is_empty() || configured {
        return Ok(Vec::new());
    }
    let own = LFS_HOOKS
        .iter()
        .filter(|hook| lfs_text(hook, hook))
        .map(|hook| hook.to_string());
    let mut removed = Vec::new();
    for file in chained.into_iter().chain(own) {
        let path = dir.join(&file);
        std::fs::remove_file(&path).map_err(io(format!("remove {}", path.display())))?;
        removed.push(file);
    }
    Ok(removed)
}

/// Our hooks that another tool displaced: not ours, not run by a manager, in a hooks directory
/// where one of ours is installed. Empty where none of ours is.
pub fn displaced(repo: &Repo) -> Vec<String> {
    let dir = hooks_dir(repo);
    if !HOOK_NAMES.iter().any(|n| is_ours(&our_path(&dir, n))) {
        return Vec::new();
    }
    status(repo)
        .into_iter()
        .filter(|(_, s)| {
            matches!(
                s,
                HookState::Foreign | HookState::Missing | HookState::Chain(_)
            )
        })
        .map(|(name, _)| name)
        .collect()
}

/// Takes ours out of a hooks directory husky owns, putting back what each chained
/// ([`remove_ours`]). Returns what the user should be told.
fn take_ours_out(dir: &Path) -> Result<Vec<String>, HookError> {
    let mut done = Vec::new();
    for (name, _) in SCRIPTS {
        let path = dir.join(name);
        if is_ours(&path) {
            done.extend(remove_ours(dir, name, &path)?.0);
        }
    }
    Ok(done)
}

/// Where lefthook owns the hooks directory `dir`: each of our hooks goes to `<name>.old`, where
/// lefthook keeps the hook it replaced and from where `lefthook uninstall` puts it back, so ours
/// runs again (chaining the user's hooks) once lefthook is uninstalled; until then lefthook runs
/// ours from its configuration ([`Manager::wire`]). Where lefthook's hook is not in place yet,
/// ours goes in place, and the `lefthook install` that follows moves it to `<name>.old` (where
/// that install cannot run, ours runs as without lefthook). A hook of the user's in our place
/// runs now: it is chained (`<name>.pre-entire`) and returned, for lefthook to run it. One
/// lefthook keeps at `<name>.old`, which it does not run, is chained too, not returned: it runs
/// again, with ours, once lefthook is uninstalled, as it would without ours. The hooks ours
/// chains where it ran them until now (ours in place, or moved aside by lefthook without
/// lefthook running ours yet) are returned too. Adds what the user should be told to `warnings`
/// and `done`.
fn keep_ours_under_lefthook(
    dir: &Path,
    manager: &Manager,
    warnings: &mut Vec<String>,
    done: &mut Vec<String>,
) -> Result<Vec<PathBuf>, HookError> {
    std::fs::create_dir_all(dir).map_err(io(format!("create {}", dir.display())))?;
    let theirs = |p: &Path| p.exists() && !is_ours(p) && !managers::is_lefthook_hook(p);
    let mut users = Vec::new();
    for (name, script) in SCRIPTS {
        let here = dir.join(name);
        let old = dir.join(format!("{name}.old"));
        // A chain left by `hooks uninstall` goes (ours runs the hooks it ran); one in place
        // was running them.
        let chain_ran = drop_chain(&here)?;
        drop_chain(&old)?;
        if theirs(&old) {
            let slot = chain(dir, name, &old)?;
            done.push(format!(
                "your hook {} (lefthook does not run it) is kept as {}: ours runs it again once lefthook is uninstalled",
                old.display(),
                slot.display()
            ));
        }
        if chain_ran || is_ours(&here) || (is_ours(&old) && !manager.runs_ours(name)) {
            users.extend(chained_hooks(dir, name).into_iter().map(|f| dir.join(f)));
        }
        if theirs(&here) {
            users.push(chain(dir, name, &here)?);
        }
        let target = if here.exists() && !is_ours(&here) || is_ours(&old) {
            old
        } else {
            here.clone()
        };
        if target != here && is_ours(&here) {
            // lefthook cannot move ours aside onto ours.
            std::fs::remove_file(&here).map_err(io(format!("remove {}", here.display())))?;
        }
        write_script(&target, &render(script, warnings))?;
    }
    Ok(users)
}

/// Renames the hook at `path` to the next of the hooks ours chains for `name` in `dir`
/// ([`chain_slot`]); returns its new path.
fn chain(dir: &Path, name: &str, path: &Path) -> Result<PathBuf, HookError> {
    let slot = dir.join(chain_slot(dir, name));
    std::fs::rename(path, &slot).map_err(io(format!("keep {}", path.display())))?;
    Ok(slot)
}

/// Keeps the hook at `path` also as the next of the hooks ours chains for `name` in `dir`
/// ([`chain_slot`]), leaving it in place: ours is then written over it in one rename, so that
/// a process killed in between leaves the user's hook running where it was (a rename away
/// first would leave no hook at all). A hard link (of a symbolic link, the link itself), or a
/// copy where the file system has none. Returns the slot's file name.
fn keep_in_place(dir: &Path, name: &str, path: &Path) -> Result<String, HookError> {
    let slot = chain_slot(dir, name);
    let to = dir.join(&slot);
    std::fs::hard_link(path, &to)
        .or_else(|_| std::fs::copy(path, &to).map(drop))
        .map_err(io(format!("keep {}", path.display())))?;
    crashpoint("hooks.after-keep");
    Ok(slot)
}

/// The file name the next hook ours chains for `name` in `dir` gets: `<name>.pre-entire`, or
/// after the hooks already kept there, `<name>.pre-entire.NNN`.
fn chain_slot(dir: &Path, name: &str) -> String {
    if chained_hooks(dir, name).is_empty() {
        return format!("{name}{CHAINED_SUFFIX}");
    }
    (2..)
        .map(|n| format!("{name}{CHAINED_SUFFIX}.{n:03}"))
        .find(|f| !dir.join(f).exists())
        .expect("a free slot")
}

/// Writes `.entire/.gitignore` so that the per-clone settings file is never committed (as the
/// reference does on enable). Returns a warning when it cannot: the hooks work without it.
fn ignore_local_files(repo: &Repo) -> Option<String> {
    let worktree = repo.workdir()?;
    crate::config::edit::ignore_local_files(worktree, repo.foreign_settings_dir())
        .err()
        .map(|e| {
            format!(
                "{}; .entire/settings.local.json is not ignored by git",
                crate::base::error::error_chain(&e)
            )
        })
}

/// Where pre-commit's script runs ours, removes the copies of pre-commit's script that ours
/// chains (an earlier `--force` install put them there): run from ours, pre-commit's script
/// would run itself again, which it refuses. Returns what it removed, for the user.
fn drop_chained_pre_commit(dir: &Path, name: &str) -> Result<Vec<String>, HookError> {
    let mut warnings = Vec::new();
    for chained in chained_hooks(dir, name) {
        let path = dir.join(&chained);
        if is_pre_commit_script(&path) {
            std::fs::remove_file(&path).map_err(io(format!("remove {}", path.display())))?;
            warnings.push(format!(
                "removed {}, a copy of pre-commit's {name} hook: pre-commit runs ours now",
                path.display()
            ));
        }
    }
    Ok(warnings)
}

/// Moves the foreign hook at `path` (where ours goes) out of our way so ours runs it: to
/// `<name>.pre-entire`, or after the hooks already kept there when it replaced ours since
/// (`<name>.pre-entire.NNN`). One identical to a kept hook is a tool's re-install of its own
/// hook (`git lfs update --force` does that): ours already runs it, so the copy goes rather than
/// running twice. Returns the warnings for the user.
fn keep_foreign(dir: &Path, name: &str, path: &Path) -> Result<Option<String>, HookError> {
    let kept = chained_hooks(dir, name);
    if kept.is_empty() {
        keep_in_place(dir, name, path)?;
        return Ok(None);
    }
    let found = std::fs::read(path).ok();
    if let Some(same) = kept
        .iter()
        .find(|k| std::fs::read(dir.join(k)).ok() == found)
    {
        // Ours goes over it (in one rename: the hook runs until then).
        return Ok(Some(format!(
            "{} had replaced our {name} hook; it is the same as {same}, which ours runs",
            path.display()
        )));
    }
    let slot = keep_in_place(dir, name, path)?;
    Ok(Some(format!(
        "{} had replaced our {name} hook since it was installed; it is kept as {slot} and runs after {}, then ours",
        path.display(),
        kept.join(", ")
    )))
}

/// The arguments of the `git entire-checkpoint hooks install` command that installs ours in
/// this repository as it is now: with `--shared` where the hooks directory is shared (and no
/// hook manager, whose configuration ours would go into, owns it).
pub fn install_args(repo: &Repo) -> Vec<&'static str> {
    let dir = hooks_dir(repo);
    let mut args = vec!["hooks", "install"];
    if Manager::detect(repo, &dir).is_none() && sharing(repo, &dir).is_some() {
        args.push("--shared");
    }
    args
}

/// The file names of the hooks ours chains for `name` in `dir`, in the order ours runs them:
/// `<name>.pre-entire`, then `<name>.pre-entire.NNN` (three digits, so the hook scripts' glob
/// runs them in this order too).
fn chained_hooks(dir: &Path, name: &str) -> Vec<String> {
    let first = format!("{name}{CHAINED_SUFFIX}");
    let prefix = format!("{first}.");
    let mut later: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| {
            f.strip_prefix(&prefix)
                .is_some_and(|n| n.len() == 3 && n.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    later.sort();
    let mut out = Vec::new();
    if dir.join(&first).exists() {
        out.push(first);
    }
    out.extend(later);
    out
}

/// Who else runs the hooks in `dir`, when anyone might: `None` when `dir` is inside this
/// repository's git dir (only this repository and its worktrees run them). A directory outside
/// it is shared with every repository whose `core.hooksPath` names it (all of them when the
/// setting is global or system-wide), and a tracked one with every clone.
pub fn sharing(repo: &Repo, dir: &Path) -> Option<String> {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let dir = canonical(dir);
    if dir.starts_with(canonical(repo.common_dir())) || dir.starts_with(canonical(repo.git_dir())) {
        return None;
    }
    let cwd = repo.workdir().unwrap_or(repo.common_dir());
    let git = |args: &[&str]| {
        crate::git::subprocess::Git::new(cwd)
            .args(args)
            .run(std::time::Duration::from_secs(30))
            .ok()
            .filter(|o| o.success())
            .map(|o| o.stdout)
    };
    let tracked = repo
        .workdir()
        .filter(|w| dir.starts_with(canonical(w)))
        .and_then(|_| git(&["ls-files", "--", &dir.to_string_lossy()]))
        .is_some_and(|out| !out.trim().is_empty());
    let scope = git(&["config", "--show-scope", "--get", "core.hooksPath"])
        .and_then(|out| out.split('\t').next().map(str::to_owned))
        .unwrap_or_default();
    Some(match scope.as_str() {
        "global" | "system" => format!(
            "core.hooksPath is set in your {scope} git config, so every repository without a core.hooksPath of its own runs the hooks there"
        ),
        _ if tracked => "it is tracked in this repository, so every clone that uses it runs the hooks there, and installing changes tracked files".to_owned(),
        _ => "it is outside this repository's git dir, so every repository whose core.hooksPath names it runs the hooks there".to_owned(),
    })
}

/// Removes our hooks and puts back the hook each chains, in its place; where ours chains two or
/// more (another tool replaced ours after an install, and an install or healing chained its
/// hook too), they all ran, and git runs one: a chain that runs them in turn takes ours' place
/// ([`leave_chain`]), so that no hook stops running. A chain an earlier uninstall left that now
/// runs one hook or none is dissolved ([`dissolve_chains`]), and what an uninstall of git-lfs
/// left behind ours is removed first ([`drop_uninstalled_lfs`]). Foreign hooks are never
/// touched. What `hooks install` put into a hook manager's configuration is taken
/// out, also from husky's scripts after husky was uninstalled ([`Manager::leftovers`]). Every
/// hooks directory ours was installed into is cleaned ([`written_dirs`]), each one git no longer
/// runs hooks from named in what is returned as done.
pub fn uninstall(repo: &Repo) -> Result<Installed, HookError> {
    let dir = hooks_dir(repo);
    let owner = Manager::detect(repo, &dir);
    let mut elsewhere = Vec::new();
    // The user's hooks put back in `dir`, from where to where: a manager's configuration that
    // runs one follows it.
    let mut moved = Vec::new();
    let mut chains = Vec::new();
    for d in written_dirs(repo) {
        let lfs = drop_uninstalled_lfs(repo, &d)?;
        if !lfs.is_empty() {
            chains.push(format!(
                "git-lfs was uninstalled; removed the hooks its uninstall left behind ours in {}: {}",
                d.display(),
                lfs.join(", ")
            ));
        }
        chains.extend(dissolve_chains(&d)?);
        let mut removed = Vec::new();
        for (name, _) in SCRIPTS.into_iter().chain([GC_SCRIPT]) {
            // lefthook keeps a hook it replaced as `<name>.old`.
            for path in [our_path(&d, name), d.join(format!("{name}.old"))] {
                if is_ours(&path) {
                    let (chain, put_back) = remove_ours(&d, name, &path)?;
                    chains.extend(chain);
                    moved.extend(put_back.filter(|_| d == dir));
                    removed.push(name);
                }
            }
        }
        if d != dir && !removed.is_empty() {
            elsewhere.push(format!(
                "removed ours from {} too (git runs hooks from {} now), putting back what they ran: {}",
                d.display(),
                dir.display(),
                removed.join(", ")
            ));
        }
    }
    let mut done = match &owner {
        Some(manager) => manager.unwire(&moved)?,
        None => Vec::new(),
    };
    for manager in Manager::leftovers(repo, owner.as_ref()) {
        done.extend(manager.unwire(&moved)?);
    }
    done.extend(elsewhere);
    done.extend(chains);
    let file = written_dirs_file(repo);
    if file.exists() {
        std::fs::remove_file(&file).map_err(io(format!("remove {}", file.display())))?;
    }
    Ok(Installed {
        states: status(repo),
        done,
        warnings: Vec::new(),
    })
}

/// A hook put back from where ours chained it (`.0`) to where ours was (`.1`).
type PutBack = (PathBuf, PathBuf);

/// Replaces our `name` hook at `path` with the hook it chains, in one rename (there is a hook at
/// every moment); where it chains two or more, with a chain of them ([`leave_chain`]); where
/// none, removes it. Returns what the user should be told of a
/// chain left, and the hook put back.
fn remove_ours(
    dir: &Path,
    name: &str,
    path: &Path,
) -> Result<(Option<String>, Option<PutBack>), HookError> {
    let kept = chained_hooks(dir, name);
    if kept.len() > 1 {
        return Ok((Some(leave_chain(dir, name, path, &kept)?), None));
    }
    crashpoint("hooks.before-put-back");
    match put_back(dir, kept.first(), path)? {
        Some(moved) => Ok((None, Some(moved))),
        None => {
            std::fs::remove_file(path).map_err(io(format!("remove {}", path.display())))?;
            Ok((None, None))
        }
    }
}

/// Renames the chained hook `one` (a file name in `dir`), if any, to `path` (over what is there).
fn put_back(dir: &Path, one: Option<&String>, path: &Path) -> Result<Option<PutBack>, HookError> {
    let Some(one) = one else {
        return Ok(None);
    };
    let from = dir.join(one);
    std::fs::rename(&from, path).map_err(io(format!("restore {}", path.display())))?;
    Ok(Some((from, path.to_path_buf())))
}

/// Writes the [`CHAIN`] of the `name` hooks `kept` (in `dir`) at `path`, where ours was: they all
/// ran through ours, and git runs one hook. Returns what the user should be told.
fn leave_chain(dir: &Path, name: &str, path: &Path, kept: &[String]) -> Result<String, HookError> {
    write_script(path, &CHAIN.replace("@HOOK@", name))?;
    let lfs = kept
        .iter()
        .any(|k| std::fs::read_to_string(dir.join(k)).is_ok_and(|t| is_lfs_hook(&t, name)));
    Ok(format!(
        "{} is now a chain that runs {} in turn, as ours did (git runs one {name} hook, and each of them was running); to end it, merge them into one hook there, or delete all but one{} and run `git entire-checkpoint hooks uninstall` again",
        path.display(),
        kept.iter()
            .map(|k| dir.join(k).display().to_string())
            .collect::<Vec<_>>()
            .join(", "),
        if lfs { " (git-lfs's goes with `git lfs uninstall`)" } else { "" }
    ))
}

/// Whether the hook file at `path` is a chain `hooks uninstall` left ([`CHAIN`]).
fn is_chain(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| t.contains(CHAIN_MARKER))
}

/// Removes the chain `hooks uninstall` left at `path`, if one is there (the hooks it runs stay
/// where they are). Returns whether one was.
fn drop_chain(path: &Path) -> Result<bool, HookError> {
    if !is_chain(path) {
        return Ok(false);
    }
    std::fs::remove_file(path).map_err(io(format!("remove {}", path.display())))?;
    Ok(true)
}

/// Dissolves each chain an earlier `hooks uninstall` left in `dir` that runs one hook or none
/// now: the one is put back in the chain's place. Returns what the user should be told.
fn dissolve_chains(dir: &Path) -> Result<Vec<String>, HookError> {
    let mut done = Vec::new();
    for (name, _) in SCRIPTS.into_iter().chain([GC_SCRIPT]) {
        for place in [
            name.to_owned(),
            format!("{name}.legacy"),
            format!("{name}.old"),
        ] {
            let path = dir.join(&place);
            if !is_chain(&path) {
                continue;
            }
            let kept = chained_hooks(dir, name);
            if kept.len() > 1 {
                continue;
            }
            drop_chain(&path)?;
            done.push(match put_back(dir, kept.first(), &path)? {
                Some((from, _)) => format!(
                    "put back {} at {}: the chain there ran only it",
                    from.display(),
                    path.display()
                ),
                None => format!(
                    "removed {}: the chain there ran no hook any more",
                    path.display()
                ),
            });
        }
    }
    Ok(done)
}

/// The state of our `name` hook in `dir` (run by pre-commit's script counts as installed), where
/// `manager` owns the directory.
fn state(dir: &Path, name: &str, manager: Option<&Manager>) -> HookState {
    let path = our_path(dir, name);
    if is_ours(&path) {
        let chained = chained_hooks(dir, name);
        if !chained.is_empty() {
            HookState::Chained(chained)
        } else if path != dir.join(name) {
            HookState::Managed("pre-commit")
        } else {
            HookState::Installed
        }
    } else if let Some(m) = manager.filter(|m| path.exists() && m.runs_ours(name)) {
        HookState::Managed(m.name())
    } else if is_chain(&path) {
        HookState::Chain(chained_hooks(dir, name))
    } else if path.exists() {
        HookState::Foreign
    } else {
        HookState::Missing
    }
}

/// The state of each hook of [`HOOK_NAMES`], then of `pre-auto-gc` when gc is enabled in the
/// settings (so it is due) or ours is installed.
pub fn status(repo: &Repo) -> Vec<(String, HookState)> {
    let dir = hooks_dir(repo);
    let gc = GC_SCRIPT.0;
    let gc_due = crate::ops::gc::enabled_in_settings(repo) || is_ours(&dir.join(gc));
    let manager = Manager::detect(repo, &dir);
    HOOK_NAMES
        .iter()
        .copied()
        .chain(gc_due.then_some(gc))
        .map(|n| (n.to_string(), state(&dir, n, manager.as_ref())))
        .collect()
}

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

impl crate::base::error::ExitStatus for HookError {
    fn exit_code(&self) -> i32 {
        match self {
            HookError::Managed { .. }
            | HookError::HuskyForced { .. }
            | HookError::Shared { .. }
            | HookError::Io(_) => crate::base::error::FAILURE,
        }
    }
}
