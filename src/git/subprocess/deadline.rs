//! How long a git call may take: the network timeout of interactive commands
//! ([`ENV_NETWORK_TIMEOUT`]), the process's network deadline (a hook's budget), and the deadline
//! of one call by its subcommand.

use std::ops::RangeInclusive;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Environment variable: the most seconds one network git call of an interactive command may
/// take (whole seconds within [`NETWORK_TIMEOUT_RANGE`]).
pub const ENV_NETWORK_TIMEOUT: &str = "ENTIRE_NETWORK_TIMEOUT_SECONDS";
/// The network timeout when [`ENV_NETWORK_TIMEOUT`] is unset.
pub const DEFAULT_NETWORK_TIMEOUT: Duration = Duration::from_secs(120);
/// The values [`ENV_NETWORK_TIMEOUT`] accepts, in seconds; others are clamped into it.
pub const NETWORK_TIMEOUT_RANGE: RangeInclusive<u64> = 1..=3600;
/// The git subcommands that talk to a remote, bounded by [`network_timeout`] and the network
/// deadline.
pub const NETWORK_SUBCOMMANDS: [&str; 6] = [
    "push",
    "fetch",
    "ls-remote",
    "fetch-pack",
    "send-pack",
    "clone",
];

/// `seconds` clamped into `range`, as a duration.
pub fn clamped_seconds(seconds: u64, range: RangeInclusive<u64>) -> Duration {
    Duration::from_secs(seconds.clamp(*range.start(), *range.end()))
}

/// A whole number of seconds from the environment variable `name`, clamped into `range`;
/// `None` when unset. A value that is not a whole number is ignored with a logged warning.
pub fn env_seconds(name: &str, range: RangeInclusive<u64>) -> Option<Duration> {
    let raw = std::env::var(name).ok()?;
    match raw.trim().parse::<u64>() {
        Ok(s) => Some(clamped_seconds(s, range)),
        Err(_) => {
            log::warn!("ignoring {name}={raw:?}: not a whole number of seconds");
            None
        }
    }
}

/// The most one network git call may take: [`ENV_NETWORK_TIMEOUT`], else
/// [`DEFAULT_NETWORK_TIMEOUT`]. Read once per process.
pub fn network_timeout() -> Duration {
    static TIMEOUT: OnceLock<Duration> = OnceLock::new();
    *TIMEOUT.get_or_init(|| {
        env_seconds(ENV_NETWORK_TIMEOUT, NETWORK_TIMEOUT_RANGE).unwrap_or(DEFAULT_NETWORK_TIMEOUT)
    })
}

static NETWORK_DEADLINE: OnceLock<Instant> = OnceLock::new();

/// Ends every network git call this process starts by `at` at the latest (a hook's budget).
/// The first call wins; later ones are ignored.
pub fn set_network_deadline(at: Instant) {
    let _ = NETWORK_DEADLINE.set(at);
}

/// The deadline set by [`set_network_deadline`], if any.
pub fn network_deadline() -> Option<Instant> {
    NETWORK_DEADLINE.get().copied()
}

/// The deadline of a call of `subcommand` asked to end within `deadline`: network calls are
/// bounded further by [`network_timeout`] and the process's network deadline.
pub(super) fn limit_for(subcommand: &str, deadline: Duration) -> Duration {
    if !NETWORK_SUBCOMMANDS.contains(&subcommand) {
        return deadline;
    }
    let limit = deadline.min(network_timeout());
    match network_deadline() {
        Some(at) => limit.min(at.saturating_duration_since(Instant::now())),
        None => limit,
    }
}
