//! `gcn-patch import`: bring dumped AMDGPU assembly under the manifest.
//!
//! Each imported file is copied to `asm/<processor>/<file name>` next to the
//! manifest, pinned (`sha256`), and gets one `[[kernel]]` with one
//! `[[kernel.source]]` appended to the manifest (created if absent) that records
//! the dump's target (`targets`), its kernel symbols (`symbols`), where it came
//! from (`imported-from`) and, for IREE dumps, every executable name it serves
//! (`iree-executables`).
//!
//! Recognized inputs, by content (`.amdgcn_target` plus at least one
//! `.amdhsa_kernel`), so any AMDGPU `.s` works:
//! * IREE linked dumps `module_<module>_linked_rocm_hsaco_fb.rocmasm` (kernel
//!   name `<module>`, one executable per `<fn>_dispatch_<n>` kernel symbol prefix);
//! * IREE unlinked dumps `module_<fn>_dispatch_<n>_rocm_hsaco_fb.rocmasm`
//!   (`--iree-hal-link-executables=false`; kernel and executable `<fn>_dispatch_<n>`);
//! * hipcc `--save-temps` device `.s`, Triton `.amdgcn`, any other AMDGPU `.s`
//!   (kernel name: the file stem made an identifier; for hipcc's
//!   `<input>-hip-amdgcn-amd-amdhsa-<processor>.s`, the `<input>` part).
//!
//! A directory argument imports every file below it with one of the
//! extensions [`EXTENSIONS`] that is AMDGPU asm (others are skipped and
//! counted). Importing a file already imported with the same bytes is a no-op;
//! a different file with the same destination is an error that says how to re-pin.
//!
//! Triton (see [`crate::stage::triton`]): a `.amdgcn` in Triton's dump layout
//! (`<hash>/<kernel>.amdgcn` beside its other stages) or cache layout
//! (`<key>/<kernel>.amdgcn` with `__grp__<kernel>.json`) is copied to
//! `asm/<processor>/<hash or key>/<kernel>.amdgcn` and gets a `triton = { … }`
//! entry: the kernel name, the dump hash (which names the override directory)
//! and the launch metadata (`shared`, `num_warps`, `warp_size`) from the cache
//! entry itself or, for a dump, from the cache entry with the same bytes in
//! [`ImportOptions::triton_caches`]. A dump and its cache entry given together
//! are imported once, with both.
//!
//! Binaries (given as files, not found in directories): an AMDGPU code
//! object (`.co`, `.hsaco`), a clang offload bundle, a HIP host object or
//! executable (`.hip_fatbin`) or an IREE `.vmfb` is lifted
//! ([`crate::stage::lift`]) member by member into `asm/<processor>/<stem>.s`; the
//! source records `imported-from` and the binary's `imported-sha256`, and a
//! note says how many lines are raw encodings.
//!
//! **One program, one kernel.** A dump or code object of a program already
//! in the manifest for another processor becomes a new `[[kernel.source]]`
//! of that `[[kernel]]`, not a new kernel: same recognized name (hipcc stem,
//! IREE module or executable, file stem, Triton kernel) and the same kernel
//! symbols. So the members of one container, hipcc's per-arch dumps and
//! aiter's `hsa/gfx942/X.co` + `hsa/gfx950/X.co` are one kernel whose
//! code object the runtime selects by the GPU (`gcn-embed`).
//!
//! **Program names.** A file-stem name ending in `_<processor>` (from
//! `hist-gfx942.co`, `hist_gfx1100.s`) loses the suffix when the rest names
//! another input or a kernel or imported file of the manifest, so one
//! program dumped per processor is one kernel. Nothing already imported is
//! renamed: a file whose `asm` a source records keeps that source's kernel,
//! and another processor's build joins the kernel whose sources came from
//! that program's files.
//!
//! Other importers build an [`Imported`] and call [`add_to_manifest`].

/// Kept here for callers of `import::identifier`; defined beside lift, which names members with it.
pub use crate::stage::lift::identifier;

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting};
use crate::base::hash::sha256_hex;
use crate::base::parse;
use crate::base::progress::Observer;
use crate::base::progress::{self, Item, Tally, Task};
use crate::config::edit::{ManifestEdit, NewKernel, NewSource};
use crate::config::manifest::{KernelSpec, Manifest, SourceSpec};
use crate::ops::{env, Tools};

mod add;
mod recognize;

pub use add::{add_to_manifest, relative_to};
use add::{manifest_dir, same_file, Session, Stage};
use recognize::*;
pub use recognize::{
    dispatch_prefix, hipcc_stem, iree_origin, is_binary, recognize, recognize_binary,
    recognize_with, strip_processor,
};

/// File extensions a directory import looks at.
pub const EXTENSIONS: &[&str] = &["rocmasm", "s", "amdgcn", "asm"];

/// Header of a manifest created by `import`.
const NEW_MANIFEST: &str =
    "# kernels.toml: created by `gcn-patch import`; schema in docs/src/reference/kernels-toml.md.\n";

/// Where a dump came from, as far as the file tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// IREE `module_<module>_linked_rocm_hsaco_fb.rocmasm`.
    IreeLinked {
        /// The `<module>` part.
        module: String,
    },
    /// IREE `module_<exec>_rocm_hsaco_fb.rocmasm` with linking off.
    IreeUnlinked {
        /// The executable name `<fn>_dispatch_<n>`.
        executable: String,
    },
    /// Any other AMDGPU asm (hipcc, Triton, hand-written).
    Plain,
}

/// One recognized dump, ready to be added to a manifest.
#[derive(Debug, Clone)]
pub struct Imported {
    /// The file as given.
    pub from: PathBuf,
    /// Its bytes (empty once `import` has staged them on disk: `staged`).
    pub bytes: Vec<u8>,
    /// Where `import` keeps the bytes until they go under `asm/` (none:
    /// they are in `bytes`).
    pub staged: Option<PathBuf>,
    /// sha256 of `bytes` (lowercase hex): the pin.
    pub sha256: String,
    /// Kernel name to use in the manifest (a Rust identifier).
    pub kernel: String,
    /// The dump's target ID (from `.amdgcn_target`).
    pub target: TargetId,
    /// Kernel symbols (`.amdhsa_kernel`), in file order.
    pub symbols: Vec<String>,
    /// IREE executables the file serves (empty unless IREE).
    pub iree_executables: Vec<String>,
    /// Where it came from.
    pub origin: Origin,
    /// Triton's names and launch metadata (Triton dump or cache layouts only).
    pub triton: Option<crate::config::triton::TritonKernel>,
    /// For lifted binaries: the file name to write under `asm/<processor>/`,
    /// the binary's sha256, and how many of its instructions are raw
    /// encodings (raw, all).
    pub lifted: Option<LiftedFrom>,
}

/// Where a lifted source came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiftedFrom {
    /// File name of the asm (`<stem>.s`).
    pub file_name: String,
    /// sha256 of the binary (the whole file given).
    pub sha256: String,
    /// Instructions kept as raw encodings.
    pub raw: usize,
    /// Instructions in all.
    pub instructions: usize,
}

/// How to import.
#[derive(Debug, Clone, Default)]
pub struct ImportOptions {
    /// Triton cache directories searched for the launch metadata of a Triton
    /// dump (the `gcn-patch` CLI passes `$TRITON_CACHE_DIR`, else `~/.triton/cache`).
    pub triton_caches: Vec<PathBuf>,
    /// The toolchain that lifts binaries (none: importing a binary is an
    /// error that says to install LLVM).
    pub toolchain: Option<crate::stage::toolchain::Toolchain>,
    /// Binaries lifted at once (none: one per CPU). Lifting is most of an
    /// import's time; the manifest is still written in argument order.
    pub jobs: Option<usize>,
}

impl ImportOptions {
    /// The options of `gcn-patch import`: `triton_caches` searched for
    /// Triton launch metadata (none given: Triton's own cache, see
    /// [`ImportOptions::with_triton_caches`], read through
    /// [`crate::ops::env`]); binaries lifted with the toolchain `tools`
    /// finds (looked for only when an input is a binary), `jobs` at once
    /// (default: the number of CPUs).
    pub fn resolve(
        triton_caches: Vec<PathBuf>,
        jobs: Option<usize>,
        tools: &Tools,
        inputs: &[PathBuf],
    ) -> Result<ImportOptions, Diagnostics> {
        let mut options = ImportOptions::with_triton_caches(triton_caches, &env);
        options.jobs = jobs;
        if inputs.iter().any(|p| is_binary(p)) {
            options.toolchain = Some(tools.find(None)?);
        }
        Ok(options)
    }

    /// Import options searching `triton_caches`, or when none is given
    /// Triton's own cache: `$TRITON_CACHE_DIR`, else `$HOME/.triton/cache`
    /// (`env` reads the environment).
    pub fn with_triton_caches(
        triton_caches: Vec<PathBuf>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> ImportOptions {
        let triton_caches = if triton_caches.is_empty() {
            env("TRITON_CACHE_DIR")
                .map(PathBuf::from)
                .or_else(|| env("HOME").map(|h| Path::new(&h).join(".triton/cache")))
                .into_iter()
                .collect()
        } else {
            triton_caches
        };
        ImportOptions {
            triton_caches,
            toolchain: None,
            jobs: None,
        }
    }
}

/// What happened to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Copied to `asm` and added as kernel `kernel`.
    Added {
        /// Manifest kernel name.
        kernel: String,
        /// Destination, relative to the manifest directory.
        asm: PathBuf,
    },
    /// Added as a new source (another processor) of the existing kernel `kernel`.
    AddedSource {
        /// Manifest kernel name.
        kernel: String,
        /// Destination, relative to the manifest directory.
        asm: PathBuf,
    },
    /// Same bytes already imported at `asm`: nothing written.
    Unchanged {
        /// Manifest kernel name.
        kernel: String,
        /// Destination, relative to the manifest directory.
        asm: PathBuf,
    },
}

/// Result of [`import`].
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// One outcome per imported file, in argument order.
    pub outcomes: Vec<Outcome>,
    /// Files in directories that were not AMDGPU asm (skipped).
    pub skipped: Vec<PathBuf>,
    /// What the user should know (raw lines of lifted binaries), one per item.
    pub notes: Vec<Diagnostic>,
    /// What weakens later checks (a Triton dump imported without its cache
    /// entry: Triton limits checks that are off), one per item.
    pub warnings: Vec<Diagnostic>,
}

/// The warning for a Triton kernel imported without some launch metadata:
/// which Triton limits checks are then off or weaker, and how to get the metadata.
fn triton_metadata_warning(imported: &Imported, caches: &[PathBuf]) -> Option<Diagnostic> {
    let t = imported.triton.as_ref()?;
    let mut off = Vec::new();
    if t.shared.is_none() {
        off.push(
            "LDS: Triton's `shared` (the LDS bytes it allocates) is unknown, so a patched kernel's LDS is only kept within the dump's own",
        );
    }
    if t.num_warps.is_none() || t.warp_size.is_none() {
        off.push("workgroup size: `num_warps × warp_size` is unknown, so `.max_flat_workgroup_size` is not checked against the launch");
    }
    if t.warp_size.is_none() {
        off.push("wave size: Triton's `warp_size` is unknown, so the wave size is only kept as the dump's");
    }
    if off.is_empty() {
        return None;
    }
    let searched = if caches.is_empty() {
        "no cache directory".to_string()
    } else {
        caches
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    Some(Diagnostic::warning(Code::TritonMetadataMissing, format!(
        "{}: Triton kernel `{}` was imported without its cache entry (`{}.json`, searched: {searched}); Triton limits checks off or weaker: {}. Import it again with its Triton cache directory (the TRITON_CACHE_DIR of the run that dumped it), or with the cache entry directory itself",
        imported.from.display(),
        t.kernel,
        t.kernel,
        off.join("; ")
    )).about(Setting::TritonCache))
}

/// `gcn-patch import`: import `inputs` (files or directories) into the
/// manifest at `manifest_path`: copy dumps (or lift binaries) under `asm/`,
/// pin them and add them to the manifest. [`ImportOptions::resolve`] gives
/// the options the command uses.
///
/// The manifest is read once and written once, atomically, at the end (one
/// [`ManifestEdit`] document): until then the project is as it was, and an
/// interrupted import leaves it so. Each input is imported or not as a
/// whole: one that fails (not AMDGPU asm, a lift error, a changed file
/// imported before) adds nothing, the others are imported all the same,
/// and the result is the first failure's error with a note counting what
/// was imported; running the command again after fixing it imports only
/// what is missing. Binaries already imported (the same file, with the
/// `imported-sha256` their sources record, their asm unchanged) are not
/// lifted again.
///
/// `progress` is told each phase (binaries lifted, [`Task::Lift`]; text
/// files read, [`Task::Import`]) and each file finished.
pub fn import(
    manifest_path: &Path,
    inputs: &[PathBuf],
    opts: &ImportOptions,
    progress: Option<&dyn Observer>,
) -> Result<Report, Diagnostics> {
    let mut report = Report::default();
    let mut session = Session::open(manifest_path)?;
    let dir = manifest_dir(manifest_path);
    let stage = Stage::new(&dir)?;
    // What an input gave: files to add, or outcomes already known.
    enum Got {
        Found(Vec<Imported>),
        Known(Vec<Outcome>),
    }
    let mut got: Vec<Got> = Vec::new();
    let mut errors = Vec::new();
    // Binaries are lifted first, several at once (`jobs`), each staged on
    // disk as soon as it is lifted; every input is looked at once, and the
    // results are taken in argument order below (`None`: a directory or a
    // text file, read there).
    let model = &session.model;
    let is_lifted = |p: &PathBuf| !p.is_dir() && is_binary(p);
    let binaries = inputs.iter().filter(|p| is_lifted(p)).count();
    let workers = crate::base::jobs::workers(opts.jobs);
    let tally = (binaries > 0).then(|| Tally::start(progress, Task::Lift, binaries, workers));
    let lifted = crate::base::jobs::run(
        inputs.iter().collect(),
        workers,
        &crate::base::jobs::Unlimited,
        |p: &PathBuf| {
            if !is_lifted(p) {
                return None;
            }
            let counted = Counted {
                tally: tally.as_ref(),
                file: p,
                outcome: std::cell::Cell::new(progress::Outcome::Failed),
            };
            if let Some(known) = already_imported(model, &dir, p) {
                counted.outcome.set(progress::Outcome::Done);
                return Some(Ok(Got::Known(known)));
            }
            let r = recognize_binary(p, opts).and_then(|mut members| {
                for m in &mut members {
                    stage.put(m)?;
                }
                Ok(Got::Found(members))
            });
            if r.is_ok() {
                counted.outcome.set(progress::Outcome::Done);
            }
            Some(r)
        },
    );
    // The text files, in argument order (a directory's sorted), read after
    // the binaries (their own progress phase).
    enum Text<'a> {
        Dir(&'a PathBuf, Vec<PathBuf>),
        File(&'a PathBuf),
    }
    let mut texts = Vec::new();
    let mut text_slots = Vec::new();
    for (input, lifted) in inputs.iter().zip(lifted) {
        let lifted = lifted.unwrap_or_else(|p| {
            Some(Err(p
                .into_diagnostic(&format!("importing `{}`", input.display()))
                .into()))
        });
        if let Some(members) = lifted {
            match members {
                Ok(g) => got.push(g),
                Err(d) => errors.extend(d.0),
            }
        } else if input.is_dir() {
            let mut files = Vec::new();
            walk(input, &mut files)?;
            files.sort();
            text_slots.push(got.len());
            got.push(Got::Found(Vec::new()));
            texts.push(Text::Dir(input, files));
        } else {
            text_slots.push(got.len());
            got.push(Got::Found(Vec::new()));
            texts.push(Text::File(input));
        }
    }
    let count = texts
        .iter()
        .map(|t| match t {
            Text::Dir(_, files) => files.len(),
            Text::File(_) => 1,
        })
        .sum();
    let tally = (count > 0).then(|| Tally::start(progress, Task::Import, count, 1));
    let read = |f: &Path| {
        let r = recognize_with(f, opts).and_then(|mut i| stage.put(&mut i).map(|()| i));
        if let Some(t) = &tally {
            let outcome = if r.is_ok() {
                progress::Outcome::Done
            } else {
                progress::Outcome::Failed
            };
            t.finished(Item::File(f), outcome);
        }
        r
    };
    for (text, slot) in texts.into_iter().zip(text_slots) {
        let mut found = Vec::new();
        match text {
            Text::Dir(input, files) => {
                for f in files {
                    match read(&f) {
                        Ok(i) => found.push(i),
                        Err(_) => report.skipped.push(f),
                    }
                }
                if found.is_empty() {
                    errors.push(
                        Diagnostic::error(Code::NotAmdgpuAsm, format!(
                            "`{}` holds no AMDGPU assembly",
                            input.display()
                        ))
                        .with_note(format!(
                            "looked at files ending in .{} ({} skipped: no `.amdgcn_target` or no `.amdhsa_kernel`)",
                            EXTENSIONS.join(", ."),
                            report.skipped.len()
                        ))
                        .with_help("pass the dump directory (e.g. IREE's --iree-hal-dump-executable-files-to=DIR) or the .s/.rocmasm/.amdgcn files"),
                    );
                }
            }
            Text::File(input) => match read(input) {
                Ok(i) => found.push(i),
                Err(d) => errors.push(d),
            },
        }
        got[slot] = Got::Found(found);
    }
    // Triton pairs and program names look across inputs: flatten, keeping
    // the known outcomes in their places.
    let mut found = Vec::new();
    let mut order: Vec<Result<usize, Outcome>> = Vec::new();
    for g in got {
        match g {
            Got::Found(f) => {
                for i in f {
                    order.push(Ok(found.len()));
                    found.push(i);
                }
            }
            Got::Known(k) => order.extend(k.into_iter().map(Err)),
        }
    }
    let before = found.len();
    let mut found = merge_triton_pairs(found);
    if found.len() != before {
        // Merged pairs: the outcomes follow the merged list.
        order.retain(|o| o.is_err());
        order.extend((0..found.len()).map(Ok));
    }
    name_programs(&mut found, &session.model);
    let mut added = 0;
    for o in order {
        let imported = match o {
            Err(known) => {
                report.outcomes.push(known);
                continue;
            }
            Ok(i) => &found[i],
        };
        report
            .warnings
            .extend(triton_metadata_warning(imported, &opts.triton_caches));
        if let Some(l) = &imported.lifted {
            if l.raw > 0 {
                report.notes.push(Diagnostic::note(
                    Code::RawEncodings,
                    format!(
                        "{} ({}): {} of {} instructions are raw encodings (`.long … ; raw: …`): \
                         the assembler does not re-encode them to the same bytes",
                        imported.from.display(),
                        imported.target.name(),
                        l.raw,
                        l.instructions
                    ),
                ));
            }
        }
        match session.add(imported) {
            Ok(outcome) => {
                if !matches!(outcome, Outcome::Unchanged { .. }) {
                    added += 1;
                }
                report.outcomes.push(outcome);
            }
            Err(d) => errors.extend(d.0),
        }
    }
    session.finish()?;
    if let Some(first) = errors.first_mut() {
        if added > 0 {
            first.notes.push(format!(
                "the other inputs were imported ({added} file{} added to {}); import the failed ones again once fixed (what is imported already is left as it is)",
                if added == 1 { "" } else { "s" },
                manifest_path.display()
            ));
        }
        return Err(Diagnostics(errors));
    }
    Ok(report)
}

/// Reports a lifted binary to the lift phase's [`Tally`] when dropped: when
/// its lift returns and when it unwinds (counted as failed).
struct Counted<'a> {
    tally: Option<&'a Tally<'a>>,
    file: &'a Path,
    outcome: std::cell::Cell<progress::Outcome>,
}

impl Drop for Counted<'_> {
    fn drop(&mut self) {
        if let Some(t) = self.tally {
            t.finished(Item::File(self.file), self.outcome.get());
        }
    }
}

/// The outcomes of importing binary `path` again, without lifting it:
/// when `m` has sources imported from that file (by `imported-from`) with
/// its current sha256 (`imported-sha256`), and each source's asm is still
/// the one its pin names. None otherwise (then it is lifted and added).
fn already_imported(m: &Manifest, dir: &Path, path: &Path) -> Option<Vec<Outcome>> {
    let same_file = same_file(dir, path);
    let mut sources = m.kernels.iter().flat_map(|k| {
        k.sources.iter().filter_map(move |s| {
            let from = s.imported_from.as_deref()?;
            s.imported_sha256.as_ref()?;
            Some((k, s, from))
        })
    });
    // Cheap test first: any source naming the file at all.
    if !sources.any(|(_, _, from)| same_file(from)) {
        return None;
    }
    let sha = sha256_hex(&std::fs::read(path).ok()?);
    let mut out = Vec::new();
    for k in &m.kernels {
        for s in &k.sources {
            let (Some(from), Some(isha)) = (&s.imported_from, &s.imported_sha256) else {
                continue;
            };
            if !same_file(from) {
                continue;
            }
            let asm = std::fs::read(&s.asm).ok()?;
            if *isha != sha || s.sha256.as_deref() != Some(sha256_hex(&asm).as_str()) {
                return None;
            }
            out.push(Outcome::Unchanged {
                kernel: k.name.clone(),
                asm: s.rel.clone(),
            });
        }
    }
    (!out.is_empty()).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn triton_caches_default_to_tritons_own() {
        let env = |vars: &'static [(&'static str, &'static str)]| {
            move |k: &str| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| v.to_string())
            }
        };
        let caches = |given: Vec<PathBuf>, vars| {
            ImportOptions::with_triton_caches(given, &env(vars)).triton_caches
        };
        let both = &[("TRITON_CACHE_DIR", "/tc"), ("HOME", "/h")];
        assert_eq!(caches(vec![], both), [PathBuf::from("/tc")]);
        assert_eq!(
            caches(vec![], &[("HOME", "/h")]),
            [PathBuf::from("/h/.triton/cache")]
        );
        assert!(caches(vec![], &[]).is_empty());
        assert_eq!(caches(vec!["/x".into()], both), [PathBuf::from("/x")]);
    }

    #[test]
    fn iree_names() {
        assert_eq!(
            iree_origin("module_mm_linked_rocm_hsaco_fb.rocmasm"),
            Some(Origin::IreeLinked {
                module: "mm".into()
            })
        );
        assert_eq!(
            iree_origin("module_f_dispatch_1_rocm_hsaco_fb.rocmasm"),
            Some(Origin::IreeUnlinked {
                executable: "f_dispatch_1".into()
            })
        );
        assert_eq!(iree_origin("x.s"), None);
        assert_eq!(
            dispatch_prefix("f_dispatch_12_matmul_4x4_f32"),
            Some("f_dispatch_12")
        );
        assert_eq!(dispatch_prefix("f_dispatch_3"), Some("f_dispatch_3"));
        assert_eq!(dispatch_prefix("my_kernel"), None);
        assert_eq!(identifier("x-hip-amdgcn-gfx942"), "x_hip_amdgcn_gfx942");
        assert_eq!(identifier("9a"), "k_9a");
        assert_eq!(hipcc_stem("saxpy-hip-amdgcn-amd-amdhsa-gfx942"), "saxpy");
        assert_eq!(hipcc_stem("saxpy"), "saxpy");
    }

    #[test]
    fn processor_suffixes() {
        assert_eq!(strip_processor("hist_gfx942"), Some("hist"));
        assert_eq!(strip_processor("hist_gfx1100"), Some("hist"));
        assert_eq!(strip_processor("hist_gfx9_4_generic"), Some("hist"));
        assert_eq!(strip_processor("hist_gfx90a"), Some("hist"));
        assert_eq!(strip_processor("gfx942"), None);
        assert_eq!(strip_processor("hist"), None);
        assert_eq!(strip_processor("histgfx942"), None);
        assert_eq!(strip_processor("hist_gfx9999"), None);
        assert_eq!(program_key("../in/hist-gfx942.co"), "hist");
        assert_eq!(program_key("x-hip-amdgcn-amd-amdhsa-gfx942.s"), "x");
    }
}
