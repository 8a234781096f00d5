// lds_barrier: each block of 64 threads stores its inputs to LDS, waits at
// a barrier (with the workgroup release and acquire fences of
// __syncthreads()) and writes them reversed: out[b*64+i] = in[b*64 + 63-i] * 2.
// On gfx11 the barrier is s_barrier; on gfx12 s_barrier_signal/s_barrier_wait.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
extern "C" __global__ void lds_barrier(const int *__restrict__ in, int *__restrict__ out) {
  __shared__ int tile[64];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned g = __builtin_amdgcn_workgroup_id_x() * 64u + t;
  tile[t] = in[g];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  out[g] = tile[63u - t] * 2;
}
