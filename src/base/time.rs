//! Time stamps in the formats the checkpoint documents and git use.

use time::format_description::well_known::Rfc3339;
use time::{OffsetDateTime, UtcOffset};

/// The error for a time stamp that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid time {input:?}: expected RFC 3339, e.g. 2026-10-01T19:12:01Z")]
pub struct InvalidTimeError {
    /// The rejected input.
    pub input: String,
}

/// Formats like Go's `time.RFC3339Nano` in UTC: fractional seconds with trailing zeros trimmed
/// (none when whole), `Z` for the zone. Example: `2026-10-01T19:12:01.19884Z`.
pub fn rfc3339_nano_utc(t: OffsetDateTime) -> String {
    // `Rfc3339` trims the fraction and writes `Z` for UTC; it refuses only years outside
    // 0..=9999, which no clock or parsed document here produces.
    t.to_offset(UtcOffset::UTC)
        .format(&Rfc3339)
        .unwrap_or_else(|_| t.unix_timestamp().to_string())
}

/// Parses an RFC 3339 time stamp (any offset).
pub fn parse_rfc3339(s: &str) -> Result<OffsetDateTime, InvalidTimeError> {
    OffsetDateTime::parse(s.trim(), &Rfc3339).map_err(|_| InvalidTimeError {
        input: s.to_owned(),
    })
}

/// The current time, formatted with [`rfc3339_nano_utc`].
pub fn now_rfc3339_nano() -> String {
    rfc3339_nano_utc(OffsetDateTime::now_utc())
}

/// Parses the forms of `GIT_AUTHOR_DATE`/`GIT_COMMITTER_DATE` that scripts use: git's internal
/// `@<seconds> <±hhmm>` or `<seconds> <±hhmm>`, and RFC 3339. Returns seconds since the epoch
/// and the offset in minutes.
pub fn parse_git_date(s: &str) -> Option<(i64, i32)> {
    let s = s.trim();
    let raw = s.strip_prefix('@').unwrap_or(s);
    let mut parts = raw.split_whitespace();
    if let Some(secs) = parts.next().and_then(|p| p.parse::<i64>().ok()) {
        let offset = match parts.next() {
            None => 0,
            Some(tz) => parse_tz(tz)?,
        };
        return parts.next().is_none().then_some((secs, offset));
    }
    let t = parse_rfc3339(s).ok()?;
    Some((t.unix_timestamp(), t.offset().whole_minutes() as i32))
}

fn parse_tz(tz: &str) -> Option<i32> {
    let (sign, digits) = match tz.as_bytes().first()? {
        b'+' => (1, &tz[1..]),
        b'-' => (-1, &tz[1..]),
        _ => return None,
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let h: i32 = digits[..2].parse().ok()?;
    let m: i32 = digits[2..].parse().ok()?;
    Some(sign * (h * 60 + m))
}

/// Formats seconds + offset minutes as RFC 3339 in that offset (for `log` output).
pub fn rfc3339_at(secs: i64, offset_minutes: i32) -> String {
    let offset = UtcOffset::from_whole_seconds(offset_minutes * 60).unwrap_or(UtcOffset::UTC);
    OffsetDateTime::from_unix_timestamp(secs)
        .map(|t| t.to_offset(offset))
        .ok()
        .and_then(|t| t.format(&Rfc3339).ok())
        .unwrap_or_else(|| secs.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_style_nano() {
        let t = parse_rfc3339("2026-10-01T19:12:01.198840000Z").unwrap();
        assert_eq!(rfc3339_nano_utc(t), "2026-10-01T19:12:01.19884Z");
        let whole = parse_rfc3339("2026-10-01T21:12:01+02:00").unwrap();
        assert_eq!(rfc3339_nano_utc(whole), "2026-10-01T19:12:01Z");
        assert!(parse_rfc3339("yesterday").is_err());
        let micros = parse_rfc3339("2026-10-01T19:12:01.000001Z").unwrap();
        assert_eq!(rfc3339_nano_utc(micros), "2026-10-01T19:12:01.000001Z");
    }

    #[test]
    fn git_dates() {
        assert_eq!(parse_git_date("@1767225600 +0000"), Some((1767225600, 0)));
        assert_eq!(parse_git_date("1767225600 -0130"), Some((1767225600, -90)));
        assert_eq!(parse_git_date("1767225600"), Some((1767225600, 0)));
        assert_eq!(
            parse_git_date("2026-01-01T00:00:00+01:00"),
            Some((1767222000, 60))
        );
        assert_eq!(parse_git_date("next tuesday"), None);
        assert_eq!(rfc3339_at(1767225600, 60), "2026-01-01T01:00:00+01:00");
    }
}
