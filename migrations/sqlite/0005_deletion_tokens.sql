-- Per-upload deletion links (`X-Url-Delete`): whoever holds one can delete that one file without
-- the owner's secret. Only the token's SHA-256 is stored, so a copy of the database deletes nothing.

CREATE TABLE deletion_tokens (
    file_id      TEXT PRIMARY KEY NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    token_sha256 TEXT NOT NULL
) STRICT;
