// ds_load_tr: gfx1250's transposing LDS loads from clang-22's builtins.
// One wave32 block. `in` fills 1 KiB of LDS; each lane then reads its
// 16 bytes with `ds_load_tr16_b128` at a permuted row (7t + 3) % 32 and
// its 8 bytes with `ds_load_tr8_b64` at 512 + 8((11t + 5) % 32), and
// writes the 4 + 2 result dwords to out[6t..6t + 6]. `tr4` does the same
// with `ds_load_tr4_b64` and `tr6` with `ds_load_tr6_b96`, which the
// emulator refuses by name. `global_tr` reads `in` itself with
// `global_load_tr16_b128` at row (5t + 1) % 32 and `global_load_tr8_b64` at
// 512 + 8((13t + 7) % 32); `global_tr4` uses `global_load_tr4_b64`.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define LDS __attribute__((address_space(3)))
typedef int v2i __attribute__((ext_vector_type(2)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef short v8s __attribute__((ext_vector_type(8)));

static __attribute__((device)) void fill(int *lds, const int *in, unsigned t) {
  for (int i = 0; i < 8; i++)
    lds[i * 32 + t] = in[i * 32 + t];
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

extern "C" __global__ void ds_load_tr(const int *in, int *out) {
  __shared__ int lds[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  fill(lds, in, t);
  char LDS *base = (char LDS *)lds;
  v8s a = __builtin_amdgcn_ds_load_tr16_b128_v8i16((v8s LDS *)(base + 16 * ((7 * t + 3) % 32)));
  v2i b = __builtin_amdgcn_ds_load_tr8_b64_v2i32((v2i LDS *)(base + 512 + 8 * ((11 * t + 5) % 32)));
  v4i a4 = __builtin_bit_cast(v4i, a);
  int *o = out + 6 * t;
  o[0] = a4[0]; o[1] = a4[1]; o[2] = a4[2]; o[3] = a4[3];
  o[4] = b[0]; o[5] = b[1];
}

extern "C" __global__ void tr4(const int *in, int *out) {
  __shared__ int lds[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  fill(lds, in, t);
  v2i c = __builtin_amdgcn_ds_load_tr4_b64_v2i32((v2i LDS *)((char LDS *)lds + 8 * t));
  out[2 * t] = c[0];
  out[2 * t + 1] = c[1];
}

extern "C" __global__ void tr6(const int *in, int *out) {
  __shared__ int lds[256];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  fill(lds, in, t);
  typedef int v3i __attribute__((ext_vector_type(3)));
  v3i c = __builtin_amdgcn_ds_load_tr6_b96_v3i32((v3i LDS *)((char LDS *)lds + 12 * (t % 16)));
  out[3 * t] = c[0];
  out[3 * t + 1] = c[1];
  out[3 * t + 2] = c[2];
}

#define GLOBAL __attribute__((address_space(1)))

extern "C" __global__ void global_tr(const int *in, int *out) {
  unsigned t = __builtin_amdgcn_workitem_id_x();
  const char *base = (const char *)in;
  v8s a = __builtin_amdgcn_global_load_tr16_b128_v8i16((v8s GLOBAL *)(base + 16 * ((5 * t + 1) % 32)));
  v2i b = __builtin_amdgcn_global_load_tr8_b64_v2i32((v2i GLOBAL *)(base + 512 + 8 * ((13 * t + 7) % 32)));
  v4i a4 = __builtin_bit_cast(v4i, a);
  int *o = out + 6 * t;
  o[0] = a4[0]; o[1] = a4[1]; o[2] = a4[2]; o[3] = a4[3];
  o[4] = b[0]; o[5] = b[1];
}

extern "C" __global__ void global_tr4(const int *in, int *out) {
  unsigned t = __builtin_amdgcn_workitem_id_x();
  v2i c = __builtin_amdgcn_global_load_tr4_b64_v2i32((v2i GLOBAL *)((const char *)in + 8 * t));
  out[2 * t] = c[0];
  out[2 * t + 1] = c[1];
}
