//! Docker secrets: every secret setting also reads from a file (`BLOBDROP_SHARED_SECRET_FILE`,
//! `BLOBDROP_TOKEN_FILE`), with the real binary as `docker run` starts it.

use tokio::process::Command;

use crate::command_line::start_binary;
use crate::helpers::{SECRET, spawn_app};

async fn upload_status(port: u16, secret: &str) -> u16 {
    let response = reqwest::Client::new()
        .put(format!("http://127.0.0.1:{port}/x.txt"))
        .basic_auth("", Some(secret))
        .body("x")
        .send()
        .await
        .unwrap();
    response.status().as_u16()
}

#[tokio::test]
async fn a_mounted_secret_file_is_the_owner_secret_without_its_newline() {
    let folder = tempfile::tempdir().unwrap();
    let secret_file = folder.path().join("blobdrop_shared_secret");
    std::fs::write(&secret_file, "from-a-docker-secret\n").unwrap();
    // Empty like compose's `${BLOBDROP_SHARED_SECRET:-}`: counts as unset.
    let env = [("BLOBDROP_SHARED_SECRET", ""), ("BLOBDROP_SHARED_SECRET_FILE", secret_file.to_str().unwrap())];
    let (mut server, port) = start_binary(folder.path(), &env).await;
    assert_eq!(upload_status(port, "from-a-docker-secret").await, 201);
    assert_eq!(upload_status(port, "from-a-docker-secret\n").await, 401);
    assert_eq!(upload_status(port, SECRET).await, 401);
    server.kill().await.unwrap();
}

/// Starts the real binary with the secret (or none) and a secret file, which must refuse to
/// start; returns its standard error.
async fn refused_start(db: &std::path::Path, secret: Option<&str>, secret_file: &std::path::Path) -> String {
    let mut command = Command::new(env!("CARGO_BIN_EXE_blobdrop"));
    command.env("BLOBDROP_DB", db).env("BLOBDROP_PORT", "0").env("BLOBDROP_SHARED_SECRET_FILE", secret_file);
    match secret {
        Some(secret) => command.env("BLOBDROP_SHARED_SECRET", secret),
        None => command.env_remove("BLOBDROP_SHARED_SECRET"),
    };
    let output = command.output().await.unwrap();
    assert!(!output.status.success());
    String::from_utf8(output.stderr).unwrap()
}

#[tokio::test]
async fn a_secret_and_its_file_together_stop_the_start_with_one_line() {
    let folder = tempfile::tempdir().unwrap();
    let secret_file = folder.path().join("secret");
    std::fs::write(&secret_file, "other\n").unwrap();
    let db = folder.path().join("blobdrop.db");
    let stderr = refused_start(&db, Some(SECRET), &secret_file).await;
    assert_eq!(
        stderr,
        "blobdrop: BLOBDROP_SHARED_SECRET and BLOBDROP_SHARED_SECRET_FILE are both set \
         (--shared-secret and --shared-secret-file); set only one\n"
    );
    assert!(!db.exists(), "a refused start creates no database");

    let missing = folder.path().join("missing");
    let stderr = refused_start(&db, None, &missing).await;
    assert!(
        stderr.starts_with("blobdrop: cannot read BLOBDROP_SHARED_SECRET_FILE ") && stderr.lines().count() == 1,
        "{stderr}"
    );
}

#[tokio::test]
async fn the_client_reads_its_token_from_a_file() {
    let app = spawn_app().await;
    app.upload("listed.txt", b"listed".to_vec()).await;
    let folder = tempfile::tempdir().unwrap();
    let token_file = folder.path().join("token");
    std::fs::write(&token_file, format!("{SECRET}\n")).unwrap();
    let ls = |token: Option<&str>| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_blobdrop"));
        command.arg("ls").env("BLOBDROP_URL", &app.address).env("BLOBDROP_TOKEN_FILE", &token_file);
        match token {
            Some(token) => command.env("BLOBDROP_TOKEN", token),
            None => command.env_remove("BLOBDROP_TOKEN"),
        };
        command.output()
    };
    let output = ls(None).await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(String::from_utf8(output.stdout).unwrap().contains("listed.txt"));

    let output = ls(Some(SECRET)).await.unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(
        stderr,
        "blobdrop: BLOBDROP_TOKEN and BLOBDROP_TOKEN_FILE are both set (--token and --token-file); set only one\n"
    );
}

#[tokio::test]
async fn the_compose_files_hand_the_secret_over_as_a_docker_secret() {
    // Parsed as YAML (there is no Docker engine here): each blobdrop service gets the owner secret
    // from a file, and every `_FILE` variable of any service (the PostgreSQL password too) names a
    // secret the service mounts and the file declares; no secret is written in the environment.
    let check = r#"
import sys, yaml
from urllib.parse import urlsplit
for path in sys.argv[1:]:
    compose = yaml.safe_load(open(path))
    declared = compose.get("secrets", {})
    blobdrops = [s for name, s in compose["services"].items() if name.startswith("blobdrop")]
    assert blobdrops, path
    for service in blobdrops:
        env = service["environment"]
        assert "BLOBDROP_SHARED_SECRET" not in env, path
        assert "BLOBDROP_SHARED_SECRET_FILE" in env, path
        assert urlsplit(env.get("BLOBDROP_DB", "")).password is None, path
    for name, service in compose["services"].items():
        env = service.get("environment", {})
        assert "POSTGRES_PASSWORD" not in env, path
        for variable, value in env.items():
            if variable.endswith("_FILE"):
                secret = value.removeprefix("/run/secrets/")
                assert value == "/run/secrets/" + secret, (path, name, variable)
                assert secret in service["secrets"], (path, name, variable)
                assert "file" in declared[secret], (path, name, variable)
"#;
    let root = env!("CARGO_MANIFEST_DIR");
    let files = ["compose.yaml", "deploy/litestream/compose.yaml", "deploy/postgres/compose.yaml"];
    let output = Command::new("python3")
        .args(["-c", check])
        .args(files.map(|file| format!("{root}/{file}")))
        .output()
        .await
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
}
