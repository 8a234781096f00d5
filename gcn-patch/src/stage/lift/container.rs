//! Find the AMDGPU code objects in a file: a bare code object, a clang
//! offload bundle (`__CLANG_OFFLOAD_BUNDLE__`, or compressed `CCOB` as
//! `--offload-compress` writes it), a host object or executable with a
//! `.hip_fatbin` section (what hipcc and `clang -x hip` write), or an IREE
//! `.vmfb` (AMDGPU ELF images embedded in the module).
//!
//! Pure Rust, no tool runs; formats from LLVM's `OffloadBundler.cpp`
//! (bundle layout; compressed header v1–v3, zlib or zstd).

use std::io::Read;
use std::path::Path;

use gcn_embed::elf as raw;
use gcn_embed::TargetId;
use object::{Object, ObjectSection};

use crate::base::diag::{Code, Diagnostic, Setting};

/// Magic of an uncompressed offload bundle.
pub const BUNDLE_MAGIC: &[u8] = b"__CLANG_OFFLOAD_BUNDLE__";
/// Magic of a compressed offload bundle.
pub const COMPRESSED_MAGIC: &[u8] = b"CCOB";
/// Largest decompressed bundle accepted (a bad header must not make us
/// allocate without bound).
const MAX_DECOMPRESSED: u64 = 1 << 32;

/// What kind of file held the code objects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A bare AMDGPU code object.
    CodeObject,
    /// A clang offload bundle (compressed or not).
    Bundle,
    /// A host ELF with a `.hip_fatbin` section.
    HostObject,
    /// An IREE module.
    Vmfb,
}

/// One AMDGPU code object found in a file.
#[derive(Debug, Clone)]
pub struct Member {
    /// Its target ID (from its `e_flags`).
    pub target: TargetId,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Where it was found, for messages and file names: the bundle entry
    /// ID (`hipv4-amdgcn-amd-amdhsa--gfx942`), `image N` in a `.vmfb`, or
    /// the file name.
    pub label: String,
}

/// The code objects of a file.
#[derive(Debug, Clone)]
pub struct Contents {
    /// What the file is.
    pub kind: Kind,
    /// Every AMDGPU code object in it, in file order.
    pub members: Vec<Member>,
}

impl Contents {
    /// The member for `target` (same processor; features must agree where
    /// `target` pins them), or an error listing the targets there are.
    pub fn select(&self, target: &TargetId, origin: &Path) -> Result<&Member, Diagnostic> {
        self.members
            .iter()
            .find(|m| {
                m.target.processor.name == target.processor.name
                    && (!target.xnack.is_pinned() || m.target.xnack == target.xnack)
                    && (!target.sramecc.is_pinned() || m.target.sramecc == target.sramecc)
            })
            .ok_or_else(|| {
                let have: Vec<String> = self.members.iter().map(|m| m.target.name()).collect();
                Diagnostic::error(
                    Code::NoCodeObjectForTarget,
                    format!(
                        "{} has no code object for {}",
                        origin.display(),
                        target.name()
                    ),
                )
                .with_note(format!("it has: {}", have.join(", ")))
                .with_help(format!("choose one of: {}", have.join(", ")))
                .about(Setting::Target)
            })
    }
}

/// Read the code objects of `bytes` (the file `origin`).
pub fn code_objects(bytes: &[u8], origin: &Path) -> Result<Contents, Diagnostic> {
    let what = origin.display();
    if bytes.starts_with(b"\x7fELF") {
        if let Ok(h) = raw::read_header(bytes) {
            let _ = h;
            let target = code_object_target(bytes, &what.to_string())?;
            return Ok(Contents {
                kind: Kind::CodeObject,
                members: vec![Member {
                    target,
                    bytes: bytes.to_vec(),
                    label: origin
                        .file_name()
                        .map_or_else(|| what.to_string(), |n| n.to_string_lossy().into_owned()),
                }],
            });
        }
        return host_object(bytes, origin);
    }
    if bytes.starts_with(BUNDLE_MAGIC) || bytes.starts_with(COMPRESSED_MAGIC) {
        let mut members = Vec::new();
        bundles(bytes, origin, &mut members)?;
        return nonempty(Kind::Bundle, members, origin, "an offload bundle");
    }
    if is_vmfb(bytes) {
        return vmfb(bytes, origin);
    }
    Err(Diagnostic::error(Code::NotACodeObject, format!(
        "{what} is not a code object, an offload bundle, a host object with .hip_fatbin, or an IREE .vmfb"
    ))
    .with_help(
        "give an AMDGPU code object (.co, .hsaco), a clang offload bundle, a HIP host object or \
         executable, or an IREE .vmfb",
    ))
}

fn nonempty(
    kind: Kind,
    members: Vec<Member>,
    origin: &Path,
    what: &str,
) -> Result<Contents, Diagnostic> {
    if members.is_empty() {
        return Err(Diagnostic::error(
            Code::NoAmdgpuCode,
            format!("{} is {what} without AMDGPU code objects", origin.display()),
        )
        .with_help(
            "build it for an AMDGPU target (clang: --offload-arch=gfx942; iree-compile: \
             --iree-hal-target-device=hip --iree-rocm-target=gfx942)",
        ));
    }
    Ok(Contents { kind, members })
}

/// The target of a bare AMDGPU code object, with the checks `lift` makes.
fn code_object_target(bytes: &[u8], what: &str) -> Result<TargetId, Diagnostic> {
    let h = raw::read_header(bytes)
        .map_err(|e| Diagnostic::error(Code::CorruptContainer, format!("{what}: {e}")))?;
    h.flags().target_id().ok_or_else(|| {
        Diagnostic::error(
            Code::UnknownProcessor,
            format!(
                "{what}: e_flags {:#x} name no processor gcn-patch knows",
                h.e_flags
            ),
        )
    })
}

/// A host ELF: the bundles in its `.hip_fatbin` section.
fn host_object(bytes: &[u8], origin: &Path) -> Result<Contents, Diagnostic> {
    let what = origin.display();
    let file = object::File::parse(bytes).map_err(|e| {
        // Only AMDGPU ELFs are lifted directly: say so first, then why the
        // file cannot be searched for HIP device code either.
        let machine = bytes
            .get(18..20)
            .map_or(0, |m| u16::from_le_bytes([m[0], m[1]]));
        Diagnostic::error(Code::NotACodeObject, format!(
            "{what}: not an AMDGPU ELF (e_machine {machine}), and not readable as a host object: {e}"
        ))
        .with_help("the file is damaged or truncated, or it holds no HIP device code")
    })?;
    let section = file.section_by_name(".hip_fatbin").ok_or_else(|| {
        Diagnostic::error(Code::NotACodeObject, format!(
            "{what} is an ELF file for another machine with no .hip_fatbin section: not an AMDGPU code object and no HIP device code in it"
        ))
        .with_help("give an AMDGPU code object, or a HIP host object or executable built with --offload-arch")
    })?;
    let data = section.data().map_err(|e| {
        Diagnostic::error(
            Code::CorruptContainer,
            format!("{what}: cannot read .hip_fatbin: {e}"),
        )
    })?;
    let mut members = Vec::new();
    bundles(data, origin, &mut members)?;
    nonempty(
        Kind::HostObject,
        members,
        origin,
        "a host object whose .hip_fatbin is",
    )
}

/// Every bundle in `data`, one after the other (padding between them skipped).
fn bundles(data: &[u8], origin: &Path, out: &mut Vec<Member>) -> Result<(), Diagnostic> {
    let mut at = 0usize;
    while at < data.len() {
        let rest = &data[at..];
        let len = if rest.starts_with(BUNDLE_MAGIC) {
            bundle(rest, origin, out)?
        } else if rest.starts_with(COMPRESSED_MAGIC) {
            let (inner, len) = decompress(rest, origin)?;
            if !inner.starts_with(BUNDLE_MAGIC) {
                return Err(corrupt(
                    origin,
                    "the decompressed data is not an offload bundle",
                ));
            }
            bundle(&inner, origin, out)?;
            len
        } else {
            // Padding up to the next bundle, or the end.
            let next = [BUNDLE_MAGIC, COMPRESSED_MAGIC]
                .iter()
                .filter_map(|m| find(rest, m))
                .min();
            match next {
                Some(n) if rest[..n].iter().all(|&b| b == 0) => n,
                Some(_) | None if rest.iter().all(|&b| b == 0) => rest.len(),
                _ => {
                    return Err(corrupt(
                        origin,
                        &format!("unexpected bytes at offset {at} between offload bundles"),
                    ))
                }
            }
        };
        at += len.max(1);
    }
    Ok(())
}

fn corrupt(origin: &Path, why: &str) -> Diagnostic {
    Diagnostic::error(
        Code::CorruptContainer,
        format!("{}: corrupt offload bundle: {why}", origin.display()),
    )
    .with_help(
        "the file is damaged or truncated: build it again, or check it with \
         `clang-offload-bundler --list --type=o --input=FILE`",
    )
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn u64_at(b: &[u8], o: usize) -> Option<u64> {
    Some(u64::from_le_bytes(b.get(o..o + 8)?.try_into().ok()?))
}

fn u32_at(b: &[u8], o: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?))
}

/// One uncompressed bundle: its AMDGPU entries go to `out`; returns its length.
fn bundle(b: &[u8], origin: &Path, out: &mut Vec<Member>) -> Result<usize, Diagnostic> {
    let short = || corrupt(origin, "the bundle header is truncated");
    let n = u64_at(b, 24).ok_or_else(short)?;
    if n > 4096 {
        return Err(corrupt(origin, &format!("{n} entries")));
    }
    let mut at = 32usize;
    let mut end = at;
    for _ in 0..n {
        let offset = u64_at(b, at).ok_or_else(short)? as usize;
        let size = u64_at(b, at + 8).ok_or_else(short)? as usize;
        let id_len = u64_at(b, at + 16).ok_or_else(short)? as usize;
        let id = b
            .get(at + 24..at.saturating_add(24).saturating_add(id_len))
            .ok_or_else(short)?;
        let id = String::from_utf8_lossy(id).into_owned();
        at += 24 + id_len;
        let body = b.get(offset..offset.saturating_add(size)).ok_or_else(|| {
            corrupt(
                origin,
                &format!("entry {id} lies past the end of the bundle"),
            )
        })?;
        end = end.max(offset + size).max(at);
        if size == 0 || !id.contains("amdgcn") {
            continue;
        }
        let target = code_object_target(body, &format!("{} ({id})", origin.display()))?;
        out.push(Member {
            target,
            bytes: body.to_vec(),
            label: id,
        });
    }
    Ok(end)
}

/// A compressed bundle: the decompressed bundle and the compressed length.
fn decompress(b: &[u8], origin: &Path) -> Result<(Vec<u8>, usize), Diagnostic> {
    let short = || corrupt(origin, "the compressed bundle header is truncated");
    let version = u16::from_le_bytes(b.get(4..6).ok_or_else(short)?.try_into().unwrap_or([0; 2]));
    let method = u16::from_le_bytes(b.get(6..8).ok_or_else(short)?.try_into().unwrap_or([0; 2]));
    // (total length of the compressed bundle if recorded, uncompressed size, payload start)
    let (total, size, start) = match version {
        1 => (None, u64::from(u32_at(b, 8).ok_or_else(short)?), 20),
        2 => (
            Some(u64::from(u32_at(b, 8).ok_or_else(short)?)),
            u64::from(u32_at(b, 12).ok_or_else(short)?),
            24,
        ),
        3 => (
            Some(u64_at(b, 8).ok_or_else(short)?),
            u64_at(b, 16).ok_or_else(short)?,
            32,
        ),
        v => {
            return Err(corrupt(
                origin,
                &format!("compressed bundle version {v} (known: 1, 2, 3)"),
            ))
        }
    };
    if size > MAX_DECOMPRESSED {
        return Err(corrupt(
            origin,
            &format!("an uncompressed size of {size} bytes"),
        ));
    }
    let end = match total {
        Some(t) if (t as usize) < start || t as usize > b.len() => {
            return Err(corrupt(
                origin,
                &format!("it says {t} bytes, but {} are there", b.len()),
            ))
        }
        Some(t) => t as usize,
        None => b.len(),
    };
    let payload = &b[start..end];
    let data = match method {
        0 => miniz_oxide::inflate::decompress_to_vec_zlib_with_limit(payload, size as usize)
            .map_err(|e| corrupt(origin, &format!("zlib: {e:?}")))?,
        1 => {
            let mut d = ruzstd::decoding::StreamingDecoder::new(payload)
                .map_err(|e| corrupt(origin, &format!("zstd: {e}")))?;
            let mut v = Vec::new();
            (&mut d)
                .take(size + 1)
                .read_to_end(&mut v)
                .map_err(|e| corrupt(origin, &format!("zstd: {e}")))?;
            v
        }
        m => {
            return Err(corrupt(
                origin,
                &format!("compression method {m} (known: 0 zlib, 1 zstd)"),
            ))
        }
    };
    if data.len() as u64 != size {
        return Err(corrupt(
            origin,
            &format!("{} bytes decompressed, the header says {size}", data.len()),
        ));
    }
    Ok((data, end))
}

/// An IREE module: a FlatBuffer whose identifier (bytes 4..8) is `IREE`,
/// or the ZIP archive iree-compile writes around it (entries stored, not
/// compressed, the first named `module.fb`).
fn is_vmfb(b: &[u8]) -> bool {
    b.get(4..8) == Some(b"IREE")
        || (b.starts_with(b"PK\x03\x04") && find(&b[..b.len().min(256)], b"module.fb").is_some())
}

/// The AMDGPU ELF images embedded in an IREE module, each sized by its
/// section header table (the last thing ld.lld writes).
fn vmfb(b: &[u8], origin: &Path) -> Result<Contents, Diagnostic> {
    let mut members = Vec::new();
    let mut at = 0usize;
    while let Some(i) = find(&b[at..], b"\x7fELF") {
        let start = at + i;
        at = start + 4;
        let Ok(h) = raw::read_header(&b[start..]) else {
            continue;
        };
        let _ = h;
        let Some(shoff) = u64_at(b, start + 40) else {
            continue;
        };
        let shentsize = u16::from_le_bytes([b[start + 58], b[start + 59]]) as u64;
        let shnum = u16::from_le_bytes([b[start + 60], b[start + 61]]) as u64;
        let len = shoff.saturating_add(shentsize.saturating_mul(shnum)) as usize;
        let Some(image) = b.get(start..start.saturating_add(len)) else {
            return Err(Diagnostic::error(
                Code::CorruptContainer,
                format!(
                    "{}: the AMDGPU image at offset {start} is truncated",
                    origin.display()
                ),
            )
            .with_help("the file is damaged or truncated: compile the module again"));
        };
        let label = format!("image {} at offset {start}", members.len());
        let target = code_object_target(image, &format!("{} ({label})", origin.display()))?;
        members.push(Member {
            target,
            bytes: image.to_vec(),
            label,
        });
        at = start + len.max(4);
    }
    nonempty(Kind::Vmfb, members, origin, "an IREE module (.vmfb)")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle with one host and one AMDGPU entry (the AMDGPU bytes are a
    /// minimal v6 gfx942 ELF header).
    fn bundle_bytes() -> Vec<u8> {
        let mut elf = vec![0u8; 64];
        elf[..4].copy_from_slice(b"\x7fELF");
        elf[4] = 2;
        elf[5] = 1;
        elf[7] = raw::ELFOSABI_AMDGPU_HSA;
        elf[8] = raw::ELFABIVERSION_AMDGPU_HSA_V6;
        elf[18..20].copy_from_slice(&raw::EM_AMDGPU.to_le_bytes());
        elf[48..52].copy_from_slice(&0x54cu32.to_le_bytes());
        let ids = [
            "host-x86_64-unknown-linux-gnu-",
            "hipv4-amdgcn-amd-amdhsa--gfx942",
        ];
        let header_len = 32 + ids.iter().map(|i| 24 + i.len()).sum::<usize>();
        let mut b = BUNDLE_MAGIC.to_vec();
        b.extend_from_slice(&2u64.to_le_bytes());
        for (id, (off, size)) in ids.iter().zip([(header_len, 0), (header_len, elf.len())]) {
            b.extend_from_slice(&(off as u64).to_le_bytes());
            b.extend_from_slice(&(size as u64).to_le_bytes());
            b.extend_from_slice(&(id.len() as u64).to_le_bytes());
            b.extend_from_slice(id.as_bytes());
        }
        b.extend_from_slice(&elf);
        b
    }

    #[test]
    fn reads_a_bundle_and_selects_by_target() {
        let c = code_objects(&bundle_bytes(), Path::new("k.bundle")).unwrap();
        assert_eq!(c.kind, Kind::Bundle);
        assert_eq!(c.members.len(), 1);
        assert_eq!(c.members[0].label, "hipv4-amdgcn-amd-amdhsa--gfx942");
        let t = TargetId::parse("gfx942").unwrap();
        assert!(c.select(&t, Path::new("k.bundle")).is_ok());
        let e = c
            .select(&TargetId::parse("gfx1100").unwrap(), Path::new("k.bundle"))
            .unwrap_err()
            .render();
        assert!(
            e.contains("no code object for gfx1100") && e.contains("gfx942"),
            "{e}"
        );
    }

    #[test]
    fn damaged_bundles_are_errors_not_panics() {
        let b = bundle_bytes();
        for n in 0..b.len() {
            let _ = code_objects(&b[..n], Path::new("k.bundle"));
        }
        let mut c = COMPRESSED_MAGIC.to_vec();
        c.extend_from_slice(&[3, 0, 1, 0]);
        c.extend_from_slice(&64u64.to_le_bytes());
        c.extend_from_slice(&100u64.to_le_bytes());
        c.extend_from_slice(&0u64.to_le_bytes());
        c.extend_from_slice(&[0x28, 0xb5, 0x2f, 0xfd, 1, 2, 3, 4]);
        c.resize(64, 0xee);
        let e = code_objects(&c, Path::new("k.ccob")).unwrap_err().render();
        assert!(e.contains("corrupt offload bundle"), "{e}");
    }
}
