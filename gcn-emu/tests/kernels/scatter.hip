// scatter: global loads at indices the test draws at random, for the
// profiler's coalescing counters (gcn-emu/tests/profile.rs). HIP device code
// without HIP headers.
#define __global__ __attribute__((global))

// gather_idx: lane i reads in[idx[i]] (a dword), gather4_idx: the 16-byte
// element in4[idx[i]]: indices the test draws at random (scattered).
typedef float f32x4 __attribute__((ext_vector_type(4)));

extern "C" __global__ void gather_idx(float *__restrict__ out,
                                      const float *__restrict__ in,
                                      const unsigned *__restrict__ idx) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  out[i] = in[idx[i]];
}

extern "C" __global__ void gather4_idx(f32x4 *__restrict__ out,
                                       const f32x4 *__restrict__ in4,
                                       const unsigned *__restrict__ idx) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  out[i] = in4[idx[i]];
}
