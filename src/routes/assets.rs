//! The embedded static files and the fallback 404.

use actix_web::http::header;
use actix_web::{HttpResponse, web};

use crate::routes::error::AppError;

/// Static files, compiled into the binary so that it runs from anywhere with no files beside it.
const ASSETS: &[(&str, &str, &str)] = &[
    ("style.css", "text/css; charset=utf-8", include_str!("../../static/style.css")),
    ("app.js", "text/javascript; charset=utf-8", include_str!("../../static/app.js")),
];

pub async fn asset(name: web::Path<String>) -> Result<HttpResponse, AppError> {
    let (_, content_type, body) =
        ASSETS.iter().find(|(file, _, _)| *file == name.as_str()).ok_or(AppError::NotFound)?;
    Ok(HttpResponse::Ok()
        .content_type(*content_type)
        .insert_header((header::CACHE_CONTROL, "public, max-age=3600"))
        .body(*body))
}

pub async fn not_found() -> Result<HttpResponse, AppError> {
    Err(AppError::NotFound)
}
