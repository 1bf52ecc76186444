//! How both databases bind and read the domain's record ids (`domain::record_ids`): as the value
//! each wraps, so the SQL is as before and the types stay out of the domain's dependencies.

use sqlx::{Database, Decode, Encode, Postgres, Sqlite, Type};

use crate::domain::{ApiTokenId, DeliveryId, WebhookId};

/// `sqlx::Type`, `Encode` and `Decode` for `$name`, on SQLite and PostgreSQL, by its `.0`.
macro_rules! transparent {
    ($($name:ident($inner:ty)),*) => {$(
        transparent!(@db $name, $inner, Sqlite);
        transparent!(@db $name, $inner, Postgres);
    )*};
    (@db $name:ident, $inner:ty, $db:ty) => {
        impl Type<$db> for $name {
            fn type_info() -> <$db as Database>::TypeInfo {
                <$inner as Type<$db>>::type_info()
            }

            fn compatible(ty: &<$db as Database>::TypeInfo) -> bool {
                <$inner as Type<$db>>::compatible(ty)
            }
        }

        impl<'q> Encode<'q, $db> for $name {
            fn encode_by_ref(
                &self,
                buf: &mut <$db as Database>::ArgumentBuffer<'q>,
            ) -> Result<sqlx::encode::IsNull, sqlx::error::BoxDynError> {
                <$inner as Encode<'q, $db>>::encode_by_ref(&self.0, buf)
            }
        }

        impl<'r> Decode<'r, $db> for $name {
            fn decode(value: <$db as Database>::ValueRef<'r>) -> Result<Self, sqlx::error::BoxDynError> {
                Ok($name(<$inner as Decode<'r, $db>>::decode(value)?))
            }
        }
    };
}

transparent!(ApiTokenId(i64), WebhookId(i64), DeliveryId(String));
