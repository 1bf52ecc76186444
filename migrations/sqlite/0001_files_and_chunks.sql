-- Files and their bytes. Page size and auto_vacuum are set by the connection options before this
-- runs, because SQLite fixes both once the first table exists.

CREATE TABLE files (
    id            TEXT PRIMARY KEY NOT NULL,
    filename      TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    -- Stored so listings never touch chunk rows; 0 until the upload is finalized.
    file_size     INTEGER NOT NULL CHECK (file_size >= 0),
    chunk_size    INTEGER NOT NULL CHECK (chunk_size > 0),
    -- Hex SHA-256 of the whole file; NULL only while uploading.
    sha256        TEXT,
    note          TEXT,
    created_at    INTEGER NOT NULL,           -- unix seconds
    expires_at    INTEGER,                    -- unix seconds; NULL never expires
    max_downloads INTEGER CHECK (max_downloads > 0), -- NULL is unlimited
    download_count INTEGER NOT NULL DEFAULT 0,
    last_download_at INTEGER,                 -- unix seconds; NULL until the first download
    -- 'uploading' while chunks arrive, 'ready' once every chunk is committed, 'deleted' while its
    -- chunks are being purged. Only 'ready' files are ever visible.
    state         TEXT NOT NULL CHECK (state IN ('uploading', 'ready', 'deleted')),
    CHECK (state <> 'ready' OR sha256 IS NOT NULL)
) STRICT;

CREATE INDEX files_ready_by_created ON files (state, created_at DESC);
CREATE INDEX files_expires_at ON files (expires_at) WHERE expires_at IS NOT NULL;

-- An ordinary rowid table with the BLOB last: WITHOUT ROWID suits small rows only.
CREATE TABLE file_chunks (
    file_id TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    idx     INTEGER NOT NULL CHECK (idx >= 0),
    data    BLOB NOT NULL,
    PRIMARY KEY (file_id, idx)
) STRICT;

-- Small key/value facts about this installation, such as the hash of a generated owner secret.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
) STRICT;
