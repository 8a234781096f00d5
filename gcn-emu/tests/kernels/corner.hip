// corner: emulator corner cases of ordinary compiler output (issue 33).
// Each kernel computes one class per element i < n; the tests compare with
// Rust references (IEEE-correctly-rounded f64/f32 arithmetic, exact
// integers, f16 by rounding the exact f64 quotient).
#define __global__ __attribute__((global))
#define ID (__builtin_amdgcn_workgroup_id_x() * 64u + __builtin_amdgcn_workitem_id_x())

// f64 VOP3 source modifiers on src1/src2: x - y, x + |y|, fma(x, -y, -z), fma(x, y, -|z|).
extern "C" __global__ void f64_mods(const double *__restrict__ x, const double *__restrict__ y,
                                    const double *__restrict__ z, double *__restrict__ out,
                                    unsigned n) {
  unsigned i = ID;
  if (i >= n)
    return;
  double a = x[i], b = y[i], c = z[i];
  out[i * 4 + 0] = a - b;
  out[i * 4 + 1] = a + __builtin_fabs(b);
  out[i * 4 + 2] = __builtin_fma(a, -b, -c);
  out[i * 4 + 3] = __builtin_fma(a, b, -__builtin_fabs(c));
}

// f64 division and square root (v_div_scale_f64, v_div_fmas_f64,
// v_div_fixup_f64, v_fmac_f64, v_rsq_f64 ...).
extern "C" __global__ void f64_div(const double *__restrict__ x, const double *__restrict__ y,
                                   double *__restrict__ out, unsigned n) {
  unsigned i = ID;
  if (i >= n)
    return;
  double a = x[i], b = y[i];
  out[i * 2 + 0] = a / b;
  out[i * 2 + 1] = __builtin_sqrt(__builtin_fabs(a));
}

// f32 division (the v_div_scale/v_div_fmas/v_div_fixup sequence).
extern "C" __global__ void f32_div(const float *__restrict__ x, const float *__restrict__ y,
                                   float *__restrict__ out, unsigned n) {
  unsigned i = ID;
  if (i >= n)
    return;
  out[i] = x[i] / y[i];
}

// f16 division (v_fma_mix_f32 / v_div_fixup_f16 on gfx9).
extern "C" __global__ void f16_div(const _Float16 *__restrict__ x, const _Float16 *__restrict__ y,
                                   _Float16 *__restrict__ out, unsigned n) {
  unsigned i = ID;
  if (i >= n)
    return;
  out[i] = x[i] / y[i];
}

// Saturating integer arithmetic (clamp on integer add/sub) and 64-bit
// clz/ctz/ffs.
extern "C" __global__ void int_sat(const unsigned *__restrict__ a, const unsigned *__restrict__ b,
                                   const unsigned long long *__restrict__ w,
                                   unsigned *__restrict__ out, unsigned n) {
  unsigned i = ID;
  if (i >= n)
    return;
  unsigned av = a[i], bv = b[i];
  int ai = (int)av, bi = (int)bv;
  unsigned long long wv = w[i];
  out[i * 9 + 0] = __builtin_elementwise_add_sat(av, bv);
  out[i * 9 + 1] = __builtin_elementwise_sub_sat(av, bv);
  out[i * 9 + 2] = (unsigned)__builtin_elementwise_add_sat(ai, bi);
  out[i * 9 + 3] = (unsigned)__builtin_elementwise_sub_sat(ai, bi);
  out[i * 9 + 4] = (unsigned)__builtin_elementwise_add_sat((short)ai, (short)bi) & 0xffffu;
  out[i * 9 + 5] = (unsigned)__builtin_elementwise_add_sat((unsigned short)av, (unsigned short)bv);
  out[i * 9 + 6] = wv ? (unsigned)__builtin_clzll(wv) : 64u;
  out[i * 9 + 7] = wv ? (unsigned)__builtin_ctzll(wv) : 64u;
  out[i * 9 + 8] = (unsigned)__builtin_ffsll((long long)wv);
}
