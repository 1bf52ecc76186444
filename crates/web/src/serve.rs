//! The one answer with stored bytes, for every route that sends some (a file's link, a preview, a
//! share's member and archives, a bundle): versions and conditional requests, Range and If-Range,
//! the headers that sandbox user content, and a file's count by the rule of `services::downloads`.

use std::time::{Duration, SystemTime};

use actix_web::body::SizedStream;
use actix_web::http::header::{
    self, Charset, ContentDisposition, DispositionParam, DispositionType, EntityTag, ExtendedValue, Header,
    IfModifiedSince, IfNoneMatch, IfRange,
};
use actix_web::http::{Method, StatusCode};
use actix_web::{HttpRequest, HttpResponse};
use futures_util::StreamExt;
use serde::Deserialize;

use crate::domain::FileRecord;
use crate::domain::{ByteRange, RangeRequest};
use crate::error::AppError;
use crate::services::auth::download_grants::{DOWNLOAD_GRANT_LIFETIME_SECS, DownloadGrants, GRANT_HEADER, Granted};
use crate::services::downloads::{self, Audience, Counted, Downloader, Sending, stream_range};
use crate::services::thumbnails;
use crate::state::AppState;

/// Types a browser may show in place. Everything else (HTML, SVG, XML, JavaScript, ...) is sent as
/// an attachment, and every download is sandboxed anyway.
const INLINE_TYPES: &[&str] = &[
    "image/png",
    "image/jpeg",
    "image/gif",
    "image/webp",
    "image/avif",
    "image/bmp",
    "application/pdf",
    "text/plain",
    "text/csv",
    "application/json",
];

#[derive(Debug, Deserialize)]
pub struct DownloadQuery {
    #[serde(default)]
    download: Option<String>,
}

impl DownloadQuery {
    /// `?download`, `?download=1` or any value but `0` and `false` asks for a file to save.
    pub(crate) fn forces_attachment(&self) -> bool {
        self.download.as_deref().is_some_and(|value| !matches!(value, "0" | "false"))
    }
}

/// The one answer with a file's bytes to `audience`: conditional requests, Range and If-Range, the
/// headers that sandbox it, and the count (a visitor's against the file, one through a share
/// against the share; a preview never counts).
pub(crate) async fn send_file(
    req: &HttpRequest,
    state: &AppState,
    mut file: FileRecord,
    query: &DownloadQuery,
    audience: Audience<'_>,
) -> Result<HttpResponse, AppError> {
    let version =
        Version { etag: EntityTag::new_strong(file.sha256.clone()), last_modified: modified_time(&file), dated: true };
    let size = file.file_size as u64;
    let (status, range) = match version.conditional_range(req, size)? {
        Conditional::NotModified(answer) => return Ok(answer),
        Conditional::Send { status, range } => (status, range),
    };

    // Grants matter only under a download limit (without one, later ranges never count).
    let grants = DownloadGrants::new(&state.grant_key);
    let (share, limited) = match audience {
        Audience::Share(share) => (Some(share.id.clone()), share.max_downloads.is_some()),
        Audience::Visitor => (None, file.max_downloads.is_some()),
        Audience::Owner => (None, false),
    };
    let mut sending = sending(req, range);
    sending.granted = limited
        && sending.first_byte > 0
        && req.headers().get(GRANT_HEADER).and_then(|value| value.to_str().ok()).is_some_and(|grant| {
            grants.check(grant, Granted { file: &file, share: share.as_ref() }, state.ctx.now().secs())
        });
    let mut grant = None;
    match downloads::count(&state.ctx, &mut file, audience, sending, &downloader(req, state)).await? {
        Counted::Yes => {
            state.metrics.downloads.inc();
            if limited {
                let expires_at = state.ctx.now() + DOWNLOAD_GRANT_LIFETIME_SECS;
                grant = Some(grants.issue(Granted { file: &file, share: share.as_ref() }, expires_at.secs()));
            }
        }
        Counted::No => {}
        Counted::UsedUp => {
            return Err(match audience {
                Audience::Share(_) => AppError::Unknown("share"),
                Audience::Visitor | Audience::Owner => AppError::NotFound,
            });
        }
    }
    // Only the browser that proved a password, or the owner, may keep these bytes: never a shared
    // cache. Nor one that holds a grant, which is that browser's alone.
    let private = grant.is_some()
        || match audience {
            Audience::Owner => true,
            Audience::Share(share) => share.password_protected || file.password_protected,
            Audience::Visitor => file.password_protected,
        };

    let mut response = HttpResponse::build(status);
    response
        .insert_header((header::CONTENT_TYPE, file.content_type.as_str()))
        .insert_header(content_disposition(&file, query.forces_attachment()));
    if let Some(grant) = grant {
        response.insert_header((GRANT_HEADER, grant));
    }
    let ctx = state.ctx.clone();
    Ok(version.send(req, state, response, (status, range), size, private, |range| stream_range(&ctx, &file, range)))
}

/// The version of what a download sends, for conditional requests: its strong tag and date.
pub(crate) struct Version {
    pub etag: EntityTag,
    pub last_modified: SystemTime,
    /// Whether the date names exactly one version; if not (a share's zip, whose set of files can
    /// change without a new date), If-Range holds by tag only.
    pub dated: bool,
}

/// What the conditional headers decided.
pub(crate) enum Conditional {
    /// 304: the client holds this version.
    NotModified(HttpResponse),
    /// 200 with everything, or 206 with `range` (`None`: an empty entity).
    Send { status: StatusCode, range: Option<ByteRange> },
}

impl Version {
    /// If-None-Match and If-Modified-Since, then Range under If-Range, for `size` bytes; 416 when
    /// the range starts past the end.
    pub(crate) fn conditional_range(&self, req: &HttpRequest, size: u64) -> Result<Conditional, AppError> {
        if is_not_modified(req, &self.etag, self.last_modified) {
            return Ok(Conditional::NotModified(
                HttpResponse::NotModified()
                    .insert_header(header::ETag(self.etag.clone()))
                    .insert_header(header::LastModified(self.last_modified.into()))
                    .finish(),
            ));
        }
        let range_header = req.headers().get(header::RANGE).and_then(|v| v.to_str().ok());
        let requested = if if_range_holds(req, &self.etag, self.dated.then_some(self.last_modified)) {
            RangeRequest::parse(range_header, size)
        } else {
            RangeRequest::Whole
        };
        Ok(match requested {
            RangeRequest::Whole => Conditional::Send { status: StatusCode::OK, range: ByteRange::whole(size) },
            RangeRequest::Partial(range) => {
                Conditional::Send { status: StatusCode::PARTIAL_CONTENT, range: Some(range) }
            }
            RangeRequest::Unsatisfiable => return Err(AppError::RangeNotSatisfiable { file_size: size }),
        })
    }

    /// The answer with the bytes: this version's headers, ranges, the sandbox, a private cache
    /// when `private`, Content-Range for a 206, and for a GET the body `bytes(range)` gives,
    /// counted in the metrics. A stream that fails cuts the response off.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn send<S, E>(
        self,
        req: &HttpRequest,
        state: &AppState,
        mut response: actix_web::HttpResponseBuilder,
        (status, range): (StatusCode, Option<ByteRange>),
        size: u64,
        private: bool,
        bytes: impl FnOnce(ByteRange) -> S,
    ) -> HttpResponse
    where
        S: futures_util::Stream<Item = Result<bytes::Bytes, E>> + 'static,
        AppError: From<E>,
    {
        response
            .insert_header(header::ETag(self.etag))
            .insert_header(header::LastModified(self.last_modified.into()))
            .insert_header((header::ACCEPT_RANGES, "bytes"))
            .insert_header((header::CACHE_CONTROL, if private { "private, no-cache" } else { "no-cache" }))
            .insert_header((header::CONTENT_SECURITY_POLICY, "sandbox"))
            .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
        if let (StatusCode::PARTIAL_CONTENT, Some(r)) = (status, range) {
            response.insert_header((header::CONTENT_RANGE, format!("bytes {}-{}/{size}", r.first, r.last)));
        }
        let length = range.map_or(0, |r| r.byte_count());
        let body = match range {
            Some(range) if req.method() == Method::GET => {
                let (transfer, sent) = (state.metrics.transfer(), state.metrics.bytes_out.clone());
                bytes(range)
                    .map(move |item| {
                        let _in_progress = &transfer; // dropped with the stream, when the response ends
                        let bytes = item.map_err(|error| actix_web::Error::from(AppError::from(error)))?;
                        sent.inc_by(bytes.len() as u64);
                        Ok::<_, actix_web::Error>(bytes)
                    })
                    .boxed_local()
            }
            _ => futures_util::stream::empty().boxed_local(),
        };
        response.body(SizedStream::new(length, body))
    }
}

/// The answer with `file`'s thumbnail (`services::thumbnails`), made now if it never was: a
/// picture encoded by the server, never the uploaded bytes, so it is safe to show inline; cached
/// privately (it is the owner's, or behind a share's gate), revalidated by the file's tag. 404,
/// with the reason, for a file that gets none. Never counted.
pub(crate) async fn send_thumbnail(
    req: &HttpRequest,
    state: &AppState,
    file: &FileRecord,
) -> Result<HttpResponse, AppError> {
    let etag = EntityTag::new_strong(format!("{}-thumbnail", file.sha256));
    let (content_type, bytes) = thumbnails::thumbnail(&state.ctx, file).await?.ok_or_else(|| {
        AppError::NotFoundBecause(
            "no thumbnail: only pictures (JPEG, PNG, WebP, GIF) of at most 32 MiB, without a password or a download \
             limit, get one"
                .to_owned(),
        )
    })?;
    // Only once there is one: a conditional request gets no 304 for a thumbnail that never was.
    if is_not_modified(req, &etag, modified_time(file)) {
        return Ok(HttpResponse::NotModified().insert_header(header::ETag(etag)).finish());
    }
    let mut response = HttpResponse::Ok();
    response
        .insert_header((header::CONTENT_TYPE, content_type))
        .insert_header(header::ETag(etag))
        .insert_header((header::CACHE_CONTROL, "private, max-age=86400"))
        .insert_header((header::X_CONTENT_TYPE_OPTIONS, "nosniff"));
    Ok(response.body(bytes))
}

/// Whether a request offers a download grant (valid or not: `send_file` checks it), so that a
/// file or share whose downloads are used up is looked up for it.
pub(crate) fn offers_grant(req: &HttpRequest) -> bool {
    req.headers().contains_key(GRANT_HEADER)
}

/// What an answer that sends `range` (`None`: an empty entity) of a request sends, for the
/// download counting rule.
pub(crate) fn sending(req: &HttpRequest, range: Option<ByteRange>) -> Sending {
    Sending { get: req.method() == Method::GET, first_byte: range.map_or(0, |range| range.first), granted: false }
}

/// Who a request downloads for: its client's address (as `AppState::client_ip` decides it) and
/// User-Agent.
pub(crate) fn downloader(req: &HttpRequest, state: &AppState) -> Downloader {
    let user_agent = req.headers().get(header::USER_AGENT).and_then(|v| v.to_str().ok()).unwrap_or_default();
    Downloader { ip: state.client_ip(req).to_string(), user_agent: user_agent.to_owned() }
}

fn modified_time(file: &FileRecord) -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(file.created_at.max(0) as u64)
}

/// If-None-Match wins over If-Modified-Since (RFC 9110 13.2.2).
fn is_not_modified(req: &HttpRequest, etag: &EntityTag, last_modified: SystemTime) -> bool {
    if req.headers().contains_key(header::IF_NONE_MATCH) {
        return match IfNoneMatch::parse(req) {
            Ok(IfNoneMatch::Any) => true,
            Ok(IfNoneMatch::Items(tags)) => tags.iter().any(|tag| tag.weak_eq(etag)),
            Err(_) => false,
        };
    }
    match IfModifiedSince::parse(req) {
        Ok(IfModifiedSince(since)) => last_modified <= SystemTime::from(since),
        Err(_) => false,
    }
}

/// A Range is honoured unless If-Range names another version of the file (or bundle, which has
/// no date: a date in If-Range then names no version).
pub(crate) fn if_range_holds(req: &HttpRequest, etag: &EntityTag, last_modified: Option<SystemTime>) -> bool {
    if !req.headers().contains_key(header::IF_RANGE) {
        return true;
    }
    match IfRange::parse(req) {
        Ok(IfRange::EntityTag(tag)) => tag.strong_eq(etag),
        Ok(IfRange::Date(date)) => Some(SystemTime::from(date)) == last_modified,
        Err(_) => false,
    }
}

/// RFC 6266: `filename*` carries the exact UTF-8 name, `filename` an ASCII stand-in for old clients.
fn content_disposition(file: &FileRecord, force_attachment: bool) -> ContentDisposition {
    let inline = !force_attachment && INLINE_TYPES.contains(&file.content_type.as_str());
    let name = &file.filename;
    ContentDisposition {
        disposition: if inline { DispositionType::Inline } else { DispositionType::Attachment },
        parameters: vec![
            DispositionParam::Filename(name.ascii_fallback()),
            DispositionParam::FilenameExt(ExtendedValue {
                charset: Charset::Ext("UTF-8".into()),
                language_tag: None,
                value: name.as_str().as_bytes().to_vec(),
            }),
        ],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(filename: &str, content_type: &str) -> FileRecord {
        FileRecord {
            id: crate::domain::FileId::random(),
            filename: crate::domain::FileName::parse(filename).unwrap(),
            content_type: content_type.into(),
            file_size: 1,
            chunk_size: 32_768,
            sha256: "00".into(),
            note: None,
            created_at: 0,
            expires_at: None,
            max_downloads: None,
            download_count: 0,
            last_download_at: None,
            guest_link_id: None,
            guest_link_label: None,
            password_protected: false,
            account: crate::domain::AccountId::OWNER,
        }
    }

    #[test]
    fn quotes_and_non_ascii_names_are_encoded_not_echoed() {
        let header = content_disposition(&file("a\"b é.txt", "text/plain"), false).to_string();
        assert_eq!(header, "inline; filename=\"a_b _.txt\"; filename*=UTF-8''a%22b%20%C3%A9.txt");
    }

    #[test]
    fn active_types_are_attachments() {
        for kind in ["text/html", "image/svg+xml", "application/xml", "text/javascript"] {
            let header = content_disposition(&file("x", kind), false).to_string();
            assert!(header.starts_with("attachment;"), "{kind}: {header}");
        }
    }

    #[test]
    fn download_1_forces_an_attachment() {
        let header = content_disposition(&file("a.png", "image/png"), true).to_string();
        assert!(header.starts_with("attachment;"), "{header}");
    }

    #[test]
    fn a_stored_name_never_yields_header_breaking_bytes() {
        let header = content_disposition(&file("a\r\nX-Evil: 1", "text/plain"), false).to_string();
        assert!(!header.contains('\r') && !header.contains('\n'), "{header}");
    }

    mod properties {
        use super::*;
        use actix_web::http::header::{HeaderValue, HttpDate};
        use actix_web::test::TestRequest;
        use proptest::prelude::*;

        use crate::domain::properties::header_value;

        const SHA: &str = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";

        /// Validators as clients send them: tags (weak or not, this file's or another's), HTTP
        /// dates near the file's time, lists, stars, and any bytes.
        fn validator(modified: SystemTime) -> impl Strategy<Value = HeaderValue> {
            let tags = prop::sample::select(vec![
                format!("\"{SHA}\""),
                format!("W/\"{SHA}\""),
                "\"other\"".into(),
                "*".into(),
            ]);
            let dates = (-2..3i64).prop_map(move |shift| {
                let at = if shift < 0 {
                    modified - Duration::from_secs(1)
                } else {
                    modified + Duration::from_secs(shift as u64)
                };
                HttpDate::from(at).to_string()
            });
            prop_oneof![
                tags.prop_map(|tag| HeaderValue::from_str(&tag).unwrap()),
                dates.prop_map(|date| HeaderValue::from_str(&date).unwrap()),
                prop::collection::vec(any::<u8>(), 0..80).prop_map(|bytes| header_value(&bytes)),
                "(W/)?\"[a-f0-9]{0,4}\"(, ?\"[a-z]{0,3}\"){0,2}".prop_map(|tag| HeaderValue::from_str(&tag).unwrap()),
            ]
        }

        proptest! {
            #![proptest_config(crate::domain::properties::config())]

            /// If-Range holds only for this file's strong tag or its exact date; no value of
            /// If-Range, If-None-Match or If-Modified-Since makes the checks panic.
            #[test]
            fn if_range_holds_only_for_this_version(
                if_range in validator(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000)),
                if_none_match in prop::option::of(validator(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000))),
                if_modified_since in prop::option::of(validator(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000))),
            ) {
                let modified = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
                let etag = EntityTag::new_strong(SHA.to_owned());
                let mut request = TestRequest::default().insert_header((header::IF_RANGE, if_range.clone()));
                if let Some(value) = if_none_match {
                    request = request.insert_header((header::IF_NONE_MATCH, value));
                }
                if let Some(value) = if_modified_since {
                    request = request.insert_header((header::IF_MODIFIED_SINCE, value));
                }
                let req = request.to_http_request();
                let _ = is_not_modified(&req, &etag, modified);
                let this_version =
                    [format!("\"{SHA}\""), HttpDate::from(modified).to_string()].iter().any(|v| if_range == v.as_str());
                prop_assert_eq!(if_range_holds(&req, &etag, Some(modified)), this_version, "If-Range: {:?}", if_range);
                let tag_only = if_range == format!("\"{SHA}\"").as_str();
                prop_assert_eq!(if_range_holds(&req, &etag, None), tag_only, "without a date, If-Range: {:?}", if_range);
            }
        }
    }
}
