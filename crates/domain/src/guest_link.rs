//! Guest links: upload-only links the owner hands out, their limits, and whether one still takes uploads.

use super::ByteSize;
use super::file_id::random_id;

random_id!(
    /// The id of a guest link, in its URL `/g/{id}`: knowing it is the permission to upload.
    GuestLinkId,
    MalformedGuestLinkId,
    "guest link id"
);

const MAX_LABEL_CHARS: usize = 200;
/// Longest file lifetime a link may give (a hundred years, as `Max-Days`).
pub const MAX_LIFETIME_DAYS: u32 = 36_500;

/// What a guest link allows, as the owner set it. Built only through `new`, which validates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestLinkTerms {
    pub label: String,
    /// Unix seconds after which the link takes no upload; `None` never.
    pub expires_at: Option<i64>,
    /// Largest file a guest may send; `None` leaves only the server's own limit.
    pub max_file_size: Option<ByteSize>,
    /// Uploads the link takes in all; `None` is unlimited.
    pub max_uploads: Option<u32>,
    /// How long each guest file lives; `None` keeps it until the owner deletes it.
    pub file_lifetime_days: Option<u32>,
    /// Each guest's batch (a form of several files, or the browser's files of one drop) becomes
    /// one share, and the guest gets its link instead of one per file.
    pub share_batches: bool,
    /// Only age-encrypted files are taken through the link (the guest page encrypts them).
    pub require_encryption: bool,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum GuestLinkError {
    #[error("the label must be 1 to {MAX_LABEL_CHARS} characters, without control characters")]
    Label,
    #[error("the maximum file size must be at least 1 byte and under 8 EiB")]
    MaxFileSize,
    #[error("the maximum number of uploads must be a whole number from 1 to {}", u32::MAX)]
    MaxUploads,
    #[error("the file lifetime must be a whole number of days from 1 to {MAX_LIFETIME_DAYS}")]
    FileLifetime,
    #[error("the link expiry must be in the future")]
    ExpiryInThePast,
}

impl GuestLinkTerms {
    pub fn new(
        label: &str,
        expires_at: Option<i64>,
        max_file_size: Option<ByteSize>,
        max_uploads: Option<i64>,
        file_lifetime_days: Option<i64>,
    ) -> Result<Self, GuestLinkError> {
        let label = label.trim();
        if label.is_empty() || label.chars().count() > MAX_LABEL_CHARS || label.chars().any(char::is_control) {
            return Err(GuestLinkError::Label);
        }
        // Stored as a signed 64-bit integer: 2^63 bytes (8 EiB) and up cannot be kept.
        if max_file_size.is_some_and(|size| size.as_u64() == 0 || i64::try_from(size.as_u64()).is_err()) {
            return Err(GuestLinkError::MaxFileSize);
        }
        let max_uploads = max_uploads
            .map(|n| u32::try_from(n).ok().filter(|n| *n >= 1).ok_or(GuestLinkError::MaxUploads))
            .transpose()?;
        let file_lifetime_days = file_lifetime_days
            .map(|n| {
                u32::try_from(n)
                    .ok()
                    .filter(|n| (1..=MAX_LIFETIME_DAYS).contains(n))
                    .ok_or(GuestLinkError::FileLifetime)
            })
            .transpose()?;
        Ok(GuestLinkTerms {
            label: label.to_owned(),
            expires_at,
            max_file_size,
            max_uploads,
            file_lifetime_days,
            share_batches: false,
            require_encryption: false,
        })
    }
}

/// A link expiry the owner is setting now: it must lie ahead (an expired link is made by waiting,
/// or by disabling it).
pub fn future_expiry(at: i64, now: i64) -> Result<i64, GuestLinkError> {
    if at > now { Ok(at) } else { Err(GuestLinkError::ExpiryInThePast) }
}

/// Whether a link takes uploads right now, and if not, why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestLinkStatus {
    Active,
    Disabled,
    Expired,
    UsedUp,
}

impl GuestLinkStatus {
    /// Disabled says most (the owner chose it), then expired, then used up.
    pub fn of(disabled: bool, expires_at: Option<i64>, upload_count: i64, max_uploads: Option<i64>, now: i64) -> Self {
        if disabled {
            GuestLinkStatus::Disabled
        } else if expires_at.is_some_and(|at| at <= now) {
            GuestLinkStatus::Expired
        } else if max_uploads.is_some_and(|max| upload_count >= max) {
            GuestLinkStatus::UsedUp
        } else {
            GuestLinkStatus::Active
        }
    }

    /// The word the API and the pages use.
    pub fn as_str(self) -> &'static str {
        match self {
            GuestLinkStatus::Active => "active",
            GuestLinkStatus::Disabled => "disabled",
            GuestLinkStatus::Expired => "expired",
            GuestLinkStatus::UsedUp => "used up",
        }
    }

    /// The one-line reason a guest reads when the link refuses an upload; `None` when it takes one.
    pub fn refusal(self) -> Option<&'static str> {
        match self {
            GuestLinkStatus::Active => None,
            GuestLinkStatus::Disabled => Some("this guest link is disabled; ask its owner to enable it"),
            GuestLinkStatus::Expired => Some("this guest link has expired"),
            GuestLinkStatus::UsedUp => Some("this guest link has taken all the uploads it allows"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_look_like_file_ids_and_parse_back() {
        let id = GuestLinkId::random();
        assert_eq!(id.as_str().len(), 22);
        assert_eq!(GuestLinkId::parse(id.as_str()), Some(id));
        assert_eq!(GuestLinkId::parse("../etc"), None);
    }

    #[test]
    fn terms_are_validated() {
        let terms = GuestLinkTerms::new("  For Bob ", Some(10), Some(ByteSize::from_bytes(5)), Some(3), Some(7));
        assert_eq!(
            terms,
            Ok(GuestLinkTerms {
                label: "For Bob".into(),
                expires_at: Some(10),
                max_file_size: Some(ByteSize::from_bytes(5)),
                max_uploads: Some(3),
                file_lifetime_days: Some(7),
                share_batches: false,
                require_encryption: false,
            })
        );
        assert_eq!(GuestLinkTerms::new(" ", None, None, None, None), Err(GuestLinkError::Label));
        assert_eq!(GuestLinkTerms::new("a\nb", None, None, None, None), Err(GuestLinkError::Label));
        assert_eq!(GuestLinkTerms::new(&"x".repeat(201), None, None, None, None), Err(GuestLinkError::Label));
        let zero = Some(ByteSize::from_bytes(0));
        assert_eq!(GuestLinkTerms::new("a", None, zero, None, None), Err(GuestLinkError::MaxFileSize));
        let eight_eib = Some(ByteSize::from_bytes(1 << 63));
        assert_eq!(GuestLinkTerms::new("a", None, eight_eib, None, None), Err(GuestLinkError::MaxFileSize));
        let largest = Some(ByteSize::from_bytes(i64::MAX as u64));
        assert!(GuestLinkTerms::new("a", None, largest, None, None).is_ok());
        for n in [0, -1, i64::from(u32::MAX) + 1] {
            assert_eq!(GuestLinkTerms::new("a", None, None, Some(n), None), Err(GuestLinkError::MaxUploads));
        }
        for days in [0, -5, 36_501] {
            assert_eq!(GuestLinkTerms::new("a", None, None, None, Some(days)), Err(GuestLinkError::FileLifetime));
        }
    }

    #[test]
    fn a_new_expiry_must_lie_ahead() {
        assert_eq!(future_expiry(11, 10), Ok(11));
        assert_eq!(future_expiry(10, 10), Err(GuestLinkError::ExpiryInThePast));
    }

    #[test]
    fn status_says_why_a_link_refuses() {
        use GuestLinkStatus::*;
        assert_eq!(GuestLinkStatus::of(false, None, 5, None, 100), Active);
        assert_eq!(GuestLinkStatus::of(false, Some(101), 0, Some(1), 100), Active);
        assert_eq!(GuestLinkStatus::of(false, Some(100), 0, Some(1), 100), Expired);
        assert_eq!(GuestLinkStatus::of(false, None, 1, Some(1), 100), UsedUp);
        assert_eq!(GuestLinkStatus::of(true, Some(1), 1, Some(1), 100), Disabled);
        assert_eq!(Active.refusal(), None);
        assert!(UsedUp.refusal().is_some_and(|reason| !reason.contains('\n')));
    }

    fn link(max_uploads: Option<i64>, upload_count: i64, max_file_size: Option<i64>) -> GuestLinkRecord {
        GuestLinkRecord {
            id: GuestLinkId::random(),
            label: "x".into(),
            created_at: 0,
            expires_at: None,
            max_file_size,
            max_uploads,
            upload_count,
            file_lifetime_days: None,
            disabled: false,
            share_batches: false,
            require_encryption: false,
            account: crate::AccountId::OWNER,
        }
    }

    #[test]
    fn unfinished_uploads_count_against_the_links_uploads_and_bytes() {
        let ordinary = |length| NewUnfinished { length, is_partial: false, is_final: false };
        let partial = |length| NewUnfinished { length: Some(length), is_partial: true, is_final: false };
        let none = UnfinishedUploads::default();
        // One upload of 10 MiB: one unfinished upload, of any declared length up to the limit.
        let one = link(Some(1), 0, Some(10 << 20));
        assert!(one.takes_unfinished(none, ordinary(Some(10 << 20)), 0));
        assert!(one.takes_unfinished(none, ordinary(None), 0));
        let holds_one = UnfinishedUploads { uploads: 1, declared_bytes: (10 << 20) - 1, undeclared: 0 };
        assert!(!one.takes_unfinished(holds_one, ordinary(Some(1)), 0), "a second upload");
        // Partial uploads take bytes, not uploads; their final upload takes the upload, not bytes.
        let parts = UnfinishedUploads { uploads: 0, declared_bytes: 9 << 20, undeclared: 0 };
        assert!(one.takes_unfinished(parts, partial(1 << 20), 0));
        assert!(!one.takes_unfinished(parts, partial((1 << 20) + 1), 0), "parts past the bytes");
        assert!(one.takes_unfinished(
            parts,
            NewUnfinished { length: Some(9 << 20), is_partial: false, is_final: true },
            0
        ));
        let deferred = UnfinishedUploads { uploads: 0, declared_bytes: 0, undeclared: 1 };
        assert!(!one.takes_unfinished(deferred, partial(1), 0), "a deferred length counts as the limit");
        // Used up, or without limits.
        assert!(!link(Some(1), 1, None).takes_unfinished(none, ordinary(Some(1)), 0));
        let open = link(None, 7, Some(1));
        assert!(open.takes_unfinished(
            UnfinishedUploads { uploads: 1000, declared_bytes: 1000, undeclared: 0 },
            ordinary(Some(1)),
            0
        ));
        let three = link(Some(3), 1, None);
        assert!(three.takes_unfinished(UnfinishedUploads { uploads: 1, ..none }, ordinary(Some(i64::MAX)), 0));
        assert!(!three.takes_unfinished(UnfinishedUploads { uploads: 2, ..none }, ordinary(Some(1)), 0));
        // No overflow at the largest limits.
        let huge = link(Some(i64::from(u32::MAX)), 0, Some(i64::MAX));
        assert!(huge.takes_unfinished(
            UnfinishedUploads { uploads: 5, declared_bytes: i64::MAX, undeclared: 5 },
            ordinary(None),
            0
        ));
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(crate::properties::config())]

            /// Accepted terms are within their bounds, and the same terms made again are the same.
            #[test]
            fn accepted_terms_are_bounded_and_make_themselves_again(
                label in prop_oneof![any::<String>(), "[ \\t]?.{195,205}[ \\t]?"],
                max_file_size in prop::option::of(any::<u64>()),
                max_uploads in prop::option::of(prop_oneof![any::<i64>(), -2..5i64]),
                file_lifetime_days in prop::option::of(prop_oneof![any::<i64>(), 36_495..36_505i64]),
            ) {
                let size = max_file_size.map(ByteSize::from_bytes);
                let Ok(terms) = GuestLinkTerms::new(&label, None, size, max_uploads, file_lifetime_days) else {
                    return Ok(());
                };
                prop_assert_eq!(terms.label.as_str(), label.trim());
                prop_assert!(!terms.label.is_empty() && terms.label.chars().count() <= MAX_LABEL_CHARS);
                prop_assert!(!terms.label.chars().any(char::is_control));
                prop_assert!(terms.max_file_size.is_none_or(|size| (1..=i64::MAX as u64).contains(&size.as_u64())));
                prop_assert!(terms.max_uploads.is_none_or(|n| n >= 1));
                prop_assert!(terms.file_lifetime_days.is_none_or(|days| (1..=MAX_LIFETIME_DAYS).contains(&days)));
                let again = GuestLinkTerms::new(
                    &terms.label,
                    None,
                    terms.max_file_size,
                    terms.max_uploads.map(i64::from),
                    terms.file_lifetime_days.map(i64::from),
                );
                prop_assert_eq!(again, Ok(terms.clone()));
            }

            #[test]
            fn only_a_22_character_spelling_of_16_bytes_is_a_guest_link_id(raw in "[A-Za-z0-9_-]{21,23}") {
                if let Some(id) = GuestLinkId::parse(&raw) {
                    prop_assert_eq!(raw.len(), 22);
                    prop_assert_eq!(GuestLinkId::parse(&id.to_string()), Some(id));
                }
            }
        }
    }
}

/// A guest link as stored. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestLinkRecord {
    pub id: GuestLinkId,
    pub label: String,
    pub created_at: i64,
    pub expires_at: Option<i64>,
    pub max_file_size: Option<i64>,
    pub max_uploads: Option<i64>,
    pub upload_count: i64,
    pub file_lifetime_days: Option<i64>,
    pub disabled: bool,
    /// Each guest's batch becomes one share (see `GuestLinkTerms::share_batches`).
    pub share_batches: bool,
    /// Only age-encrypted files are taken (see `GuestLinkTerms::require_encryption`).
    pub require_encryption: bool,
    /// The account that made it: its guests' uploads are that account's.
    pub account: crate::AccountId,
}

impl GuestLinkRecord {
    pub fn status(&self, now: i64) -> GuestLinkStatus {
        GuestLinkStatus::of(self.disabled, self.expires_at, self.upload_count, self.max_uploads, now)
    }

    pub fn max_file_size(&self) -> Option<ByteSize> {
        self.max_file_size.map(|bytes| ByteSize::from_bytes(bytes.max(0) as u64))
    }

    /// Whether the link takes one more unfinished upload at `now`, besides those it holds: a link
    /// open for N more uploads holds at most N unfinished ones (partial uploads aside: they become
    /// one upload), and with a size limit S, at most N x S bytes of declared lengths (a length not
    /// yet declared counts as S). A final upload takes no bytes: its partial uploads hold them.
    pub fn takes_unfinished(&self, holds: UnfinishedUploads, new: NewUnfinished, now: i64) -> bool {
        if self.status(now) != GuestLinkStatus::Active {
            return false;
        }
        let Some(max_uploads) = self.max_uploads else { return true };
        let open = i128::from(max_uploads) - i128::from(self.upload_count);
        let uploads = i128::from(holds.uploads) + i128::from(!new.is_partial);
        if uploads > open {
            return false;
        }
        match (self.max_file_size, new.is_final) {
            (Some(size), false) => {
                let held = i128::from(holds.declared_bytes) + i128::from(holds.undeclared) * i128::from(size);
                held + i128::from(new.length.unwrap_or(size)) <= open * i128::from(size)
            }
            _ => true,
        }
    }
}

/// What a guest link's live unfinished uploads hold (those neither finished, deleted nor expired).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct UnfinishedUploads {
    /// Unfinished uploads that will become a file each (partial uploads are not counted).
    pub uploads: i64,
    /// The declared lengths of all of them, partial ones included.
    pub declared_bytes: i64,
    /// How many were created without a length (Upload-Defer-Length).
    pub undeclared: i64,
}

/// The upload a guest is creating, as the link's limits see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NewUnfinished {
    pub length: Option<i64>,
    pub is_partial: bool,
    pub is_final: bool,
}
