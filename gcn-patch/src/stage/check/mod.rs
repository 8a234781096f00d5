//! Checks run on patched, retargeted asm: structure (complete dump), register
//! budget, occupancy, wait counters.
//!
//! * [`budget`]: registers the instructions use against the descriptor,
//!   `.set` counts and metadata; [`budget::check_registers`] reports overuse
//!   at the patch line ([`RegisterPolicy::Error`]) or rewrites the counts
//!   ([`RegisterPolicy::Update`]), and reports the occupancy consequence.
//! * [`occupancy`](mod@occupancy): waves per SIMD from registers, LDS and workgroup size,
//!   following LLVM's `AMDGPUBaseInfo.cpp`, with the facts of [`crate::base::isa::Isa`].
//! * [`control`]: every path through a kernel ends in `s_endpgm` (or
//!   another way out): none falls off the kernel's end or branches into
//!   another kernel.
//! * [`waitcnt`]: wait values out of range or of another generation, and
//!   waits that cannot block.
//! * [`hazard`]: reads and overwrites of registers that pending memory
//!   operations will write (a control-flow-aware wait-counter analysis), and
//!   how far each wait could be loosened.
//!
//! Instruction-set facts (counter widths, register granules, occupancy
//! inputs) come from [`crate::base::isa`].

use serde::Deserialize;

/// What to do when the registers a kernel uses disagree with what it declares
/// (`.amdhsa_next_free_vgpr`, `.set …num_vgpr`, metadata `.vgpr_count`, …).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RegisterPolicy {
    /// Report overuse as an error (default): the assembler accepts it silently.
    #[default]
    Error,
    /// Rewrite descriptor, `.set` values and metadata consistently.
    Update,
}

pub mod budget;
pub mod control;
mod expr;
pub mod hazard;
pub mod launch;
pub mod occupancy;
pub mod structure;
pub mod waitcnt;

pub use budget::{analyze, check_registers, CheckOutcome, Declared, KernelBudget, Usage};
pub use hazard::HazardPolicy;
pub use occupancy::{occupancy, Limiter, Occupancy};
pub use waitcnt::check_waitcnt;
