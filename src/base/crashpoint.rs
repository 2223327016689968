//! A test hook for crash tests: named points where the process can be made to die on purpose.
//!
//! When the environment variable [`ENV_CRASHPOINT`] names a point (for example
//! `ENTIRE_TEST_CRASHPOINT=publish.after-ref-update`, or `queue.before-rewrite#2` for its second
//! visit), the process aborts the moment it reaches that point: no unwinding, no destructors, no
//! flushing, no lock or temp-file cleanup, like a SIGKILL or a power cut. Any other value, or no
//! variable, makes every point a no-op; the variable is read once per process, so a point costs
//! one comparison after that.
//!
//! This is not a user feature: it exists so `tests/cli/crash.rs` can stop real binaries at
//! deterministic places and check that what they leave behind is consistent. The points:
//!
//! | point | where |
//! |---|---|
//! | `publish.before-ref-update` | a checkpoint write's objects are stored, its ref not moved |
//! | `publish.after-ref-update` | the ref moved; for git-refs, not yet enqueued for push |
//! | `publish.commit-lost` | a fault, not a crash: the checkpoint commit just written is removed from the object database, as a full disk lost it |
//! | `queue.mid-append` | half of a queue append written (a torn last line) |
//! | `queue.before-rewrite` | a queue compaction or removal decided, the file not yet replaced |
//! | `push.after-fan-out` | announced refs copied into the destination queues, shared queue not yet cleared |
//! | `push.before-git-push` | the refs due for a destination listed, `git push` not yet run |
//! | `push.after-git-push` | `git push` returned, its landed refs not yet removed from the queue |
//! | `hooks.after-keep` | `hooks install` kept the user's hook for ours to chain, ours not yet in its place |
//! | `hooks.before-put-back` | `hooks uninstall` about to put the user's hook back over ours |
//! | `session.after-save` | `session record` saved the session, the idle marker not yet taken away again |
//! | `post-commit.before-condense` | the commit links its checkpoint, nothing of it written yet |

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

/// The environment variable that names the point to crash at: `<point>` crashes the first time
/// the point is reached, `<point>#<n>` the n-th time (for points reached more than once, such as
/// the queue rewrites of one push).
pub(crate) const ENV_CRASHPOINT: &str = "ENTIRE_TEST_CRASHPOINT";

/// The armed point and on which visit it fires.
struct Armed {
    point: String,
    visit: usize,
    seen: AtomicUsize,
}

fn armed() -> Option<&'static Armed> {
    static ARMED: OnceLock<Option<Armed>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            let spec = std::env::var(ENV_CRASHPOINT).ok()?;
            let (point, visit) = match spec.rsplit_once('#') {
                Some((p, n)) => (p.to_owned(), n.parse().ok()?),
                None => (spec, 1),
            };
            Some(Armed {
                point,
                visit,
                seen: AtomicUsize::new(0),
            })
        })
        .as_ref()
}

/// Whether this visit of `point` is the one [`ENV_CRASHPOINT`] arms.
fn fires(point: &str) -> bool {
    match armed() {
        Some(a) if a.point == point => a.seen.fetch_add(1, Ordering::Relaxed) + 1 == a.visit,
        _ => false,
    }
}

/// Whether this visit of `point` is armed, for a fault that is no crash: the caller makes it
/// happen (`publish.commit-lost`: the disk loses the commit just written) and goes on.
pub(crate) fn fault(point: &str) -> bool {
    fires(point)
}

/// Aborts the process immediately if this visit of `point` is armed; otherwise does nothing.
pub(crate) fn crashpoint(point: &str) {
    if fires(point) {
        std::process::abort();
    }
}

/// Writes `bytes` to `out`, except when this visit of `point` is armed: then only the first
/// half is written and the process aborts, leaving a torn record behind.
pub(crate) fn write_or_tear(
    point: &str,
    out: &mut impl Write,
    bytes: &[u8],
) -> std::io::Result<()> {
    if fires(point) {
        let _ = out.write_all(&bytes[..bytes.len() / 2]);
        let _ = out.flush();
        std::process::abort();
    }
    out.write_all(bytes)
}
