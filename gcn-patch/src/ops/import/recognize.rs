//! What an input is: an AMDGPU dump (IREE, hipcc, Triton, any `.s`), or a
//! binary whose code objects are lifted; the kernel name it gets.

use super::*;

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
/// `crate::stage::lift::container`): one [`Imported`] per member, named after
/// the file's stem (an IREE module: after its executable).
pub fn recognize_binary(path: &Path, opts: &ImportOptions) -> Result<Vec<Imported>, Diagnostics> {
    use crate::ops::lift::{lift_code_object, LiftOptions};
    use crate::stage::lift::container;
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
        let lifted = lift_code_object(&m.bytes, &origin, &LiftOptions::new(tc))?;
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
            staged: None,
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
pub(super) fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), Diagnostic> {
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

pub(super) fn io_error(what: &str, path: &Path, e: std::io::Error) -> Diagnostic {
    Diagnostic::error(
        Code::ReadFailed,
        format!("cannot {what} `{}`: {e}", path.display()),
    )
    .with_help("check the path and its permissions")
}

/// A Triton dump and its cache entry (same bytes) imported together become
/// one import: the dump's hash with the cache's launch metadata.
pub(super) fn merge_triton_pairs(found: Vec<Imported>) -> Vec<Imported> {
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
                let merged = crate::config::triton::TritonKernel {
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
        crate::stage::triton::recognize(path, &sha256, target.processor.name, &opts.triton_caches);
    let kernel = match &triton {
        Some(t) => identifier(&t.kernel),
        None => kernel,
    };
    Ok(Imported {
        from: path.to_path_buf(),
        bytes,
        staged: None,
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

/// `name` (a kernel name) without a trailing `_<processor>` (a processor or
/// generic target gcn-embed knows, made an identifier: `hist_gfx942`,
/// `hist_gfx9_4_generic`), if what is left is not empty.
pub fn strip_processor(name: &str) -> Option<&str> {
    gcn_embed::processors()
        .iter()
        .filter_map(|p| {
            let rest = name.strip_suffix(identifier(p.name).as_str())?;
            rest.strip_suffix('_').filter(|r| !r.is_empty())
        })
        .min_by_key(|r| r.len())
}

/// The program an `imported-from` path names: its file stem made a kernel
/// name (hipcc's suffix and a `-<processor>` suffix stripped).
pub(super) fn program_key(imported_from: &str) -> String {
    let stem = Path::new(imported_from)
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = identifier(hipcc_stem(&stem));
    strip_processor(&name).map_or(name.clone(), str::to_string)
}

/// One program dumped per processor, named after it (`hist-gfx942.co`,
/// `hist_gfx1100.s`, as fresh clang-22 output is): a file-stem name that
/// ends in `_<processor>` loses it when what is left names another input
/// (`hist-gfx1100.s`, or `hist.s`), or a kernel or an imported file of the
/// manifest `m`. The files then share the name, and the usual rule (same
/// name, same symbols, another processor) makes them one kernel. Names
/// from IREE, Triton and hipcc's own suffix are left alone.
pub(super) fn name_programs(found: &mut [Imported], m: &Manifest) {
    use std::collections::{HashMap, HashSet};
    let plain = |i: &Imported| {
        i.origin == Origin::Plain && i.triton.is_none() && i.iree_executables.is_empty()
    };
    // Name → who has it (an input's path, or something of the manifest).
    let mut names: HashMap<String, HashSet<String>> = HashMap::new();
    let mut have = |name: &str, who: String| {
        names.entry(name.to_string()).or_default().insert(who);
    };
    for i in found.iter().filter(|i| plain(i)) {
        let who = i.from.display().to_string();
        have(&i.kernel, who.clone());
        if let Some(rest) = strip_processor(&i.kernel) {
            have(rest, who);
        }
    }
    for k in &m.kernels {
        have(&k.name, format!("kernel {}", k.name));
        for s in &k.sources {
            if let Some(f) = &s.imported_from {
                have(&program_key(f), format!("imported {f}"));
            }
        }
    }
    for i in found.iter_mut().filter(|i| plain(i)) {
        let Some(rest) = strip_processor(&i.kernel) else {
            continue;
        };
        let who = i.from.display().to_string();
        if names.get(rest).is_some_and(|w| w.iter().any(|x| *x != who)) {
            i.kernel = rest.to_string();
        }
    }
}
