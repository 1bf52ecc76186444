//! Installation-wide settings kept in the database.

/// Settings' methods; binds: `read` (key), `replace` and `insert_new` (key, value).
#[macro_export]
macro_rules! setting_methods {
    (read: $read:tt, replace: $replace:tt, insert_new: $insert:tt $(,)?) => {
        impl Store {
            pub async fn setting(&self, key: &str) -> Result<Option<String>, $crate::StoreError> {
                Ok(sql!(query_scalar, $read, key).fetch_optional($crate::flows::Backend::reader(self)).await?)
            }

            /// Stores `value` under `key`, replacing what was there.
            pub async fn set_setting(&self, key: &str, value: &str) -> Result<(), $crate::StoreError> {
                sql!(query, $replace, key, value).execute($crate::flows::Backend::writer(self)).await?;
                Ok(())
            }

            /// Stores `value` unless the key already has one; returns the value stored now, so two
            /// processes (or instances) starting at once agree on the first one written.
            pub async fn setting_or_insert(&self, key: &str, value: &str) -> Result<String, $crate::StoreError> {
                let writer = $crate::flows::Backend::writer(self);
                sql!(query, $insert, key, value).execute(writer).await?;
                Ok(sql!(query_scalar, $read, key).fetch_one(writer).await?)
            }
        }
    };
}
