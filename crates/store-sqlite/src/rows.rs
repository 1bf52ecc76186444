//! The SQL pieces SQLite's row queries share; the rows themselves are `store::rows`'.
//!
//! `query_as!` takes string literals only, so the SQL that queries share (a row's columns, the
//! visibility rule) is pasted in by `sql!`, never formatted at run time.

/// `sql!(how, [pieces], args...)`: the SQL of `pieces` (string literals, and `FILE_COLUMNS`,
/// `GUEST_LINK_COLUMNS`, `RESUMABLE_COLUMNS` or `SHARE_COLUMNS` for the columns of `FileRow`,
/// `GuestLinkRow`, `ResumableRow` or `ShareRow`, `VISIBLE` and `SHARE_VISIBLE` for "anyone with its
/// link may download the file" or "may see the share", whose `?1` is now in unix seconds) handed
/// to `sqlx::query_as!(Record, ...)` (`how` = `query_as Record`), `sqlx::query!` (`query`),
/// `sqlx::query_scalar!` (`query_scalar`), or `concat!` (`concat`: the same text as a `&str`, for a
/// statement built at run time).
macro_rules! sql {
    ($how:ident $($record:ident)?, [$($piece:tt)+] $(, $arg:expr)* $(,)?) => {
        sql!(@munch ($how $($record)?) [] [$($arg),*] $($piece)+)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt FILE_COLUMNS $($rest:tt)*) => {
        // In the order of `FileRow`; a query over the chunk table never appears here.
        sql!(@munch $how [$($sql)*
            "id, filename, content_type, file_size, chunk_size, sha256 AS \"sha256!\", note, created_at, \
             expires_at, max_downloads, download_count, last_download_at, guest_link_id, \
             (SELECT label FROM guest_links WHERE guest_links.id = files.guest_link_id) AS \"guest_link_label?\", \
             password_hash IS NOT NULL AS \"password_protected!: bool\", account_id"
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt GUEST_LINK_COLUMNS $($rest:tt)*) => {
        sql!(@munch $how [$($sql)*
            "id, label, created_at, expires_at, max_file_size, max_uploads, upload_count, \
             file_lifetime_days, disabled AS \"disabled: bool\", share_batches AS \"share_batches: bool\", \
             require_encryption AS \"require_encryption: bool\", account_id"
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt RESUMABLE_COLUMNS $($rest:tt)*) => {
        // In the order of `ResumableRow`; `!`: NOT NULL in the table, so the RETURNING reads them so too.
        sql!(@munch $how [$($sql)*
            "file_id AS \"file_id!\", upload_offset AS \"upload_offset!\", upload_length, \
             metadata AS \"metadata!\", file_lifetime_secs, guest_link_id, created_at AS \"created_at!\", \
             expires_at AS \"expires_at!\", is_partial AS \"is_partial!: bool\", \
             (SELECT account_id FROM files WHERE files.id = file_id) AS \"account_id!: i64\""
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt SHARE_COLUMNS $($rest:tt)*) => {
        // In the order of `ShareRow`; the counts and sizes of its visible files, from their rows.
        blobdrop_store_core::share_columns!(sql! (@munch $how [$($sql)*] $args) $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt SHARE_MEMBERS $($rest:tt)*) => {
        // The member files of the share in the outer query that anyone may download now.
        blobdrop_store_core::share_members!(sql! (@munch $how [$($sql)*] $args) "?1" $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt SHARE_VISIBLE $($rest:tt)*) => {
        // A share anyone with its link may see: not expired, downloads left.
        sql!(@munch $how [$($sql)*
            "(shares.expires_at IS NULL OR shares.expires_at > ?1) \
             AND (shares.max_downloads IS NULL OR shares.download_count < shares.max_downloads)"
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt SHARE_UNEXPIRED $($rest:tt)*) => {
        // A share not expired, its downloads used up or not (what a download grant goes on with).
        sql!(@munch $how [$($sql)* "(shares.expires_at IS NULL OR shares.expires_at > ?1)"] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt UNEXPIRED $($rest:tt)*) => {
        // A ready file not expired, its downloads used up or not.
        sql!(@munch $how [$($sql)* "state = 'ready' AND (expires_at IS NULL OR expires_at > ?1)"] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt VISIBLE $($rest:tt)*) => {
        sql!(@munch $how [$($sql)*
            "state = 'ready' AND (expires_at IS NULL OR expires_at > ?1) \
             AND (max_downloads IS NULL OR download_count < max_downloads)"
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt $next:literal $($rest:tt)*) => {
        sql!(@munch $how [$($sql)* $next] $args $($rest)*)
    };
    (@munch $how:tt $sql:tt $args:tt) => {
        blobdrop_store_core::checked_sql!($how $sql $args)
    };
}
