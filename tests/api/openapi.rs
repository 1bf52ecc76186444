//! `GET /api/openapi.json`: valid OpenAPI 3.1 by the stock validator (openapi-spec-validator), and
//! complete: every `/api/...` route of the route table, with each of its methods, is in it.

use tokio::process::Command;

use crate::helpers::spawn_app;

/// The `/api/...` routes the route table registers, as `METHOD PATTERN` lines, read from the
/// source of `routes::configure` and the `configure` functions it calls.
const ROUTES_IN_SOURCE: &str = r#"
import pathlib, re, sys
routes = set()
for path in pathlib.Path(sys.argv[1]).rglob("*.rs"):
    source = path.read_text()
    # A route an API token may use is wrapped in `token(...)`.
    for pattern, method in re.findall(r'\.route\(\s*"(/api/[^"]*)",\s*(?:token\()?web::(\w+)\(\)', source):
        routes.add((method, pattern))
    for pattern, chain in re.findall(r'web::resource\(\s*"(/api/[^"]*)"\s*\)((?:\s*\.route\((?:token\()?web::\w+\(\)\.to\([^()]*\)\)?\))+)', source):
        for method in re.findall(r'web::(\w+)\(\)', chain):
            routes.add((method, pattern))
    # `routes::allow::resource(PATH, [(Method::GET, handler), ...])`: one resource, its methods listed once.
    for pattern, methods in re.findall(r'resource\(\s*"(/api/[^"]*)",\s*\[(.*?)\]\s*,?\s*\)', source, re.S):
        for method in re.findall(r'Method::(\w+)', methods):
            routes.add((method.lower(), pattern))
# The tus endpoints speak the tus protocol (docs: resumable uploads), not JSON: not in the document.
routes = {(method, pattern) for method, pattern in routes if not pattern.startswith("/api/uploads")}
for method, pattern in sorted(routes):
    print(method, re.sub(r"\{[^}]*\}", "{}", pattern))
"#;

#[tokio::test]
async fn the_openapi_document_is_valid_3_1_and_lists_every_json_route() {
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

    let source = concat!(env!("CARGO_MANIFEST_DIR"), "/src/routes");
    let listed = Command::new("python3").args(["-c", ROUTES_IN_SOURCE, source]).output().await.unwrap();
    assert!(listed.status.success(), "{}", String::from_utf8_lossy(&listed.stderr));
    let routes = String::from_utf8(listed.stdout).unwrap();
    assert!(routes.lines().count() >= 15, "the source reading found too few routes: {routes}");
    let paths = document["paths"].as_object().unwrap();
    let mut missing = Vec::new();
    for line in routes.lines() {
        let (method, pattern) = line.split_once(' ').unwrap();
        let documented = paths.iter().any(|(path, item)| {
            let path = path.split('{').enumerate().map(|(i, part)| {
                if i == 0 { part.to_owned() } else { format!("{{}}{}", part.split_once('}').unwrap().1) }
            });
            path.collect::<String>() == pattern && item.get(method).is_some()
        });
        if !documented {
            missing.push(line.to_owned());
        }
    }
    assert!(missing.is_empty(), "routes missing from /api/openapi.json: {missing:?}");
}
