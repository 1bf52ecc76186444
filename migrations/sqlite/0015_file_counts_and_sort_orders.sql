-- The files page pages by cursor in every sort order and counts without reading every row.
--
-- How many files are 'ready', kept by the triggers below in the statement that changes a file's
-- state; the page's count subtracts the few ready files that expired or were used up and wait
-- for the clean-up, found through the two partial indexes. `blobdrop migrate` does not copy this
-- table: PostgreSQL's own triggers count the files as they are copied.
CREATE TABLE file_counts (
    id    INTEGER PRIMARY KEY NOT NULL CHECK (id = 1),
    ready INTEGER NOT NULL
);
INSERT INTO file_counts (id, ready) SELECT 1, COUNT(*) FROM files WHERE state = 'ready';

CREATE TRIGGER file_counts_on_insert AFTER INSERT ON files WHEN NEW.state = 'ready'
BEGIN
    UPDATE file_counts SET ready = ready + 1;
END;
CREATE TRIGGER file_counts_on_update AFTER UPDATE OF state ON files
WHEN (OLD.state = 'ready') <> (NEW.state = 'ready')
BEGIN
    UPDATE file_counts SET ready = ready + CASE WHEN NEW.state = 'ready' THEN 1 ELSE -1 END;
END;
CREATE TRIGGER file_counts_on_delete AFTER DELETE ON files WHEN OLD.state = 'ready'
BEGIN
    UPDATE file_counts SET ready = ready - 1;
END;

CREATE INDEX files_by_expiry ON files (state, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX files_with_a_download_limit ON files (state, download_count) WHERE max_downloads IS NOT NULL;

-- The sort orders of the files page (newest first has files_ready_by_created_and_id), each the
-- expression its ORDER BY names, then the id that breaks ties.
CREATE INDEX files_by_name ON files (state, filename COLLATE NOCASE, id);
CREATE INDEX files_by_size ON files (state, file_size, id);
CREATE INDEX files_by_expiry_never_last ON files (state, COALESCE(expires_at, 9223372036854775807), id);
CREATE INDEX files_by_downloads ON files (state, download_count, id);
