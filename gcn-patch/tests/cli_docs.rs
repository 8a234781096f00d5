//! The documentation's command-line examples and reference cannot rot:
//!
//! * every ```` ```console ```` block in the book (`docs/src/**/*.md`) is a
//!   trycmd case: its `$ gcn-patch …` lines run in the page's `<page>.in/`
//!   directory, and the output and exit status must be what the page shows;
//! * `docs/src/reference/cli-options.md` must be what `gcn-patch
//!   markdown-help` prints now (the reference is generated from clap).
//!
//! To update a page after an intended change of output:
//! `TRYCMD=overwrite cargo test -p gcn-patch --test cli_docs` (then read the diff).

use std::path::{Path, PathBuf};
use std::process::Command;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `name` on PATH, or a panic saying how to install it (no silent skip).
fn tool(name: &str, install: &str) -> PathBuf {
    std::env::var_os("PATH")
        .iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("`{name}` not found on PATH: {install}"))
}

#[test]
fn book_cli_examples_run() {
    let pages = repo().join("docs/src");
    let mut with_examples = Vec::new();
    for entry in walkdir::WalkDir::new(&pages) {
        let entry = entry.unwrap();
        let path = entry.path();
        if path.extension().is_some_and(|e| e == "md")
            && std::fs::read_to_string(path)
                .unwrap()
                .contains("```console")
        {
            with_examples.push(path.to_path_buf());
        }
    }
    // The book has live examples; a glob that finds none would test nothing.
    assert!(
        with_examples
            .iter()
            .any(|p| p.ends_with("reference/diagnostics.md")),
        "no ```console examples found under {}",
        pages.display()
    );
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("gcn-patch", Path::new(env!("CARGO_BIN_EXE_gcn-patch")))
        // The trial flows (docs/src/guide/trial-flows.md) run IREE and Triton too.
        .register_bin(
            "iree-compile",
            tool("iree-compile", "pip install iree-base-compiler==3.13.0"),
        )
        .register_bin(
            "python3",
            tool(
                "python3",
                "run `bash tests/setup.sh` (Python 3 with triton==3.9.0)",
            ),
        )
        // Plain text output: the examples are what a log or a pipe shows.
        .env("NO_COLOR", "1")
        .env("CLICOLOR", "0");
    for page in &with_examples {
        cases.case(page);
    }
    cases.run();
}

#[test]
fn cli_reference_is_generated_from_the_parser() {
    let out = Command::new(env!("CARGO_BIN_EXE_gcn-patch"))
        .arg("markdown-help")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let generated = String::from_utf8(out.stdout).unwrap();
    let page = repo().join("docs/src/reference/cli-options.md");
    let checked_in = std::fs::read_to_string(&page).unwrap_or_default();
    assert!(
        generated == checked_in,
        "{} is stale: the command line changed. Regenerate it with\n  \
         cargo run -p gcn-patch -- markdown-help > docs/src/reference/cli-options.md",
        page.display()
    );
}
