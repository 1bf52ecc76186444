//! Sizes and counts the server holds to, in one place.

/// Every upload is cut into chunks of this many bytes; each chunk is one BLOB row.
pub const CHUNK_SIZE: usize = 32 * 1024;

/// Longest note a file may carry, in bytes.
pub const MAX_NOTE_LEN: usize = 4096;

/// Most files one bundle may name.
pub const MAX_BUNDLE_IDS: usize = 1000;
