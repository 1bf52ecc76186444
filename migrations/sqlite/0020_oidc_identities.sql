-- Single sign-on identities linked to accounts: an OpenID Connect provider's (issuer, subject)
-- names one person, and it signs in as the one account it is linked to (never by e-mail, name or
-- client address). An account may have several; an identity is never linked to two.
CREATE TABLE oidc_identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    account_id INTEGER NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    linked_at  INTEGER NOT NULL,           -- unix seconds
    PRIMARY KEY (issuer, subject)
) STRICT;

CREATE INDEX oidc_identities_by_account ON oidc_identities (account_id);

-- The owner's identity, linked on the settings page before accounts had identities (a settings
-- row of JSON, empty when unlinked), becomes the owner's row, so an install keeps signing in.
INSERT INTO oidc_identities (issuer, subject, account_id, linked_at)
SELECT json_extract(value, '$.issuer'), json_extract(value, '$.subject'), 1, unixepoch()
FROM settings
WHERE key = 'oidc_owner_identity' AND json_valid(value)
  AND json_type(value, '$.issuer') = 'text' AND json_type(value, '$.subject') = 'text';

DELETE FROM settings WHERE key = 'oidc_owner_identity';
