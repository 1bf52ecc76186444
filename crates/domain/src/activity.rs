//! What the system page draws: each day's uploads and downloads, and the parts of the disk.

/// Seconds in a UTC day: days are counted from 1970-01-01 (`unix / DAY_SECONDS`).
pub const DAY_SECONDS: i64 = 86_400;

/// What the store sums for one UTC day: how many, and their bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DayTotal {
    /// Days since 1970-01-01.
    pub day: i64,
    pub count: i64,
    pub bytes: i64,
}

/// One day of the system page's chart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DayActivity {
    /// Days since 1970-01-01.
    pub day: i64,
    pub uploads: i64,
    pub upload_bytes: i64,
    pub downloads: i64,
    pub download_bytes: i64,
}

/// The first second of the oldest of the `days` days up to and including today: what the
/// store sums from.
pub fn activity_since(now: i64, days: i64) -> i64 {
    (now.div_euclid(DAY_SECONDS) - (days - 1).max(0)) * DAY_SECONDS
}

/// The `days` days up to and including today, oldest first, each present (zero when nothing
/// happened), from the store's sums; a day outside them (a clock moved back) is left out.
pub fn daily_activity(now: i64, days: i64, uploads: &[DayTotal], downloads: &[DayTotal]) -> Vec<DayActivity> {
    let first = activity_since(now, days) / DAY_SECONDS;
    let mut out: Vec<DayActivity> =
        (0..days.max(0)).map(|i| DayActivity { day: first + i, ..DayActivity::default() }).collect();
    let slot = |day: i64| usize::try_from(day - first).ok();
    for total in uploads {
        if let Some(entry) = slot(total.day).and_then(|i| out.get_mut(i)) {
            entry.uploads += total.count;
            entry.upload_bytes += total.bytes;
        }
    }
    for total in downloads {
        if let Some(entry) = slot(total.day).and_then(|i| out.get_mut(i)) {
            entry.downloads += total.count;
            entry.download_bytes += total.bytes;
        }
    }
    out
}

/// The database's file system, as statvfs tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskSpace {
    pub total_bytes: u64,
    /// What an unprivileged process may still write.
    pub free_bytes: u64,
    /// Free space uploads must leave (the free-space reserve); 0 when it is off.
    pub reserve_bytes: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: i64 = 20_000 * DAY_SECONDS + 3600;

    #[test]
    fn thirty_days_end_today_and_empty_days_are_zero() {
        let days = daily_activity(NOW, 30, &[], &[]);
        assert_eq!(days.len(), 30);
        assert_eq!(days.first().map(|d| d.day), Some(20_000 - 29));
        assert_eq!(days.last().map(|d| d.day), Some(20_000));
        assert!(days.iter().all(|d| d.uploads == 0 && d.downloads == 0));
        assert_eq!(activity_since(NOW, 30), (20_000 - 29) * DAY_SECONDS);
    }

    #[test]
    fn sums_land_on_their_day_and_days_outside_are_left_out() {
        let uploads = [
            DayTotal { day: 20_000, count: 2, bytes: 10 },
            DayTotal { day: 19_971, count: 1, bytes: 5 },
            DayTotal { day: 19_970, count: 9, bytes: 9 },
            DayTotal { day: 20_001, count: 9, bytes: 9 },
        ];
        let downloads = [DayTotal { day: 19_999, count: 3, bytes: 30 }];
        let days = daily_activity(NOW, 30, &uploads, &downloads);
        assert_eq!(
            days[29],
            DayActivity { day: 20_000, uploads: 2, upload_bytes: 10, downloads: 0, download_bytes: 0 }
        );
        assert_eq!(
            days[28],
            DayActivity { day: 19_999, uploads: 0, upload_bytes: 0, downloads: 3, download_bytes: 30 }
        );
        assert_eq!(days[0].uploads, 1);
        assert_eq!(days.iter().map(|d| d.uploads).sum::<i64>(), 3);
    }
}
