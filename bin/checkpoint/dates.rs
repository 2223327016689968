//! Times for people. Human output shows every time in one format, in the local time zone (`TZ`
//! is respected), chosen with `--date` as in `git log`; JSON keeps the stored RFC 3339 values.

use entire_checkpoints::base::time::parse_rfc3339;

use super::args::DateFormat;

impl DateFormat {
    /// `rfc3339` shown in this format, at `now` (seconds since the epoch, for `relative`); a
    /// time that does not parse is shown as it is, and an empty one stays empty.
    pub fn show(self, rfc3339: &str, now: i64) -> String {
        let Ok(t) = parse_rfc3339(rfc3339) else {
            return rfc3339.to_owned();
        };
        let secs = t.unix_timestamp();
        let local = |pattern: &str| {
            jiff::Timestamp::from_second(secs)
                .map(|ts| {
                    ts.to_zoned_datetime(local_zone().clone())
                        .strftime(pattern)
                        .to_string()
                })
                .unwrap_or_else(|_| rfc3339.to_owned())
        };
        match self {
            DateFormat::Iso => local("%Y-%m-%d %H:%M:%S %z"),
            DateFormat::IsoStrict => local("%Y-%m-%dT%H:%M:%S%:z"),
            DateFormat::Relative => relative(now - secs),
            DateFormat::Unix => secs.to_string(),
        }
    }
}

/// The local time zone, looked up once: each lookup checks the system's zone again (a `stat`
/// and more), which cost about 6 ms over the 1,000 dates of a 500-commit `list <range>`.
fn local_zone() -> &'static jiff::tz::TimeZone {
    static ZONE: std::sync::OnceLock<jiff::tz::TimeZone> = std::sync::OnceLock::new();
    ZONE.get_or_init(jiff::tz::TimeZone::system)
}

/// The current time in seconds since the epoch.
pub fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// `ago` seconds as git's relative dates put it (the same thresholds as git's
/// `show_date_relative`).
fn relative(ago: i64) -> String {
    if ago < 0 {
        return "in the future".to_owned();
    }
    let unit = |n: i64, one: &str| {
        if n == 1 {
            format!("1 {one} ago")
        } else {
            format!("{n} {one}s ago")
        }
    };
    let rounded = |n: i64, by: i64| (n + by / 2) / by;
    if ago < 90 {
        return unit(ago, "second");
    }
    let minutes = rounded(ago, 60);
    if minutes < 90 {
        return unit(minutes, "minute");
    }
    let hours = rounded(minutes, 60);
    if hours < 36 {
        return unit(hours, "hour");
    }
    let days = rounded(hours, 24);
    if days < 14 {
        return unit(days, "day");
    }
    if days < 70 {
        return unit(rounded(days, 7), "week");
    }
    if days < 365 {
        return unit(rounded(days, 30), "month");
    }
    let years = days / 365;
    let months = rounded(days % 365, 30);
    if years < 5 && months > 0 {
        let y = if years == 1 {
            "1 year".to_owned()
        } else {
            format!("{years} years")
        };
        let m = if months == 1 {
            "1 month".to_owned()
        } else {
            format!("{months} months")
        };
        return format!("{y}, {m} ago");
    }
    unit(years, "year")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_follows_gits_thresholds() {
        let cases = [
            (5, "5 seconds ago"),
            (89, "89 seconds ago"),
            (90, "2 minutes ago"),
            (3600 * 2, "2 hours ago"),
            (3600 * 35, "35 hours ago"),
            (86400 * 3, "3 days ago"),
            (86400 * 20, "3 weeks ago"),
            (86400 * 100, "3 months ago"),
            (86400 * 400, "1 year, 1 month ago"),
            (86400 * 365 * 6, "6 years ago"),
            (-5, "in the future"),
        ];
        for (ago, want) in cases {
            assert_eq!(relative(ago), want, "{ago}");
        }
    }

    #[test]
    fn unparseable_and_unix() {
        assert_eq!(DateFormat::Iso.show("yesterday", 0), "yesterday");
        assert_eq!(DateFormat::Iso.show("", 0), "");
        assert_eq!(DateFormat::Unix.show("1970-01-01T00:01:40Z", 0), "100");
    }
}
