//! Pieces of SQL that PostgreSQL's statements share, as macros that expand to string literals so
//! every statement stays one `concat!`ed `const`. `$1` is always "now" (unix seconds) where a
//! visibility rule appears.

/// The columns of `FileRow`, under the names `FileRow` reads (SQLite's `query_as!` overrides).
/// A query over the chunk table never appears here.
macro_rules! file_columns {
    () => {
        "files.id, files.filename, files.content_type, files.file_size, files.chunk_size, \
         files.sha256 AS \"sha256!\", files.note, files.created_at, files.expires_at, files.max_downloads, \
         files.download_count, files.last_download_at, files.guest_link_id, \
         (SELECT label FROM guest_links WHERE guest_links.id = files.guest_link_id) AS \"guest_link_label?\", \
         files.password_hash IS NOT NULL AS \"password_protected!: bool\""
    };
}

/// A ready file not expired at `$1`, its downloads used up or not (what a download grant goes on with).
macro_rules! unexpired {
    () => {
        "files.state = 'ready' AND (files.expires_at IS NULL OR files.expires_at > $1)"
    };
}

/// A share not expired at `$1`, its downloads used up or not.
macro_rules! share_unexpired {
    () => {
        "(shares.expires_at IS NULL OR shares.expires_at > $1)"
    };
}

/// Anyone with its link may download the file now (`$1`).
macro_rules! visible {
    () => {
        "files.state = 'ready' AND (files.expires_at IS NULL OR files.expires_at > $1) \
         AND (files.max_downloads IS NULL OR files.download_count < files.max_downloads)"
    };
}

macro_rules! guest_link_columns {
    () => {
        "id, label, created_at, expires_at, max_file_size, max_uploads, upload_count, file_lifetime_days, disabled, \
         share_batches, require_encryption"
    };
}

macro_rules! resumable_columns {
    () => {
        "file_id, upload_offset, upload_length, metadata, file_lifetime_secs, guest_link_id, created_at, expires_at, \
         is_partial"
    };
}

/// The member files of the share in the outer query that anyone may download now.
macro_rules! share_members {
    () => {
        "FROM share_files JOIN files ON files.id = share_files.file_id \
         WHERE share_files.share_id = shares.id AND files.state = 'ready' \
         AND (files.expires_at IS NULL OR files.expires_at > $1) \
         AND (files.max_downloads IS NULL OR files.download_count < files.max_downloads)"
    };
}

/// The columns of `ShareRow`: the counts and sizes of its visible files, from their rows.
macro_rules! share_columns {
    () => {
        concat!(
            "shares.id, shares.name, shares.note, shares.created_at, shares.updated_at, shares.expires_at, \
             shares.max_downloads, shares.download_count, shares.last_download_at, \
             shares.password_hash IS NOT NULL AS password_protected, \
             (SELECT COUNT(*) ",
            share_members!(),
            ") AS file_count, (SELECT COALESCE(SUM(files.file_size), 0)::BIGINT ",
            share_members!(),
            ") AS total_size, (SELECT COALESCE(MAX(files.created_at), 0) ",
            share_members!(),
            ") AS newest_file_at"
        )
    };
}

/// A share anyone with its link may see now (`$1`): not expired, downloads left.
macro_rules! share_visible {
    () => {
        "(shares.expires_at IS NULL OR shares.expires_at > $1) \
         AND (shares.max_downloads IS NULL OR shares.download_count < shares.max_downloads)"
    };
}
