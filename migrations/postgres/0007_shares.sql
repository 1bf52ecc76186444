-- Shares: named sets of files under one link, and the CRC-32 of every file that their zips need
-- (as migrations/sqlite/0007).

-- CRC-32 (IEEE) of the whole file, computed while the upload streams, beside the SHA-256. NULL only
-- for files uploaded before this column existed; their first zip fills it in (`ensure_crc32`).
ALTER TABLE files ADD COLUMN crc32 BIGINT CHECK (crc32 BETWEEN 0 AND 4294967295);

CREATE TABLE shares (
    id             TEXT PRIMARY KEY NOT NULL,
    name           TEXT NOT NULL,
    note           TEXT,
    created_at     BIGINT NOT NULL,                     -- unix seconds
    -- Raised whenever the set of files or their order changes; the zip's Last-Modified.
    updated_at     BIGINT NOT NULL,                     -- unix seconds
    expires_at     BIGINT,                              -- unix seconds; NULL never expires
    max_downloads  BIGINT CHECK (max_downloads > 0),    -- zips from the first byte; NULL is unlimited
    download_count BIGINT NOT NULL DEFAULT 0,
    last_download_at BIGINT,                            -- unix seconds; NULL until the first download
    -- Argon2id PHC string of the share's password; NULL: anyone with the link may see it.
    password_hash  TEXT
);

CREATE INDEX shares_by_created ON shares (created_at DESC);

-- Which files a share holds, in which order, under which folder of its zip ('' is the root). A file
-- purged from the database leaves every share it was in; deleting a share keeps its files.
CREATE TABLE share_files (
    share_id TEXT NOT NULL REFERENCES shares (id) ON DELETE CASCADE,
    file_id  TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    position BIGINT NOT NULL CHECK (position >= 0),
    folder   TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (share_id, file_id)
);

CREATE INDEX share_files_by_file ON share_files (file_id);

-- A file that stops being visible for good (deleted, or expired and swept) leaves its shares at
-- once, and each of those shares gets a new `updated_at`, so the zip's Last-Modified moves with
-- its ETag (an If-Range date must never match a zip without that file).
CREATE FUNCTION files_leave_shares() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE shares SET updated_at = GREATEST(updated_at + 1, CAST(EXTRACT(EPOCH FROM now()) AS BIGINT))
        WHERE id IN (SELECT share_id FROM share_files WHERE file_id = NEW.id);
    DELETE FROM share_files WHERE file_id = NEW.id;
    RETURN NULL;
END;
$$;

CREATE TRIGGER files_leave_shares AFTER UPDATE OF state ON files
FOR EACH ROW WHEN (OLD.state = 'ready' AND NEW.state <> 'ready')
EXECUTE FUNCTION files_leave_shares();
