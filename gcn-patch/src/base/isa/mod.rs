//! isa: per-generation instruction-set facts, below every stage that needs
//! them (patch, retarget, check), so no stage reaches sideways into another.
//!
//! * `waitcnt`: wait counters of each generation ([`Counter`]), their
//!   widths ([`WaitcntLimits`], [`waitcnt_limits`]), the raw `s_waitcnt`
//!   encoding, the instruction that waits for one counter, and what a wait
//!   instruction waits on ([`WaitInstruction`]).
//! * `registers`: register-file facts of one target ([`Isa`]): VGPR
//!   allocation granule and file size, AGPR layout, extra and addressable
//!   SGPRs, LDS per CU, the hardware wave limit — the occupancy inputs.
//! * [`major`]: LLVM's `IsaVersion::Major` of a generation.
//!
//! Sources are LLVM's `AMDGPUBaseInfo.cpp`, `SIInsertWaitcnts.cpp` and
//! `AMDGPUUsage.rst`; each item names the function it follows.

pub(crate) mod registers;
pub(crate) mod waitcnt;

pub use registers::{align_to, Isa, EUS_PER_CU};
pub use waitcnt::{decode_waitcnt, waitcnt_limits, Counter, WaitInstruction, WaitcntLimits};

use gcn_embed::Generation;

/// LLVM `IsaVersion::Major` of a generation.
pub fn major(generation: Generation) -> u32 {
    match generation {
        Generation::Gfx6 => 6,
        Generation::Gfx7 => 7,
        Generation::Gfx8 => 8,
        Generation::Gfx9 => 9,
        Generation::Gfx10_1 | Generation::Gfx10_3 => 10,
        Generation::Gfx11 => 11,
        Generation::Gfx12 | Generation::Gfx12_5 => 12,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn major_versions() {
        assert_eq!(major(Generation::Gfx9), 9);
        assert_eq!(major(Generation::Gfx10_3), 10);
        assert_eq!(major(Generation::Gfx12_5), 12);
    }
}
