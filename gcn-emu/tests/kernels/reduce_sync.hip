// reduce_sync: tests/corpus/src/reduce.hip with HIP's __syncthreads() (a
// workgroup release fence, s_barrier, an acquire fence) instead of a bare
// s_barrier, so that clang-22 drains the LDS writes (s_waitcnt lgkmcnt(0))
// before each barrier as AMD's memory model requires; the corpus' reduce
// lacks those waits, which the sanitizer reports.
// out[blockIdx.x] = sum(in[blockIdx.x * 256 .. blockIdx.x * 256 + 255]).
// HIP device code without HIP headers; launch with 256 threads per block.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

#define BLOCK 256u
#define __syncthreads()                                                        \
  do {                                                                         \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");                     \
    __builtin_amdgcn_s_barrier();                                              \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");                     \
  } while (0)

extern "C" __global__ void reduce(const float *__restrict__ in,
                                  float *__restrict__ out, unsigned n) {
  __shared__ float partial[BLOCK];
  unsigned tid = __builtin_amdgcn_workitem_id_x();
  unsigned block = __builtin_amdgcn_workgroup_id_x();
  unsigned i = block * BLOCK + tid;
  partial[tid] = i < n ? in[i] : 0.0f;
  __syncthreads();
  for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
    if (tid < stride)
      partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0)
    out[block] = partial[0];
}
