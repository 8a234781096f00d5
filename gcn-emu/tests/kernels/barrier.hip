// barrier: kernels whose waves do not all meet at the same s_barrier, for
// the sanitizer's barrier-divergence check. Launch with 256-thread blocks.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

// Work-items at or past n return before the barrier: with n < 256 whole
// waves end while the others wait (UB in HIP; on hardware the ended waves
// no longer count, so the others go on).
extern "C" __global__ void early_exit(float *out, unsigned n) {
  __shared__ float s[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  if (t >= n)
    return;
  s[t] = (float)t;
  __builtin_amdgcn_s_barrier();
  out[t] = s[(t + 1) % n];
}

// Waves below k wait at one barrier, the others at another.
extern "C" __global__ void divergent(float *out, unsigned k) {
  __shared__ float s[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  s[t] = (float)t;
  if (t < k) {
    out[t] = 1.0f;
    __builtin_amdgcn_s_barrier();
    out[t] += s[255 - t];
  } else {
    out[t] = 2.0f;
    __builtin_amdgcn_s_barrier();
    out[t] *= s[t];
  }
}

// Waves below k spin on an LDS flag that only the waves past the second
// barrier set: with k > 0, wave 0 never reaches the barrier the others wait
// at (a deadlock on hardware); with k = 0 nobody spins.
extern "C" __global__ void spin(float *out, unsigned k) {
  __shared__ volatile unsigned flag;
  unsigned t = __builtin_amdgcn_workitem_id_x();
  if (t == 0)
    flag = 0;
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (t < k) {
    while (flag == 0) {
    }
  } else {
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
    __builtin_amdgcn_s_barrier();
    if (t == k)
      flag = 1;
  }
  out[t] = 1.0f;
}
