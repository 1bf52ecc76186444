//! Installation-wide settings kept in the database.

use super::store::Store;

blobdrop_store_core::setting_methods! {
    read: ["SELECT value FROM settings WHERE key = ?"],
    replace: ["INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value"],
    insert_new: ["INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING"],
}
