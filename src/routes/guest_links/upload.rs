//! What a guest may do with a guest link, and nothing more: upload at `/g/{id}` (PUT with a name,
//! or a multipart POST). The link id opens no listing, metadata or delete of any file.

use actix_web::{HttpRequest, HttpResponse, web};
use time::OffsetDateTime;

use crate::domain::{ByteSize, GuestLinkId, GuestLinkStatus};
use crate::routes::body::refuse;
use crate::routes::error::AppError;
use crate::routes::files::upload::{receive_form, receive_put};
use crate::routes::state::AppState;
use crate::store::GuestLinkRecord;

/// The link a guest path names, if it takes uploads now; else the one-line reason it does not.
pub(crate) async fn open_guest_link(state: &AppState, raw_id: &str) -> Result<GuestLinkRecord, AppError> {
    let id = GuestLinkId::parse(raw_id).ok_or(AppError::UnknownGuestLink)?;
    let link = state.store.find_guest_link(&id).await?.ok_or(AppError::UnknownGuestLink)?;
    match link.refusal(OffsetDateTime::now_utc().unix_timestamp()) {
        Some(error) => Err(error),
        None => Ok(link),
    }
}

/// The largest file a guest may send through `link`: the server's limit or the link's, whichever is smaller.
pub(crate) fn guest_size_limit(state: &AppState, link: &GuestLinkRecord) -> Option<ByteSize> {
    match (state.max_upload, link.max_file_size()) {
        (Some(server), Some(link)) => Some(server.min(link)),
        (server, link) => server.or(link),
    }
}

/// The answer a link gives when it takes no upload.
pub(crate) trait GuestLinkRefusal {
    fn refusal(&self, now: i64) -> Option<AppError>;
}

impl GuestLinkRefusal for GuestLinkRecord {
    fn refusal(&self, now: i64) -> Option<AppError> {
        let status = self.status(now);
        let reason = status.refusal()?;
        Some(match status {
            GuestLinkStatus::Disabled => AppError::Forbidden(reason),
            _ => AppError::Gone(reason),
        })
    }
}

/// `curl -T file https://host/g/{id}/` (curl appends the name) and `.../g/{id}/name.txt`.
pub async fn put_file(
    req: HttpRequest,
    payload: web::Payload,
    path: web::Path<(String, String)>,
    state: web::Data<AppState>,
) -> HttpResponse {
    let (link, filename) = path.into_inner();
    receive_put(req, payload, &filename, Some(&link), state).await
}

/// `curl -T - https://host/g/{id}/` has no name to append: say how to give one.
pub async fn put_without_name(mut payload: web::Payload) -> HttpResponse {
    let reason = "the URL needs a file name: curl -T - https://host/g/LINK/name.txt";
    refuse(AppError::BadRequest(reason.into()), &mut payload).await
}

/// `curl -F file=@x https://host/g/{id}`: every file part becomes a file, as for the owner.
pub async fn post_files(
    req: HttpRequest,
    payload: web::Payload,
    link: web::Path<String>,
    state: web::Data<AppState>,
) -> HttpResponse {
    receive_form(req, payload, Some(&link), state).await
}
