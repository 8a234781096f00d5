// HIP without ROCm: compiled with `clang -x hip -nogpuinc -nogpulib`, so
// <hip/hip_runtime.h> is not there. What it would define, written with
// clang's own attributes and builtins. The book shows this file
// (docs/src/guide/run.md, "HIP without ROCm"); gcn-emu/tests/hip.rs
// compiles it for gfx90a, gfx942 and gfx950 and runs it in the emulator.

#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __shared__ __attribute__((shared))
// __launch_bounds__(N): at most N work-items per workgroup.
#define __launch_bounds__(n) __attribute__((amdgpu_flat_work_group_size(1, n)))

// threadIdx.x, blockIdx.x, blockDim.x
__device__ static inline unsigned thread_x() { return __builtin_amdgcn_workitem_id_x(); }
__device__ static inline unsigned block_x() { return __builtin_amdgcn_workgroup_id_x(); }
__device__ static inline unsigned block_dim_x() { return __builtin_amdgcn_workgroup_size_x(); }

// __syncthreads(): make this work-item's LDS and global writes visible to
// the workgroup, wait for every wave, then see theirs.
__device__ static inline void syncthreads() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// Each workgroup reverses its block of `in` through LDS.
extern "C" __global__ __launch_bounds__(256) void reverse_block(const float *in, float *out,
                                                                unsigned n) {
  __shared__ float tile[256]; // static LDS: in the kernel descriptor
  unsigned t = thread_x(), dim = block_dim_x();
  unsigned i = block_x() * dim + t;
  tile[t] = i < n ? in[i] : 0.0f;
  syncthreads();
  if (i < n)
    out[i] = tile[dim - 1 - t];
}

// Lane l of each wave gets the value of lane (l + 1) % 64 (ds_bpermute
// takes a byte address: lane * 4), staged through dynamic LDS.
extern "C" __global__ void rotate_lanes(const int *in, int *out) {
  extern __shared__ int staged[]; // dynamic LDS: its size is given at launch
  unsigned t = thread_x();
  unsigned i = block_x() * block_dim_x() + t;
  staged[t] = in[i];
  syncthreads();
  int v = staged[t];
  out[i] = __builtin_amdgcn_ds_bpermute((int)(((t + 1) % 64) * 4), v);
}
