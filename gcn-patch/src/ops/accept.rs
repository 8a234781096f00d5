//! `gcn-patch accept KERNEL`: record a kernel's current findings in its
//! accepted-findings file ([`crate::config::accept`]).

use std::path::{Path, PathBuf};

use super::Tools;
use crate::base::diag::{Code, Diagnostic, Diagnostics, Severity};
use crate::config::accept::{Finding, DIR};
use crate::config::manifest::Manifest;

/// What [`accept`] recorded.
#[derive(Debug, Clone)]
pub struct Accepted {
    /// The file written, relative to the manifest directory.
    pub rel: PathBuf,
    /// How many findings it lists.
    pub findings: usize,
    /// Whether the kernel's `accepted` key was added to the manifest.
    pub manifest_updated: bool,
}

/// What `gcn-patch accept` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct AcceptOptions {
    /// The manifest.
    pub manifest: PathBuf,
    /// The kernel's `name`.
    pub kernel: String,
    /// The LLVM tools (their assembler's version decides the skew
    /// normalization, as in a build).
    pub tools: Tools,
}

/// `gcn-patch accept KERNEL`: record every warning and note of the kernel's
/// jobs (every source × target, as `check` plans them) and point the
/// kernel's `accepted` key at the file. A job with errors is refused: only
/// findings that do not stop the build can be acknowledged.
pub fn accept(opts: &AcceptOptions) -> Result<Accepted, Diagnostics> {
    let (manifest, kernel, tools) = (opts.manifest.as_path(), opts.kernel.as_str(), &opts.tools);
    let m = Manifest::load(manifest)?;
    let assembler_major = tools.assembler_major(Some(&m));
    let ki = m.kernel_index(kernel)?;
    let plan = crate::pipeline::plan(&m, &[])?;
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for job in plan.jobs.iter().filter(|j| j.kernel == ki) {
        match crate::pipeline::prepare_every_finding(&m, &plan, job, assembler_major) {
            Ok(p) => {
                for d in &p.notes {
                    let k = Finding::of(&job.target, d);
                    if !lines.contains(&k) {
                        lines.push(k);
                    }
                }
            }
            Err(d) => errors.extend(d.0.into_iter().filter(|d| d.severity == Severity::Error)),
        }
    }
    if !errors.is_empty() {
        if let Some(first) = errors.first_mut() {
            first.notes.push(format!(
                "while accepting the findings of kernel `{kernel}`: nothing was written"
            ));
            first.help.push(
                "errors cannot be accepted: fix them first (`gcn-patch check` lists them)".into(),
            );
        }
        return Err(Diagnostics(errors));
    }
    let rel = match &m.kernels[ki].accepted_rel {
        Some(r) => r.clone(),
        None => PathBuf::from(DIR).join(format!("{kernel}.txt")),
    };
    let path = m.dir.join(&rel);
    let mut text = format!(
        "# Findings of kernel `{kernel}` acknowledged with `gcn-patch accept {kernel}`:\n\
         # check, build and gcn-build do not show them (they count them). A finding\n\
         # not listed here is shown. Delete a line to see that finding again.\n\
         # One finding a line, tab-separated: target, file:line, severity[code]: message.\n"
    );
    for l in &lines {
        text.push_str(&l.to_line());
        text.push('\n');
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| io("create", dir, e))?;
    }
    crate::base::output::write_atomic(&path, text.as_bytes()).map_err(|e| io("write", &path, e))?;
    let manifest_updated = m.kernels[ki].accepted_rel.is_none();
    if manifest_updated {
        let new_text = add_key(&m, ki, &rel)?;
        crate::base::output::write_atomic(&m.path, new_text.as_bytes())
            .map_err(|e| io("write", &m.path, e))?;
    }
    Ok(Accepted {
        rel,
        findings: lines.len(),
        manifest_updated,
    })
}

fn io(what: &str, path: &Path, e: std::io::Error) -> Diagnostics {
    Diagnostic::error(
        Code::ReadFailed,
        format!("cannot {what} `{}`: {e}", path.display()),
    )
    .with_help("check the path and its permissions")
    .into()
}

/// The manifest text with `accepted = "<rel>"` after kernel `ki`'s `name` line.
fn add_key(m: &Manifest, ki: usize, rel: &Path) -> Result<String, Diagnostics> {
    let mut lines: Vec<String> = m.text.split_inclusive('\n').map(str::to_string).collect();
    let at = m.kernels[ki].line.saturating_sub(1).min(lines.len());
    let quoted = toml::Value::String(rel.to_string_lossy().replace('\\', "/")).to_string();
    if at < lines.len() && !lines[at].ends_with('\n') {
        lines[at].push('\n');
    }
    lines.insert((at + 1).min(lines.len()), format!("accepted = {quoted}\n"));
    let text = lines.concat();
    Manifest::parse(&text, &m.path)?;
    Ok(text)
}
