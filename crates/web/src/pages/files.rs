//! The files page, one file's page, and the edits and deletes they post.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::domain::{FileId, FileName, FilePassword, date_input, date_time, human_size, without_nul};
use crate::domain::{FileListing, FileRecord, FileSort, PageCursor, PageStart, Reach, has_thumbnail};
use crate::error::AppError;
use crate::owner::{NoFields, Owner, OwnerForm};
use crate::pages::page::{SignedIn, end_of_day, layout, page, see_other};
use crate::pages::views::{
    FilePage, FileRow, FilesPage, HistoryRow, Preview, ShareListRow, SortHeader, TEXT_PREVIEW, When,
};
use crate::services::files::{self, FileEdit};
use crate::services::shares;
use crate::state::AppState;

const PAGE_SIZE: i64 = 50;
const HISTORY_ROWS: i64 = 100;

#[derive(Debug, Deserialize)]
pub struct ListQuery {
    #[serde(default)]
    sort: FileSort,
    dir: Option<String>,
    #[serde(default)]
    q: String,
    /// The number of the page shown: with a cursor, the page it leads to (for "Page 3 of 9");
    /// alone (links from before the cursors), which page to read by OFFSET.
    page: Option<i64>,
    /// The cursor of the file that ends the page before (Next), or starts the page after
    /// (Previous): `PageCursor::encode`.
    after: Option<String>,
    before: Option<String>,
    #[serde(default)]
    view: View,
}

/// How the files page shows the files: a table, or a grid of thumbnails.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum View {
    #[default]
    List,
    Grid,
}

impl View {
    fn as_str(self) -> &'static str {
        match self {
            View::List => "list",
            View::Grid => "grid",
        }
    }
}

impl ListQuery {
    /// Newest first by default; names read best A to Z.
    fn descending(&self) -> bool {
        match self.dir.as_deref() {
            Some("asc") => false,
            Some("desc") => true,
            _ => self.sort != FileSort::Name,
        }
    }

    /// The first page in another order.
    fn href(&self, sort: FileSort, descending: bool) -> String {
        self.href_in(self.view, sort, descending, 1, "")
    }

    /// A page of this listing: `start` is `&after=CURSOR`, `&before=CURSOR` or empty (the first).
    fn href_in(&self, view: View, sort: FileSort, descending: bool, page: i64, start: &str) -> String {
        let sort = sort.as_str();
        let dir = if descending { "desc" } else { "asc" };
        let q = percent_encoding::utf8_percent_encode(&self.q, percent_encoding::NON_ALPHANUMERIC);
        let view = view.as_str();
        format!("/files?sort={sort}&dir={dir}&q={q}&view={view}&page={page}{start}")
    }

    /// Where the page starts: after or before a cursor, else by the page number's offset.
    fn start(&self, page_number: i64) -> Result<PageStart, AppError> {
        let cursor = |raw: &str| {
            PageCursor::parse(raw, self.sort).ok_or_else(|| {
                AppError::BadRequest("this page's link is damaged: open the files page again".to_owned())
            })
        };
        match (&self.after, &self.before) {
            (Some(after), None) => Ok(PageStart::After(cursor(after)?)),
            (None, Some(before)) => Ok(PageStart::Before(cursor(before)?)),
            (Some(_), Some(_)) => {
                Err(AppError::BadRequest("a page starts after a file or before one, not both".to_owned()))
            }
            // Checked: page 2^63 - 1 wrapped to a negative offset, which PostgreSQL answered with 500.
            (None, None) => Ok(PageStart::Offset(
                (page_number - 1)
                    .checked_mul(PAGE_SIZE)
                    .ok_or_else(|| AppError::BadRequest(format!("there is no page {page_number}")))?,
            )),
        }
    }
}

pub async fn list(
    req: HttpRequest,
    SignedIn(owner): SignedIn,
    query: web::Query<ListQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let now = state.ctx.now();
    let descending = query.descending();
    let page_number = query.page.unwrap_or(1).max(1);
    let listing = FileListing {
        reach: owner.actor().reach(),
        filter: without_nul("the search", query.q.trim())?.to_owned(),
        sort: query.sort,
        descending,
        limit: PAGE_SIZE,
        start: query.start(page_number)?,
    };
    let (files, total) = files::browse(&state.ctx, &listing).await?;
    let pages = ((total + PAGE_SIZE - 1) / PAGE_SIZE).max(1);
    // Next and Previous start from the files at this page's ends, through the sort column's index.
    let cursor_of = |file: &FileRecord| PageCursor::of(file, query.sort).encode();
    let next_href = match (files.last(), page_number < pages) {
        (Some(last), true) => Some(query.href_in(
            query.view,
            query.sort,
            descending,
            page_number + 1,
            &format!("&after={}", cursor_of(last)),
        )),
        _ => None,
    };
    let prev_href = match (files.first(), page_number) {
        (_, 1) => None,
        (_, 2) | (None, _) => Some(query.href_in(query.view, query.sort, descending, 1, "")),
        (Some(first), _) => Some(query.href_in(
            query.view,
            query.sort,
            descending,
            page_number - 1,
            &format!("&before={}", cursor_of(first)),
        )),
    };
    // The same page as a list and as a grid.
    let here = match &listing.start {
        PageStart::After(cursor) => format!("&after={}", cursor.encode()),
        PageStart::Before(cursor) => format!("&before={}", cursor.encode()),
        PageStart::Offset(_) => String::new(),
    };
    let headers = [
        ("Name", FileSort::Name),
        ("Size", FileSort::Size),
        ("Uploaded", FileSort::Created),
        ("Expires", FileSort::Expires),
        ("Downloads", FileSort::Downloads),
    ]
    .into_iter()
    .map(|(label, sort)| {
        let active = sort == query.sort;
        SortHeader {
            label,
            // Clicking the active column flips its direction; another column starts at its default.
            href: query.href(sort, if active { !descending } else { sort != FileSort::Name }),
            aria_sort: match (active, descending) {
                (false, _) => "none",
                (true, true) => "descending",
                (true, false) => "ascending",
            },
        }
    })
    .collect();
    let (shares, more_shares) = share_rows(&req, &state, owner.actor().reach(), now.secs()).await?;
    page(&FilesPage {
        shares,
        more_shares,
        layout: layout("Files", &owner),
        rows: files.iter().map(|file| row(&req, &state, file, now.secs())).collect(),
        headers,
        filter: listing.filter.clone(),
        total,
        page: page_number,
        pages,
        prev_href,
        next_href,
        grid: query.view == View::Grid,
        list_href: query.href_in(View::List, query.sort, descending, page_number, &here),
        grid_href: query.href_in(View::Grid, query.sort, descending, page_number, &here),
    })
}

pub async fn show(
    req: HttpRequest,
    SignedIn(owner): SignedIn,
    id: web::Path<FileId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let file = files::find_reached(&state.ctx, owner.actor().reach(), &id).await?.ok_or(AppError::NotFound)?;
    let now = state.ctx.now();
    let preview = Preview::of(&state.ctx, &file, TEXT_PREVIEW).await?;
    let history = files::history(&state.ctx, &file.id, HISTORY_ROWS).await?;
    page(&FilePage {
        layout: layout(file.filename.as_str(), &owner),
        file: row(&req, &state, &file, now.secs()),
        preview,
        history: history
            .into_iter()
            .map(|entry| HistoryRow {
                at: date_time(entry.at),
                client_ip: entry.client_ip,
                user_agent: entry.user_agent,
            })
            .collect(),
    })
}

/// The QR code of a file's link, as SVG drawn on the server.
pub async fn qr_code(
    req: HttpRequest,
    owner: Owner,
    id: web::Path<FileId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let file = files::find_reached(&state.ctx, owner.actor().reach(), &id).await?.ok_or(AppError::NotFound)?;
    let url = state.download_url(&req, &file.id, &file.filename);
    let code = qrcode::QrCode::new(url.as_bytes()).map_err(AppError::internal)?;
    let svg = code.render::<qrcode::render::svg::Color>().min_dimensions(200, 200).quiet_zone(true).build();
    Ok(HttpResponse::Ok().content_type("image/svg+xml").body(svg))
}

#[derive(Debug, Deserialize)]
pub struct EditForm {
    filename: String,
    /// `YYYY-MM-DD`; empty means never.
    #[serde(default)]
    expires: String,
    #[serde(default)]
    note: String,
    /// A new download password; empty leaves it as it is.
    #[serde(default)]
    password: String,
    /// The "remove the password" box, sent only when ticked.
    remove_password: Option<String>,
}

pub async fn edit(
    id: web::Path<FileId>,
    form: OwnerForm<EditForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let fields = form.fields;
    let filename = FileName::parse(&fields.filename)?;
    let expires_at = match fields.expires.trim() {
        "" => None,
        day => Some(end_of_day(day)?),
    };
    let note = fields.note.trim();
    let password = match (fields.remove_password.is_some(), fields.password.is_empty()) {
        (true, _) => Some(None),
        (false, true) => None,
        (false, false) => Some(Some(FilePassword::parse(&fields.password)?)),
    };
    let edit = FileEdit {
        filename: Some(filename),
        note: Some((!note.is_empty()).then(|| note.to_owned())),
        expires_at: Some(expires_at),
        password,
    };
    files::edit(&state.ctx, form.owner.actor().reach(), &id, edit).await?.ok_or(AppError::NotFound)?;
    Ok(see_other(&format!("/files/{id}")))
}

pub async fn delete(
    id: web::Path<FileId>,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if !files::delete(&state.ctx, form.owner.actor().reach(), &id).await? {
        return Err(AppError::NotFound);
    }
    Ok(see_other("/files"))
}

/// The newest shares the files page shows above the files (the API pages through the rest).
const SHARES_SHOWN: i64 = 20;

/// The newest visible shares for the files page (`SHARES_SHOWN`, and whether there are more):
/// counts and sizes as stored, no chunk read.
async fn share_rows(
    req: &HttpRequest,
    state: &AppState,
    reach: Reach,
    now: i64,
) -> Result<(Vec<ShareListRow>, bool), AppError> {
    let mut shares = shares::list(&state.ctx, reach, SHARES_SHOWN + 1, None).await?;
    let more = shares.len() as i64 > SHARES_SHOWN;
    shares.truncate(SHARES_SHOWN as usize);
    let rows = shares
        .iter()
        .map(|share| ShareListRow {
            id: share.id.to_string(),
            name: share.name.as_str().to_owned(),
            url: state.share_url(req, &share.id),
            file_count: share.file_count,
            total_size: human_size(share.total_size),
            downloads: share.download_count,
            max_downloads: share.max_downloads.map(|n| n.to_string()).unwrap_or_default(),
            expires: When::or_never(now, share.expires_at),
            password_protected: share.password_protected,
            require_encryption: share.require_encryption,
        })
        .collect();
    Ok((rows, more))
}

fn row(req: &HttpRequest, state: &AppState, file: &FileRecord, now: i64) -> FileRow {
    FileRow {
        id: file.id.to_string(),
        name: file.filename.to_string(),
        url: state.download_url(req, &file.id, &file.filename),
        size: human_size(file.file_size),
        size_bytes: file.file_size,
        content_type: file.content_type.clone(),
        sha256: file.sha256.clone(),
        note: file.note.clone().unwrap_or_default(),
        created: date_time(file.created_at),
        expires: When::or_never(now, file.expires_at),
        expires_date: date_input(file.expires_at),
        downloads: file.download_count,
        max_downloads: file.max_downloads.map(|n| n.to_string()).unwrap_or_default(),
        guest_label: file.guest_link_label.clone().unwrap_or_default(),
        password_protected: file.password_protected,
        thumbnail: has_thumbnail(file),
        kind: kind_label(file),
    }
}

/// A short label of what a file is, for a grid tile without a picture: its name's extension
/// (`PDF`, `ZIP`), else its type's subtype, at most 5 characters.
fn kind_label(file: &FileRecord) -> String {
    let name = file.filename.as_str();
    let extension = name.rsplit_once('.').map(|(_, extension)| extension).filter(|e| !e.is_empty() && e.len() <= 5);
    let subtype = || file.content_type.split(['/', ';', '+']).nth(1).unwrap_or("file");
    extension.unwrap_or_else(subtype).chars().take(5).collect::<String>().to_uppercase()
}
