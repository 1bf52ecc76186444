//! `blobdrop completions` and `blobdrop man` through the real tools: bash completes from the
//! generated script, man and groff read the generated page.

use std::process::Stdio;

use tokio::io::AsyncWriteExt;
use tokio::process::Command;

async fn blobdrop_output(args: &[&str]) -> Vec<u8> {
    let output = Command::new(env!("CARGO_BIN_EXE_blobdrop")).args(args).output().await.unwrap();
    assert!(output.status.success(), "blobdrop {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    output.stdout
}

/// What bash's programmable completion offers for the words `line` (the last one being
/// completed), with the script `blobdrop completions bash` printed sourced into a bare bash.
async fn bash_completes(script: &std::path::Path, line: &[&str]) -> Vec<String> {
    // As bash calls a completion function: COMP_WORDS and COMP_CWORD set, then
    // `FUNCTION COMMAND WORD PREVIOUS-WORD`; the function is the one `complete -p` names.
    let words = line.iter().map(|word| format!("'{word}'")).collect::<Vec<_>>().join(" ");
    let program = format!(
        r#"source '{}'
function=$(complete -p blobdrop | sed -E 's/.*-F ([^ ]+).*/\1/')
COMP_WORDS=({words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
"$function" blobdrop "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}""#,
        script.display()
    );
    let output = Command::new("bash").args(["--norc", "--noprofile", "-c", &program]).output().await.unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    String::from_utf8(output.stdout).unwrap().lines().map(str::to_owned).collect()
}

#[tokio::test]
async fn bash_completes_subcommands_and_their_flags_from_the_generated_script() {
    let folder = tempfile::tempdir().unwrap();
    let script = folder.path().join("blobdrop.bash");
    std::fs::write(&script, blobdrop_output(&["completions", "bash"]).await).unwrap();

    assert_eq!(bash_completes(&script, &["blobdrop", "up"]).await, ["upload"]);
    let everything = bash_completes(&script, &["blobdrop", ""]).await;
    for subcommand in ["upload", "ls", "get", "serve", "completions", "man"] {
        assert!(everything.iter().any(|word| word == subcommand), "{subcommand} in {everything:?}");
    }
    assert_eq!(bash_completes(&script, &["blobdrop", "upload", "--max-d"]).await, ["--max-downloads"]);
    assert_eq!(bash_completes(&script, &["blobdrop", "completions", "fi"]).await, ["fish"]);

    for shell in ["zsh", "fish", "powershell"] {
        let script = String::from_utf8(blobdrop_output(&["completions", shell]).await).unwrap();
        assert!(script.contains("upload"), "{shell}: {script}");
    }
}

/// Runs `command` with `input` on its standard input; returns what it printed.
async fn fed(command: &mut Command, input: &[u8]) -> std::process::Output {
    let mut child = command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    child.stdin.take().unwrap().write_all(input).await.unwrap();
    child.wait_with_output().await.unwrap()
}

#[tokio::test]
async fn man_reads_the_generated_page_and_groff_finds_nothing_to_warn_about() {
    let page = blobdrop_output(&["man"]).await;

    // groff with every warning on, output discarded: stderr is where a broken page shows.
    let output = fed(Command::new("groff").args(["-man", "-Tutf8", "-ww", "-z"]), &page).await;
    assert!(output.status.success() && output.stderr.is_empty(), "{}", String::from_utf8_lossy(&output.stderr));

    let output = fed(Command::new("man").args(["-l", "-"]).env("MANPAGER", "cat").env("MANWIDTH", "100"), &page).await;
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let text = String::from_utf8(output.stdout).unwrap();
    for expected in
        ["NAME", "blobdrop - Self-hosted file sharing", "--shared-secret-file", "BLOBDROP_PORT", "blobdrop-upload(1)"]
    {
        assert!(text.contains(expected), "{expected} in {text}");
    }

    // --dir writes the page of every subcommand the main page points to.
    let folder = tempfile::tempdir().unwrap();
    blobdrop_output(&["man", "--dir", folder.path().to_str().unwrap()]).await;
    for page in ["blobdrop.1", "blobdrop-upload.1", "blobdrop-serve.1", "blobdrop-completions.1"] {
        assert!(folder.path().join(page).is_file(), "{page}");
    }
}
