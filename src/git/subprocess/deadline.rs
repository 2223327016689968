//! How long a git call may take: the network timeout of interactive commands
//! ([`ENV_NETWORK_TIMEOUT`]), the process's network deadline (a hook's budget), the deadline of
//! one call by its subcommand, and the ssh command that gives up connecting before it.

use std::ops::RangeInclusive;
use std::path::Path;
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
/// OpenSSH's connect timeout when the deadline leaves more time than this.
const MAX_SSH_CONNECT: Duration = Duration::from_secs(60);

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

/// The user's `GIT_SSH_COMMAND`, read once.
fn user_ssh_command() -> Option<&'static str> {
    static CMD: OnceLock<Option<String>> = OnceLock::new();
    CMD.get_or_init(|| {
        std::env::var("GIT_SSH_COMMAND")
            .ok()
            .filter(|c| !c.trim().is_empty())
    })
    .as_deref()
}

/// The ssh command of a git call that must end within `limit`. An explicit user choice is
/// respected; OpenSSH must never prompt (a hook has no terminal) and must give up connecting to
/// a dead host before the deadline kills it (so the error says why).
pub(super) fn ssh_command(limit: Duration) -> String {
    let connect = limit.min(MAX_SSH_CONNECT).as_secs().max(1);
    let Some(user) = user_ssh_command() else {
        return format!("ssh -o BatchMode=yes -o ConnectTimeout={connect}");
    };
    let mut c = user.to_owned();
    if !c.contains("BatchMode") {
        c.push_str(" -o BatchMode=yes");
    }
    let program = c.split_whitespace().next().unwrap_or("");
    let is_openssh = Path::new(program).file_name().is_some_and(|n| n == "ssh");
    if is_openssh && !c.contains("ConnectTimeout") {
        c.push_str(&format!(" -o ConnectTimeout={connect}"));
    }
    c
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_gives_up_connecting_within_the_deadline() {
        if user_ssh_command().is_none() {
            assert_eq!(
                ssh_command(Duration::from_secs(3)),
                "ssh -o BatchMode=yes -o ConnectTimeout=3"
            );
            assert!(ssh_command(Duration::from_secs(600)).ends_with("ConnectTimeout=60"));
            assert!(ssh_command(Duration::from_millis(10)).ends_with("ConnectTimeout=1"));
        }
    }
}
