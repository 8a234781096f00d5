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
//! Triton (see [`crate::ops::triton`]): a `.amdgcn` in Triton's dump layout
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
//! Other importers build an [`Imported`] and call [`add_to_manifest`].

/// Kept here for callers of `import::identifier`; defined beside lift, which names members with it.
pub use crate::stage::lift::identifier;
pub mod command;

use std::path::{Path, PathBuf};

use gcn_embed::TargetId;

use crate::base::diag::{Code, Diagnostic, Diagnostics, Setting};
use crate::base::parse;
use crate::config::manifest::{sha256_hex, Manifest};

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
    /// Its bytes.
    pub bytes: Vec<u8>,
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
    pub triton: Option<crate::stage::check::launch::TritonKernel>,
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
    /// entry: launch checks that are off), one per item.
    pub warnings: Vec<Diagnostic>,
}

/// The warning for a Triton kernel imported without some launch metadata:
/// which launch checks are then off or weaker, and how to get the metadata.
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
        "{}: Triton kernel `{}` was imported without its cache entry (`{}.json`, searched: {searched}); launch checks off or weaker: {}. Import it again with its Triton cache directory (the TRITON_CACHE_DIR of the run that dumped it), or with the cache entry directory itself",
        imported.from.display(),
        t.kernel,
        t.kernel,
        off.join("; ")
    )).about(Setting::TritonCache))
}

/// Import `inputs` (files or directories) into the manifest at `manifest_path`.
pub fn import(manifest_path: &Path, inputs: &[PathBuf]) -> Result<Report, Diagnostics> {
    import_with(manifest_path, inputs, &ImportOptions::default())
}

/// [`import`] with options.
pub fn import_with(
    manifest_path: &Path,
    inputs: &[PathBuf],
    opts: &ImportOptions,
) -> Result<Report, Diagnostics> {
    let mut report = Report::default();
    let mut found = Vec::new();
    let mut errors = Vec::new();
    // Binaries are lifted first, several at once (`jobs`); every input is
    // looked at once, and the results are taken in argument order below
    // (`None`: a directory or a text file, read there).
    let lifted = crate::base::jobs::run(
        inputs.iter().collect(),
        crate::base::jobs::workers(opts.jobs),
        &crate::base::jobs::Unlimited,
        |p: &PathBuf| (!p.is_dir() && is_binary(p)).then(|| recognize_binary(p, opts)),
    );
    for (input, lifted) in inputs.iter().zip(lifted) {
        let lifted = lifted.unwrap_or_else(|p| {
            Some(Err(p
                .into_diagnostic(&format!("importing `{}`", input.display()))
                .into()))
        });
        if let Some(members) = lifted {
            match members {
                Ok(members) => found.extend(members),
                Err(d) => errors.extend(d.0),
            }
        } else if input.is_dir() {
            let mut files = Vec::new();
            walk(input, &mut files)?;
            files.sort();
            let before = found.len();
            for f in files {
                match recognize_with(&f, opts) {
                    Ok(i) => found.push(i),
                    Err(_) => report.skipped.push(f),
                }
            }
            if found.len() == before {
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
        } else {
            match recognize_with(input, opts) {
                Ok(i) => found.push(i),
                Err(d) => errors.push(d),
            }
        }
    }
    if !errors.is_empty() {
        return Err(Diagnostics(errors));
    }
    let found = merge_triton_pairs(found);
    // All or nothing: an import that fails part-way (a changed file
    // imported again, a full disk) is rolled back.
    let manifest_before = ManifestBefore::read(manifest_path);
    let mut created = Vec::new();
    let mut manifest = load_existing(manifest_path)?;
    for imported in &found {
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
        match add_one(manifest_path, manifest.as_ref(), imported) {
            Ok(added) => {
                created.extend(added.created);
                report.outcomes.push(added.outcome);
                if added.manifest.is_some() {
                    manifest = added.manifest;
                }
            }
            Err(d) => {
                roll_back(manifest_path, manifest_before, &created);
                return Err(d);
            }
        }
    }
    Ok(report)
}

/// A binary `import` lifts: an ELF file, an offload bundle or an IREE module
/// (by its first bytes).
pub fn is_binary(path: &Path) -> bool {
    let mut head = [0u8; 256];
    let n = std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read(&mut f, &mut head))
        .unwrap_or(0);
    let head = &head[..n];
    head.starts_with(b"\x7fELF")
        || head.starts_with(crate::stage::lift::container::BUNDLE_MAGIC)
        || head.starts_with(crate::stage::lift::container::COMPRESSED_MAGIC)
        || head.get(4..8) == Some(b"IREE")
        || (head.starts_with(b"PK\x03\x04") && head.windows(9).any(|w| w == b"module.fb"))
}

/// Lift every AMDGPU code object of the binary `path` (see
/// [`crate::stage::lift::container`]): one [`Imported`] per member, named after
/// the file's stem (an IREE module: after its executable).
pub fn recognize_binary(path: &Path, opts: &ImportOptions) -> Result<Vec<Imported>, Diagnostics> {
    use crate::stage::lift::{container, lift, LiftOptions};
    let tc = opts.toolchain.as_ref().ok_or_else(|| {
        Diagnostic::error(
            Code::LiftNeedsLlvm,
            format!(
            "cannot import {}: lifting a code object needs LLVM (llvm-objdump, llvm-mc, ld.lld)",
            path.display()
        ),
        )
        .with_help("install LLVM 22 with AMDGPU: apt-get install -y clang-22 lld-22 llvm-22")
    })?;
    let bytes = std::fs::read(path).map_err(|e| io_error("read", path, e))?;
    let contents = container::code_objects(&bytes, path)?;
    let binary_sha = sha256_hex(&bytes);
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_else(|| "lifted".into());
    let mut out = Vec::new();
    for m in &contents.members {
        let origin = if contents.kind == container::Kind::CodeObject {
            path.to_path_buf()
        } else {
            PathBuf::from(format!("{} ({})", path.display(), m.label))
        };
        let lifted = lift(&m.bytes, &origin, &LiftOptions::new(tc))?;
        let symbols = lifted.kernels.clone();
        let mut iree_executables = Vec::new();
        if contents.kind == container::Kind::Vmfb {
            let mut seen = std::collections::HashSet::new();
            for s in &symbols {
                let e = dispatch_prefix(s).unwrap_or(s.as_str()).to_string();
                if seen.insert(e.clone()) {
                    iree_executables.push(e);
                }
            }
        }
        let kernel = match iree_executables.as_slice() {
            [one] => identifier(one),
            _ => identifier(hipcc_stem(&stem)),
        };
        // One file per target under asm/<processor>/; features in the name
        // when the target pins them (two members of one processor).
        let suffix = if lifted.target.pinned_features() > 0 {
            format!("-{}", identifier(&lifted.target.name()))
        } else {
            String::new()
        };
        let asm = lifted.asm.into_bytes();
        out.push(Imported {
            from: path.to_path_buf(),
            sha256: sha256_hex(&asm),
            bytes: asm,
            kernel,
            target: lifted.target,
            symbols,
            iree_executables,
            origin: Origin::Plain,
            triton: None,
            lifted: Some(LiftedFrom {
                file_name: format!("{stem}{suffix}.s"),
                sha256: binary_sha.clone(),
                raw: lifted.raw_instructions,
                instructions: lifted.instructions,
            }),
        });
    }
    Ok(out)
}

/// The files below `dir` with an importable extension, following symlinks
/// (a symlink loop is an error naming the link, not an endless walk).
fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Diagnostic> {
    for entry in walkdir::WalkDir::new(dir).follow_links(true) {
        let entry = entry.map_err(|e| {
            let at = e.path().unwrap_or(dir).to_path_buf();
            io_error("read directory", &at, e.into())
        })?;
        let path = entry.path();
        if !entry.file_type().is_dir()
            && path
                .extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| EXTENSIONS.contains(&e))
        {
            out.push(path.to_path_buf());
        }
    }
    Ok(())
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> Diagnostic {
    Diagnostic::error(
        Code::ReadFailed,
        format!("cannot {what} `{}`: {e}", path.display()),
    )
    .with_help("check the path and its permissions")
}

/// A Triton dump and its cache entry (same bytes) imported together become
/// one import: the dump's hash with the cache's launch metadata.
fn merge_triton_pairs(found: Vec<Imported>) -> Vec<Imported> {
    let mut out: Vec<Imported> = Vec::new();
    for i in found {
        let Some(t) = &i.triton else {
            out.push(i);
            continue;
        };
        let twin = out.iter_mut().find(|o| {
            o.triton
                .as_ref()
                .is_some_and(|ot| ot.kernel == t.kernel && ot.hash.is_some() != t.hash.is_some())
                && o.sha256 == i.sha256
        });
        match twin {
            Some(o) => {
                let ot = o.triton.as_mut().expect("checked");
                let (dump, cache) = if ot.hash.is_some() {
                    (ot.clone(), t)
                } else {
                    (t.clone(), &*ot)
                };
                let merged = crate::stage::check::launch::TritonKernel {
                    shared: cache.shared.or(dump.shared),
                    num_warps: cache.num_warps.or(dump.num_warps),
                    warp_size: cache.warp_size.or(dump.warp_size),
                    ..dump
                };
                if t.hash.is_some() {
                    o.from = i.from.clone();
                }
                *ot = merged;
            }
            None => out.push(i),
        }
    }
    out
}

/// Read `path` and recognize it as AMDGPU asm: target, kernel symbols, IREE names.
pub fn recognize(path: &Path) -> Result<Imported, Diagnostic> {
    recognize_with(path, &ImportOptions::default())
}

/// [`recognize`] with options (Triton cache directories).
pub fn recognize_with(path: &Path, opts: &ImportOptions) -> Result<Imported, Diagnostic> {
    let bytes = std::fs::read(path).map_err(|e| io_error("read", path, e))?;
    let not_amdgpu = |why: &str| {
        Diagnostic::error(Code::NotAmdgpuAsm, format!("`{}` is not AMDGPU assembly: {why}", path.display()))
            .with_help("import a dumped AMDGPU .s/.rocmasm/.amdgcn file: IREE's --iree-hal-dump-executable-files-to, hipcc --save-temps (the device .s), or Triton's .amdgcn")
    };
    let text = std::str::from_utf8(&bytes).map_err(|_| not_amdgpu("it is not UTF-8 text"))?;
    let file = parse::parse(text);
    let (_, target_text) = file
        .target_directive()
        .ok_or_else(|| not_amdgpu("it has no `.amdgcn_target` directive"))?;
    let target = TargetId::parse(&target_text).map_err(|e| {
        not_amdgpu(&format!(
            "its `.amdgcn_target \"{target_text}\"` is not a known AMDGPU target ({e})"
        ))
    })?;
    let symbols: Vec<String> = file
        .kernels()
        .into_iter()
        .filter(|k| k.descriptor.is_some())
        .map(|k| k.name)
        .collect();
    if symbols.is_empty() {
        return Err(not_amdgpu(
            "it defines no kernel (no `.amdhsa_kernel` block)",
        ));
    }
    let file_name = path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let origin = iree_origin(&file_name).unwrap_or(Origin::Plain);
    let (kernel, iree_executables) = match &origin {
        Origin::IreeLinked { module } => {
            let mut execs: Vec<String> = Vec::new();
            let mut seen = std::collections::HashSet::new();
            for s in &symbols {
                let e = dispatch_prefix(s).unwrap_or(s.as_str()).to_string();
                if seen.insert(e.clone()) {
                    execs.push(e);
                }
            }
            (identifier(module), execs)
        }
        Origin::IreeUnlinked { executable } => (identifier(executable), vec![executable.clone()]),
        Origin::Plain => {
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            (identifier(hipcc_stem(&stem)), Vec::new())
        }
    };
    let sha256 = sha256_hex(&bytes);
    let triton =
        crate::ops::triton::recognize(path, &sha256, target.processor.name, &opts.triton_caches);
    let kernel = match &triton {
        Some(t) => identifier(&t.kernel),
        None => kernel,
    };
    Ok(Imported {
        from: path.to_path_buf(),
        bytes,
        sha256,
        kernel,
        target,
        symbols,
        iree_executables,
        origin,
        triton,
        lifted: None,
    })
}

/// IREE dump file names: `module_<x>_linked_rocm_hsaco_fb.rocmasm` /
/// `module_<exec>_rocm_hsaco_fb.rocmasm`.
pub fn iree_origin(file_name: &str) -> Option<Origin> {
    let inner = file_name
        .strip_prefix("module_")?
        .strip_suffix("_rocm_hsaco_fb.rocmasm")?;
    if let Some(module) = inner.strip_suffix("_linked") {
        return Some(Origin::IreeLinked {
            module: module.to_string(),
        });
    }
    Some(Origin::IreeUnlinked {
        executable: inner.to_string(),
    })
}

/// `<fn>_dispatch_<n>` prefix of an IREE kernel symbol `<fn>_dispatch_<n>_<suffix>`.
pub fn dispatch_prefix(symbol: &str) -> Option<&str> {
    let mut search = 0;
    let mut best = None;
    while let Some(i) = symbol[search..].find("_dispatch_") {
        let at = search + i + "_dispatch_".len();
        let digits = symbol[at..].bytes().take_while(u8::is_ascii_digit).count();
        if digits > 0 {
            let end = at + digits;
            if end == symbol.len() || symbol.as_bytes()[end] == b'_' {
                best = Some(&symbol[..end]);
            }
        }
        search = at;
    }
    best
}

/// hipcc `--save-temps` names device asm `<input>-hip-amdgcn-amd-amdhsa-<processor>.s`:
/// the `<input>` part; other stems unchanged.
pub fn hipcc_stem(stem: &str) -> &str {
    match stem.find("-hip-amdgcn-amd-amdhsa") {
        Some(i) if i > 0 => &stem[..i],
        _ => stem,
    }
}

fn write_dump(dest: &Path, bytes: &[u8]) -> Result<(), Diagnostic> {
    if let Some(parent) = dest.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io_error("create directory", parent, e))?;
    }
    crate::base::output::write_atomic(dest, bytes).map_err(|e| io_error("write", dest, e))
}

/// `path` relative to directory `base` (`..` where needed), `/`-separated:
/// how `imported-from` names the imported file, so that the manifest reads
/// the same in another checkout. Absolute when the two share no root.
pub fn relative_to(path: &Path, base: &Path) -> PathBuf {
    let abs = |p: &Path| {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            std::env::current_dir().unwrap_or_default().join(p)
        };
        // Resolve `.`/`..` and symlinks where the path exists.
        p.canonicalize().unwrap_or(p)
    };
    let (p, b) = (abs(path), abs(base));
    let pc: Vec<_> = p.components().collect();
    let bc: Vec<_> = b.components().collect();
    let common = pc.iter().zip(&bc).take_while(|(x, y)| x == y).count();
    if common == 0 {
        return p;
    }
    let mut out = PathBuf::new();
    for _ in common..bc.len() {
        out.push("..");
    }
    for c in &pc[common..] {
        out.push(c);
    }
    out
}

/// The `[[kernel.source]]` table of an import (with a leading blank line).
/// `imported-from` is relative to the manifest directory `dir`.
fn source_entry(imported: &Imported, rel_text: &str, dir: &Path) -> String {
    let from = relative_to(&imported.from, dir)
        .to_string_lossy()
        .replace('\\', "/");
    let mut entry = format!(
        "\n[[kernel.source]]\nasm = {}\nsha256 = {}\ntargets = {}\nsymbols = {}\nimported-from = {}\n",
        quoted(rel_text),
        quoted(&imported.sha256),
        list(&[imported.target.name()]),
        list(&imported.symbols),
        quoted(&from),
    );
    if let Some(l) = &imported.lifted {
        entry.push_str(&format!("imported-sha256 = {}\n", quoted(&l.sha256)));
    }
    if let Some(t) = &imported.triton {
        entry.push_str(&format!("triton = {}\n", t.to_toml()));
    }
    entry
}

/// The kernel of `m` that `imported` is another processor's build of: the
/// same recognized name, the same kernel symbols, and no source for that
/// processor yet.
fn same_program<'m>(
    m: &'m Manifest,
    imported: &Imported,
) -> Option<&'m crate::config::manifest::KernelSpec> {
    let mut want = imported.symbols.clone();
    want.sort();
    m.kernels.iter().find(|k| {
        if !k.name.eq_ignore_ascii_case(&imported.kernel) || k.sources.is_empty() {
            return false;
        }
        let same_symbols = k.sources.iter().all(|s| {
            let mut have = s.symbols.clone();
            have.sort();
            have == want
        });
        let processor_free = k.sources.iter().all(|s| {
            s.targets
                .iter()
                .all(|t| t.processor.name != imported.target.processor.name)
        });
        same_symbols && processor_free
    })
}

/// `text` with `source` inserted at the end of the `[[kernel]]` whose
/// `name` is on line `name_line` (before the next `[[kernel]]`, or at the end).
fn insert_source(text: &str, name_line: usize, source: &str) -> String {
    let lines: Vec<&str> = text.split_inclusive('\n').collect();
    let next = lines
        .iter()
        .enumerate()
        .skip(name_line)
        .find(|(_, l)| l.trim() == "[[kernel]]")
        .map(|(i, _)| i);
    let mut out = String::with_capacity(text.len() + source.len() + 1);
    match next {
        Some(i) => {
            // Before the blank and comment lines that lead into the next kernel.
            let mut at = i;
            while at > name_line
                && (lines[at - 1].trim().is_empty() || lines[at - 1].trim_start().starts_with('#'))
            {
                at -= 1;
            }
            out.extend(lines[..at].iter().copied());
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(source);
            out.extend(lines[at..].iter().copied());
        }
        None => {
            out.push_str(text);
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(source);
        }
    }
    out
}

/// TOML basic string.
fn quoted(s: &str) -> String {
    toml::Value::String(s.to_string()).to_string()
}

fn list(items: &[String]) -> String {
    let q: Vec<String> = items.iter().map(|s| quoted(s)).collect();
    format!("[{}]", q.join(", "))
}

/// Where a lifted binary's asm goes: `rel` (`asm/<processor>/<file_name>`),
/// unless that is taken by a *different* binary of the same file name (its
/// source records another `imported-from`; aiter ships
/// `fmha_v3_fwd/MI300/X.co` and `fmha_v3_fwd/MI308/X.co` for one
/// processor). Then the binary's own parent directories are added, the
/// nearest first, until the place is free or holds this binary:
/// `asm/<processor>/MI308/X.s`, with `MI308` returned as the qualifier for
/// its kernel name. Dumps, and re-imports of the same path, keep `rel` (a
/// changed file is then an error that says how to replace it).
fn distinct_place(
    dir: &Path,
    rel: PathBuf,
    file_name: &str,
    existing: Option<&Manifest>,
    imported: &Imported,
) -> (PathBuf, Option<String>) {
    let (Some(m), Some(_)) = (existing, &imported.lifted) else {
        return (rel, None);
    };
    // `imported-from` as written (relative to the manifest; older manifests
    // hold the path as given, possibly absolute): the same file if it
    // resolves to the same place.
    let resolve = |p: &Path| {
        let p = if p.is_absolute() {
            p.to_path_buf()
        } else {
            dir.join(p)
        };
        p.canonicalize().unwrap_or(p)
    };
    let from = relative_to(&imported.from, dir);
    let from_abs = resolve(&from);
    let same_file = |f: &str| {
        f == from.to_string_lossy().replace('\\', "/") || resolve(Path::new(f)) == from_abs
    };
    // Taken by another binary: the file is there with other bytes, and its
    // source says it came from elsewhere.
    let taken_by_another = |rel: &Path| {
        let Ok(old) = std::fs::read(dir.join(rel)) else {
            return false;
        };
        sha256_hex(&old) != imported.sha256
            && m.kernels
                .iter()
                .flat_map(|k| &k.sources)
                .find(|s| s.rel == rel)
                .and_then(|s| s.imported_from.as_deref())
                .is_some_and(|f| !same_file(f))
    };
    if !taken_by_another(&rel) {
        return (rel, None);
    }
    let parents: Vec<String> = imported
        .from
        .parent()
        .map(|p| {
            p.components()
                .filter_map(|c| match c {
                    std::path::Component::Normal(n) => Some(n.to_string_lossy().into_owned()),
                    _ => None,
                })
                .collect()
        })
        .unwrap_or_default();
    let processor_dir = PathBuf::from("asm").join(imported.target.processor.name);
    for n in 1..=parents.len() {
        let dirs = &parents[parents.len() - n..];
        let mut candidate = processor_dir.clone();
        candidate.extend(dirs);
        let candidate = candidate.join(file_name);
        if !taken_by_another(&candidate) {
            return (candidate, Some(dirs.join("_")));
        }
    }
    (rel, None)
}

/// Copy one recognized dump under `asm/<processor>/` and append its kernel to
/// the manifest (created if absent). Idempotent for the same bytes.
pub fn add_to_manifest(manifest_path: &Path, imported: &Imported) -> Result<Outcome, Diagnostics> {
    let existing = load_existing(manifest_path)?;
    add_one(manifest_path, existing.as_ref(), imported).map(|added| added.outcome)
}

/// The manifest at `manifest_path`, if there is one.
fn load_existing(manifest_path: &Path) -> Result<Option<Manifest>, Diagnostics> {
    if manifest_path.exists() {
        Manifest::load(manifest_path).map(Some)
    } else {
        Ok(None)
    }
}

/// What [`add_one`] did.
struct Added {
    outcome: Outcome,
    /// The asm file it created (none when the file was there already).
    created: Option<PathBuf>,
    /// The manifest it wrote (none when it wrote none).
    manifest: Option<Manifest>,
}

/// The directory `asm/` paths of a manifest are relative to.
fn manifest_dir(manifest_path: &Path) -> PathBuf {
    match manifest_path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// [`add_to_manifest`] onto `existing`, the manifest as it is now (loaded
/// once per import, not once per file: a library import adds thousands).
fn add_one(
    manifest_path: &Path,
    existing: Option<&Manifest>,
    imported: &Imported,
) -> Result<Added, Diagnostics> {
    let dir = manifest_dir(manifest_path);
    let file_name = match &imported.lifted {
        Some(l) => l.file_name.clone(),
        None => imported
            .from
            .file_name()
            .map(|f| f.to_string_lossy().into_owned())
            .unwrap_or_else(|| "dump.s".into()),
    };
    let mut rel = PathBuf::from("asm").join(imported.target.processor.name);
    // Triton names every kernel file `<kernel>.amdgcn`: keep its directory.
    if imported.triton.is_some() {
        if let Some(dir) = imported
            .from
            .parent()
            .and_then(|d| d.file_name())
            .filter(|d| crate::ops::triton::is_hash_dir(&d.to_string_lossy()))
        {
            rel.push(dir);
        }
    }
    let rel = rel.join(&file_name);
    let (rel, qualifier) = distinct_place(&dir, rel, &file_name, existing, imported);
    let rel_text = rel.to_string_lossy().replace('\\', "/");
    let dest = dir.join(&rel);
    let sha = &imported.sha256;
    if let Ok(old) = std::fs::read(&dest) {
        let old_sha = sha256_hex(&old);
        if old_sha != *sha {
            let kernel = existing.and_then(|m| {
                m.kernels
                    .iter()
                    .find(|k| k.sources.iter().any(|s| s.rel == rel))
                    .map(|k| k.name.clone())
            });
            let kernel = kernel.unwrap_or_else(|| imported.kernel.clone());
            // A binary is lifted over its asm; a dump is copied.
            let replace = if imported.lifted.is_some() {
                format!(
                    "lift it over (`gcn-patch lift {} -o {}`)",
                    imported.from.display(),
                    dest.display()
                )
            } else {
                format!(
                    "copy it over (`cp {} {}`)",
                    imported.from.display(),
                    dest.display()
                )
            };
            return Err(Diagnostic::error(Code::ImportConflict, format!(
                "`{}` was already imported as `{rel_text}` with other bytes",
                imported.from.display()
            ))
            .with_note(format!("`{rel_text}` has sha256 {old_sha}"))
            .with_note(format!("`{}` has sha256 {sha}", imported.from.display()))
            .with_help(format!(
                "to replace the dump: {replace}, then run `gcn-patch pin {kernel} --manifest {}` (it re-checks the patches against the new dump); or rename the file to import it as another kernel",
                manifest_path.display()
            ))
            .into());
        }
    }
    if let Some(m) = existing {
        if let Some(k) = m
            .kernels
            .iter()
            .find(|k| k.sources.iter().any(|s| s.rel == rel))
        {
            if dest.exists() {
                return Ok(Added {
                    outcome: Outcome::Unchanged {
                        kernel: k.name.clone(),
                        asm: rel,
                    },
                    created: None,
                    manifest: None,
                });
            }
        }
    }
    let source = source_entry(imported, &rel_text, &dir);
    let created = (!dest.exists()).then(|| dest.clone());
    // Another processor's build of a kernel already here: a new source of it.
    if let Some((m, k)) = existing.and_then(|m| same_program(m, imported).map(|k| (m, k))) {
        let text = insert_source(&m.text, k.line, &source);
        let manifest = write_manifest(
            manifest_path,
            text,
            &dest,
            &imported.bytes,
            created.is_some(),
        )?;
        return Ok(Added {
            outcome: Outcome::AddedSource {
                kernel: k.name.clone(),
                asm: rel,
            },
            created,
            manifest: Some(manifest),
        });
    }
    // A free kernel name: the recognized one, else with the processor appended, else numbered.
    let taken = |n: &str| {
        existing.is_some_and(|m| m.kernels.iter().any(|k| k.name.eq_ignore_ascii_case(n)))
    };
    // A binary placed under its own directories (`distinct_place`) is
    // named after them too: `MI308_fwd_…` beside `fwd_…`.
    let base = match &qualifier {
        Some(q) => identifier(&format!("{q}_{}", imported.kernel)),
        None => imported.kernel.clone(),
    };
    let mut kernel = base.clone();
    if taken(&kernel) {
        kernel = format!("{base}_{}", imported.target.processor.name);
        let mut n = 2;
        while taken(&kernel) {
            kernel = format!("{base}_{}_{n}", imported.target.processor.name);
            n += 1;
        }
    }
    let mut entry = String::new();
    entry.push('\n');
    if let Some(comment) = imported
        .triton
        .as_ref()
        .and_then(|t| specialization_comment(existing, &t.kernel, &imported.from))
    {
        entry.push_str(&comment);
    }
    entry.push_str(&format!("[[kernel]]\nname = {}\n", quoted(&kernel)));
    if !imported.iree_executables.is_empty() {
        entry.push_str(&format!(
            "iree-executables = {}\n",
            list(&imported.iree_executables)
        ));
    }
    entry.push_str(&source);
    let mut text = match existing {
        Some(m) => m.text.clone(),
        None => NEW_MANIFEST.to_string(),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str(&entry);
    let manifest = write_manifest(
        manifest_path,
        text,
        &dest,
        &imported.bytes,
        created.is_some(),
    )?;
    Ok(Added {
        outcome: Outcome::Added { kernel, asm: rel },
        created,
        manifest: Some(manifest),
    })
}

/// The comment above a Triton kernel's `[[kernel]]` saying which
/// specialization it is (signature and block sizes, from the `.ttir` beside
/// `amdgcn`) and, for each kernel of `existing` annotated as another
/// specialization of the same Triton kernel, what differs from it.
fn specialization_comment(
    existing: Option<&Manifest>,
    triton_kernel: &str,
    amdgcn: &Path,
) -> Option<String> {
    let spec = crate::ops::triton::specialization(amdgcn)?;
    let prefix = format!("# Triton specialization of `{triton_kernel}`: ");
    let mut out = format!("{prefix}{}\n", spec.describe());
    if let Some(m) = existing {
        let lines: Vec<&str> = m.text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            let Some(other) = l.strip_prefix(&prefix) else {
                continue;
            };
            // The kernel the comment stands above: the next `name = …`.
            let Some(name) = lines[i + 1..]
                .iter()
                .take(4)
                .find_map(|n| n.trim().strip_prefix("name = "))
            else {
                continue;
            };
            let part = |d: &str, key: &str| {
                d.split("; ")
                    .find(|p| p.starts_with(key))
                    .unwrap_or("")
                    .to_string()
            };
            let mine = spec.describe();
            let mut differs = Vec::new();
            if part(&mine, "signature") != part(other, "signature") {
                differs.push("signature");
            }
            if part(&mine, "block sizes") != part(other, "block sizes") {
                differs.push("block sizes (constexprs)");
            }
            let what = if differs.is_empty() {
                "neither signature nor block sizes (other constexprs or options)".to_string()
            } else {
                differs.join(" and ")
            };
            out.push_str(&format!("# differs from {name} in: {what}\n"));
        }
    }
    Some(out)
}

/// Write the asm `bytes` to `dest`, then `text` as the manifest once it is
/// known to load (it names the asm, which must exist for that): the
/// manifest it now is. On failure, an asm file it `created` is removed.
fn write_manifest(
    manifest_path: &Path,
    text: String,
    dest: &Path,
    bytes: &[u8],
    created: bool,
) -> Result<Manifest, Diagnostics> {
    write_dump(dest, bytes)?;
    let written = Manifest::parse(&text, manifest_path).and_then(|m| {
        crate::base::output::write_atomic(manifest_path, text.as_bytes())
            .map_err(|e| io_error("write", manifest_path, e))?;
        Ok(m)
    });
    if written.is_err() && created {
        let _ = std::fs::remove_file(dest);
    }
    written
}

/// The manifest before an import, to restore it if the import fails.
enum ManifestBefore {
    /// Its bytes.
    Bytes(Vec<u8>),
    /// No file (not even a dangling symlink) at its path.
    Absent,
    /// Unreadable: left alone.
    Unknown,
}

impl ManifestBefore {
    fn read(path: &Path) -> ManifestBefore {
        match std::fs::read(path) {
            Ok(bytes) => ManifestBefore::Bytes(bytes),
            Err(_) if std::fs::symlink_metadata(path).is_err() => ManifestBefore::Absent,
            Err(_) => ManifestBefore::Unknown,
        }
    }
}

/// Undo an import that failed part-way: the manifest as it was (or no
/// manifest), and none of the asm files it created, nor the directories
/// left empty by their removal. Best effort: what cannot be undone stays.
fn roll_back(manifest_path: &Path, manifest_before: ManifestBefore, created: &[PathBuf]) {
    let _ = match manifest_before {
        ManifestBefore::Bytes(bytes) => crate::base::output::write_atomic(manifest_path, &bytes),
        ManifestBefore::Absent => std::fs::remove_file(manifest_path),
        ManifestBefore::Unknown => Ok(()),
    };
    let top = manifest_dir(manifest_path);
    for file in created.iter().rev() {
        let _ = std::fs::remove_file(file);
        let mut dir = file.parent();
        while let Some(d) = dir {
            if d == top || std::fs::remove_dir(d).is_err() {
                break;
            }
            dir = d.parent();
        }
    }
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
}
