//! Work on a second thread beside this one.

/// `here()` on this thread and `there()` on a helper thread, at once; a thread the system
/// refuses leaves `there` to this thread, after `here`. The helper has the stack a main thread
/// has on Linux (8 MiB, reserved, touched only as used): what the work needs (redaction's views
/// nest, JSON inside strings is parsed) must not depend on the thread it runs on.
pub(crate) fn join<A, B: Send>(
    here: impl FnOnce() -> A,
    there: &(impl Fn() -> B + Sync),
) -> (A, B) {
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .stack_size(8 << 20)
            .spawn_scoped(scope, there)
        {
            Ok(thread) => {
                let a = here();
                let b = thread
                    .join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
                (a, b)
            }
            Err(_) => (here(), there()),
        }
    })
}
