-- Single sign-on identities linked to accounts (as migrations/sqlite/0020): an OpenID Connect
-- provider's (issuer, subject) signs in as the one account it is linked to.
CREATE TABLE oidc_identities (
    issuer     TEXT NOT NULL,
    subject    TEXT NOT NULL,
    account_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    linked_at  BIGINT NOT NULL,            -- unix seconds
    PRIMARY KEY (issuer, subject)
);

CREATE INDEX oidc_identities_by_account ON oidc_identities (account_id);

-- The owner's identity linked before (a settings row of JSON, empty when unlinked) becomes the
-- owner's row. Only a JSON object is read: the serializer wrote either that or nothing.
INSERT INTO oidc_identities (issuer, subject, account_id, linked_at)
SELECT linked ->> 'issuer', linked ->> 'subject', 1, EXTRACT(EPOCH FROM now())::BIGINT
FROM (
    -- The CASE keeps the cast away from an empty value, whatever order the planner picks.
    SELECT CASE WHEN value LIKE '{%}' THEN value::jsonb END AS linked
    FROM settings
    WHERE key = 'oidc_owner_identity'
) AS stored
WHERE linked ->> 'issuer' IS NOT NULL AND linked ->> 'subject' IS NOT NULL;

DELETE FROM settings WHERE key = 'oidc_owner_identity';
