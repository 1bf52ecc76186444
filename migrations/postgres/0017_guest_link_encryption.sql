-- Guest links that take only age-encrypted files (as migrations/sqlite/0016).
ALTER TABLE guest_links ADD COLUMN require_encryption BOOLEAN NOT NULL DEFAULT FALSE;
