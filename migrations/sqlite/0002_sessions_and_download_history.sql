-- Browser sessions and each file's download history.

-- Only a hash of each session token is stored, so a copy of the database opens no session.
CREATE TABLE sessions (
    token_sha256 TEXT PRIMARY KEY NOT NULL,
    -- Sent back by forms and scripts with every change the session makes (CSRF protection).
    csrf_token   TEXT NOT NULL,
    created_at   INTEGER NOT NULL,          -- unix seconds
    expires_at   INTEGER NOT NULL           -- unix seconds
) STRICT;

CREATE INDEX sessions_expires_at ON sessions (expires_at);

CREATE TABLE downloads (
    id          INTEGER PRIMARY KEY,
    file_id     TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    at          INTEGER NOT NULL,           -- unix seconds
    client_ip   TEXT NOT NULL,
    user_agent  TEXT NOT NULL
) STRICT;

CREATE INDEX downloads_by_file ON downloads (file_id, at DESC);
