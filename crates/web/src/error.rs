//! The one error type of the HTTP layer and its exhaustive mapping to status codes.

use actix_web::http::StatusCode;
use actix_web::http::header::{self, HeaderValue};
use actix_web::{HttpResponse, ResponseError};

use crate::domain::{
    ByteSize, FileNameError, FilePasswordError, GuestLinkError, LifetimeError, NoteError, NulInText, TokenLabelError,
    UploadOptionsError,
};
use crate::services::StoreError;
use crate::services::accounts::AccountError;
use crate::services::files::EditError;
use crate::services::guest_links;
use crate::services::in_flight::{Busy, RETRY_AFTER};
use crate::services::intake::IntakeError;
use crate::services::resumable_uploads::ResumableError;
use crate::services::shares::ShareError;
use crate::services::throttling::Refused;
use crate::services::uploads::UploadError;
use crate::services::webhooks::WebhookError;

/// Seconds a client is asked to wait after a 503 for an unreachable database: PostgreSQL's crash
/// recovery and a restart take seconds.
const UNAVAILABLE_RETRY_AFTER_SECS: u64 = 5;

/// A failed request. The `Display` text is the one-line reason sent to the client; causes of
/// server errors are logged and never sent.
#[derive(thiserror::Error)]
pub enum AppError {
    #[error("{0}")]
    BadRequest(String),
    #[error("missing or wrong credentials: use curl -u :SECRET or Authorization: Bearer SECRET")]
    Unauthorized,
    /// A password-protected file asked for without its password (or with a wrong one).
    #[error("this file needs its password: curl -u :PASSWORD")]
    PasswordRequired,
    #[error("too many wrong attempts from your address; try again in {} s", .0.retry_after_secs())]
    TooManyAttempts(Refused),
    /// Too many requests of a kind that creates something (guest uploads, guest shares) from one
    /// address in a short time.
    #[error("too many requests from your address; try again in {} s", .0.retry_after_secs())]
    TooManyRequests(Refused),
    /// Too many guest uploads in flight through one link or from one address.
    #[error(transparent)]
    Busy(#[from] Busy),
    #[error("{0}")]
    Forbidden(&'static str),
    /// A page of the web interface asked for without a session: the browser goes to `/login`.
    #[error("sign in first")]
    SignInFirst,
    #[error("file not found")]
    NotFound,
    /// Something a path names that is not there: a guest link, share, webhook, API token or upload.
    #[error("no such {0}")]
    Unknown(&'static str),
    /// Something a request names that is not there, with the reason (a final upload's part).
    #[error("{0}")]
    NotFoundBecause(String),
    /// A guest link that took uploads once and takes none any more (expired, used up).
    #[error("{0}")]
    Gone(&'static str),
    /// A deletion link fetched by a script or sent a method it does not take (a GET must never
    /// delete: link previews fetch).
    #[error(
        "this is a deletion link: delete the file with curl -X DELETE followed by this URL, or open it in a browser"
    )]
    DeleteOnly,
    /// A method the path does not take (what actix answers on its own with an empty 405).
    #[error("this path does not take the {0} method")]
    WrongMethod(String),
    #[error("the upload stalled for longer than the idle timeout")]
    Timeout,
    #[error("the upload is larger than the limit of {0}")]
    TooLarge(ByteSize),
    #[error("a form may hold at most {0} files; send the rest in another form")]
    TooManyFiles(u32),
    /// The upload does not fit its account's quota; nothing of it was kept.
    #[error(transparent)]
    OverQuota(crate::domain::OverQuota),
    #[error("the requested range is outside the file")]
    RangeNotSatisfiable { file_size: u64 },
    #[error("the storage is full; delete files or raise the limit and try again")]
    StorageFull,
    /// The database cannot be reached (PostgreSQL stopped or restarting): nothing was stored.
    #[error("the database is unavailable; try again shortly")]
    Unavailable(#[source] StoreError),
    /// A resumable upload's request that does not fit where the upload stands (a wrong offset).
    #[error("{0}")]
    Conflict(String),
    /// Another request holds the resumable upload.
    #[error("{0}")]
    Locked(String),
    /// A resumable upload's bytes that do not match their `Upload-Checksum` (tus answers 460).
    #[error("{0}")]
    ChecksumMismatch(String),
    #[error("{0}")]
    UnsupportedMediaType(&'static str),
    /// Only age-encrypted files are taken, and the body is not one.
    #[error(transparent)]
    NotEncrypted(crate::domain::AgeRefusal),
    /// A file that is not an age file, for a share that requires encryption.
    #[error("{0}")]
    PlaintextMember(String),
    /// An API token used where the route needs a scope it lacks.
    #[error("this API token has the scopes \"{has}\", and this needs \"{needs}\" (or \"full\")")]
    OutOfScope { has: String, needs: &'static str },
    /// A tus request without `Tus-Resumable: 1.0.0`.
    #[error("{0}")]
    PreconditionFailed(&'static str),
    #[error("internal server error")]
    Internal(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl AppError {
    pub fn internal(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        AppError::Internal(Box::new(error))
    }
}

impl std::fmt::Debug for AppError {
    /// The whole cause chain, for logs.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")?;
        let mut source = std::error::Error::source(self);
        while let Some(cause) = source {
            write!(f, "\n  caused by: {cause}")?;
            source = cause.source();
        }
        Ok(())
    }
}

impl From<StoreError> for AppError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::StorageFull => AppError::StorageFull,
            unavailable @ StoreError::Unavailable(_) => AppError::Unavailable(unavailable),
            gone @ StoreError::PartGone { .. } => AppError::NotFoundBecause(gone.to_string()),
            moved @ StoreError::OffsetMoved { .. } => AppError::Conflict(moved.to_string()),
            other => AppError::internal(other),
        }
    }
}

impl From<UploadError> for AppError {
    fn from(error: UploadError) -> Self {
        match error {
            UploadError::TooLarge(limit) => AppError::TooLarge(limit),
            UploadError::Store(store) => store.into(),
            UploadError::NotEncrypted(refusal) => AppError::NotEncrypted(refusal),
            UploadError::OverQuota(over) => AppError::OverQuota(over),
            other => AppError::internal(other),
        }
    }
}

impl From<ResumableError> for AppError {
    fn from(error: ResumableError) -> Self {
        let reason = error.to_string();
        match error {
            ResumableError::NotFound => AppError::Unknown("upload"),
            ResumableError::Expired => AppError::Gone("this upload expired before it was finished; start a new one"),
            ResumableError::WrongOffset(_) => AppError::Conflict(reason),
            ResumableError::Busy => AppError::Locked(reason),
            ResumableError::ChecksumMismatch => AppError::ChecksumMismatch(reason),
            ResumableError::BadRequest(reason) => AppError::BadRequest(reason),
            ResumableError::Upload(upload) => upload.into(),
            ResumableError::Store(store) => store.into(),
            ResumableError::GuestLinkRefused => AppError::Gone("this guest link takes no more uploads"),
            ResumableError::GuestLinkFull => AppError::Forbidden(
                "this guest link's uploads are all taken or under way: finish or delete an unfinished one \
                 (tus DELETE), or wait until it expires",
            ),
            ResumableError::LinkClosed(refusal) => refusal.into(),
            ResumableError::Conflict(reason) => AppError::Conflict(reason),
            ResumableError::UnknownPart(_) => AppError::NotFoundBecause(reason),
            ResumableError::FinalTakesNoBytes => {
                AppError::Forbidden("a final upload takes no bytes: it is made of its partial uploads")
            }
        }
    }
}

/// Input a domain type refused: its one-line reason goes back as a 400.
macro_rules! bad_request_from {
    ($($error:ty),+ $(,)?) => {
        $(impl From<$error> for AppError {
            fn from(error: $error) -> Self {
                AppError::BadRequest(error.to_string())
            }
        })+
    };
}

bad_request_from!(
    FileNameError,
    NoteError,
    NulInText,
    FilePasswordError,
    GuestLinkError,
    LifetimeError,
    TokenLabelError,
    UploadOptionsError,
    actix_web::error::JsonPayloadError,
    actix_web::error::UrlencodedError,
    actix_web::error::QueryPayloadError,
);

impl From<EditError> for AppError {
    fn from(error: EditError) -> Self {
        match error {
            EditError::Note(error) => error.into(),
            EditError::Password(error) => AppError::internal(error),
            EditError::Store(error) => error.into(),
        }
    }
}

impl From<WebhookError> for AppError {
    fn from(error: WebhookError) -> Self {
        match error {
            WebhookError::Invalid(reason) => AppError::BadRequest(reason),
            WebhookError::Store(error) => error.into(),
        }
    }
}

impl From<guest_links::Refusal> for AppError {
    fn from(refusal: guest_links::Refusal) -> Self {
        use guest_links::Refusal;
        match refusal {
            Refusal::Unknown => AppError::Unknown("guest link"),
            Refusal::Disabled(reason) => AppError::Forbidden(reason),
            Refusal::Closed(reason) => AppError::Gone(reason),
            Refusal::TooLarge(limit) => AppError::TooLarge(limit),
            Refusal::Changed => AppError::Gone(guest_links::CHANGED),
            Refusal::Store(error) => error.into(),
        }
    }
}

impl From<ShareError> for AppError {
    fn from(error: ShareError) -> Self {
        let reason = error.to_string();
        match error {
            ShareError::Store(store) => store.into(),
            ShareError::SharedAlready => AppError::Conflict(reason),
            ShareError::Link(refusal) => refusal.into(),
            ShareError::NoBatches => AppError::Forbidden("this guest link gives a link per file, not shares"),
            ShareError::NoName | ShareError::EmptyBatch => AppError::BadRequest(reason),
            // 409, not 400: the request is well-formed; the file is not there (any more).
            ShareError::NoFile(_) => AppError::Conflict(reason),
            ShareError::NotEncrypted(_) => AppError::PlaintextMember(reason),
            ShareError::TooManyFiles(count) => AppError::TooManyFiles(count),
            ShareError::NoShare => AppError::Unknown("share"),
            ShareError::Password(_) | ShareError::FileGone(_) | ShareError::Layout(_) => AppError::internal(error),
        }
    }
}

impl From<IntakeError> for AppError {
    fn from(error: IntakeError) -> Self {
        match error {
            IntakeError::Link(refusal) => refusal.into(),
            IntakeError::Busy(busy) => AppError::Busy(busy),
            IntakeError::TooLarge(limit) => AppError::TooLarge(limit),
            IntakeError::TooManyFiles(count) => AppError::TooManyFiles(count),
        }
    }
}

impl From<AccountError> for AppError {
    fn from(error: AccountError) -> Self {
        let reason = error.to_string();
        match error {
            AccountError::NotAdmin => AppError::Forbidden("only an admin may manage accounts"),
            AccountError::Name(_) | AccountError::Password(_) => AppError::BadRequest(reason),
            // Well-formed, but the account named is not there (or is the one deleted).
            AccountError::HeirIsItself | AccountError::NoHeir => AppError::Conflict(reason),
            AccountError::NameTaken(_) => AppError::Conflict(reason),
            AccountError::Unknown => AppError::Unknown("account"),
            AccountError::Owner => AppError::Forbidden(
                "the owner signs in with the shared secret; its account has no password and cannot be disabled or reset",
            ),
            AccountError::InviteGone => {
                AppError::Gone("this invite link was used already or has expired; ask for a new one")
            }
            AccountError::WrongPassword => AppError::Forbidden("the current password is wrong"),
            AccountError::Disabled => AppError::Forbidden("this account is disabled; ask an admin to enable it"),
            AccountError::Hash(error) => AppError::internal(error),
            AccountError::Store(error) => error.into(),
        }
    }
}

impl From<Refused> for AppError {
    fn from(refused: Refused) -> Self {
        AppError::TooManyAttempts(refused)
    }
}

impl ResponseError for AppError {
    fn status_code(&self) -> StatusCode {
        match self {
            AppError::BadRequest(_) => StatusCode::BAD_REQUEST,
            AppError::Unauthorized | AppError::PasswordRequired => StatusCode::UNAUTHORIZED,
            AppError::TooManyAttempts(_) | AppError::TooManyRequests(_) | AppError::Busy(_) => {
                StatusCode::TOO_MANY_REQUESTS
            }
            AppError::Forbidden(_) | AppError::OutOfScope { .. } => StatusCode::FORBIDDEN,
            AppError::SignInFirst => StatusCode::SEE_OTHER,
            AppError::NotFound | AppError::Unknown(_) | AppError::NotFoundBecause(_) => StatusCode::NOT_FOUND,
            AppError::Gone(_) => StatusCode::GONE,
            AppError::DeleteOnly | AppError::WrongMethod(_) => StatusCode::METHOD_NOT_ALLOWED,
            AppError::Timeout => StatusCode::REQUEST_TIMEOUT,
            AppError::TooLarge(_) | AppError::TooManyFiles(_) | AppError::OverQuota(_) => StatusCode::PAYLOAD_TOO_LARGE,
            AppError::RangeNotSatisfiable { .. } => StatusCode::RANGE_NOT_SATISFIABLE,
            AppError::StorageFull => StatusCode::INSUFFICIENT_STORAGE,
            AppError::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
            AppError::Conflict(_) => StatusCode::CONFLICT,
            AppError::Locked(_) => StatusCode::LOCKED,
            AppError::ChecksumMismatch(_) => StatusCode::from_u16(460).unwrap_or(StatusCode::BAD_REQUEST),
            AppError::UnsupportedMediaType(_) | AppError::NotEncrypted(_) | AppError::PlaintextMember(_) => {
                StatusCode::UNSUPPORTED_MEDIA_TYPE
            }
            AppError::PreconditionFailed(_) => StatusCode::PRECONDITION_FAILED,
            AppError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn error_response(&self) -> HttpResponse {
        let status = self.status_code();
        if status.is_server_error() {
            tracing::error!(error = ?self, "request failed");
        }
        let mut response = HttpResponse::build(status);
        response.content_type("text/plain; charset=utf-8");
        match self {
            AppError::Unauthorized => {
                response
                    .insert_header((header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"blobdrop\"")));
            }
            AppError::PasswordRequired => {
                response.insert_header((
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Basic realm=\"blobdrop file\", charset=\"UTF-8\""),
                ));
            }
            AppError::TooManyAttempts(refused) | AppError::TooManyRequests(refused) => {
                response.insert_header((header::RETRY_AFTER, refused.retry_after_secs()));
            }
            AppError::Busy(_) => {
                response.insert_header((header::RETRY_AFTER, RETRY_AFTER.as_secs()));
            }
            AppError::Unavailable(_) => {
                response.insert_header((header::RETRY_AFTER, UNAVAILABLE_RETRY_AFTER_SECS));
            }
            AppError::SignInFirst => {
                response.insert_header((header::LOCATION, HeaderValue::from_static("/login")));
            }
            AppError::DeleteOnly => {
                response.insert_header((header::ALLOW, HeaderValue::from_static("GET, POST, DELETE")));
            }
            AppError::RangeNotSatisfiable { file_size } => {
                response.insert_header((header::CONTENT_RANGE, format!("bytes */{file_size}")));
            }
            _ => {}
        }
        response.body(format!("{self}\n"))
    }
}
