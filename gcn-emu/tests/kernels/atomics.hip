// atomics: a histogram of 16 bins, first in LDS per block (LDS atomics),
// then added to the global histogram (global atomics); plus a global
// atomic max over all inputs. Launch with 256-thread blocks.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
// HIP's __syncthreads(): a bare s_barrier is no memory fence (LDS writes in
// flight at it may stay invisible to the other waves).
#define __syncthreads()                                                        \
  do {                                                                         \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");                     \
    __builtin_amdgcn_s_barrier();                                              \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");                     \
  } while (0)
extern "C" __global__ void histogram(const unsigned *__restrict__ in, unsigned *hist,
                                     unsigned *maxv, unsigned n) {
  __shared__ unsigned local[16];
  unsigned tid = __builtin_amdgcn_workitem_id_x();
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 256u + tid;
  if (tid < 16)
    local[tid] = 0;
  __syncthreads();
  if (i < n) {
    unsigned v = in[i];
    __atomic_fetch_add(&local[v & 15u], 1u, __ATOMIC_RELAXED);
    __atomic_fetch_max(maxv, v, __ATOMIC_RELAXED);
  }
  __syncthreads();
  if (tid < 16)
    __atomic_fetch_add(&hist[tid], local[tid], __ATOMIC_RELAXED);
}
