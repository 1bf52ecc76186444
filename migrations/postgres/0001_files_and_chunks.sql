-- Files and their bytes: the same tables and rules as migrations/sqlite/0001. Integers are BIGINT
-- (SQLite's INTEGER is 64-bit), times unix seconds.

CREATE TABLE files (
    id            TEXT PRIMARY KEY NOT NULL,
    filename      TEXT NOT NULL,
    content_type  TEXT NOT NULL,
    -- Stored so listings never touch chunk rows; 0 until the upload is finalized.
    file_size     BIGINT NOT NULL CHECK (file_size >= 0),
    chunk_size    BIGINT NOT NULL CHECK (chunk_size > 0),
    -- Hex SHA-256 of the whole file; NULL only while uploading.
    sha256        TEXT,
    note          TEXT,
    created_at    BIGINT NOT NULL,            -- unix seconds
    expires_at    BIGINT,                     -- unix seconds; NULL never expires
    max_downloads BIGINT CHECK (max_downloads > 0), -- NULL is unlimited
    download_count BIGINT NOT NULL DEFAULT 0,
    last_download_at BIGINT,                  -- unix seconds; NULL until the first download
    -- 'uploading' while chunks arrive, 'ready' once every chunk is committed, 'deleted' while its
    -- chunks are being purged. Only 'ready' files are ever visible.
    state         TEXT NOT NULL CHECK (state IN ('uploading', 'ready', 'deleted')),
    CHECK (state <> 'ready' OR sha256 IS NOT NULL)
);

CREATE INDEX files_ready_by_created ON files (state, created_at DESC);
CREATE INDEX files_expires_at ON files (expires_at) WHERE expires_at IS NOT NULL;

-- One row per 32 KiB chunk, the bytes last.
CREATE TABLE file_chunks (
    file_id TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    idx     BIGINT NOT NULL CHECK (idx >= 0),
    data    BYTEA NOT NULL,
    PRIMARY KEY (file_id, idx)
);

-- Uploads are random bytes as often as not (archives, media): EXTERNAL keeps each chunk out of
-- line in the TOAST table uncompressed, instead of PostgreSQL trying to compress every 32 KiB first.
ALTER TABLE file_chunks ALTER COLUMN data SET STORAGE EXTERNAL;

-- Small key/value facts about this installation, such as the hash of a generated owner secret.
CREATE TABLE settings (
    key   TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
