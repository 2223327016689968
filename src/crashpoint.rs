//! A test hook for crash tests: named points where the process can be made to die on purpose.
//!
//! When the environment variable [`ENV_CRASHPOINT`] names a point (for example
//! `ENTIRE_TEST_CRASHPOINT=publish.after-ref-update`), the process aborts the moment it reaches
//! that point: no unwinding, no destructors, no flushing, no lock or temp-file cleanup, like a
//! SIGKILL or a power cut. Any other value, or no variable, makes every point a no-op; the
//! variable is read once per process, so a point costs one comparison after that.
//!
//! This is not a user feature: it exists so `tests/cli/crash.rs` can stop real binaries at
//! deterministic places and check that what they leave behind is consistent. The points:
//!
//! | point | where |
//! |---|---|
//! | `publish.before-ref-update` | a checkpoint write's objects are stored, its ref not moved |
//! | `publish.after-ref-update` | the ref moved; for git-refs, not yet enqueued for push |
//! | `queue.mid-append` | half of a queue append written (a torn last line) |
//! | `queue.before-rewrite` | a queue compaction or removal decided, the file not yet replaced |
//! | `push.after-fan-out` | announced refs copied into the destination queues, shared queue not yet cleared |
//! | `push.before-git-push` | the refs due for a destination listed, `git push` not yet run |
//! | `push.after-git-push` | `git push` returned, its landed refs not yet removed from the queue |

use std::io::Write;
use std::sync::OnceLock;

/// The environment variable that names the point to crash at.
pub(crate) const ENV_CRASHPOINT: &str = "ENTIRE_TEST_CRASHPOINT";

fn armed_point() -> Option<&'static str> {
    static POINT: OnceLock<Option<String>> = OnceLock::new();
    POINT
        .get_or_init(|| std::env::var(ENV_CRASHPOINT).ok())
        .as_deref()
}

/// Whether [`ENV_CRASHPOINT`] names `point`.
fn is_armed(point: &str) -> bool {
    armed_point() == Some(point)
}

/// Aborts the process immediately if [`ENV_CRASHPOINT`] names `point`; otherwise does nothing.
pub(crate) fn crashpoint(point: &str) {
    if is_armed(point) {
        std::process::abort();
    }
}

/// Writes `bytes` to `out`, except when [`ENV_CRASHPOINT`] names `point`: then only the first
/// half is written and the process aborts, leaving a torn record behind.
pub(crate) fn write_or_tear(
    point: &str,
    out: &mut impl Write,
    bytes: &[u8],
) -> std::io::Result<()> {
    if is_armed(point) {
        let _ = out.write_all(&bytes[..bytes.len() / 2]);
        let _ = out.flush();
        std::process::abort();
    }
    out.write_all(bytes)
}
