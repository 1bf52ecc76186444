-- Quotas: how many bytes and files each account may keep. NULL: the server's default
-- (BLOBDROP_QUOTA_BYTES, BLOBDROP_QUOTA_FILES), which the owner (row 1) is not held to.
ALTER TABLE accounts ADD COLUMN quota_bytes BIGINT CHECK (quota_bytes >= 0);
ALTER TABLE accounts ADD COLUMN quota_files BIGINT CHECK (quota_files >= 0);

-- What an unfinished upload holds against its account's quota: reserved before its bytes are
-- stored (under a lock of the account's row), so uploads running at once, on any instance, cannot
-- together pass the quota. A finished file counts its file_size instead; a failed or abandoned
-- one, marked deleted, counts nothing.
ALTER TABLE files ADD COLUMN reserved_bytes BIGINT NOT NULL DEFAULT 0;

-- An account's use is summed from its own rows only.
CREATE INDEX files_use_by_account ON files (account_id, state, file_size, reserved_bytes);
