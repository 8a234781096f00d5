//! The README, the crates' READMEs and the book (docs/, mdBook) hold together:
//! every page SUMMARY.md lists exists, every relative link in them resolves
//! (to a file, and for `page.md#anchor` to a heading of that page, with
//! mdBook's heading ids), the README stays short and keeps the two commands
//! CI runs.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Markdown outside fenced code blocks; with `blank_code`, the content of
/// inline code spans is blanked.
fn prose(text: &str, blank_code: bool) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        if ticks >= 3 {
            let marker = "`".repeat(ticks);
            match &fence {
                None => fence = Some(marker),
                Some(open) if trimmed.trim_end() == open.as_str() => fence = None,
                Some(_) => {}
            }
            continue;
        }
        if fence.is_some() {
            continue;
        }
        // Blank `code spans` so that `[x](y)` inside them is not a link.
        let mut kept = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
                if blank_code {
                    kept.push(' ');
                }
            } else {
                kept.push(if in_code && blank_code { ' ' } else { c });
            }
        }
        out.push((i + 1, kept));
    }
    out
}

/// `(line, target)` of every inline link `[text](target)`.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in prose(text, true) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            match after.find(')') {
                Some(end) => {
                    found.push((n, after[..end].trim().to_string()));
                    rest = &after[end + 1..];
                }
                None => break,
            }
        }
    }
    found
}

/// mdBook's id of a heading: lowercase, spaces to `-`, only alphanumerics,
/// `-` and `_` kept (code-span backticks dropped first).
fn heading_id(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '_' || c == '-' {
                Some(c.to_ascii_lowercase())
            } else if c.is_whitespace() {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

fn anchors(page: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(page).unwrap();
    prose(&text, false)
        .into_iter()
        .filter_map(|(_, l)| {
            let t = l.trim_start();
            let level = t.chars().take_while(|&c| c == '#').count();
            (1..=6).contains(&level).then(|| heading_id(&t[level..]))
        })
        .collect()
}

fn markdown_files() -> Vec<PathBuf> {
    let root = repo();
    let mut files = vec![root.join("README.md")];
    for krate in ["gcn-embed", "gcn-patch", "gcn-build"] {
        files.push(root.join(krate).join("README.md"));
    }
    let mut stack = vec![root.join("docs/src")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

#[test]
fn every_relative_link_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for file in markdown_files() {
        let text = std::fs::read_to_string(&file).unwrap();
        for (line, target) in links(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let resolved = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            let at = format!(
                "{}:{line}: `{target}`",
                file.strip_prefix(repo()).unwrap().display()
            );
            if !resolved.exists() {
                broken.push(format!("{at}: {} does not exist", resolved.display()));
            } else if let Some(anchor) = anchor {
                if resolved.extension().is_some_and(|e| e == "md")
                    && !anchors(&resolved).contains(anchor)
                {
                    broken.push(format!("{at}: no heading with id `{anchor}`"));
                }
            }
        }
    }
    assert!(
        checked > 50,
        "only {checked} links found: the link parser is broken"
    );
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_summary_page_exists_and_every_page_is_listed() {
    let src = repo().join("docs/src");
    let summary = std::fs::read_to_string(src.join("SUMMARY.md")).unwrap();
    let listed: BTreeSet<PathBuf> = links(&summary)
        .into_iter()
        .map(|(_, t)| src.join(t))
        .collect();
    assert!(listed.len() > 10, "SUMMARY.md lists {} pages", listed.len());
    for page in &listed {
        assert!(
            page.is_file(),
            "SUMMARY.md lists {}, which does not exist",
            page.display()
        );
    }
    for file in markdown_files() {
        if file.starts_with(&src) && !file.ends_with("SUMMARY.md") {
            assert!(
                listed.contains(&file),
                "{} is not in SUMMARY.md: mdBook would not build it",
                file.display()
            );
        }
    }
}

#[test]
fn readme_is_short_and_keeps_the_two_commands() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines; move reference text into docs/"
    );
    for command in [
        "bash tests/setup.sh && cargo run --example select",
        "bash tests/setup.sh && INSTA_UPDATE=no cargo test --workspace --locked",
    ] {
        assert!(
            readme.contains(command),
            "README.md lost the command `{command}`"
        );
    }
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(
        ci.contains("bash tests/setup.sh && INSTA_UPDATE=no cargo test --workspace --locked"),
        ".ci/run must run exactly the README's test command"
    );
}

#[test]
fn the_workflow_page_shows_its_example_manifest_as_it_is() {
    // The page's ```toml block is the kernels.toml its console example runs in.
    let src = repo().join("docs/src/guide");
    let page = std::fs::read_to_string(src.join("workflow.md")).unwrap();
    let manifest = std::fs::read_to_string(src.join("workflow.in/kernels.toml")).unwrap();
    let block = page
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("workflow.md has a ```toml block");
    assert_eq!(
        block, manifest,
        "workflow.md's manifest differs from workflow.in/kernels.toml"
    );
}

#[test]
fn every_included_file_exists_and_the_hip_example_is_the_tested_kernel() {
    // mdBook's `{{#include PATH}}` shows a file as it is: every one the book
    // uses must exist, and the HIP-without-ROCm example must be the kernel
    // file gcn-emu's tests compile and run (gcn-emu/tests/it/no_rocm.rs).
    let mut missing = Vec::new();
    let mut included = Vec::new();
    for page in markdown_files() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (n, line) in text.lines().enumerate() {
            let Some(rest) = line.trim().strip_prefix("{{#include ") else {
                continue;
            };
            let target = rest.trim_end_matches("}}").trim();
            // `PATH:ANCHOR` or `PATH:START:END` select part of the file.
            let path = target.split(':').next().unwrap_or(target);
            let file = page.parent().unwrap().join(path);
            match file.canonicalize() {
                Ok(f) => included.push(f),
                Err(_) => missing.push(format!("{}:{}: {target}", page.display(), n + 1)),
            }
        }
    }
    assert!(
        missing.is_empty(),
        "includes that resolve to no file:\n{}",
        missing.join("\n")
    );
    let hip = repo()
        .join("gcn-emu/tests/kernels/no_rocm.hip")
        .canonicalize()
        .unwrap();
    assert!(
        included.contains(&hip),
        "the book no longer shows gcn-emu/tests/kernels/no_rocm.hip"
    );
    let test = std::fs::read_to_string(repo().join("gcn-emu/tests/it/no_rocm.rs")).unwrap();
    assert!(
        test.contains("build(\"no_rocm\""),
        "gcn-emu/tests/it/no_rocm.rs builds the example"
    );
}
