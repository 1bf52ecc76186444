-- The listing pages by a cursor (created_at, id) after the last file it gave: a range of this index,
-- so a page deep in 100,000 files costs what the first does, where OFFSET read every row before it.
CREATE INDEX files_ready_by_created_and_id ON files (state, created_at DESC, id DESC);
