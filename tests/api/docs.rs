//! The documentation against the code: every setting is in the configuration reference once (and
//! nowhere else as a row), and every relative link between the README and docs/ resolves.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use clap::CommandFactory;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Variables read outside the command line's own list: the log filter, read by `telemetry`, and
/// the client's passphrase, which no flag takes (a flag's value shows in `ps`).
const READ_ELSEWHERE: &[&str] = &["RUST_LOG", "BLOBDROP_PASSPHRASE"];

/// Every environment variable of every command and subcommand, from clap's own definition.
fn settings_in_code() -> BTreeSet<String> {
    fn walk(command: &clap::Command, found: &mut BTreeSet<String>) {
        for arg in command.get_arguments() {
            if let Some(env) = arg.get_env() {
                found.insert(env.to_string_lossy().into_owned());
            }
        }
        for sub in command.get_subcommands() {
            walk(sub, found);
        }
    }
    let mut found = BTreeSet::new();
    walk(&blobdrop::cli::Cli::command(), &mut found);
    found.extend(READ_ELSEWHERE.iter().map(|name| (*name).to_owned()));
    found
}

/// The variables of a page's table rows: a row whose first cell is a variable in backticks.
fn table_rows(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split_once('`').map(|(name, _)| name.to_owned()))
        .filter(|name| name.starts_with("BLOBDROP_") || READ_ELSEWHERE.contains(&name.as_str()))
        .collect()
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![Path::new(ROOT).join("README.md"), Path::new(ROOT).join("BENCHMARKS.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(Path::new(ROOT).join("docs"))
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

#[test]
fn every_setting_is_in_the_configuration_reference_once_and_nowhere_else() {
    let reference = std::fs::read_to_string(Path::new(ROOT).join("docs/configuration.md")).unwrap();
    let rows = table_rows(&reference);
    let listed: BTreeSet<String> = rows.iter().cloned().collect();
    let twice: Vec<&String> = listed.iter().filter(|name| rows.iter().filter(|row| row == name).count() > 1).collect();
    assert!(twice.is_empty(), "listed twice in docs/configuration.md: {twice:?}");
    let code = settings_in_code();
    let missing: Vec<&String> = code.difference(&listed).collect();
    assert!(missing.is_empty(), "settings the code reads that docs/configuration.md does not list: {missing:?}");
    let gone: Vec<&String> = listed.difference(&code).collect();
    assert!(gone.is_empty(), "docs/configuration.md lists settings the code no longer reads: {gone:?}");
    for page in pages().iter().filter(|page| !page.ends_with("docs/configuration.md")) {
        let rows = table_rows(&std::fs::read_to_string(page).unwrap());
        assert!(rows.is_empty(), "{} documents settings again ({rows:?}): link to the reference", page.display());
    }
}

/// GitHub's anchor of a heading: lower case, punctuation dropped but `-` and `_`, spaces as `-`.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ' '))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a Markdown page's headings (outside code blocks).
fn anchors(text: &str) -> BTreeSet<String> {
    let mut fenced = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
        } else if !fenced && line.starts_with('#') {
            found.insert(anchor(line.trim_start_matches('#')));
        }
    }
    found
}

/// The targets of a page's `[text](target)` links, outside code blocks and code spans.
fn links(text: &str) -> Vec<String> {
    let mut fenced = false;
    let mut found = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        let outside_code: String = line.split('`').step_by(2).collect::<Vec<_>>().join(" ");
        let mut rest = outside_code.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            if let Some(end) = rest.find(')') {
                found.push(rest[..end].to_owned());
                rest = &rest[end..];
            }
        }
    }
    found
}

#[test]
fn every_relative_link_between_the_readme_and_the_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for target in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (file, fragment) = target.split_once('#').unwrap_or((&target, ""));
            let path = if file.is_empty() { page.clone() } else { page.parent().unwrap().join(file) };
            if !path.exists() {
                broken.push(format!("{}: {target} (no file {})", page.display(), path.display()));
                continue;
            }
            if !fragment.is_empty() {
                let target_text = std::fs::read_to_string(&path).unwrap_or_default();
                if !anchors(&target_text).contains(fragment) {
                    broken.push(format!("{}: {target} (no heading #{fragment})", page.display()));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} relative links read");
    assert!(broken.is_empty(), "{} broken links:\n{}", broken.len(), broken.join("\n"));
}

#[test]
fn the_readme_stays_short() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(lines <= 250, "README.md has {lines} lines: move the detail into docs/");
}
