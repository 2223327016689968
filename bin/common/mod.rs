//! What the three binaries share: reading inputs, warnings, and mapping errors to exit codes.

#![allow(dead_code)] // Each binary uses its own subset.

use std::io::{Read, Write};
use std::process::ExitCode;

use anyhow::{Context, Result};

/// Runs `run`, prints any error as `error: ...` on stderr, and exits with the code the error
/// chain decides (cli.md: 1 failure, 2 usage, 3 not found, 128 not a repository).
pub fn main_with(run: impl FnOnce() -> Result<()>) -> ExitCode {
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
pub fn warn_unparseable_settings(repo: &entire_checkpoints::repo::Repo, quiet: bool) {
    let files = entire_checkpoints::settings::SettingsFiles::read(repo.workdir());
    for e in files.unparseable() {
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

/// Pushes checkpoints the way the pre-push hook and `push` both do, to the checkpoint remote
/// resolved for the code remote `via` (the dedicated checkpoint remote when configured), and
/// reports on stderr: one progress line, then at most one example per kind of trouble.
/// Checkpoint trouble is never an error here: what did not land stays queued.
pub fn push_and_report(
    repo: &entire_checkpoints::repo::Repo,
    topo: &entire_checkpoints::topology::Topology<'_>,
    via: Option<&str>,
    reconcile: bool,
    quiet: bool,
) -> Result<()> {
    use entire_checkpoints::store::StoreKind;

    // The settings choose whether and where checkpoints go: unknown settings push nothing.
    topo.check_writable()?;
    if !entire_checkpoints::settings::push_sessions_enabled(repo.workdir()) {
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
    repo: &entire_checkpoints::repo::Repo,
    via: Option<&str>,
) -> Result<entire_checkpoints::checkpoint_remote::CheckpointTarget> {
    entire_checkpoints::checkpoint_remote::resolve(repo, via)?.context(
        "no remote for checkpoints: add one (git remote add origin <URL>) or set strategy_options.checkpoint_remote in .entire/settings.json",
    )
}

/// Pushes the git-refs checkpoint refs due for `target`, whatever the primary, and reports.
pub fn flush_and_report(
    repo: &entire_checkpoints::repo::Repo,
    refs_store: &entire_checkpoints::store::refs::GitRefsStore<'_>,
    target: &entire_checkpoints::checkpoint_remote::CheckpointTarget,
    reconcile: bool,
    quiet: bool,
) -> Result<()> {
    use entire_checkpoints::push;
    let dest = push::destination(repo, &target.target);
    let opts = push::FlushOptions {
        reconcile,
        ..Default::default()
    };
    let report = push::flush(repo, refs_store, &dest, &opts)?;
    if report.due > 0 {
        if let Some(w) = entire_checkpoints::checkpoint_remote::public_remote_warning(repo, target)
        {
            warn(quiet, w);
        }
    }
    if quiet {
        return Ok(());
    }
    let d = &report.destination;
    if let Some(line) = &report.unreachable {
        warn(
            false,
            format!(
                "couldn't reach {d}: {line}; {} checkpoint ref(s) stay queued for the next push",
                report.due
            ),
        );
        return Ok(());
    }
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
    repo: &entire_checkpoints::repo::Repo,
    remote: &str,
    quiet: bool,
) -> Result<()> {
    use entire_checkpoints::push::{push_v1, V1Push};
    match push_v1(repo, remote)? {
        V1Push::NothingToPush | V1Push::UpToDate | V1Push::Deferred => {}
        V1Push::Pushed { notes } => {
            if !quiet {
                for note in notes {
                    eprintln!("entire: {note}");
                }
                eprintln!(
                    "entire: pushing entire/checkpoints/v1 to {}... done",
                    entire_checkpoints::git::redact(remote)
                );
            }
        }
        V1Push::Refused(why) => warn(
            quiet,
            format!(
                "couldn't push entire/checkpoints/v1 to {}: {why}; it is pushed again next time",
                entire_checkpoints::git::redact(remote)
            ),
        ),
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
