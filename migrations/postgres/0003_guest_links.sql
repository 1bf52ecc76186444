-- Guest links: upload-only links the owner hands out, and which link each file came through
-- (as migrations/sqlite/0003).

CREATE TABLE guest_links (
    id                 TEXT PRIMARY KEY NOT NULL,
    label              TEXT NOT NULL,
    created_at         BIGINT NOT NULL,                     -- unix seconds
    expires_at         BIGINT,                              -- unix seconds; NULL never expires
    max_file_size      BIGINT CHECK (max_file_size > 0),    -- bytes; NULL: only the server's limit
    max_uploads        BIGINT CHECK (max_uploads > 0),      -- NULL is unlimited
    -- Uploads made visible through the link; raised in the same write that makes the file visible.
    upload_count       BIGINT NOT NULL DEFAULT 0 CHECK (upload_count >= 0),
    file_lifetime_days BIGINT CHECK (file_lifetime_days > 0), -- NULL: guest files never expire
    disabled           BOOLEAN NOT NULL DEFAULT FALSE
);

CREATE INDEX guest_links_by_created ON guest_links (created_at DESC);

-- Deleting a link keeps its files; they just no longer say where they came from.
ALTER TABLE files ADD COLUMN guest_link_id TEXT REFERENCES guest_links (id) ON DELETE SET NULL;

CREATE INDEX files_by_guest_link ON files (guest_link_id) WHERE guest_link_id IS NOT NULL;
