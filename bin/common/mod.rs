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
