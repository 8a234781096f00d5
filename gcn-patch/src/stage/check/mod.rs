//! Checks run on patched, retargeted asm: structure (complete dump), register
//! budget, occupancy, wait counters.
//!
//! * [`budget`]: registers the instructions use against the descriptor,
//!   `.set` counts and metadata; [`budget::check_registers`] reports overuse
//!   at the patch line ([`RegisterPolicy::Error`](crate::config::policy::RegisterPolicy::Error)) or rewrites the counts
//!   ([`RegisterPolicy::Update`](crate::config::policy::RegisterPolicy::Update)), and reports the occupancy consequence.
//! * `occupancy`: waves per SIMD from registers, LDS and workgroup size,
//!   following LLVM's `AMDGPUBaseInfo.cpp`, with the facts of [`crate::base::isa::Isa`].
//! * `control`: every path through a kernel ends in `s_endpgm` (or
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

pub mod budget;
pub(crate) mod control;
mod expr;
pub mod hazard;
pub(crate) mod msb;
pub(crate) mod occupancy;
pub(crate) mod structure;
pub mod triton_limits;
pub mod waitcnt;

pub use budget::{analyze, check_registers, CheckOutcome, Declared, KernelBudget, Usage};
pub use occupancy::{occupancy, Limiter, Occupancy};
pub use waitcnt::check_waitcnt;
