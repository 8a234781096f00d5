// named_barrier: gfx1250's named barriers from clang-22's builtins. One
// block of four wave32 waves: waves 0 and 1 synchronise on one named
// barrier, waves 2 and 3 on another (each pair's barrier is initialised
// for 2 members by one of its waves, joined by both). Each wave writes
// its lanes' values to LDS, signals and waits on its pair's barrier, then
// out[t] = the partner wave's value for the same lane (t ^ 32).
// `lonely` has wave 0 wait on a barrier of 2 that only it joins: a
// deadlock.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

extern "C" __global__ void named_barrier(const int *in, int *out) {
  __shared__ __amdgpu_named_workgroup_barrier_t bar[2];
  __shared__ int slot[128];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned w = t / 32, pair = w / 2;
  if (w == 0) __builtin_amdgcn_s_barrier_init(&bar[0], 2);
  if (w == 2) __builtin_amdgcn_s_barrier_init(&bar[1], 2);
  // Every wave must see the inits before it signals.
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_s_barrier_join(&bar[pair]);
  slot[t] = in[t] * 3 + 1;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier_signal_var(&bar[pair], 0);
  __builtin_amdgcn_s_barrier_wait(1);
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  out[t] = slot[t ^ 32];
  __builtin_amdgcn_s_barrier_leave(1);
}

extern "C" __global__ void lonely(int *out) {
  __shared__ __amdgpu_named_workgroup_barrier_t bar;
  unsigned t = __builtin_amdgcn_workitem_id_x();
  if (t < 32) {
    __builtin_amdgcn_s_barrier_init(&bar, 2);
    __builtin_amdgcn_s_barrier_join(&bar);
    __builtin_amdgcn_s_barrier_signal_var(&bar, 0);
    __builtin_amdgcn_s_barrier_wait(1);
  }
  out[t] = t;
}
