//! The settings page and the system page.

use actix_web::{HttpResponse, web};
use serde::Deserialize;

use crate::domain::{
    DAY_SECONDS, DeliveryRecord, LONG_VERSION, WebhookEvent, WebhookRecord, date_input, date_time, human_size,
};
use crate::error::AppError;
use crate::owner::OwnerForm;
use crate::pages::charts;
use crate::pages::page::{SignedIn, layout, page, see_other};
use crate::pages::views::{DeliveryView, SettingsPage, SingleSignOnView, SystemPage, WebhookView, expiry_choices};
use crate::services::auth::oidc;
use crate::services::{preferences, system, webhooks};
use crate::state::AppState;

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
    let reach = owner.actor().reach();
    for hook in webhooks::list(&state.ctx, reach).await? {
        let deliveries = webhooks::deliveries(&state.ctx, reach, &hook.id).await?.unwrap_or_default();
        hooks.push(webhook_view(&hook, &deliveries));
    }
    page(&SettingsPage {
        layout: layout("Settings", &owner),
        expiry_choices: expiry_choices(&default),
        saved: query.saved.is_some(),
        webhooks: hooks,
        webhook_events: WebhookEvent::ALL.iter().map(|event| event.as_str()).collect(),
        single_sign_on: match &state.single_sign_on {
            Some(sso) => {
                let rules = &sso.config().rules;
                Some(SingleSignOnView {
                    name: sso.config().name.clone(),
                    sign_up: match rules.sign_up {
                        oidc::SignUp::Off => "off: an admin makes each account, and its person links the identity",
                        oidc::SignUp::On => "on: a first sign-in makes a member's account",
                        oidc::SignUp::Groups => {
                            "groups: a first sign-in of the allowed groups makes a member's account"
                        }
                    },
                    admin_groups: rules.admin_groups.join(", "),
                    allowed_groups: rules.allowed_groups.join(", "),
                })
            }
            None => None,
        },
    })
}

fn webhook_view(hook: &WebhookRecord, deliveries: &[DeliveryRecord]) -> WebhookView {
    WebhookView {
        id: hook.id.0,
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
    let report = system::report(&state.ctx).await?;
    let (usage, unfinished) = (report.usage, report.unfinished);
    let largest: Vec<_> =
        report.largest.iter().map(|file| (file.id.to_string(), file.filename.to_string(), file.file_size)).collect();
    page(&SystemPage {
        layout: layout("System", &owner),
        storage: charts::storage_bar(&usage, report.disk.as_ref()),
        charts: vec![
            ("activity-counts", "Files per day", charts::daily_chart(&report.activity, false)),
            ("activity-bytes", "Bytes per day", charts::daily_chart(&report.activity, true)),
        ],
        days: report
            .activity
            .iter()
            .rev()
            .map(|day| {
                let date = date_input(Some(day.day * DAY_SECONDS));
                (date, day.uploads, human_size(day.upload_bytes), day.downloads, human_size(day.download_bytes))
            })
            .collect(),
        largest: charts::largest_files(&largest),
        database_size: human_size(usage.database_bytes),
        free_disk: report.disk.map_or_else(|| "unknown".to_owned(), |disk| human_size(disk.free_bytes as i64)),
        files: usage.files,
        stored: human_size(usage.stored_bytes),
        unfinished_uploads: unfinished.uploads,
        unfinished_upload_bytes: human_size(unfinished.bytes),
        version: LONG_VERSION,
    })
}
