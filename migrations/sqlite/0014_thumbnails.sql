-- A picture file's thumbnail, made once on the first request (`services::thumbnails`) and deleted
-- with its file. An empty content_type notes that none can be made, so the file is tried once.
CREATE TABLE thumbnails (
    file_id      TEXT PRIMARY KEY NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    content_type TEXT NOT NULL,
    bytes        BLOB NOT NULL
);
