//! The guest links page (list and create), one link's page (edit, disable, enable, delete), and
//! the page a guest uploads on.

use actix_web::{HttpRequest, HttpResponse, web};
use serde::Deserialize;

use crate::domain::{ByteSize, GuestLinkId, GuestLinkTerms, MAX_LIFETIME_DAYS, future_expiry};
use crate::domain::{GuestLinkRecord, Reach};
use crate::domain::{date_input, date_time, human_size};
use crate::error::AppError;
use crate::owner::{NoFields, OwnerForm};
use crate::pages::page::{SignedIn, end_of_day, layout, optional, page, see_other};
use crate::pages::views::{GuestLinkPage, GuestLinkRow, GuestLinksPage, GuestUploadPage, Layout, When};
use crate::services::guest_links;
use crate::state::AppState;

pub async fn list(
    req: HttpRequest,
    SignedIn(owner): SignedIn,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let now = state.ctx.now();
    let links = guest_links::list(&state.ctx, owner.actor().reach()).await?;
    page(&GuestLinksPage {
        layout: layout("Guest links", &owner),
        links: links.iter().map(|link| row(&req, &state, link, now.secs())).collect(),
        blank: GuestLinkRow::default(),
        max_lifetime_days: MAX_LIFETIME_DAYS,
    })
}

pub async fn show(
    req: HttpRequest,
    SignedIn(owner): SignedIn,
    id: web::Path<GuestLinkId>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let link = guest_links::find_reached(&state.ctx, owner.actor().reach(), &id).await?;
    let now = state.ctx.now();
    page(&GuestLinkPage {
        layout: layout(&link.label, &owner),
        link: row(&req, &state, &link, now.secs()),
        max_lifetime_days: MAX_LIFETIME_DAYS,
    })
}

/// The create and edit forms; empty fields mean no limit.
#[derive(Debug, Deserialize)]
pub struct LinkForm {
    label: String,
    /// `YYYY-MM-DD`; the link takes uploads until the end of that day (UTC).
    #[serde(default)]
    expires: String,
    /// `10 MiB`, `500MB` or bytes.
    #[serde(default)]
    max_file_size: String,
    #[serde(default)]
    max_uploads: String,
    #[serde(default)]
    file_lifetime_days: String,
    /// The checkbox: present (`on`) when ticked.
    #[serde(default)]
    share_batches: Option<String>,
    /// The checkbox: present when ticked.
    #[serde(default)]
    require_encryption: Option<String>,
}

impl LinkForm {
    /// The terms the form asks for. An expiry date left as it was keeps the link's exact expiry,
    /// even a past one, so the rest of an expired link can still be edited.
    fn terms(&self, current: Option<&GuestLinkRecord>, now: i64) -> Result<GuestLinkTerms, AppError> {
        let day = self.expires.trim();
        let expires_at = match current {
            Some(link) if date_input(link.expires_at) == day => link.expires_at,
            _ if day.is_empty() => None,
            _ => Some(future_expiry(end_of_day(day)?, now).map_err(AppError::from)?),
        };
        let max_file_size = optional(&self.max_file_size, |raw| raw.parse::<ByteSize>().map_err(AppError::BadRequest))?;
        let whole = |what: &'static str| {
            move |raw: &str| {
                raw.parse::<i64>().map_err(|_| AppError::BadRequest(format!("{what} must be a whole number")))
            }
        };
        let max_uploads = optional(&self.max_uploads, whole("the maximum number of uploads"))?;
        let lifetime = optional(&self.file_lifetime_days, whole("the file lifetime in days"))?;
        let mut terms = GuestLinkTerms::new(&self.label, expires_at, max_file_size, max_uploads, lifetime)
            .map_err(AppError::from)?;
        terms.share_batches = self.share_batches.is_some();
        terms.require_encryption = self.require_encryption.is_some();
        Ok(terms)
    }
}

pub async fn create(form: OwnerForm<LinkForm>, state: web::Data<AppState>) -> Result<HttpResponse, AppError> {
    let terms = form.fields.terms(None, state.ctx.now().secs())?;
    let link = guest_links::create(&state.ctx, form.owner.actor().account, &terms).await?;
    Ok(see_other(&format!("/guest-links#link-{}", link.id)))
}

pub async fn edit(
    id: web::Path<GuestLinkId>,
    form: OwnerForm<LinkForm>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    let link = guest_links::find_reached(&state.ctx, form.owner.actor().reach(), &id).await?;
    let now = state.ctx.now();
    let terms = form.fields.terms(Some(&link), now.secs())?;
    guest_links::update(&state.ctx, &link, &terms, None).await?.ok_or(AppError::Unknown("guest link"))?;
    Ok(see_other("/guest-links"))
}

pub async fn disable(
    id: web::Path<GuestLinkId>,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    set_disabled(&state, form.owner.actor().reach(), &id, true).await
}

pub async fn enable(
    id: web::Path<GuestLinkId>,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    set_disabled(&state, form.owner.actor().reach(), &id, false).await
}

async fn set_disabled(
    state: &AppState,
    reach: Reach,
    id: &GuestLinkId,
    disabled: bool,
) -> Result<HttpResponse, AppError> {
    guest_links::set_disabled(&state.ctx, reach, id, disabled).await?.ok_or(AppError::Unknown("guest link"))?;
    Ok(see_other("/guest-links"))
}

pub async fn delete(
    id: web::Path<GuestLinkId>,
    form: OwnerForm<NoFields>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    if !guest_links::delete(&state.ctx, form.owner.actor().reach(), &id).await? {
        return Err(AppError::Unknown("guest link"));
    }
    Ok(see_other("/guest-links"))
}

/// `/g/{id}` in a browser: the upload page, or the reason the link takes no upload.
pub async fn guest_upload(
    req: HttpRequest,
    id: web::Path<String>,
    state: web::Data<AppState>,
) -> Result<HttpResponse, AppError> {
    // The page sends no bytes itself: it takes no place among the link's uploads in flight.
    let guest = state.intake.guest(&state.ctx, &id, state.client_ip(&req), false).await?;
    let link = guest.guest_link().ok_or(AppError::Unknown("guest link"))?;
    let limit = guest.max_size();
    let plural = |n: i64, unit: &str| format!("{n} {unit}{}", if n == 1 { "" } else { "s" });
    page(&GuestUploadPage {
        layout: Layout { title: "Upload".into(), csrf_token: String::new(), admin: false },
        upload_to: format!("/g/{}/", link.id),
        max_upload: limit.map(|size| size.to_string()).unwrap_or_default(),
        max_upload_bytes: limit.map(|size| size.as_u64().to_string()).unwrap_or_default(),
        file_lifetime: link.file_lifetime_days.map(|days| plural(days, "day")).unwrap_or_default(),
        share_batches: link.share_batches,
        require_encryption: guest.requires_encryption(),
        uploads_left: link.max_uploads.map(|max| plural(max - link.upload_count, "file")).unwrap_or_default(),
    })
}

fn row(req: &HttpRequest, state: &AppState, link: &GuestLinkRecord, now: i64) -> GuestLinkRow {
    let uploads = match link.max_uploads {
        Some(max) => format!("{} of {max}", link.upload_count),
        None => link.upload_count.to_string(),
    };
    GuestLinkRow {
        id: link.id.to_string(),
        label: link.label.clone(),
        url: state.guest_link_url(req, &link.id),
        status: link.status(now).as_str(),
        disabled: link.disabled,
        created: date_time(link.created_at),
        expires: When::or_never(now, link.expires_at),
        expires_date: date_input(link.expires_at),
        uploads,
        max_uploads: link.max_uploads.map(|n| n.to_string()).unwrap_or_default(),
        max_file_size: link.max_file_size.map(human_size).unwrap_or_default(),
        max_file_size_input: link.max_file_size().map(size_input).unwrap_or_default(),
        file_lifetime_days: link.file_lifetime_days.map(|n| n.to_string()).unwrap_or_default(),
        share_batches: link.share_batches,
        require_encryption: link.require_encryption,
    }
}

/// A size for an input field: as people write it when that reads back exactly, else in bytes,
/// so saving a form unchanged never rounds a limit.
fn size_input(size: ByteSize) -> String {
    let human = size.to_string();
    if human.parse::<ByteSize>() == Ok(size) { human } else { size.as_u64().to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_inputs_read_back_exactly() {
        assert_eq!(size_input(ByteSize::from_bytes(10 * 1024 * 1024)), "10.0 MiB");
        assert_eq!(size_input(ByteSize::from_bytes(1_234_567)), "1234567");
    }
}
