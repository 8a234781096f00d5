//! A functional emulator of AMDGPU kernels, run from their built code objects.
//!
//! It runs one dispatch of one kernel on the CPU, wave by wave, with the
//! semantics of AMD's CDNA ISA documents and LLVM's AMDGPU definitions.
//! Targets: gfx90a, gfx942, gfx950 (CDNA2/CDNA3/CDNA4), wave64.
//!
//! The stages, one module each:
//!
//! | stage | module | what |
//! |---|---|---|
//! | load | [`load`] | the code object: kernel descriptors, metadata `.args`, `.text` |
//! | decode | [`decode`] | `llvm-objdump -d` output parsed into [`decode::Instruction`]s |
//! | execute | `exec` (internal) | one wave's state and the semantics of each instruction, the reference; of it only [`Probe`] is an API |
//! | decode once | [`typed`] | the common instructions lowered once per dispatch to typed operations run over 64 lanes; the rest on `exec`, the reference |
//! | properties | [`isa`] | one instruction-property table (operands, counters, memory kind), generated from AMD's ISA XML |
//! | observe | [`observe`] | what each executed instruction did (wave, exec mask, every lane's memory access), for tools outside the executor |
//! | 8-bit floats | [`fp8`] | fp8/bf8 of gfx942 (FNUZ) and gfx950 (OCP) |
//! | MX formats | [`mx`] | gfx950's fp4 (E2M1), fp6 (E2M3, E3M2) and E8M0 scales |
//! | memory | [`memory`] | named allocations in one address space; LDS |
//! | dispatch | [`dispatch`] | the grid: workgroups in parallel, waves with `s_barrier` |
//! | launch | [`launch`] | launch descriptions (TOML), seeded random inputs, comparing two runs |
//! | RDNA3 | [`rdna`] | gfx11's names of gfx9 operations (one alias table), the RDNA targets run (wave32 and wave64) |
//! | sanitize | [`sanitize`] | premature reads, LDS races (stores in flight at a barrier too), uninitialized values (by propagation, reported at their use), out-of-bounds, barrier deadlocks; checks chosen by [`sanitize::Checks`] |
//! | profile | [`profile`] | exact counters of an observed launch, a device table, a trace-driven timing model |
//! | approximate | [`approx`] | `v_rcp_f32` and the other approximate instructions: their bounds, counts, seeded perturbation |
//!
//! The decoder knows nothing of the semantics: it turns LLVM's text into
//! operands; the executor gives them meaning. An instruction the executor
//! does not implement is an [`Error::Unsupported`] naming the mnemonic and
//! address, never skipped.
//!
//! ```no_run
//! use gcn_emu::{load::CodeObject, decode::Program, memory::Memory, dispatch::{Launch, ArgValue}};
//! let co = CodeObject::read_file(std::path::Path::new("saxpy.hsaco"))?;
//! let kernel = co.kernel("saxpy")?;
//! let program = Program::disassemble(&co, kernel, &gcn_emu::decode::find_objdump(None)?)?;
//! let mem = Memory::new();
//! let x = mem.alloc_bytes("x", &[0u8; 1024]);
//! let y = mem.alloc_bytes("y", &[0u8; 1024]);
//! let launch = Launch::new([1, 1, 1], [256, 1, 1]);
//! let args = [ArgValue::Bytes(2.0f32.to_le_bytes().to_vec()), ArgValue::Pointer(x),
//!             ArgValue::Pointer(y), ArgValue::Bytes(256u32.to_le_bytes().to_vec())];
//! gcn_emu::dispatch::run(&co, kernel, &program, &mem, &args, &launch)?;
//! # Ok::<(), gcn_emu::Error>(())
//! ```

// The error type carries the faulting instruction and its location by value;
// errors end a run, so their size costs nothing on the hot path.
#![allow(clippy::result_large_err)]

pub mod approx;
pub mod decode;
pub mod dispatch;
// The executor's state (`Wave`), context and entry points are its
// internals: public only for the crate's own tests, hidden from the API.
#[doc(hidden)]
pub mod exec;
pub mod fp8;
pub mod gfx1250_wmma;
pub mod isa;
pub mod launch;
pub mod load;
pub mod memory;
pub mod mx;
pub mod named_barrier;
pub mod npy;
pub mod observe;
pub mod profile;
pub mod rdna;
pub mod sanitize;
pub mod tensor;
pub mod typed;
pub mod waitcnt;
pub mod wmma;

mod error;
mod tally;
pub use error::Error;
/// Whether the executor implements an instruction form (`gcn-patch run
/// --list-unsupported`, the coverage survey).
pub use exec::{Probe, ProbeOutcome};

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
