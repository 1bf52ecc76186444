//! The store's multi-statement flows, each written once for both databases. A backend
//! (`sqlite::Store`, `postgres::Store`) supplies its statements through `Statements`: one SQL
//! statement each, run on the connection of a transaction the flow began; the flow says which
//! run, in which order, and when the transaction commits or rolls back. The flows are methods of
//! `Flows`, which every backend's `Store` has, so `facade.rs` lists them with the backends' own.
//!
//! A new flow goes here, with the single statements it needs added to `Statements` and to
//! `statements!`, which implements them for each backend by calling that backend's function of
//! the same name (`files::make_visible`, `guest_links::claim_guest_upload`): each backend writes
//! the SQL, and one line in its `flows.rs` implements the list.

pub(crate) mod resumable_uploads;

use std::future::Future;

use sqlx::{Database, Pool};

use crate::domain::{FileId, FileRecord, GuestLinkId};
use crate::store::{NewDelivery, StoreError};

/// A database's single statements, for the flows below.
pub(crate) trait Statements: Sync {
    type Db: Database;

    /// The pool write transactions begin on.
    fn writer(&self) -> &Pool<Self::Db>;

    /// Counts one more upload on `link` if it still takes one of `file_size` bytes (enabled,
    /// unexpired, under its maximum); false when it does not.
    fn claim_guest_upload<'c>(
        connection: &'c mut <Self::Db as Database>::Connection,
        link: &'c GuestLinkId,
        file_size: i64,
        now: i64,
    ) -> impl Future<Output = Result<bool, StoreError>> + Send + 'c;

    /// Turns an 'uploading' row 'ready' with its size, hashes and the guest link it came through;
    /// the file as it is now.
    fn make_visible<'c>(
        connection: &'c mut <Self::Db as Database>::Connection,
        id: &'c FileId,
        file_size: i64,
        sha256: &'c str,
        crc32: u32,
        guest_link: Option<&'c GuestLinkId>,
    ) -> impl Future<Output = Result<FileRecord, StoreError>> + Send + 'c;

    /// Hides a visible file; the guest link it came through, if it came through one.
    fn withdraw_file<'c>(
        connection: &'c mut <Self::Db as Database>::Connection,
        id: &'c FileId,
    ) -> impl Future<Output = Result<Option<GuestLinkId>, StoreError>> + Send + 'c;

    /// Gives a guest link back one upload of its count.
    fn give_upload_back<'c>(
        connection: &'c mut <Self::Db as Database>::Connection,
        link: &'c GuestLinkId,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'c;

    /// Queues one webhook delivery, due at once; nothing when its webhook is gone.
    fn enqueue_delivery<'c>(
        connection: &'c mut <Self::Db as Database>::Connection,
        delivery: &'c NewDelivery,
    ) -> impl Future<Output = Result<(), StoreError>> + Send + 'c;

    /// Marks `files` shared by a guest of `link` where each is a visible, unshared file of it;
    /// how many it marked. Each row is taken as it is marked, so of two shares of one batch the
    /// second finds the files shared.
    fn mark_guest_files_shared<'c>(
        connection: &'c mut <Self::Db as Database>::Connection,
        link: &'c GuestLinkId,
        files: &'c [FileId],
    ) -> impl Future<Output = Result<u64, StoreError>> + Send + 'c;
}

/// The flows, as methods of every backend's `Store` (the blanket impl below): the facade's
/// handles call them like the backends' own methods.
pub(crate) trait Flows: Statements {
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
        now: i64,
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

/// `statements!(Database, pool field)` in a backend's `flows.rs`: `Statements` for its `Store`,
/// each statement the backend's function of the same name.
macro_rules! statements {
    ($db:ty, $pool:ident) => {
        impl crate::store::flows::Statements for super::store::Store {
            type Db = $db;

            fn writer(&self) -> &sqlx::Pool<$db> {
                &self.$pool
            }

            fn claim_guest_upload<'c>(
                connection: &'c mut <$db as sqlx::Database>::Connection,
                link: &'c crate::domain::GuestLinkId,
                file_size: i64,
                now: i64,
            ) -> impl std::future::Future<Output = Result<bool, crate::store::StoreError>> + Send + 'c {
                super::guest_links::claim_guest_upload(connection, link, file_size, now)
            }

            fn make_visible<'c>(
                connection: &'c mut <$db as sqlx::Database>::Connection,
                id: &'c crate::domain::FileId,
                file_size: i64,
                sha256: &'c str,
                crc32: u32,
                guest_link: Option<&'c crate::domain::GuestLinkId>,
            ) -> impl std::future::Future<Output = Result<crate::domain::FileRecord, crate::store::StoreError>> + Send + 'c
            {
                super::files::make_visible(connection, id, file_size, sha256, crc32, guest_link)
            }

            fn withdraw_file<'c>(
                connection: &'c mut <$db as sqlx::Database>::Connection,
                id: &'c crate::domain::FileId,
            ) -> impl std::future::Future<
                Output = Result<Option<crate::domain::GuestLinkId>, crate::store::StoreError>,
            > + Send
            + 'c {
                super::guest_links::withdraw_file(connection, id)
            }

            fn enqueue_delivery<'c>(
                connection: &'c mut <$db as sqlx::Database>::Connection,
                delivery: &'c crate::store::NewDelivery,
            ) -> impl std::future::Future<Output = Result<(), crate::store::StoreError>> + Send + 'c {
                super::webhooks::enqueue_delivery(connection, delivery)
            }

            fn give_upload_back<'c>(
                connection: &'c mut <$db as sqlx::Database>::Connection,
                link: &'c crate::domain::GuestLinkId,
            ) -> impl std::future::Future<Output = Result<(), crate::store::StoreError>> + Send + 'c {
                super::guest_links::give_upload_back(connection, link)
            }

            fn mark_guest_files_shared<'c>(
                connection: &'c mut <$db as sqlx::Database>::Connection,
                link: &'c crate::domain::GuestLinkId,
                files: &'c [crate::domain::FileId],
            ) -> impl std::future::Future<Output = Result<u64, crate::store::StoreError>> + Send + 'c {
                super::guest_links::mark_guest_files_shared(connection, link, files)
            }
        }
    };
}

pub(crate) use statements;
