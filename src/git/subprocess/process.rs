//! The processes of git calls: each git the leader of a process group of its own (killed whole
//! at its deadline, with what it started, and when this process dies), the live groups tracked
//! for a signal handler ([`kill_live_groups`]), the leader reaped and its output read on threads
//! of their own.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command, ExitStatus};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::GitError;

/// How long the output of a killed process group may take to close.
pub(super) const KILL_GRACE: Duration = Duration::from_secs(2);

/// The process groups of the git processes running now, and whether the process is going down.
struct Live {
    groups: Vec<i32>,
    terminating: bool,
}

static LIVE: Mutex<Live> = Mutex::new(Live {
    groups: Vec::new(),
    terminating: false,
});

fn live() -> std::sync::MutexGuard<'static, Live> {
    LIVE.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Ends the process group `pgid` with SIGTERM: git removes its lock files and temporary files
/// on SIGTERM (a SIGKILL leaves `<ref>.lock` and `packed-refs.lock` behind, and every later
/// update of those refs fails until someone removes them).
pub(super) fn kill_group(pgid: i32) {
    signal_group(pgid, libc::SIGTERM);
}

/// Kills the process group `pgid` with SIGKILL: for what did not end on SIGTERM.
pub(super) fn kill_group_now(pgid: i32) {
    signal_group(pgid, libc::SIGKILL);
}

fn signal_group(pgid: i32, signal: i32) {
    // SAFETY: kill(2) has no memory-safety preconditions; a negative pid names a process group.
    unsafe {
        libc::kill(-pgid, signal);
    }
}

/// What runs before each git is spawned, set once by [`before_spawn`].
static BEFORE_SPAWN: std::sync::OnceLock<fn()> = std::sync::OnceLock::new();

/// Makes `hook` run before each git this process spawns (the first call sets it; later calls
/// change nothing). For a binary whose handling of SIGINT and SIGTERM is needed only once a git
/// runs (it starts a thread): `hook` is called often and must be cheap after its first call.
pub fn before_spawn(hook: fn()) {
    let _ = BEFORE_SPAWN.set(hook);
}

/// Whether [`kill_live_groups`] was called: a signal is ending the process, which is about to
/// exit 128 + the signal, so a git call that failed meanwhile failed because of it.
pub fn terminating() -> bool {
    live().terminating
}

/// Kills every git process this process started that is still running, with everything they
/// started, and makes later spawns fail. For a SIGINT/SIGTERM handler: git runs in process
/// groups of its own, which the terminal's Ctrl-C does not reach.
pub fn kill_live_groups() {
    let mut live = live();
    live.terminating = true;
    for &g in &live.groups {
        kill_group(g);
    }
}

/// Makes the child end when this process dies, even by SIGKILL, which no handler sees: in its
/// own process group, git no longer dies with ours (Linux only; elsewhere the deadline and the
/// signal handler are all there is). The signal is SIGTERM, which git cleans up after: a git
/// killed in the middle of a ref transaction removes its locks.
#[cfg(target_os = "linux")]
fn die_with_parent(cmd: &mut Command) {
    // SAFETY: the closure runs between fork and exec and only makes async-signal-safe calls
    // (sigemptyset, sigprocmask, prctl, getppid, _exit). The death signal follows the spawning thread, which waits for the
    // child in `Git::run` and so outlives it.
    unsafe {
        let parent = libc::getpid();
        cmd.pre_exec(move || {
            // The signals this process blocks to take them in a thread of its own
            // (`take_signals_in_a_thread` in the binaries) would stay blocked in git, which
            // then ignores the SIGTERM meant to end it. sigprocmask is async-signal-safe.
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // The parent died before the prctl: nobody would ever kill this git.
            if libc::getppid() != parent {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn die_with_parent(_cmd: &mut Command) {}

/// A spawned git, its process group registered while it lives.
pub(super) struct Tracked {
    pub(super) pgid: i32,
    pub(super) stdin: Option<ChildStdin>,
    pub(super) stdout: Option<ChildStdout>,
    pub(super) stderr: Option<ChildStderr>,
    /// The leader's exit status, sent by the thread that reaps it.
    pub(super) exited: Receiver<std::io::Result<ExitStatus>>,
}

impl Tracked {
    /// Spawns `cmd` as the leader of a new process group and registers the group. Spawning and
    /// registering happen under the registry lock, so a signal handler's [`kill_live_groups`]
    /// either sees the group or prevents the spawn. A thread waits for the leader, so that the
    /// caller hears of its exit at once (no polling) or not at all before its deadline.
    pub(super) fn spawn(cmd: &mut Command) -> Result<Self, GitError> {
        if let Some(hook) = BEFORE_SPAWN.get() {
            hook();
        }
        let mut live = live();
        if live.terminating {
            return Err(GitError::Spawn("the process is terminating".into()));
        }
        cmd.process_group(0);
        die_with_parent(cmd);
        let mut child = cmd.spawn().map_err(|e| GitError::Spawn(e.to_string()))?;
        let pgid = i32::try_from(child.id()).map_err(|e| GitError::Spawn(e.to_string()))?;
        live.groups.push(pgid);
        Ok(Tracked {
            pgid,
            stdin: child.stdin.take(),
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
            exited: reap_in_thread(child, pgid),
        })
    }

    /// Ends the group (SIGTERM, then SIGKILL after [`KILL_GRACE`]) and waits until the leader
    /// is reaped.
    pub(super) fn kill(&self) {
        kill_group(self.pgid);
        if self.exited.recv_timeout(KILL_GRACE).is_err() {
            kill_group_now(self.pgid);
            let _ = self.exited.recv();
        }
    }
}

/// Waits for `child`, the leader of group `pgid`, in a thread: once it has exited (still
/// unreaped, so that its process id, which is the group id, cannot be reused meanwhile), the
/// group is unregistered, then the leader reaped and its status sent.
fn reap_in_thread(mut child: Child, pgid: i32) -> Receiver<std::io::Result<ExitStatus>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        wait_unreaped(pgid);
        live().groups.retain(|&g| g != pgid);
        let _ = tx.send(child.wait());
    });
    rx
}

/// Blocks until process `pid` (a child of this process) has exited, without reaping it.
fn wait_unreaped(pid: i32) {
    let Ok(id) = libc::id_t::try_from(pid) else {
        return;
    };
    loop {
        // SAFETY: waitid(2) writes only into `info`, a zeroed siginfo_t we own.
        let rc = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            libc::waitid(libc::P_PID, id, &mut info, libc::WEXITED | libc::WNOWAIT)
        };
        if rc == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

/// Reads `pipe` to its end in a thread, sending what each read returns; the channel closes
/// once every writer is gone.
pub(super) fn read_in_thread(pipe: Option<impl Read + Send + 'static>) -> Receiver<Vec<u8>> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let Some(mut p) = pipe else { return };
        // A pipe gives at most 64 KiB a read.
        let mut buf = vec![0; 64 << 10];
        loop {
            match p.read(&mut buf) {
                Ok(0) => return,
                Ok(n) => {
                    if tx.send(buf[..n].to_vec()).is_err() {
                        return;
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    });
    rx
}

/// The rest of what `pipe`'s reader sends, if it finishes by `until`.
pub(super) fn drain(pipe: &Receiver<Vec<u8>>, until: Instant) -> Option<Vec<u8>> {
    let mut bytes = Vec::new();
    loop {
        match pipe.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(piece) if bytes.is_empty() => bytes = piece,
            Ok(piece) => bytes.extend_from_slice(&piece),
            Err(RecvTimeoutError::Disconnected) => return Some(bytes),
            Err(RecvTimeoutError::Timeout) => return None,
        }
    }
}

/// Both outputs, if their readers finish by `until`.
pub(super) fn collect(
    out: &Receiver<Vec<u8>>,
    err: &Receiver<Vec<u8>>,
    until: Instant,
) -> Option<(Vec<u8>, Vec<u8>)> {
    Some((drain(out, until)?, drain(err, until)?))
}
