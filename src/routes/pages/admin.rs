//! The settings page and the system page.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use crate::domain::{DeliveryRecord, WebhookEvent, WebhookRecord, date_time, human_size};
use crate::routes::error::AppError;
use crate::routes::owner::OwnerForm;
use crate::routes::pages::page::{SignedIn, layout, page, see_other};
use crate::routes::pages::views::{DeliveryView, SettingsPage, SystemPage, WebhookView, expiry_choices};
use crate::routes::state::AppState;
use crate::services::{preferences, system, webhooks};

#[derive(Deserialize)]
pub struct SavedQuery {
    saved: Option<String>,
}

pub async fn settings(
    SignedIn(owner): SignedIn,
    query: web::Query<SavedQuery>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let default = preferences::default_expiry(&state.ctx).await?;
    let mut hooks = Vec::new();
    for hook in webhooks::list(&state.ctx).await? {
        let deliveries = webhooks::deliveries(&state.ctx, hook.id).await?;
        hooks.push(webhook_view(&hook, &deliveries));
    }
    page(&SettingsPage {
        layout: layout("Settings", &owner),
        expiry_choices: expiry_choices(&default),
        saved: query.saved.is_some(),
        webhooks: hooks,
        webhook_events: WebhookEvent::ALL.iter().map(|event| event.as_str()).collect(),
    })
}

fn webhook_view(hook: &WebhookRecord, deliveries: &[DeliveryRecord]) -> WebhookView {
    WebhookView {
        id: hook.id,
        url: hook.url.clone(),
        format: hook.format.as_str(),
        events: hook.events.iter().map(|event| event.as_str()).collect::<Vec<_>>().join(", "),
        deliveries: deliveries
            .iter()
            .map(|delivery| DeliveryView {
                event: delivery.event.clone(),
                status: delivery.status(),
                at: date_time(delivery.created_at),
                attempts: delivery.attempts,
                detail: match (&delivery.last_error, delivery.last_status) {
                    (Some(error), _) => error.clone(),
                    (None, Some(status)) => format!("answered {status}"),
                    (None, None) => "not tried yet".into(),
                },
            })
            .collect(),
    }
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
    preferences::set_default_expiry(&state.ctx, &choice).await?;
    Ok(see_other("/settings?saved=1"))
}

pub async fn system(SignedIn(owner): SignedIn, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let usage = system::usage(&state.ctx).await?;
    let unfinished = system::unfinished_uploads(&state.ctx).await?;
    page(&SystemPage {
        layout: layout("System", &owner),
        database_size: human_size(usage.database_bytes),
        reclaimable: human_size(usage.reclaimable_bytes),
        free_disk: system::free_disk_bytes(&state.ctx)
            .map_or_else(|| "unknown".to_owned(), |bytes| human_size(bytes as i64)),
        files: usage.files,
        stored: human_size(usage.stored_bytes),
        unfinished_uploads: unfinished.uploads,
        unfinished_upload_bytes: human_size(unfinished.bytes),
        version: env!("CARGO_PKG_VERSION"),
    })
}
