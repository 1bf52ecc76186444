-- Guest links that turn each guest's batch (a multi-file form, or the browser's files of one
-- drop) into one share whose link the guest gets back; FALSE: one link per file, as before
-- (as migrations/sqlite/0010).
ALTER TABLE guest_links ADD COLUMN share_batches BOOLEAN NOT NULL DEFAULT FALSE;
