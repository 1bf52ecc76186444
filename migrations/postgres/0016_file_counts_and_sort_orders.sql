-- The files page pages by cursor in every sort order and counts without reading every row.
--
-- How many files are 'ready': the sum of the changes the trigger below adds in the transaction that
-- changes a file's state (+1, -1), which the clean-up folds into one row now and then. Rows are only
-- ever added, never updated, so concurrent writers never wait for each other here (one counter row
-- updated by every transaction deadlocked two of them that changed the same files in other orders).
-- The page's count subtracts the few ready files that expired or were used up and wait for the
-- clean-up, found through the two partial indexes.
CREATE TABLE file_count_changes (
    change BIGINT NOT NULL
);
INSERT INTO file_count_changes (change) SELECT COUNT(*) FROM files WHERE state = 'ready';

CREATE FUNCTION file_counts_follow() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    change BIGINT := 0;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'ready' THEN
        change := change - 1;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') AND NEW.state = 'ready' THEN
        change := change + 1;
    END IF;
    IF change <> 0 THEN
        INSERT INTO file_count_changes (change) VALUES (change);
    END IF;
    RETURN NULL;
END;
$$;
CREATE TRIGGER file_counts_follow AFTER INSERT OR DELETE OR UPDATE OF state ON files
FOR EACH ROW EXECUTE FUNCTION file_counts_follow();

CREATE INDEX files_by_expiry ON files (state, expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX files_with_a_download_limit ON files (state, download_count) WHERE max_downloads IS NOT NULL;

-- The sort orders of the files page (newest first has files_ready_by_created_and_id), each the
-- expression its ORDER BY names, then the id that breaks ties.
CREATE INDEX files_by_name ON files (state, lower(filename), id);
CREATE INDEX files_by_size ON files (state, file_size, id);
CREATE INDEX files_by_expiry_never_last ON files (state, COALESCE(expires_at, 9223372036854775807), id);
CREATE INDEX files_by_downloads ON files (state, download_count, id);
