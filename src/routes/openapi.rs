//! `GET /api/openapi.json`: the OpenAPI 3.1 document of the JSON API, generated from the handlers' annotations.

use actix_web::HttpResponse;
use utoipa::openapi::security::{Http, HttpAuthScheme, SecurityScheme};
use utoipa::{Modify, OpenApi};

use crate::routes::files::{api as files_api, bundle};
use crate::routes::guest_links::api as guest_links_api;
use crate::routes::shares::api as shares;
use crate::routes::{sharex, system, tokens, webhooks};

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
        webhooks::list, webhooks::create, webhooks::edit, webhooks::delete, webhooks::test, webhooks::deliveries,
        document,
    ),
    modifiers(&Credentials),
    security(("secret" = []), ("secret_as_basic" = [])),
)]
struct ApiDoc;

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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::routes::table::{self, Access};

    /// `/api/files/{id}` as `/api/files/{}`: the table and the document may name a path's ids apart.
    fn shape(pattern: &str) -> String {
        pattern.split('{').enumerate().fold(String::new(), |mut shape, (i, part)| {
            match (i, part.split_once('}')) {
                (0, _) | (_, None) => shape.push_str(part),
                (_, Some((_, rest))) => shape.push_str(&format!("{{}}{rest}")),
            }
            shape
        })
    }

    /// The document lists exactly the JSON routes of the route table (`/api/...`, but tus's, a
    /// protocol of its own), each method of each, and says public exactly those the table lets
    /// anyone use; every other one needs the owner's credentials.
    #[test]
    fn the_document_lists_every_json_route_of_the_table_with_its_credential() {
        let mut in_table = BTreeMap::new();
        for line in table::lines() {
            for pattern in line.patterns.iter().filter(|p| p.starts_with("/api/") && !p.starts_with("/api/uploads")) {
                for verb in &line.methods {
                    in_table
                        .insert((verb.method.as_str().to_lowercase(), shape(pattern)), verb.access == Access::Anyone);
                }
            }
        }
        assert!(in_table.len() >= 25, "too few JSON routes in the table: {in_table:?}");
        let document = serde_json::to_value(ApiDoc::openapi()).unwrap();
        let mut documented = BTreeMap::new();
        for (path, item) in document["paths"].as_object().unwrap() {
            for (method, operation) in item.as_object().unwrap() {
                let public = operation.get("security") == Some(&serde_json::json!([{}]));
                documented.insert((method.clone(), shape(path)), public);
            }
        }
        let missing: Vec<_> = in_table.keys().filter(|route| !documented.contains_key(*route)).collect();
        assert!(missing.is_empty(), "routes of the table missing from /api/openapi.json: {missing:?}");
        let stale: Vec<_> = documented.keys().filter(|route| !in_table.contains_key(*route)).collect();
        assert!(stale.is_empty(), "documented routes the table does not have: {stale:?}");
        let credentials: Vec<_> = in_table.iter().filter(|(route, public)| documented[*route] != **public).collect();
        assert!(credentials.is_empty(), "documented as public or not against the table: {credentials:?}");
    }
}
