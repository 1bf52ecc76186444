-- Guest links that take only age-encrypted files (a body that is not an age file is refused and
-- nothing of it kept), whatever the server-wide setting; 0: any file, as before.
ALTER TABLE guest_links ADD COLUMN require_encryption INTEGER NOT NULL DEFAULT 0 CHECK (require_encryption IN (0, 1));
