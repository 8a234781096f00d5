//! gfx1250 workgroup clusters (`gcn_emu::dispatch::cluster`): the identity
//! registers clang-22's cluster builtins read, the cluster barrier in
//! LLVM's form and aiter's, its deadlock report, and the launch's checks.
//! Kernels: tests/kernels/gfx1250_cluster.hip, compiled by clang-22 for gfx1250.

use crate::common;
use common::*;
use gcn_emu::dispatch::Launch;

/// The clang-22 object of tests/kernels/`file`.hip for `target` (cached).
fn object(file: &str, target: &str) -> std::path::PathBuf {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/kernels")
        .join(format!("{file}.hip"));
    build_hip(&src, target).unwrap_or_else(|e| panic!("clang-22 failed on {}: {e}", src.display()))
}

fn kernel(name: &str) -> Loaded {
    load(&object("gfx1250_cluster", "gfx1250"), name)
}

/// The 16 words `IDS` stores for workgroup `wg` of a dispatch with clusters
/// of `dims` (`None`: without clusters), as the host computes them: the
/// workgroup's ID, its cluster's ID, its position in the cluster, the
/// cluster's size minus one, its flat rank and the highest rank. Without
/// clusters LLVM's lowering reads ttmp9/ttmp7 (the workgroup ID) as the
/// cluster ID and 0 for the rest.
fn expected(wg: [u32; 3], dims: Option<[u32; 3]>) -> Vec<u32> {
    let (c, l, m) = match dims {
        Some(d) => (
            [0, 1, 2].map(|i| wg[i] / d[i]),
            [0, 1, 2].map(|i| wg[i] % d[i]),
            d.map(|x| x - 1),
        ),
        None => (wg, [0; 3], [0; 3]),
    };
    let d = dims.unwrap_or([1; 3]);
    let flat = l[0] + d[0] * (l[1] + d[1] * l[2]);
    let max_flat = d[0] * d[1] * d[2] - 1;
    let mut v = vec![wg[0], wg[1], wg[2], c[0], c[1], c[2], l[0], l[1], l[2]];
    v.extend([m[0], m[1], m[2], flat, max_flat, 0x5eed, 0x5eed]);
    v
}

/// Runs `ids` on `grid` with `cluster` and compares every workgroup's
/// words with [`expected`].
fn check_ids(name: &str, grid: [u32; 3], cluster: [u32; 3], dims: Option<[u32; 3]>) {
    let l = kernel(name);
    let n = (grid[0] * grid[1] * grid[2]) as usize;
    let mut launch = Launch::new(grid, [64, 1, 1]);
    launch.cluster = cluster;
    let (bufs, stats) = launch_with(
        &l,
        launch,
        vec![
            A::Buf(vec![0; n * 64]),
            A::Val(grid[0].to_le_bytes().to_vec()),
            A::Val(grid[1].to_le_bytes().to_vec()),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats.workgroups, n as u64);
    let got = to_u32(&bufs[0]);
    for z in 0..grid[2] {
        for y in 0..grid[1] {
            for x in 0..grid[0] {
                let i = (((z * grid[1] + y) * grid[0] + x) * 16) as usize;
                assert_eq!(
                    got[i..i + 16],
                    expected([x, y, z], dims),
                    "{name}, grid {grid:?}, cluster {cluster:?}: workgroup ({x}, {y}, {z})"
                );
            }
        }
    }
}

/// T1: a kernel compiled with `cluster_dims(2, 2, 1)` on a 4×4×1 grid
/// takes its cluster from `.cluster_dims`; each workgroup reads its
/// cluster ID (ttmp9/ttmp7), its position, the cluster's size and its
/// flat rank (ttmp6, IB_STS2[24:21]) and its workgroup ID (rebuilt by
/// LLVM from the cluster ID and the position).
#[test]
fn cluster_identity_from_the_code_objects_cluster_dims() {
    check_ids("ids_2x2", [4, 4, 1], [0; 3], Some([2, 2, 1]));
}

/// T1 with the shape chosen at launch: a kernel without the attribute
/// reads IB_STS2[9:6] and the ttmp6 fields at run time.
#[test]
fn cluster_identity_chosen_at_launch() {
    check_ids("ids_any", [4, 2, 4], [2, 1, 2], Some([2, 1, 2]));
    check_ids("ids_any", [8, 2, 1], [4, 2, 1], Some([4, 2, 1]));
}

/// T1 without clusters (cluster 1, 1, 1, and a kernel without
/// `.cluster_dims`): IB_STS2[9:6] is 0, the workgroup IDs are in
/// ttmp9/ttmp7 as before.
#[test]
fn cluster_identity_without_clusters() {
    check_ids("ids_any", [8, 2, 1], [0; 3], None);
    check_ids("ids_any", [2, 2, 2], [1; 3], None);
}

const ROUNDS: u32 = 5;

/// Runs an exchange kernel on 2 clusters of 4 workgroups of 2 waves.
fn exchange(name: &str, launch: Launch) -> Result<Vec<u32>, gcn_emu::Error> {
    let l = kernel(name);
    let (bufs, _) = launch_with(
        &l,
        launch,
        vec![
            A::Buf(vec![0; 8 * 4]),
            A::Buf(vec![0xff; (8 * ROUNDS * 4 * 4) as usize]),
            A::Val(ROUNDS.to_le_bytes().to_vec()),
        ],
    )?;
    Ok(to_u32(&bufs[1]))
}

/// What every workgroup of a 4-workgroup cluster reads in round `r`: its
/// peers' tags of that round.
fn check_exchange(name: &str, got: &[u32]) {
    for wg in 0..8u32 {
        for r in 0..ROUNDS {
            for t in 0..4u32 {
                let i = ((wg * ROUNDS + r) * 4 + t) as usize;
                assert_eq!(
                    got[i],
                    (r + 1) << 8 | t,
                    "{name}: workgroup {wg}, round {r}, peer {t}: read {:#x}",
                    got[i]
                );
            }
        }
    }
}

/// T2: `__builtin_amdgcn_s_cluster_barrier()` (the first wave of each
/// workgroup signals -3, all wait) orders each round's slot writes
/// before the peers' reads, and the reads before the next round's writes.
/// Every wave runs until it blocks, so a barrier that did not hold would
/// let the first workgroup read its peers' slots before they wrote them;
/// with seeds, the waves interleave in random slices.
#[test]
fn cluster_barrier_orders_the_workgroups_of_a_cluster() {
    for seed in [0, 1, 2] {
        let mut launch = Launch::new([8, 1, 1], [64, 1, 1]);
        launch.seed = seed;
        let got = exchange("exchange", launch).unwrap_or_else(|e| panic!("{e}"));
        check_exchange("exchange", &got);
    }
}

/// The sanitizer's every check on the exchange reports nothing (the
/// cluster barrier raises no false alarm), and an observer sees each
/// workgroup's barriers: per round two workgroup barriers and two cluster
/// barriers that all its waves pass together.
#[test]
fn cluster_barrier_under_the_sanitizer_and_an_observer() {
    use gcn_emu::observe::{Event, Observe, Observer};
    let mut launch = Launch::new([8, 1, 1], [64, 1, 1]);
    launch.sanitize = gcn_emu::sanitize::Checks::ALL;
    let got = exchange("exchange", launch).unwrap_or_else(|e| panic!("{e}"));
    check_exchange("exchange", &got);

    struct Count(u32);
    impl Observer for Count {
        fn executed(&mut self, _: &Event<'_>) {}
        fn barrier_released(&mut self) {
            self.0 += 1;
        }
    }
    struct Counts;
    impl Observe for Counts {
        type Workgroup = Count;
        fn workgroup(&self, _: [u32; 3]) -> Count {
            Count(0)
        }
    }
    let l = kernel("exchange");
    let mem = gcn_emu::memory::Memory::new();
    let slots = mem.alloc_bytes("slots", &[0; 32]);
    let out = mem.alloc_bytes("out", &vec![0; (8 * ROUNDS * 16) as usize]);
    let args = [
        gcn_emu::dispatch::ArgValue::Pointer(slots),
        gcn_emu::dispatch::ArgValue::Pointer(out),
        gcn_emu::dispatch::ArgValue::Bytes(ROUNDS.to_le_bytes().to_vec()),
    ];
    let k = l.co.kernel(&l.name).unwrap();
    let launch = Launch::new([8, 1, 1], [64, 1, 1]);
    let (stats, wgs) =
        gcn_emu::dispatch::run_observed(&l.co, k, &l.program, &mem, &args, &launch, &Counts)
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((stats.workgroups, stats.waves), (8, 16));
    assert_eq!(wgs.len(), 8);
    for (i, c) in wgs.iter().enumerate() {
        assert_eq!(c.0, 4 * ROUNDS, "workgroup {i}");
    }
    check_exchange("exchange", &to_u32(&mem.contents(out).unwrap()));
}

/// T2, aiter's form: every wave signals -3 (a workgroup's duplicate
/// signals count once per phase).
#[test]
fn cluster_barrier_with_every_wave_signalling() {
    for seed in [0, 3] {
        let mut launch = Launch::new([8, 1, 1], [64, 1, 1]);
        launch.seed = seed;
        let got = exchange("exchange_all_waves", launch).unwrap_or_else(|e| panic!("{e}"));
        check_exchange("exchange_all_waves", &got);
    }
}

/// The exchange is sensitive to the barrier: launched without clusters
/// (1, 1, 1) it is refused at the first cluster barrier, not run as if
/// the barrier did nothing.
#[test]
fn cluster_barrier_without_clusters_is_refused() {
    let mut launch = Launch::new([8, 1, 1], [64, 1, 1]);
    launch.cluster = [1; 3];
    let e = exchange("exchange", launch).unwrap_err().to_string();
    assert!(
        e.contains("s_barrier_signal -3")
            && e.contains("without workgroup clusters")
            && e.contains("--cluster"),
        "{e}"
    );
}

/// T2 negative: the workgroup of rank 2 waits at the cluster barrier
/// without signalling it; no wave can run: a deadlock naming it, each
/// workgroup's phase and where the waves wait, not a hang.
#[test]
fn cluster_barrier_deadlock_names_the_workgroup_that_did_not_signal() {
    let l = kernel("skip_signal");
    let e = launch(
        &l,
        [4, 1, 1],
        [64, 1, 1],
        vec![A::Buf(vec![0; 16]), A::Val(2u32.to_le_bytes().to_vec())],
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("deadlock at the cluster barrier")
            && e.contains("cluster phase 0 waits for workgroup(s) (2, 0, 0)")
            && e.contains("workgroup (2, 0, 0) has not signalled it")
            && e.contains("workgroup (0, 0, 0) arrived at it")
            && e.contains("`s_barrier_wait 0xfffd` for cluster phase 0"),
        "{e}"
    );
}

/// The cluster trap barrier (-4) is privileged: refused, naming it.
#[test]
fn cluster_trap_barrier_is_refused() {
    let l = kernel("trap_barrier");
    let e = launch(&l, [2, 1, 1], [32, 1, 1], vec![A::Buf(vec![0; 8])])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("s_barrier_signal -4")
            && e.contains("cluster trap barrier")
            && e.contains("privileged"),
        "{e}"
    );
}

/// The launch's cluster is checked: whole clusters, at most 16
/// workgroups, gfx1250 only.
#[test]
fn cluster_launch_checks() {
    let l = kernel("ids_any");
    let run = |grid: [u32; 3], cluster: [u32; 3]| {
        let mut launch = Launch::new(grid, [32, 1, 1]);
        launch.cluster = cluster;
        launch_with(
            &l,
            launch,
            vec![
                A::Buf(vec![0; 4096]),
                A::Val(vec![0; 4]),
                A::Val(vec![0; 4]),
            ],
        )
        .unwrap_err()
        .to_string()
    };
    let e = run([6, 1, 1], [4, 1, 1]);
    assert!(
        e.contains("not whole clusters") && e.contains("multiple of 4"),
        "{e}"
    );
    let e = run([32, 1, 1], [32, 1, 1]);
    assert!(e.contains("at most 16"), "{e}");
    let e = run([8, 4, 1], [8, 4, 1]);
    assert!(e.contains("at most 16"), "{e}");
    let e = run([8, 1, 1], [2, 0, 1]);
    assert!(e.contains("1 to 16"), "{e}");
    let co = gcn_emu::load::CodeObject::read_file(&object("barrier", "gfx942")).unwrap();
    let k = co.kernels[0].clone();
    let mut launch = Launch::new([2, 1, 1], [256, 1, 1]);
    launch.cluster = [2, 1, 1];
    let e = gcn_emu::dispatch::cluster::shape(&co, &k, &launch)
        .unwrap_err()
        .to_string();
    assert!(e.contains("gfx1250 only, not gfx942"), "{e}");
}
