// dyn_shared: a fixed __shared__ array (in the descriptor's
// group_segment_fixed_size) and an `extern __shared__` one, which the launch
// sizes (HIP's sharedMemBytes; `gcn-patch run --dynamic-lds`). Launch with
// 256-thread blocks and 1024 bytes of dynamic LDS:
// out[g] = in[base + 255 - t] + 2 * in[g ^ 1].
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

extern "C" __global__ void reverse(const float *in, float *out) {
  __shared__ float fixed[256];
  extern __shared__ float dyn[];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned base = __builtin_amdgcn_workgroup_id_x() * 256;
  fixed[t] = in[base + t];
  dyn[t] = 2.0f * in[base + t];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  out[base + t] = fixed[255 - t] + dyn[t ^ 1];
}
