//! Dispatch: the grid of workgroups, each a set of waves.
//!
//! Each workgroup gets its own LDS and runs its waves round-robin: a wave
//! runs until it ends or reaches `s_barrier` (or, with a nonzero
//! [`Launch::seed`], for a random slice, in a shuffled order); when every
//! wave that has not ended waits at a barrier, they all go on, as on
//! hardware, where the barrier counts arrivals, has no address, and no
//! longer counts a wave that ended. Waves released from different
//! `s_barrier` instructions, or ended while others wait, are therefore
//! legal; the opt-in sanitizer check `barrier-pairs` reports them. A wave
//! that never reaches the barrier the others wait at (it runs out of its
//! instruction budget) is a deadlock, a finding of the `barriers` check
//! (without it, the budget error). Workgroups run in parallel on
//! `threads` threads. Results are deterministic when workgroups do not race
//! on the same memory (integer atomics commute, so they are deterministic
//! too; the order of floating-point atomics from different workgroups is
//! not fixed unless `threads` is 1). On an error, the one of the
//! lowest-numbered failing workgroup is reported, which is deterministic.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::decode::Program;
use crate::exec::{run_until_blocked, stop_error, Ctx, Stop, Wave, WaveState, LANES};
use crate::launch::SplitMix64;
use crate::load::{CodeObject, Kernel};
use crate::memory::{Lds, Memory};
use crate::observe::{Event, Issue, Observe, Observer, Trace};
use crate::sanitize::{Checks, Finding, Kind};
use crate::{Error, Result};

pub mod cluster;

/// High 32 bits of the LDS aperture the emulator reports.
pub const SHARED_BASE_HI: u32 = 0x0001_0000;
/// High 32 bits of the scratch aperture the emulator reports.
pub const PRIVATE_BASE_HI: u32 = 0x0002_0000;
/// Default per-wave instruction budget.
pub const DEFAULT_MAX_INSTRUCTIONS: u64 = 100_000_000;
/// Default cap on the bytes the emulator allocates for one dispatch (4 GiB):
/// see [`Launch::max_memory`].
pub const DEFAULT_MAX_MEMORY: u64 = 1 << 32;
/// Default total work budget of one dispatch, in wave-instructions (10⁹):
/// see [`Launch::max_work`].
pub const DEFAULT_MAX_WORK: u64 = 1_000_000_000;
/// Processors the emulator runs: CDNA (wave64), RDNA3
/// ([`crate::rdna::TARGETS`], wave32 and wave64) and RDNA4
/// ([`crate::rdna::TARGETS_GFX12`]).
pub const TARGETS: &[&str] = &[
    "gfx90a", "gfx942", "gfx950", "gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151",
    "gfx1200", "gfx1201", "gfx1250",
];

/// The lanes of a wave of `kernel` on `processor`: 32 when its descriptor
/// sets ENABLE_WAVEFRONT_SIZE32 (`.amdhsa_wavefront_size32`), else 64; an
/// error when the metadata's `.wavefront_size` says otherwise, or when a
/// wave32 kernel is not for RDNA (gfx9 has no wave32).
pub fn wave_size(processor: &str, kernel: &Kernel) -> Result<u32> {
    let d32 = kernel.descriptor.wave32();
    let size = if d32 { 32 } else { 64 };
    if kernel.wavefront_size != size {
        return Err(Error::launch(format!(
            "kernel `{}`: its descriptor says wave{size} (KERNEL_CODE_PROPERTIES.ENABLE_WAVEFRONT_SIZE32 = {}) but its metadata's .wavefront_size is {}; rebuild the object so they agree (.amdhsa_wavefront_size32 and the metadata come from the same -mwavefrontsize64 choice)",
            kernel.name,
            d32 as u8,
            kernel.wavefront_size
        )));
    }
    if d32 && !processor.starts_with("gfx1") {
        return Err(Error::launch(format!(
            "kernel `{}` is wave32, which {processor} does not run (gfx9 is wave64 only)",
            kernel.name
        )));
    }
    Ok(size)
}

/// One dispatch's shape and limits.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Workgroups in X, Y, Z (HIP's grid).
    pub grid: [u32; 3],
    /// Work-items per workgroup in X, Y, Z (HIP's block).
    pub block: [u32; 3],
    /// Dynamic LDS bytes per workgroup, beyond the descriptor's
    /// `group_segment_fixed_size` (HIP's `sharedMemBytes`; Triton passes its
    /// kernels' `shared` this way).
    pub dynamic_lds: u32,
    /// Instructions one wave may execute before it is stopped.
    pub max_instructions: u64,
    /// The most bytes the emulator may allocate for the dispatch: the
    /// buffers already in the [`Memory`], the kernarg segment, and for every
    /// workgroup in flight (one per worker thread) its LDS and its waves'
    /// registers and private segments (`private_segment_fixed_size` × 64
    /// lanes). A dispatch over it is refused before it runs
    /// ([`Error::Limit`]).
    pub max_memory: u64,
    /// The total work budget: wave-instructions over the whole dispatch.
    /// A grid with more waves than this is refused before it runs (each wave
    /// executes at least one instruction); a run that reaches it stops with
    /// [`Error::Limit`].
    pub max_work: u64,
    /// Worker threads (0: one per CPU).
    pub threads: usize,
    /// The sanitizer's checks ([`crate::sanitize`]; empty: off): their
    /// findings land in [`Stats::findings`].
    pub sanitize: Checks,
    /// The schedule of each workgroup's waves. 0: in turn, each until it
    /// ends or reaches `s_barrier`. Any other value: each round in an order
    /// shuffled by SplitMix64 from the seed and the workgroup's index, each
    /// wave for a slice of 1 to 64 instructions at a time, so that waves
    /// interleave between barriers as they may on hardware. The same seed
    /// gives the same schedule, results and report.
    pub seed: u64,
    /// With `seed` 0: the most instructions a wave runs in one turn before
    /// the next wave's (0: no limit, each runs until it ends or reaches
    /// `s_barrier`). 1 interleaves the waves instruction by instruction, in
    /// wave order, as hardware issue does: a kernel that relies on that
    /// timing between barriers (aiter's gfx942 `I8gemm…112x256` reads LDS
    /// after a barrier that another wave overwrites before the next one)
    /// computes as on hardware. The sanitizer's `races` check reports such
    /// a kernel whatever the schedule.
    pub slice: u64,
    /// Perturb the results of approximate instructions (`v_rcp_f32`, …)
    /// within their documented error, as the hardware this seed stands for
    /// would ([`crate::approx`]); `None`: correctly rounded.
    pub perturb_approx: Option<u64>,
    /// Run the instructions [`crate::typed`] lowers on its executor (the
    /// default). `false`: every instruction on the reference executor
    /// ([`crate::exec`]), which computes the same, slower — for a
    /// cross-check and the speed bench's figures of the old engine.
    pub typed: bool,
    /// gfx1250's workgroup cluster in X, Y, Z (HIP's
    /// `hipLaunchAttributeClusterDimension`): `[0, 0, 0]` (the default)
    /// takes the kernel's `.cluster_dims`, `[1, 1, 1]` launches without
    /// clusters. The workgroups of a cluster run together and synchronise
    /// on the cluster barrier ([`cluster`]).
    pub cluster: [u32; 3],
}

impl Launch {
    /// A launch with the default budget and one thread per CPU.
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> Self {
        Launch {
            grid,
            block,
            dynamic_lds: 0,
            max_instructions: DEFAULT_MAX_INSTRUCTIONS,
            max_memory: DEFAULT_MAX_MEMORY,
            max_work: DEFAULT_MAX_WORK,
            threads: 0,
            sanitize: Checks::NONE,
            seed: 0,
            slice: 0,
            perturb_approx: None,
            typed: true,
            cluster: [0; 3],
        }
    }
}

/// The value of one explicit kernel argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgValue {
    /// A pointer (an allocation's address, or 0).
    Pointer(u64),
    /// The argument's bytes (little-endian), at most its size.
    Bytes(Vec<u8>),
}

/// What a dispatch did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    /// Workgroups run.
    pub workgroups: u64,
    /// Waves run.
    pub waves: u64,
    /// Wave-instructions executed.
    pub instructions: u64,
    /// Address the kernarg segment had (it is freed when the dispatch ends).
    pub kernarg: u64,
    /// LDS accesses outside the workgroup's LDS allocation (static plus
    /// dynamic), one per lane and instruction: they read 0 and their writes
    /// are dropped. Counted with or without the sanitizer (with it, each
    /// instruction that made one is also a finding).
    pub lds_out_of_range: u64,
    /// Sanitizer findings, ordered by workgroup, wave and address, those of
    /// the same instructions merged (empty without [`Launch::sanitize`]).
    pub findings: Vec<Finding>,
    /// The approximate instructions executed ([`crate::approx::TABLE`]),
    /// by address.
    pub approx: Vec<crate::approx::Executed>,
}

fn check_launch(co: &CodeObject, kernel: &Kernel, launch: &Launch) -> Result<()> {
    if !TARGETS.contains(&co.processor.as_str()) {
        return Err(Error::launch(format!(
            "{}: target `{}` is not supported; the emulator runs {}{}",
            co.path,
            co.processor,
            TARGETS.join(", "),
            if co.processor.ends_with("-generic") {
                "; a generic object runs as a processor of its family: set `CodeObject::processor` to one (`gcn-patch run --as`)"
            } else {
                ""
            }
        )));
    }
    wave_size(&co.processor, kernel)?;
    if launch.grid.contains(&0) || launch.block.contains(&0) {
        return Err(Error::launch(format!(
            "grid {:?} and block {:?} must be at least 1 in every dimension",
            launch.grid, launch.block
        )));
    }
    // The dispatch packet's grid size is in work-items, 32 bits a
    // dimension (HSA's `hsa_kernel_dispatch_packet_t::grid_size_x`).
    for (i, axis) in ["x", "y", "z"].iter().enumerate() {
        let items = launch.grid[i] as u64 * launch.block[i] as u64;
        if items > u32::MAX as u64 {
            return Err(Error::launch(format!(
                "grid {:?} × block {:?}: {items} work-items in {axis}; a dispatch packet holds at most 2³² − 1 a dimension (HSA grid_size_{axis}): launch fewer workgroups",
                launch.grid, launch.block
            )));
        }
    }
    let threads: u64 = launch.block.iter().map(|&b| b as u64).product();
    if threads > 1024 {
        return Err(Error::launch(format!(
            "block {:?} has {threads} work-items; at most 1024 fit a workgroup",
            launch.block
        )));
    }
    // LDS per workgroup: 64 KiB on gfx90a/gfx942 and gfx11, 160 KiB on
    // gfx950, 320 KiB on gfx1250 (LLVM's AMDGPU.td:
    // FeatureAddressableLocalMemorySize327680 in its feature list).
    let lds_max: u64 = if co.processor == "gfx950" {
        160 << 10
    } else if co.processor == "gfx1250" {
        320 << 10
    } else {
        64 << 10
    };
    let lds = kernel.descriptor.group_segment_fixed_size as u64 + launch.dynamic_lds as u64;
    if lds > lds_max {
        return Err(Error::launch(format!(
            "kernel `{}`: {} bytes of static LDS + {} dynamic = {lds} bytes per workgroup; {} has {lds_max}: at most {} dynamic bytes fit",
            kernel.name,
            kernel.descriptor.group_segment_fixed_size,
            launch.dynamic_lds,
            co.processor,
            lds_max.saturating_sub(kernel.descriptor.group_segment_fixed_size as u64)
        )));
    }
    Ok(())
}

/// Build the kernarg segment: explicit arguments from `args`, hidden ones
/// from the launch.
pub fn kernarg_bytes(kernel: &Kernel, args: &[ArgValue], launch: &Launch) -> Result<Vec<u8>> {
    let explicit: Vec<_> = kernel.args.iter().filter(|a| !a.is_hidden()).collect();
    if explicit.len() != args.len() {
        return Err(Error::launch(format!(
            "kernel `{}` takes {} explicit argument(s) ({}), {} given",
            kernel.name,
            explicit.len(),
            explicit
                .iter()
                .map(|a| format!("{} {}", a.value_kind, a.name.as_deref().unwrap_or("?")))
                .collect::<Vec<_>>()
                .join(", "),
            args.len()
        )));
    }
    let end = kernel
        .args
        .iter()
        .map(|a| a.offset as u64 + a.size as u64)
        .max()
        .unwrap_or(0);
    let max = crate::load::MAX_KERNARG_BYTES;
    for (field, v) in [
        ("the arguments' largest .offset + .size", end),
        (".kernarg_segment_size", kernel.kernarg_size as u64),
        (
            "the descriptor's kernarg_size",
            kernel.descriptor.kernarg_size as u64,
        ),
    ] {
        if v > max {
            return Err(Error::Limit {
                context: format!("kernel `{}`", kernel.name),
                field: field.into(),
                value: v as u128,
                limit: max as u128,
                hint: "the emulator builds kernarg segments of at most this many bytes".into(),
            });
        }
    }
    let size = (kernel.kernarg_size as u64)
        .max(end)
        .max(kernel.descriptor.kernarg_size as u64) as usize;
    let mut k = vec![0u8; size.max(16)];
    let put = |k: &mut Vec<u8>, off: u32, size: u32, v: &[u8]| {
        let n = (size as usize).min(v.len());
        k[off as usize..off as usize + n].copy_from_slice(&v[..n]);
    };
    for (a, v) in explicit.iter().zip(args) {
        match v {
            ArgValue::Pointer(p) => put(&mut k, a.offset, a.size, &p.to_le_bytes()),
            ArgValue::Bytes(b) => {
                if b.len() > a.size as usize {
                    return Err(Error::launch(format!(
                        "kernel `{}`: argument `{}` is {} bytes, {} given",
                        kernel.name,
                        a.name.as_deref().unwrap_or("?"),
                        a.size,
                        b.len()
                    )));
                }
                put(&mut k, a.offset, a.size, b)
            }
        }
    }
    let dims = if launch.grid[2] > 1 || launch.block[2] > 1 {
        3u16
    } else if launch.grid[1] > 1 || launch.block[1] > 1 {
        2
    } else {
        1
    };
    for a in kernel.args.iter().filter(|a| a.is_hidden()) {
        let v: Vec<u8> = match a.value_kind.as_str() {
            "hidden_block_count_x" => launch.grid[0].to_le_bytes().to_vec(),
            "hidden_block_count_y" => launch.grid[1].to_le_bytes().to_vec(),
            "hidden_block_count_z" => launch.grid[2].to_le_bytes().to_vec(),
            "hidden_group_size_x" => (launch.block[0] as u16).to_le_bytes().to_vec(),
            "hidden_group_size_y" => (launch.block[1] as u16).to_le_bytes().to_vec(),
            "hidden_group_size_z" => (launch.block[2] as u16).to_le_bytes().to_vec(),
            "hidden_grid_dims" => dims.to_le_bytes().to_vec(),
            "hidden_shared_base" => SHARED_BASE_HI.to_le_bytes().to_vec(),
            "hidden_private_base" => PRIVATE_BASE_HI.to_le_bytes().to_vec(),
            "hidden_dynamic_lds_size" => launch.dynamic_lds.to_le_bytes().to_vec(),
            // Remainders (the grid is whole workgroups), global offsets,
            // and the runtime's pointers (printf, hostcall,
            // queues, heap): zero.
            _ => vec![],
        };
        put(&mut k, a.offset, a.size, &v);
    }
    Ok(k)
}

/// Run one dispatch of `kernel` with explicit `args`. Buffers the arguments
/// point to must be allocations of `mem`.
pub fn run(
    co: &CodeObject,
    kernel: &Kernel,
    program: &Program,
    mem: &Memory,
    args: &[ArgValue],
    launch: &Launch,
) -> Result<Stats> {
    run_with::<Unobserved>(co, kernel, program, mem, args, launch, None).map(|(s, _)| s)
}

/// [`run`], with an observer for each workgroup ([`crate::observe`]): the
/// observers come back in workgroup order (X fastest), whatever the
/// thread count. Observing does not change what the dispatch computes.
pub fn run_observed<O: Observe>(
    co: &CodeObject,
    kernel: &Kernel,
    program: &Program,
    mem: &Memory,
    args: &[ArgValue],
    launch: &Launch,
    observe: &O,
) -> Result<(Stats, Vec<O::Workgroup>)> {
    run_with(co, kernel, program, mem, args, launch, Some(observe))
}

/// The observer's borrow, for the length of one slice of a wave.
fn shorten<'s>(o: &'s mut (dyn Observer + '_)) -> &'s mut (dyn Observer + 's) {
    o
}

/// The caller's observer and the sanitizer, on one workgroup: the
/// sanitizer gets each access in pieces, the caller's observer them merged
/// unless it asks for pieces too.
struct Both<'a, 'b> {
    user: &'a mut dyn Observer,
    san: &'b mut crate::sanitize::Workgroup,
    merged: Vec<crate::observe::Access>,
}

impl Observer for Both<'_, '_> {
    fn wants_issue(&self) -> bool {
        true
    }
    fn pieces(&self) -> bool {
        true
    }
    fn issue(&mut self, i: &Issue<'_>) {
        self.san.issue(i);
        if self.user.wants_issue() {
            self.user.issue(i);
        }
    }
    fn executed(&mut self, e: &Event<'_>) {
        self.san.executed(e);
        if self.user.pieces() {
            self.user.executed(e);
            return;
        }
        self.merged.clear();
        for &a in e.accesses {
            crate::observe::push_merged(&mut self.merged, a);
        }
        self.user.executed(&Event {
            accesses: &self.merged,
            ..*e
        });
    }
    fn barrier_released(&mut self) {
        self.san.barrier_released();
        self.user.barrier_released();
    }
}

/// No observer (the type [`run`] instantiates [`run_with`] with).
enum Unobserved {}

impl Observer for Unobserved {
    fn executed(&mut self, _: &crate::observe::Event<'_>) {
        match *self {}
    }
}

impl Observe for Unobserved {
    type Workgroup = Unobserved;
    fn workgroup(&self, _: [u32; 3]) -> Unobserved {
        match *self {}
    }
}

fn run_with<O: Observe>(
    co: &CodeObject,
    kernel: &Kernel,
    program: &Program,
    mem: &Memory,
    args: &[ArgValue],
    launch: &Launch,
    observe: Option<&O>,
) -> Result<(Stats, Vec<O::Workgroup>)> {
    check_launch(co, kernel, launch)?;
    let cluster = cluster::shape(co, kernel, launch)?;
    let cluster_size = cluster.iter().product::<u32>();
    let numbering = crate::decode::Numbering::of(&co.processor);
    program.check_registers_for(kernel, numbering)?;
    if co.processor == "gfx1250" {
        program.check_vgpr_msb(kernel)?;
    }
    let wave_size = wave_size(&co.processor, kernel)?;
    let rdna = crate::rdna::is_rdna(&co.processor);
    // RDNA code runs under the executor's names of its operations
    // (`crate::rdna::ALIASES`); observers index the same instructions.
    let renamed = rdna.then(|| crate::rdna::executable(program));
    let exec_program = renamed.as_ref().unwrap_or(program);
    let kernarg = kernarg_bytes(kernel, args, launch)?;
    let n_wg = launch.grid.iter().map(|&g| g as u128).product::<u128>();
    let threads_per_wg: u32 = launch.block.iter().product();
    let waves_per_wg = threads_per_wg.div_ceil(wave_size);
    // A sampling observer's few workgroups: only they are visited.
    let only: Option<Vec<u64>> = observe.and_then(|o| o.only()).map(|mut v| {
        v.retain(|&i| (i as u128) < n_wg);
        v
    });
    // A cluster dispatch runs whole clusters: all of them (their count), or
    // those of the workgroups a sampling observer names.
    let clusters: Option<(u64, Option<Vec<u64>>)> = (cluster_size > 1).then(|| {
        let per = [0, 1, 2].map(|i| (launch.grid[i] / cluster[i]) as u64);
        let n = per[0] * per[1] * per[2];
        match &only {
            None => (n, None),
            Some(v) => {
                let mut c: Vec<u64> = v
                    .iter()
                    .map(|&i| {
                        let g = [
                            i % launch.grid[0] as u64,
                            i / launch.grid[0] as u64 % launch.grid[1] as u64,
                            i / (launch.grid[0] as u64 * launch.grid[1] as u64),
                        ];
                        let c = [0, 1, 2].map(|d| g[d] / cluster[d] as u64);
                        c[0] + per[0] * (c[1] + per[1] * c[2])
                    })
                    .collect();
                c.sort_unstable();
                c.dedup();
                (c.len() as u64, Some(c))
            }
        }
    });
    let n_run = only.as_ref().map_or(n_wg, |v| v.len() as u128);
    let workers = match &clusters {
        Some((n, _)) => check_limits(
            kernel,
            mem,
            launch,
            kernarg.len(),
            *n as u128,
            waves_per_wg,
            cluster_size,
        )?,
        None => check_limits(kernel, mem, launch, kernarg.len(), n_run, waves_per_wg, 1)?,
    };
    let n_run = match &clusters {
        Some((n, _)) => n * cluster_size as u64,
        None => n_run as u64,
    };
    let mut entry = kernel.entry;
    if kernel.descriptor.kernarg_preload_length() > 0 && co.processor != "gfx1250" {
        // Firmware that preloads kernel arguments skips the 256-byte
        // compatibility prologue (AMDGPUUsage, "Preloaded Kernel Arguments").
        // Not on gfx1250 (inferred, no document here says so): aiter's
        // gfx1250 `fmha_bwd_hd128_odo_bf16` preloads its arguments and
        // has no such prologue; its first instruction is `s_version` and
        // the next ones read the preloaded SGPRs.
        entry = entry.wrapping_add(256);
    }
    let start = *program.index.get(&entry).ok_or_else(|| {
        Error::launch(format!(
            "kernel `{}`: no instruction at its entry {entry:#x}",
            kernel.name
        ))
    })?;
    let kernarg_addr = mem.alloc_bytes("kernarg", &kernarg);
    let d = &kernel.descriptor;
    let mut packet = vec![0u8; 64];
    packet[2..4].copy_from_slice(&(dims_of(launch) as u16).to_le_bytes());
    for i in 0..3 {
        packet[4 + 2 * i..6 + 2 * i].copy_from_slice(&(launch.block[i] as u16).to_le_bytes());
        let grid_items = launch.grid[i].wrapping_mul(launch.block[i]);
        packet[12 + 4 * i..16 + 4 * i].copy_from_slice(&grid_items.to_le_bytes());
    }
    let lds_bytes = d
        .group_segment_fixed_size
        .saturating_add(launch.dynamic_lds);
    packet[28..32].copy_from_slice(&lds_bytes.to_le_bytes());
    packet[40..48].copy_from_slice(&kernarg_addr.to_le_bytes());
    let packet_addr = mem.alloc_bytes("dispatch_packet", &packet);
    let queue_addr = mem.alloc_bytes("queue", &[0u8; 256]);
    // The dispatch's own allocations are freed however it ends, so that a
    // `Memory` reused for many dispatches does not grow.
    let _freed = Freed(mem, [kernarg_addr, packet_addr, queue_addr]);
    let setup = Setup {
        kernel,
        program: exec_program,
        wave_size,
        numbering,
        rdna,
        gfx12: crate::rdna::is_gfx12(&co.processor),
        mem,
        launch,
        kernarg_addr,
        packet_addr,
        queue_addr,
        kernarg: &kernarg,
        start,
        waves_per_wg,
        cluster,
        shared: (!launch.sanitize.is_empty()).then(|| std::sync::Arc::new(program.clone())),
        processor: &co.processor,
        ocp_fp8: co.processor == "gfx950",
        spent: AtomicU64::new(0),
        lds_out_of_range: AtomicU64::new(0),
        approx: Mutex::default(),
        // The program the executor runs (RDNA's renamed), lowered for the
        // wave's numbering and lanes.
        typed: if launch.typed {
            crate::typed::lower_all_for(
                exec_program,
                crate::typed::Shape::of(&co.processor, wave_size),
            )
        } else {
            Vec::new()
        },
    };
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let errors: Mutex<Vec<(u64, Error)>> = Mutex::new(Vec::new());
    let total = AtomicUsize::new(0);
    let findings: Mutex<Vec<Finding>> = Mutex::new(Vec::new());
    let observers: Mutex<Vec<(u64, O::Workgroup)>> = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        if let Some((n_clusters, listed)) = &clusters {
            for _ in 0..workers {
                s.spawn(|| loop {
                    if failed.load(Ordering::Relaxed) {
                        return;
                    }
                    let i = next.fetch_add(1, Ordering::Relaxed) as u64;
                    if i >= *n_clusters {
                        return;
                    }
                    let c = listed.as_ref().map_or(i, |v| v[i as usize]);
                    let wgs = cluster::workgroups(c, launch.grid, cluster);
                    let linear = |wg: [u32; 3]| {
                        (wg[2] as u64 * launch.grid[1] as u64 + wg[1] as u64)
                            * launch.grid[0] as u64
                            + wg[0] as u64
                    };
                    let mut mine: Vec<Option<O::Workgroup>> = wgs
                        .iter()
                        .map(|&wg| {
                            let wanted = match &only {
                                Some(v) => v.contains(&linear(wg)),
                                None => observe.is_some_and(|o| o.runs(wg)),
                            };
                            observe.filter(|_| wanted).map(|o| o.workgroup(wg))
                        })
                        .collect();
                    let result = setup.cluster(
                        &wgs,
                        mine.iter_mut()
                            .map(|o| o.as_mut().map(|o| o as &mut dyn Observer))
                            .collect(),
                    );
                    {
                        let mut all = observers.lock().unwrap_or_else(|e| e.into_inner());
                        for (wg, o) in wgs.iter().zip(mine) {
                            if let Some(o) = o {
                                all.push((linear(*wg), o));
                            }
                        }
                    }
                    match result {
                        Ok((n, f)) => {
                            total.fetch_add(n as usize, Ordering::Relaxed);
                            if !f.is_empty() {
                                findings.lock().unwrap_or_else(|e| e.into_inner()).extend(f);
                            }
                        }
                        Err(e) => {
                            failed.store(true, Ordering::Relaxed);
                            errors
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .push((linear(wgs[0]), e));
                        }
                    }
                });
            }
            return;
        }
        for _ in 0..workers {
            s.spawn(|| loop {
                if failed.load(Ordering::Relaxed) {
                    return;
                }
                let i = next.fetch_add(1, Ordering::Relaxed) as u64;
                if i >= n_run {
                    return;
                }
                let i = only.as_ref().map_or(i, |v| v[i as usize]);
                let wg = [
                    (i % launch.grid[0] as u64) as u32,
                    (i / launch.grid[0] as u64 % launch.grid[1] as u64) as u32,
                    (i / (launch.grid[0] as u64 * launch.grid[1] as u64)) as u32,
                ];
                if observe.is_some_and(|o| !o.runs(wg)) {
                    continue;
                }
                let mut observer = observe.map(|o| o.workgroup(wg));
                let result = setup.workgroup(wg, observer.as_mut().map(|o| o as &mut dyn Observer));
                if let Some(o) = observer {
                    observers
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push((i, o));
                }
                match result {
                    Ok((n, f)) => {
                        total.fetch_add(n as usize, Ordering::Relaxed);
                        if !f.is_empty() {
                            findings.lock().unwrap_or_else(|e| e.into_inner()).extend(f);
                        }
                    }
                    Err(e) => {
                        failed.store(true, Ordering::Relaxed);
                        errors
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push((i, e));
                    }
                }
            });
        }
    });
    let mut errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    errors.sort_by_key(|(i, _)| *i);
    if let Some((_, e)) = errors.into_iter().next() {
        return Err(e);
    }
    let mut observers = observers.into_inner().unwrap_or_else(|e| e.into_inner());
    observers.sort_by_key(|(i, _)| *i);
    let stats = Stats {
        workgroups: n_run,
        waves: n_run * waves_per_wg as u64,
        instructions: total.into_inner() as u64,
        kernarg: kernarg_addr,
        lds_out_of_range: setup.lds_out_of_range.into_inner(),
        findings: crate::sanitize::merge(
            findings
                .into_inner()
                .unwrap_or_else(|e| e.into_inner())
                .into_iter()
                .filter(|f| launch.sanitize.contains(f.kind.check()))
                .collect(),
        ),
        approx: executed(program, setup.approx),
    };
    crate::tally::write();
    Ok((stats, observers.into_iter().map(|(_, o)| o).collect()))
}

/// Frees the dispatch's own allocations when dropped.
struct Freed<'a>(&'a Memory, [u64; 3]);

impl Drop for Freed<'_> {
    fn drop(&mut self) {
        for base in self.1 {
            self.0.free(base);
        }
    }
}

/// Refuse a dispatch over [`Launch::max_work`] or [`Launch::max_memory`]
/// before anything is allocated; returns the worker threads to use.
fn check_limits(
    kernel: &Kernel,
    mem: &Memory,
    launch: &Launch,
    kernarg: usize,
    n_wg: u128,
    waves_per_wg: u32,
    group: u32,
) -> Result<usize> {
    let context = format!(
        "kernel `{}`, grid {:?}, block {:?}",
        kernel.name, launch.grid, launch.block
    );
    // A cluster dispatch runs `group` workgroups at a time on a worker.
    let waves = n_wg * group as u128 * waves_per_wg as u128;
    if waves > launch.max_work as u128 {
        return Err(Error::Limit {
            context,
            field: format!(
                "the total work: {n_wg} workgroups × {waves_per_wg} waves × at least 1 instruction"
            ),
            value: waves,
            limit: launch.max_work as u128,
            hint: "the total work budget in wave-instructions; raise it with --max-work (Launch::max_work) or launch a smaller grid".into(),
        });
    }
    let workers = if launch.threads == 0 {
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1)
    } else {
        launch.threads
    }
    .min(n_wg as usize)
    .max(1);
    let d = &kernel.descriptor;
    let private = d.private_segment_fixed_size as u128;
    // The unified file of VGPRs and AGPRs.
    let vgprs = d.vgpr_count().min(512) as u128;
    let regs = vgprs.max(3) * 4 * LANES as u128 + 128 * 4;
    let lds = d.group_segment_fixed_size as u128 + launch.dynamic_lds as u128;
    let per_wg = group as u128 * (waves_per_wg as u128 * (private * LANES as u128 + regs) + lds);
    let buffers = mem.allocated() as u128;
    let total = buffers + kernarg as u128 + 64 + 256 + workers as u128 * per_wg;
    if total > launch.max_memory as u128 {
        return Err(Error::Limit {
            context,
            field: format!(
                "the memory the dispatch needs: buffers {buffers} + kernarg {kernarg} + {workers} workgroup(s) in flight × ({waves_per_wg} waves × (.amdhsa_private_segment_fixed_size {private} × {LANES} lanes + {regs} bytes of registers) + {lds} bytes of LDS) bytes"
            ),
            value: total,
            limit: launch.max_memory as u128,
            hint: "the memory cap in bytes; raise it with --max-memory (Launch::max_memory), or run on fewer threads (each worker holds one workgroup)".into(),
        });
    }
    Ok(workers)
}

/// The approximate instructions of `program` executed, with their counts.
fn executed(
    program: &Program,
    counts: Mutex<std::collections::BTreeMap<u64, crate::approx::Count>>,
) -> Vec<crate::approx::Executed> {
    let counts = counts.into_inner().unwrap_or_else(|e| e.into_inner());
    counts
        .into_iter()
        .filter_map(|(addr, c)| {
            let ins = &program.instructions[*program.index.get(&addr)?];
            Some(crate::approx::Executed {
                addr,
                mnemonic: crate::exec::base_name(&ins.mnemonic).0.to_string(),
                text: ins.text.clone(),
                // `file:line: text` → `file:line`.
                line: program.lines.get(&addr).map(|l| {
                    l.split_once(": ")
                        .map_or(l.as_str(), |(at, _)| at)
                        .to_string()
                }),
                waves: c.waves,
                lanes: c.lanes,
            })
        })
        .collect()
}

fn dims_of(launch: &Launch) -> u32 {
    if launch.grid[2] > 1 || launch.block[2] > 1 {
        3
    } else if launch.grid[1] > 1 || launch.block[1] > 1 {
        2
    } else {
        1
    }
}

struct Setup<'a> {
    kernel: &'a Kernel,
    program: &'a Program,
    /// Lanes of a wave (32 or 64).
    wave_size: u32,
    /// The target's SGPR numbering.
    numbering: crate::decode::Numbering,
    /// An RDNA target (gfx10+ register allocation: no AGPRs).
    rdna: bool,
    /// gfx12: workgroup IDs also in ttmp9/ttmp7
    /// ([`crate::rdna::GFX12_TTMP_WORKGROUP_ID`]).
    gfx12: bool,
    mem: &'a Memory,
    launch: &'a Launch,
    kernarg_addr: u64,
    packet_addr: u64,
    queue_addr: u64,
    kernarg: &'a [u8],
    start: usize,
    waves_per_wg: u32,
    /// The cluster shape (`[1, 1, 1]`: no clusters).
    cluster: [u32; 3],
    /// The program, shared with the LDS shadows, when sanitizing.
    shared: Option<std::sync::Arc<Program>>,
    /// The processor (the sanitizer's counter rules, [`crate::waitcnt`]).
    processor: &'a str,
    /// fp8/bf8 are OCP (gfx950), else FNUZ.
    ocp_fp8: bool,
    /// Wave-instructions executed so far over the whole dispatch (the
    /// total work budget, [`Launch::max_work`]).
    spent: AtomicU64,
    /// Lane accesses outside the LDS allocation, over all workgroups.
    lds_out_of_range: AtomicU64,
    /// Executions of approximate instructions, merged from every wave.
    approx: Mutex<std::collections::BTreeMap<u64, crate::approx::Count>>,
    /// The program's instructions decoded once ([`crate::typed`]).
    typed: Vec<Option<crate::typed::Typed>>,
}

impl Setup<'_> {
    /// The generator of the wave order and slice lengths of the workgroup
    /// (or cluster) whose first workgroup is `wg`, when the launch has a
    /// seed ([`Launch::seed`]).
    fn order_rng(&self, wg: [u32; 3]) -> Option<SplitMix64> {
        (self.launch.seed != 0).then(|| {
            let linear = (wg[2] as u64 * self.launch.grid[1] as u64 + wg[1] as u64)
                * self.launch.grid[0] as u64
                + wg[0] as u64;
            SplitMix64(self.launch.seed ^ linear.wrapping_mul(0xd1b5_4a32_d192_ed03))
        })
    }

    /// What stops a run at instruction `pc` of wave `wave` of workgroup
    /// `wg`: with the `bounds` check, an access outside every allocation is
    /// a finding (`Ok`; `what` stops there, "the workgroup" or its
    /// cluster); anything else the error that names the instruction.
    fn stopped(
        &self,
        stop: Stop,
        pc: usize,
        wg: [u32; 3],
        wave: u32,
        what_stops: &str,
    ) -> Result<Finding> {
        let ins = &self.program.instructions[pc];
        let bounds = self.launch.sanitize.contains(Checks::BOUNDS);
        if let (true, Stop::Fault(Some(lane), what)) = (bounds, &stop) {
            if what.contains("outside every allocation") {
                return Ok(Finding {
                    kind: Kind::OutOfBounds,
                    workgroup: wg,
                    wave,
                    addr: ins.addr,
                    other: None,
                    message: format!(
                        "{}, lane {lane}: {what}; {what_stops} stopped here",
                        crate::sanitize::describe(self.program, ins.addr)
                    ),
                    occurrences: 1,
                });
            }
        }
        let line = self.program.lines.get(&ins.addr).cloned();
        Err(stop_error(stop, &self.kernel.name, ins, line, wg, wave))
    }

    /// Charges what wave `wi` of workgroup `wg` ran since it had run
    /// `before` to the dispatch's total work budget; an error when the
    /// budget is spent and the wave still runs.
    fn charge(&self, wave: &Wave, before: u64, wg: [u32; 3], wi: u32) -> Result<()> {
        let ran = wave.executed - before;
        let spent = self.spent.fetch_add(ran, Ordering::Relaxed) + ran;
        if wave.state == WaveState::Running && spent >= self.launch.max_work {
            return Err(Error::Limit {
                context: format!(
                    "kernel `{}`, grid {:?}, block {:?}: stopped at workgroup ({}, {}, {}), wave {wi}",
                    self.kernel.name, self.launch.grid, self.launch.block, wg[0], wg[1], wg[2]
                ),
                field: "the wave-instructions executed over the dispatch".into(),
                value: spent as u128,
                limit: self.launch.max_work as u128,
                hint: "the total work budget; raise it with --max-work (Launch::max_work) if the dispatch is just large".into(),
            });
        }
        Ok(())
    }

    /// The instruction count a wave that has run `executed` may reach in
    /// its next slice: a random 1..64 more with a seed, [`Launch::slice`]
    /// more when set, else the instruction budget; never more than the
    /// dispatch's total work budget leaves.
    fn slice_limit(&self, rng: Option<&mut SplitMix64>, executed: u64) -> u64 {
        let budget = self.launch.max_instructions;
        let limit = match rng {
            Some(r) => budget.min(executed + 1 + r.next_u64() % 64),
            None if self.launch.slice > 0 => budget.min(executed.saturating_add(self.launch.slice)),
            None => budget,
        };
        let left = self
            .launch
            .max_work
            .saturating_sub(self.spent.load(Ordering::Relaxed));
        limit.min(executed.saturating_add(left))
    }

    /// The initial state of wave `w` of workgroup `wg` (AMDGPUUsage,
    /// "Initial Kernel Execution State").
    fn wave(&self, wg: [u32; 3], w: u32) -> Wave {
        let d = &self.kernel.descriptor;
        // gfx90a+: one file of VGPRs and AGPRs, the AGPRs from the accum
        // offset on (`a[i]` is `v[accum_offset + i]`); RDNA has no AGPRs.
        let mut wave = if self.rdna {
            let vgprs = crate::decode::rdna_vgprs_in(self.kernel, self.numbering) as usize;
            Wave::new(vgprs.max(3), 0)
        } else {
            Wave::unified(
                (d.vgpr_count().min(512) as usize).max(3),
                d.accum_offset() as usize,
            )
        };
        wave.wave_size = self.wave_size;
        wave.numbering = self.numbering;
        let mut i = 0usize;
        let put2 = |wave: &mut Wave, i: &mut usize, v: u64| {
            wave.s[*i] = v as u32;
            wave.s[*i + 1] = (v >> 32) as u32;
            *i += 2;
        };
        if d.private_segment_buffer() {
            // The private segment buffer: a V# that buffer instructions
            // resolve to the lane's private memory (base 0, swizzled,
            // ADD_TID_ENABLE; see `exec::PRIVATE_VSHARP_WORD1`).
            wave.s[i + 1] = crate::exec::PRIVATE_VSHARP_WORD1;
            wave.s[i + 2] = d.private_segment_fixed_size;
            wave.s[i + 3] = crate::exec::PRIVATE_VSHARP_WORD3;
            i += 4;
        }
        if d.dispatch_ptr() {
            put2(&mut wave, &mut i, self.packet_addr);
        }
        if d.queue_ptr() {
            put2(&mut wave, &mut i, self.queue_addr);
        }
        if d.kernarg_segment_ptr() {
            put2(&mut wave, &mut i, self.kernarg_addr);
        }
        if d.dispatch_id() {
            put2(&mut wave, &mut i, 0);
        }
        if d.flat_scratch_init() {
            put2(&mut wave, &mut i, 0);
        }
        if d.private_segment_size() {
            wave.s[i] = d.private_segment_fixed_size;
            i += 1;
        }
        let pre_off = d.kernarg_preload_offset() as usize * 4;
        for k in 0..d.kernarg_preload_length() as usize {
            let o = pre_off + 4 * k;
            if o + 4 <= self.kernarg.len() && i < 106 {
                wave.s[i] = u32::from_le_bytes(self.kernarg[o..o + 4].try_into().unwrap());
            }
            i += 1;
        }
        if self.gfx12 {
            let (x, yz) = crate::rdna::GFX12_TTMP_WORKGROUP_ID;
            wave.s[x] = wg[0];
            wave.s[yz] = (wg[1] & 0xffff) | wg[2] << 16;
            wave.s[crate::rdna::GFX12_TTMP_WAVE_ID] = (w & 0x1f) << 25;
            if self.cluster != [1; 3] {
                cluster::identity(&mut wave, wg, self.cluster);
            }
        }
        let mut i = d.user_sgpr_count_on(self.processor) as usize;
        for (dim, &on) in d.workgroup_id().iter().enumerate() {
            if on {
                wave.s[i] = wg[dim];
                i += 1;
            }
        }
        if d.workgroup_info() {
            wave.s[i] = ((w == 0) as u32) << 31 | (self.waves_per_wg & 0x3f);
            i += 1;
        }
        if d.private_segment_wave_offset() {
            wave.s[i] = 0;
        }
        let b = self.launch.block;
        let n_items = b[0] * b[1] * b[2];
        let ids = d.workitem_id_vgprs();
        let mut exec = 0u64;
        for lane in 0..self.wave_size as usize {
            let t = w * self.wave_size + lane as u32;
            if t >= n_items {
                continue;
            }
            exec |= 1 << lane;
            let (x, y, z) = (t % b[0], t / b[0] % b[1], t / (b[0] * b[1]));
            // gfx90a and later: packed into v0 as x | y << 10 | z << 20.
            let mut v = x;
            if ids >= 1 {
                v |= y << 10;
            }
            if ids >= 2 {
                v |= z << 20;
            }
            wave.v[0][lane] = v;
        }
        wave.set_exec(exec);
        wave.set_private(d.private_segment_fixed_size);
        wave.pc = self.start;
        wave.approx.perturb = self.launch.perturb_approx;
        wave
    }

    /// The sanitizer's observer of workgroup `wg`, when sanitizing
    /// (`crate::sanitize`).
    fn sanitizer(&self, wg: [u32; 3]) -> Option<crate::sanitize::Workgroup> {
        self.shared.as_ref().map(|p| {
            let d = &self.kernel.descriptor;
            let sgprs = d.user_sgpr_count_on(self.processor)
                + d.workgroup_id().iter().filter(|&&on| on).count() as u32
                + d.workgroup_info() as u32
                + d.private_segment_wave_offset() as u32;
            crate::sanitize::Workgroup::new(
                p.clone(),
                self.launch.sanitize,
                wg,
                self.waves_per_wg,
                sgprs.min(102) as u16,
                d.group_segment_fixed_size as u64,
                self.launch.dynamic_lds,
            )
            .target(self.processor)
        })
    }

    /// Run one workgroup; returns the instructions executed and the
    /// sanitizer's findings.
    fn workgroup(
        &self,
        wg: [u32; 3],
        observer: Option<&mut dyn Observer>,
    ) -> Result<(u64, Vec<Finding>)> {
        let mut waves: Vec<Wave> = (0..self.waves_per_wg).map(|w| self.wave(wg, w)).collect();
        let lds_size = self
            .kernel
            .descriptor
            .group_segment_fixed_size
            .saturating_add(self.launch.dynamic_lds) as usize;
        let mut lds = Lds::new(lds_size);
        let mut san = self.sanitizer(wg);
        let mut both;
        let mut observer: Option<&mut dyn Observer> = match (observer, san.as_mut()) {
            (Some(user), Some(san)) => {
                both = Both {
                    user,
                    san,
                    merged: Vec::new(),
                };
                Some(&mut both)
            }
            (Some(user), None) => Some(user),
            (None, Some(san)) => Some(san),
            (None, None) => None,
        };
        let collect = |waves: &mut Vec<Wave>,
                       lds: &Lds,
                       san: Option<&mut crate::sanitize::Workgroup>,
                       mut extra: Vec<Finding>| {
            self.lds_out_of_range
                .fetch_add(lds.out_of_range, Ordering::Relaxed);
            self.tally(waves);
            if let Some(s) = san {
                extra.append(&mut s.findings());
            }
            extra
        };
        let budget = self.launch.max_instructions;
        let n_waves = waves.len();
        let observing = observer.is_some();
        let pieces = observer.as_ref().is_some_and(|o| o.pieces());
        let mut rng = self.order_rng(wg);
        let mut order: Vec<usize> = (0..n_waves).collect();
        let mut divergence: Vec<Finding> = Vec::new();
        let mut ended_reported = vec![false; n_waves];
        // A wave out of budget, kept aside while the others run (`barriers`).
        let mut stuck: Option<usize> = None;
        // Workgroup-barrier releases, and the one whose first signal
        // (`s_barrier_signal_isfirst -1`) was taken.
        let mut generation = 0u64;
        let mut first: Option<u64> = None;
        // gfx1250's named barriers of the workgroup.
        let mut named = crate::named_barrier::NamedBarriers::new(n_waves);
        loop {
            if let Some(r) = rng.as_mut() {
                // Fisher–Yates.
                for i in (1..n_waves).rev() {
                    let j = (r.next_u64() % (i as u64 + 1)) as usize;
                    order.swap(i, j);
                }
            }
            for &wi in &order {
                let wave = &mut waves[wi];
                if wave.state != WaveState::Running || stuck == Some(wi) {
                    continue;
                }
                let limit = self.slice_limit(rng.as_mut(), wave.executed);
                let before = wave.executed;
                let mut ctx = Ctx {
                    program: self.program,
                    mem: self.mem,
                    lds: &mut lds,
                    shared_base_hi: SHARED_BASE_HI,
                    private_base_hi: PRIVATE_BASE_HI,
                    ocp_fp8: self.ocp_fp8,
                    trace: Trace {
                        on: observing,
                        pieces,
                        accesses: Vec::new(),
                    },
                    observer: observer.as_deref_mut().map(|o| (shorten(o), wg, wi as u32)),
                    typed: &self.typed,
                };
                let r = loop {
                    let r = run_until_blocked(wave, &mut ctx, limit);
                    if r.is_ok() && wave.state == WaveState::Sync {
                        wave.state = WaveState::Running;
                        if let Some(crate::exec::SyncOp::Named(op)) = wave.sync.take() {
                            use crate::named_barrier::Outcome;
                            match named.apply(wi, op) {
                                Ok(Outcome::Runs(scc)) => {
                                    if let Some(c) = scc {
                                        wave.scc = c;
                                    }
                                    continue;
                                }
                                Ok(Outcome::Waits) => {
                                    wave.state = WaveState::NamedBarrier;
                                    break Ok(());
                                }
                                Err(m) => break Err((Stop::Fault(None, m), wave.pc - 1)),
                            }
                        }
                        // Else, without clusters, only
                        // `s_barrier_signal_isfirst -1` stops a wave this
                        // way (the executor refuses the cluster barrier).
                        wave.scc = first != Some(generation);
                        first = Some(generation);
                        continue;
                    }
                    break r;
                };
                if let Err((stop, pc)) = r {
                    // An out-of-bounds access is a finding; this workgroup
                    // cannot go on.
                    let f = self.stopped(stop, pc, wg, wi as u32, "the workgroup")?;
                    let n = waves.iter().map(|w| w.executed).sum();
                    return Ok((n, collect(&mut waves, &lds, san.as_mut(), vec![f])));
                }
                self.charge(wave, before, wg, wi as u32)?;
                if wave.state == WaveState::Running && wave.executed >= budget {
                    if self.launch.sanitize.contains(Checks::BARRIERS) && stuck.is_none() {
                        // Let the others run until they block: a deadlock
                        // if some then wait at a barrier.
                        stuck = Some(wi);
                        continue;
                    }
                    return Err(self.budget_error(wg, wi, &waves[wi]));
                }
            }
            // Named barriers that completed release their waiters.
            for (i, w) in waves.iter_mut().enumerate() {
                if w.state == WaveState::NamedBarrier && named.released(i) {
                    w.state = WaveState::Running;
                }
            }
            if let Some(wi) = stuck {
                let others_blocked = waves
                    .iter()
                    .enumerate()
                    .all(|(i, w)| i == wi || w.state != WaveState::Running);
                if others_blocked {
                    if let Some(f) = self.deadlock(wg, &waves, wi) {
                        let n = waves.iter().map(|w| w.executed).sum();
                        return Ok((n, collect(&mut waves, &lds, san.as_mut(), vec![f])));
                    }
                    return Err(self.budget_error(wg, wi, &waves[wi]));
                }
                continue;
            }
            if waves.iter().all(|w| w.state == WaveState::Done) {
                break;
            }
            if waves.iter().any(|w| w.state == WaveState::Running) {
                // A wave's slice ended before it blocked: another round.
                continue;
            }
            if waves.iter().any(|w| w.state == WaveState::NamedBarrier) {
                // Nothing runs and a named barrier cannot complete (a
                // wave waiting on one also never arrives at the
                // workgroup barrier).
                return Err(self.named_deadlock(wg, &waves, &named));
            }
            if self.launch.sanitize.contains(Checks::BARRIER_PAIRS) {
                if let Some(f) = self.divergence(wg, &waves, &mut ended_reported) {
                    divergence.push(f);
                }
            }
            // Every wave still alive waits at the barrier: release them.
            for w in waves.iter_mut().filter(|w| w.state == WaveState::Barrier) {
                w.state = WaveState::Running;
            }
            generation += 1;
            if let Some(o) = observer.as_deref_mut() {
                o.barrier_released();
            }
        }
        let n = waves.iter().map(|w| w.executed).sum();
        Ok((n, collect(&mut waves, &lds, san.as_mut(), divergence)))
    }

    /// The error when no wave of workgroup `wg` can run and a wave waits on
    /// a named barrier: where each wave is, and each waited-on barrier's
    /// arrivals of its expected count.
    fn named_deadlock(
        &self,
        wg: [u32; 3],
        waves: &[Wave],
        named: &crate::named_barrier::NamedBarriers,
    ) -> Error {
        let p = self.program;
        let at = |w: &Wave| {
            p.instructions
                .get(w.pc.wrapping_sub(1))
                .map(|i| (i.addr, i.text.clone()))
                .unwrap_or_default()
        };
        let mut first = None;
        let states: Vec<String> = waves
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let (addr, text) = at(w);
                match (w.state, named.waiting_on(i)) {
                    (WaveState::NamedBarrier, Some((id, o))) => {
                        first.get_or_insert(i);
                        format!(
                            "wave {i} waits at {addr:#x} `{text}` on named barrier {id} ({} of {} arrivals)",
                            o.arrived, o.expected
                        )
                    }
                    (WaveState::Barrier, _) => {
                        format!("wave {i} waits at {addr:#x} `{text}` (the workgroup barrier)")
                    }
                    (WaveState::Done, _) => format!("wave {i} ended at {addr:#x}"),
                    _ => format!("wave {i} at {addr:#x} `{text}`"),
                }
            })
            .collect();
        let i = first.unwrap_or(0);
        let (addr, text) = at(&waves[i]);
        Error::Fault {
            kernel: self.kernel.name.clone(),
            addr,
            text,
            workgroup: wg,
            wave: i as u32,
            lane: None,
            what: format!(
                "deadlock at a named barrier: no wave of the workgroup can run and the barrier cannot complete (its expected count is s_barrier_init's M0[31:16], or a signal's M0[22:16]; each member signals it or leaves it). {}",
                states.join("; ")
            ),
        }
    }

    /// Barrier divergence when every live wave waits at a barrier: waves at
    /// different `s_barrier` instructions, or waves that ended while the
    /// others wait. Each ended wave is reported once (`reported`).
    fn divergence(&self, wg: [u32; 3], waves: &[Wave], reported: &mut [bool]) -> Option<Finding> {
        let p = self.program;
        let at = |w: &Wave| p.instructions.get(w.pc.wrapping_sub(1)).map(|i| i.addr);
        let waiting: Vec<(usize, u64)> = waves
            .iter()
            .enumerate()
            .filter(|(_, w)| w.state == WaveState::Barrier)
            .filter_map(|(i, w)| at(w).map(|a| (i, a)))
            .collect();
        let &(first, addr) = waiting.first()?;
        let list = |v: &[usize]| {
            v.iter()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        };
        let same: Vec<usize> = waiting
            .iter()
            .filter(|w| w.1 == addr)
            .map(|w| w.0)
            .collect();
        if let Some(&(other_wave, other)) = waiting.iter().find(|w| w.1 != addr) {
            let there: Vec<usize> = waiting
                .iter()
                .filter(|w| w.1 == other)
                .map(|w| w.0)
                .collect();
            return Some(Finding {
                kind: Kind::BarrierDivergence,
                workgroup: wg,
                wave: first as u32,
                addr,
                other: Some(other),
                message: format!(
                    "wave(s) {} wait at {} while wave(s) {} wait at {}: the waves of a workgroup must reach the same s_barrier (a barrier in divergent control flow); hardware releases them together anyway, pairing different barriers (wave {other_wave} is the first at the other)",
                    list(&same),
                    crate::sanitize::describe(p, addr),
                    list(&there),
                    crate::sanitize::describe(p, other),
                ),
                occurrences: 1,
            });
        }
        let ended: Vec<usize> = waves
            .iter()
            .enumerate()
            .filter(|&(i, w)| w.state == WaveState::Done && !reported[i])
            .map(|(i, _)| i)
            .collect();
        let &e = ended.first()?;
        for &i in &ended {
            reported[i] = true;
        }
        let end = at(&waves[e])?;
        Some(Finding {
            kind: Kind::BarrierDivergence,
            workgroup: wg,
            wave: e as u32,
            addr,
            other: Some(end),
            message: format!(
                "wave(s) {} ended at {} while wave(s) {} wait at {}: a wave that ends no longer counts at the barrier, so the others go on without it (an early return before a barrier)",
                list(&ended),
                crate::sanitize::describe(p, end),
                list(&same),
                crate::sanitize::describe(p, addr),
            ),
            occurrences: 1,
        })
    }

    /// Wave `wi` ran out of its instruction budget.
    fn budget_error(&self, wg: [u32; 3], wi: usize, wave: &Wave) -> Error {
        Error::Budget {
            kernel: self.kernel.name.clone(),
            workgroup: wg,
            wave: wi as u32,
            budget: self.launch.max_instructions,
            where_: self.where_looping(wave),
        }
    }

    /// A deadlock: wave `wi` ran out of its budget while other waves of the
    /// workgroup wait at a barrier (`None` when none waits).
    fn deadlock(&self, wg: [u32; 3], waves: &[Wave], wi: usize) -> Option<Finding> {
        let p = self.program;
        let waiting: Vec<(usize, u64)> = waves
            .iter()
            .enumerate()
            .filter(|(_, w)| w.state == WaveState::Barrier)
            .filter_map(|(i, w)| {
                p.instructions
                    .get(w.pc.wrapping_sub(1))
                    .map(|x| (i, x.addr))
            })
            .collect();
        let &(_, barrier) = waiting.first()?;
        let list: Vec<String> = waiting.iter().map(|w| w.0.to_string()).collect();
        let wave = &waves[wi];
        let addr = p
            .instructions
            .get(wave.pc)
            .map(|i| i.addr)
            .unwrap_or(barrier);
        Some(Finding {
            kind: Kind::Deadlock,
            workgroup: wg,
            wave: wi as u32,
            addr,
            other: Some(barrier),
            message: format!(
                "wave {wi} ran {} instructions without reaching a barrier or its end while wave(s) {} wait at {}: on hardware they wait forever; {}; the workgroup stopped here",
                wave.executed,
                list.join(", "),
                crate::sanitize::describe(p, barrier),
                self.where_looping(wave)
            ),
            occurrences: 1,
        })
    }

    /// Merge the waves' counts of approximate instructions.
    fn tally(&self, waves: &[Wave]) {
        if waves.iter().all(|w| w.approx.counts.is_empty()) {
            return;
        }
        let mut all = self.approx.lock().unwrap_or_else(|e| e.into_inner());
        for w in waves {
            for (&addr, c) in &w.approx.counts {
                let t = all.entry(addr).or_default();
                t.waves += c.waves;
                t.lanes += c.lanes;
            }
        }
    }

    fn where_looping(&self, wave: &Wave) -> String {
        let at = self
            .program
            .instructions
            .get(wave.pc)
            .map(|i| format!("it was at {:#x} `{}`", i.addr, i.text))
            .unwrap_or_default();
        match wave.last_branch {
            Some((from, to)) => {
                let text = self
                    .program
                    .index
                    .get(&from)
                    .map(|&i| self.program.instructions[i].text.clone())
                    .unwrap_or_default();
                format!("{at}; the loop: the last taken branch {from:#x} `{text}` jumps back to {to:#x}")
            }
            None => format!("{at}; no branch was taken"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::{Access, AccessKind, Space};

    /// What a caller's observer saw: each instruction's accesses, barriers.
    #[derive(Default)]
    struct Seen(Vec<Vec<Access>>, u32);

    impl Observer for Seen {
        fn executed(&mut self, e: &Event<'_>) {
            self.0.push(e.accesses.to_vec());
        }
        fn barrier_released(&mut self) {
            self.1 += 1;
        }
    }

    #[test]
    fn beside_the_sanitizer_an_observer_sees_accesses_merged_and_the_sanitizer_pieces() {
        // 4 bytes of LDS; lane 0 reads 4 bytes at 0 and 4 at 4, two pieces
        // (a `ds_read2_b32` with adjacent offsets): the second is outside.
        let program = std::sync::Arc::new(Program {
            kernel: "k".into(),
            instructions: vec![],
            index: Default::default(),
            lines: Default::default(),
        });
        let mut san = crate::sanitize::Workgroup::new(program, Checks::ALL, [0; 3], 1, 0, 4, 0);
        let mut user = Seen::default();
        let wave = Wave::new(3, 0);
        let piece = |addr| Access {
            lane: 0,
            space: Space::Lds,
            kind: AccessKind::Read,
            addr,
            bytes: 4,
        };
        let pieces = [piece(0), piece(4)];
        {
            let mut both = Both {
                user: &mut user,
                san: &mut san,
                merged: Vec::new(),
            };
            assert!(both.pieces() && both.wants_issue());
            both.executed(&Event {
                workgroup: [0; 3],
                wave: 0,
                index: 0,
                exec: 1,
                accesses: &pieces,
                state: &wave,
            });
            both.barrier_released();
        }
        // The caller's observer: one 8-byte access, as without the sanitizer.
        assert_eq!(
            user.0,
            vec![vec![Access {
                bytes: 8,
                ..piece(0)
            }]]
        );
        assert_eq!(user.1, 1);
        // The sanitizer: the second piece alone is out of range.
        let f = san.findings();
        assert_eq!(f.len(), 1, "{f:?}");
        assert_eq!(f[0].kind, Kind::LdsOutOfBounds);
        assert!(
            f[0].message.contains("4-byte LDS read at offset 0x4"),
            "{}",
            f[0].message
        );
    }
}
