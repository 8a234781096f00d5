// atomics: a histogram of 16 bins, first in LDS per block (LDS atomics),
// then added to the global histogram (global atomics); plus a global
// atomic max over all inputs. Launch with 256-thread blocks.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
extern "C" __global__ void histogram(const unsigned *__restrict__ in, unsigned *hist,
                                     unsigned *maxv, unsigned n) {
  __shared__ unsigned local[16];
  unsigned tid = __builtin_amdgcn_workitem_id_x();
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 256u + tid;
  if (tid < 16)
    local[tid] = 0;
  __builtin_amdgcn_s_barrier();
  if (i < n) {
    unsigned v = in[i];
    __atomic_fetch_add(&local[v & 15u], 1u, __ATOMIC_RELAXED);
    __atomic_fetch_max(maxv, v, __ATOMIC_RELAXED);
  }
  __builtin_amdgcn_s_barrier();
  if (tid < 16)
    __atomic_fetch_add(&hist[tid], local[tid], __ATOMIC_RELAXED);
}
