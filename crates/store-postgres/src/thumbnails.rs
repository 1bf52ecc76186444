//! Thumbnails of picture files on PostgreSQL, kept beside their files (deleted with them by the
//! foreign key).

use super::store::Store;

blobdrop_store_core::thumbnail_methods! {
    find: ["SELECT content_type, bytes FROM thumbnails WHERE file_id = $1"],
    save: [
        "INSERT INTO thumbnails (file_id, content_type, bytes) \
         SELECT id, $2, $3 FROM files WHERE id = $1 AND state = 'ready' ON CONFLICT (file_id) DO NOTHING"
    ],
}
