//! The store's multi-statement flows, each written once for both databases. A backend
//! (`sqlite::Store`, `postgres::Store`) supplies its statements: one SQL statement each, run on
//! the connection of a transaction the flow began; the flow says which run, in which order, and
//! when the transaction commits or rolls back. The flows are methods of traits every backend's
//! `Store` has, so `facade.rs` lists them with the backends' own.
//!
//! A new flow goes here (or in the aggregate's file below), and each single statement it needs is
//! declared once, in a `declare_statements!` list: the list makes the statement trait and a macro
//! that implements it for a backend by calling that backend's function of the same name
//! (`files::make_visible`, `guest_links::claim_guest_upload`). Each backend writes the SQL, and
//! `implement!` (in `implement.rs`) in its `flows.rs` implements every list (a new list goes there).

pub mod accounts;
pub mod files;
pub mod identities;
pub mod implement;
pub mod quotas;
pub mod resumable_uploads;
pub mod shares;
pub mod webhooks;

use std::future::Future;

use std::sync::Arc;

use sqlx::pool::PoolConnection;
use sqlx::{Database, Pool};
use tracing::Instrument;

use super::live_uploads::LiveUploads;

/// What every flow needs of a backend besides its statements: where write transactions begin.
pub trait Backend: Sync {
    type Db: Database;

    /// The pool write transactions begin on.
    fn writer(&self) -> &Pool<Self::Db>;

    /// The pool reads outside a transaction go to (SQLite's read pool; PostgreSQL's one pool).
    fn reader(&self) -> &Pool<Self::Db>;

    /// The uploads this process runs, for the clean-up.
    fn live_uploads(&self) -> &Arc<LiveUploads>;

    /// After a paced clean-up step that kept the writer busy for `busy` (SQLite leaves its one
    /// write connection idle as long, so uploads find it free; PostgreSQL goes on at once).
    fn pace(&self, busy: std::time::Duration) -> impl Future<Output = ()> + Send;

    /// The write connection a batch of `bytes` chunk bytes is stored on, once it has room for
    /// them (SQLite checks the free-space reserve while holding its one write connection, so no
    /// other batch lands between the check and the insert).
    fn batch_writer(&self, bytes: u64) -> impl Future<Output = Result<PoolConnection<Self::Db>, StoreError>> + Send;

    /// After the commit of a batch of `bytes` (SQLite counts them toward its next checkpoint).
    fn batch_committed(&self, bytes: u64);
}

/// The connection type of backend `S` (what its statements run on).
pub type Connection<S> = <<S as Backend>::Db as Database>::Connection;

/// `backend!(Database, writer pool field, reader pool field)` in a backend's `flows.rs`: `Backend`
/// for its `Store`, the batch methods its `Store`'s `writer_for_batch` and `batch_committed`, the
/// live uploads its field `live_uploads`, the pause its `store::pace`.
#[doc(hidden)]
#[macro_export]
macro_rules! backend {
    ($db:ty, $writer:ident, $reader:ident) => {
        impl $crate::flows::Backend for super::store::Store {
            type Db = $db;

            fn writer(&self) -> &sqlx::Pool<$db> {
                &self.$writer
            }

            fn reader(&self) -> &sqlx::Pool<$db> {
                &self.$reader
            }

            fn live_uploads(&self) -> &std::sync::Arc<$crate::live_uploads::LiveUploads> {
                &self.live_uploads
            }

            fn batch_writer(
                &self,
                bytes: u64,
            ) -> impl std::future::Future<Output = Result<sqlx::pool::PoolConnection<$db>, $crate::StoreError>> + Send
            {
                super::store::Store::writer_for_batch(self, bytes)
            }

            fn batch_committed(&self, bytes: u64) {
                super::store::Store::batch_committed(self, bytes)
            }

            fn pace(&self, busy: std::time::Duration) -> impl std::future::Future<Output = ()> + Send {
                super::store::pace(busy)
            }
        }
    };
}

/// Declares a list of single statements once:
///
/// ```text
/// declare_statements! {
///     /// docs of the trait
///     trait NameStatements in blobdrop_store_core::flows::module, implemented by macro_name;
///     use { the types the list names };
///     /// docs of the statement
///     fn statement(arg: &'c Type, ...) -> Returned = backend_module;
///     ...
/// }
/// ```
///
/// makes `NameStatements: Backend`, whose methods take the connection of a transaction first
/// and return `Result<Returned, StoreError>`, the types in scope in the declaring module, and
/// `macro_name!()`, which a backend's `flows.rs` calls to implement the trait by calling its
/// `backend_module::statement(connection, arg, ...)`. `'c` is the connection's borrow.
macro_rules! declare_statements {
    (
        $(#[$about:meta])*
        trait $trait:ident in $($module:ident)::+, implemented by $implement:ident;
        use $imports:tt;
        $(
            $(#[$meta:meta])*
            fn $name:ident($($arg:ident: $ty:ty),* $(,)?) -> $ret:ty = $backend:ident;
        )*
    ) => {
        use $imports;

        $(#[$about])*
        pub trait $trait: $crate::flows::Backend {
            $(
                $(#[$meta])*
                fn $name<'c>(
                    connection: &'c mut <Self::Db as sqlx::Database>::Connection,
                    $($arg: $ty),*
                ) -> impl std::future::Future<Output = Result<$ret, $crate::StoreError>> + Send + 'c;
            )*
        }

        #[doc(hidden)]
        #[macro_export]
        macro_rules! $implement {
            () => {
                const _: () = {
                    // What the list names; the declaring module may import more with it.
                    #[allow(unused_imports)]
                    use $imports;

                    impl $($module)::+::$trait for super::store::Store {
                        $(
                            fn $name<'c>(
                                connection: &'c mut <<Self as $crate::flows::Backend>::Db as sqlx::Database>::Connection,
                                $($arg: $ty),*
                            ) -> impl std::future::Future<Output = Result<$ret, $crate::StoreError>> + Send + 'c {
                                super::$backend::$name(connection, $($arg),*)
                            }
                        )*
                    }
                };
            };
        }

    };
}

pub(crate) use declare_statements;

declare_statements! {
    /// A database's single statements shared by the flows of several aggregates.
    trait Statements in blobdrop_store_core::flows, implemented by flow_statements;
    use {blobdrop_store_core::domain::{FileId, FileRecord, GuestLinkId}, blobdrop_store_core::{NewDelivery, StoreError}};

    /// Counts one more upload on `link` if it still takes one of `file_size` bytes (enabled,
    /// unexpired, under its maximum); false when it does not.
    fn claim_guest_upload(link: &'c GuestLinkId, file_size: i64, now: blobdrop_store_core::domain::Timestamp) -> bool = guest_links;

    /// Turns an 'uploading' row 'ready' with its size, hashes and the guest link it came through;
    /// the file as it is now.
    fn make_visible(
        id: &'c FileId,
        file_size: i64,
        sha256: &'c str,
        crc32: u32,
        guest_link: Option<&'c GuestLinkId>,
    ) -> FileRecord = files;

    /// Hides a visible file; the guest link it came through, if it came through one.
    fn withdraw_file(id: &'c FileId) -> Option<GuestLinkId> = guest_links;

    /// Gives a guest link back one upload of its count.
    fn give_upload_back(link: &'c GuestLinkId) -> () = guest_links;

    /// Queues one webhook delivery, due at once; nothing when its webhook is gone.
    fn enqueue_delivery(delivery: &'c NewDelivery) -> () = webhooks;

    /// Marks `files` shared by a guest of `link` where each is a visible, unshared file of it;
    /// how many it marked. Each row is taken as it is marked, so of two shares of one batch the
    /// second finds the files shared.
    fn mark_guest_files_shared(link: &'c GuestLinkId, files: &'c [FileId]) -> u64 = guest_links;
}

/// The flows, as methods of every backend's `Store` (the blanket impl below): the facade's
/// handles call them like the backends' own methods.
pub trait Flows: Statements {
    /// Makes a fully written upload visible, with its size and hash.
    fn finish_upload(
        &self,
        id: &FileId,
        file_size: i64,
        sha256: &str,
        crc32: u32,
    ) -> impl Future<Output = Result<FileRecord, StoreError>> + Send {
        async move { Self::make_visible(&mut *self.writer().acquire().await?, id, file_size, sha256, crc32, None).await }
            .instrument(tracing::info_span!("finish_upload", %id, file_size, sha256, crc32))
    }

    /// Makes a fully written guest upload visible, but only if its link still takes it: in one
    /// transaction, the link's count goes up only while it is below the maximum (and the link is
    /// enabled, unexpired and allows the file's size), and the file becomes visible only if it
    /// did. Concurrent uploads through one link are counted one after another (SQLite runs one
    /// write transaction at a time; PostgreSQL's row lock on the link makes the second wait and
    /// re-check), so never past the maximum. `None`: the link refused.
    fn finish_guest_upload(
        &self,
        file_id: &FileId,
        file_size: i64,
        sha256: &str,
        crc32: u32,
        link: &GuestLinkId,
        now: blobdrop_store_core::domain::Timestamp,
    ) -> impl Future<Output = Result<Option<FileRecord>, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if !Self::claim_guest_upload(&mut transaction, link, file_size, now).await? {
                transaction.rollback().await?;
                return Ok(None);
            }
            let file = Self::make_visible(&mut transaction, file_id, file_size, sha256, crc32, Some(link)).await?;
            transaction.commit().await?;
            Ok(Some(file))
        }
    }

    /// Takes back a file made visible by a request that then failed (a later part of the same
    /// form was refused, so the client got no link): hides it and, if it came through a guest
    /// link, gives the link its upload back, in one transaction. The clean-up purges its chunks.
    fn withdraw_upload(&self, id: &FileId) -> impl Future<Output = Result<(), StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if let Some(link) = Self::withdraw_file(&mut transaction, id).await? {
                Self::give_upload_back(&mut transaction, &link).await?;
            }
            transaction.commit().await?;
            Ok(())
        }
    }

    /// Queues `deliveries` in one transaction, due at once. A delivery of a webhook deleted
    /// meanwhile is left out (its foreign key would refuse it, and the whole batch with it).
    fn enqueue_deliveries(&self, deliveries: &[NewDelivery]) -> impl Future<Output = Result<(), StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            for delivery in deliveries {
                Self::enqueue_delivery(&mut transaction, delivery).await?;
            }
            transaction.commit().await?;
            Ok(())
        }
    }

    /// Marks `files` (distinct ids) as shared by a guest of `link`, all or none: false (and
    /// nothing marked) when one of them is not a visible file of that link or is shared already.
    fn claim_guest_files(
        &self,
        link: &GuestLinkId,
        files: &[FileId],
    ) -> impl Future<Output = Result<bool, StoreError>> + Send {
        async move {
            let mut transaction = self.writer().begin().await?;
            if Self::mark_guest_files_shared(&mut transaction, link, files).await? != files.len() as u64 {
                transaction.rollback().await?;
                return Ok(false);
            }
            transaction.commit().await?;
            Ok(true)
        }
    }
}

impl<S: Statements> Flows for S {}
