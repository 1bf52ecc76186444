//! Quotas: how many bytes and files an account may keep, what it keeps now, and why an upload
//! does not fit.

use crate::{AccountId, human_size};

/// An account's limits; `None`: no limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Quota {
    pub bytes: Option<i64>,
    pub files: Option<i64>,
}

impl Quota {
    /// No limit at all.
    pub const NONE: Quota = Quota { bytes: None, files: None };

    /// The limits that hold for `account`: its own where an admin set them, else the server's
    /// default; the owner (the secret, account 1) has none unless an admin set one.
    pub fn applying(account: AccountId, own: Quota, default: Quota) -> Quota {
        let default = if account == AccountId::OWNER { Quota::NONE } else { default };
        Quota { bytes: own.bytes.or(default.bytes), files: own.files.or(default.files) }
    }

    pub fn is_unlimited(&self) -> bool {
        self.bytes.is_none() && self.files.is_none()
    }

    /// What an upload may reserve now, that holds `needed` bytes and would like `wanted` (at least
    /// `needed`), besides `others` (the account's other files and uploads): as much of `wanted` as
    /// fits, or why not even `needed` does. The upload is one of the files it counts.
    pub fn room(&self, others: AccountUse, needed: i64, wanted: i64) -> Result<i64, OverQuota> {
        if let Some(files) = self.files
            && others.files + 1 > files
        {
            return Err(OverQuota::Files { files });
        }
        let Some(bytes) = self.bytes else { return Ok(wanted.max(needed)) };
        let left = (bytes - others.bytes).max(0);
        match needed <= left {
            true => Ok(wanted.max(needed).min(left)),
            false => Err(OverQuota::Bytes { quota: bytes, left, needed }),
        }
    }
}

/// What an account keeps: its files (their sizes) and its unfinished uploads (what each reserved).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AccountUse {
    pub bytes: i64,
    pub files: i64,
}

/// Why an upload does not fit its account's quota.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum OverQuota {
    #[error("over your quota: {left_h} of your {quota_h} is left, and this upload needs {needed_h}", left_h = human_size(*left), quota_h = human_size(*quota), needed_h = human_size(*needed))]
    Bytes { quota: i64, left: i64, needed: i64 },
    #[error("over your quota: you may keep {files} files; delete some to upload more")]
    Files { files: i64 },
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: i64 = 1 << 20;

    #[test]
    fn an_accounts_own_limits_win_and_the_owner_has_no_default() {
        let default = Quota { bytes: Some(10 * MIB), files: Some(5) };
        let own = Quota { bytes: Some(MIB), files: None };
        assert_eq!(Quota::applying(AccountId(2), own, default), Quota { bytes: Some(MIB), files: Some(5) });
        assert_eq!(Quota::applying(AccountId(2), Quota::NONE, default), default);
        assert!(Quota::applying(AccountId::OWNER, Quota::NONE, default).is_unlimited());
        assert_eq!(Quota::applying(AccountId::OWNER, own, default).bytes, Some(MIB));
    }

    #[test]
    fn room_is_what_fits_of_what_is_wanted_and_never_less_than_needed() {
        let quota = Quota { bytes: Some(10 * MIB), files: Some(3) };
        let others = AccountUse { bytes: 4 * MIB, files: 1 };
        assert_eq!(quota.room(others, MIB, 2 * MIB), Ok(2 * MIB));
        assert_eq!(quota.room(others, MIB, 8 * MIB), Ok(6 * MIB), "capped at what is left");
        assert_eq!(quota.room(others, 6 * MIB, 6 * MIB), Ok(6 * MIB), "exactly full");
        assert_eq!(
            quota.room(others, 6 * MIB + 1, 7 * MIB),
            Err(OverQuota::Bytes { quota: 10 * MIB, left: 6 * MIB, needed: 6 * MIB + 1 })
        );
        assert_eq!(quota.room(AccountUse { bytes: 0, files: 3 }, 0, 0), Err(OverQuota::Files { files: 3 }));
        assert_eq!(Quota::NONE.room(others, MIB, 8 * MIB), Ok(8 * MIB));
        let refusal = quota.room(AccountUse { bytes: 9 * MIB, files: 0 }, 2 * MIB, 2 * MIB).unwrap_err();
        assert_eq!(
            refusal.to_string(),
            "over your quota: 1.0 MiB of your 10.0 MiB is left, and this upload needs 2.0 MiB"
        );
    }
}
