//! Installation-wide settings kept in PostgreSQL.

use super::store::Store;

blobdrop_store_core::setting_methods! {
    read: ["SELECT value FROM settings WHERE key = $1"],
    replace: ["INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value"],
    insert_new: ["INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING"],
}
