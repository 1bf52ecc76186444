-- Per-upload deletion links (`X-Url-Delete`), as migrations/sqlite/0005: only the token's SHA-256
-- is stored, so a copy of the database deletes nothing.

CREATE TABLE deletion_tokens (
    file_id      TEXT PRIMARY KEY NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    token_sha256 TEXT NOT NULL
);
