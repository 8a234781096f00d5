//! Verify stage: ELF checks of a linked code object (`.hsaco`).
//!
//! [`verify`] checks the header against the target and code object version
//! asked for, and that every expected kernel has a `<kernel>.kd` descriptor.
//! [`section_bytes`] and [`kernel_descriptors`] expose the parts tests compare
//! (`.text`/`.rodata` bytes, descriptor fields).

use object::{Object, ObjectSection, ObjectSymbol};

use crate::base::diag::{Code, Diagnostic, Diagnostics};
use gcn_embed::elf::{abi_version, EFlags, ELFOSABI_AMDGPU_HSA, EM_AMDGPU};
use gcn_embed::TargetId;

/// What the code object must be.
#[derive(Debug, Clone)]
pub struct Expect {
    /// The target it was built for.
    pub target: TargetId,
    /// `.amdhsa_code_object_version` (4, 5 or 6).
    pub code_object_version: u32,
    /// Kernels that must have a `<kernel>.kd` descriptor.
    pub kernels: Vec<String>,
}

/// What a verified code object holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// The ELF `e_flags`.
    pub e_flags: u32,
    /// `EI_ABIVERSION`.
    pub abi_version: u8,
    /// Every kernel descriptor, sorted by kernel name.
    pub kernels: Vec<KernelDescriptorInfo>,
}

/// The fields of one 64-byte kernel descriptor (AMDGPUUsage "Kernel Descriptor").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KernelDescriptorFields {
    /// Bytes 0–3: LDS bytes.
    pub group_segment_fixed_size: u32,
    /// Bytes 4–7: scratch bytes per work-item.
    pub private_segment_fixed_size: u32,
    /// Bytes 8–11: kernel argument bytes.
    pub kernarg_size: u32,
    /// Bytes 16–23: entry point, relative to the descriptor.
    pub kernel_code_entry_byte_offset: i64,
    /// Bytes 44–47.
    pub compute_pgm_rsrc3: u32,
    /// Bytes 48–51.
    pub compute_pgm_rsrc1: u32,
    /// Bytes 52–55.
    pub compute_pgm_rsrc2: u32,
    /// Bytes 56–57.
    pub kernel_code_properties: u16,
    /// Bytes 58–59: preloaded kernel arguments (length bits 0–6, offset bits 7–15).
    pub kernarg_preload: u16,
}

impl KernelDescriptorFields {
    /// Decode a 64-byte descriptor (read by [`gcn_raw::kd::Descriptor`], the
    /// one reader of the layout, which the emulator's loader uses too).
    pub fn decode(d: &[u8; 64]) -> KernelDescriptorFields {
        let r = gcn_raw::kd::Descriptor::parse(d);
        KernelDescriptorFields {
            group_segment_fixed_size: r.group_segment_fixed_size,
            private_segment_fixed_size: r.private_segment_fixed_size,
            kernarg_size: r.kernarg_size,
            kernel_code_entry_byte_offset: r.kernel_code_entry_byte_offset,
            compute_pgm_rsrc3: r.rsrc3,
            compute_pgm_rsrc1: r.rsrc1,
            compute_pgm_rsrc2: r.rsrc2,
            kernel_code_properties: r.properties,
            kernarg_preload: r.kernarg_preload,
        }
    }
}

/// One kernel's descriptor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelDescriptorInfo {
    /// Kernel name (the `.kd` symbol without `.kd`).
    pub name: String,
    /// The raw 64 bytes.
    pub bytes: [u8; 64],
    /// Decoded fields.
    pub fields: KernelDescriptorFields,
}

/// The bytes of section `name` (e.g. `.text`, `.rodata`).
pub fn section_bytes(bytes: &[u8], name: &str) -> Result<Vec<u8>, Diagnostic> {
    let file = object::File::parse(bytes)
        .map_err(|e| Diagnostic::error(Code::CodeObjectInvalid, format!("not an ELF file: {e}")))?;
    let section = file.section_by_name(name).ok_or_else(|| {
        Diagnostic::error(
            Code::CodeObjectInvalid,
            format!("the code object has no {name} section"),
        )
    })?;
    section.data().map(<[u8]>::to_vec).map_err(|e| {
        Diagnostic::error(
            Code::CodeObjectInvalid,
            format!("cannot read section {name}: {e}"),
        )
    })
}

/// Every `<kernel>.kd` descriptor, sorted by kernel name.
pub fn kernel_descriptors(bytes: &[u8]) -> Result<Vec<KernelDescriptorInfo>, Diagnostic> {
    let file = object::File::parse(bytes)
        .map_err(|e| Diagnostic::error(Code::CodeObjectInvalid, format!("not an ELF file: {e}")))?;
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let symbols = file.symbols().chain(file.dynamic_symbols());
    for sym in symbols {
        let Ok(name) = sym.name() else { continue };
        let Some(kernel) = name.strip_suffix(".kd") else {
            continue;
        };
        if !seen.insert(kernel.to_string()) {
            continue;
        }
        let bad = |why: String| {
            Diagnostic::error(
                Code::CodeObjectInvalid,
                format!("kernel descriptor {name}: {why}"),
            )
        };
        let index = sym
            .section_index()
            .ok_or_else(|| bad("not defined in a section".into()))?;
        let section = file
            .section_by_index(index)
            .map_err(|e| bad(format!("bad section: {e}")))?;
        let data = section
            .data()
            .map_err(|e| bad(format!("cannot read its section: {e}")))?;
        let start = sym
            .address()
            .checked_sub(section.address())
            .and_then(|o| usize::try_from(o).ok())
            .ok_or_else(|| bad("address outside its section".into()))?;
        let raw = data
            .get(start..start.saturating_add(64))
            .ok_or_else(|| bad("fewer than 64 bytes in its section".into()))?;
        let mut d = [0u8; 64];
        d.copy_from_slice(raw);
        out.push(KernelDescriptorInfo {
            name: kernel.to_string(),
            bytes: d,
            fields: KernelDescriptorFields::decode(&d),
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(out)
}

/// Check a code object against `expect`; every mismatch is one diagnostic.
pub fn verify(bytes: &[u8], expect: &Expect) -> Result<VerifyReport, Diagnostics> {
    let target = expect.target.name();
    let fail = |what: String| {
        Diagnostic::error(
            Code::CodeObjectInvalid,
            format!("code object for {target}: {what}"),
        )
    };
    if bytes.len() < 64 || &bytes[..4] != b"\x7fELF" {
        return Err(fail("not an ELF file".into())
            .with_help("the output was not written by ld.lld; rebuild it")
            .into());
    }
    let mut errs = Vec::new();
    if bytes[4] != 2 {
        return Err(fail(format!("expected ELF64, found ELF class {}", bytes[4])).into());
    }
    if bytes[5] != 1 {
        return Err(fail(format!(
            "expected little endian, found ELF data encoding {}",
            bytes[5]
        ))
        .into());
    }
    let os_abi = bytes[7];
    let abi = bytes[8];
    let machine = u16::from_le_bytes([bytes[18], bytes[19]]);
    let e_flags = u32::from_le_bytes([bytes[48], bytes[49], bytes[50], bytes[51]]);
    if machine != EM_AMDGPU {
        return Err(fail(format!(
            "expected e_machine EM_AMDGPU ({EM_AMDGPU}), found {machine}"
        ))
        .with_help(
            "this is not an AMDGPU code object: was it built with --target=amdgcn-amd-amdhsa?",
        )
        .into());
    }
    if os_abi != ELFOSABI_AMDGPU_HSA {
        errs.push(
            fail(format!(
                "expected OS/ABI AMDGPU_HSA ({ELFOSABI_AMDGPU_HSA}), found {os_abi}"
            ))
            .with_help("the source must target amdgcn-amd-amdhsa (check `.amdgcn_target`)"),
        );
    }
    match abi_version(expect.code_object_version) {
        Some(want) if want != abi => {
            let found_cov = gcn_embed::elf::code_object_version(abi).map_or_else(
                || "an unknown code object version".into(),
                |v| format!("code object v{v}"),
            );
            errs.push(
                fail(format!(
                    "expected ABI version {want} (code object v{}), found {abi} ({found_cov})",
                    expect.code_object_version,
                ))
                .with_help(format!(
                    "the source's `.amdhsa_code_object_version` differs: set it to {} \
                     (or expect the version the source declares)",
                    expect.code_object_version,
                )),
            )
        }
        Some(_) => {}
        None => errs.push(
            fail(format!(
                "code object version {} is not supported (4, 5 or 6)",
                expect.code_object_version
            ))
            .with_help("use code object v4, v5 or v6"),
        ),
    }
    let p = expect.target.processor;
    let want = EFlags::for_target(&expect.target);
    let found = EFlags::decode(e_flags);
    if found.mach != want.mach {
        let named = found.processor().map_or_else(
            || "an unknown processor".to_string(),
            |q| q.name.to_string(),
        );
        errs.push(
            fail(format!(
                "expected EF_AMDGPU_MACH {:#x} ({}), found {:#x} ({named})",
                want.mach, p.name, found.mach
            ))
            .with_help(format!(
                "the assembly's `.amdgcn_target` names another processor; retarget it to {target}"
            )),
        );
    }
    for (feat, w, f) in [
        ("xnack", want.xnack, found.xnack),
        ("sramecc", want.sramecc, found.sramecc),
    ] {
        if w != f {
            errs.push(
                fail(format!("expected {feat} {w} in e_flags, found {feat} {f}")).with_help(
                    format!(
                        "the `.amdgcn_target` target ID's {feat} setting differs from {target}; \
                     retarget the source to exactly {target}"
                    ),
                ),
            );
        }
    }
    if p.is_generic && !found.is_generic() {
        errs.push(
            fail(format!(
                "generic target {} needs EF_AMDGPU_GENERIC_VERSION >= 1, found {}",
                p.name, found.generic_version
            ))
            .with_help("generic targets need code object v6: set `.amdhsa_code_object_version 6`"),
        );
    }
    let kernels = match kernel_descriptors(bytes) {
        Ok(k) => k,
        Err(d) => {
            errs.push(d);
            vec![]
        }
    };
    let found_names: std::collections::HashSet<&str> =
        kernels.iter().map(|d| d.name.as_str()).collect();
    for k in &expect.kernels {
        if !found_names.contains(k.as_str()) {
            let found: Vec<&str> = kernels.iter().map(|d| d.name.as_str()).collect();
            errs.push(
                fail(format!("no kernel descriptor `{k}.kd` for kernel `{k}`"))
                    .with_note(format!("descriptors found: {}", found.join(", ")))
                    .with_help(
                        "check the kernel name in kernels.toml and the `.amdhsa_kernel` block of the source",
                    ),
            );
        }
    }
    if errs.is_empty() {
        Ok(VerifyReport {
            e_flags,
            abi_version: abi,
            kernels,
        })
    } else {
        Err(Diagnostics(errs))
    }
}
