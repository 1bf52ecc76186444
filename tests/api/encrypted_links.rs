//! Encrypted files with the real tools, both ways: Debian's `age` and `curl` on one side,
//! `blobdrop upload --encrypt` and `blobdrop get LINK#KEY` on the other, with keys and with
//! passphrases (typed on a terminal: a pty), and the ways a file can fail to open.

use std::path::Path;

use tokio::process::Command;

use crate::client_commands::{as_user, blobdrop, blobdrop_fails, blobdrop_with, one_line_failure, run_as_user};
use crate::helpers::{SECRET, TestApp, sha256, spawn_app, spawn_app_with, test_bytes};

/// Runs a program in `folder` (no terminal) that must succeed; returns its standard output.
async fn run(folder: &Path, program: &str, args: &[&str]) -> Vec<u8> {
    let output = Command::new(program).args(args).current_dir(folder).output().await.unwrap();
    assert!(output.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// Runs `program ARGS` on a new terminal, typing `passphrase` at each prompt for one (age reads it
/// from the terminal, never from standard input); returns what the terminal showed.
async fn on_a_terminal(app: &TestApp, folder: &Path, passphrase: &str, program: &str, args: &[&str]) -> String {
    const TYPIST: &str = r#"
import os, pty, sys
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[2], sys.argv[2:])
shown, pending = b"", b""
while True:
    try:
        data = os.read(fd, 4096)
    except OSError:
        break
    if not data:
        break
    shown += data
    pending += data
    if b"passphrase" in pending.lower() and pending.rstrip().endswith(b":"):
        os.write(fd, sys.argv[1].encode() + b"\n")
        pending = b""
sys.stdout.buffer.write(shown)
sys.exit(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
"#;
    let mut command = Command::new("python3");
    command.args(["-c", TYPIST, passphrase, program]).args(args);
    let output = run_as_user(as_user(app, folder, SECRET, &mut command), b"").await;
    let shown = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{program} {args:?} on a terminal: {shown}");
    shown
}

/// `curl -T FILE` to the app, as the owner; returns the link.
async fn curl_upload(app: &TestApp, folder: &Path, file: &str) -> String {
    let out =
        run(folder, "curl", &["-sS", "--fail-with-body", "-u", &format!(":{SECRET}"), "-T", file, &app.address]).await;
    String::from_utf8(out).unwrap().trim().to_owned()
}

/// A new age identity in `folder/NAME`; returns the secret key and the recipient.
async fn age_keygen(folder: &Path, name: &str) -> (String, String) {
    run(folder, "age-keygen", &["-o", name]).await;
    let text = std::fs::read_to_string(folder.join(name)).unwrap();
    let key = text.lines().find(|line| line.starts_with("AGE-SECRET-KEY-1")).unwrap().to_owned();
    let recipient = String::from_utf8(run(folder, "age-keygen", &["-y", name]).await).unwrap();
    (key, recipient.trim().to_owned())
}

fn read(folder: &Path, name: &str) -> Vec<u8> {
    std::fs::read(folder.join(name)).unwrap()
}

#[tokio::test]
async fn a_file_made_with_age_and_put_with_curl_opens_with_blobdrop_get_and_the_key_in_its_link() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path();
    let plaintext = test_bytes(1_000_000);
    std::fs::write(folder.join("report.bin"), &plaintext).unwrap();
    let (key, recipient) = age_keygen(folder, "key.txt").await;
    run(folder, "age", &["-r", &recipient, "-o", "report.bin.age", "report.bin"]).await;
    std::fs::remove_file(folder.join("report.bin")).unwrap();
    let link = format!("{}#{key}", curl_upload(&app, folder, "report.bin.age").await);

    // Saved under the link's name less `.age`, nothing left beside it.
    blobdrop(&app, folder, &["get", &link]).await;
    assert_eq!(sha256(&read(folder, "report.bin")), sha256(&plaintext));
    assert!(!folder.join("report.bin.part").exists());
    // To standard output.
    let stdout = blobdrop_with(&app, folder, &["get", &link, "-o", "-"], SECRET, b"").await;
    assert!(stdout.status.success());
    assert_eq!(sha256(&stdout.stdout), sha256(&plaintext));

    // A get cut off after 300 kB resumes from its last whole chunk.
    std::fs::write(folder.join("resumed.bin.part"), &plaintext[..300_000]).unwrap();
    blobdrop(&app, folder, &["get", &link, "-o", "resumed.bin"]).await;
    assert_eq!(sha256(&read(folder, "resumed.bin")), sha256(&plaintext));
    // A part that is not this file's is found out, removed, and the next get starts afresh.
    std::fs::write(folder.join("other.bin.part"), vec![0; 300_000]).unwrap();
    let refused = blobdrop_fails(&app, folder, &["get", &link, "-o", "other.bin"], SECRET).await;
    assert!(refused.contains("is not this file's"), "{refused}");
    assert!(!folder.join("other.bin").exists() && !folder.join("other.bin.part").exists());
    blobdrop(&app, folder, &["get", &link, "-o", "other.bin"]).await;
    assert_eq!(sha256(&read(folder, "other.bin")), sha256(&plaintext));
}

#[tokio::test]
async fn upload_encrypt_prints_a_link_whose_key_opens_the_file_with_stock_age_and_curl() {
    // A server that takes only age files takes these.
    let app = spawn_app_with(|settings| settings.require_encryption = true).await;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path();
    let plaintext = test_bytes(1_500_000);
    std::fs::write(folder.join("holiday.mov"), &plaintext).unwrap();

    // In requests of 200 KiB: the encryption goes on from one request to the next.
    let out = blobdrop(&app, folder, &["upload", "--encrypt", "holiday.mov", "--chunk-size", "200KiB"]).await;
    let link = out.trim();
    let (page, fragment) = link.split_once('#').unwrap();
    let (key, name) = fragment.split_once('&').unwrap();
    assert!(key.starts_with("AGE-SECRET-KEY-1") && name == "name=holiday.mov", "{link}");
    // The link is the file's page, which decrypts in a browser; its bytes are at /f/.
    let url = &page.replace("/e/", "/f/");
    assert!(page.starts_with(&app.url("/e/")), "{link}");
    // The server knows neither the name nor the key.
    let listed = serde_json::to_string(&app.list().await).unwrap();
    assert!(listed.contains("encrypted.age") && !listed.contains("holiday") && !listed.contains(key), "{listed}");

    std::fs::write(folder.join("key.txt"), format!("{key}\n")).unwrap();
    run(folder, "curl", &["-sS", "--fail", "-o", "download.age", url]).await;
    run(folder, "age", &["-d", "-i", "key.txt", "-o", "by-age.mov", "download.age"]).await;
    assert_eq!(sha256(&read(folder, "by-age.mov")), sha256(&plaintext));
    blobdrop(&app, folder, &["get", link]).await;
    assert_eq!(sha256(&read(folder, "holiday.mov")), sha256(&plaintext), "saved under its own name");

    // Standard input goes up encrypted too, in one PUT of no known length.
    let piped =
        blobdrop_with(&app, folder, &["upload", "-", "--encrypt", "--name", "notes.txt"], SECRET, b"from a pipe").await;
    assert!(piped.status.success(), "{}", String::from_utf8_lossy(&piped.stderr));
    let link = String::from_utf8(piped.stdout).unwrap();
    let (page, fragment) = link.trim().split_once('#').unwrap();
    let url = &page.replace("/e/", "/f/");
    std::fs::write(folder.join("notes-key.txt"), fragment.split('&').next().unwrap()).unwrap();
    run(folder, "curl", &["-sS", "--fail", "-o", "notes.age", url]).await;
    assert_eq!(run(folder, "age", &["-d", "-i", "notes-key.txt", "notes.age"]).await, b"from a pipe");
}

#[tokio::test]
async fn a_passphrase_opens_files_both_ways_and_is_asked_on_the_terminal() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path();
    let plaintext = test_bytes(300_000);
    std::fs::write(folder.join("plans.pdf"), &plaintext).unwrap();
    let passphrase = "correct horse battery staple";

    // age -p, then blobdrop get with the passphrase from the environment.
    on_a_terminal(&app, folder, passphrase, "age", &["-p", "-o", "plans.pdf.age", "plans.pdf"]).await;
    let link = curl_upload(&app, folder, "plans.pdf.age").await;
    let mut get = Command::new(env!("CARGO_BIN_EXE_blobdrop"));
    get.args(["get", &link, "--passphrase", "-o", "from-age.pdf"]).env("BLOBDROP_PASSPHRASE", passphrase);
    let output = run_as_user(as_user(&app, folder, SECRET, &mut get), b"").await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    assert_eq!(sha256(&read(folder, "from-age.pdf")), sha256(&plaintext));
    std::fs::write(folder.join("wrong.txt"), "not it\n").unwrap();
    let args = ["get", &link, "--passphrase-file", "wrong.txt", "-o", "wrong.pdf"];
    let refused = blobdrop_fails(&app, folder, &args, SECRET).await;
    assert!(refused.contains("does not open this file"), "{refused}");
    assert!(!folder.join("wrong.pdf").exists() && !folder.join("wrong.pdf.part").exists());

    // blobdrop upload --passphrase asks twice on the terminal; age -d asks once.
    let shown = on_a_terminal(
        &app,
        folder,
        passphrase,
        env!("CARGO_BIN_EXE_blobdrop"),
        &["upload", "--passphrase", "plans.pdf"],
    )
    .await;
    assert_eq!(shown.matches("passphrase: ").count(), 2, "{shown}");
    // The last line that shows a link, after the progress bar drawn on the same line.
    let line = shown.lines().find(|line| line.contains("/e/")).unwrap();
    let link = line[line.rfind("http://").unwrap()..].trim();
    let (page, fragment) = link.split_once('#').unwrap();
    let url = &page.replace("/e/", "/f/");
    assert_eq!(fragment, "name=plans.pdf", "the link carries no key");
    run(folder, "curl", &["-sS", "--fail", "-o", "download.age", url]).await;
    on_a_terminal(&app, folder, passphrase, "age", &["-d", "-o", "by-age.pdf", "download.age"]).await;
    assert_eq!(sha256(&read(folder, "by-age.pdf")), sha256(&plaintext));
    let asks = blobdrop_fails(&app, folder, &["get", link], SECRET).await;
    assert!(asks.contains("add --passphrase"), "{asks}");
    std::fs::write(folder.join("passphrase.txt"), format!("{passphrase}\n")).unwrap();
    blobdrop(&app, folder, &["get", link, "--passphrase-file", "passphrase.txt"]).await;
    assert_eq!(sha256(&read(folder, "plans.pdf")), sha256(&plaintext));
}

#[tokio::test]
async fn a_wrong_key_a_cut_file_a_swapped_chunk_and_a_changed_header_each_fail_in_one_line_and_save_nothing() {
    let app = spawn_app().await;
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path();
    std::fs::write(folder.join("ledger.csv"), test_bytes(200_000)).unwrap();
    let (key, recipient) = age_keygen(folder, "key.txt").await;
    let (other_key, _) = age_keygen(folder, "other.txt").await;
    run(folder, "age", &["-r", &recipient, "-o", "ledger.age", "ledger.csv"]).await;
    let sound = read(folder, "ledger.age");
    let mac_line = sound.windows(5).position(|window| window == b"\n--- ").unwrap() + 1;
    let payload = mac_line + sound[mac_line..].iter().position(|&byte| byte == b'\n').unwrap() + 1 + 16;
    const SEALED: usize = 65_536 + 16;

    let mut cut = sound.clone();
    cut.truncate(payload + 2 * SEALED); // at a chunk boundary: each chunk left authenticates
    let mut swapped = sound.clone();
    swapped[payload..payload + 2 * SEALED].rotate_left(SEALED);
    let mut changed = sound.clone();
    // Another base64 character of the MAC (the third: any value is a valid encoding there).
    changed[mac_line + 6] = if changed[mac_line + 6] == b'A' { b'B' } else { b'A' };
    let cases = [
        (sound, other_key.as_str(), "does not open this file"),
        (cut, key.as_str(), "it is truncated"),
        (swapped, key.as_str(), "a chunk does not authenticate"),
        (changed, key.as_str(), "its header was changed"),
    ];
    for (bytes, key, reason) in cases {
        let link = format!("{}#{key}", app.upload("ledger.csv.age", bytes).await);
        let output = blobdrop_with(&app, folder, &["get", &link, "-o", "out.csv"], SECRET, b"").await;
        let refused = one_line_failure(output, &["get"]);
        assert!(refused.contains(reason), "{reason}: {refused}");
        assert!(!folder.join("out.csv").exists() && !folder.join("out.csv.part").exists(), "{reason}");
    }
}
