-- Accounts: the people who may sign in. Row 1 is the owner, who signs in with the shared secret
-- and is an admin; every row the database held before this migration is the owner's.
CREATE TABLE accounts (
    id            INTEGER PRIMARY KEY,
    -- As the person typed it; `name_key` (its lowercase) is what sign-in looks up and keeps unique.
    name          TEXT NOT NULL,
    name_key      TEXT NOT NULL UNIQUE,
    role          TEXT NOT NULL CHECK (role IN ('admin', 'member')),
    -- argon2 (PHC string); NULL until the person sets one through an invite link.
    password_hash TEXT,
    disabled      INTEGER NOT NULL DEFAULT 0 CHECK (disabled IN (0, 1)),
    created_at    INTEGER NOT NULL          -- unix seconds
) STRICT;

INSERT INTO accounts (id, name, name_key, role, created_at) VALUES (1, 'owner', 'owner', 'admin', unixepoch());

-- One-time links where a person sets their password; only the SHA-256 of each token is kept.
CREATE TABLE account_invites (
    token_sha256 TEXT PRIMARY KEY NOT NULL,
    account_id   INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    expires_at   INTEGER NOT NULL           -- unix seconds
) STRICT;

CREATE INDEX account_invites_by_account ON account_invites (account_id);

-- Who each session is, and whose each record is: the owner's, for everything made before.
ALTER TABLE sessions ADD COLUMN account_id INTEGER NOT NULL DEFAULT 1;
ALTER TABLE files ADD COLUMN account_id INTEGER NOT NULL DEFAULT 1;
ALTER TABLE shares ADD COLUMN account_id INTEGER NOT NULL DEFAULT 1;
ALTER TABLE guest_links ADD COLUMN account_id INTEGER NOT NULL DEFAULT 1;
ALTER TABLE api_tokens ADD COLUMN account_id INTEGER NOT NULL DEFAULT 1;
ALTER TABLE webhooks ADD COLUMN account_id INTEGER NOT NULL DEFAULT 1;

CREATE INDEX sessions_by_account ON sessions (account_id);
CREATE INDEX files_by_account ON files (account_id);
