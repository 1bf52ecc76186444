//! The system page's pictures as numbers for inline SVG: the storage bar's parts, the daily bars,
//! the largest files' bars. Drawn on the server (no chart script, the CSP stays strict); the
//! colours come from classes in style.css, so they follow the light or dark theme.

use crate::domain::{DAY_SECONDS, DayActivity, DiskSpace, Usage, date_input, human_size};

/// The storage bar's width in SVG units; its parts are placed along it.
const BAR_UNITS: f64 = 1000.0;
/// A part smaller than this still shows as a sliver, so that a legend entry is never invisible.
const MIN_PART_UNITS: f64 = 3.0;

/// One part of the storage bar.
pub struct BarPart {
    /// `files`, `reclaimable`, `other`, `reserve` or `free`: the CSS class that colours it.
    pub class: &'static str,
    pub label: &'static str,
    pub size: String,
    pub x: String,
    pub width: String,
}

/// The storage bar: what the disk holds, from blobdrop's files to the free space.
pub struct StorageBar {
    pub parts: Vec<BarPart>,
    /// The bar read aloud: every part with its size.
    pub summary: String,
}

/// blobdrop's files (the database less its free pages), its reclaimable pages, then with a known
/// disk the rest of the disk's data, the reserve uploads must leave, and what is free beyond it.
pub fn storage_bar(usage: &Usage, disk: Option<&DiskSpace>) -> StorageBar {
    let database = usage.database_bytes.max(0) as u64;
    let reclaimable = (usage.reclaimable_bytes.max(0) as u64).min(database);
    let mut sizes = vec![("files", "Files", database - reclaimable), ("reclaimable", "Reclaimable", reclaimable)];
    if let Some(disk) = disk {
        let reserve = disk.reserve_bytes.min(disk.free_bytes);
        let other = disk.total_bytes.saturating_sub(disk.free_bytes).saturating_sub(database);
        sizes.push(("other", "Other data on the disk", other));
        sizes.push(("reserve", "Reserve (kept free)", reserve));
        sizes.push(("free", "Free for uploads", disk.free_bytes - reserve));
    }
    let total = sizes.iter().map(|(_, _, bytes)| *bytes).sum::<u64>().max(1) as f64;
    let mut x = 0.0;
    let parts: Vec<BarPart> = sizes
        .iter()
        .map(|&(class, label, bytes)| {
            let width = match bytes {
                0 => 0.0,
                _ => (bytes as f64 / total * BAR_UNITS).max(MIN_PART_UNITS),
            };
            let part = BarPart { class, label, size: human_size(bytes as i64), x: units(x), width: units(width) };
            x += width;
            part
        })
        .collect();
    let of = disk
        .map_or_else(|| "The database".to_owned(), |disk| format!("A disk of {}", human_size(disk.total_bytes as i64)));
    let listed = parts.iter().map(|part| format!("{} {}", part.label.to_lowercase(), part.size)).collect::<Vec<_>>();
    StorageBar { summary: format!("{of}: {}.", listed.join(", ")), parts }
}

/// One day's pair of bars in a daily chart.
pub struct DayBars {
    pub date: String,
    /// The uploads bar: x, y, height; and its tooltip.
    pub up: (String, String, String),
    pub up_title: String,
    pub down: (String, String, String),
    pub down_title: String,
}

/// A chart of uploads and downloads per day, as counts or as bytes.
pub struct DailyChart {
    pub days: Vec<DayBars>,
    /// The top of the scale, as a person reads it.
    pub max_label: String,
    pub first_date: String,
    pub last_date: String,
    pub summary: String,
}

/// Plot area of the daily charts, in SVG units (viewBox 0 0 600 170): bars stand on `BASE`.
const PLOT_LEFT: f64 = 4.0;
const PLOT_WIDTH: f64 = 592.0;
const PLOT_TOP: f64 = 18.0;
const BASE: f64 = 150.0;

/// Bars per day, uploads left of downloads; `bytes` picks the bytes rather than the counts.
pub fn daily_chart(days: &[DayActivity], bytes: bool) -> DailyChart {
    let value =
        |day: &DayActivity| if bytes { (day.upload_bytes, day.download_bytes) } else { (day.uploads, day.downloads) };
    let say = |n: i64| if bytes { human_size(n) } else { n.to_string() };
    let max = days.iter().map(|day| value(day).0.max(value(day).1)).max().unwrap_or(0).max(1);
    let slot = PLOT_WIDTH / days.len().max(1) as f64;
    let bar = (slot * 0.4).max(1.0);
    let height = |n: i64| (n.max(0) as f64 / max as f64) * (BASE - PLOT_TOP);
    let (mut total_up, mut total_down) = (0, 0);
    let bars = days
        .iter()
        .enumerate()
        .map(|(i, day)| {
            let (up, down) = value(day);
            total_up += up;
            total_down += down;
            let x = PLOT_LEFT + slot * i as f64 + slot * 0.1;
            let date = date_input(Some(day.day * DAY_SECONDS));
            DayBars {
                up: (units(x), units(BASE - height(up)), units(height(up))),
                up_title: format!("{date}: {} uploaded", say(up)),
                down: (units(x + bar), units(BASE - height(down)), units(height(down))),
                down_title: format!("{date}: {} downloaded", say(down)),
                date,
            }
        })
        .collect::<Vec<_>>();
    let what = if bytes { "bytes" } else { "files" };
    DailyChart {
        max_label: say(max),
        first_date: bars.first().map(|day| day.date.clone()).unwrap_or_default(),
        last_date: bars.last().map(|day| day.date.clone()).unwrap_or_default(),
        summary: format!(
            "Over the last {} days, {} uploaded and {} downloaded ({what}); the busiest day reached {}.",
            days.len(),
            say(total_up),
            say(total_down),
            say(max)
        ),
        days: bars,
    }
}

/// One of the largest files with its bar, scaled to the largest.
pub struct LargeFile {
    pub id: String,
    pub name: String,
    pub size: String,
    pub width: String,
}

/// `(id, name, bytes)`, largest first.
pub fn largest_files(files: &[(String, String, i64)]) -> Vec<LargeFile> {
    let largest = files.iter().map(|(_, _, bytes)| *bytes).max().unwrap_or(0).max(1) as f64;
    files
        .iter()
        .map(|(id, name, bytes)| LargeFile {
            id: id.clone(),
            name: name.clone(),
            size: human_size(*bytes),
            width: units((*bytes).max(0) as f64 / largest * BAR_UNITS),
        })
        .collect()
}

/// An SVG coordinate: one decimal is finer than any screen needs.
fn units(value: f64) -> String {
    format!("{value:.1}")
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    fn usage(database: i64, reclaimable: i64) -> Usage {
        Usage {
            files: 1,
            stored_bytes: database - reclaimable,
            reclaimable_bytes: reclaimable,
            database_bytes: database,
        }
    }

    #[test]
    fn the_storage_bar_spans_the_disk_in_its_five_parts() {
        let disk = DiskSpace { total_bytes: 100 * GIB, free_bytes: 60 * GIB, reserve_bytes: 10 * GIB };
        let bar = storage_bar(&usage(30 * GIB as i64, 10 * GIB as i64), Some(&disk));
        let widths: Vec<&str> = bar.parts.iter().map(|part| part.width.as_str()).collect();
        assert_eq!(widths, ["200.0", "100.0", "100.0", "100.0", "500.0"]);
        let xs: Vec<&str> = bar.parts.iter().map(|part| part.x.as_str()).collect();
        assert_eq!(xs, ["0.0", "200.0", "300.0", "400.0", "500.0"]);
        assert_eq!(
            bar.summary,
            "A disk of 100.0 GiB: files 20.0 GiB, reclaimable 10.0 GiB, other data on the disk 10.0 GiB, \
             reserve (kept free) 10.0 GiB, free for uploads 50.0 GiB."
        );
    }

    #[test]
    fn a_tiny_part_still_shows_and_an_empty_one_does_not() {
        let disk = DiskSpace { total_bytes: 1000 * GIB, free_bytes: 900 * GIB, reserve_bytes: 0 };
        let bar = storage_bar(&usage(4096, 0), Some(&disk));
        assert_eq!(bar.parts[0].width, "3.0", "files of 4 KiB on a 1 TB disk");
        assert_eq!(bar.parts[1].width, "0.0");
        assert_eq!(bar.parts[3].width, "0.0", "no reserve");
    }

    #[test]
    fn without_a_disk_the_bar_is_the_database() {
        let bar = storage_bar(&usage(0, 0), None);
        assert_eq!(bar.parts.len(), 2);
        assert!(bar.parts.iter().all(|part| part.width == "0.0"));
        assert_eq!(bar.summary, "The database: files 0 B, reclaimable 0 B.");
    }

    #[test]
    fn daily_bars_scale_to_the_busiest_day_and_an_idle_month_is_flat() {
        let mut days: Vec<DayActivity> =
            (0..30).map(|i| DayActivity { day: 20_000 + i, ..DayActivity::default() }).collect();
        let idle = daily_chart(&days, false);
        assert!(idle.days.iter().all(|day| day.up.2 == "0.0" && day.down.2 == "0.0"));
        assert_eq!(idle.max_label, "1");
        days[29].uploads = 4;
        days[28].downloads = 2;
        let chart = daily_chart(&days, false);
        assert_eq!(chart.days[29].up, (chart.days[29].up.0.clone(), "18.0".into(), "132.0".into()));
        assert_eq!(chart.days[28].down.2, "66.0");
        assert_eq!(chart.days[29].up_title, "2024-11-02: 4 uploaded");
        assert_eq!((chart.first_date.as_str(), chart.last_date.as_str()), ("2024-10-04", "2024-11-02"));
        assert!(chart.summary.starts_with("Over the last 30 days, 4 uploaded and 2 downloaded"), "{}", chart.summary);
    }

    #[test]
    fn the_largest_file_fills_its_bar() {
        let files = largest_files(&[("a".into(), "a.iso".into(), 2048), ("b".into(), "b.txt".into(), 512)]);
        assert_eq!(files[0].width, "1000.0");
        assert_eq!(files[1].width, "250.0");
    }
}
