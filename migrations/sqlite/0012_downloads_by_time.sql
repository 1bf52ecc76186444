-- The system page sums the last 30 days of downloads: by time, without reading the whole history.
CREATE INDEX downloads_by_time ON downloads (at);
