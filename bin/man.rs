//! `entire-checkpoints-man DIR`: writes the man pages of the three binaries into DIR, from the
//! same argument definitions they parse with. install.sh runs it at install time; it is not
//! installed, and the installed binaries carry no man page code.

mod checkpoint {
    pub mod args;
}
mod common {
    pub mod args;
}
mod fetch {
    pub mod args;
}
mod prepush {
    pub mod args;
}

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::CommandFactory;

fn main() -> ExitCode {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: entire-checkpoints-man DIR");
        return ExitCode::from(2);
    };
    let commands = [
        checkpoint::args::Cli::command(),
        fetch::args::Cli::command(),
        prepush::args::Cli::command(),
    ];
    for cmd in commands {
        if let Err(e) = write_pages(cmd, &dir) {
            eprintln!("error: write the man pages into {}: {e}", dir.display());
            return ExitCode::FAILURE;
        }
    }
    ExitCode::SUCCESS
}

/// Writes a page for `cmd` and one per visible subcommand (`git-entire-checkpoint-write.1`, ...).
fn write_pages(cmd: clap::Command, dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let name = cmd.get_name().to_owned();
    let mut pages = vec![(name.clone(), cmd.clone())];
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let sub_name = format!("{name}-{}", sub.get_name());
        pages.push((sub_name.clone(), sub.clone().name(sub_name)));
    }
    for (name, page) in pages {
        let mut buf = Vec::new();
        clap_mangen::Man::new(page).render(&mut buf)?;
        std::fs::write(dir.join(format!("{name}.1")), buf)?;
    }
    Ok(())
}
