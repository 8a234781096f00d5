// atomics: global and LDS atomics. Launch blocks of 64 threads; acc[0..4]
// start at 0 (acc[2]: -1 for min), hist has 16 bins.
//   acc[0] += 1 per thread (global add, no return)
//   acc[1] max of the inputs; acc[2] unsigned min; acc[3] xor of the inputs
//   old[g] = the value atomicAdd(acc[4], in[g]) returned (a permutation of prefix sums)
//   hist[in[g] & 15] += 1 through an LDS histogram flushed once per block
//   facc[0] += float(in[g]) (global f32 add)
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
extern "C" __global__ void atomics(const int *__restrict__ in, int *acc, int *old, int *hist,
                                   float *facc) {
  __shared__ int bins[16];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned g = __builtin_amdgcn_workgroup_id_x() * 64u + t;
  int v = in[g];
  if (t < 16) bins[t] = 0;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  __hip_atomic_fetch_add(&acc[0], 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_max(&acc[1], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_min((unsigned *)&acc[2], (unsigned)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_xor(&acc[3], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  old[g] = __hip_atomic_fetch_add(&acc[4], v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_add(&bins[v & 15], 1, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_add(&facc[0], (float)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (t < 16) __hip_atomic_fetch_add(&hist[t], bins[t], __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
