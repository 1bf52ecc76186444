-- Resumable (tus) uploads: an upload that is created first and then receives its bytes over any
-- number of requests, each continuing where the last one stopped. Its file row stays 'uploading'
-- (invisible) and its chunk rows are written as the bytes arrive; this row says how far it got.
-- A file row with a row here is never taken for an interrupted upload: it survives restarts.

CREATE TABLE resumable_uploads (
    file_id        TEXT PRIMARY KEY NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    -- Bytes committed so far, moved in the same transaction as the chunk rows that hold them.
    upload_offset  INTEGER NOT NULL DEFAULT 0 CHECK (upload_offset >= 0),
    -- The whole size; NULL while the client has not said it yet (Upload-Defer-Length).
    upload_length  INTEGER CHECK (upload_length >= 0),
    -- Upload-Metadata as the client sent it, echoed by HEAD.
    metadata       TEXT NOT NULL,
    -- How long the finished file lives (the `expires` metadata), counted from when it finishes.
    file_lifetime_secs INTEGER CHECK (file_lifetime_secs > 0),
    -- The guest link the upload comes through; NULL for the owner's. No foreign key: a deleted
    -- link's uploads are refused at their next request like any closed link's.
    guest_link_id  TEXT,
    created_at     INTEGER NOT NULL,          -- unix seconds
    -- Unfinished past this, the upload is gone and its chunks purged (unix seconds).
    expires_at     INTEGER NOT NULL,
    CHECK (upload_length IS NULL OR upload_offset <= upload_length)
) STRICT;

CREATE INDEX resumable_uploads_expires_at ON resumable_uploads (expires_at);
