//! The settings page and the system page.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use crate::domain::human_size;
use crate::routes::error::AppError;
use crate::routes::owner::OwnerForm;
use crate::routes::pages::page::{DEFAULT_EXPIRY, DEFAULT_EXPIRY_KEY, SignedIn, layout, page, see_other};
use crate::routes::pages::views::{SettingsPage, SystemPage, expiry_choices};
use crate::routes::state::AppState;

#[derive(Deserialize)]
pub struct SavedQuery {
    saved: Option<String>,
}

pub async fn settings(
    SignedIn(owner): SignedIn,
    query: web::Query<SavedQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let default = state.store.setting(DEFAULT_EXPIRY_KEY).await?.unwrap_or_else(|| DEFAULT_EXPIRY.to_owned());
    page(&SettingsPage {
        layout: layout("Settings", &owner),
        expiry_choices: expiry_choices(&default),
        saved: query.saved.is_some(),
    })
}

#[derive(Deserialize)]
pub struct SettingsForm {
    default_expiry: String,
}

pub async fn save_settings(
    form: OwnerForm<SettingsForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let choice = form.fields.default_expiry;
    if !expiry_choices("").iter().any(|known| known.value == choice) {
        return Err(AppError::BadRequest("unknown expiry choice".into()));
    }
    state.store.set_setting(DEFAULT_EXPIRY_KEY, &choice).await?;
    Ok(see_other("/settings?saved=1"))
}

pub async fn system(SignedIn(owner): SignedIn, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let usage = state.store.usage().await?;
    page(&SystemPage {
        layout: layout("System", &owner),
        database_size: human_size(usage.database_bytes),
        reclaimable: human_size(usage.reclaimable_bytes),
        free_disk: state.store.free_disk_bytes().map_or_else(|| "unknown".to_owned(), |bytes| human_size(bytes as i64)),
        files: usage.files,
        stored: human_size(usage.stored_bytes),
        version: env!("CARGO_PKG_VERSION"),
    })
}
