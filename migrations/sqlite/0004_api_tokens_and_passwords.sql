-- API tokens for scripts, and optional passwords on downloads.

-- Only a hash of each token is stored: a copy of the database authenticates nobody.
CREATE TABLE api_tokens (
    id           INTEGER PRIMARY KEY,
    label        TEXT NOT NULL,
    token_sha256 TEXT NOT NULL UNIQUE,
    created_at   INTEGER NOT NULL,          -- unix seconds
    last_used_at INTEGER                    -- unix seconds, updated at most once a minute; NULL: never used
) STRICT;

-- Argon2id PHC string of the file's download password; NULL: anyone with the link may download.
ALTER TABLE files ADD COLUMN password_hash TEXT;
