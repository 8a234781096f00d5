// lds_stride: LDS accesses at a stride chosen by the launch, for the
// profiler's bank-conflict counters (gcn-emu/tests/profile.rs).
// Lane i of the (single) wave writes the b32, b64 or b128 element at index
// i * stride, then reads its neighbour's, (i ^ 1) * stride (the same
// addresses in every phase of lanes), into out[i].
// A kernel per width; HIP device code without HIP headers.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

typedef unsigned u32x2 __attribute__((ext_vector_type(2)));
typedef unsigned u32x4 __attribute__((ext_vector_type(4)));

#define KERNEL(NAME, T, N)                                                     \
  extern "C" __global__ void NAME(T *__restrict__ out, unsigned stride) {     \
    __shared__ T lds[N];                                                       \
    unsigned i = __builtin_amdgcn_workitem_id_x();                             \
    T v = (T)(i + 1);                                                          \
    lds[i * stride] = v;                                                       \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");                     \
    __builtin_amdgcn_s_barrier();                                              \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");                     \
    out[i] = lds[(i ^ 1) * stride];                                                  \
  }

// 17 KiB each: element 63 × stride fits for b32 strides ≤ 69, b64 ≤ 34,
// b128 ≤ 17.
KERNEL(stride_b32, unsigned, 4352)
KERNEL(stride_b64, u32x2, 2176)
KERNEL(stride_b128, u32x4, 1088)

// nops: n groups of 8 `s_nop 7` (8 wait states each) before a load;
// shadowed: the same between the load and its use, where the load's
// latency hides them. The timing model's prediction grows with n for
// `nops`, and less (or not at all) for `shadowed`.
#define NOPS8                                                                  \
  __asm__ volatile("s_nop 7\n s_nop 7\n s_nop 7\n s_nop 7\n s_nop 7\n"        \
                   " s_nop 7\n s_nop 7\n s_nop 7")

extern "C" __global__ void nops(float *__restrict__ out,
                                const float *__restrict__ in, unsigned n) {
  unsigned i = __builtin_amdgcn_workitem_id_x() +
               __builtin_amdgcn_workgroup_id_x() * 256;
  for (unsigned k = 0; k < n; ++k)
    NOPS8;
  float v = in[i];
  out[i] = v * 2.0f;
}

extern "C" __global__ void shadowed(float *__restrict__ out,
                                    const float *__restrict__ in, unsigned n) {
  unsigned i = __builtin_amdgcn_workitem_id_x() +
               __builtin_amdgcn_workgroup_id_x() * 256;
  float v = in[i];
  for (unsigned k = 0; k < n; ++k)
    NOPS8;
  out[i] = v * 2.0f;
}

// gather: lane i of each wave reads in[(i * stride) % span] (a dword):
// stride 1 is unit, larger strides spread the wave over more lines, and an
// odd stride with a power-of-two span permutes (scatters) the lanes.
extern "C" __global__ void gather(float *__restrict__ out,
                                  const float *__restrict__ in,
                                  unsigned stride, unsigned span) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  out[i] = in[(i * stride) % span];
}
