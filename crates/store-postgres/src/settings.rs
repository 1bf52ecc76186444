//! Installation-wide settings kept in PostgreSQL.

use super::store::Store;
use blobdrop_store::StoreError;

pub(super) const SETTING: &str = "SELECT value FROM settings WHERE key = $1";
pub(super) const SET_SETTING: &str =
    "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value";
pub(super) const INSERT_SETTING: &str =
    "INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING";

impl Store {
    pub async fn setting(&self, key: &str) -> Result<Option<String>, StoreError> {
        Ok(sqlx::query_scalar(SETTING).bind(key).fetch_optional(&self.pool).await?)
    }

    /// Stores `value` under `key`, replacing what was there.
    pub async fn set_setting(&self, key: &str, value: &str) -> Result<(), StoreError> {
        sqlx::query(SET_SETTING).bind(key).bind(value).execute(&self.pool).await?;
        Ok(())
    }

    /// Stores `value` unless the key already has one; returns the value stored now, so instances
    /// starting at once agree on the first one written.
    pub async fn setting_or_insert(&self, key: &str, value: &str) -> Result<String, StoreError> {
        sqlx::query(INSERT_SETTING).bind(key).bind(value).execute(&self.pool).await?;
        Ok(sqlx::query_scalar(SETTING).bind(key).fetch_one(&self.pool).await?)
    }
}
