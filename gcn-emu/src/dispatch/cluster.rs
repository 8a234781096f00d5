//! gfx1250 workgroup clusters: the launch's cluster shape, each
//! workgroup's identity registers in a cluster dispatch, and the run of a
//! cluster's workgroups together with the cluster barrier (-3).
//!
//! **Identity**: in a cluster dispatch ttmp9 holds the
//! cluster's ID in X and ttmp7 its Y (bits 15:0) and Z (31:16) instead of
//! the workgroup's; ttmp6 packs the workgroup's position in its cluster
//! (bits 3:0, 7:4, 11:8), the cluster's size minus one (15:12, 19:16,
//! 23:20) and the highest flat rank (27:24); `s_getreg_b32` of IB_STS2
//! reads 1 in bits 9:6 and the workgroup's flat rank `x + X·(y + Y·z)` in
//! bits 24:21 (iree-org/aster #692, rocJITsu's command processor, LLVM's
//! `workgroup-id-in-arch-sgprs.ll` and clang-22's lowering of the cluster
//! builtins; the rank's formula is assumed, no source states it).
//!
//! **Scheduling**: the workgroups of a cluster are
//! resident together, each with its own LDS, registers and workgroup
//! barrier (-1); they run workgroup after workgroup, each until none of
//! its waves can run (its waves as a workgroup's run without clusters),
//! then again from the first, so that a workgroup runs as far ahead of its
//! peers as the barriers let it. Clusters run in parallel on the worker
//! threads as workgroups do.
//!
//! **The cluster barrier**. LLVM documents it as counting
//! one arrival per workgroup (`__builtin_amdgcn_s_cluster_barrier`: the
//! first wave of each workgroup signals -3 after the workgroup barrier,
//! every wave waits), while aiter's kernels signal -3 from every wave;
//! whether hardware counts a workgroup's duplicate signals once was not
//! found. The model makes both forms correct: a wave's signal is for phase
//! `max(its signals, its waits)`; a workgroup arrives at a phase when one
//! of its waves signalled it and each of its other waves signalled it too
//! or waits at the cluster barrier for it (so a wave of aiter's form that
//! lags behind its siblings still holds the cluster); a workgroup whose
//! waves all ended has arrived (hardware drops a wave's membership when it
//! ends); a phase completes when every workgroup of the cluster arrived;
//! `s_barrier_wait -3` blocks a wave until the phase of its wait count has
//! completed. Waiting waves are released only once no wave of the cluster
//! can run (as the workgroup barrier is), so that the barrier orders as
//! much as it may. A kernel whose other waves neither signal nor wait
//! (they spin until a peer's data arrives) would deadlock here where
//! hardware that counts the first signal might not. When no wave can run
//! and no barrier can release, the dispatch stops with a deadlock naming
//! each workgroup's
//! phase and where its waves wait.

use std::sync::atomic::Ordering;

use super::{shorten, Both, Launch, Setup, PRIVATE_BASE_HI, SHARED_BASE_HI};
use crate::exec::{run_until_blocked, Ctx, Stop, SyncOp, Wave, WaveState};
use crate::load::{CodeObject, Kernel};
use crate::memory::Lds;
use crate::observe::{Observer, Trace};
use crate::sanitize::{Checks, Finding};
use crate::{Error, Result};

/// The most workgroups of a cluster: ttmp6's fields are 4 bits
/// (rocJITsu caps clusters at 16 for the same reason).
pub const MAX_CLUSTER: u32 = 16;

/// The cluster shape a dispatch of `kernel` runs with: the launch's
/// ([`Launch::cluster`]) unless it is `[0, 0, 0]`, else the kernel's
/// `.cluster_dims` when it names one, else `[1, 1, 1]` (no clusters).
/// Refused: a shape over [`MAX_CLUSTER`] workgroups or with a zero, a grid
/// that is not whole clusters, a cluster on a target other than gfx1250,
/// and a kernel compiled for a cluster size chosen at launch without one.
pub fn shape(co: &CodeObject, kernel: &Kernel, launch: &Launch) -> Result<[u32; 3]> {
    let from_kernel = launch.cluster == [0; 3];
    let dims = if !from_kernel {
        launch.cluster
    } else {
        match kernel.cluster_dims {
            [0, 0, 0] | [1, 1, 1] => return Ok([1; 3]),
            d if d.iter().any(|&x| x > MAX_CLUSTER) => {
                return Err(Error::launch(format!(
                    "kernel `{}`: its .cluster_dims {d:?} says the cluster shape is chosen at launch: give one (`Launch::cluster`, `gcn-patch run --cluster X,Y,Z`)",
                    kernel.name
                )))
            }
            d => d,
        }
    };
    let whence = if from_kernel {
        format!("kernel `{}`'s .cluster_dims", kernel.name)
    } else {
        "the launch's cluster".to_string()
    };
    let n: u64 = dims.iter().map(|&d| d as u64).product();
    if dims.contains(&0) || dims.iter().any(|&d| d > MAX_CLUSTER) || n > MAX_CLUSTER as u64 {
        return Err(Error::launch(format!(
            "{whence} {dims:?}: a cluster is 1 to {MAX_CLUSTER} workgroups in each dimension and at most {MAX_CLUSTER} in all (gfx1250's ttmp6 holds each position in 4 bits)"
        )));
    }
    if n > 1 && co.processor != "gfx1250" {
        return Err(Error::launch(format!(
            "{whence} {dims:?}: workgroup clusters exist on gfx1250 only, not {}; launch without one (cluster 1,1,1)",
            co.processor
        )));
    }
    for (i, axis) in ["x", "y", "z"].iter().enumerate() {
        if launch.grid[i] % dims[i] != 0 {
            return Err(Error::launch(format!(
                "grid {:?} is not whole clusters of {dims:?} ({whence}): {} workgroups in {axis} is not a multiple of {}; launch a grid of whole clusters (HIP requires it too)",
                launch.grid, launch.grid[i], dims[i]
            )));
        }
    }
    Ok(dims)
}

/// The identity registers of a wave of workgroup `wg` in a dispatch with
/// clusters of `dims` (see the [module](self) documentation): ttmp9, ttmp7,
/// ttmp6 and IB_STS2.
pub(super) fn identity(wave: &mut Wave, wg: [u32; 3], dims: [u32; 3]) {
    let c = [0, 1, 2].map(|i| wg[i] / dims[i]);
    let l = [0, 1, 2].map(|i| wg[i] % dims[i]);
    let (x, yz) = crate::rdna::GFX12_TTMP_WORKGROUP_ID;
    wave.s[x] = c[0];
    wave.s[yz] = (c[1] & 0xffff) | c[2] << 16;
    let max_flat = dims[0] * dims[1] * dims[2] - 1;
    wave.s[TTMP6] = l[0]
        | l[1] << 4
        | l[2] << 8
        | (dims[0] - 1) << 12
        | (dims[1] - 1) << 16
        | (dims[2] - 1) << 20
        | max_flat << 24;
    wave.hwregs.ib_sts2 = 1 << 6 | rank(l, dims) << 21;
}

/// Hardware SGPR index of ttmp6.
const TTMP6: usize = 108 + 6;

/// The flat rank of local position `l` in a cluster of `dims`.
fn rank(l: [u32; 3], dims: [u32; 3]) -> u32 {
    l[0] + dims[0] * (l[1] + dims[1] * l[2])
}

/// The workgroups of cluster `c` (linear, X fastest) of a grid in
/// clusters of `dims`, in flat-rank order.
pub(super) fn workgroups(c: u64, grid: [u32; 3], dims: [u32; 3]) -> Vec<[u32; 3]> {
    let n = [0, 1, 2].map(|i| (grid[i] / dims[i]) as u64);
    let cc = [c % n[0], c / n[0] % n[1], c / (n[0] * n[1])];
    let mut v = Vec::with_capacity((dims[0] * dims[1] * dims[2]) as usize);
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                v.push([
                    cc[0] as u32 * dims[0] + x,
                    cc[1] as u32 * dims[1] + y,
                    cc[2] as u32 * dims[2] + z,
                ]);
            }
        }
    }
    v
}

/// The barrier state of one cluster: the cluster barrier's phases and
/// each workgroup's workgroup-barrier generation (for
/// `s_barrier_signal_isfirst -1`).
#[derive(Debug)]
pub(super) struct Barriers {
    /// Waves per workgroup.
    per_wg: usize,
    /// Cluster-barrier phases completed.
    done: u64,
    /// Per wave: cluster signals, completed cluster waits, whether it waits
    /// at the cluster barrier now, whether it ended.
    sig: Vec<u64>,
    waits: Vec<u64>,
    blocked: Vec<bool>,
    ended: Vec<bool>,
    /// Per workgroup: the most cluster signals of one of its waves (some
    /// wave of it signalled phase `p` when this is over `p`).
    signalled: Vec<u64>,
    /// Per workgroup: releases of the workgroup barrier, and the
    /// generation whose first signal was taken.
    generation: Vec<u64>,
    first: Vec<Option<u64>>,
    /// Per workgroup: its named barriers (gfx1250, 1..16).
    named: Vec<crate::named_barrier::NamedBarriers>,
}

/// What became of a wave stopped at [`WaveState::Sync`].
enum Resolved {
    /// It runs on.
    Runs,
    /// It waits at the cluster barrier or a named barrier.
    Waits,
}

impl Barriers {
    pub(super) fn new(workgroups: usize, per_wg: usize) -> Self {
        let n = workgroups * per_wg;
        Barriers {
            per_wg,
            done: 0,
            sig: vec![0; n],
            waits: vec![0; n],
            blocked: vec![false; n],
            ended: vec![false; n],
            signalled: vec![0; workgroups],
            generation: vec![0; workgroups],
            first: vec![None; workgroups],
            named: vec![crate::named_barrier::NamedBarriers::new(per_wg); workgroups],
        }
    }

    fn waves(&self, g: usize) -> std::ops::Range<usize> {
        g * self.per_wg..(g + 1) * self.per_wg
    }

    /// Whether every wave of workgroup `g` ended.
    fn wg_ended(&self, g: usize) -> bool {
        self.waves(g).all(|w| self.ended[w])
    }

    /// Whether workgroup `g` has arrived at phase `p`: some wave of it
    /// signalled `p`, and each of its waves that has not ended signalled
    /// `p` or waits at the cluster barrier for `p` (LLVM's form: one wave
    /// signals, all wait; aiter's: all signal). A workgroup whose waves
    /// all ended has arrived.
    fn arrived(&self, g: usize, p: u64) -> bool {
        self.wg_ended(g)
            || (self.signalled[g] > p
                && self.waves(g).all(|w| {
                    self.ended[w] || self.sig[w] > p || (self.blocked[w] && self.waits[w] == p)
                }))
    }

    /// Complete wave `wi`'s barrier operation (it stopped with
    /// [`WaveState::Sync`]).
    fn resolve(
        &mut self,
        wi: usize,
        wave: &mut Wave,
        program: &crate::decode::Program,
    ) -> std::result::Result<Resolved, Stop> {
        let g = wi / self.per_wg;
        let op = wave.sync.take();
        wave.state = WaveState::Running;
        match op {
            Some(SyncOp::FirstSignal) => {
                wave.scc = self.first[g] != Some(self.generation[g]);
                self.first[g] = Some(self.generation[g]);
            }
            Some(SyncOp::ClusterSignal { isfirst }) => {
                let p = self.sig[wi].max(self.waits[wi]);
                self.sig[wi] = p + 1;
                if isfirst {
                    wave.scc = self.signalled[g] <= p;
                }
                self.signalled[g] = self.signalled[g].max(p + 1);
                self.advance();
            }
            Some(SyncOp::ClusterWait) => {
                if self.done > self.waits[wi] {
                    self.waits[wi] += 1;
                } else {
                    wave.sync = Some(SyncOp::ClusterWait);
                    wave.state = WaveState::ClusterBarrier;
                    self.blocked[wi] = true;
                    self.advance();
                    return Ok(Resolved::Waits);
                }
            }
            Some(SyncOp::Named(op)) => {
                use crate::named_barrier::Outcome;
                let local = wi - g * self.per_wg;
                match self.named[g].apply(local, op) {
                    Ok(Outcome::Runs(scc)) => {
                        if let Some(c) = scc {
                            wave.scc = c;
                        }
                    }
                    Ok(Outcome::Waits) => {
                        wave.state = WaveState::NamedBarrier;
                        return Ok(Resolved::Waits);
                    }
                    Err(m) => return Err(Stop::Fault(None, m)),
                }
            }
            Some(SyncOp::ClusterState) => {
                let n = self.ended.len() / self.per_wg;
                let members = (0..n).filter(|&g| !self.wg_ended(g)).count() as u32;
                let signalled = (0..n)
                    .filter(|&g| !self.wg_ended(g) && self.signalled[g] > self.done)
                    .count() as u32;
                let v = 1 | (members & 0x7f) << 4 | (signalled & 0x7f) << 16;
                let ins = &program.instructions[wave.pc - 1];
                crate::exec::set_barrier_state(wave, ins, v)?;
            }
            None => {}
        }
        Ok(Resolved::Runs)
    }

    /// Complete every phase all workgroups have arrived at.
    fn advance(&mut self) {
        let n = self.signalled.len();
        if (0..n).all(|g| self.wg_ended(g)) {
            return;
        }
        while (0..n).all(|g| self.arrived(g, self.done)) {
            self.done += 1;
        }
    }

    /// Wave `wi` ended: it no longer counts at the cluster barrier.
    fn end(&mut self, wi: usize) {
        self.ended[wi] = true;
        self.advance();
    }

    /// Whether wave `wi`, waiting at the cluster barrier, may go on (and
    /// if so, its wait completes).
    fn release(&mut self, wi: usize) -> bool {
        if self.done > self.waits[wi] {
            self.waits[wi] += 1;
            self.blocked[wi] = false;
            true
        } else {
            false
        }
    }
}

/// One workgroup's observer: the caller's, the sanitizer, both, or none.
enum Obs<'a> {
    None,
    One(&'a mut dyn Observer),
    Both(Both<'a, 'a>),
}

impl Obs<'_> {
    fn get(&mut self) -> Option<&mut dyn Observer> {
        match self {
            Obs::None => None,
            Obs::One(o) => Some(&mut **o),
            Obs::Both(b) => Some(b),
        }
    }
}

impl Setup<'_> {
    /// Run the workgroups `wgs` of one cluster together; `observers` are
    /// the caller's, one per workgroup (`None`: not observed). Returns the
    /// instructions executed and the sanitizer's findings.
    pub(super) fn cluster(
        &self,
        wgs: &[[u32; 3]],
        observers: Vec<Option<&mut dyn Observer>>,
    ) -> Result<(u64, Vec<Finding>)> {
        let per_wg = self.waves_per_wg as usize;
        let n_wg = wgs.len();
        let mut waves: Vec<Wave> = wgs
            .iter()
            .flat_map(|&wg| (0..self.waves_per_wg).map(move |w| (wg, w)))
            .map(|(wg, w)| self.wave(wg, w))
            .collect();
        let lds_size = self
            .kernel
            .descriptor
            .group_segment_fixed_size
            .saturating_add(self.launch.dynamic_lds) as usize;
        let mut lds: Vec<Lds> = (0..n_wg).map(|_| Lds::new(lds_size)).collect();
        let mut sans: Vec<Option<crate::sanitize::Workgroup>> =
            wgs.iter().map(|&wg| self.sanitizer(wg)).collect();
        let mut obs: Vec<Obs> = observers
            .into_iter()
            .zip(sans.iter_mut())
            .map(|(user, san)| match (user, san.as_mut()) {
                (Some(user), Some(san)) => Obs::Both(Both {
                    user,
                    san,
                    merged: Vec::new(),
                }),
                (Some(user), None) => Obs::One(user),
                (None, Some(san)) => Obs::One(san),
                (None, None) => Obs::None,
            })
            .collect();
        let budget = self.launch.max_instructions;
        let n_waves = waves.len();
        let mut rng = self.order_rng(wgs[0]);
        let mut order: Vec<usize> = (0..per_wg).collect();
        let mut divergence: Vec<Finding> = Vec::new();
        let mut ended_reported = vec![false; n_waves];
        let mut barriers = Barriers::new(n_wg, per_wg);
        // Workgroup after workgroup, each until none of its waves can run
        // (as a dispatch without clusters runs them), then again from the
        // first: a workgroup runs as far ahead of its peers as the cluster
        // barrier lets it.
        let result = 'run: loop {
            let mut progressed = false;
            for g in 0..n_wg {
                loop {
                    if let Some(r) = rng.as_mut() {
                        for i in (1..per_wg).rev() {
                            let j = (r.next_u64() % (i as u64 + 1)) as usize;
                            order.swap(i, j);
                        }
                    }
                    for &local in &order {
                        let wi = g * per_wg + local;
                        let wave = &mut waves[wi];
                        if wave.state != WaveState::Running {
                            continue;
                        }
                        progressed = true;
                        let limit = self.slice_limit(rng.as_mut(), wave.executed);
                        let before = wave.executed;
                        let observer = obs[g].get();
                        let observing = observer.is_some();
                        let pieces = observer.as_ref().is_some_and(|o| o.pieces());
                        let mut ctx = Ctx {
                            program: self.program,
                            mem: self.mem,
                            lds: &mut lds[g],
                            shared_base_hi: SHARED_BASE_HI,
                            private_base_hi: PRIVATE_BASE_HI,
                            ocp_fp8: self.ocp_fp8,
                            trace: Trace {
                                on: observing,
                                pieces,
                                accesses: Vec::new(),
                            },
                            observer: observer.map(|o| (shorten(o), wgs[g], local as u32)),
                            typed: &self.typed,
                        };
                        let r = loop {
                            let r = run_until_blocked(wave, &mut ctx, limit);
                            if r.is_ok() && wave.state == WaveState::Sync {
                                match barriers.resolve(wi, wave, self.program) {
                                    Ok(Resolved::Runs) => continue,
                                    Ok(Resolved::Waits) => break Ok(()),
                                    Err(s) => break Err((s, wave.pc - 1)),
                                }
                            }
                            break r;
                        };
                        if let Err((stop, pc)) = r {
                            break 'run self
                                .stopped(stop, pc, wgs[g], local as u32, "the workgroup's cluster")
                                .map(|f| vec![f]);
                        }
                        if let Err(e) = self.charge(wave, before, wgs[g], local as u32) {
                            break 'run Err(e);
                        }
                        if wave.state == WaveState::Running && wave.executed >= budget {
                            break 'run Err(self.budget_error(wgs[g], local, &waves[wi]));
                        }
                        if wave.state == WaveState::Done {
                            barriers.end(wi);
                        }
                    }
                    let range = g * per_wg..(g + 1) * per_wg;
                    if waves[range.clone()]
                        .iter()
                        .any(|w| w.state == WaveState::Running)
                    {
                        continue;
                    }
                    // No wave of the workgroup can run: release its
                    // barriers that can.
                    let group = &mut waves[range.clone()];
                    let mut released = false;
                    let live = group.iter().filter(|w| w.state != WaveState::Done);
                    if live.clone().count() > 0
                        && live.clone().all(|w| w.state == WaveState::Barrier)
                    {
                        if self.launch.sanitize.contains(Checks::BARRIER_PAIRS) {
                            if let Some(f) =
                                self.divergence(wgs[g], group, &mut ended_reported[range.clone()])
                            {
                                divergence.push(f);
                            }
                        }
                        for w in group.iter_mut().filter(|w| w.state == WaveState::Barrier) {
                            w.state = WaveState::Running;
                        }
                        barriers.generation[g] += 1;
                        if let Some(o) = obs[g].get() {
                            o.barrier_released();
                        }
                        released = true;
                    }
                    let mut all = true;
                    let mut any = false;
                    for (i, w) in group.iter_mut().enumerate() {
                        if w.state == WaveState::NamedBarrier && barriers.named[g].released(i) {
                            w.state = WaveState::Running;
                            released = true;
                        }
                    }
                    for (i, w) in group.iter_mut().enumerate() {
                        if w.state == WaveState::ClusterBarrier && barriers.release(range.start + i)
                        {
                            w.state = WaveState::Running;
                            w.sync = None;
                            any = true;
                        } else if w.state != WaveState::Done {
                            all = false;
                        }
                    }
                    if any && all {
                        // Every live wave of the workgroup passed the
                        // cluster barrier together: a barrier for the
                        // workgroup's observers (the sanitizer's LDS
                        // epochs) too.
                        if let Some(o) = obs[g].get() {
                            o.barrier_released();
                        }
                    }
                    if !(released || any) {
                        break;
                    }
                    progressed = true;
                }
            }
            if waves.iter().all(|w| w.state == WaveState::Done) {
                break Ok(divergence);
            }
            if !progressed {
                break Err(self.cluster_deadlock(wgs, &waves, &barriers));
            }
        };
        drop(obs);
        let mut extra = result?;
        let n: u64 = waves.iter().map(|w| w.executed).sum();
        self.tally(&waves);
        for (l, san) in lds.iter().zip(sans.iter_mut()) {
            self.lds_out_of_range
                .fetch_add(l.out_of_range, Ordering::Relaxed);
            if let Some(s) = san {
                extra.append(&mut s.findings());
            }
        }
        Ok((n, extra))
    }

    /// The error when no wave of the cluster `wgs` can run and no barrier
    /// can release: each workgroup's cluster-barrier phase and where its
    /// waves wait.
    fn cluster_deadlock(&self, wgs: &[[u32; 3]], waves: &[Wave], b: &Barriers) -> Error {
        let p = self.program;
        let at = |w: &Wave| {
            p.instructions
                .get(w.pc.wrapping_sub(1))
                .map(|i| (i.addr, i.text.clone()))
                .unwrap_or_default()
        };
        let missing: Vec<String> = (0..wgs.len())
            .filter(|&g| !b.arrived(g, b.done))
            .map(|g| format!("({}, {}, {})", wgs[g][0], wgs[g][1], wgs[g][2]))
            .collect();
        let mut lines = Vec::new();
        let mut first: Option<(usize, usize)> = None;
        for (g, wg) in wgs.iter().enumerate() {
            let group = &waves[g * b.per_wg..(g + 1) * b.per_wg];
            let signalled = if b.wg_ended(g) {
                "ended".to_string()
            } else if b.arrived(g, b.done) {
                "arrived at it".to_string()
            } else if b.signalled[g] > b.done {
                "signalled it, but not all its waves reached it".to_string()
            } else {
                "has not signalled it".to_string()
            };
            let mut states = Vec::new();
            for (i, w) in group.iter().enumerate() {
                let (addr, text) = at(w);
                let s = match w.state {
                    WaveState::ClusterBarrier => {
                        format!(
                            "wave {i} waits at {addr:#x} `{text}` for cluster phase {}",
                            b.waits[g * b.per_wg + i]
                        )
                    }
                    WaveState::Barrier => {
                        format!("wave {i} waits at {addr:#x} `{text}` (the workgroup barrier)")
                    }
                    WaveState::NamedBarrier => match b.named[g].waiting_on(i) {
                        Some((id, o)) => format!(
                            "wave {i} waits at {addr:#x} `{text}` on named barrier {id} ({} of {} arrivals)",
                            o.arrived, o.expected
                        ),
                        None => format!("wave {i} waits at {addr:#x} `{text}` on a named barrier"),
                    },
                    WaveState::Done => format!("wave {i} ended at {addr:#x}"),
                    _ => format!("wave {i} at {addr:#x} `{text}`"),
                };
                if first.is_none()
                    && matches!(w.state, WaveState::ClusterBarrier | WaveState::Barrier)
                {
                    first = Some((g, i));
                }
                states.push(s);
            }
            lines.push(format!(
                "workgroup ({}, {}, {}) {signalled}: {}",
                wg[0],
                wg[1],
                wg[2],
                states.join(", ")
            ));
        }
        let (g, i) = first.unwrap_or((0, 0));
        let w = &waves[g * b.per_wg + i];
        let (addr, text) = at(w);
        Error::Fault {
            kernel: self.kernel.name.clone(),
            addr,
            text,
            workgroup: wgs[g],
            wave: i as u32,
            lane: None,
            what: format!(
                "deadlock at the cluster barrier (-3): no wave of the cluster can run; cluster phase {} waits for workgroup(s) {} to arrive (one wave signals it, `s_barrier_signal -3`, and every other wave signals it or waits). {}",
                b.done,
                if missing.is_empty() { "none".to_string() } else { missing.join(", ") },
                lines.join("; ")
            ),
        }
    }
}
