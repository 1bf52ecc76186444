-- Browser sessions and each file's download history (as migrations/sqlite/0002).

-- Only a hash of each session token is stored, so a copy of the database opens no session.
CREATE TABLE sessions (
    token_sha256 TEXT PRIMARY KEY NOT NULL,
    -- Sent back by forms and scripts with every change the session makes (CSRF protection).
    csrf_token   TEXT NOT NULL,
    created_at   BIGINT NOT NULL,           -- unix seconds
    expires_at   BIGINT NOT NULL            -- unix seconds
);

CREATE INDEX sessions_expires_at ON sessions (expires_at);

CREATE TABLE downloads (
    id          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    file_id     TEXT NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    at          BIGINT NOT NULL,            -- unix seconds
    client_ip   TEXT NOT NULL,
    user_agent  TEXT NOT NULL
);

CREATE INDEX downloads_by_file ON downloads (file_id, at DESC);
