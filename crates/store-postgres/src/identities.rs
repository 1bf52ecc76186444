//! Single sign-on identities linked to accounts on PostgreSQL, by (issuer, subject) only.

use super::store::Store;

blobdrop_store_core::identity_methods! {
    find: ["SELECT account_id FROM oidc_identities WHERE issuer = $1 AND subject = $2"],
    of_account: [
        "SELECT issuer, subject, account_id, linked_at FROM oidc_identities WHERE account_id = $1 \
         ORDER BY linked_at, issuer, subject"
    ],
    accounts: ["SELECT DISTINCT account_id FROM oidc_identities ORDER BY account_id"],
    insert: [
        "INSERT INTO oidc_identities (issuer, subject, account_id, linked_at) VALUES ($1, $2, $3, $4) \
         ON CONFLICT (issuer, subject) DO NOTHING"
    ],
    delete: ["DELETE FROM oidc_identities WHERE issuer = $1 AND subject = $2 AND account_id = $3"],
}
