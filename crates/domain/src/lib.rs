//! Types that validate request input once, at the edge, in the product's words: blobdrop's bottom
//! layer, its own crate so that it can depend on no other layer (the root package names it
//! `crate::domain`, src/lib.rs).

mod account;
mod activity;
mod age;
mod api_token;
mod build_info;
mod byte_range;
mod byte_size;
mod clock;
mod content_type;
mod display;
mod file;
mod file_id;
mod file_name;
mod file_password;
mod guest_link;
mod lifetime;
mod limits;
mod links;
mod note;
mod quota;
mod record_ids;
mod share;
mod tar_layout;
mod thumbnail;
mod timestamp;
mod token_hash;
mod token_label;
mod trusted_proxies;
mod upload_metadata;
mod upload_options;
mod webhook;
mod zip_layout;

pub use account::{
    AccountId, AccountName, AccountNameError, AccountPassword, AccountPasswordError, AccountRecord, Actor,
    MIN_PASSWORD_CHARS, Reach, Role, name_key,
};
pub use activity::{DAY_SECONDS, DayActivity, DayTotal, DiskSpace, activity_since, daily_activity};
pub use age::{
    AGE_CHECK_PREFIX, AGE_CHUNK, AGE_INTRO, AgeCheck, AgeRefusal, ENCRYPTED_NAMES, MAX_AGE_HEADER, check_header,
    check_payload, check_stored, is_encrypted_placeholder, looks_like_age,
};
pub use api_token::{ApiTokenRecord, BadScopes, TokenRights, TokenScope, TokenScopes};
pub use build_info::{COMMIT, LONG_VERSION, VERSION};
pub use byte_range::{ByteRange, RangeRequest};
pub use byte_size::ByteSize;
pub use clock::Clock;
pub use content_type::guess_content_type;
pub use display::{date_input, date_time, human_size, relative_time, rfc3339, unix_time};
pub use file::{
    DownloadRecord, FileChanges, FileCursor, FileListing, FileRecord, FileSort, NewestFirst, PageCursor, PageStart,
    SortKey, Usage,
};
pub use file_id::FileId;
pub use file_name::FileName;
pub use file_name::FileNameError;
pub use file_password::{FilePassword, FilePasswordError};
pub use guest_link::{
    GuestLinkError, GuestLinkId, GuestLinkRecord, GuestLinkStatus, GuestLinkTerms, MAX_LIFETIME_DAYS, NewUnfinished,
    UnfinishedUploads, future_expiry,
};
pub use lifetime::{Lifetime, LifetimeError};
pub use limits::{CHUNK_SIZE, MAX_BUNDLE_IDS, MAX_NOTE_LEN};
pub use links::{PATH_SEGMENT, PublicUrl};
pub use note::{Note, NoteError, NulInText, without_nul};
pub use quota::{AccountUse, OverQuota, Quota};
pub use record_ids::{ApiTokenId, DeliveryId, WebhookId};
pub use share::{
    FolderPath, MalformedShareId, ShareChanges, ShareCursor, ShareId, ShareMember, ShareMembership, ShareRecord,
    ShareWrite, member_key,
};
pub use tar_layout::tar_layout;
pub use thumbnail::{MAX_THUMBNAIL_SOURCE, THUMBNAIL_SIDE, Thumbnail, has_thumbnail};
pub use timestamp::{Timestamp, parse_time};
pub use token_hash::TokenHash;
pub use token_label::{TokenLabel, TokenLabelError};
pub use trusted_proxies::{ForwardingHeaders, PublicOrigin, TrustedProxies, valid_host};
pub use upload_metadata::{
    ChecksumAlgorithm, MAX_METADATA_LEN, UploadChecksum, UploadChecksumError, UploadMetadata, UploadMetadataError,
};
pub use upload_options::{MaxDownloads, OptionHeaders, UploadOptions, UploadOptionsError};
pub use webhook::{
    DeliveryRecord, WebhookEvent, WebhookEvents, WebhookFormat, WebhookRecord, WebhookUrl, receiver_host,
};
pub use zip_layout::{Piece, Zip64Limits, ZipLayout, ZipMember, unique_paths};

/// What the property tests beside each parser share (the root package's tests too, through the
/// `test-support` feature its dev-dependency turns on).
#[cfg(any(test, feature = "test-support"))]
pub mod properties {
    /// The one setting of every property test: a few hundred cases keep the suite fast
    /// (`PROPTEST_CASES=100000` for a deep run), and a failing case is kept as a plain unit test
    /// beside the property rather than in a regressions file.
    pub fn config() -> proptest::test_runner::Config {
        let default = proptest::test_runner::Config::default();
        let cases = if std::env::var_os("PROPTEST_CASES").is_some() { default.cases } else { 384 };
        proptest::test_runner::Config { cases, failure_persistence: None, ..default }
    }

    /// A header value of these bytes, less those no header can hold (controls but tab).
    #[allow(clippy::unwrap_used, reason = "test support: the bytes left are a valid header value")]
    pub fn header_value(bytes: &[u8]) -> actix_web::http::header::HeaderValue {
        let allowed: Vec<u8> = bytes.iter().copied().filter(|b| *b == b'\t' || (*b >= 0x20 && *b != 0x7f)).collect();
        actix_web::http::header::HeaderValue::from_bytes(&allowed).unwrap()
    }
}
