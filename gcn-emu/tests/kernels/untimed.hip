// untimed: instructions the profiler's timing model has no rule of its own
// for (gcn-patch/tests/profile.rs): the report's notes must name each.
// HIP device code without HIP headers.
#define __global__ __attribute__((global))

extern "C" __global__ void untimed(unsigned *__restrict__ out) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  __builtin_amdgcn_s_setprio(2);
  __asm__ volatile("s_icache_inv" ::: "memory");
  __builtin_amdgcn_s_setprio(0);
  // A global atomic.
  __atomic_fetch_add(&out[i % 4], 1u, __ATOMIC_RELAXED);
}
