//! Installation-wide settings kept in the database.

use super::store::Store;
use blobdrop_store::StoreError;

impl Store {
    pub async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar!("SELECT value FROM settings WHERE key = ?", key).fetch_optional(&self.reader).await?)
    }

    /// Stores `value` under `key`, replacing what was there.
    pub async fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query!(
            "INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            key,
            value,
        )
        .execute(&self.writer)
        .await?;
        Ok(())
    }

    /// Stores `value` unless the key already has one; returns the value that is stored now, so two
    /// processes starting at once agree on the first one written.
    pub async fn setting_or_insert(&self, key: &str, value: &str) -> Result<String, StoreError> {
        sqlx::query!("INSERT INTO settings (key, value) VALUES (?, ?) ON CONFLICT (key) DO NOTHING", key, value)
            .execute(&self.writer)
            .await?;
        Ok(sqlx::query_scalar!("SELECT value FROM settings WHERE key = ?", key).fetch_one(&self.writer).await?)
    }
}
