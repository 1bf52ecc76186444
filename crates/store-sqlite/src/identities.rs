//! Single sign-on identities linked to accounts, by (issuer, subject) only.

use super::store::Store;

blobdrop_store_core::identity_methods! {
    find: ["SELECT account_id FROM oidc_identities WHERE issuer = ? AND subject = ?"],
    of_account: [
        "SELECT issuer, subject, account_id, linked_at FROM oidc_identities WHERE account_id = ? \
         ORDER BY linked_at, issuer, subject"
    ],
    accounts: ["SELECT DISTINCT account_id FROM oidc_identities ORDER BY account_id"],
    insert: [
        "INSERT INTO oidc_identities (issuer, subject, account_id, linked_at) VALUES (?, ?, ?, ?) \
         ON CONFLICT (issuer, subject) DO NOTHING"
    ],
    delete: ["DELETE FROM oidc_identities WHERE issuer = ? AND subject = ? AND account_id = ?"],
}
