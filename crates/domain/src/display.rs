//! How sizes and times read on pages and in the command-line client.

use time::OffsetDateTime;

/// `1.5 MiB`, `12 B`.
pub fn human_size(bytes: i64) -> String {
    bytesize::ByteSize(bytes.max(0) as u64).display().iec().to_string()
}

/// A stored time (unix seconds) as a date; a value out of range reads as 1970 rather than failing.
pub fn unix_time(at: i64) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp(at).unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// `2026-11-30 14:05 UTC`.
pub fn date_time(unix: i64) -> String {
    let at = unix_time(unix);
    let format = time::macros::format_description!("[year]-[month]-[day] [hour]:[minute] UTC");
    at.format(&format).unwrap_or_default()
}

/// `YYYY-MM-DD` of a time, for a date input; empty for `None`.
pub fn date_input(unix: Option<i64>) -> String {
    unix.and_then(|at| OffsetDateTime::from_unix_timestamp(at).ok())
        .and_then(|at| at.date().format(time::macros::format_description!("[year]-[month]-[day]")).ok())
        .unwrap_or_default()
}

/// `in 7 days`, `5 minutes ago`, `now`, or past a week the day (`2026-12-24`): the one rule every
/// page's relative time follows. Each unit is rounded to the nearest, not down, so a 7-day expiry
/// read a few seconds after the upload still says "in 7 days" (it said "in 6 days"); a count that
/// rounds up to the next unit reads in that unit ("in 1 hour", never "in 60 minutes").
pub fn relative_time(now: i64, at: i64) -> String {
    const MINUTE: u64 = 60;
    const HOUR: u64 = 3600;
    const DAY: u64 = 86_400;
    /// Beyond this many days a date reads better than a count.
    const MAX_DAYS: u64 = 7;
    let seconds = at.saturating_sub(now);
    let magnitude = seconds.unsigned_abs();
    let nearest = |unit: u64| (magnitude + unit / 2) / unit;
    let (count, unit) = match (nearest(MINUTE), nearest(HOUR), nearest(DAY)) {
        (0, _, _) => return "now".to_owned(),
        (minutes, _, _) if minutes < 60 => (minutes, "minute"),
        (_, hours, _) if hours < 24 => (hours, "hour"),
        (_, _, days) if days <= MAX_DAYS => (days, "day"),
        _ => return day(at),
    };
    let plural = if count == 1 { "" } else { "s" };
    if seconds > 0 { format!("in {count} {unit}{plural}") } else { format!("{count} {unit}{plural} ago") }
}

/// `2026-12-24`: the day of a stored time.
fn day(unix: i64) -> String {
    unix_time(unix).date().format(time::macros::format_description!("[year]-[month]-[day]")).unwrap_or_default()
}

/// `2026-11-30T14:05:00Z`: a stored time for machines (a `<time datetime>`, JSON).
pub fn rfc3339(unix: i64) -> String {
    unix_time(unix).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400;

    #[test]
    fn a_seven_day_expiry_reads_in_7_days_right_after_the_upload() {
        assert_eq!(relative_time(5, 7 * DAY), "in 7 days");
        assert_eq!(relative_time(0, 7 * DAY), "in 7 days");
    }

    #[test]
    fn each_unit_rounds_to_the_nearest() {
        assert_eq!(relative_time(0, 29), "now");
        assert_eq!(relative_time(0, 30), "in 1 minute");
        assert_eq!(relative_time(0, 89), "in 1 minute");
        assert_eq!(relative_time(0, 90), "in 2 minutes");
        assert_eq!(relative_time(600, 0), "10 minutes ago");
        assert_eq!(relative_time(0, 3 * DAY + 11 * 3600), "in 3 days");
        assert_eq!(relative_time(0, 3 * DAY + 12 * 3600), "in 4 days");
        assert_eq!(relative_time(0, -29), "now");
    }

    #[test]
    fn a_count_that_rounds_up_to_the_next_unit_says_that_unit() {
        assert_eq!(relative_time(0, 59 * 60 + 29), "in 59 minutes");
        assert_eq!(relative_time(0, 59 * 60 + 30), "in 1 hour");
        assert_eq!(relative_time(0, 23 * 3600 + 29 * 60), "in 23 hours");
        assert_eq!(relative_time(0, 23 * 3600 + 30 * 60), "in 1 day");
        assert_eq!(relative_time(23 * 3600 + 30 * 60, 0), "1 day ago");
    }

    #[test]
    fn past_a_week_the_day_is_shown() {
        assert_eq!(relative_time(0, 7 * DAY + 12 * 3600 - 1), "in 7 days");
        assert_eq!(relative_time(0, 7 * DAY + 12 * 3600), "1970-01-08");
        assert_eq!(relative_time(8 * DAY, 0), "1970-01-01");
        assert_eq!(relative_time(0, 365 * DAY), "1971-01-01");
    }

    #[test]
    fn extreme_times_neither_panic_nor_overflow() {
        assert_eq!(relative_time(i64::MIN, i64::MAX), "1970-01-01");
        assert_eq!(relative_time(i64::MAX, i64::MIN), "1970-01-01");
    }

    #[test]
    fn machine_times_are_rfc3339_utc() {
        assert_eq!(rfc3339(1_764_511_500), "2025-11-30T14:05:00Z");
    }

    #[test]
    fn sizes_are_human() {
        assert_eq!(human_size(1536 * 1024), "1.5 MiB");
        assert_eq!(human_size(12), "12 B");
    }
}
