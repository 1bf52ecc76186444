//! Download events folded together, so that a link holder cannot flood the owner's chat: 3,003
//! `Range: bytes=0-0` requests in 44 s queued 3,003 deliveries (each retried up to 8 times).
//!
//! The first download of a file (or share) in a window is reported at once; the ones after it in
//! that window become one event when the window closes, `downloads: N`, the last client named.
//! Past `CLIENT_REPORTS` downloads reported at once in a window, a client's further downloads of
//! other files are folded too, so one client reports at most that many plus one per file per
//! window. Counting (and download limits) are untouched: only the reports are folded.

use std::collections::HashMap;
use std::time::Duration;

use time::OffsetDateTime;

use super::Event;
use crate::domain::WebhookEvent;

/// How long downloads of one file or share are folded into one report after the first.
pub const DOWNLOAD_WINDOW: Duration = Duration::from_secs(60);

/// Downloads one client gets reported one by one in a window (of any files).
const CLIENT_REPORTS: u32 = 10;

/// The open windows, by event and file or share, and each client's reports in its window.
#[derive(Debug, Default)]
pub(super) struct Coalescer {
    windows: HashMap<(WebhookEvent, String), Window>,
    clients: HashMap<String, (OffsetDateTime, u32)>,
    /// Reports of windows that closed when a new one replaced them, for the next `due`.
    closed: Vec<Event>,
}

#[derive(Debug)]
struct Window {
    opened: OffsetDateTime,
    /// The latest download folded in this window, and how many were.
    folded: Option<(Event, u64)>,
}

impl Coalescer {
    /// `Some(event)` to report now; `None` when it was folded into its window.
    pub(super) fn admit(&mut self, event: Event) -> Option<Event> {
        let subject = match event.kind {
            WebhookEvent::FileDownloaded => event.file.as_ref().map(|(id, _, _)| id.clone()),
            WebhookEvent::ShareDownloaded => event.share.as_ref().map(|(id, _)| id.clone()),
            _ => None,
        };
        let Some(subject) = subject else { return Some(event) };
        let window_end = |opened: OffsetDateTime| opened + DOWNLOAD_WINDOW;
        if let Some(window) = self.windows.get_mut(&(event.kind, subject.clone()))
            && event.at < window_end(window.opened)
        {
            fold(&mut window.folded, event);
            return None;
        }
        let client = event.client_address.clone().unwrap_or_default();
        let reports = self.clients.entry(client).or_insert((event.at, 0));
        if event.at >= window_end(reports.0) {
            *reports = (event.at, 0);
        }
        let (kind, mut window) = (event.kind, Window { opened: event.at, folded: None });
        let reported = match reports.1 < CLIENT_REPORTS {
            true => {
                reports.1 += 1;
                Some(event)
            }
            false => {
                fold(&mut window.folded, event);
                None
            }
        };
        // A window that closed since the last check (within its second) is reported at the next.
        if let Some(closed) = self.windows.insert((kind, subject), window).and_then(report) {
            self.closed.push(closed);
        }
        reported
    }

    /// The folded reports of every window closed by `now`.
    pub(super) fn due(&mut self, now: OffsetDateTime) -> Vec<Event> {
        let closed: Vec<(WebhookEvent, String)> = self
            .windows
            .iter()
            .filter(|(_, window)| now >= window.opened + DOWNLOAD_WINDOW)
            .map(|(key, _)| key.clone())
            .collect();
        self.clients.retain(|_, (opened, _)| now < *opened + DOWNLOAD_WINDOW);
        let mut reports = std::mem::take(&mut self.closed);
        reports.extend(closed.into_iter().filter_map(|key| self.windows.remove(&key).and_then(report)));
        reports
    }

    /// Every folded report, closed or not: the server is stopping.
    pub(super) fn drain(&mut self) -> Vec<Event> {
        self.clients.clear();
        let mut reports = std::mem::take(&mut self.closed);
        reports.extend(self.windows.drain().filter_map(|(_, window)| report(window)));
        reports
    }
}

fn fold(folded: &mut Option<(Event, u64)>, event: Event) {
    let count = folded.as_ref().map_or(0, |(_, count)| *count);
    *folded = Some((event, count + 1));
}

/// The one event a closed window reports, if anything was folded into it.
fn report(window: Window) -> Option<Event> {
    window.folded.map(|(mut event, count)| {
        event.downloads = Some(count);
        event
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn download(file: &str, client: &str, at: i64) -> Event {
        let mut event =
            Event::new(WebhookEvent::FileDownloaded, OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(at));
        event.file = Some((file.to_owned(), format!("{file}.pdf"), 10));
        event.client_address = Some(client.to_owned());
        event
    }

    fn at(seconds: i64) -> OffsetDateTime {
        OffsetDateTime::UNIX_EPOCH + time::Duration::seconds(seconds)
    }

    #[test]
    fn a_burst_of_downloads_of_one_file_is_one_report_and_one_count() {
        let mut coalescer = Coalescer::default();
        let reported: Vec<Event> =
            (0..3_003).filter_map(|n| coalescer.admit(download("f", "198.51.100.7", n / 100))).collect();
        assert_eq!(reported.len(), 1);
        assert_eq!(reported[0].downloads, None, "the first one is reported as it is");
        assert!(coalescer.due(at(59)).is_empty(), "the window is still open");
        let folded = coalescer.due(at(60));
        assert_eq!(folded.len(), 1);
        assert_eq!(folded[0].downloads, Some(3_002));
        assert!(coalescer.due(at(200)).is_empty());
        // The next window starts with a report of its own.
        assert!(coalescer.admit(download("f", "198.51.100.7", 300)).is_some());
    }

    #[test]
    fn one_client_gets_a_few_reports_however_many_files_it_fetches() {
        let mut coalescer = Coalescer::default();
        let reported = (0..1_000).filter_map(|n| coalescer.admit(download(&format!("f{n}"), "203.0.113.9", 1))).count();
        assert_eq!(reported, CLIENT_REPORTS as usize);
        // Another client is reported as usual.
        assert!(coalescer.admit(download("other", "192.0.2.1", 1)).is_some());
        let folded = coalescer.due(at(61));
        assert_eq!(folded.len(), 1_000 - CLIENT_REPORTS as usize, "one count per file, no more");
        assert!(folded.iter().all(|event| event.downloads == Some(1)));
        assert!(coalescer.admit(download("f0", "203.0.113.9", 70)).is_some(), "a new window, new reports");
    }

    #[test]
    fn other_events_pass_and_a_stop_reports_what_is_folded() {
        let mut coalescer = Coalescer::default();
        let upload = Event::new(WebhookEvent::FileUploaded, at(0));
        assert!(coalescer.admit(upload).is_some());
        coalescer.admit(download("f", "a", 0));
        coalescer.admit(download("f", "b", 1));
        coalescer.admit(download("f", "c", 2));
        let left = coalescer.drain();
        assert_eq!(left.len(), 1);
        assert_eq!((left[0].downloads, left[0].client_address.as_deref()), (Some(2), Some("c")));
    }
}
