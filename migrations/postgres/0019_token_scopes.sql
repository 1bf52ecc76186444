-- What each API token may do and whether its uploads must be age files (as migrations/sqlite/0018).
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT 'full';
ALTER TABLE api_tokens ADD COLUMN require_encryption BOOLEAN NOT NULL DEFAULT FALSE;
