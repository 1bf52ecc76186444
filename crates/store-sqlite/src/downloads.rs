//! Each file's download history: when, from where, with what.

use super::store::Store;

blobdrop_store_core::download_methods! {
    record: ["INSERT INTO downloads (file_id, at, client_ip, user_agent) VALUES (?, ?, ?, ?)"],
    history: ["SELECT at, client_ip, user_agent FROM downloads WHERE file_id = ? ORDER BY at DESC, id DESC LIMIT ?"],
    uploads_by_day: [
        "SELECT created_at / 86400 AS \"day!: i64\", COUNT(*) AS \"count!: i64\", \
         COALESCE(SUM(file_size), 0) AS \"bytes!: i64\" \
         FROM files WHERE state = 'ready' AND created_at >= ? GROUP BY created_at / 86400"
    ],
    downloads_by_day: [
        "SELECT downloads.at / 86400 AS \"day!: i64\", COUNT(*) AS \"count!: i64\", \
         COALESCE(SUM(files.file_size), 0) AS \"bytes!: i64\" \
         FROM downloads JOIN files ON files.id = downloads.file_id \
         WHERE downloads.at >= ? GROUP BY downloads.at / 86400"
    ],
}
