//! # gcn-embed
//!
//! The dependency-free runtime half of gcn-patch: it knows every AMDGPU
//! processor LLVM 22 knows, parses and prints target IDs in every spelling
//! compilers and runtimes use, encodes and decodes AMDGPU ELF `e_flags`, and
//! picks which embedded code object (`.hsaco`) to load on a GPU with the ROCm
//! loader's rules.
//!
//! * [`target`](mod@target): the processor table ([`processors`], [`processor`]).
//! * [`target_id`]: [`TargetId`] (`gfx942:sramecc+:xnack-`, HSA ISA names,
//!   LLVM 23 / IREE 3.13 triples).
//! * [`family`](mod@family): ROCm TheRock family names (`gfx94X-dcgpu`, `gfx110X-all`)
//!   and [`expand`].
//! * [`elf`]: `EM_AMDGPU`, `EF_AMDGPU_*`, [`EFlags`].
//! * [`select`](mod@select): [`CodeObject`], [`Kernel`], [`select()`].
//! * [`kernels`]: [`Kernels`], the generated table of every kernel, looked
//!   up by name with a binary search.
//!
//! gcn-build (in `build.rs`) assembles the patched kernels and writes
//! `$OUT_DIR/gcn_kernels.rs`, a file of `static` [`Kernel`]s; the program
//! includes it with [`include_kernels!`] and picks an object per GPU:
//!
//! ```text
//! gcn_embed::include_kernels!();
//!
//! // `agent_isa` from hsa_isa_get_info_alt(HSA_ISA_INFO_NAME) or HIP's
//! // hipDeviceProp_t::gcnArchName.
//! let hsaco: &[u8] = MATMUL.select(agent_isa)?.bytes;
//! // or by name, among every kernel (a binary search):
//! let matmul = KERNELS.by_name("matmul").expect("embedded");
//! ```
//!
//! The same with a hand-written table (here one real gfx11-generic object):
//!
//! ```
//! use gcn_embed::{CodeObject, Kernel, TargetId};
//!
//! static OBJECTS: [CodeObject; 1] = [CodeObject {
//!     target: "gfx11-generic",
//! #   bytes: include_bytes!(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/gfx11-generic.hsaco")),
//! #   /*
//!     bytes: include_bytes!("k.gfx11-generic.hsaco"),
//! #   */
//!     sha256: "9222b1315494fbe46e4975a7f22528ec6fb1d0221751acb104755e8fd77c91df",
//!     kernels: &["k"],
//! }];
//! static K: Kernel = Kernel { name: "k", iree_executable: None, objects: &OBJECTS };
//!
//! // An RX 7800 XT (gfx1101) runs the gfx11-generic object...
//! let obj = K.select("amdgcn-amd-amdhsa--gfx1101").unwrap();
//! assert_eq!(obj.target, "gfx11-generic");
//! obj.verify().unwrap();
//! // ...an MI300X does not, and the error says what would.
//! let err = K.select("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-").unwrap_err();
//! assert!(err.to_string().contains("add `gfx942` or `gfx9-4-generic`"));
//!
//! // Target IDs in any spelling.
//! let t: TargetId = "amdgpu9.42-amd-amdhsa-unknown-gfx942:xnack-".parse().unwrap();
//! assert_eq!(t.name(), "gfx942:xnack-");
//! assert_eq!(t.hsa_isa_name(), "amdgcn-amd-amdhsa--gfx942:xnack-");
//! assert_eq!(gcn_embed::EFlags::for_target(&t).encode(), 0x64c);
//! assert_eq!(gcn_embed::expand("gfx120X-all").unwrap().len(), 2);
//! ```
#![warn(missing_docs)]

pub mod elf;
pub mod family;
pub mod kernels;
mod product;
pub mod select;
mod sha256;
pub mod target;
pub mod target_id;

pub use elf::{EFlags, FeatureState};
pub use family::{expand, families, family};
pub use kernels::{Kernels, KernelsError};
pub use select::{select, CodeObject, Kernel, SelectError};
pub use target::{processor, processors, Generation, Processor};
pub use target_id::{Feature, TargetId, TargetIdError, TargetIdErrorKind};

/// SHA-256 of `data`, lowercase hex (what [`CodeObject::sha256`] holds).
pub fn sha256_hex(data: &[u8]) -> String {
    sha256::sha256_hex(data)
}

/// Includes the kernel table gcn-build generated into
/// `$OUT_DIR/gcn_kernels.rs` (one `static` [`Kernel`] per kernel, and
/// `KERNELS`, a [`Kernels`] of them all).
#[macro_export]
macro_rules! include_kernels {
    () => {
        include!(concat!(env!("OUT_DIR"), "/gcn_kernels.rs"));
    };
}
