-- Shares that take only age-encrypted files, and whether a file has the layout of an age file
-- (NULL until checked), as migrations/sqlite/0017.
ALTER TABLE shares ADD COLUMN require_encryption BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE files ADD COLUMN age_layout BOOLEAN;
