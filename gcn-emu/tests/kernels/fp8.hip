// fp8/bf8 conversions and MFMA through clang's AMDGPU builtins, for
// gcn-emu/tests/fp8.rs: gfx942 runs them in the FNUZ formats (e4m3fnuz,
// e5m2fnuz), gfx950 in the OCP ones (e4m3fn, e5m2). Launch with 64 threads.
#define __global__ __attribute__((global))
typedef float float4_ __attribute__((ext_vector_type(4)));
typedef float float2_ __attribute__((ext_vector_type(2)));

// Each byte of in[i], decoded: out[16 i + k] as fp8, out[16 i + 4 + k] as
// bf8 (scalar conversions, byte k); out[16 i + 8 ..] the same through the
// packed conversions (low word, then high word).
extern "C" __global__ void fp8_decode(const unsigned *in, float *out) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  unsigned w = in[i];
  float *o = out + 16 * i;
  o[0] = __builtin_amdgcn_cvt_f32_fp8(w, 0);
  o[1] = __builtin_amdgcn_cvt_f32_fp8(w, 1);
  o[2] = __builtin_amdgcn_cvt_f32_fp8(w, 2);
  o[3] = __builtin_amdgcn_cvt_f32_fp8(w, 3);
  o[4] = __builtin_amdgcn_cvt_f32_bf8(w, 0);
  o[5] = __builtin_amdgcn_cvt_f32_bf8(w, 1);
  o[6] = __builtin_amdgcn_cvt_f32_bf8(w, 2);
  o[7] = __builtin_amdgcn_cvt_f32_bf8(w, 3);
  float2_ lo = __builtin_amdgcn_cvt_pk_f32_fp8(w, false);
  float2_ hi = __builtin_amdgcn_cvt_pk_f32_fp8(w, true);
  o[8] = lo.x; o[9] = lo.y; o[10] = hi.x; o[11] = hi.y;
  lo = __builtin_amdgcn_cvt_pk_f32_bf8(w, false);
  hi = __builtin_amdgcn_cvt_pk_f32_bf8(w, true);
  o[12] = lo.x; o[13] = lo.y; o[14] = hi.x; o[15] = hi.y;
}

// in[4 i .. 4 i + 4] to fp8 (bf8_encode: bf8), round to nearest even: the
// first pair to the low word of out[i], the second to its high word. (Two
// kernels: the compiler would compute both conversions of one kernel with a
// flag and select.)
extern "C" __global__ void fp8_encode(const float *in, unsigned *out, unsigned n) {
  unsigned i = __builtin_amdgcn_workitem_id_x() + 64 * __builtin_amdgcn_workgroup_id_x();
  if (i >= n) return;
  const float *x = in + 4 * i;
  int w = __builtin_amdgcn_cvt_pk_fp8_f32(x[0], x[1], 0, false);
  out[i] = __builtin_amdgcn_cvt_pk_fp8_f32(x[2], x[3], w, true);
}

extern "C" __global__ void bf8_encode(const float *in, unsigned *out, unsigned n) {
  unsigned i = __builtin_amdgcn_workitem_id_x() + 64 * __builtin_amdgcn_workgroup_id_x();
  if (i >= n) return;
  const float *x = in + 4 * i;
  int w = __builtin_amdgcn_cvt_pk_bf8_f32(x[0], x[1], 0, false);
  out[i] = __builtin_amdgcn_cvt_pk_bf8_f32(x[2], x[3], w, true);
}

// One wave: D = A (16x32) * B (32x16) for each pair of fp8/bf8 types. Lane l
// holds A[l % 16][8 (l / 16) + e] and B[8 (l / 16) + e][l % 16] in byte e;
// a[l] is the fp8 A, a[64 + l] the bf8 A, and the same for b.
extern "C" __global__ void fp8_mfma(const long *a, const long *b, float *d) {
  unsigned l = __builtin_amdgcn_workitem_id_x();
  float4_ acc = {0, 0, 0, 0};
  float4_ r[4];
  r[0] = __builtin_amdgcn_mfma_f32_16x16x32_fp8_fp8(a[l], b[l], acc, 0, 0, 0);
  r[1] = __builtin_amdgcn_mfma_f32_16x16x32_fp8_bf8(a[l], b[64 + l], acc, 0, 0, 0);
  r[2] = __builtin_amdgcn_mfma_f32_16x16x32_bf8_fp8(a[64 + l], b[l], acc, 0, 0, 0);
  r[3] = __builtin_amdgcn_mfma_f32_16x16x32_bf8_bf8(a[64 + l], b[64 + l], acc, 0, 0, 0);
  for (int t = 0; t < 4; t++)
    for (int k = 0; k < 4; k++)
      d[256 * t + 64 * k + l] = r[t][k];
}
