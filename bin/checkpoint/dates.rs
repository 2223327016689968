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
        let local = |strict: bool| {
            jiff::Timestamp::from_second(secs)
                .map(|ts| local_time(ts, strict))
                .unwrap_or_else(|_| rfc3339.to_owned())
        };
        match self {
            DateFormat::Iso => local(false),
            DateFormat::IsoStrict => local(true),
            DateFormat::Relative => relative(now - secs),
            DateFormat::Unix => secs.to_string(),
        }
    }
}

/// `ts` in the local time zone as git's `iso` (`2026-01-02 03:04:05 +0100`) or, `strict`,
/// `iso-strict` (`2026-01-02T03:04:05+01:00`).
fn local_time(ts: jiff::Timestamp, strict: bool) -> String {
    format_at(ts, local_zone().to_offset(ts), strict)
}

/// `ts` at `offset`, as [`local_time`] writes it: digit by digit, since `format!` with padded
/// fields costs about 3,500 instructions a date (a tenth of a long human listing).
fn format_at(ts: jiff::Timestamp, offset: jiff::tz::Offset, strict: bool) -> String {
    let t = offset.to_datetime(ts);
    let year = t.year();
    if !(0..=9999).contains(&year) {
        let pattern = match strict {
            false => "%Y-%m-%d %H:%M:%S %z",
            true => "%Y-%m-%dT%H:%M:%S%:z",
        };
        let zoned = ts.to_zoned_datetime(jiff::tz::TimeZone::fixed(offset));
        return zoned.strftime(pattern).to_string();
    }
    let mut out = String::with_capacity(25);
    let two = |out: &mut String, n: i32| {
        out.push(char::from(b'0' + (n / 10 % 10) as u8));
        out.push(char::from(b'0' + (n % 10) as u8));
    };
    two(&mut out, i32::from(year) / 100);
    two(&mut out, i32::from(year) % 100);
    out.push('-');
    two(&mut out, i32::from(t.month()));
    out.push('-');
    two(&mut out, i32::from(t.day()));
    out.push(if strict { 'T' } else { ' ' });
    two(&mut out, i32::from(t.hour()));
    out.push(':');
    two(&mut out, i32::from(t.minute()));
    out.push(':');
    two(&mut out, i32::from(t.second()));
    out.push_str(&offset_suffix(offset, strict));
    out
}

/// ` +hhmm`, or `+hh:mm` when `strict`.
fn offset_suffix(offset: jiff::tz::Offset, strict: bool) -> String {
    let (sign, off) = match offset.seconds() {
        s if s < 0 => ('-', -s),
        s => ('+', s),
    };
    let (h, m) = (off / 3600, off / 60 % 60);
    match strict {
        false => format!(" {sign}{h:02}{m:02}"),
        true => format!("{sign}{h:02}:{m:02}"),
    }
}

/// The local time zone, looked up once: each lookup checks the system's zone again (a `stat`
/// and more), which cost about 6 ms over the 1,000 dates of a 500-commit `list <range>`.
/// Without `TZ`, `/etc/localtime` is read as it is: jiff's own lookup then also walks the whole
/// zoneinfo database to name the zone (about a millisecond), and an offset needs no name.
fn local_zone() -> &'static jiff::tz::TimeZone {
    static ZONE: std::sync::OnceLock<jiff::tz::TimeZone> = std::sync::OnceLock::new();
    ZONE.get_or_init(|| {
        std::env::var_os("TZ")
            .is_none()
            .then(|| std::fs::read("/etc/localtime").ok())
            .flatten()
            .and_then(|tzif| jiff::tz::TimeZone::tzif("Local", &tzif).ok())
            .unwrap_or_else(jiff::tz::TimeZone::system)
    })
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
    fn local_times_are_what_strftime_gives() {
        let patterns = [
            (false, "%Y-%m-%d %H:%M:%S %z"),
            (true, "%Y-%m-%dT%H:%M:%S%:z"),
        ];
        // Offsets east and west, of whole and half hours and of 45 minutes.
        let zones = [
            0,
            5 * 3600 + 1800,
            -(3 * 3600 + 1800),
            12 * 3600 + 2700,
            -8 * 3600,
        ]
        .map(|s| jiff::tz::TimeZone::fixed(jiff::tz::Offset::from_seconds(s).unwrap()));
        for (zone, tz) in zones.into_iter().enumerate() {
            for secs in [
                0,
                1_767_225_600,
                1_700_000_000,
                951_782_400,
                -86_400 * 400,
                -1e11 as i64,
            ] {
                let ts = jiff::Timestamp::from_second(secs).unwrap();
                let offset = tz.to_offset(ts);
                for (strict, pattern) in patterns {
                    let want = ts
                        .to_zoned_datetime(tz.clone())
                        .strftime(pattern)
                        .to_string();
                    assert_eq!(format_at(ts, offset, strict), want, "{zone} {secs}");
                }
            }
        }
    }

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
