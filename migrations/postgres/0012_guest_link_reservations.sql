-- A guest link's unfinished uploads count against its limits when each is created: they are
-- found by link, and only the live ones ('uploading', not expired) count.
CREATE INDEX resumable_uploads_by_guest_link ON resumable_uploads (guest_link_id) WHERE guest_link_id IS NOT NULL;
-- A guest's file goes into at most one share the guest makes (TRUE: it is in one), so a link
-- makes no more shares than the files it took.
ALTER TABLE files ADD COLUMN guest_shared BOOLEAN NOT NULL DEFAULT FALSE;
