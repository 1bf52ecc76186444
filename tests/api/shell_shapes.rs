//! The upload shapes of the README's "From the command line" section, typed into a real shell with
//! the real curl, wget and tar, exactly as a user would.

use std::path::Path;

use time::OffsetDateTime;
use tokio::process::Command;

use crate::helpers::{SECRET, TestApp, id_of, sha256, spawn_app, test_bytes};

/// Runs `script` in bash (with `pipefail`) in `folder`, with `$HOST` and `$SECRET` set as the README
/// has them, and `blobdrop` on the `PATH` pointed at the app. Returns stdout, stderr and whether it
/// succeeded.
pub(crate) async fn shell(app: &TestApp, folder: &Path, script: &str) -> (bool, String, String) {
    let binary_folder = Path::new(env!("CARGO_BIN_EXE_blobdrop")).parent().unwrap();
    let path = format!("{}:{}", binary_folder.display(), std::env::var("PATH").unwrap_or_default());
    let output = Command::new("bash")
        .args(["-o", "pipefail", "-c", script])
        .current_dir(folder)
        .env("HOST", &app.address)
        .env("SECRET", SECRET)
        .env("PATH", path)
        .env("BLOBDROP_URL", &app.address)
        .env("BLOBDROP_TOKEN", SECRET)
        .output()
        .await
        .unwrap();
    let (stdout, stderr) = (String::from_utf8(output.stdout).unwrap(), String::from_utf8_lossy(&output.stderr));
    (output.status.success(), stdout, stderr.into_owned())
}

/// Like `shell`, for a script that must succeed; returns its stdout.
pub(crate) async fn run(app: &TestApp, folder: &Path, script: &str) -> String {
    let (ok, stdout, stderr) = shell(app, folder, script).await;
    assert!(ok, "{script}\nstdout: {stdout}\nstderr: {stderr}");
    stdout
}

/// The value of a header in `curl -D -` output (the last one, after any `100 Continue`).
fn header_value(dump: &str, name: &str) -> Option<String> {
    let prefix = format!("{}:", name.to_ascii_lowercase());
    dump.lines()
        .rev()
        .find(|line| line.to_ascii_lowercase().starts_with(&prefix))
        .map(|line| line[prefix.len()..].trim().to_owned())
}

fn seconds_from_now(rfc3339: &str) -> i64 {
    let at = OffsetDateTime::parse(rfc3339, &time::format_description::well_known::Rfc3339).unwrap();
    (at - OffsetDateTime::now_utc()).whole_seconds()
}

#[tokio::test]
async fn curl_t_keeps_the_file_name_or_takes_the_one_in_the_url() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("file.txt"), b"hello\n").unwrap();

    let url = run(&app, folder.path(), "curl -sS -u :$SECRET -T file.txt $HOST/").await;
    assert!(url.ends_with("/file.txt\n"), "{url}");
    let url = run(&app, folder.path(), "curl -sS -u :$SECRET -T file.txt $HOST/name.txt").await;
    assert!(url.ends_with("/name.txt\n"), "{url}");
    assert_eq!(app.download(url.trim_end()).await, b"hello\n");
    let url = run(&app, folder.path(), "curl -sS -H \"Authorization: Bearer $SECRET\" -T file.txt $HOST/").await;
    assert!(url.ends_with("/file.txt\n"), "{url}");
}

#[tokio::test]
async fn tar_piped_into_curl_streams_an_archive_that_unpacks_to_the_same_files() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let dir = folder.path().join("dir");
    std::fs::create_dir_all(dir.join("inner")).unwrap();
    std::fs::write(dir.join("a.bin"), test_bytes(700_000)).unwrap();
    std::fs::write(dir.join("inner/b.txt"), b"bee\n").unwrap();

    let url = run(&app, folder.path(), "tar czf - dir | curl -sS -u :$SECRET -T - $HOST/dir.tgz").await;
    assert!(url.ends_with("/dir.tgz\n"), "{url}");
    let out = folder.path().join("out");
    std::fs::create_dir(&out).unwrap();
    run(&app, &out, &format!("curl -sS {} | tar xzf -", url.trim_end())).await;
    assert_eq!(sha256(&std::fs::read(out.join("dir/a.bin")).unwrap()), sha256(&test_bytes(700_000)));
    assert_eq!(std::fs::read(out.join("dir/inner/b.txt")).unwrap(), b"bee\n");
}

#[tokio::test]
async fn curl_with_several_file_fields_gets_one_url_per_line() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a"), b"first").unwrap();
    std::fs::write(folder.path().join("b"), b"second").unwrap();

    let body = run(&app, folder.path(), "curl -sS -u :$SECRET -F file=@a -F file=@b $HOST/").await;
    let urls: Vec<&str> = body.lines().collect();
    assert!(body.ends_with('\n') && urls.len() == 2, "{body}");
    assert_eq!(app.download(urls[0]).await, b"first");
    assert_eq!(app.download(urls[1]).await, b"second");
}

#[tokio::test]
async fn wget_put_uploads_with_a_bearer_token_or_basic_auth() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("x"), test_bytes(100_000)).unwrap();

    let bearer = "wget --method PUT --body-file=x --header \"Authorization: Bearer $SECRET\" $HOST/x -O - -nv";
    let url = run(&app, folder.path(), bearer).await;
    assert!(url.ends_with("/x\n"), "{url}");
    assert_eq!(sha256(&app.download(url.trim_end()).await), sha256(&test_bytes(100_000)));
    let basic = "wget --method PUT --body-file=x --user= --password=$SECRET $HOST/x -O - -nv";
    let url = run(&app, folder.path(), basic).await;
    assert!(url.ends_with("/x\n"), "{url}");
    let (ok, _, stderr) = shell(&app, folder.path(), "wget --method PUT --body-file=x $HOST/x -O - -nv").await;
    assert!(!ok && stderr.contains("Authentication Failed"), "{stderr}");
    assert_eq!(app.list().await.len(), 2);
}

#[tokio::test]
async fn expire_max_days_and_max_downloads_headers_set_the_limits_and_x_expires_tells_them() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("x.txt"), b"limited").unwrap();

    let dump =
        run(&app, folder.path(), "curl -sS -D - -o /dev/null -u :$SECRET -H 'Expire: 10min' -T x.txt $HOST/").await;
    let left = seconds_from_now(&header_value(&dump, "x-expires").unwrap());
    assert!((540..=600).contains(&left), "{dump}");
    let dump =
        run(&app, folder.path(), "curl -sS -D - -o /dev/null -u :$SECRET -H 'Max-Days: 3' -T x.txt $HOST/").await;
    let left = seconds_from_now(&header_value(&dump, "x-expires").unwrap());
    assert!((3 * 86_400 - 60..=3 * 86_400).contains(&left), "{dump}");
    let dump = run(&app, folder.path(), "curl -sS -D - -o /dev/null -u :$SECRET -T x.txt $HOST/").await;
    assert_eq!(header_value(&dump, "x-expires"), None, "a file that never expires: {dump}");

    let url = run(&app, folder.path(), "curl -sS -u :$SECRET -H 'Max-Downloads: 1' -T x.txt $HOST/").await;
    let once = format!("curl -sS -f {}", url.trim_end());
    assert_eq!(run(&app, folder.path(), &once).await, "limited");
    let (ok, _, stderr) = shell(&app, folder.path(), &once).await;
    assert!(!ok && stderr.contains("404"), "{stderr}");

    let refused = "curl -sS -w ' %{http_code}' -u :$SECRET -H 'Expire: next tuesday' -T x.txt $HOST/";
    let answer = run(&app, folder.path(), refused).await;
    assert!(answer.starts_with("Expire: \"next tuesday\" is not a duration") && answer.ends_with("\n 400"), "{answer}");
    assert_eq!(answer.lines().count(), 2, "one line of reason, then the status: {answer}");
    assert_eq!(app.list().await.len(), 3, "the refused upload stored nothing");
}

#[tokio::test]
async fn x_url_delete_deletes_the_file_with_curl_and_no_secret() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("oops.txt"), b"sent by mistake").unwrap();
    let kept = app.upload("kept.txt", b"stays".to_vec()).await;

    let dump = run(&app, folder.path(), "curl -sS -D - -u :$SECRET -T oops.txt $HOST/").await;
    let (url, url_delete) = (dump.lines().last().unwrap().to_owned(), header_value(&dump, "x-url-delete").unwrap());
    assert!(url_delete.contains(&format!("/f/{}/delete/", id_of(&url))), "{url_delete}");
    assert!(!url_delete.contains(SECRET));

    // Another file's id with this token, or this id with a wrong token, deletes nothing.
    let token = url_delete.rsplit('/').next().unwrap();
    let wrong = [
        format!("{}/f/{}/delete/{token}", app.address, id_of(&kept)),
        format!("{}/f/{}/delete/{}", app.address, id_of(&url), "x".repeat(token.len())),
    ];
    for wrong in wrong {
        let (ok, _, stderr) = shell(&app, folder.path(), &format!("curl -sS -f -X DELETE '{wrong}'")).await;
        assert!(!ok && stderr.contains("404"), "{stderr}");
    }
    assert_eq!(app.download(&url).await, b"sent by mistake");
    // Opening the link in a browser (or a chat app's link preview) deletes nothing.
    let opened = run(&app, folder.path(), &format!("curl -sS -w ' %{{http_code}}' '{url_delete}'")).await;
    assert!(opened.starts_with("this is a deletion link") && opened.ends_with(" 405"), "{opened}");
    assert_eq!(app.download(&url).await, b"sent by mistake");

    let answer =
        run(&app, folder.path(), &format!("URL_DELETE='{url_delete}'; curl -sS -f -X DELETE \"$URL_DELETE\"")).await;
    assert_eq!(answer, "file deleted\n");
    assert_eq!(app.get(&url).await.status(), reqwest::StatusCode::NOT_FOUND);
    assert_eq!(app.download(&kept).await, b"stays");
    let (ok, _, _) = shell(&app, folder.path(), &format!("curl -sS -f -X DELETE '{url_delete}'")).await;
    assert!(!ok, "a deletion link works once");
}

#[tokio::test]
async fn json_upload_answers_carry_the_deletion_link_and_the_expiry() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("a"), b"a").unwrap();

    let script = "curl -sS -u :$SECRET -H 'Accept: application/json' -H 'Expire: 2h' -T a $HOST/";
    let answer: serde_json::Value = serde_json::from_str(&run(&app, folder.path(), script).await).unwrap();
    let left = seconds_from_now(answer["expires_at"].as_str().unwrap());
    assert!((7140..=7200).contains(&left), "{answer}");
    let delete_url = answer["delete_url"].as_str().unwrap();
    assert!(delete_url.contains(&format!("/f/{}/delete/", answer["id"].as_str().unwrap())), "{answer}");

    let script = "curl -sS -u :$SECRET -H 'Accept: application/json' -F file=@a -F file=@a $HOST/";
    let answer: serde_json::Value = serde_json::from_str(&run(&app, folder.path(), script).await).unwrap();
    let files = answer.as_array().unwrap();
    assert!(files.len() == 2 && files.iter().all(|f| f["expires_at"].is_null()), "{answer}");
    assert_ne!(files[0]["delete_url"], files[1]["delete_url"]);
    assert_eq!(app.client.delete(delete_url).send().await.unwrap().status(), reqwest::StatusCode::OK);
    assert_eq!(app.list().await.len(), 2);
}

#[tokio::test]
async fn expires_at_sets_an_exact_time_and_curl_downloads_under_the_name_and_resumes() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::write(folder.path().join("x.bin"), test_bytes(300_000)).unwrap();

    let script = "curl -sS -D - -o /dev/null -u :$SECRET -H 'Expires-At: 2030-01-31T23:59:59Z' -T x.bin $HOST/";
    let dump = run(&app, folder.path(), script).await;
    assert_eq!(header_value(&dump, "x-expires").as_deref(), Some("2030-01-31T23:59:59Z"), "{dump}");
    let url = header_value(&dump, "location").unwrap();

    let saved = folder.path().join("saved");
    std::fs::create_dir(&saved).unwrap();
    run(&app, &saved, &format!("curl -sS -O -J {url}")).await;
    assert_eq!(sha256(&std::fs::read(saved.join("x.bin")).unwrap()), sha256(&test_bytes(300_000)));
    std::fs::write(saved.join("big.iso"), &test_bytes(300_000)[..1000]).unwrap();
    run(&app, &saved, &format!("curl -sS -C - -o big.iso {url}")).await;
    assert_eq!(sha256(&std::fs::read(saved.join("big.iso")).unwrap()), sha256(&test_bytes(300_000)));
}

#[tokio::test]
async fn the_readme_client_lines_work_in_a_shell() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    std::fs::create_dir(folder.path().join("photos")).unwrap();
    std::fs::write(folder.path().join("photos/one.jpg"), test_bytes(40_000)).unwrap();
    std::fs::write(folder.path().join("report.pdf"), test_bytes(70_000)).unwrap();
    std::fs::write(folder.path().join("big.iso"), test_bytes(90_000)).unwrap();

    let links = run(&app, folder.path(), "blobdrop upload report.pdf photos/one.jpg").await;
    assert!(links.lines().count() == 2 && links.lines().all(|l| l.starts_with(&app.address)), "{links}");
    let link =
        run(&app, folder.path(), "blobdrop upload big.iso --expires 7d --max-downloads 3 --note 'for Ann'").await;
    let link = link.trim_end().to_owned();
    let piped = run(&app, folder.path(), "tar czf - photos | blobdrop upload - --name photos.tgz").await;
    assert!(piped.ends_with("/photos.tgz\n"), "{piped}");

    let table = run(&app, folder.path(), "blobdrop ls").await;
    assert!(table.starts_with("ID ") && table.contains("big.iso") && table.contains("0/3"), "{table}");
    let listed: Vec<serde_json::Value> =
        serde_json::from_str(&run(&app, folder.path(), "blobdrop ls --json").await).unwrap();
    assert_eq!(listed.len(), 4);
    let info = run(&app, folder.path(), &format!("blobdrop info {link}")).await;
    assert!(info.contains("for Ann") && info.contains(&sha256(&test_bytes(90_000))), "{info}");

    let out = folder.path().join("out");
    std::fs::create_dir(&out).unwrap();
    run(&app, &out, &format!("blobdrop get {link}")).await;
    assert_eq!(std::fs::read(out.join("big.iso")).unwrap(), test_bytes(90_000));
    run(&app, &out, &format!("blobdrop get {} -o disk.iso", id_of(&link))).await;
    assert_eq!(std::fs::read(out.join("disk.iso")).unwrap(), test_bytes(90_000));
    let piped_out = run(&app, &out, &format!("blobdrop get {} -o - | sha256sum", id_of(piped.trim_end()))).await;
    let archive = app.download(piped.trim_end()).await;
    assert!(piped_out.starts_with(&sha256(&archive)), "{piped_out}");

    run(&app, folder.path(), &format!("blobdrop rm {} {link}", id_of(links.lines().next().unwrap()))).await;
    assert_eq!(app.list().await.len(), 2);
}

#[tokio::test]
async fn get_into_a_full_disk_says_so_in_one_line() {
    let app = spawn_app().await;
    let folder = tempfile::tempdir().unwrap();
    let url = app.upload("x.bin", test_bytes(100_000)).await;

    let (ok, _, stderr) = shell(&app, folder.path(), &format!("blobdrop get {url} -o - > /dev/full")).await;
    assert!(!ok, "{stderr}");
    assert_eq!(
        stderr,
        "blobdrop: the disk is full writing standard output; free some space and run the same command again\n"
    );
}
