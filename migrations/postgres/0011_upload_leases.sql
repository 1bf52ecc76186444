-- Several instances share this database (PostgreSQL only: a SQLite file has one process, whose
-- memory knows its uploads, so there is no SQLite twin of this migration). An upload in flight holds
-- a lease that its instance renews every third of BLOBDROP_UPLOAD_LEASE; another instance's clean-up
-- purges an 'uploading' row only once its lease ran out (its instance died or lost the database).
-- A row appears with the first renewal; until then the upload's created_at stands for it.
CREATE TABLE upload_leases (
    file_id     TEXT PRIMARY KEY NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    lease_until BIGINT NOT NULL             -- unix seconds
);

CREATE INDEX upload_leases_until ON upload_leases (lease_until);
