-- Webhooks (as migrations/sqlite/0008): the owner's receivers of events, and the queue of their
-- deliveries, kept in the database so that deliveries still pending at a stop (or a crash) go out
-- after the next start, from whichever instance claims them first.

CREATE TABLE webhooks (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    url        TEXT NOT NULL,                       -- http:// or https://, the owner's and trusted
    -- The events it wants, space-separated (`file.uploaded file.downloaded`).
    events     TEXT NOT NULL,
    format     TEXT NOT NULL CHECK (format IN ('generic', 'discord', 'slack', 'ntfy')),
    -- The key of the HMAC-SHA256 signature of generic deliveries. Kept as it is (not hashed): every
    -- delivery is signed with it, as GitHub keeps its webhooks' secrets.
    secret     TEXT NOT NULL,
    created_at BIGINT NOT NULL                      -- unix seconds
);

CREATE TABLE webhook_deliveries (
    id              TEXT PRIMARY KEY NOT NULL,      -- a UUID, sent as X-Blobdrop-Delivery
    webhook_id      BIGINT NOT NULL REFERENCES webhooks (id) ON DELETE CASCADE,
    event           TEXT NOT NULL,
    -- The event as generic JSON, the exact body of a generic delivery (the other formats are made from it).
    payload         TEXT NOT NULL,
    created_at      BIGINT NOT NULL,                -- unix seconds
    attempts        BIGINT NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    -- When it is tried next (unix seconds); NULL once delivered or given up.
    next_attempt_at BIGINT,
    last_status     BIGINT,                         -- the receiver's last HTTP status; NULL: no answer
    last_error      TEXT,                           -- why the last attempt failed; NULL once delivered
    delivered_at    BIGINT,                         -- unix seconds; NULL until a 2xx answer
    -- The order deliveries were queued in, as SQLite's rowid gives it.
    queued          BIGINT GENERATED ALWAYS AS IDENTITY
);

-- The worker's question: what is due now.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE next_attempt_at IS NOT NULL;
-- The settings page's: a webhook's latest deliveries.
CREATE INDEX webhook_deliveries_by_webhook ON webhook_deliveries (webhook_id, created_at DESC);
