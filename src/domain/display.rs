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

/// `in 3 days`, `5 minutes ago`, `now`: the largest whole unit, as people say it.
pub fn relative_time(now: i64, at: i64) -> String {
    let seconds = at - now;
    let magnitude = seconds.unsigned_abs();
    let (count, unit) =
        [(86_400 * 365, "year"), (86_400 * 30, "month"), (86_400, "day"), (3600, "hour"), (60, "minute")]
            .into_iter()
            .find(|(size, _)| magnitude >= *size)
            .map(|(size, unit)| (magnitude / size, unit))
            .unwrap_or((0, "now"));
    if count == 0 {
        return "now".to_owned();
    }
    let plural = if count == 1 { "" } else { "s" };
    if seconds > 0 { format!("in {count} {unit}{plural}") } else { format!("{count} {unit}{plural} ago") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_times_read_naturally() {
        assert_eq!(relative_time(0, 3 * 86_400 + 5), "in 3 days");
        assert_eq!(relative_time(0, 3600), "in 1 hour");
        assert_eq!(relative_time(600, 0), "10 minutes ago");
        assert_eq!(relative_time(0, 30), "now");
    }

    #[test]
    fn sizes_are_human() {
        assert_eq!(human_size(1536 * 1024), "1.5 MiB");
        assert_eq!(human_size(12), "12 B");
    }
}
