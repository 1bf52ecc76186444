//! What a guest may do with a guest link, and nothing more: upload at `/g/{id}` (PUT with a name,
//! or a multipart POST). The link id opens no listing, metadata or delete of any file.

use actix_web::{HttpRequest, HttpResponse, web};

use crate::routes::body::refuse;
use crate::routes::error::AppError;
use crate::routes::files::upload::{receive_form, receive_put};
use crate::routes::state::AppState;

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
