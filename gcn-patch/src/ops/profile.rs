//! `gcn-patch profile`: one dispatch of a kernel, as `run` takes it, emulated
//! under the profiler ([`gcn_emu::profile`]): exact counters of the
//! workgroups run and a predicted time on a device from the timing model.
//!
//! Sampling: the emulator runs the first `resident` workgroups of the grid
//! (one CU's round at the kernel's occupancy); the counters are those
//! workgroups' and the kernel's totals are scaled to the grid. The report
//! says so ([`ProfileReport::sampled`]).

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

use gcn_emu::dispatch::ArgValue;
use gcn_emu::profile::counters::{Counters, Counts, Mfma};
use gcn_emu::profile::device::Device;
use gcn_emu::profile::model::{self, Assumptions, Stall, Timing};
use gcn_emu::profile::{LdsRule, Profiler, WorkgroupTrace};

use super::run::{RunError, RunOptions};

pub mod html;
pub mod trace;
use super::Tools;
use crate::base::diag::{Code, Diagnostic, Setting};

/// What `gcn-patch profile` is asked to do.
#[derive(Debug, Clone, Default)]
pub struct ProfileOptions {
    /// The dispatch, as `gcn-patch run` takes it (its `out` and `sanitize`
    /// are not used).
    pub run: RunOptions,
    /// The device to time it on ([`Device::by_name`]).
    pub device: String,
    /// Keep each wave's timeline of the CU round
    /// ([`ProfileReport::timeline`], for `--trace`).
    pub timeline: bool,
}

/// Each wave's timeline of the timed CU round
/// ([`model::simulate_cu_timeline`]): what `--trace` writes.
#[derive(Debug, Clone)]
pub struct Timeline {
    /// The device's clock, MHz: cycles to µs.
    pub clock_mhz: f64,
    /// Each wave of the round, its spans in cycles.
    pub waves: Vec<model::WaveTimeline>,
    /// Address and text of each instruction of the program (the spans'
    /// `index`).
    pub instructions: Vec<(u64, String)>,
}

/// One instruction of the report.
#[derive(Debug, Clone, Serialize)]
pub struct Line {
    /// Its address in the code object.
    pub address: u64,
    /// Its text as LLVM prints it.
    pub text: String,
    /// The asm line it came from (`file:line: text`), when known.
    pub source: Option<String>,
    /// Wave-instructions executed (in the sampled workgroups).
    pub executed: u64,
    /// Active lanes summed over executions.
    pub active_lanes: u64,
    /// Stall cycles before it issued, by reason (one CU's round, summed
    /// over waves).
    pub stall_cycles: BTreeMap<&'static str, u64>,
    /// LDS bank-conflict cycles.
    pub lds_bank_conflicts: u64,
    /// Distinct global cache lines, summed over its executions.
    pub cache_lines: CacheLines,
}

/// Distinct global lines.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct CacheLines {
    /// 64-byte lines.
    pub lines64: u64,
    /// 128-byte lines.
    pub lines128: u64,
    /// 64-byte lines per executed wave-instruction that accessed global
    /// memory (1 for a fully coalesced dword load of 16 lanes; 4 for 64
    /// lanes).
    pub per_access: f64,
}

/// Stall cycles of one reason.
#[derive(Debug, Clone, Serialize)]
pub struct StallTotal {
    /// The reason ([`Stall::name`]).
    pub reason: String,
    /// Cycles, summed over the waves of one CU's round.
    pub cycles: u64,
}

/// The version of the `--json` schema.
pub const SCHEMA_VERSION: u32 = 1;

/// What `gcn-patch profile` found.
#[derive(Debug, Clone, Serialize)]
pub struct ProfileReport {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The kernel.
    pub kernel: String,
    /// The processor the object ran as.
    pub processor: String,
    /// The device timed on.
    pub device: String,
    /// Predicted kernel time, µs.
    pub predicted_us: f64,
    /// CU cycles over all rounds.
    pub cycles: u64,
    /// Cycles of one CU's round ([`ProfileReport::round_workgroups`]).
    pub cycles_per_round: u64,
    /// Workgroups of that round: `resident`, or the busiest CU's when the
    /// grid fills no round.
    pub round_workgroups: u32,
    /// Workgroups resident per CU.
    pub resident_workgroups: u32,
    /// Waves per SIMD (occupancy) and what limits it.
    pub waves_per_simd: u32,
    /// What limits occupancy.
    pub occupancy_limited_by: String,
    /// Workgroups in the grid.
    pub workgroups: u64,
    /// Workgroups emulated (the sample); the counters are theirs.
    pub sampled: u64,
    /// FLOPs of the whole grid (MFMA only; the sample's scaled).
    pub flops: f64,
    /// Global bytes requested by the whole grid (the sample's scaled).
    pub global_bytes: f64,
    /// Achieved TFLOP/s at the predicted time.
    pub tflops: f64,
    /// The device's peak for the kernel's dominant MFMA type (None: no MFMA).
    pub peak_tflops: Option<f64>,
    /// Achieved global bytes/s, GB/s.
    pub gbps: f64,
    /// The device's HBM bandwidth, GB/s.
    pub peak_gbps: f64,
    /// The compulsory HBM bytes (every buffer argument once).
    pub hbm_bytes: u64,
    /// "schedule" or "hbm bandwidth".
    pub bound: String,
    /// Stall cycles of one CU's round, by reason, largest first.
    pub stalls: Vec<StallTotal>,
    /// Kernel totals of the sampled workgroups.
    pub totals: Counts,
    /// Every executed instruction, in address order.
    pub instructions: Vec<Line>,
    /// What the prediction rests on that is not measured, and what the
    /// model leaves out.
    pub notes: Vec<String>,
    /// The model's timing detail.
    #[serde(skip)]
    pub timing: Option<Timing>,
    /// Each wave's timeline of the round, when asked for
    /// ([`ProfileOptions::timeline`]).
    #[serde(skip)]
    pub timeline: Option<Timeline>,
    /// Every instruction of the program, executed or not, in address
    /// order: address, text and asm line (`file:line: text`, when known),
    /// for the annotated listing ([`annotated`]).
    #[serde(skip)]
    pub program: Vec<(u64, String, Option<String>)>,
}

/// What the model leaves out on RDNA (gfx11, gfx12), in the notes of a
/// profile on an RDNA device.
const RDNA_NOTE: &str = "RDNA: a CU of the model is a WGP (4 SIMD32s, one LDS); every SIMD issues each cycle, a VALU instruction in 1 pass (wave32) or 2 (wave64), a transcendental 4 times that; the waits follow the generation's counters (gfx11 vmcnt/vscnt/lgkmcnt, gfx12 loadcnt/storecnt/dscnt/kmcnt); not modelled: VOPD dual issue (no v_dual_* pair issues faster than its halves would), WMMA rates (a WMMA holds the matrix pipe 4 cycles), s_delay_alu and s_wait_alu (ALU dependency stalls: one scalar issue each), the L0/L1 split of the vector cache (one L1 as on CDNA), the Infinity Cache as a level, GDDR channels; memory latencies are CDNA guesses";

/// What the model does not model (printed with every report).
pub const NOT_MODELLED: &str = "not modelled: VALU and MFMA result dependencies, s_setprio, the instruction buffer and branch costs beyond issue, scalar cache misses, TLBs, the MALL, HBM channels, contention between CUs beyond the memory load's latency factor, the clock's variation with the kernel (one sustained clock per device)";

fn usage(setting: Option<Setting>, msg: String) -> RunError {
    let d = Diagnostic::error(Code::RunUsage, msg);
    RunError::Usage(
        match setting {
            Some(s) => d.about(s),
            None => d,
        }
        .into(),
    )
}

/// Profile the dispatch `opts` describes.
// gcn_emu::Error is large by design (its crate root says why).
#[allow(clippy::result_large_err)]
pub fn profile(opts: &ProfileOptions, tools: &Tools) -> Result<ProfileReport, RunError> {
    let device = Device::by_name(&opts.device).ok_or_else(|| {
        usage(
            Some(Setting::Device),
            format!(
                "unknown device `{}`; known: {}",
                opts.device,
                Device::names().join(", ")
            ),
        )
    })?;
    let mut run = opts.run.clone();
    run.out = None;
    run.sanitize = Default::default();
    let object = gcn_emu::load::CodeObject::read_file(&run.object)
        .map_err(|e| usage(None, e.to_string()))?;
    let generic = object.processor.ends_with("-generic");
    if generic && run.run_as.is_none() {
        run.run_as = Some(device.processor.to_string());
    }
    let processor = run.run_as.clone().unwrap_or(object.processor.clone());
    let same: Vec<&str> = Device::all()
        .iter()
        .filter(|d| d.processor == processor)
        .map(|d| d.name)
        .collect();
    if same.is_empty() {
        return Err(usage(
            Some(Setting::Device),
            format!(
                "no device of the timing model's table is a {processor} (the object's processor): the devices are {}; profile an object built for one of their processors",
                Device::all()
                    .iter()
                    .map(|d| format!("{} ({})", d.name, d.processor))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ));
    }
    if processor != device.processor {
        return Err(usage(
            Some(Setting::Device),
            format!(
                "{} is a {} device; the object is built for {}: choose a {} device ({})",
                device.name,
                device.processor,
                object.processor,
                processor,
                same.join(", ")
            ),
        ));
    }
    let kernel = object
        .kernel(&run.kernel)
        .map_err(|e| usage(None, e.to_string()))?
        .clone();
    let target = gcn_embed::TargetId::parse(&processor).map_err(|e| {
        usage(
            Some(Setting::RunAs),
            format!("`{processor}` is not a target ID: {e}"),
        )
    })?;
    let workgroups: u128 = run.grid.iter().map(|&g| g as u128).product();
    if workgroups > u64::MAX as u128 {
        return Err(usage(
            Some(Setting::Grid),
            format!(
                "{:?} is {workgroups} workgroups; the profile times grids of at most 2⁶⁴ − 1: launch fewer",
                run.grid
            ),
        ));
    }
    let plan = Plan::new(
        &device,
        &target,
        &kernel,
        run.grid,
        run.block,
        run.dynamic_lds,
    )
    .keep_timeline(opts.timeline);
    let mut traces: Vec<WorkgroupTrace> = Vec::new();
    let mut program = None;
    let mut hbm_bytes = 0u64;
    super::run::run_with(&run, tools, |d| {
        let (stats, t, h) = plan.observe(d.co, d.kernel, d.program, d.mem, d.values, d.launch)?;
        traces = t;
        hbm_bytes = h;
        program = Some(d.program.clone());
        Ok(stats)
    })?;
    let program = program.expect("the runner ran");
    Ok(plan.report(&kernel.name, &program, &traces, hbm_bytes))
}

/// How a launch is sampled and timed: the device, occupancy, the sample.
pub(crate) struct Plan {
    device: Device,
    processor: String,
    occ: crate::stage::check::occupancy::Occupancy,
    resident: u32,
    workgroups: u64,
    sampled: u64,
    profiler: Profiler,
    timeline: bool,
}

impl Plan {
    /// The plan of a launch of `kernel` on `device` as `target`.
    pub(crate) fn new(
        device: &Device,
        target: &gcn_embed::TargetId,
        kernel: &gcn_emu::load::Kernel,
        grid: [u32; 3],
        block: [u32; 3],
        dynamic_lds: u32,
    ) -> Plan {
        let processor = target.processor.name.to_string();
        let block: u32 = block.iter().product();
        let d = &kernel.descriptor;
        // RDNA (gfx10+): wave32 when the descriptor's
        // ENABLE_WAVEFRONT_SIZE32 is set; its VGPR field counts granules
        // of 8 (wave32) or 4 (wave64) (AMDGPUUsage, compute_pgm_rsrc1
        // GRANULATED_WORKITEM_VGPR_COUNT).
        let rdna = target.processor.generation >= gcn_embed::Generation::Gfx10_1;
        let wave_size = if rdna && d.wave32() { 32 } else { 64 };
        let vgprs = if rdna {
            ((d.rsrc1 & 0x3f) + 1) * if wave_size == 32 { 8 } else { 4 }
        } else {
            d.vgpr_count()
        };
        let waves_per_wg = block.div_ceil(wave_size).max(1);
        let lds = kernel.descriptor.group_segment_fixed_size + dynamic_lds;
        // The descriptor's SGPR allocation (gfx9; SGPRs do not limit
        // occupancy on gfx10+).
        let sgprs = d.sgpr_count();
        let occ = crate::stage::check::occupancy::occupancy(
            target,
            vgprs,
            0,
            sgprs,
            lds,
            wave_size,
            Some(block),
        );
        // Workgroups per CU: the waves the SIMDs hold, and the LDS.
        let by_lds = (device.lds_bytes.value as u32)
            .checked_div(lds)
            .map_or(u32::MAX, |n| n.max(1));
        let resident = (occ.waves_per_simd * 4 / waves_per_wg).clamp(1, by_lds);
        // Saturating: a grid of more than 2⁶⁴ workgroups (refused by
        // `profile`) is never a panic.
        let workgroups: u64 = grid.iter().fold(1u64, |a, &g| a.saturating_mul(g as u64));
        let sample: BTreeSet<u64> = (0..workgroups.min(resident as u64)).collect();
        let sampled = sample.len() as u64;
        let profiler = Profiler {
            rule: LdsRule::of(&processor),
            sample: Some(sample),
            grid,
            wave_size,
        };
        Plan {
            device: device.clone(),
            processor,
            occ,
            resident,
            workgroups,
            sampled,
            profiler,
            timeline: false,
        }
    }

    /// Keep each wave's timeline of the round in the report
    /// ([`ProfileReport::timeline`]).
    pub(crate) fn keep_timeline(mut self, on: bool) -> Plan {
        self.timeline = on;
        self
    }

    /// Run the sampled workgroups under the profiler: the stats, each
    /// workgroup's trace, and the compulsory HBM bytes (every buffer
    /// argument once).
    #[allow(clippy::result_large_err, clippy::too_many_arguments)]
    pub(crate) fn observe(
        &self,
        co: &gcn_emu::load::CodeObject,
        kernel: &gcn_emu::load::Kernel,
        program: &gcn_emu::decode::Program,
        mem: &gcn_emu::memory::Memory,
        values: &[ArgValue],
        launch: &gcn_emu::dispatch::Launch,
    ) -> gcn_emu::Result<(gcn_emu::dispatch::Stats, Vec<WorkgroupTrace>, u64)> {
        let mut hbm_bytes = 0u64;
        for v in values {
            if let ArgValue::Pointer(a) = v {
                if *a != 0 {
                    hbm_bytes += mem.contents(*a).map_or(0, |c| c.len() as u64);
                }
            }
        }
        let (stats, wgs) = gcn_emu::dispatch::run_observed(
            co,
            kernel,
            program,
            mem,
            values,
            launch,
            &self.profiler,
        )?;
        Ok((
            stats,
            wgs.into_iter().map(|w| w.into_trace()).collect(),
            hbm_bytes,
        ))
    }

    /// The report of the traces.
    pub(crate) fn report(
        &self,
        kernel: &str,
        program: &gcn_emu::decode::Program,
        traces: &[WorkgroupTrace],
        hbm_bytes: u64,
    ) -> ProfileReport {
        let device = &self.device;
        let (workgroups, resident, sampled, occ) =
            (self.workgroups, self.resident, self.sampled, &self.occ);
        let processor = self.processor.clone();
        let counters = Counters::of(program, traces);
        let a = Assumptions::default();
        let timing =
            model::time_launch(program, device, traces, workgroups, resident, hbm_bytes, &a);
        // The same schedule again, keeping each wave's timeline.
        let timeline = self.timeline.then(|| Timeline {
            clock_mhz: device.clock_mhz.value,
            waves: model::simulate_cu_timeline(
                program,
                device,
                traces,
                timing.round.workgroups,
                &a,
            )
            .1,
            instructions: program
                .instructions
                .iter()
                .map(|i| (i.addr, i.text.clone()))
                .collect(),
        });
        let scale = workgroups as f64 / sampled.max(1) as f64;
        let flops = counters.total.flops as f64 * scale;
        let global_bytes = counters.total.global_bytes as f64 * scale;
        let seconds = timing.predicted_us * 1e-6;
        // The dominant MFMA type, by FLOPs.
        let mut by_type: BTreeMap<usize, u64> = BTreeMap::new();
        for (i, ins) in program.instructions.iter().enumerate() {
            if let Some(m) = Mfma::of(ins) {
                *by_type.entry(m.ty as usize).or_default() += counters.per_instruction[i].flops;
            }
        }
        let dominant = by_type.iter().max_by_key(|(_, f)| **f).map(|(t, _)| *t);
        let peak_tflops = dominant.map(|t| device.mfma_tflops[t].value);
        let mut stall_totals = [0u64; 9];
        for s in &timing.round.stalls {
            for (t, v) in stall_totals.iter_mut().zip(s) {
                *t += v;
            }
        }
        let mut stalls: Vec<StallTotal> = Stall::ALL
            .iter()
            .zip(stall_totals)
            .filter(|(_, v)| *v > 0)
            .map(|(s, v)| StallTotal {
                reason: s.name().to_string(),
                cycles: v,
            })
            .collect();
        stalls.sort_by(|a, b| b.cycles.cmp(&a.cycles).then(a.reason.cmp(&b.reason)));
        let instructions: Vec<Line> = program
            .instructions
            .iter()
            .enumerate()
            .filter(|(i, _)| counters.per_instruction[*i].executed > 0)
            .map(|(i, ins)| {
                let c = &counters.per_instruction[i];
                let st = &timing.round.stalls[i];
                Line {
                    address: ins.addr,
                    text: ins.text.clone(),
                    source: program.lines.get(&ins.addr).cloned(),
                    executed: c.executed,
                    active_lanes: c.active_lanes,
                    stall_cycles: Stall::ALL
                        .iter()
                        .zip(st)
                        .filter(|(_, v)| **v > 0)
                        .map(|(s, v)| (s.name(), *v))
                        .collect(),
                    lds_bank_conflicts: c.lds_bank_conflicts,
                    cache_lines: CacheLines {
                        lines64: c.lines64,
                        lines128: c.lines128,
                        per_access: if c.global_accesses > 0 {
                            c.lines64 as f64 / c.global_accesses as f64
                        } else {
                            0.0
                        },
                    },
                }
            })
            .collect();
        let mut notes = vec![
        format!(
            "sampled: {sampled} of {workgroups} workgroup(s) emulated (the first {sampled} in dispatch order, one CU's round at {resident} resident); counters are theirs, grid totals scaled by {scale:.2}"
        ),
        format!(
            "the grid in {} full round(s) of {} workgroups over {} CUs{}",
            timing.rounds,
            resident as u64 * device.cus.value as u64,
            device.cus.value,
            if timing.last_round > 0 {
                format!(
                    " and a partial round of {} workgroup(s) on the busiest CU",
                    timing.last_round
                )
            } else {
                String::new()
            }
        ),
        "HBM traffic: compulsory (every buffer argument moved once); reuse beyond it is assumed to hit L2/MALL".to_string(),
        format!(
            "memory load {:.0}% ({} busy CUs against the L2 and HBM bandwidths): L2 and HBM latencies × {:.2} (1 / (1 − load)); cycles at the sustained clock, {:.0} MHz ({})",
            timing.memory_load * 100.0,
            timing.active_cus,
            timing.latency_scale,
            timing.clock_mhz,
            device.sustained_mhz.source
        ),
        format!(
            "assumed (no source): vector L1 {} KiB per CU (FIFO), LDS queue {} cycles, vector memory queue {} cycles, barrier release {} cycles; memory latencies and launch overhead are guesses (see the device table)",
            a.l1_bytes / 1024,
            a.lds_queue,
            a.vmem_queue,
            a.barrier_cycles
        ),
        NOT_MODELLED.to_string(),
    ];
        if gcn_emu::waitcnt::Generation::of(&self.processor)
            .is_some_and(|g| g != gcn_emu::waitcnt::Generation::Gfx9)
        {
            notes.push(format!(
                "{RDNA_NOTE} (waves of {} lanes)",
                self.profiler.wave_size
            ));
        }
        if (sampled as u32) < resident {
            notes.push(format!(
            "the grid has fewer workgroups ({workgroups}) than a CU holds ({resident}): the round times those"
        ));
        }
        // What the model times by a rule of thumb: named, never silent.
        let mut approximated: BTreeMap<&'static str, BTreeSet<&str>> = BTreeMap::new();
        for (c, ins) in counters.per_instruction.iter().zip(&program.instructions) {
            if c.executed > 0 {
                if let Some(how) = approximation(ins, c) {
                    approximated
                        .entry(how)
                        .or_default()
                        .insert(ins.mnemonic.as_str());
                }
            }
        }
        // MFMAs the device's peak rate times otherwise than LLVM's
        // scheduling model (multi-block, sparse, gfx950's gfx942-era shapes).
        let mut mfma_differ: BTreeSet<String> = BTreeSet::new();
        for (c, ins) in counters.per_instruction.iter().zip(&program.instructions) {
            let (Some(m), true) = (Mfma::of(ins), c.executed > 0) else {
                continue;
            };
            let Some(sched) =
                gcn_emu::isa::lookup(&ins.mnemonic).and_then(|p| p.sched_on(&self.processor))
            else {
                continue;
            };
            let cycles = device.mfma_cycles(m.ty, m.flops()).round() as u64;
            if cycles.max(4) != 4 * sched.issue as u64 {
                mfma_differ.insert(format!(
                    "{} ({cycles} cycles; LLVM {} passes, {} cycles)",
                    ins.mnemonic,
                    sched.issue,
                    4 * sched.issue
                ));
            }
        }
        if !mfma_differ.is_empty() {
            notes.push(format!(
                "MFMAs timed by the device's peak rate for their type where LLVM 22's scheduling model gives other pass counts: {}",
                mfma_differ.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        for (how, mnemonics) in approximated {
            notes.push(format!(
                "{}: {how}",
                mnemonics.into_iter().collect::<Vec<_>>().join(", ")
            ));
        }
        ProfileReport {
            schema_version: SCHEMA_VERSION,
            kernel: kernel.to_string(),
            processor,
            device: device.name.to_string(),
            predicted_us: timing.predicted_us,
            cycles: timing.cycles,
            cycles_per_round: timing.round.cycles,
            round_workgroups: timing.round.workgroups,
            resident_workgroups: resident,
            waves_per_simd: occ.waves_per_simd,
            occupancy_limited_by: occ.to_string(),
            workgroups,
            sampled,
            flops,
            global_bytes,
            tflops: flops / seconds / 1e12,
            peak_tflops,
            gbps: global_bytes / seconds / 1e9,
            peak_gbps: device.hbm_gbps.value,
            hbm_bytes,
            bound: timing.bound.to_string(),
            stalls,
            totals: counters.total,
            instructions,
            notes,
            timing: Some(timing),
            timeline,
            program: program
                .instructions
                .iter()
                .map(|i| (i.addr, i.text.clone(), program.lines.get(&i.addr).cloned()))
                .collect(),
        }
    }
}

/// How the timing model approximates an executed instruction it has no
/// rule of its own for (`None`: it has one): the report's notes name every
/// such instruction with this text.
fn approximation(ins: &gcn_emu::decode::Instruction, c: &Counts) -> Option<&'static str> {
    let m = ins.mnemonic.as_str();
    let class = gcn_emu::profile::Class::of(ins);
    use gcn_emu::profile::Class;
    Some(match class {
        Class::SetPrio => "executed; priorities are not modelled (the oldest wave issues first)",
        Class::Mfma if Mfma::of(ins).is_none() => {
            "no shape known for this MFMA: each timed as one pass (4 cycles), no FLOPs counted"
        }
        Class::Vmem if m.starts_with("global_load_lds") || ins.text.ends_with(" lds") => {
            "LDS-DMA loads: timed as vector memory loads; their write to LDS is not timed"
        }
        Class::Vmem if c.lds_accesses > 0 => {
            "flat accesses that reached LDS: timed as vector memory accesses of no line (an L1 hit)"
        }
        Class::Vmem if m.contains("_atomic") => {
            "global atomics: timed as stores (done after the L2 latency); the L2's atomic units are not modelled"
        }
        Class::Vmem if c.global_accesses == 0 && c.lds_accesses == 0 => {
            "vector memory instructions that accessed no memory (cache write-back/invalidate, or every lane off): each timed as a one-line L1 access"
        }
        Class::Smem if m.starts_with("s_dcache") => {
            "scalar cache write-back/invalidate: timed as a scalar load"
        }
        Class::Salu if !m.starts_with("s_") || UNTIMED_SCALAR.contains(&m) => {
            "no timing rule: each timed as one scalar ALU issue"
        }
        _ => return None,
    })
}

/// Scalar instructions whose cost is not a scalar ALU issue (messages,
/// traps, halts, cache invalidation), timed as one.
const UNTIMED_SCALAR: &[&str] = &[
    "s_icache_inv",
    "s_trap",
    "s_sethalt",
    "s_sendmsg",
    "s_sendmsghalt",
    "s_ttracedata",
    "s_wakeup",
];

/// The report as JSON (the schema of the book's reference page
/// `profile-json.md`).
pub fn to_json(r: &ProfileReport) -> String {
    serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"))
}

/// Write the `--json` file of one report, atomically (a reader never sees
/// a partial file).
pub fn write_json(path: &std::path::Path, r: &ProfileReport) -> std::io::Result<()> {
    crate::base::output::write_atomic(path, to_json(r).as_bytes())
}

/// How one asm line's stall cycles moved from the unpatched to the patched
/// side ([`line_deltas`]).
#[derive(Debug, Clone, Serialize)]
pub struct LineDelta {
    /// The unpatched line (`file:line: text`, else the instruction's
    /// text); `None`: the patch added it.
    pub unpatched: Option<String>,
    /// The patched line; `None`: the patch removed it.
    pub patched: Option<String>,
    /// Stall cycles before it on the unpatched side (one CU round).
    pub unpatched_stall: u64,
    /// On the patched side.
    pub patched_stall: u64,
    /// `patched_stall − unpatched_stall`.
    pub delta: i64,
    /// Executions on each side (unpatched, patched).
    pub executed: (u64, u64),
}

/// The executed lines of two reports of the same launch, matched by
/// instruction text in program order (the Patience alignment of the patch
/// stage; a line the patch moved is matched to its new place; a line the
/// patch changed is one removed and one added), with their stall cycles on
/// each side; those whose stall cycles differ, largest |delta| first.
/// Their deltas sum to the difference of the two reports' stall totals.
pub fn line_deltas(unpatched: &ProfileReport, patched: &ProfileReport) -> Vec<LineDelta> {
    let (a, b) = (&unpatched.instructions, &patched.instructions);
    let ta: Vec<&str> = a.iter().map(|l| l.text.as_str()).collect();
    let tb: Vec<&str> = b.iter().map(|l| l.text.as_str()).collect();
    let stall = |l: &Line| l.stall_cycles.values().sum::<u64>();
    let name = |l: &Line| l.source.clone().unwrap_or_else(|| l.text.clone());
    let one = |x: Option<&Line>, y: Option<&Line>| {
        let (sa, sb) = (x.map_or(0, stall), y.map_or(0, stall));
        LineDelta {
            unpatched: x.map(name),
            patched: y.map(name),
            unpatched_stall: sa,
            patched_stall: sb,
            delta: sb as i64 - sa as i64,
            executed: (x.map_or(0, |l| l.executed), y.map_or(0, |l| l.executed)),
        }
    };
    let mut al = crate::base::align::align(&ta, &tb);
    // Lines the patch moved: the unmatched lines of equal text, paired in
    // order.
    let mut free: BTreeMap<&str, std::collections::VecDeque<usize>> = BTreeMap::new();
    for (j, i) in al.b_to_a.iter().enumerate() {
        if i.is_none() {
            free.entry(tb[j]).or_default().push_back(j);
        }
    }
    for (i, t) in ta.iter().enumerate() {
        if al.a_to_b[i].is_none() {
            if let Some(j) = free.get_mut(t).and_then(|q| q.pop_front()) {
                al.a_to_b[i] = Some(j);
                al.b_to_a[j] = Some(i);
            }
        }
    }
    let mut out = Vec::new();
    // In program order: each unpatched line (with its match), then each
    // patched line without one.
    for (i, j) in al.a_to_b.iter().enumerate() {
        out.push(one(Some(&a[i]), j.map(|j| &b[j])));
    }
    for (j, i) in al.b_to_a.iter().enumerate() {
        if i.is_none() {
            out.push(one(None, Some(&b[j])));
        }
    }
    out.retain(|d| d.delta != 0);
    // Stable: equal |delta| keep program order.
    out.sort_by_key(|d| std::cmp::Reverse(d.delta.unsigned_abs()));
    out
}

/// The files `gcn-patch profile` writes besides its terminal report. All
/// are rendered before any is written, and each is written atomically:
/// an error leaves no partial file.
#[derive(Debug, Clone, Default)]
pub struct ReportFiles {
    /// `--json FILE`: the report ([`to_json`]).
    pub json: Option<std::path::PathBuf>,
    /// `--trace FILE`: Chrome trace-event JSON ([`trace::chrome_trace`]);
    /// needs the reports' timelines ([`ProfileOptions::timeline`]).
    pub trace: Option<std::path::PathBuf>,
    /// `--html FILE`: one self-contained page ([`html`]).
    pub html: Option<std::path::PathBuf>,
    /// `--annotate FILE`: the annotated asm listing ([`annotated`]).
    pub annotate: Option<std::path::PathBuf>,
}

impl ReportFiles {
    /// Whether a trace is asked for (the profile must keep timelines).
    pub fn timeline(&self) -> bool {
        self.trace.is_some()
    }

    /// Write the files of one report; the paths written, in order.
    pub fn write(&self, r: &ProfileReport) -> Result<Vec<std::path::PathBuf>, ReportFileError> {
        let mut files = Vec::new();
        if let Some(p) = &self.json {
            files.push((p.clone(), to_json(r)));
        }
        if let Some(p) = &self.trace {
            files.push((p.clone(), self.trace_text(p, &[(String::new(), r)])?));
        }
        if let Some(p) = &self.html {
            files.push((p.clone(), html::single(r)));
        }
        if let Some(p) = &self.annotate {
            files.push((p.clone(), annotated(r, "")));
        }
        write_all(files)
    }

    /// Write the files of a manifest kernel's launches, unpatched and
    /// patched (`top`: lines of the HTML page's "lines that account for
    /// the difference").
    pub fn write_declared(
        &self,
        kernel: &str,
        rows: &[Profiled],
        top: usize,
    ) -> Result<Vec<std::path::PathBuf>, ReportFileError> {
        let mut files = Vec::new();
        if let Some(p) = &self.json {
            files.push((p.clone(), declared_json(rows)));
        }
        if let Some(p) = &self.trace {
            let sides: Vec<(String, &ProfileReport)> = rows
                .iter()
                .flat_map(|r| {
                    [
                        (format!("{} {} unpatched", r.target, r.launch), &r.unpatched),
                        (format!("{} {} patched", r.target, r.launch), &r.patched),
                    ]
                })
                .collect();
            files.push((p.clone(), self.trace_text(p, &sides)?));
        }
        if let Some(p) = &self.html {
            files.push((p.clone(), html::declared(kernel, rows, top)));
        }
        if let Some(p) = &self.annotate {
            let mut text = String::new();
            for r in rows {
                for (side, rep) in [("unpatched", &r.unpatched), ("patched", &r.patched)] {
                    text += &annotated(rep, &format!("{} {} {side}", r.target, r.launch));
                    text.push('\n');
                }
            }
            files.push((p.clone(), text));
        }
        write_all(files)
    }

    fn trace_text(
        &self,
        path: &std::path::Path,
        sides: &[(String, &ProfileReport)],
    ) -> Result<String, ReportFileError> {
        trace::chrome_trace(sides).ok_or_else(|| ReportFileError {
            path: path.to_path_buf(),
            error: std::io::Error::other("the profile kept no timeline to trace"),
        })
    }
}

/// A report file that could not be written.
#[derive(Debug)]
pub struct ReportFileError {
    /// The file.
    pub path: std::path::PathBuf,
    /// Why.
    pub error: std::io::Error,
}

impl std::fmt::Display for ReportFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot write {}: {}", self.path.display(), self.error)
    }
}

fn write_all(
    files: Vec<(std::path::PathBuf, String)>,
) -> Result<Vec<std::path::PathBuf>, ReportFileError> {
    // What would fail every write is found before any is written: a
    // missing directory, a directory in the file's place.
    for (path, _) in &files {
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let error = if !dir.is_dir() {
            Some(format!(
                "the directory {} does not exist (create it first)",
                dir.display()
            ))
        } else if path.is_dir() {
            Some("it is a directory (name a file)".to_string())
        } else {
            None
        };
        if let Some(e) = error {
            return Err(ReportFileError {
                path: path.clone(),
                error: std::io::Error::other(e),
            });
        }
    }
    let mut done = Vec::new();
    for (path, text) in files {
        crate::base::output::write_atomic(&path, text.as_bytes()).map_err(|error| {
            ReportFileError {
                path: path.clone(),
                error,
            }
        })?;
        done.push(path);
    }
    Ok(done)
}

/// The annotated asm listing of a report (`--annotate FILE`): every
/// instruction of the program in address order, executed or not, each
/// after its stall cycles (one CU round, summed over waves), main stall
/// reason, executions, LDS bank-conflict cycles and 64-byte lines per
/// global access; `label` heads it (a side of a manifest kernel).
pub fn annotated(r: &ProfileReport, label: &str) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# gcn-patch profile: kernel `{}` ({}) on {}{}: predicted {:.2} µs, {} cycles per CU round (a model, not a measurement)",
        r.kernel,
        r.processor,
        r.device,
        if label.is_empty() {
            String::new()
        } else {
            format!(", {label}")
        },
        r.predicted_us,
        r.cycles_per_round
    );
    let _ = writeln!(
        s,
        "# stall: cycles before the line issued (one CU round, summed over waves); mostly: the main reason; executed: wave-instructions of the sampled workgroups; conflicts: LDS bank-conflict cycles; lines/acc: 64-byte lines per global access"
    );
    let _ = writeln!(
        s,
        "{:>8} {:<16} {:>8} {:>9} {:>9}  {:<8} asm",
        "stall", "mostly", "executed", "conflicts", "lines/acc", "address"
    );
    let by_addr: BTreeMap<u64, &Line> = r.instructions.iter().map(|l| (l.address, l)).collect();
    for (addr, text, source) in &r.program {
        let shown = source.as_deref().unwrap_or(text);
        match by_addr.get(addr) {
            Some(l) => {
                let stall: u64 = l.stall_cycles.values().sum();
                let mostly = l
                    .stall_cycles
                    .iter()
                    .max_by_key(|(n, v)| (**v, std::cmp::Reverse(**n)))
                    .map(|(n, _)| *n)
                    .unwrap_or("");
                let _ = writeln!(
                    s,
                    "{stall:>8} {mostly:<16} {:>8} {:>9} {:>9}  {addr:<8x} {shown}",
                    l.executed,
                    l.lds_bank_conflicts,
                    if l.cache_lines.lines64 > 0 {
                        format!("{:.2}", l.cache_lines.per_access)
                    } else {
                        "-".into()
                    },
                );
            }
            None => {
                let _ = writeln!(
                    s,
                    "{:>8} {:<16} {:>8} {:>9} {:>9}  {addr:<8x} {shown}",
                    "", "", "-", "", ""
                );
            }
        }
    }
    s
}

/// One declared launch of one target, profiled unpatched and patched
/// (`gcn-patch profile KERNEL`).
#[derive(Debug, Clone)]
pub struct Profiled {
    /// The target.
    pub target: String,
    /// The launch's label.
    pub launch: String,
    /// The unpatched object's report.
    pub unpatched: ProfileReport,
    /// The patched object's report.
    pub patched: ProfileReport,
}

/// The `--json` text of a declared kernel's launches: per target and
/// launch, both reports and the lines whose stall cycles moved
/// ([`line_deltas`]).
pub fn declared_json(rows: &[Profiled]) -> String {
    let all: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "target": r.target,
                "launch": r.launch,
                "unpatched": serde_json::to_value(&r.unpatched).unwrap_or_default(),
                "patched": serde_json::to_value(&r.patched).unwrap_or_default(),
                "lines_moved": serde_json::to_value(line_deltas(&r.unpatched, &r.patched)).unwrap_or_default(),
            })
        })
        .collect();
    serde_json::to_string_pretty(&all).unwrap_or_default()
}
