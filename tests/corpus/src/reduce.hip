// reduce: per-block sum of 256 floats through LDS with barriers.
// out[blockIdx.x] = sum(in[blockIdx.x * 256 .. blockIdx.x * 256 + 255]).
// HIP device code without HIP headers; launch with 256 threads per block.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

#define BLOCK 256u

extern "C" __global__ void reduce(const float *__restrict__ in,
                                  float *__restrict__ out, unsigned n) {
  __shared__ float partial[BLOCK];
  unsigned tid = __builtin_amdgcn_workitem_id_x();
  unsigned block = __builtin_amdgcn_workgroup_id_x();
  unsigned i = block * BLOCK + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __builtin_amdgcn_s_barrier();
  for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (tid < stride)
      partial[tid] += partial[tid + stride];
    __builtin_amdgcn_s_barrier();
  }
  if (tid == 0)
    out[block] = partial[0];
}
