-- What each API token may do (`domain::TokenScopes`: `read`, `upload`, `full`, space-separated)
-- and whether its uploads must be age files. Tokens made before keep what they could do: full.
ALTER TABLE api_tokens ADD COLUMN scopes TEXT NOT NULL DEFAULT 'full';
ALTER TABLE api_tokens ADD COLUMN require_encryption INTEGER NOT NULL DEFAULT 0 CHECK (require_encryption IN (0, 1));
