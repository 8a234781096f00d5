//! Wait counters per generation: names, widths, the raw `s_waitcnt`
//! encoding, and the instruction that waits for one counter.
//!
//! Counter widths come from `llvm/lib/Target/AMDGPU/Utils/AMDGPUBaseInfo.cpp`
//! (`getVmcntBitWidthLo/Hi`, `getExpcntBitWidth`, `getLgkmcntBitWidth`,
//! `getStorecntBitWidth`, `getLoadcntBitWidth`, `getDscntBitWidth`,
//! `getKmcntBitWidth`, `getSamplecntBitWidth`, `getBvhcntBitWidth`):
//!//! | generation | vmcnt | expcnt | lgkmcnt | vscnt | loadcnt | storecnt | dscnt | kmcnt | samplecnt | bvhcnt |
//! |---|---|---|---|---|---|---|---|---|---|---|
//! | gfx6–gfx8 | 15 | 7 | 15 | – | – | – | – | – | – | – |
//! | gfx9 | 63 | 7 | 15 | – | – | – | – | – | – | – |
//! | gfx10 | 63 | 7 | 63 | 63 | – | – | – | – | – | – |
//! | gfx11 | 63 | 7 | 63 | 63 | – | – | – | – | – | – |
//! | gfx12 | – | 7 | – | – | 63 | 63 | 63 | 31 | 63 | 7 |

use std::fmt;

use gcn_embed::Generation;

/// One hardware wait counter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Counter {
    /// Vector memory operations (gfx6–gfx11; loads only on gfx10+).
    Vmcnt,
    /// Exports and GDS.
    Expcnt,
    /// LDS, GDS, constant (SMEM) and message operations (gfx6–gfx11).
    Lgkmcnt,
    /// Vector memory stores (gfx10, gfx11: `s_waitcnt_vscnt`).
    Vscnt,
    /// Vector memory loads (gfx12).
    Loadcnt,
    /// Vector memory stores (gfx12).
    Storecnt,
    /// Image sample operations (gfx12).
    Samplecnt,
    /// BVH operations (gfx12).
    Bvhcnt,
    /// LDS operations (gfx12).
    Dscnt,
    /// SMEM and message operations (gfx12).
    Kmcnt,
}

impl Counter {
    /// The counter's assembler name, e.g. `vmcnt`.
    pub fn name(self) -> &'static str {
        match self {
            Counter::Vmcnt => "vmcnt",
            Counter::Expcnt => "expcnt",
            Counter::Lgkmcnt => "lgkmcnt",
            Counter::Vscnt => "vscnt",
            Counter::Loadcnt => "loadcnt",
            Counter::Storecnt => "storecnt",
            Counter::Samplecnt => "samplecnt",
            Counter::Bvhcnt => "bvhcnt",
            Counter::Dscnt => "dscnt",
            Counter::Kmcnt => "kmcnt",
        }
    }

    /// The counter named `name` (`vmcnt`, `loadcnt`, …), if any.
    pub fn from_name(name: &str) -> Option<Counter> {
        Some(match name {
            "vmcnt" => Counter::Vmcnt,
            "expcnt" => Counter::Expcnt,
            "lgkmcnt" => Counter::Lgkmcnt,
            "vscnt" => Counter::Vscnt,
            "loadcnt" => Counter::Loadcnt,
            "storecnt" => Counter::Storecnt,
            "samplecnt" => Counter::Samplecnt,
            "bvhcnt" => Counter::Bvhcnt,
            "dscnt" => Counter::Dscnt,
            "kmcnt" => Counter::Kmcnt,
            _ => return None,
        })
    }
}

impl fmt::Display for Counter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The largest value of each wait counter on one generation (`None`: the
/// generation has no such counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitcntLimits {
    /// The generation.
    pub generation: Generation,
    /// `vmcnt` (gfx6–gfx11).
    pub vmcnt: Option<u32>,
    /// `expcnt` (all).
    pub expcnt: Option<u32>,
    /// `lgkmcnt` (gfx6–gfx11).
    pub lgkmcnt: Option<u32>,
    /// `vscnt` (gfx10, gfx11).
    pub vscnt: Option<u32>,
    /// `loadcnt` (gfx12).
    pub loadcnt: Option<u32>,
    /// `storecnt` (gfx12).
    pub storecnt: Option<u32>,
    /// `samplecnt` (gfx12).
    pub samplecnt: Option<u32>,
    /// `bvhcnt` (gfx12).
    pub bvhcnt: Option<u32>,
    /// `dscnt` (gfx12).
    pub dscnt: Option<u32>,
    /// `kmcnt` (gfx12).
    pub kmcnt: Option<u32>,
}

impl WaitcntLimits {
    /// The largest value of `counter`, if the generation has it.
    pub fn max(&self, counter: Counter) -> Option<u32> {
        match counter {
            Counter::Vmcnt => self.vmcnt,
            Counter::Expcnt => self.expcnt,
            Counter::Lgkmcnt => self.lgkmcnt,
            Counter::Vscnt => self.vscnt,
            Counter::Loadcnt => self.loadcnt,
            Counter::Storecnt => self.storecnt,
            Counter::Samplecnt => self.samplecnt,
            Counter::Bvhcnt => self.bvhcnt,
            Counter::Dscnt => self.dscnt,
            Counter::Kmcnt => self.kmcnt,
        }
    }

    /// True for GFX12 and later (`s_wait_*cnt` instead of `s_waitcnt`).
    pub fn split_counters(&self) -> bool {
        self.generation >= Generation::Gfx12
    }

    /// The instruction that waits for `counter` with value `n` on this
    /// generation, e.g. `s_waitcnt vmcnt(0)`, `s_waitcnt_vscnt null, 0x0`,
    /// `s_wait_loadcnt 0x0`; `None` if the counter does not exist here or `n`
    /// is out of range.
    pub fn wait_instruction(&self, counter: Counter, n: u32) -> Option<String> {
        let max = self.max(counter)?;
        if n > max {
            return None;
        }
        Some(match counter {
            Counter::Vmcnt | Counter::Expcnt | Counter::Lgkmcnt if !self.split_counters() => {
                format!("s_waitcnt {counter}({n})")
            }
            Counter::Vscnt => format!("s_waitcnt_vscnt null, {n:#x}"),
            _ => format!("s_wait_{counter} {n:#x}"),
        })
    }
}

/// What a wait instruction waits on, told from its mnemonic alone: the one
/// classification of wait instructions that the checks, the hazard model
/// and the `set-waitcnt` rule share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitInstruction {
    /// `s_waitcnt` (gfx6–gfx11): vmcnt, expcnt and lgkmcnt in one
    /// immediate, written `vmcnt(N) lgkmcnt(N)` or as a raw number.
    Combined,
    /// `s_waitcnt_vscnt`, `s_waitcnt_vmcnt`, `s_waitcnt_expcnt`,
    /// `s_waitcnt_lgkmcnt` (gfx10–gfx11): one counter, `SGPR, imm`.
    Register(Counter),
    /// `s_wait_loadcnt`, `s_wait_dscnt`, … (gfx12): one counter, an immediate.
    Split(Counter),
    /// `s_wait_loadcnt_dscnt`, `s_wait_storecnt_dscnt` (gfx12): two counters
    /// in one immediate, the first in bits 13:8 and the second in bits 5:0.
    SplitPair(Counter, Counter),
    /// `s_wait_idle` (gfx12): every counter to zero.
    Idle,
    /// A counter wait this model does not know (gfx12.5's `s_wait_xcnt`,
    /// `s_wait_asynccnt`, …; an unknown `s_waitcnt_*`): a wait, with no
    /// value the checks can count on.
    Unmodelled,
}

impl WaitInstruction {
    /// The wait `mnemonic` is, or `None` for anything else — including
    /// `s_waitcnt_depctr` and `s_wait_alu`, which wait on no counter.
    pub fn of(mnemonic: &str) -> Option<WaitInstruction> {
        use WaitInstruction::*;
        if mnemonic == "s_waitcnt" {
            return Some(Combined);
        }
        if mnemonic == "s_wait_idle" {
            return Some(Idle);
        }
        if let Some(name) = mnemonic.strip_prefix("s_waitcnt_") {
            return match name {
                "depctr" => None,
                "vscnt" | "vmcnt" | "expcnt" | "lgkmcnt" => Counter::from_name(name).map(Register),
                _ => Some(Unmodelled),
            };
        }
        let names = mnemonic.strip_prefix("s_wait_")?;
        if !names.ends_with("cnt") {
            return None;
        }
        let mut counters = names.split('_').map(Counter::from_name);
        Some(match (counters.next(), counters.next(), counters.next()) {
            (Some(Some(c)), None, _) => Split(c),
            (Some(Some(a)), Some(Some(b)), None) => SplitPair(a, b),
            _ => Unmodelled,
        })
    }
}

/// Counter limits of a generation (see the module table).
pub fn waitcnt_limits(generation: Generation) -> WaitcntLimits {
    use Generation::*;
    let (pre10, gfx10_11, gfx12) = (
        generation < Gfx10_1,
        (Gfx10_1..=Gfx11).contains(&generation),
        generation >= Gfx12,
    );
    let vmcnt = match generation {
        Gfx6 | Gfx7 | Gfx8 => Some(15),
        _ if gfx12 => None,
        _ => Some(63),
    };
    let some_if = |c: bool, v: u32| c.then_some(v);
    WaitcntLimits {
        generation,
        vmcnt,
        expcnt: Some(7),
        lgkmcnt: if pre10 {
            Some(15)
        } else {
            some_if(gfx10_11, 63)
        },
        vscnt: some_if(gfx10_11, 63),
        loadcnt: some_if(gfx12, 63),
        storecnt: some_if(gfx12, 63),
        samplecnt: some_if(gfx12, 63),
        bvhcnt: some_if(gfx12, 7),
        dscnt: some_if(gfx12, 63),
        kmcnt: some_if(gfx12, 31),
    }
}

/// Decode the raw `s_waitcnt` immediate (`decodeWaitcnt` / `encodeWaitcnt`
/// layout of `AMDGPUBaseInfo.cpp`) into vmcnt, expcnt and lgkmcnt.
pub fn decode_waitcnt(generation: Generation, imm: u32) -> Vec<(Counter, u32)> {
    let bits = |shift: u32, width: u32| (imm >> shift) & ((1 << width) - 1);
    let (vm, exp, lgkm) = match generation {
        Generation::Gfx6 | Generation::Gfx7 | Generation::Gfx8 => {
            (bits(0, 4), bits(4, 3), bits(8, 4))
        }
        Generation::Gfx9 => (bits(0, 4) | (bits(14, 2) << 4), bits(4, 3), bits(8, 4)),
        Generation::Gfx10_1 | Generation::Gfx10_3 => {
            (bits(0, 4) | (bits(14, 2) << 4), bits(4, 3), bits(8, 6))
        }
        _ => (bits(10, 6), bits(0, 3), bits(4, 6)),
    };
    vec![
        (Counter::Vmcnt, vm),
        (Counter::Expcnt, exp),
        (Counter::Lgkmcnt, lgkm),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_instructions_are_classified_by_mnemonic() {
        use WaitInstruction::*;
        assert_eq!(WaitInstruction::of("s_waitcnt"), Some(Combined));
        assert_eq!(
            WaitInstruction::of("s_waitcnt_vscnt"),
            Some(Register(Counter::Vscnt))
        );
        assert_eq!(
            WaitInstruction::of("s_waitcnt_lgkmcnt"),
            Some(Register(Counter::Lgkmcnt))
        );
        assert_eq!(WaitInstruction::of("s_waitcnt_depctr"), None);
        assert_eq!(WaitInstruction::of("s_wait_alu"), None);
        assert_eq!(WaitInstruction::of("s_wait_event"), None);
        assert_eq!(WaitInstruction::of("s_wait_idle"), Some(Idle));
        assert_eq!(
            WaitInstruction::of("s_wait_loadcnt"),
            Some(Split(Counter::Loadcnt))
        );
        assert_eq!(
            WaitInstruction::of("s_wait_storecnt_dscnt"),
            Some(SplitPair(Counter::Storecnt, Counter::Dscnt))
        );
        assert_eq!(WaitInstruction::of("s_wait_xcnt"), Some(Unmodelled));
        assert_eq!(WaitInstruction::of("s_add_u32"), None);
    }

    #[test]
    fn limits_follow_amdgpu_base_info() {
        let g9 = waitcnt_limits(Generation::Gfx9);
        assert_eq!(
            (g9.vmcnt, g9.expcnt, g9.lgkmcnt, g9.vscnt),
            (Some(63), Some(7), Some(15), None)
        );
        let g8 = waitcnt_limits(Generation::Gfx8);
        assert_eq!((g8.vmcnt, g8.lgkmcnt), (Some(15), Some(15)));
        let g10 = waitcnt_limits(Generation::Gfx10_3);
        assert_eq!(
            (g10.vmcnt, g10.lgkmcnt, g10.vscnt),
            (Some(63), Some(63), Some(63))
        );
        let g11 = waitcnt_limits(Generation::Gfx11);
        assert_eq!(
            (g11.vmcnt, g11.lgkmcnt, g11.vscnt),
            (Some(63), Some(63), Some(63))
        );
        let g12 = waitcnt_limits(Generation::Gfx12);
        assert_eq!(g12.vmcnt, None);
        assert_eq!(
            (
                g12.loadcnt,
                g12.storecnt,
                g12.dscnt,
                g12.kmcnt,
                g12.samplecnt,
                g12.bvhcnt,
                g12.expcnt
            ),
            (
                Some(63),
                Some(63),
                Some(63),
                Some(31),
                Some(63),
                Some(7),
                Some(7)
            )
        );
        assert_eq!(
            g9.wait_instruction(Counter::Vmcnt, 3).as_deref(),
            Some("s_waitcnt vmcnt(3)")
        );
        assert_eq!(g9.wait_instruction(Counter::Vmcnt, 64), None);
        assert_eq!(
            g11.wait_instruction(Counter::Vscnt, 0).as_deref(),
            Some("s_waitcnt_vscnt null, 0x0")
        );
        assert_eq!(
            g12.wait_instruction(Counter::Loadcnt, 2).as_deref(),
            Some("s_wait_loadcnt 0x2")
        );
        assert_eq!(g12.wait_instruction(Counter::Vmcnt, 0), None);
    }

    #[test]
    fn decodes_raw_immediates() {
        // llvm-mc-22 -mcpu=gfx942 prints `s_waitcnt 0xffff` as vmcnt(63) expcnt(7) lgkmcnt(15).
        assert_eq!(
            decode_waitcnt(Generation::Gfx9, 0xffff),
            vec![
                (Counter::Vmcnt, 63),
                (Counter::Expcnt, 7),
                (Counter::Lgkmcnt, 15)
            ]
        );
        // gfx11 encoding 0xfff7 (llvm-mc-22 -mcpu=gfx1100 for lgkmcnt(63) vmcnt(63)).
        assert_eq!(
            decode_waitcnt(Generation::Gfx11, 0xfff7),
            vec![
                (Counter::Vmcnt, 63),
                (Counter::Expcnt, 7),
                (Counter::Lgkmcnt, 63)
            ]
        );
        // gfx9 `s_waitcnt vmcnt(0) lgkmcnt(0)` encodes as 0x0070 (expcnt 7 = no wait).
        assert_eq!(
            decode_waitcnt(Generation::Gfx9, 0x0070),
            vec![
                (Counter::Vmcnt, 0),
                (Counter::Expcnt, 7),
                (Counter::Lgkmcnt, 0)
            ]
        );
    }
}
