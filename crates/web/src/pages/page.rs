//! What every page handler shares: rendering, redirects, the page layout and the signed-in owner.

use actix_web::http::header;
use actix_web::{HttpRequest, HttpResponse};
use askama::Template;

use crate::error::AppError;
use crate::owner::Owner;
use crate::pages::views::Layout;

pub(crate) fn layout(title: &str, owner: &Owner) -> Layout {
    Layout { title: title.to_owned(), csrf_token: owner.csrf_token().to_owned(), admin: owner.actor().is_admin() }
}

/// Renders a page as a 200 HTML response (security headers come from the app-wide defaults).
pub(crate) fn page(template: &impl Template) -> Result<HttpResponse, AppError> {
    let html = template.render().map_err(AppError::internal)?;
    Ok(HttpResponse::Ok().content_type("text/html; charset=utf-8").body(html))
}

/// 303 to `location`: after a form post, the browser loads the next page with GET.
pub(crate) fn see_other(location: &str) -> HttpResponse {
    HttpResponse::SeeOther().insert_header((header::LOCATION, location)).finish()
}

/// The owner, for pages: anyone else is sent to the sign-in page instead of getting a 401.
pub struct SignedIn(pub Owner);

impl actix_web::FromRequest for SignedIn {
    type Error = AppError;
    type Future = std::pin::Pin<Box<dyn std::future::Future<Output = Result<Self, AppError>>>>;

    fn from_request(req: &HttpRequest, payload: &mut actix_web::dev::Payload) -> Self::Future {
        let owner = Owner::from_request(req, payload);
        Box::pin(async move {
            owner.await.map(SignedIn).map_err(|error| match error {
                // Not signed in (or the session ended): to the sign-in page. Anything else (429,
                // a failing database) is shown as itself.
                AppError::Unauthorized => AppError::SignInFirst,
                other => other,
            })
        })
    }
}

/// A form's optional field: empty is `None`; anything else must parse.
pub(crate) fn optional<T>(raw: &str, parse: impl FnOnce(&str) -> Result<T, AppError>) -> Result<Option<T>, AppError> {
    let raw = raw.trim();
    if raw.is_empty() { Ok(None) } else { parse(raw).map(Some) }
}

/// 23:59:59 UTC of a `YYYY-MM-DD` day.
pub(crate) fn end_of_day(day: &str) -> Result<i64, AppError> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    let date = time::Date::parse(day, &format)
        .map_err(|_| AppError::BadRequest("the expiry date must look like 2030-01-31".into()))?;
    Ok(date.with_hms(23, 59, 59).map_err(AppError::internal)?.assume_utc().unix_timestamp())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::date_input;
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(crate::domain::properties::config())]

        /// The expiry field of the edit form: any text is refused or read as the last second of
        /// a day, which the date field then shows as the same day.
        #[test]
        fn an_expiry_day_is_refused_or_its_last_second(
            raw in prop_oneof![any::<String>(), "[0-9]{4}-[0-9]{2}-[0-9]{2}", "[+-]?[0-9]{1,6}-[01][0-9]-[0-3][0-9]"]
        ) {
            if let Ok(at) = end_of_day(&raw) {
                let time = time::OffsetDateTime::from_unix_timestamp(at).map_err(|e| TestCaseError::fail(e.to_string()))?;
                prop_assert_eq!((time.hour(), time.minute(), time.second()), (23, 59, 59));
                prop_assert_eq!(end_of_day(&date_input(Some(at))).ok(), Some(at));
            }
        }
    }
}
