// uninit: the sanitizer's uninitialized-value propagation (issue 33) on
// ordinary clang-22 output.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __syncthreads()                                                        \
  do {                                                                         \
    __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");                     \
    __builtin_amdgcn_s_barrier();                                              \
    __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");                     \
  } while (0)
#define TID __builtin_amdgcn_workitem_id_x()
#define ID (__builtin_amdgcn_workgroup_id_x() * 256u + TID)
typedef unsigned long long u64;

struct Rec {
  float a, b, c, d, e, f; // 24 bytes
};

// 64-bit index math: recs[(u64)i * mul]. clang-22 computes the high half of
// the byte offset with `v_mad_u64_u32 v[6:7], s[0:1], s3, v0, v[6:7]`
// whose high addend v7 nothing wrote: only the low result is used.
extern "C" __global__ void scaled(const Rec *recs, float *out, unsigned n, u64 mul) {
  unsigned i = ID;
  if (i < n)
    out[i] = recs[(u64)i * mul].c;
}

// Each work-item reads its right neighbour's element: the last one reads
// t[256], which nothing writes, and stores it to `out`.
extern "C" __global__ void shift_bug(const float *x, float *out) {
  __shared__ float t[257];
  unsigned tid = TID;
  t[tid] = x[ID];
  __syncthreads();
  out[ID] = t[tid + 1];
}

// The same read, the last work-item's value replaced by 0 with a select:
// the uninitialized value reaches no use.
extern "C" __global__ void shift_ok(const float *x, float *out) {
  __shared__ float t[257];
  unsigned tid = TID;
  t[tid] = x[ID];
  __syncthreads();
  float v = t[tid + 1];
  out[ID] = tid < 255 ? v : 0.0f;
}

// A loop whose trip count comes from the kernel arguments.
extern "C" __global__ void sum_n(const float *x, float *out, unsigned n) {
  float s = 0.0f;
  for (unsigned k = 0; k < n; ++k)
    s += x[k * 256 + ID];
  out[ID] = s;
}

// A private array (scratch) whose last element nothing writes: the
// work-items whose index hits it store it to `out`.
extern "C" __global__ void private_bug(const unsigned *in, unsigned *out) {
  unsigned t = ID;
  unsigned a[64];
  for (unsigned i = 0; i < 63; i++)
    a[i] = in[(t + i) % 512] * (i + 1);
  out[t] = a[in[t] % 64];
}
