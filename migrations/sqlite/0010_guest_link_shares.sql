-- Guest links that turn each guest's batch (a multi-file form, or the browser's files of one
-- drop) into one share whose link the guest gets back; 0: one link per file, as before.
ALTER TABLE guest_links ADD COLUMN share_batches INTEGER NOT NULL DEFAULT 0 CHECK (share_batches IN (0, 1));
