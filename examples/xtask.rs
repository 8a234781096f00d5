//! An xtask driving gcn-patch through its public API alone, the way a
//! project's `cargo xtask` would: import a dump into a new manifest, patch
//! it (edit the work file, save the patch), check every job, build the code
//! objects.
//!
//! ```text
//! cargo run --example xtask -- PROJECT_DIR DUMP.s
//! ```
//!
//! `PROJECT_DIR` gets `kernels.toml`, `asm/`, `patches/` and `out/`; the
//! patch puts an `s_nop 0` before the first `s_endpgm`. One line per step
//! goes to stdout; an error is printed with its diagnostics and the exit
//! code is 1.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gcn_patch::base::diag::Diagnostics;
use gcn_patch::ops::build::{BuildRequest, Layout};
use gcn_patch::ops::check::{check, CheckOptions};
use gcn_patch::ops::import::{import, ImportOptions, Outcome};
use gcn_patch::ops::quilt::{edit, save, EditOptions, SaveOptions, Saved};
use gcn_patch::ops::Tools;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [project, dump] = args.as_slice() else {
        eprintln!("usage: xtask PROJECT_DIR DUMP.s");
        return ExitCode::from(2);
    };
    match xtask(Path::new(project), Path::new(dump)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(d) => {
            eprintln!("{d}");
            ExitCode::FAILURE
        }
    }
}

fn xtask(project: &Path, dump: &Path) -> Result<(), Diagnostics> {
    let tools = Tools::default();
    let manifest = project.join("kernels.toml");

    // Import: the dump is copied under asm/, pinned and added as a kernel.
    let inputs = [dump.to_path_buf()];
    let options = ImportOptions::resolve(vec![], None, &tools, &inputs)?;
    let report = import(&manifest, &inputs, &options, None)?;
    let kernel = match &report.outcomes[..] {
        [Outcome::Added { kernel, asm }] => {
            println!("import: kernel `{kernel}` from {}", asm.display());
            kernel.clone()
        }
        other => panic!("one new kernel expected, got {other:?}"),
    };

    // Patch: edit the work file as a person would, then save it as a patch.
    let work = edit(&EditOptions {
        manifest: manifest.clone(),
        kernel: kernel.clone(),
        ..EditOptions::default()
    })?;
    let text = std::fs::read_to_string(&work.path).expect("read the work file");
    let at = text
        .find("\ts_endpgm")
        .expect("the dump ends a kernel with s_endpgm");
    let edited = format!("{}\ts_nop 0\n{}", &text[..at], &text[at..]);
    std::fs::write(&work.path, edited).expect("write the work file");
    match save(&SaveOptions {
        manifest: manifest.clone(),
        kernel: kernel.clone(),
        name: "nop".into(),
        tools: tools.clone(),
    })? {
        Saved::Patch {
            rel,
            added,
            removed,
            ..
        } => {
            println!("patch: {} (+{added} -{removed})", rel.display())
        }
        Saved::NoChange => panic!("the edit was not saved"),
    }

    // Check: every job patched, checked, assembled, linked and verified.
    let checked = check(
        &CheckOptions {
            manifest: manifest.clone(),
            tools: tools.clone(),
            ..CheckOptions::default()
        },
        None,
    )?;
    if !checked.errors.is_empty() {
        return Err(Diagnostics(checked.errors));
    }
    let passed = checked.jobs.iter().filter(|j| j.passed).count();
    println!("check: {passed} of {} jobs pass", checked.jobs.len());

    // Build: the code objects under out/, and kernels.lock beside the manifest.
    let out: PathBuf = project.join("out");
    let built = gcn_patch::ops::build::build(
        &BuildRequest {
            manifest: manifest.clone(),
            out: out.clone(),
            layout: Layout::Build(vec![]),
            locked: false,
            jobs: None,
            tools,
        },
        None,
    )?;
    for row in &built.rows {
        for f in &row.files {
            println!(
                "build: {} {} {} {}",
                row.kernel,
                row.target.name(),
                out.join(f).display(),
                row.sha256
            );
        }
    }
    println!("lock: {}", built.lock.display());
    Ok(())
}
