// chase: latency microkernels for the timing model (gcn-emu/tests/profile.rs,
// "the machinery is consistent"): pointer chases in LDS and global memory,
// whose every load's address is the previous load's result, and chains of
// MFMAs. The chase steps are inline asm (a load, then a wait for it), so
// nothing the compiler schedules sits between a load and its wait.
// HIP device code without HIP headers.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

// One LDS chase step: p = lds[p] (p a byte offset), then wait for it.
#define LDS1 "ds_read_b32 %0, %0\n s_waitcnt lgkmcnt(0)\n"
#define LDS8 LDS1 LDS1 LDS1 LDS1 LDS1 LDS1 LDS1 LDS1

// lds_chase: the table (n dwords of byte offsets) copied into LDS; lane i
// starts at start[i] and takes `steps` (a multiple of 8) steps; out[i] is
// where it ends.
extern "C" __global__ void lds_chase(unsigned *__restrict__ out,
                                     const unsigned *__restrict__ table,
                                     const unsigned *__restrict__ start,
                                     unsigned n, unsigned steps) {
  __shared__ unsigned lds[8192];
  unsigned i = __builtin_amdgcn_workitem_id_x();
  for (unsigned k = i; k < n; k += 64)
    lds[k] = table[k];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  // The asm reads lds: the compiler keeps the copy.
  __asm__ volatile("" : : "s"(lds) : "memory");
  unsigned p = start[i];
  for (unsigned k = 0; k < steps; k += 8)
    __asm__ volatile(LDS8 : "+v"(p) : : "memory");
  out[i] = p;
}

// One global chase step: p = *(ring + p) (p a byte offset, the ring's
// address in SGPRs), then wait for it.
#define GLB1 "global_load_dword %0, %0, %1\n s_waitcnt vmcnt(0)\n"
#define GLB8 GLB1 GLB1 GLB1 GLB1 GLB1 GLB1 GLB1 GLB1

// global_chase: every lane follows the same chain from byte offset 0 of
// `ring` for `steps` (a multiple of 8) steps; out[i] is where it ends.
extern "C" __global__ void global_chase(unsigned *__restrict__ out,
                                        const unsigned *ring,
                                        unsigned steps) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  unsigned p = 0;
  for (unsigned k = 0; k < steps; k += 8)
    __asm__ volatile(GLB8 : "+v"(p) : "s"(ring) : "memory");
  out[i] = p;
}

// MFMA chains: 16 MFMAs, fully unrolled. `dependent`: each one's srcC is
// the previous one's result; `independent`: four accumulators in turn.
// `ab` holds 64 lanes' b, then (independent) 4 × 64 lanes' a, or
// (dependent) 64 lanes' a. Every wave of the block runs the chain; out gets
// each lane's sum of its results.
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float16 __attribute__((ext_vector_type(16)));

extern "C" __global__ void mfma_dependent(float *__restrict__ out,
                                          const half4 *__restrict__ ab) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  half4 b = ab[i % 64], a = ab[64 + i % 64];
  float16 acc = {};
#pragma unroll
  for (int k = 0; k < 16; ++k)
    acc = __builtin_amdgcn_mfma_f32_32x32x8f16(a, b, acc, 0, 0, 0);
  float s = 0;
#pragma unroll
  for (int r = 0; r < 16; ++r)
    s += acc[r];
  out[i] = s;
}

extern "C" __global__ void mfma_independent(float *__restrict__ out,
                                            const half4 *__restrict__ ab) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  half4 b = ab[i % 64], a[4];
#pragma unroll
  for (int c = 0; c < 4; ++c)
    a[c] = ab[64 * (c + 1) + i % 64];
  float16 acc[4] = {};
#pragma unroll
  for (int k = 0; k < 16; ++k)
    acc[k % 4] =
        __builtin_amdgcn_mfma_f32_32x32x8f16(a[k % 4], b, acc[k % 4], 0, 0, 0);
  float s = 0;
#pragma unroll
  for (int r = 0; r < 16; ++r)
    s += acc[0][r] + acc[1][r] + acc[2][r] + acc[3][r];
  out[i] = s;
}
