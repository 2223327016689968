//! Paging like git: `show`, `cat`, `list` and `log` send their output through the pager git
//! would use for `git entire-checkpoint` when stdout is a terminal (docs/cli.md, "Human output").
//!
//! The pager is git's (`pager.entire-checkpoint`, `GIT_PAGER`, `core.pager`, `PAGER`, else
//! `less`, with `LESS=FRX` and `LV=-c` unless set), started through `sh -c` as git does; never
//! when stdout is not a terminal, with `--no-pager`, or when git already started one for us
//! (`GIT_PAGER_IN_USE`, set by `git -p` or `pager.entire-checkpoint`). Stdout, and stderr when it
//! is a terminal too, then go to the pager, and [`finish`] waits for it before the process ends.

use std::io::{IsTerminal, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;

/// The running pager and the terminal's stderr, kept to restore it.
struct Running {
    child: Child,
    saved_stderr: Option<i32>,
}

static PAGER: Mutex<Option<Running>> = Mutex::new(None);

/// Where this process's output goes, as seen before any pager took stdout over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// A terminal `columns` wide (when its width is known).
    Terminal {
        /// `COLUMNS`, else the terminal's own width.
        columns: Option<usize>,
    },
    /// A pager: ours, started on a terminal that wide, or git's (`GIT_PAGER_IN_USE`), which
    /// hands its width down in `COLUMNS`.
    Pager {
        /// As for a terminal.
        columns: Option<usize>,
    },
    /// A file or a pipe.
    Other,
}

/// Where output went when the process started (before [`start`] pointed stdout at a pager).
static OUTPUT: std::sync::OnceLock<Output> = std::sync::OnceLock::new();
/// Whether [`start`] started our pager.
static PAGED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Where output goes (see [`Output`]).
pub fn output() -> Output {
    match initial_output() {
        Output::Terminal { columns } if PAGED.load(std::sync::atomic::Ordering::Relaxed) => {
            Output::Pager { columns }
        }
        other => other,
    }
}

fn initial_output() -> Output {
    *OUTPUT.get_or_init(|| {
        let terminal = std::io::stdout().is_terminal();
        let columns = || columns(terminal);
        match () {
            _ if std::env::var_os("GIT_PAGER_IN_USE").is_some() => {
                Output::Pager { columns: columns() }
            }
            _ if terminal => Output::Terminal { columns: columns() },
            _ => Output::Other,
        }
    })
}

/// The width git would use: `COLUMNS` when it is a positive number, else the width of the
/// terminal on stdout.
fn columns(terminal: bool) -> Option<usize> {
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0);
    from_env.or_else(|| {
        if !terminal {
            return None;
        }
        // SAFETY: TIOCGWINSZ fills a winsize struct we own; fd 1 is open.
        let mut size: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(1, libc::TIOCGWINSZ, &mut size) } == 0;
        (ok && size.ws_col > 0).then_some(usize::from(size.ws_col))
    })
}

/// Starts the pager for this process's output, unless `no_pager` or the rules above say not
/// to. A pager that cannot be started is no pager: the output goes to the terminal.
pub fn start(no_pager: bool) {
    if no_pager || !matches!(initial_output(), Output::Terminal { .. }) {
        return;
    }
    let Ok(cwd) = std::env::current_dir() else {
        return;
    };
    let Some(pager) = entire_checkpoints::ops::process::pager_for(&cwd, "entire-checkpoint") else {
        return;
    };
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(&pager).stdin(Stdio::piped());
    for (var, default) in [("LESS", "FRX"), ("LV", "-c")] {
        if std::env::var_os(var).is_none() {
            cmd.env(var, default);
        }
    }
    // What git sets: a git this process runs knows output is paged already.
    cmd.env("GIT_PAGER_IN_USE", "true");
    // A signal then waits for the pager (the finish function of the signal's thread).
    crate::common::cli::take_signals_in_a_thread();
    let Ok(mut child) = cmd.spawn() else {
        return;
    };
    let Some(stdin) = child.stdin.take() else {
        return;
    };
    let _ = std::io::stdout().flush();
    let pipe = stdin.as_raw_fd();
    // SAFETY: `pipe` is the open write end of the pager's stdin; dup/dup2 on valid descriptors.
    let saved_stderr = unsafe {
        libc::dup2(pipe, 1);
        if std::io::stderr().is_terminal() {
            let saved = libc::dup(2);
            libc::dup2(pipe, 2);
            Some(saved)
        } else {
            None
        }
    };
    // fd 1 (and 2) hold the pipe now.
    drop(stdin);
    if let Ok(mut running) = PAGER.lock() {
        *running = Some(Running {
            child,
            saved_stderr,
        });
    }
    PAGED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// Ends the output and waits for the pager to exit (the user may still be reading): closes this
/// process's end of the pipe and gives stderr back to the terminal. Does nothing without a
/// pager.
pub fn finish() {
    let Some(mut running) = PAGER.lock().ok().and_then(|mut p| p.take()) else {
        return;
    };
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    // SAFETY: closing fd 1 and restoring fd 2 from the descriptor saved in `start`.
    unsafe {
        libc::close(1);
        if let Some(saved) = running.saved_stderr {
            libc::dup2(saved, 2);
            libc::close(saved);
        }
    }
    let _ = running.child.wait();
}
