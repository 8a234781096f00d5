// gfx1250 workgroup clusters (gcn-emu/tests/it/cluster.rs): the cluster
// identity builtins, and the cluster barrier in LLVM's form
// (__builtin_amdgcn_s_cluster_barrier: one wave per workgroup signals) and
// in aiter's (every wave signals -3).
#define __global__ __attribute__((global))

// 16 words per workgroup (row-major over a grid of `width` in X, `height`
// in Y): its IDs as the builtins read them.
#define IDS(out, width, height)                                                \
  unsigned wx = __builtin_amdgcn_workgroup_id_x();                             \
  unsigned wy = __builtin_amdgcn_workgroup_id_y();                             \
  unsigned wz = __builtin_amdgcn_workgroup_id_z();                             \
  unsigned i = ((wz * height + wy) * width + wx) * 16;                         \
  if (__builtin_amdgcn_workitem_id_x() == 0) {                                 \
    out[i + 0] = wx;                                                           \
    out[i + 1] = wy;                                                           \
    out[i + 2] = wz;                                                           \
    out[i + 3] = __builtin_amdgcn_cluster_id_x();                              \
    out[i + 4] = __builtin_amdgcn_cluster_id_y();                              \
    out[i + 5] = __builtin_amdgcn_cluster_id_z();                              \
    out[i + 6] = __builtin_amdgcn_cluster_workgroup_id_x();                    \
    out[i + 7] = __builtin_amdgcn_cluster_workgroup_id_y();                    \
    out[i + 8] = __builtin_amdgcn_cluster_workgroup_id_z();                    \
    out[i + 9] = __builtin_amdgcn_cluster_workgroup_max_id_x();                \
    out[i + 10] = __builtin_amdgcn_cluster_workgroup_max_id_y();               \
    out[i + 11] = __builtin_amdgcn_cluster_workgroup_max_id_z();               \
    out[i + 12] = __builtin_amdgcn_cluster_workgroup_flat_id();                \
    out[i + 13] = __builtin_amdgcn_cluster_workgroup_max_flat_id();            \
    out[i + 14] = 0x5eed;                                                      \
    out[i + 15] = 0x5eed;                                                      \
  }

// Compiled for a 2x2x1 cluster (.cluster_dims): LLVM folds the dims.
extern "C" __global__ __attribute__((cluster_dims(2, 2, 1))) void
ids_2x2(unsigned *out, unsigned width, unsigned height) {
  IDS(out, width, height)
}

// No cluster attribute: every ID read at run time (IB_STS2 says whether
// the dispatch has clusters).
extern "C" __global__ void ids_any(unsigned *out, unsigned width,
                                   unsigned height) {
  IDS(out, width, height)
}

// Each workgroup of a 4x1x1 cluster publishes a phase-tagged value in its
// slot, waits at the cluster barrier, reads its three peers' slots, and
// waits again before the next round overwrites its slot. Without the
// barrier, a workgroup reads its peers' slots before they wrote them.
#define EXCHANGE(BARRIER)                                                      \
  unsigned wg = __builtin_amdgcn_workgroup_id_x();                             \
  unsigned rank = __builtin_amdgcn_cluster_workgroup_flat_id();                \
  unsigned base = wg - rank;                                                   \
  unsigned t = __builtin_amdgcn_workitem_id_x();                               \
  for (unsigned r = 0; r < rounds; ++r) {                                      \
    if (t == 0)                                                                \
      slots[wg] = (r + 1) << 8 | rank;                                         \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "cluster");                       \
    BARRIER;                                                                   \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "cluster");                       \
    if (t < 4)                                                                 \
      out[(wg * rounds + r) * 4 + t] = slots[base + t];                        \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "cluster");                       \
    BARRIER;                                                                   \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "cluster");                       \
  }

extern "C" __global__ __attribute__((cluster_dims(4, 1, 1))) void
exchange(volatile unsigned *slots, unsigned *out, unsigned rounds) {
  EXCHANGE(__builtin_amdgcn_s_cluster_barrier())
}

// aiter's form (hsa/gfx1250 f8gemm, opus.hpp sync_cluster): every wave
// signals the cluster barrier, every wave waits.
extern "C" __global__ __attribute__((cluster_dims(4, 1, 1))) void
exchange_all_waves(volatile unsigned *slots, unsigned *out, unsigned rounds) {
  EXCHANGE(asm volatile("s_barrier_signal -3\n\ts_barrier_wait -3" ::: "memory"))
}

// The workgroup of rank `skip` never signals the cluster barrier but
// waits at it: the cluster deadlocks.
extern "C" __global__ __attribute__((cluster_dims(4, 1, 1))) void
skip_signal(unsigned *out, unsigned skip) {
  unsigned rank = __builtin_amdgcn_cluster_workgroup_flat_id();
  if (rank != skip)
    asm volatile("s_barrier_signal -3" ::: "memory");
  asm volatile("s_barrier_wait -3" ::: "memory");
  out[__builtin_amdgcn_workgroup_id_x()] = 1;
}

// The cluster trap barrier (-4) is the trap handler's: refused.
extern "C" __global__ __attribute__((cluster_dims(2, 1, 1))) void
trap_barrier(unsigned *out) {
  asm volatile("s_barrier_signal -4" ::: "memory");
  out[__builtin_amdgcn_workgroup_id_x()] = 1;
}
