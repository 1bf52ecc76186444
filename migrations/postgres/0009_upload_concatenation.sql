-- tus concatenation (as migrations/sqlite/0009): partial uploads, which never become files
-- themselves, and the files joined from them (final uploads).

-- TRUE for a partial upload (`Upload-Concat: partial`): finished, it waits to be joined into a final
-- upload, and expires like any unfinished upload if it never is.
ALTER TABLE resumable_uploads ADD COLUMN is_partial BOOLEAN NOT NULL DEFAULT FALSE;

-- A file made by a final upload, with its `Upload-Concat` as the client sent it, which HEAD echoes.
CREATE TABLE concatenated_files (
    file_id        TEXT PRIMARY KEY NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    upload_concat  TEXT NOT NULL
);
