//! What the three binaries share: reading inputs, warnings, and mapping errors to exit codes.

#![allow(dead_code)] // Each binary uses its own subset.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};

/// Runs `run`, prints any error as `error: ...` on stderr, and exits with the code the error
/// chain decides (docs/cli.md: 1 failure, 2 usage, 3 not found, 128 not a repository).
pub fn main_with(run: impl FnOnce() -> Result<()>) -> ExitCode {
    stop_git_on_termination();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // A closed stdout (`| head`) is not an error worth a message.
            if let Some(io) = err.downcast_ref::<std::io::Error>() {
                if io.kind() == std::io::ErrorKind::BrokenPipe {
                    return ExitCode::SUCCESS;
                }
            }
            eprintln!("error: {err:#}");
            let code = entire_checkpoints::exit::code_for(err.as_ref());
            ExitCode::from(u8::try_from(code).unwrap_or(1))
        }
    }
}

/// Makes Ctrl-C (SIGINT), SIGTERM and a closed terminal (SIGHUP) stop the git processes this
/// process started, then exit 128 + the signal (130, 143, 129). git runs in process groups of
/// its own (so its deadline can kill everything it started), which the terminal's signals no
/// longer reach.
///
/// The signals are blocked in every thread (threads inherit the mask; std resets it in the
/// children it spawns) and taken by one thread with `sigwait`, which may take locks, unlike a
/// signal handler. Call it before any other thread exists.
fn stop_git_on_termination() {
    // SAFETY: a zeroed sigset_t is a valid argument to sigemptyset, which initialises it; the
    // mask calls get valid pointers.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::sigaddset(&mut set, libc::SIGHUP);
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    std::thread::spawn(move || loop {
        let mut sig = 0;
        // SAFETY: `set` is an initialised signal set and `sig` a valid out-pointer.
        if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
            entire_checkpoints::git::subprocess::kill_live_groups();
            std::process::exit(128 + sig);
        }
    });
}

/// Reads a file argument, or standard input for `-`.
pub fn read_input(path: &str) -> Result<Vec<u8>> {
    if path == "-" {
        let mut buf = Vec::new();
        std::io::stdin()
            .read_to_end(&mut buf)
            .context("read standard input")?;
        Ok(buf)
    } else {
        std::fs::read(path).with_context(|| format!("read {path}"))
    }
}

/// Prints a warning on stderr unless quiet.
pub fn warn(quiet: bool, msg: impl std::fmt::Display) {
    if !quiet {
        eprintln!("entire: warning: {msg}");
    }
}

/// Warns about each settings file of `repo` that does not parse; every command calls this once.
pub fn warn_unparseable_settings(repo: &entire_checkpoints::git::repo::Repo, quiet: bool) {
    for e in repo.settings().unparseable() {
        warn(
            quiet,
            format!("{e}; it is ignored, and nothing is written or pushed until it is fixed"),
        );
    }
}

/// Writes bytes to stdout.
pub fn write_stdout(bytes: &[u8]) -> Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)?;
    out.flush()?;
    Ok(())
}

/// Writes a man page for `cmd` (and one per subcommand, `git-entire-checkpoint-write.1`, ...)
/// into `dir`. Used by install.sh.
pub fn generate_man(cmd: clap::Command, dir: &std::path::Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    let name = cmd.get_name().to_owned();
    let mut buf = Vec::new();
    clap_mangen::Man::new(cmd.clone()).render(&mut buf)?;
    std::fs::write(dir.join(format!("{name}.1")), buf)?;
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub_name = format!("{name}-{}", sub.get_name());
        let mut buf = Vec::new();
        clap_mangen::Man::new(sub.clone().name(sub_name.clone())).render(&mut buf)?;
        std::fs::write(dir.join(format!("{sub_name}.1")), buf)?;
    }
    Ok(())
}

/// Bounds a hook's network work: no network git call of this process runs past the hook budget
/// (`push::hook_budget`) counted from `started`, so a stalled remote cannot hold the user's
/// git command. Returns the budget.
pub fn bound_hook(
    repo: &entire_checkpoints::git::repo::Repo,
    started: std::time::Instant,
) -> std::time::Duration {
    let budget = entire_checkpoints::remote::push::hook_budget(repo);
    log::debug!("hook budget: {}s", budget.as_secs());
    entire_checkpoints::git::subprocess::set_network_deadline(started + budget);
    budget
}

/// A checkpoint push that did not happen: cut off by its deadline, or the remote could not be
/// reached or refused the v1 branch. Nothing is lost: what did not land stays queued. `push`
/// fails with it (exit 1); the pre-push hook warns and lets the user's push proceed.
#[derive(Debug, thiserror::Error)]
#[error("{reason}; {} stay queued for the next push", match .queued {
    Some(n) => format!("{n} checkpoint ref(s)"),
    None => "the checkpoints".to_owned(),
})]
pub struct NotPushed {
    /// What went wrong.
    pub reason: String,
    /// How many refs stay queued, when known.
    pub queued: Option<usize>,
    /// Whether the deadline (the hook budget, in a hook) ran out.
    pub timed_out: bool,
}

/// Pushes checkpoints the way the pre-push hook and `push` both do, to the checkpoint remote
/// resolved for the code remote `via` (the dedicated checkpoint remote when configured), and
/// reports on stderr: one progress line, then at most one example per kind of trouble.
/// Checkpoint trouble is an error only when nothing could be pushed ([`NotPushed`]); refusals
/// of single refs are reported and stay queued.
pub fn push_and_report(
    repo: &entire_checkpoints::git::repo::Repo,
    topo: &entire_checkpoints::topology::Topology<'_>,
    via: Option<&str>,
    reconcile: bool,
    quiet: bool,
) -> Result<()> {
    use entire_checkpoints::store::StoreKind;

    // The settings choose whether and where checkpoints go: unknown settings push nothing.
    topo.check_writable()?;
    if !repo.settings().push_sessions_enabled() {
        return Ok(());
    }
    let target = checkpoint_target(repo, via)?;
    if topo.primary() == StoreKind::GitBranch {
        return push_v1_and_report(repo, &target.target, quiet);
    }
    flush_and_report(repo, topo.refs_store(), &target, reconcile, quiet)
}

/// The checkpoint remote for the code remote `via` (see `checkpoint_remote::resolve`); an error
/// when there is no remote at all.
pub fn checkpoint_target(
    repo: &entire_checkpoints::git::repo::Repo,
    via: Option<&str>,
) -> Result<entire_checkpoints::remote::checkpoint_remote::CheckpointTarget> {
    entire_checkpoints::remote::checkpoint_remote::resolve(repo, via)?.context(
        "no remote for checkpoints: add one (git remote add origin <URL>) or set strategy_options.checkpoint_remote in .entire/settings.json",
    )
}

/// Pushes the git-refs checkpoint refs due for `target`, whatever the primary, and reports.
pub fn flush_and_report(
    repo: &entire_checkpoints::git::repo::Repo,
    refs_store: &entire_checkpoints::store::refs::GitRefsStore<'_>,
    target: &entire_checkpoints::remote::checkpoint_remote::CheckpointTarget,
    reconcile: bool,
    quiet: bool,
) -> Result<()> {
    use entire_checkpoints::remote::push;
    let dest = entire_checkpoints::remote::destination::destination(repo, &target.target);
    let opts = push::FlushOptions {
        reconcile,
        ..Default::default()
    };
    let report = push::flush(repo, refs_store, &dest, &opts)?;
    if let Some(why) = &report.timed_out {
        return Err(NotPushed {
            reason: format!("{why} (pushing to {})", report.destination),
            queued: Some(report.remaining()),
            timed_out: true,
        }
        .into());
    }
    if let Some(line) = &report.unreachable {
        return Err(NotPushed {
            reason: format!("couldn't reach {}: {line}", report.destination),
            queued: Some(report.due),
            timed_out: false,
        }
        .into());
    }
    if report.due > 0 {
        if let Some(w) =
            entire_checkpoints::remote::checkpoint_remote::public_remote_warning(repo, target)
        {
            warn(quiet, w);
        }
    }
    if quiet {
        return Ok(());
    }
    let d = &report.destination;
    let attempted = report.due - report.stale.len();
    if attempted == 0 {
        return Ok(());
    }
    let n = report.pushed.len();
    if n == attempted {
        eprintln!("entire: pushing {attempted} checkpoint ref(s) to {d}... done");
    } else {
        eprintln!(
            "entire: pushing {attempted} checkpoint ref(s) to {d}... pushed {n} of {attempted}"
        );
    }
    for note in &report.merge_notes {
        eprintln!("entire: {note}");
    }
    if let Some((r, why)) = report.rejected.first() {
        warn(
            false,
            format!("{d} refused {r} {why} (showing one rejection); it stays queued"),
        );
    }
    if let Some((r, why)) = report.failed.first() {
        warn(
            false,
            format!("could not push {r}: {why} (showing one failure); it stays queued"),
        );
    }
    if let Some(why) = &report.stopped {
        warn(
            false,
            format!(
                "stopped pushing: {why}; {} checkpoint ref(s) stay queued for the next push",
                report.remaining()
            ),
        );
    }
    Ok(())
}

/// The git-branch primary's push: the v1 branch itself.
fn push_v1_and_report(
    repo: &entire_checkpoints::git::repo::Repo,
    remote: &entire_checkpoints::git::url::Remote,
    quiet: bool,
) -> Result<()> {
    use entire_checkpoints::remote::push::{push_v1, V1Push};
    match push_v1(repo, remote)? {
        V1Push::NothingToPush | V1Push::UpToDate => {}
        // A first branch pushed to an empty repository can become the forge's default branch:
        // the v1 branch waits until the code is there, and the user is told so.
        V1Push::Deferred => warn(
            quiet,
            format!(
                "entire/checkpoints/v1 was not pushed: {remote} has no branches yet (it could become the default branch); \
it is pushed by your next `git push` there, or now by `git entire-checkpoint push {remote}` once your branch is there"
            ),
        ),
        V1Push::Pushed { notes } => {
            if !quiet {
                for note in notes {
                    eprintln!("entire: {note}");
                }
                eprintln!("entire: pushing entire/checkpoints/v1 to {remote}... done");
            }
        }
        V1Push::TimedOut(why) => {
            return Err(NotPushed {
                reason: format!("{why} (pushing entire/checkpoints/v1 to {remote})"),
                queued: None,
                timed_out: true,
            }
            .into())
        }
        V1Push::Refused(why) => {
            return Err(NotPushed {
                reason: format!("couldn't push entire/checkpoints/v1 to {remote}: {why}"),
                queued: None,
                timed_out: false,
            }
            .into())
        }
    }
    Ok(())
}

/// The stderr logger behind `-v`/`--verbose` and `ENTIRE_LOG`.
struct StderrLogger;

impl log::Log for StderrLogger {
    fn enabled(&self, metadata: &log::Metadata<'_>) -> bool {
        metadata.level() <= log::max_level()
    }

    fn log(&self, record: &log::Record<'_>) {
        if self.enabled(record.metadata()) {
            let level = record.level().to_string().to_ascii_lowercase();
            eprintln!("entire: {level}: {}", record.args());
        }
    }

    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

/// Turns on logging to stderr: `ENTIRE_LOG=<level>` (`error`, `warn`, `info`, `debug`,
/// `trace`; a `target=level` form uses its level) wins, else each `-v` raises the level from
/// warnings (`-v` info, `-vv` debug, `-vvv` trace). Without either, nothing is logged.
pub fn init_logging(verbose: u8) {
    let from_env = std::env::var("ENTIRE_LOG").ok().and_then(|f| {
        let level = f
            .rsplit('=')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        level.parse::<log::LevelFilter>().ok()
    });
    let level = from_env.unwrap_or(match verbose {
        0 => log::LevelFilter::Off,
        1 => log::LevelFilter::Info,
        2 => log::LevelFilter::Debug,
        _ => log::LevelFilter::Trace,
    });
    if log::set_logger(&LOGGER).is_ok() {
        log::set_max_level(level);
    }
}
