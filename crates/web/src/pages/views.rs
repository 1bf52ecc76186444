//! Askama page structs, one per template in `templates/`, and the small formatting helpers they use.

use askama::Template;

use crate::domain::{date_time, relative_time, rfc3339};
use crate::pages::charts::{DailyChart, LargeFile, StorageBar};

/// What the base layout needs on every page.
pub struct Layout {
    pub title: String,
    /// Empty when nobody is signed in; then the navigation is not shown.
    pub csrf_token: String,
    /// An admin is signed in: the navigation shows every page, not only the account's own.
    pub admin: bool,
}

impl Layout {
    /// The layout of a page anyone may see (a link's, an error's, signing in): no navigation, no
    /// CSRF token.
    pub fn for_stranger(title: &str) -> Self {
        Layout { title: title.to_owned(), csrf_token: String::new(), admin: false }
    }

    pub fn signed_in(&self) -> bool {
        !self.csrf_token.is_empty()
    }

    /// Part of the static files' URLs, so an upgrade never runs old scripts against new pages
    /// (they are cached for an hour).
    pub fn asset_version(&self) -> &'static str {
        env!("CARGO_PKG_VERSION")
    }
}

#[derive(Template)]
#[template(path = "home.html")]
pub struct HomePage<'a> {
    pub layout: Layout,
    pub base_url: &'a str,
    pub version: &'a str,
}

#[derive(Template)]
#[template(path = "login.html")]
pub struct LoginPage {
    pub layout: Layout,
    pub wrong_secret: bool,
    pub signed_out: bool,
    /// The provider's name on "Sign in with NAME", when single sign-on is set.
    pub single_sign_on: Option<String>,
    /// The secret's form (hidden by `BLOBDROP_OIDC_ONLY`).
    pub secret_form: bool,
}

#[derive(Template)]
#[template(path = "password.html")]
pub struct PasswordPage {
    pub layout: Layout,
    pub wrong_password: bool,
}

/// The page that opens an age-encrypted file in the browser (`/e/{id}`); the key stays in the
/// link's fragment, which no request carries.
#[derive(Template)]
#[template(path = "encrypted.html")]
pub struct EncryptedPage {
    pub layout: Layout,
    pub id: String,
    /// The age file's size in bytes, and as people read it.
    pub size_bytes: i64,
    pub size: String,
    /// Where its ciphertext downloads from, absolute, for the `curl … | age -d` hint.
    pub download_url: String,
}

/// One option of an expiry menu.
pub struct ExpiryChoice {
    pub value: &'static str,
    pub label: &'static str,
    pub selected: bool,
}

/// The expiry menu with `default` preselected ("1", "7", "30", "365" or "never").
pub fn expiry_choices(default: &str) -> Vec<ExpiryChoice> {
    [("1", "1 day"), ("7", "7 days"), ("30", "30 days"), ("365", "1 year"), ("never", "Never")]
        .into_iter()
        .map(|(value, label)| ExpiryChoice { value, label, selected: value == default })
        .collect()
}

#[derive(Template)]
#[template(path = "upload.html")]
pub struct UploadPage {
    pub layout: Layout,
    pub expiry_choices: Vec<ExpiryChoice>,
    /// `10 GiB`, for people; empty when there is no limit.
    pub max_upload: String,
    /// The same in bytes, for the page's script to refuse a file before sending it.
    pub max_upload_bytes: String,
    /// The server takes only age-encrypted files: the page encrypts every file, with no choice.
    pub require_encryption: bool,
}

/// A time as pages show it: the relative words (`in 7 days`, see `relative_time`), with the exact
/// time in a tooltip and in `<time datetime>` for machines; `never` has neither.
#[derive(Default)]
pub struct When {
    pub text: String,
    /// RFC 3339; empty for `never`.
    pub datetime: String,
    /// `2026-11-30 14:05 UTC`.
    pub exact: String,
}

impl When {
    pub fn at(now: i64, at: i64) -> When {
        When { text: relative_time(now, at), datetime: rfc3339(at), exact: date_time(at) }
    }

    /// `never` for a time that does not come.
    pub fn or_never(now: i64, at: Option<i64>) -> When {
        at.map_or_else(|| When { text: "never".to_owned(), ..When::default() }, |at| When::at(now, at))
    }
}

/// A file as the pages show it.
pub struct FileRow {
    pub id: String,
    pub name: String,
    pub url: String,
    pub size: String,
    pub size_bytes: i64,
    pub content_type: String,
    pub sha256: String,
    pub note: String,
    pub created: String,
    pub expires: When,
    /// `YYYY-MM-DD` for a date input; empty when the file never expires.
    pub expires_date: String,
    pub downloads: i64,
    pub max_downloads: String,
    /// Label of the guest link the file came through; empty for the owner's own uploads.
    pub guest_label: String,
    pub password_protected: bool,
    /// `/files/{id}/thumbnail` serves a small picture of it (`domain::has_thumbnail`).
    pub thumbnail: bool,
    /// What the grid shows where a file has no thumbnail: its name's extension, or its type's.
    pub kind: String,
}

/// A sortable column header of the files page.
pub struct SortHeader {
    pub label: &'static str,
    pub href: String,
    /// `ascending`, `descending` or `none`, for `aria-sort`.
    pub aria_sort: &'static str,
}

#[derive(Template)]
#[template(path = "files.html")]
pub struct FilesPage {
    pub layout: Layout,
    pub rows: Vec<FileRow>,
    pub headers: Vec<SortHeader>,
    pub filter: String,
    pub total: i64,
    pub page: i64,
    pub pages: i64,
    pub prev_href: Option<String>,
    pub next_href: Option<String>,
    /// The newest shares, above the files.
    pub shares: Vec<ShareListRow>,
    /// There are older shares than these (`GET /api/shares` lists them all).
    pub more_shares: bool,
    /// The files as a grid of thumbnails rather than a table (`?view=grid`).
    pub grid: bool,
    /// The same page as a list and as a grid.
    pub list_href: String,
    pub grid_href: String,
}

/// A share as the files page lists it.
pub struct ShareListRow {
    pub id: String,
    pub name: String,
    pub url: String,
    pub file_count: i64,
    pub total_size: String,
    pub downloads: i64,
    pub max_downloads: String,
    pub expires: When,
    pub password_protected: bool,
    /// Only age-encrypted files may be in it.
    pub require_encryption: bool,
}

/// Bytes of a text file shown in its file page's preview.
pub const TEXT_PREVIEW: usize = 64 * 1024;

/// How the file page (and a share's page) previews a file.
pub enum Preview {
    Image,
    Audio,
    Video,
    Pdf,
    /// The first 64 KiB, decoded lossily; askama escapes it.
    Text {
        text: String,
        truncated: bool,
    },
    None,
}

impl Preview {
    /// What a page can show of `file` in place; text from its first `text_bytes` only.
    pub async fn of(
        ctx: &crate::services::Context,
        file: &crate::domain::FileRecord,
        text_bytes: usize,
    ) -> Result<Preview, crate::error::AppError> {
        let kind = file.content_type.as_str();
        if let Some(media) = Preview::media(kind) {
            return Ok(media);
        }
        Ok(match kind {
            _ if kind.starts_with("text/") || kind == "application/json" => {
                let bytes = crate::services::files::first_bytes(ctx, file, text_bytes).await?;
                Preview::Text {
                    truncated: file.file_size as usize > bytes.len(),
                    text: String::from_utf8_lossy(&bytes).into_owned(),
                }
            }
            _ => Preview::None,
        })
    }
}

impl Preview {
    /// The preview a page embeds from a preview link (image, audio, video, PDF), if `kind` has one.
    fn media(kind: &str) -> Option<Preview> {
        match kind {
            "image/svg+xml" => None, // never rendered in the app's origin
            _ if kind.starts_with("image/") => Some(Preview::Image),
            _ if kind.starts_with("audio/") => Some(Preview::Audio),
            _ if kind.starts_with("video/") => Some(Preview::Video),
            "application/pdf" => Some(Preview::Pdf),
            _ => None,
        }
    }

    /// Whether a page embeds a file of type `kind` from its preview link: the only types a
    /// preview route may send.
    pub fn embeds_media(kind: &str) -> bool {
        Preview::media(kind).is_some()
    }
}

pub struct HistoryRow {
    pub at: String,
    pub client_ip: String,
    pub user_agent: String,
}

#[derive(Template)]
#[template(path = "file.html")]
pub struct FilePage {
    pub layout: Layout,
    pub file: FileRow,
    pub preview: Preview,
    pub history: Vec<HistoryRow>,
}

#[derive(Template)]
#[template(path = "settings.html")]
pub struct SettingsPage {
    pub layout: Layout,
    pub expiry_choices: Vec<ExpiryChoice>,
    pub saved: bool,
    pub webhooks: Vec<WebhookView>,
    /// Every event a webhook may want, for the add form's checkboxes.
    pub webhook_events: Vec<&'static str>,
    /// Single sign-on's section, when it is set.
    pub single_sign_on: Option<SingleSignOnView>,
}

/// The settings page's single sign-on: the provider and what its sign-ins may do here.
pub struct SingleSignOnView {
    pub name: String,
    /// `BLOBDROP_OIDC_SIGN_UP`, in words.
    pub sign_up: &'static str,
    /// The admin groups and the allowed groups, comma-separated (empty: none).
    pub admin_groups: String,
    pub allowed_groups: String,
}

/// One's own account page's single sign-on: the identities linked to it, and linking another.
pub struct AccountSingleSignOnView {
    pub name: String,
    pub identities: Vec<LinkedIdentityView>,
    /// What the last link or unlink did (the redirect's query says).
    pub notice: Option<&'static str>,
}

/// An identity linked to one's own account.
pub struct LinkedIdentityView {
    pub issuer: String,
    pub subject: String,
    pub linked_at: String,
}

/// A webhook as the settings page lists it, with its latest deliveries.
pub struct WebhookView {
    pub id: i64,
    pub url: String,
    pub format: &'static str,
    pub events: String,
    pub deliveries: Vec<DeliveryView>,
}

/// One delivery in a webhook's list: `status` is pending, delivered or failed.
pub struct DeliveryView {
    pub event: String,
    pub status: &'static str,
    pub at: String,
    pub attempts: i64,
    /// The receiver's last answer or why there was none.
    pub detail: String,
}

/// An API token as the tokens page lists it.
pub struct TokenRow {
    pub id: i64,
    pub label: String,
    pub created: String,
    pub last_used: When,
    /// Its scopes, as the API names them (`read upload`).
    pub scopes: String,
    /// Its uploads must be age files.
    pub require_encryption: bool,
}

/// A token just created, shown once, with what ShareX and Flameshot need to use it.
pub struct NewTokenView {
    pub label: String,
    pub token: String,
    /// The `.sxcu` file as a `data:` link: the token is never stored, so no URL could serve it later.
    pub sharex_href: String,
    pub flameshot: String,
}

#[derive(Template)]
#[template(path = "account.html")]
pub struct AccountPage {
    pub layout: Layout,
    pub name: String,
    pub role: &'static str,
    /// The owner signs in with the secret: no password form.
    pub owner: bool,
    /// An account made by a single sign-on has none to change: no password form either.
    pub has_password: bool,
    pub changed: bool,
    pub error: Option<String>,
    pub min_password_chars: usize,
    /// Its finished files, and what they take.
    pub files: i64,
    pub size: String,
    pub quota: QuotaView,
    /// Single sign-on's section, when it is set.
    pub single_sign_on: Option<AccountSingleSignOnView>,
}

#[derive(Template)]
#[template(path = "invite.html")]
pub struct InvitePage {
    pub layout: Layout,
    pub name: String,
    /// Where the form posts: the link itself.
    pub action: String,
    pub error: Option<String>,
    pub min_password_chars: usize,
}

/// One account on the admin's accounts page.
pub struct AccountRow {
    pub quota: QuotaView,
    /// What the quota form shows: the account's own limits (empty: the default).
    pub own_bytes: String,
    pub own_files: String,
    pub id: i64,
    pub name: String,
    pub role: &'static str,
    /// `active`, `invited` (no password yet) or `disabled`.
    pub state: &'static str,
    pub disabled: bool,
    pub owner: bool,
    pub created: String,
    /// Its finished files, and what they take ("3 files, 1.2 MiB").
    pub files: i64,
    pub size: String,
}

/// An invite link just made, shown once.
pub struct InviteView {
    pub name: String,
    pub url: String,
    pub expires: String,
}

#[derive(Template)]
#[template(path = "accounts.html")]
pub struct AccountsPage {
    pub layout: Layout,
    pub accounts: Vec<AccountRow>,
    pub invite: Option<InviteView>,
    pub invite_days: i64,
}

#[derive(Template)]
#[template(path = "tokens.html")]
pub struct TokensPage {
    pub layout: Layout,
    pub tokens: Vec<TokenRow>,
    pub new_token: Option<NewTokenView>,
}

#[derive(Template)]
#[template(path = "system.html")]
pub struct SystemPage {
    pub layout: Layout,
    pub storage: StorageBar,
    /// `(id, heading, chart)`: files per day, then bytes per day.
    pub charts: Vec<(&'static str, &'static str, DailyChart)>,
    /// The same figures as a table: day, uploads, bytes uploaded, downloads, bytes downloaded.
    pub days: Vec<(String, i64, String, i64, String)>,
    pub largest: Vec<LargeFile>,
    pub database_size: String,
    pub free_disk: String,
    pub files: i64,
    pub stored: String,
    /// Resumable uploads not finished yet, and what they hold so far.
    pub unfinished_uploads: i64,
    pub unfinished_upload_bytes: String,
    pub version: &'static str,
}

/// A guest link as the pages show it.
#[derive(Default)]
pub struct GuestLinkRow {
    pub id: String,
    pub label: String,
    pub url: String,
    /// `active`, `disabled`, `expired` or `used up`.
    pub status: &'static str,
    pub disabled: bool,
    pub created: String,
    pub expires: When,
    /// `YYYY-MM-DD` for a date input; empty when the link never expires.
    pub expires_date: String,
    /// `2 of 5`, or `2` without a maximum.
    pub uploads: String,
    pub max_uploads: String,
    /// `10 MiB`; empty when only the server's limit applies.
    pub max_file_size: String,
    /// The same for the edit form's input, exact.
    pub max_file_size_input: String,
    pub file_lifetime_days: String,
    /// Each guest's batch becomes one share.
    pub share_batches: bool,
    /// Only age-encrypted files are taken.
    pub require_encryption: bool,
}

#[derive(Template)]
#[template(path = "guest_links.html")]
pub struct GuestLinksPage {
    pub layout: Layout,
    pub links: Vec<GuestLinkRow>,
    /// The create form's (empty) values.
    pub blank: GuestLinkRow,
    pub max_lifetime_days: u32,
}

#[derive(Template)]
#[template(path = "guest_link.html")]
pub struct GuestLinkPage {
    pub layout: Layout,
    pub link: GuestLinkRow,
    pub max_lifetime_days: u32,
}

/// The page a guest uploads on: the owner's upload list and progress, without the owner's options.
#[derive(Template)]
#[template(path = "guest_upload.html")]
pub struct GuestUploadPage {
    pub layout: Layout,
    /// `/g/{id}/`: each file is PUT to this plus its name.
    pub upload_to: String,
    /// Each batch of files becomes one share: the page asks for its link once they are in.
    pub share_batches: bool,
    /// Only age-encrypted files are taken: the page encrypts every file, with no choice.
    pub require_encryption: bool,
    /// `10 MiB`, for people; empty when there is no limit.
    pub max_upload: String,
    /// The same in bytes, for the page's script.
    pub max_upload_bytes: String,
    /// `7 days`; empty when the files do not expire.
    pub file_lifetime: String,
    /// Uploads the link still takes; empty when unlimited.
    pub uploads_left: String,
}

#[derive(Template)]
#[template(path = "error.html")]
pub struct ErrorPage {
    pub layout: Layout,
    pub status: u16,
    pub reason: String,
    pub message: String,
}

/// A deletion link opened in a browser: a button that deletes (`deleted` false), or the answer.
#[derive(Template)]
#[template(path = "delete_link.html")]
pub struct DeleteLinkPage {
    pub layout: Layout,
    pub deleted: bool,
}

/// An account's quota as the pages show it: a line of text, and a bar for each limit it has.
#[derive(Debug)]
pub struct QuotaView {
    /// "no limit", or "1.2 MiB of 10.0 MiB, 3 of 100 files".
    pub text: String,
    pub bars: Vec<QuotaBar>,
}

/// One limit's bar (a `<meter>`): what is used of it.
#[derive(Debug)]
pub struct QuotaBar {
    /// `bytes` or `files`: the meter's class.
    pub kind: &'static str,
    pub value: i64,
    pub max: i64,
}

impl QuotaView {
    pub fn of(quota: crate::domain::Quota, used: crate::domain::AccountUse) -> Self {
        let mut parts = Vec::new();
        let mut bars = Vec::new();
        if let Some(max) = quota.bytes {
            parts.push(format!("{} of {}", crate::domain::human_size(used.bytes), crate::domain::human_size(max)));
            bars.push(QuotaBar { kind: "bytes", value: used.bytes.min(max), max });
        }
        if let Some(max) = quota.files {
            parts.push(format!("{} of {max} files", used.files));
            bars.push(QuotaBar { kind: "files", value: used.files.min(max), max });
        }
        let text = if parts.is_empty() { "no limit".to_owned() } else { parts.join(", ") };
        QuotaView { text, bars }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_expiry_is_preselected() {
        let choices = expiry_choices("30");
        assert_eq!(choices.iter().filter(|c| c.selected).map(|c| c.value).collect::<Vec<_>>(), ["30"]);
    }

    #[test]
    fn a_quota_reads_as_its_use_of_each_limit_and_its_bars_never_overflow() {
        use crate::domain::{AccountUse, Quota};
        let used = AccountUse { bytes: 3 << 20, files: 12 };
        assert_eq!(QuotaView::of(Quota::NONE, used).text, "no limit");
        assert!(QuotaView::of(Quota::NONE, used).bars.is_empty());
        let view = QuotaView::of(Quota { bytes: Some(2 << 20), files: Some(100) }, used);
        assert_eq!(view.text, "3.0 MiB of 2.0 MiB, 12 of 100 files");
        assert_eq!((view.bars[0].kind, view.bars[0].value, view.bars[0].max), ("bytes", 2 << 20, 2 << 20));
        assert_eq!((view.bars[1].kind, view.bars[1].value, view.bars[1].max), ("files", 12, 100));
    }
}
