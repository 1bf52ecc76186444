//! Each file's download history on PostgreSQL (when, from where, with what), and the day totals of
//! uploads and downloads.

use super::store::Store;

blobdrop_store_core::download_methods! {
    record: ["INSERT INTO downloads (file_id, at, client_ip, user_agent) VALUES ($1, $2, $3, $4)"],
    history: ["SELECT at, client_ip, user_agent FROM downloads WHERE file_id = $1 ORDER BY at DESC, id DESC LIMIT $2"],
    uploads_by_day: [
        "SELECT created_at / 86400 AS \"day!\", COUNT(*) AS \"count!\", \
         COALESCE(SUM(file_size), 0)::BIGINT AS \"bytes!\" \
         FROM files WHERE state = 'ready' AND created_at >= $1 GROUP BY 1"
    ],
    downloads_by_day: [
        "SELECT downloads.at / 86400 AS \"day!\", COUNT(*) AS \"count!\", \
         COALESCE(SUM(files.file_size), 0)::BIGINT AS \"bytes!\" \
         FROM downloads JOIN files ON files.id = downloads.file_id WHERE downloads.at >= $1 GROUP BY 1"
    ],
}
