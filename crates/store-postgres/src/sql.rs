//! Pieces of SQL that PostgreSQL's statements share. `sql!` pastes them into the string literal
//! that `query!`, `query_as!` and `query_scalar!` check at compile time (they take literals only),
//! as SQLite's `sql!` does; the macros below give the same pieces as `&str`s to the statements built
//! at run time. `$1` is always "now" (unix seconds) where a visibility rule appears.

/// `sql!(how, [pieces], args...)`: the SQL of `pieces` (string literals, and `FILE_COLUMNS`,
/// `GUEST_LINK_COLUMNS`, `RESUMABLE_COLUMNS` or `SHARE_COLUMNS` for the columns of `FileRow`,
/// `GuestLinkRow`, `ResumableRow` or `ShareRow`, `VISIBLE`, `UNEXPIRED`, `SHARE_VISIBLE`,
/// `SHARE_UNEXPIRED` and `SHARE_MEMBERS` for the rules of the macros below) handed to
/// `sqlx::query_as!(Record, ...)` (`how` = `query_as Record`), `sqlx::query!` (`query`),
/// `sqlx::query_scalar!` (`query_scalar`), or `concat!` (`concat`: the same text as a `&str`).
macro_rules! sql {
    ($how:ident $($record:ident)?, [$($piece:tt)+] $(, $arg:expr)* $(,)?) => {
        sql!(@munch ($how $($record)?) [] [$($arg),*] $($piece)+)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt FILE_COLUMNS $($rest:tt)*) => {
        // In the order of `FileRow`, under the names it reads; a query over the chunk table never appears here.
        sql!(@munch $how [$($sql)*
            "files.id, files.filename, files.content_type, files.file_size, files.chunk_size, \
             files.sha256 AS \"sha256!\", files.note, files.created_at, files.expires_at, files.max_downloads, \
             files.download_count, files.last_download_at, files.guest_link_id, \
             (SELECT label FROM guest_links WHERE guest_links.id = files.guest_link_id) AS \"guest_link_label?\", \
             files.password_hash IS NOT NULL AS \"password_protected!: bool\", files.account_id"
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt GUEST_LINK_COLUMNS $($rest:tt)*) => {
        sql!(@munch $how [$($sql)*
            "id, label, created_at, expires_at, max_file_size, max_uploads, upload_count, file_lifetime_days, disabled, \
             share_batches, require_encryption, account_id"
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt RESUMABLE_COLUMNS $($rest:tt)*) => {
        sql!(@munch $how [$($sql)*
            "file_id, upload_offset, upload_length, metadata, file_lifetime_secs, guest_link_id, created_at, expires_at, \
             is_partial, (SELECT files.account_id FROM files WHERE files.id = resumable_uploads.file_id) AS \"account_id!\""
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt SHARE_COLUMNS $($rest:tt)*) => {
        // In the order of `ShareRow`; the counts and sizes of its visible files, from their rows.
        blobdrop_store_core::share_columns!(sql! (@munch $how [$($sql)*] $args) $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt SHARE_MEMBERS $($rest:tt)*) => {
        // The member files of the share in the outer query that anyone may download now.
        blobdrop_store_core::share_members!(sql! (@munch $how [$($sql)*] $args) "$1" $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt SHARE_VISIBLE $($rest:tt)*) => {
        // A share anyone with its link may see now: not expired, downloads left.
        sql!(@munch $how [$($sql)*
            "(shares.expires_at IS NULL OR shares.expires_at > $1) \
             AND (shares.max_downloads IS NULL OR shares.download_count < shares.max_downloads)"
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt SHARE_UNEXPIRED $($rest:tt)*) => {
        // A share not expired, its downloads used up or not.
        sql!(@munch $how [$($sql)* "(shares.expires_at IS NULL OR shares.expires_at > $1)"] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt UNEXPIRED $($rest:tt)*) => {
        // A ready file not expired, its downloads used up or not (what a download grant goes on with).
        sql!(@munch $how [$($sql)* "files.state = 'ready' AND (files.expires_at IS NULL OR files.expires_at > $1)"]
            $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt VISIBLE $($rest:tt)*) => {
        // Anyone with its link may download the file now.
        sql!(@munch $how [$($sql)*
            "files.state = 'ready' AND (files.expires_at IS NULL OR files.expires_at > $1) \
             AND (files.max_downloads IS NULL OR files.download_count < files.max_downloads)"
        ] $args $($rest)*)
    };
    (@munch $how:tt [$($sql:literal)*] $args:tt $next:literal $($rest:tt)*) => {
        sql!(@munch $how [$($sql)* $next] $args $($rest)*)
    };
    (@munch $how:tt $sql:tt $args:tt) => {
        blobdrop_store_core::checked_sql!($how $sql $args)
    };
}

/// The columns of `FileRow`, for the statements built at run time.
macro_rules! file_columns {
    () => {
        sql!(concat, [FILE_COLUMNS])
    };
}

/// Anyone with its link may download the file now (`$1`).
macro_rules! visible {
    () => {
        sql!(concat, [VISIBLE])
    };
}
