//! `GET /api/bundle?ids=ID1,ID2` (one SQLite Archive of those files, with ranges) and
//! `POST /api/bundle` (import such a file): the owner's bundles.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use actix_web::body::SizedStream;
use actix_web::http::StatusCode;
use actix_web::http::header::{self, EntityTag, Header, IfNoneMatch};
use actix_web::{HttpRequest, HttpResponse, web};
use bytes::Bytes;
use futures_util::StreamExt;
use serde::Deserialize;

use crate::body::{client_hung_up, content_length, payload_error, refuse};
use crate::domain::{ByteRange, FileId, RangeRequest};
use crate::domain::{FileRecord, Reach};
use crate::error::AppError;
use crate::files::listing_format::SQLITE_TYPE;
use crate::files::upload::{interrupted, uploaded};
use crate::owner::{Owner, authenticate, uploader_of};
use crate::serve::if_range_holds;
use crate::services::bundles::{self, BuildError, ImportError, MAX_BUNDLE_IDS, Requested, SQLAR_MAX_FILE};
use crate::services::uploads::StoredFile;
use crate::state::AppState;

/// Bytes read from the bundle file per piece of the answer.
const SEND_PIECE: u64 = 256 * 1024;

#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub struct BundleQuery {
    /// File ids, comma-separated (at most 1000).
    #[serde(default)]
    #[param(required = true, pattern = "^[A-Za-z0-9_-]{21}[AQgw](,[A-Za-z0-9_-]{21}[AQgw]){0,999}$")]
    ids: String,
}

#[utoipa::path(get, path = "/api/bundle", operation_id = "downloadBundle", tag = "files", params(BundleQuery),
    responses((status = 200, description = "the files as one SQLite Archive (application/vnd.sqlite3); Range and ETag", content_type = "application/vnd.sqlite3", body = String), (status = 400, description = "no or too many ids"), (status = 401, description = "no or wrong credentials"), (status = 404, description = "no such id")))]
pub async fn download_bundle(
    owner: Owner,
    req: HttpRequest,
    query: web::Query<BundleQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let reach = owner.actor().reach();
    let files = requested_files(&state, reach, &query.ids).await?;
    let shares = bundles::shares_of(&state.ctx, reach, &files).await?;
    let etag = EntityTag::new_strong(bundles::etag(&files, &shares));
    if matches!(IfNoneMatch::parse(&req), Ok(IfNoneMatch::Items(tags)) if tags.iter().any(|tag| tag.weak_eq(&etag))) {
        return Ok(HttpResponse::NotModified().insert_header(header::ETag(etag)).finish());
    }
    let bundle = bundles::build(&state.ctx, files, shares, &state.db_folder, SQLAR_MAX_FILE).await.map_err(
        |error| match error {
            BuildError::Store(store) => AppError::from(store),
            BuildError::Io(io) => disk_error(io),
            other => AppError::internal(other),
        },
    )?;
    let size = bundle.len;
    let range_header = req.headers().get(header::RANGE).and_then(|v| v.to_str().ok());
    let requested =
        if if_range_holds(&req, &etag, None) { RangeRequest::parse(range_header, size) } else { RangeRequest::Whole };
    let (status, range) = match requested {
        RangeRequest::Whole => (StatusCode::OK, ByteRange::whole(size)),
        RangeRequest::Partial(range) => (StatusCode::PARTIAL_CONTENT, Some(range)),
        RangeRequest::Unsatisfiable => return Err(AppError::RangeNotSatisfiable { file_size: size }),
    };
    let mut response = HttpResponse::build(status);
    response
        .content_type(SQLITE_TYPE)
        .insert_header(header::ETag(etag))
        .insert_header((header::ACCEPT_RANGES, "bytes"))
        .insert_header((header::CONTENT_DISPOSITION, "attachment; filename=\"bundle.sqlite\""));
    if let (StatusCode::PARTIAL_CONTENT, Some(r)) = (status, range) {
        response.insert_header((header::CONTENT_RANGE, format!("bytes {}-{}/{size}", r.first, r.last)));
    }
    let Some(range) = range else {
        return Ok(response.body(SizedStream::new(0, futures_util::stream::empty::<Result<Bytes, AppError>>())));
    };
    Ok(response.body(SizedStream::new(range.byte_count(), read_range(Arc::new(bundle.file), range).boxed_local())))
}

/// The visible files `ids` names, in its order, each once. 404 if one is not there.
async fn requested_files(state: &AppState, reach: Reach, ids: &str) -> Result<Vec<FileRecord>, AppError> {
    let names: Vec<&str> = ids.split(',').map(str::trim).filter(|id| !id.is_empty()).collect();
    if names.is_empty() {
        return Err(AppError::BadRequest("name the files: /api/bundle?ids=ID1,ID2".into()));
    }
    let ids = names.iter().map(|name| FileId::parse(name).ok_or(AppError::NotFound)).collect::<Result<Vec<_>, _>>()?;
    match bundles::find_files(&state.ctx, reach, &ids).await? {
        Requested::Files(files) => Ok(files),
        Requested::TooMany => Err(AppError::BadRequest(format!("a bundle holds at most {MAX_BUNDLE_IDS} files"))),
        Requested::Missing => Err(AppError::NotFound),
    }
}

/// `range` of the bundle file, a piece at a time off the async threads.
fn read_range(
    file: Arc<std::fs::File>,
    range: ByteRange,
) -> impl futures_util::Stream<Item = Result<Bytes, AppError>> + 'static {
    futures_util::stream::try_unfold(range.first, move |at| {
        let file = file.clone();
        async move {
            if at > range.last {
                return Ok(None);
            }
            let len = (range.last + 1 - at).min(SEND_PIECE);
            let read = tokio::task::spawn_blocking(move || {
                let mut piece = vec![0; len as usize];
                file.read_exact_at(&mut piece, at).map(|()| piece)
            });
            let piece = read.await.map_err(AppError::internal)?.map_err(AppError::internal)?;
            Ok(Some((Bytes::from(piece), at + len)))
        }
    })
}

/// `POST /api/bundle`: the body is a bundle; its files are imported all together or not at all.
/// A bundle file's bytes, as the document states them (`format: binary`).
struct BundleFile;

impl utoipa::PartialSchema for BundleFile {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::Schema> {
        use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Binary)))
            .into()
    }
}

impl utoipa::ToSchema for BundleFile {}

#[utoipa::path(post, path = "/api/bundle", operation_id = "importBundle", tag = "files",
    request_body(content = BundleFile, content_type = "application/vnd.sqlite3", description = "a bundle from GET /api/bundle"),
    responses((status = 201, description = "one download link per line (JSON with `Accept: application/json`)", body = String, content_type = "text/plain"), (status = 400, description = "a bad body, with a one-line reason"), (status = 401, description = "no or wrong credentials"), (status = 413, description = "larger than BLOBDROP_MAX_UPLOAD")))]
pub async fn upload_bundle(req: HttpRequest, mut body: web::Payload, state: web::Data<AppState>) -> HttpResponse {
    let imported = async {
        let uploader = uploader_of(&state, &authenticate(&req, &state).await?);
        let expected = content_length(req.headers());
        uploader.check_declared(expected)?;
        // The bundle is an untrusted SQLite file: it is kept whole in a private file and opened there.
        let scratch = tempfile::Builder::new().prefix(".import-").tempdir_in(&state.db_folder).map_err(disk_error)?;
        let path = scratch.path().join("bundle.sqlite");
        let file = Arc::new(std::fs::File::create(&path).map_err(disk_error)?);
        let mut received = 0u64;
        while let Some(piece) = body.next().await {
            let piece = piece.map_err(payload_error)?;
            if let Some(limit) = uploader.max_size().filter(|limit| received + piece.len() as u64 > limit.as_u64()) {
                return Err(AppError::TooLarge(limit));
            }
            let (file, at) = (file.clone(), received);
            received += piece.len() as u64;
            let written = tokio::task::spawn_blocking(move || file.write_all_at(&piece, at)).await;
            written.map_err(AppError::internal)?.map_err(disk_error)?;
        }
        drop(file);
        match expected {
            Some(expected) if received != expected => return Err(interrupted()),
            None if client_hung_up(&req) => return Err(interrupted()),
            _ => {}
        }
        let imported = bundles::import_visible(
            &state.ctx,
            &path,
            uploader.account(),
            uploader.max_size(),
            uploader.requires_encryption(),
        )
        .await
        .map_err(import_error)?;
        Ok(imported
            .into_iter()
            .map(|(record, deletion_token)| StoredFile { record, deletion_token, folder: Default::default() })
            .collect::<Vec<_>>())
    }
    .await;
    match imported {
        Ok(files) => uploaded(&req, &state, &files, true),
        Err(error) => refuse(error, &mut body).await,
    }
}

/// A refused bundle is the client's fault (400, 413); a failing server is not.
fn import_error(error: ImportError) -> AppError {
    if let Some(reason) = error.refusal() {
        return AppError::BadRequest(reason);
    }
    match error {
        ImportError::Upload(upload) => upload.into(),
        other => AppError::internal(other),
    }
}

/// A full disk is 507 like a full database; any other failure to write a temporary file is ours.
fn disk_error(error: std::io::Error) -> AppError {
    if error.kind() == std::io::ErrorKind::StorageFull { AppError::StorageFull } else { AppError::internal(error) }
}
