-- Resumable (tus) uploads, as migrations/sqlite/0006: the file row stays 'uploading' (invisible)
-- and its chunk rows are written as the bytes arrive; this row says how far it got. Any instance
-- may take the next request of an upload another one started.

CREATE TABLE resumable_uploads (
    file_id        TEXT PRIMARY KEY NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    -- Bytes committed so far, moved in the same transaction as the chunk rows that hold them.
    upload_offset  BIGINT NOT NULL DEFAULT 0 CHECK (upload_offset >= 0),
    -- The whole size; NULL while the client has not said it yet (Upload-Defer-Length).
    upload_length  BIGINT CHECK (upload_length >= 0),
    -- Upload-Metadata as the client sent it, echoed by HEAD.
    metadata       TEXT NOT NULL,
    -- How long the finished file lives (the `expires` metadata), counted from when it finishes.
    file_lifetime_secs BIGINT CHECK (file_lifetime_secs > 0),
    -- The guest link the upload comes through; NULL for the owner's. No foreign key: a deleted
    -- link's uploads are refused at their next request like any closed link's.
    guest_link_id  TEXT,
    created_at     BIGINT NOT NULL,           -- unix seconds
    -- Unfinished past this, the upload is gone and its chunks purged (unix seconds).
    expires_at     BIGINT NOT NULL,
    CHECK (upload_length IS NULL OR upload_offset <= upload_length)
);

CREATE INDEX resumable_uploads_expires_at ON resumable_uploads (expires_at);
