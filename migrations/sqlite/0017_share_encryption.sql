-- Shares that take only age-encrypted files: a file that is not an age file cannot join one, and
-- a share with such a file cannot be made to require it; 0: any file, as before.
ALTER TABLE shares ADD COLUMN require_encryption INTEGER NOT NULL DEFAULT 0 CHECK (require_encryption IN (0, 1));
-- Whether a file's bytes have the layout of an age file (its header, a payload of whole chunks):
-- 1 or 0 once checked, NULL until then. Filled in from the first chunks when a file joins a share
-- (`services::shares::fill_missing_encryption`), as the CRC-32 of older files is; a file's bytes
-- never change once it is ready.
ALTER TABLE files ADD COLUMN age_layout INTEGER CHECK (age_layout IN (0, 1));
