//! An API token as the store keeps it (its hash stays in the store).

/// A token as the tokens page and `GET /api/tokens` show it. Times are unix seconds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiTokenRecord {
    pub id: super::ApiTokenId,
    pub label: String,
    pub created_at: i64,
    pub last_used_at: Option<i64>,
}
