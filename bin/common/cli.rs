//! What every binary does around its command: logging, warnings, and running the command to
//! an exit code.

use entire_checkpoints::base::error::{error_chain, ExitStatus};

use super::args::GlobalArgs;
use super::error::Result;
use super::text::escape_lines;

impl GlobalArgs {
    /// Turns on logging as the flags ask.
    pub fn start(&self) {
        init_logging(self.verbose);
    }
}

/// Parses the command line as `T` (`clap::Parser::try_parse`). The command tree clap builds is
/// leaked, not dropped: freeing every argument of every subcommand cost more instructions than
/// parsing (a seventh of a `--version`, docs/performance.md), and the process ends soon after.
pub fn parse<T: clap::Parser>() -> std::result::Result<T, clap::Error> {
    let cmd = Box::leak(Box::new(T::command()));
    let mut matches = cmd.try_get_matches_from_mut(std::env::args_os())?;
    T::from_arg_matches_mut(&mut matches).map_err(|e| e.format(cmd))
}

/// Defines the C `main` of a binary that is `#![no_main]` (outside unit tests): [`start`] with
/// `$run`, the binary's own main, which returns the exit code.
macro_rules! entry {
    ($run:path) => {
        /// The process's entry point, called by the C runtime (see `common::cli::start`).
        #[cfg(not(test))]
        #[no_mangle]
        extern "C" fn main(
            _argc: std::ffi::c_int,
            _argv: *const *const std::ffi::c_char,
        ) -> std::ffi::c_int {
            crate::common::cli::start($run)
        }
        // A unit test build keeps the test harness's own `main` (the binaries are `no_main`
        // only outside tests); the entry's parts are used there all the same.
        #[cfg(test)]
        const _: (fn() -> u8, fn(fn() -> u8) -> !) = ($run, crate::common::cli::start);
    };
}
pub(crate) use entry;

/// The start of each installed binary, in place of the standard library's (the binaries are
/// `#![no_main]`; their arguments still reach `std::env::args`, which glibc hands to the
/// standard library before `main`). It does what of std's start the binaries rely on:
/// - a standard descriptor (0, 1, 2) that is closed is opened on `/dev/null` first, so that no
///   file the command opens takes its number and receives what is printed (the process aborts
///   when `/dev/null` cannot be opened, as std's start does);
/// - SIGPIPE is ignored, so that output to a reader that has gone fails with `EPIPE`, which
///   [`main_with`] takes as the end of the output (git's processes get the signal's default back,
///   as the standard library gives every process it starts);
/// - a panic of `run` exits 101, after its message.
///
/// It leaves out std's probe of the main thread's stack (glibc's `pthread_getattr_np`, which
/// reads and parses `/proc/self/maps`, for the "has overflowed its stack" message): 41,000
/// instructions, 7% of a `--version` (docs/performance.md, "Issue 52 (Performance IV):
/// statically linked"). A stack overflow of the main thread is then a plain SIGSEGV.
///
/// Exits with `run`'s code through `std::process::exit`, which flushes standard output first.
pub fn start(run: fn() -> u8) -> ! {
    for fd in 0..=2 {
        // SAFETY: F_GETFD only asks whether `fd` is open.
        let closed = unsafe { libc::fcntl(fd, libc::F_GETFD) } == -1
            && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF);
        // SAFETY: open(2) gets a NUL-terminated path; the descriptors below `fd` are open, so
        // the lowest free one, which it returns, is `fd`.
        if closed && unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) } != fd {
            std::process::abort();
        }
    }
    // SAFETY: setting SIGPIPE's disposition to "ignore" before any other thread exists.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let code = std::panic::catch_unwind(run).map_or(101, i32::from);
    std::process::exit(code)
}

/// Runs `run`, prints any error as `error: ...` on stderr, calls `finish` if given (the last
/// thing the process does, also when a signal ends it: waiting for a pager) and exits with the
/// code the error decides (cli.md: 1 failure, 2 usage, 3 not found, 128 not a repository).
pub fn main_with(run: impl FnOnce() -> Result<()>, finish: Option<fn()>) -> u8 {
    keep_freed_heap();
    let finish = finish.unwrap_or(|| ());
    stop_git_on_termination(finish);
    let result = run();
    if entire_checkpoints::ops::process::terminating() {
        // A signal stopped git under the command: the signal's thread exits 128 + the signal
        // once it has stopped every git; what the command made of git's death (an error,
        // exit 1) is not the outcome.
        loop {
            std::thread::park();
        }
    }
    let code = match result {
        Ok(()) => 0,
        // A closed stdout (`| head`, a pager quit early) is not an error worth a message.
        Err(err) if err.is_broken_pipe() => 0,
        Err(err) => {
            let code = err.exit_code();
            to_stderr(&render_error(&error_chain(&err), code, err.hint()));
            u8::try_from(code).unwrap_or(1)
        }
    };
    finish();
    code
}

/// Tells glibc's allocator to keep up to 8 MiB of freed memory at the top of the heap (instead
/// of 128 KiB) and to map only blocks of 4 MiB or more on their own (instead of a threshold
/// that starts at 128 KiB and follows what is freed). Every object libgit2 writes allocates and
/// frees about 256 KiB of zlib state: with the defaults each free gave that memory back to the
/// kernel and the next object faulted it in again, a hundred page faults of a small `write`
/// (docs/performance.md, "Issue 52 (Performance IV): the write path outside redaction"). The
/// peak is unchanged: freed memory is kept to be used again, not added to.
fn keep_freed_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets two of the allocator's tunables; it is called before this
    // process starts any thread.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, 8 << 20);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 << 20);
    }
}

/// Makes Ctrl-C (SIGINT), SIGTERM and a closed terminal (SIGHUP) stop the git processes this
/// process started, then exit 128 + the signal (130, 143, 129). git runs in process groups of
/// its own (so its deadline can kill everything it started), which the terminal's signals no
/// longer reach.
///
/// One thread takes the signals with `sigwait`, which may take locks, unlike a signal handler
/// ([`take_signals_in_a_thread`]). It is started only before the first child process (a git,
/// through `ops::process::before_spawn`, or the pager), since only a child needs it: a command
/// that runs none (`show`, `list`, `write`) saves the thread, its stack and its allocator arena
/// (docs/performance.md). Until then, a handler ([`on_signal`]) ends the process as the
/// signal's default would; once the thread runs, it forwards the signal to the thread (to a
/// thread that had started before the others blocked the signals).
fn stop_git_on_termination(finish: fn()) {
    let _ = FINISH.set(finish);
    // SAFETY: a zeroed sigaction is valid (no flags, an empty mask) before its fields are set;
    // `on_signal` has the signature of an `sa_handler` and is async-signal-safe.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        for sig in TERMINATING {
            libc::sigaction(sig, &action, std::ptr::null_mut());
        }
    }
    entire_checkpoints::ops::process::before_spawn(take_signals_in_a_thread);
}

/// The signals that end the command: Ctrl-C, SIGTERM and a closed terminal.
const TERMINATING: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// What the signal's thread calls before it exits: waiting for the pager.
static FINISH: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// The signal's thread (`pthread_t`) once it waits, 0 before.
static SIGNAL_THREAD: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The handler of [`TERMINATING`] in a thread that does not block them. Before the signal's
/// thread exists, no child runs: the process ends by the signal, as without a handler. After,
/// the signal goes to that thread, which blocks it and waits for it. Only async-signal-safe
/// calls (`pthread_kill`, `signal`, `raise`).
extern "C" fn on_signal(sig: libc::c_int) {
    let thread = SIGNAL_THREAD.load(std::sync::atomic::Ordering::SeqCst);
    // SAFETY: `thread` is the signal's thread, which never exits before the process does;
    // restoring the default disposition and raising the signal again ends the process.
    unsafe {
        if thread != 0 {
            libc::pthread_kill(thread as libc::pthread_t, sig);
        } else {
            libc::signal(sig, libc::SIG_DFL);
            libc::raise(sig);
        }
    }
}

/// Starts the thread that takes [`TERMINATING`] (once; later calls return at once): it stops
/// every git still running, calls the finish function and exits 128 + the signal. Returns
/// once the thread waits for them, so a child spawned after it is covered. The signals are
/// blocked in the calling thread first: the new thread inherits the mask, and so do the
/// threads the caller starts after; a git unblocks them before it runs (`git::subprocess`).
pub fn take_signals_in_a_thread() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        // SAFETY: a zeroed sigset_t is a valid argument to sigemptyset, which initialises it;
        // the mask calls get valid pointers.
        let set = unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in TERMINATING {
                libc::sigaddset(&mut set, sig);
            }
            if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
                return;
            }
            set
        };
        let (waiting, waits) = std::sync::mpsc::sync_channel(0);
        let started = std::thread::Builder::new().spawn(move || {
            // SAFETY: pthread_self has no preconditions.
            let me = unsafe { libc::pthread_self() } as usize;
            SIGNAL_THREAD.store(me, std::sync::atomic::Ordering::SeqCst);
            let _ = waiting.send(());
            loop {
                let mut sig = 0;
                // SAFETY: `set` is an initialised signal set and `sig` a valid out-pointer.
                if unsafe { libc::sigwait(&set, &mut sig) } == 0 {
                    entire_checkpoints::ops::process::kill_live_groups();
                    if let Some(finish) = FINISH.get() {
                        finish();
                    }
                    std::process::exit(128 + sig);
                }
            }
        });
        match started {
            Ok(_) => {
                let _ = waits.recv();
            }
            // No thread (the system refused one): the signals are let in again, and the
            // handler ends the process on them as before any git.
            // SAFETY: `set` is an initialised signal set.
            Err(_) => unsafe {
                libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
            },
        }
    });
}

/// An error as git writes one (docs/cli.md, "Messages"): `fatal:` for what exits 128 (as git's
/// own "not a git repository" does), else `error:`; what git itself said (a part of the chain
/// that starts with git's `fatal:` or `error:`) on lines of its own after ours, quoted as the
/// cause; then the next step to take, after `hint:`. No Rust internals: the `(os error N)` of
/// the standard library's I/O errors is left out (its message says the same in words).
pub fn render_error(chain: &str, code: i32, hint: Option<String>) -> String {
    let prefix = match code {
        entire_checkpoints::base::error::NOT_A_REPOSITORY => "fatal",
        _ => "error",
    };
    render_message(prefix, chain, hint)
}

/// A message with its `prefix` (`error`, `fatal`, `warning`), what git said on lines of their
/// own and the hint (see [`render_error`]).
fn render_message(prefix: &str, chain: &str, hint: Option<String>) -> String {
    let mut ours = Vec::new();
    let mut git_said = Vec::new();
    for part in split_chain(chain) {
        let part = strip_os_error(part);
        if part.starts_with("fatal: ") || part.starts_with("error: ") {
            git_said.push(part);
        } else {
            ours.push(part);
        }
    }
    let mut out = format!("{prefix}: {}\n", escape_lines(&ours.join(": ")));
    for said in git_said {
        for line in said.lines() {
            out.push_str(&format!("git said: {}\n", escape_lines(line)));
        }
    }
    if let Some(hint) = hint {
        for line in hint.lines() {
            out.push_str(&format!("hint: {}\n", escape_lines(line)));
        }
    }
    out
}

/// An error chain (`outer: inner: innermost`) in two parts: ours, and what git itself said,
/// which starts at the first `: fatal: ` or `: error: ` (git's message is the innermost cause
/// and runs to the end).
fn split_chain(chain: &str) -> Vec<&str> {
    let at = [": fatal: ", ": error: "]
        .iter()
        .filter_map(|m| chain.find(m))
        .min();
    match at {
        Some(at) => vec![&chain[..at], &chain[at + 2..]],
        None => vec![chain],
    }
}

/// `text` without the ` (os error N)` the standard library appends to an I/O error.
fn strip_os_error(text: &str) -> &str {
    match text.rfind(" (os error ") {
        Some(at) if text.ends_with(')') => &text[..at],
        _ => text,
    }
}

/// Prints a warning on stderr unless quiet, as git does: `warning: <msg>`.
pub fn warn(quiet: bool, msg: impl std::fmt::Display) {
    warn_with_hint(quiet, msg, None);
}

/// [`warn`], followed by `hint: <next step>` when there is one.
pub fn warn_with_hint(quiet: bool, msg: impl std::fmt::Display, hint: Option<&str>) {
    if !quiet {
        let hint = hint.map(str::to_owned);
        to_stderr(&render_message("warning", &msg.to_string(), hint));
    }
}

/// Whether the `git` command running this hook was given `-q`/`--quiet` (`git commit -q`,
/// `git push -q`; as the hook runner's report tells, set by `push::report_hook`): our
/// informational lines are silenced too ([`info`]); warnings still show, as git's own errors do.
pub static GIT_QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes `text` on stderr. A stderr that cannot take it (a full disk under a redirect, a
/// closed pipe) loses it: a diagnostic never fails the command, nor panics it as `eprint!`
/// would.
pub fn to_stderr(text: &str) {
    use std::io::Write;
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// Prints an informational line on stderr (`entire: <msg>`) unless quiet, or a hook's git
/// command was ([`GIT_QUIET`]).
pub fn info(quiet: bool, msg: impl std::fmt::Display) {
    if !quiet && !GIT_QUIET.load(std::sync::atomic::Ordering::Relaxed) {
        to_stderr(&format!("entire: {}\n", escape_lines(&msg.to_string())));
    }
}

/// Prints the settings files' warnings (`ops::settings::warnings`): every command prints them
/// once.
pub fn warn_settings(warnings: &[String], quiet: bool) {
    for w in warnings {
        warn(quiet, w);
    }
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
            let text = record.args().to_string();
            to_stderr(&format!("entire: {level}: {}\n", escape_lines(&text)));
        }
    }

    fn flush(&self) {}
}

static LOGGER: StderrLogger = StderrLogger;

/// Turns on logging to stderr: `ENTIRE_LOG=<level>` (`error`, `warn`, `info`, `debug`,
/// `trace`; a `target=level` form uses its level) wins, else each `-v` raises the level from
/// warnings (`-v` info, `-vv` debug, `-vvv` trace). Without either, nothing is logged.
fn init_logging(verbose: u8) {
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
