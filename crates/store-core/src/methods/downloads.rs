//! Each file's download history (when, from where, with what), and the day totals of uploads and
//! downloads.

/// Downloads' methods; binds: `record` (file id, at, client address, user agent), `history`
/// (file id, limit), `uploads_by_day` and `downloads_by_day` (since).
#[macro_export]
macro_rules! download_methods {
    (
        record: $record:tt,
        history: $history:tt,
        uploads_by_day: $uploads:tt,
        downloads_by_day: $downloads:tt $(,)?
    ) => {
        impl Store {
            pub async fn record_download(
                &self,
                file_id: &$crate::domain::FileId,
                at: $crate::domain::Timestamp,
                client_ip: &str,
                user_agent: &str,
            ) -> Result<(), $crate::StoreError> {
                let at = at.secs();
                let (file_id, user_agent) = (file_id.as_str(), $crate::rules::kept_user_agent(user_agent));
                let writer = $crate::flows::Backend::writer(self);
                sql!(query, $record, file_id, at, client_ip, user_agent).execute(writer).await?;
                Ok(())
            }

            /// The latest downloads of a file, newest first.
            pub async fn download_history(
                &self,
                file_id: &$crate::domain::FileId,
                limit: i64,
            ) -> Result<Vec<$crate::domain::DownloadRecord>, $crate::StoreError> {
                use $crate::domain::DownloadRecord;
                let file_id = file_id.as_str();
                let reader = $crate::flows::Backend::reader(self);
                Ok(sql!(query_as DownloadRecord, $history, file_id, limit).fetch_all(reader).await?)
            }

            /// Visible files' uploads per UTC day since `since`, with their bytes (the metadata
            /// table only: the index on state and creation time).
            pub async fn uploads_by_day(&self, since: $crate::domain::Timestamp) -> Result<Vec<$crate::domain::DayTotal>, $crate::StoreError> {
                let since = since.secs();
                use $crate::domain::DayTotal;
                Ok(sql!(query_as DayTotal, $uploads, since).fetch_all($crate::flows::Backend::reader(self)).await?)
            }

            /// Counted downloads per UTC day since `since`, each with its file's size (the history's
            /// index by time, then one file row per download).
            pub async fn downloads_by_day(
                &self,
                since: $crate::domain::Timestamp,
            ) -> Result<Vec<$crate::domain::DayTotal>, $crate::StoreError> {
                let since = since.secs();
                use $crate::domain::DayTotal;
                Ok(sql!(query_as DayTotal, $downloads, since).fetch_all($crate::flows::Backend::reader(self)).await?)
            }
        }
    };
}
