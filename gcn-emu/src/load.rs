//! Loading a code object: its kernel descriptors, metadata and code.
//!
//! References: LLVM's AMDGPUUsage, sections "Kernel Descriptor", "Code
//! Object V5 Metadata" (v6 adds nothing the emulator reads) and "Initial
//! Kernel Execution State".

use std::path::Path;

use object::{Object, ObjectSection, ObjectSymbol};
use rmpv::Value;

use crate::{Error, Result};

/// The largest kernarg segment the emulator builds (1 MiB): an argument's
/// `.offset + .size`, `.kernarg_segment_size` and the descriptor's
/// `kernarg_size` must not exceed it. The ISA sets no such limit; compilers
/// emit a few KiB at most.
pub const MAX_KERNARG_BYTES: u64 = 1 << 20;

/// A loaded code object (an AMDGPU ELF shared object).
#[derive(Debug, Clone)]
pub struct CodeObject {
    /// Where it came from (for messages).
    pub path: String,
    /// The whole file.
    pub bytes: Vec<u8>,
    /// The processor, e.g. `gfx942`.
    pub processor: String,
    /// The full target string of the metadata, e.g. `amdgcn-amd-amdhsa--gfx942:xnack-`.
    pub target: String,
    /// The kernels, in metadata order.
    pub kernels: Vec<Kernel>,
}

/// One kernel: its descriptor, metadata and code range.
#[derive(Debug, Clone)]
pub struct Kernel {
    /// The kernel's name (`.name`).
    pub name: String,
    /// The descriptor.
    pub descriptor: Descriptor,
    /// The explicit and hidden arguments, in metadata order.
    pub args: Vec<Arg>,
    /// Size in bytes of the kernarg segment (`.kernarg_segment_size`).
    pub kernarg_size: u32,
    /// Alignment of the kernarg segment.
    pub kernarg_align: u32,
    /// Wavefront size (`.wavefront_size`).
    pub wavefront_size: u32,
    /// The workgroup cluster the kernel was compiled for (code object V6's
    /// `.cluster_dims`, gfx1250; clang's `cluster_dims` attribute): `[0, 0,
    /// 0]` when the metadata has none (no cluster), `[1024; 3]` for a
    /// kernel whose cluster size is chosen at launch (LLVM's
    /// `"amdgpu-cluster-dims"`). [`crate::dispatch::Launch::cluster`]
    /// defaults to it.
    pub cluster_dims: [u32; 3],
    /// Address of the first instruction.
    pub entry: u64,
    /// End of the kernel's code (from the symbol's size), exclusive.
    pub code_end: u64,
}

/// The fields of the 64-byte kernel descriptor: gcn-raw's reader, the one
/// gcn-patch's lift and verify read descriptors with too.
pub use gcn_raw::kd::Descriptor;

/// One kernel argument of the metadata.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    /// `.name`, when present.
    pub name: Option<String>,
    /// `.offset` in the kernarg segment.
    pub offset: u32,
    /// `.size` in bytes.
    pub size: u32,
    /// `.value_kind`, e.g. `global_buffer`, `by_value`, `hidden_block_count_x`.
    pub value_kind: String,
    /// `.address_space`, when present (`global`, `generic`, ...).
    pub address_space: Option<String>,
    /// `.type_name`, when present.
    pub type_name: Option<String>,
}

impl Arg {
    /// Whether the dispatch fills it (a `hidden_*` kind) rather than the caller.
    pub fn is_hidden(&self) -> bool {
        self.value_kind.starts_with("hidden_")
    }
    /// Whether it is a pointer to a buffer.
    pub fn is_pointer(&self) -> bool {
        matches!(
            self.value_kind.as_str(),
            "global_buffer" | "dynamic_shared_pointer"
        )
    }
}

fn field<'a>(map: &'a Value, key: &str) -> Option<&'a Value> {
    map.as_map()?
        .iter()
        .find(|(k, _)| k.as_str() == Some(key))
        .map(|(_, v)| v)
}

impl CodeObject {
    /// Read and load a code object file.
    pub fn read_file(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            action: "read",
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(bytes, &path.display().to_string())
    }

    /// Load a code object from its bytes; `path` names it in messages.
    pub fn parse(bytes: Vec<u8>, path: &str) -> Result<Self> {
        let file = object::File::parse(&*bytes).map_err(|e| {
            Error::load(format!(
                "{path}: not an ELF code object ({e}); give a .hsaco / .co built for an AMDGPU target \
                 (a HIP offload bundle must be unbundled first, e.g. clang --no-gpu-bundle-output)"
            ))
        })?;
        // e_machine (bytes 18..20) must be EM_AMDGPU.
        let em_amdgpu = gcn_embed::elf::EM_AMDGPU.to_le_bytes();
        if bytes.get(18..20) != Some(&em_amdgpu[..]) {
            return Err(Error::load(format!(
                "{path}: an ELF file, but not an AMDGPU code object (e_machine is not EM_AMDGPU)"
            )));
        }
        // The identifying header fields (e_flags): gcn-embed's reader, which
        // gcn-patch's lift uses too.
        let header =
            gcn_embed::elf::read_header(&bytes).map_err(|e| Error::load(format!("{path}: {e}")))?;
        // The metadata note: gcn-raw's reader, which gcn-patch's lift uses too.
        let note = gcn_raw::note::amdgpu_metadata(&bytes).map_err(|e| {
            Error::load(format!(
                "{path}: not an ELF64 code object ({e}); AMDGPU code objects are ELF64"
            ))
        })?;
        let meta: Option<Value> = match note {
            Some(mut desc) => Some(rmpv::decode::read_value(&mut desc).map_err(|e| {
                Error::load(format!(
                    "{path}: the AMDGPU metadata note is not valid MessagePack: {e}"
                ))
            })?),
            None => None,
        };
        let meta = meta.ok_or_else(|| {
            Error::load(format!(
                "{path}: no AMDGPU metadata note (NT_AMDGPU_METADATA); code object v3 or later is needed"
            ))
        })?;
        let target = field(&meta, "amdhsa.target")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        // `amdgcn-amd-amdhsa--gfx942:xnack-`, `amdgpu9.42-amd-amdhsa-unknown-gfx942`
        // or `amdgcn-amd-amdhsa--gfx9-4-generic`: the processor is the fifth
        // `-`-separated field, and a generic target's name holds `-`s.
        let triple = target.split(':').next().unwrap_or("");
        let processor = triple
            .splitn(5, '-')
            .nth(4)
            .or_else(|| triple.rsplit('-').next())
            .unwrap_or("")
            .to_string();
        // No `amdhsa.target` (aiter's hand-written objects): the processor
        // from the ELF header's EF_AMDGPU_MACH, through gcn-embed's processor
        // table (the one table of `e_flags` values in the workspace).
        let processor = if processor.is_empty() {
            gcn_embed::elf::EFlags::decode(header.e_flags)
                .processor()
                .map_or_else(String::new, |p| p.name.to_string())
        } else {
            processor
        };
        let mut kernels = Vec::new();
        let list = field(&meta, "amdhsa.kernels")
            .and_then(Value::as_array)
            .ok_or_else(|| Error::load(format!("{path}: the metadata has no amdhsa.kernels")))?;
        for k in list {
            let s = |key: &str| field(k, key).and_then(Value::as_str).map(str::to_string);
            let n = |key: &str| field(k, key).and_then(Value::as_u64);
            let name = s(".name").ok_or_else(|| {
                Error::load(format!("{path}: a kernel in the metadata has no .name"))
            })?;
            let symbol = s(".symbol").unwrap_or_else(|| format!("{name}.kd"));
            let mut args = Vec::new();
            for a in field(k, ".args")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let an = |key: &str| field(a, key).and_then(Value::as_u64);
                let as_ = |key: &str| field(a, key).and_then(Value::as_str).map(str::to_string);
                let offset = an(".offset").ok_or_else(|| {
                    Error::load(format!(
                        "{path}: kernel `{name}`: an argument has no .offset"
                    ))
                })?;
                let size = an(".size").ok_or_else(|| {
                    Error::load(format!("{path}: kernel `{name}`: an argument has no .size"))
                })?;
                // `.offset + .size` in 128 bits: no wrap, no truncation.
                let end = offset as u128 + size as u128;
                if end > MAX_KERNARG_BYTES as u128 {
                    return Err(Error::Limit {
                        context: format!(
                            "{path}: kernel `{name}`: argument {} `{}`",
                            args.len(),
                            as_(".name").unwrap_or_default()
                        ),
                        field: format!("metadata .offset + .size ({offset} + {size})"),
                        value: end,
                        limit: MAX_KERNARG_BYTES as u128,
                        hint: "the emulator builds kernarg segments of at most this many bytes; the metadata is corrupt".into(),
                    });
                }
                args.push(Arg {
                    name: as_(".name"),
                    offset: offset as u32,
                    size: size as u32,
                    value_kind: as_(".value_kind").unwrap_or_default(),
                    address_space: as_(".address_space"),
                    type_name: as_(".type_name"),
                });
            }
            let kd_sym = file.symbols().find(|sym| sym.name() == Ok(symbol.as_str()));
            let kd_sym = kd_sym.ok_or_else(|| {
                Error::load(format!(
                    "{path}: kernel `{name}`: no descriptor symbol `{symbol}`"
                ))
            })?;
            let kd_bytes = read_at(&file, kd_sym.address(), 64).ok_or_else(|| {
                Error::load(format!(
                    "{path}: kernel `{name}`: descriptor `{symbol}` at {:#x} is not inside a section with data",
                    kd_sym.address()
                ))
            })?;
            let descriptor = Descriptor::parse(kd_bytes.try_into().unwrap());
            let entry = (kd_sym.address() as i64)
                .checked_add(descriptor.kernel_code_entry_byte_offset)
                .ok_or_else(|| {
                    Error::load(format!(
                        "{path}: kernel `{name}`: descriptor `{symbol}` at {:#x} has kernel_code_entry_byte_offset {} that points outside the address space",
                        kd_sym.address(),
                        descriptor.kernel_code_entry_byte_offset
                    ))
                })? as u64;
            let code_end = file
                .symbols()
                .find(|sym| sym.address() == entry && sym.kind() == object::SymbolKind::Text)
                .map(|sym| entry.saturating_add(sym.size()))
                .filter(|&e| e > entry)
                .unwrap_or(u64::MAX);
            kernels.push(Kernel {
                name,
                descriptor,
                args,
                kernarg_size: n(".kernarg_segment_size").unwrap_or(0) as u32,
                kernarg_align: n(".kernarg_segment_align").unwrap_or(8) as u32,
                wavefront_size: n(".wavefront_size").unwrap_or(64) as u32,
                cluster_dims: cluster_dims(k),
                entry,
                code_end,
            });
        }
        Ok(CodeObject {
            path: path.to_string(),
            processor,
            target,
            kernels,
            bytes,
        })
    }

    /// The kernel named `name`; the error lists the kernels there are.
    pub fn kernel(&self, name: &str) -> Result<&Kernel> {
        self.kernels.iter().find(|k| k.name == name).ok_or_else(|| {
            Error::launch(format!(
                "{}: no kernel `{name}`; the code object has: {}",
                self.path,
                self.kernels
                    .iter()
                    .map(|k| k.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        })
    }
}

/// A kernel's `.cluster_dims` (three integers), `[0, 0, 0]` when absent
/// or not three integers (each clamped to `u32`).
fn cluster_dims(k: &Value) -> [u32; 3] {
    let Some(list) = field(k, ".cluster_dims").and_then(Value::as_array) else {
        return [0; 3];
    };
    let dims: Vec<u32> = list
        .iter()
        .filter_map(Value::as_u64)
        .map(|v| v.min(u32::MAX as u64) as u32)
        .collect();
    dims.try_into().unwrap_or([0; 3])
}

fn read_at<'d>(file: &object::File<'d>, addr: u64, len: u64) -> Option<&'d [u8]> {
    for s in file.sections() {
        if addr >= s.address() && addr.checked_add(len)? <= s.address().checked_add(s.size())? {
            let data = s.data().ok()?;
            let o = (addr - s.address()) as usize;
            return data.get(o..o + len as usize);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    /// aiter's topksoftmax for gfx942: a hand-written object without
    /// `amdhsa.target`, whose processor comes from `e_flags` alone.
    fn topksoftmax() -> Vec<u8> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/corpus/aiter/gfx942/topksoftmax/topksoftmax_4x256x8.co");
        std::fs::read(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; copy aiter's sample with tests/corpus/aiter.sh",
                path.display()
            )
        })
    }

    #[test]
    fn the_processor_of_an_object_without_a_target_comes_from_gcn_embeds_table() {
        let bytes = topksoftmax();
        let co = CodeObject::parse(bytes.clone(), "topksoftmax").unwrap();
        assert!(co.target.is_empty(), "the sample has no amdhsa.target");
        assert_eq!(co.processor, "gfx942");
        // Every processor of gcn-embed's table is named, not only the five
        // the emulator's own copy of the table had (gfx908, EF_AMDGPU_MACH
        // 0x030, was an empty processor, so the launch error named none).
        for (mach, name) in [
            (0x030u8, "gfx908"),
            (0x04f, "gfx950"),
            (0x05f, "gfx9-4-generic"),
        ] {
            let mut b = bytes.clone();
            b[48] = mach;
            let co = CodeObject::parse(b, "topksoftmax").unwrap();
            assert_eq!(co.processor, name, "mach {mach:#x}");
        }
        let mut b = bytes;
        b[48] = 0xfe; // no processor has this mach
        assert_eq!(CodeObject::parse(b, "x").unwrap().processor, "");
    }
}
