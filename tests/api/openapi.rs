//! `GET /api/openapi.json`: public, and valid OpenAPI 3.1 by the stock validator
//! (openapi-spec-validator). That it is complete is checked against the route table by
//! `routes::table`'s unit test.

use tokio::process::Command;

use crate::helpers::spawn_app;

#[tokio::test]
async fn the_openapi_document_is_public_and_valid_3_1() {
    let app = spawn_app().await;
    let response = app.client.get(app.url("/api/openapi.json")).send().await.unwrap();
    assert_eq!(response.status(), 200, "public: a client generator needs no secret");
    let document: serde_json::Value = response.json().await.unwrap();
    assert!(document["openapi"].as_str().unwrap().starts_with("3.1"), "{}", document["openapi"]);

    let folder = tempfile::tempdir().unwrap();
    let file = folder.path().join("openapi.json");
    std::fs::write(&file, serde_json::to_vec_pretty(&document).unwrap()).unwrap();
    let validated = Command::new("python3").args(["-m", "openapi_spec_validator"]).arg(&file).output().await.unwrap();
    let said = String::from_utf8_lossy(&validated.stdout).into_owned() + &String::from_utf8_lossy(&validated.stderr);
    assert!(validated.status.success(), "openapi-spec-validator: {said}");
    // That it lists every JSON route of the route table, with its credential, and nothing else is
    // `routes::table`'s unit test, against the table itself.
    assert!(document["paths"].as_object().unwrap().len() >= 15, "{}", document["paths"]);
}
