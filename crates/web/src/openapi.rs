//! `GET /api/openapi.json`: the OpenAPI 3.1 document of the JSON API, generated from the handlers' annotations.

use actix_web::HttpResponse;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::files::{api as files_api, bundle};
use crate::guest_links::api as guest_links_api;
use crate::shares::api as shares;
use crate::{accounts, sharex, system, tokens, webhooks};

#[derive(OpenApi)]
#[openapi(
    info(title = "blobdrop", description = "Self-hosted file sharing backed by SQLite: the owner's JSON API."),
    paths(
        files_api::list, files_api::show, files_api::edit, files_api::delete,
        bundle::download_bundle, bundle::upload_bundle,
        guest_links_api::list, guest_links_api::create, guest_links_api::show, guest_links_api::edit,
        guest_links_api::delete,
        shares::list, shares::create, shares::show, shares::edit, shares::delete,
        system::show,
        tokens::list, tokens::create, tokens::revoke, sharex::create,
        accounts::me, accounts::list, accounts::create, accounts::show, accounts::edit, accounts::delete, accounts::reset,
        webhooks::list, webhooks::create, webhooks::edit, webhooks::delete, webhooks::test, webhooks::deliveries,
        document,
    ),
    modifiers(&Credentials),
    security(("secret" = []), ("secret_as_basic" = [])),
)]
pub(super) struct ApiDoc;

/// The owner's credentials: the secret or an API token, as Bearer or as Basic with any user name.
struct Credentials;

impl Modify for Credentials {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme("secret", SecurityScheme::Http(Http::new(HttpAuthScheme::Bearer)));
        components.add_security_scheme("secret_as_basic", SecurityScheme::Http(Http::new(HttpAuthScheme::Basic)));
    }
}

/// The document; public, as it describes nothing but the API's shape.
#[utoipa::path(get, path = "/api/openapi.json", operation_id = "getOpenApiDocument", tag = "system", security(()),
    responses((status = 200, description = "this OpenAPI 3.1 document", content_type = "application/json")))]
pub async fn document() -> HttpResponse {
    HttpResponse::Ok().json(ApiDoc::openapi())
}
