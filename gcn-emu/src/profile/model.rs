//! A first trace-driven timing model: the recorded per-wave instruction
//! streams of one CU's workgroups ([`super::WorkgroupTrace`]) re-scheduled
//! over the CU's 4 SIMDs, then the grid in rounds of workgroups over the
//! device's CUs.
//!
//! What is modelled, per CU:
//! - issue: each cycle one SIMD (in turn) has an issue slot; in it, up to
//!   one instruction per category (VALU/MFMA, SALU, vector memory, LDS,
//!   branch and the rest) from different waves of that SIMD, the oldest
//!   wave first; a wave issues at most one instruction per slot (AMD
//!   "Graphics Core Next Architecture" white paper, "the CU front end").
//! - pipes: a VALU instruction holds its SIMD's VALU for 4 cycles (one
//!   pass), a transcendental for 16 (LLVM SISchedule.td: 1 and 4 passes);
//!   an MFMA holds the SIMD's matrix core for its FLOPs divided by the
//!   device's per-SIMD peak rate of its type ([`Device::mfma_cycles`]),
//!   and a following MFMA waits for it;
//! - LDS: one pipe per CU; an access holds it for its phases and
//!   bank-conflict cycles ([`super::LdsRule`]), then returns after the LDS
//!   latency;
//! - vector memory: one address path per CU at one 64-byte line per
//!   cycle; each line looked up in a per-CU L1 (FIFO, its capacity
//!   guessed), then an L2 of the lines the CU touched before (as many as
//!   the device's L2 holds, FIFO; the one CU modelled has all of it), else
//!   HBM; a line in the L1 whose data is still on its way returns when it
//!   arrives; a
//!   load returns at the slowest line's latency, a store after the L2
//!   latency; returns in order;
//! - `s_waitcnt vmcnt/lgkmcnt` against those in-flight counts;
//!   `s_barrier` across the workgroup's waves; `s_nop N` (N+1 cycles),
//!   `s_sleep N` (64·N cycles); scalar loads return after a fixed latency.
//!
//! The device: the grid in rounds of `resident` workgroups per CU over the
//! CUs in dispatch order; the partial last round timed with the
//! workgroups its busiest CU gets; the time is at least the compulsory
//! HBM traffic over the device's bandwidth; plus a launch overhead.
//!
//! Not modelled: register dependencies between VALU instructions and on
//! MFMA results (the required `s_nop`s are in the stream), `s_setprio`,
//! the instruction buffer and branch prediction (a branch costs its issue
//! only), scalar cache misses, TLBs, L2/MALL bandwidth and contention
//! between CUs, HBM channels, clock throttling, the LDS-DMA path's
//! separate timing, the export/GDS counters.

use std::collections::{HashMap, HashSet, VecDeque};

use serde::Serialize;

use super::counters::{Class, Mfma};
use super::device::Device;
use super::WorkgroupTrace;
use crate::decode::{Operand, Program};

/// Why a wave did not issue its next instruction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stall {
    /// `s_waitcnt` on vector memory (`vmcnt`).
    WaitVmem,
    /// `s_waitcnt` on LDS and scalar memory (`lgkmcnt`).
    WaitLgkm,
    /// `s_barrier`: other waves of the workgroup had not arrived.
    Barrier,
    /// The SIMD's VALU was busy.
    Valu,
    /// The SIMD's matrix core was busy with an earlier MFMA.
    Mfma,
    /// The CU's LDS pipe was full.
    Lds,
    /// The CU's vector memory path was full.
    Vmem,
    /// `s_nop`/`s_sleep`/a branch.
    Nop,
    /// Another wave won the issue slot.
    Issue,
}

impl Stall {
    /// Every reason, in order.
    pub const ALL: [Stall; 9] = [
        Stall::WaitVmem,
        Stall::WaitLgkm,
        Stall::Barrier,
        Stall::Valu,
        Stall::Mfma,
        Stall::Lds,
        Stall::Vmem,
        Stall::Nop,
        Stall::Issue,
    ];
    /// Its name in reports.
    pub fn name(self) -> &'static str {
        match self {
            Stall::WaitVmem => "wait vmcnt",
            Stall::WaitLgkm => "wait lgkmcnt",
            Stall::Barrier => "barrier",
            Stall::Valu => "valu busy",
            Stall::Mfma => "mfma busy",
            Stall::Lds => "lds busy",
            Stall::Vmem => "vmem busy",
            Stall::Nop => "nop/sleep/branch",
            Stall::Issue => "issue slot",
        }
    }
}

/// Per-instruction stall cycles, by reason, in [`Stall::ALL`] order.
pub type Stalls = [u64; 9];

/// One CU's schedule of some workgroups.
#[derive(Debug, Clone, Serialize)]
pub struct CuTiming {
    /// Workgroups resident together.
    pub workgroups: u32,
    /// Cycles until the last wave ended.
    pub cycles: u64,
    /// Stall cycles per instruction (summed over waves), by reason.
    pub stalls: Vec<Stalls>,
    /// Vector memory lines by level: L1 hits, L2 hits, HBM.
    pub lines_by_level: [u64; 3],
}

/// Tunables of the CU model that no source gives (stated in the output).
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Assumptions {
    /// Vector L1 bytes per CU.
    pub l1_bytes: u64,
    /// Cycles of work the LDS pipe may have queued before an LDS
    /// instruction stalls at issue.
    pub lds_queue: u64,
    /// Cycles of work the vector memory path may have queued.
    pub vmem_queue: u64,
    /// Cycles from the last wave's arrival at a barrier to the release.
    pub barrier_cycles: u64,
    /// The factor on the L2 and HBM latencies ([`time_launch`] sets it from
    /// the memory load of the grid; 1: unloaded).
    pub mem_latency_scale: f64,
}

impl Default for Assumptions {
    fn default() -> Self {
        Assumptions {
            l1_bytes: 32 * 1024,
            lds_queue: 32,
            vmem_queue: 64,
            barrier_cycles: 4,
            mem_latency_scale: 1.0,
        }
    }
}

struct Wave {
    wg: usize,
    trace_wg: usize,
    wave: usize,
    simd: usize,
    pc: usize,
    global_k: usize,
    ready: u64,
    /// Why `ready` is late: a barrier's release, a nop, a branch.
    ready_why: Stall,
    vm: VecDeque<u64>,
    lgkm: Vec<u64>,
    /// RDNA's vector stores and atomics without a return (gfx11 `vscnt`,
    /// gfx12 `storecnt`); gfx9 counts them in `vm`.
    vs: VecDeque<u64>,
    /// gfx12's scalar memory (`kmcnt`); gfx9 and gfx11 count it in `lgkm`.
    km: Vec<u64>,
    /// Arrived at the `s_barrier` of this instruction index at this time.
    at_barrier: Option<(u64, usize)>,
    done: bool,
}

/// How waves issue: gfx9's SIMD16 (a wave64 VALU instruction in 4
/// cycles, each SIMD's issue slot every 4th cycle) or RDNA's SIMD32 (a
/// wave32 VALU instruction in 1 cycle, a wave64 one in 2 passes, every
/// SIMD issuing each cycle: AMD "RDNA Architecture" white paper, 2019).
#[derive(Clone, Copy)]
struct Issue {
    /// RDNA's issue.
    on: bool,
    /// Cycles between two instructions of a wave.
    issue: u64,
    /// Cycles a VALU instruction holds its SIMD's VALU (a transcendental:
    /// 4 times as many).
    valu: u64,
}

impl Issue {
    fn of(device: &Device, traces: &[WorkgroupTrace]) -> Issue {
        let gen = crate::waitcnt::Generation::of(device.processor);
        if matches!(gen, None | Some(crate::waitcnt::Generation::Gfx9)) {
            return Issue {
                on: false,
                issue: 4,
                valu: 4,
            };
        }
        let wave32 = traces.first().is_some_and(|t| t.wave_size == 32);
        Issue {
            on: true,
            issue: 1,
            valu: if wave32 { 1 } else { 2 },
        }
    }
}

/// What an instruction needs, decoded once.
#[derive(Clone, Copy)]
struct Op {
    class: Class,
    mfma_cycles: u64,
    vmcnt: Option<u32>,
    lgkmcnt: Option<u32>,
    /// RDNA: `vscnt` (gfx11), `storecnt` (gfx12).
    vscnt: Option<u32>,
    /// gfx12: `kmcnt` (`lgkmcnt` stands for `dscnt`, `vmcnt` for `loadcnt`).
    kmcnt: Option<u32>,
    /// RDNA: a vector memory access counted on `vscnt`/`storecnt`.
    store: bool,
    nop: u64,
}

fn decode_ops(program: &Program, device: &Device) -> Vec<Op> {
    use crate::waitcnt::{Counter, Generation};
    let gen = Generation::of(device.processor).unwrap_or_default();
    let table = match gen {
        Generation::Gfx9 => None,
        _ => crate::isa::table_for(device.processor),
    };
    program
        .instructions
        .iter()
        .map(|ins| {
            let class = Class::of(ins);
            // Rounded to the nearest cycle: the data sheets' peak rates are
            // rounded (1307.4 TFLOP/s gives 32.001 cycles for a 32-cycle
            // `v_mfma_f32_32x32x8_f16`).
            let mfma_cycles = Mfma::of(ins)
                .map(|m| device.mfma_cycles(m.ty, m.flops()).round() as u64)
                .unwrap_or(0)
                .max(if class == Class::Mfma { 4 } else { 0 });
            let (mut vmcnt, mut lgkmcnt, mut vscnt, mut kmcnt) = (None, None, None, None);
            // RDNA: the generation's waits and counters (`crate::waitcnt`).
            let mut store = false;
            if gen != Generation::Gfx9 && class == Class::Wait {
                if let Some(w) = crate::waitcnt::decode(ins, gen) {
                    let (vm, vs, lgkm) = match gen {
                        Generation::Gfx12 => (Counter::Load, Counter::Store, Counter::Ds),
                        _ => (Counter::Vm, Counter::Vs, Counter::Lgkm),
                    };
                    vmcnt = w.get(vm);
                    vscnt = w.get(vs);
                    lgkmcnt = w.get(lgkm);
                    kmcnt = w.get(Counter::Km);
                }
            } else if gen != Generation::Gfx9 && class == Class::Vmem {
                store = table
                    .and_then(|t| t.lookup(&ins.mnemonic))
                    .and_then(|p| {
                        let returns = match p.access {
                            crate::isa::Access::Atomic(_) => crate::waitcnt::atomic_returns(ins),
                            _ => !p.writes_memory(),
                        };
                        crate::waitcnt::event(p, returns)
                    })
                    .is_some_and(|e| e == crate::waitcnt::Event::VmemStore);
            } else if class == Class::Wait {
                let field = |name: &str| {
                    let at = ins.text.find(&format!("{name}("))?;
                    let rest = &ins.text[at + name.len() + 1..];
                    rest[..rest.find(')')?].trim().parse::<u32>().ok()
                };
                vmcnt = field("vmcnt");
                lgkmcnt = field("lgkmcnt");
                if vmcnt.is_none() && lgkmcnt.is_none() && !ins.text.contains("expcnt") {
                    // `s_waitcnt 0` (an immediate): gfx9's fields.
                    if let Some(Operand::Int(v)) = ins.ops.first().map(|s| &s.op) {
                        let v = *v as u32;
                        vmcnt = Some((v & 0xf) | ((v >> 14) & 3) << 4);
                        lgkmcnt = Some((v >> 8) & 0xf);
                    }
                }
            }
            let imm = match ins.ops.first().map(|s| &s.op) {
                Some(Operand::Int(v)) => (*v).max(0) as u64,
                _ => 0,
            };
            let nop = match class {
                Class::Nop => imm + 1,
                Class::Sleep => 64 * imm,
                _ => 0,
            };
            Op {
                class,
                mfma_cycles,
                vmcnt,
                lgkmcnt,
                vscnt,
                kmcnt,
                store,
                nop,
            }
        })
        .collect()
}

/// The time `count` in-flight operations (completion times) have at most
/// `n` outstanding.
fn drained(done_at: &[u64], n: u32) -> u64 {
    let n = n as usize;
    if done_at.len() <= n {
        return 0;
    }
    let mut v = done_at.to_vec();
    v.sort_unstable();
    v[v.len() - n - 1]
}

/// Schedule `resident` workgroups on one CU, their streams taken from
/// `traces` in turn (a trace is reused when there are fewer than
/// `resident`).
pub fn simulate_cu(
    program: &Program,
    device: &Device,
    traces: &[WorkgroupTrace],
    resident: u32,
    a: &Assumptions,
) -> CuTiming {
    schedule(program, device, traces, resident, a, None)
}

/// What a wave did over one span of cycles of a [`WaveTimeline`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// It issued the instruction (until it could issue its next one).
    Issue,
    /// It waited to issue the instruction, for this reason.
    Stall(Stall),
}

/// One span of a wave's cycles: `[start, end)`, spent on instruction
/// `index` (into [`Program::instructions`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    /// First cycle.
    pub start: u64,
    /// One past the last cycle.
    pub end: u64,
    /// The instruction.
    pub index: u32,
    /// Issue or stall.
    pub what: Activity,
}

/// One wave's time on the CU, as [`simulate_cu_timeline`] scheduled it: its
/// spans in time order, not overlapping. A wave's stall spans of an
/// instruction sum, by reason, to that wave's part of
/// [`CuTiming::stalls`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WaveTimeline {
    /// The workgroup's place in the CU's round (0-based).
    pub slot: u32,
    /// The workgroup whose recorded stream it ran ([`WorkgroupTrace::wg`]).
    pub wg: [u32; 3],
    /// The wave in its workgroup.
    pub wave: u32,
    /// The SIMD it ran on.
    pub simd: u32,
    /// Its spans.
    pub spans: Vec<Span>,
}

/// [`simulate_cu`], also keeping each wave's timeline (for a trace
/// viewer): the same schedule, the same [`CuTiming`].
pub fn simulate_cu_timeline(
    program: &Program,
    device: &Device,
    traces: &[WorkgroupTrace],
    resident: u32,
    a: &Assumptions,
) -> (CuTiming, Vec<WaveTimeline>) {
    let mut timeline = Vec::new();
    let timing = schedule(program, device, traces, resident, a, Some(&mut timeline));
    (timing, timeline)
}

fn schedule(
    program: &Program,
    device: &Device,
    traces: &[WorkgroupTrace],
    resident: u32,
    a: &Assumptions,
    mut timeline: Option<&mut Vec<WaveTimeline>>,
) -> CuTiming {
    let ops = decode_ops(program, device);
    let rdna = Issue::of(device, traces);
    // gfx12 counts scalar memory on its own `kmcnt`.
    let kmcnt_rules =
        crate::waitcnt::Generation::of(device.processor) == Some(crate::waitcnt::Generation::Gfx12);
    let n = program.instructions.len();
    let mut stalls = vec![[0u64; 9]; n];
    let mut waves: Vec<Wave> = Vec::new();
    if traces.is_empty() || resident == 0 {
        return CuTiming {
            workgroups: 0,
            cycles: 0,
            stalls,
            lines_by_level: [0; 3],
        };
    }
    for g in 0..resident as usize {
        let t = g % traces.len();
        for w in 0..traces[t].waves.len() {
            let simd = waves.len() % 4;
            waves.push(Wave {
                wg: g,
                trace_wg: t,
                wave: w,
                simd,
                pc: 0,
                global_k: 0,
                ready: 0,
                ready_why: Stall::Nop,
                vm: VecDeque::new(),
                lgkm: Vec::new(),
                vs: VecDeque::new(),
                km: Vec::new(),
                at_barrier: None,
                done: traces[t].waves[w].is_empty(),
            });
        }
    }
    let lat = |f: f64| f.round() as u64;
    let loaded = a.mem_latency_scale.max(1.0);
    let (l1_lat, l2_lat, hbm_lat) = (
        lat(device.l1_latency.value),
        lat(device.l2_latency.value * loaded),
        lat(device.hbm_latency.value * loaded),
    );
    let (lds_lat, smem_lat) = (
        lat(device.lds_latency.value),
        lat(device.smem_latency.value),
    );
    let mut valu_free = [0u64; 4];
    let mut mfma_free = [0u64; 4];
    let mut lds_free = 0u64;
    let mut vmem_free = 0u64;
    let l1_cap = (a.l1_bytes / 64).max(1) as usize;
    // The L1's lines, each with the time its data arrives.
    let mut l1: HashMap<u64, u64> = HashMap::new();
    let mut l1_order: VecDeque<u64> = VecDeque::new();
    // The L2: the lines the CU touched before, as many as the device's L2
    // holds (FIFO); the CU is given the whole L2 (see the module's notes).
    let l2_cap = (device.l2_bytes.value as u64 / 64).max(1) as usize;
    let mut seen: HashSet<u64> = HashSet::new();
    let mut seen_order: VecDeque<u64> = VecDeque::new();
    let mut levels = [0u64; 3];
    let mut t: u64 = 0;
    let mut end = 0u64;
    let mut idle = 0;
    // Earliest issue time of each wave's next instruction, and why.
    let blocker = |w: &Wave,
                   valu_free: &[u64; 4],
                   mfma_free: &[u64; 4],
                   lds_free: u64,
                   vmem_free: u64|
     -> (u64, Stall) {
        let step = &traces[w.trace_wg].waves[w.wave][w.pc];
        let op = ops[step.index as usize];
        let mut at = (w.ready, w.ready_why);
        let mut bump = |time: u64, why: Stall| {
            if time > at.0 {
                at = (time, why);
            }
        };
        match op.class {
            Class::Wait => {
                if let Some(c) = op.vmcnt {
                    let v: Vec<u64> = w.vm.iter().copied().collect();
                    bump(drained(&v, c), Stall::WaitVmem);
                }
                if let Some(c) = op.lgkmcnt {
                    bump(drained(&w.lgkm, c), Stall::WaitLgkm);
                }
                if let Some(c) = op.vscnt {
                    let v: Vec<u64> = w.vs.iter().copied().collect();
                    bump(drained(&v, c), Stall::WaitVmem);
                }
                if let Some(c) = op.kmcnt {
                    bump(drained(&w.km, c), Stall::WaitLgkm);
                }
            }
            Class::Valu | Class::Trans => bump(valu_free[w.simd], Stall::Valu),
            Class::Mfma => bump(mfma_free[w.simd], Stall::Mfma),
            Class::Lds => bump(lds_free.saturating_sub(a.lds_queue), Stall::Lds),
            Class::Vmem => bump(vmem_free.saturating_sub(a.vmem_queue), Stall::Vmem),
            _ => {}
        }
        at
    };
    let mut last_free: Vec<u64> = vec![0; waves.len()];
    if let Some(tl) = timeline.as_deref_mut() {
        *tl = waves
            .iter()
            .map(|w| WaveTimeline {
                slot: w.wg as u32,
                wg: traces[w.trace_wg].wg,
                wave: w.wave as u32,
                simd: w.simd as u32,
                spans: Vec::new(),
            })
            .collect();
    }
    let span = |tl: &mut Option<&mut Vec<WaveTimeline>>,
                wi: usize,
                start: u64,
                end: u64,
                index: usize,
                what: Activity| {
        if let Some(tl) = tl.as_deref_mut() {
            if end > start {
                tl[wi].spans.push(Span {
                    start,
                    end,
                    index: index as u32,
                    what,
                });
            }
        }
    };
    loop {
        if waves.iter().all(|w| w.done) {
            break;
        }
        // gfx9: one SIMD's issue slot per cycle, in turn; RDNA: every
        // SIMD32's each cycle.
        let turn = (t % 4) as usize;
        let mut used = [[false; 5]; 4];
        let mut issued_any = false;
        for wi in 0..waves.len() {
            let w = &waves[wi];
            if w.done || (!rdna.on && w.simd != turn) || w.at_barrier.is_some() {
                continue;
            }
            let (at, why) = blocker(w, &valu_free, &mfma_free, lds_free, vmem_free);
            if at > t {
                continue;
            }
            let step = traces[w.trace_wg].waves[w.wave][w.pc];
            let idx = step.index as usize;
            let op = ops[idx];
            let cat = match op.class {
                Class::Valu | Class::Trans | Class::Mfma => 0,
                Class::Salu | Class::Smem => 1,
                Class::Vmem => 2,
                Class::Lds => 3,
                _ => 4,
            };
            let s = w.simd;
            if used[s][cat] {
                continue;
            }
            used[s][cat] = true;
            issued_any = true;
            // Stall: from when the wave was free to now.
            let free = last_free[wi];
            if t > free {
                let bound = at.max(free);
                let blocked = bound - free;
                if blocked > 0 {
                    stalls[idx][Stall::ALL.iter().position(|&x| x == why).unwrap_or(8)] += blocked;
                }
                stalls[idx][8] += t - bound;
                span(&mut timeline, wi, free, bound, idx, Activity::Stall(why));
                span(
                    &mut timeline,
                    wi,
                    bound,
                    t,
                    idx,
                    Activity::Stall(Stall::Issue),
                );
            }
            let w = &mut waves[wi];
            w.ready = t + rdna.issue;
            w.ready_why = Stall::Nop;
            match op.class {
                Class::Valu => valu_free[s] = t + rdna.valu,
                Class::Trans => valu_free[s] = t + 4 * rdna.valu,
                Class::Mfma => mfma_free[s] = t.max(mfma_free[s]) + op.mfma_cycles,
                Class::Smem if kmcnt_rules => w.km.push(t + smem_lat),
                Class::Smem => w.lgkm.push(t + smem_lat),
                Class::Lds => {
                    lds_free = lds_free.max(t) + step.mem.lds_cycles.max(1) as u64;
                    w.lgkm.push(lds_free + lds_lat);
                }
                Class::Vmem => {
                    let lines = if step.mem.global {
                        let ls = traces[w.trace_wg]
                            .lines
                            .get(w.wave)
                            .and_then(|v| v.get(w.global_k));
                        w.global_k += 1;
                        ls.cloned().unwrap_or_default()
                    } else {
                        Vec::new()
                    };
                    vmem_free = vmem_free.max(t) + lines.len().max(1) as u64;
                    // A line in the L1 whose data is still on its way (an
                    // earlier miss) returns when it arrives.
                    let mut worst = vmem_free + l1_lat;
                    for l in &lines {
                        let key = *l;
                        let (level, at) = if let Some(&fill) = l1.get(&key) {
                            (0, fill.max(vmem_free + l1_lat))
                        } else if seen.contains(&key) {
                            (1, vmem_free + l2_lat)
                        } else {
                            (2, vmem_free + hbm_lat)
                        };
                        levels[level] += 1;
                        worst = worst.max(at);
                        if seen.insert(key) {
                            seen_order.push_back(key);
                            if seen_order.len() > l2_cap {
                                if let Some(old) = seen_order.pop_front() {
                                    seen.remove(&old);
                                }
                            }
                        }
                        if level > 0 {
                            l1.insert(key, at);
                            l1_order.push_back(key);
                            if l1_order.len() > l1_cap {
                                if let Some(old) = l1_order.pop_front() {
                                    l1.remove(&old);
                                }
                            }
                        }
                    }
                    let done = if step.mem.writes && !step.mem.lds {
                        vmem_free + l2_lat
                    } else {
                        worst
                    };
                    // Each counter returns in order.
                    let q = if op.store { &mut w.vs } else { &mut w.vm };
                    let done = done.max(q.back().copied().unwrap_or(0));
                    q.push_back(done);
                }
                Class::Nop | Class::Sleep => w.ready = t + op.nop.max(1),
                Class::Branch => w.ready = t + 8,
                Class::Barrier => w.at_barrier = Some((t, idx)),
                _ => {}
            }
            // Retire what has completed.
            while w.vm.front().is_some_and(|&d| d <= t) {
                w.vm.pop_front();
            }
            while w.vs.front().is_some_and(|&d| d <= t) {
                w.vs.pop_front();
            }
            w.lgkm.retain(|&d| d > t);
            w.km.retain(|&d| d > t);
            w.pc += 1;
            if op.class == Class::End || w.pc >= traces[w.trace_wg].waves[w.wave].len() {
                w.done = true;
                end = end.max(t + rdna.issue);
            }
            last_free[wi] = w.ready;
            span(&mut timeline, wi, t, w.ready, idx, Activity::Issue);
            // A barrier releases when every live wave of the workgroup is at it.
            let g = waves[wi].wg;
            let all = waves
                .iter()
                .filter(|x| x.wg == g && !x.done)
                .all(|x| x.at_barrier.is_some());
            if all && waves.iter().any(|x| x.wg == g && x.at_barrier.is_some()) {
                // The wait is the barrier's: from each wave's arrival (and
                // its issue) to the release.
                let release = t + a.barrier_cycles;
                for (j, x) in waves.iter_mut().enumerate().filter(|(_, x)| x.wg == g) {
                    if let Some((arrived, bidx)) = x.at_barrier.take() {
                        let from = arrived + rdna.issue;
                        if release > from {
                            stalls[bidx][2] += release - from;
                        }
                        span(
                            &mut timeline,
                            j,
                            from,
                            release,
                            bidx,
                            Activity::Stall(Stall::Barrier),
                        );
                        x.ready = x.ready.max(release);
                        last_free[j] = x.ready;
                    }
                }
            }
        }
        if issued_any {
            idle = 0;
        } else {
            idle += 1;
        }
        t += 1;
        if idle >= 4 {
            // Jump to the next time any wave could issue.
            let next = waves
                .iter()
                .filter(|w| !w.done && w.at_barrier.is_none())
                .map(|w| blocker(w, &valu_free, &mfma_free, lds_free, vmem_free).0)
                .min();
            match next {
                Some(n) if n > t => t = n,
                Some(_) => {}
                None => {
                    // Every live wave waits at a barrier no one else will
                    // reach (waves of the workgroup ended): release them.
                    for w in waves.iter_mut().filter(|w| w.at_barrier.is_some()) {
                        w.at_barrier = None;
                        w.ready = t;
                    }
                }
            }
            idle = 0;
        }
    }
    CuTiming {
        workgroups: resident,
        cycles: end.max(t),
        stalls,
        lines_by_level: levels,
    }
}

/// How a launch was timed.
#[derive(Debug, Clone, Serialize)]
pub struct Timing {
    /// Predicted kernel time, µs (launch overhead included).
    pub predicted_us: f64,
    /// Workgroups in the grid.
    pub workgroups: u64,
    /// Workgroups resident per CU (occupancy).
    pub resident: u32,
    /// Full rounds of `resident` workgroups on every CU.
    pub rounds: u64,
    /// Workgroups on the busiest CU in the partial last round (0: none).
    pub last_round: u32,
    /// A full round on one CU (when the grid has no full round, the
    /// busiest CU's workgroups).
    pub round: CuTiming,
    /// The partial last round on its busiest CU.
    pub partial: Option<CuTiming>,
    /// Cycles of the CU schedule over all rounds.
    pub cycles: u64,
    /// The compulsory HBM bytes and the time they take at peak, µs.
    pub hbm_bytes: u64,
    /// That time, µs.
    pub hbm_us: f64,
    /// Which bound the prediction is: "schedule" or "hbm bandwidth".
    pub bound: &'static str,
    /// CUs busy in the first round.
    pub active_cus: u64,
    /// The memory load of the first round (0–0.9): the larger of the L2's
    /// (the bytes the busy CUs move beyond their L1 per second over the L2
    /// bandwidth) and the HBM's (the round's share of the compulsory bytes
    /// per second over the HBM bandwidth).
    pub memory_load: f64,
    /// The factor on the L2 and HBM latencies at that load
    /// (`1 / (1 − load)`).
    pub latency_scale: f64,
    /// The clock cycles were turned into time with, MHz.
    pub clock_mhz: f64,
}

/// The highest memory load the latency rule takes (the factor stays
/// finite: at most 1 / (1 − 0.9) = 10).
const MAX_LOAD: f64 = 0.9;

/// Time a launch of `workgroups` workgroups: `traces` are the sampled
/// workgroups (one CU's round), `hbm_bytes` the compulsory traffic.
///
/// The L2 and HBM latencies grow with the load of the memory system, as a
/// queue's wait does: `latency × 1 / (1 − ρ)`, with ρ the larger of the
/// L2's load (bytes the busy CUs move beyond their L1 per second over
/// [`Device::l2_bytes_per_clock`]) and the HBM's (the round's share of the
/// compulsory bytes per second over [`Device::hbm_gbps`]). The round's
/// schedule sets ρ and ρ sets the schedule's latencies: a few damped
/// fixed-point steps solve it. Cycles become time at the device's
/// sustained clock ([`Device::sustained_mhz`]).
pub fn time_launch(
    program: &Program,
    device: &Device,
    traces: &[WorkgroupTrace],
    workgroups: u64,
    resident: u32,
    hbm_bytes: u64,
    a: &Assumptions,
) -> Timing {
    let cus = device.cus.value as u64;
    let resident = resident.max(1);
    let per_round = cus * resident as u64;
    let rounds = workgroups / per_round;
    let rem = workgroups % per_round;
    let last_round = rem.div_ceil(cus) as u32;
    let clock = device.sustained_mhz.value;
    // A grid smaller than a round: the busiest CU's workgroups are the round.
    let first = if rounds == 0 { last_round } else { resident };
    let active_cus = if rounds == 0 {
        workgroups.div_ceil(first.max(1) as u64).min(cus)
    } else {
        cus
    };
    let mut a = *a;
    let mut round = simulate_cu(program, device, traces, first, &a);
    let mut load = 0.0;
    // The first round's share of the grid, to spread the compulsory HBM
    // bytes over the rounds.
    let share = (active_cus * first as u64) as f64 / workgroups.max(1) as f64;
    for _ in 0..8 {
        let secs = round.cycles.max(1) as f64 / (clock * 1e6);
        let beyond_l1 = (round.lines_by_level[1] + round.lines_by_level[2]) as f64 * 64.0;
        let l2 =
            active_cus as f64 * beyond_l1 / secs / (device.l2_bytes_per_clock.value * clock * 1e6);
        let hbm = hbm_bytes as f64 * share.min(1.0) / secs / (device.hbm_gbps.value * 1e9);
        load = l2.max(hbm).min(MAX_LOAD);
        let want = 1.0 / (1.0 - load);
        if (want - a.mem_latency_scale).abs() < 0.02 * a.mem_latency_scale {
            break;
        }
        a.mem_latency_scale = 0.5 * (a.mem_latency_scale + want);
        round = simulate_cu(program, device, traces, first, &a);
    }
    let partial = (last_round > 0 && rounds > 0)
        .then(|| simulate_cu(program, device, traces, last_round, &a));
    let cycles = if rounds == 0 {
        round.cycles
    } else {
        rounds
            .saturating_mul(round.cycles)
            .saturating_add(partial.as_ref().map_or(0, |p| p.cycles))
    };
    let sched_us = cycles as f64 / clock;
    let hbm_us = hbm_bytes as f64 / (device.hbm_gbps.value * 1e3);
    let (core, bound) = if hbm_us > sched_us {
        (hbm_us, "hbm bandwidth")
    } else {
        (sched_us, "schedule")
    };
    Timing {
        predicted_us: core + device.launch_us.value,
        workgroups,
        resident,
        rounds,
        last_round,
        round,
        partial,
        cycles,
        hbm_bytes,
        hbm_us,
        bound,
        active_cus,
        memory_load: load,
        latency_scale: a.mem_latency_scale,
        clock_mhz: clock,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decode::Instruction;
    use crate::profile::{MemCost, Step};

    fn ins(addr: u64, text: &str, word: u32) -> Instruction {
        let mnemonic = text.split_whitespace().next().unwrap();
        Instruction::new(addr, mnemonic, vec![], vec![], vec![word], text.into())
    }

    fn program(list: Vec<Instruction>) -> Program {
        Program {
            kernel: "k".into(),
            index: list.iter().enumerate().map(|(i, x)| (x.addr, i)).collect(),
            instructions: list,
            lines: HashMap::new(),
        }
    }

    /// One wave running every instruction of `p` once; global steps touch
    /// one line each (a store when `writes`).
    fn trace(p: &Program, wave_size: u32, exec: u64) -> WorkgroupTrace {
        let mut t = WorkgroupTrace {
            wave_size,
            ..Default::default()
        };
        let mut steps = Vec::new();
        let mut lines = Vec::new();
        for (i, x) in p.instructions.iter().enumerate() {
            let global = x.mnemonic.starts_with("global_");
            let mem = MemCost {
                global,
                writes: x.mnemonic.contains("store"),
                bytes: if global { 4 } else { 0 },
                ..Default::default()
            };
            if global {
                lines.push(vec![i as u64]);
            }
            steps.push(Step {
                index: i as u32,
                exec,
                mem,
            });
        }
        t.waves.push(steps);
        t.lines.push(lines);
        t
    }

    fn wait_stall(p: &Program, device: &str, wave_size: u32, at: usize) -> u64 {
        let d = Device::by_name(device).unwrap();
        let t = [trace(p, wave_size, 1)];
        let c = simulate_cu(p, &d, &t, 1, &Assumptions::default());
        c.stalls[at][..2].iter().sum()
    }

    #[test]
    fn rdna_waits_wait_on_their_own_counter() {
        // gfx12: a store counts on storecnt; s_wait_loadcnt does not wait
        // for it, s_wait_storecnt does.
        let store = |w: Instruction| {
            program(vec![
                ins(0, "global_store_b32 v[0:1], v2, off", 0),
                w,
                ins(8, "s_endpgm", 0xbfb0_0000),
            ])
        };
        let load_wait = store(ins(4, "s_wait_loadcnt 0x0", 0xbfc0_0000));
        assert_eq!(wait_stall(&load_wait, "rx9070xt", 32, 1), 0);
        let store_wait = store(ins(4, "s_wait_storecnt 0x0", 0xbfc1_0000));
        assert!(wait_stall(&store_wait, "rx9070xt", 32, 1) > 0);
        // gfx11: vscnt, not vmcnt (s_waitcnt vmcnt(0) lgkmcnt(63) expcnt(7)).
        let p = program(vec![
            ins(0, "global_store_b32 v[0:1], v2, off", 0),
            ins(4, "s_waitcnt vmcnt(0)", 0xbf89_03f7),
            ins(8, "s_endpgm", 0xbfb0_0000),
        ]);
        assert_eq!(wait_stall(&p, "rx7900xtx", 32, 1), 0);
        let p = program(vec![
            ins(0, "global_store_b32 v[0:1], v2, off", 0),
            ins(4, "s_waitcnt_vscnt null, 0x0", 0xbc7c_0000),
            ins(8, "s_endpgm", 0xbfb0_0000),
        ]);
        assert!(wait_stall(&p, "rx7900xtx", 32, 1) > 0);
        // gfx9: the store is on vmcnt.
        let p = program(vec![
            ins(0, "global_store_dword v[0:1], v2, off", 0),
            ins(4, "s_waitcnt vmcnt(0)", 0xbf8c_0f70),
            ins(8, "s_endpgm", 0xbf81_0000),
        ]);
        assert!(wait_stall(&p, "mi300x", 64, 1) > 0);
    }

    #[test]
    fn rdna_wave32_valu_issues_every_cycle_and_wave64_in_two_passes() {
        let mut list: Vec<Instruction> = (0..32)
            .map(|i| ins(4 * i, "v_add_f32_e32 v1, v1, v2", 0))
            .collect();
        list.push(ins(128, "s_endpgm", 0xbfb0_0000));
        let p = program(list);
        let cycles = |device: &str, wave_size: u32| {
            let d = Device::by_name(device).unwrap();
            let t = [trace(&p, wave_size, 1)];
            simulate_cu(&p, &d, &t, 1, &Assumptions::default()).cycles
        };
        let (cdna, w32, w64) = (
            cycles("mi300x", 64),
            cycles("rx7900xtx", 32),
            cycles("rx7900xtx", 64),
        );
        // 32 dependent-free VALU instructions: 4 cycles each on a SIMD16,
        // 1 (wave32) or 2 (wave64) on a SIMD32.
        assert!((128..=136).contains(&cdna), "{cdna}");
        assert!((32..=36).contains(&w32), "{w32}");
        assert!((64..=68).contains(&w64), "{w64}");
    }
}
