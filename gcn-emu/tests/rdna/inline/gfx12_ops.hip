// gfx12 (RDNA4) scalar float and 64-bit operations, the `_num_` float
// min/max and v_mad_co_u64_u32, each applied by inline asm to the rows of
// `in` (pairs a, b and an accumulator c); tests/rdna_decode.rs computes the
// ISA's pseudo-code for each and compares. Launch one block of 32 threads.
#define __global__ __attribute__((global))
#define U(x) __builtin_amdgcn_readfirstlane(x)
#define OP2(NAME, INSN)                                                        \
  extern "C" __global__ void NAME(const unsigned *__restrict__ in,             \
                                  unsigned *__restrict__ out, int n) {          \
    for (int k = 0; k < n; k++) {                                              \
      unsigned a = U(in[3 * k]), b = U(in[3 * k + 1]), r;                            \
      asm volatile(INSN " %0, %1, %2" : "=s"(r) : "s"(a), "s"(b));             \
      if (__builtin_amdgcn_workitem_id_x() == 0) out[k] = r;                   \
    }                                                                          \
  }
#define OP1(NAME, INSN)                                                        \
  extern "C" __global__ void NAME(const unsigned *__restrict__ in,             \
                                  unsigned *__restrict__ out, int n) {          \
    for (int k = 0; k < n; k++) {                                              \
      unsigned a = U(in[3 * k]), r;                                               \
      asm volatile(INSN " %0, %1" : "=s"(r) : "s"(a));                         \
      if (__builtin_amdgcn_workitem_id_x() == 0) out[k] = r;                   \
    }                                                                          \
  }
OP2(s_add_f32, "s_add_f32")
OP2(s_sub_f32, "s_sub_f32")
OP2(s_mul_f32, "s_mul_f32")
OP2(s_max_num_f32, "s_max_num_f32")
OP2(s_min_num_f32, "s_min_num_f32")
OP1(s_cvt_f32_i32, "s_cvt_f32_i32")
OP1(s_cvt_f32_u32, "s_cvt_f32_u32")
OP1(s_cvt_i32_f32, "s_cvt_i32_f32")
OP1(s_cvt_u32_f32, "s_cvt_u32_f32")
OP1(s_cvt_f32_f16, "s_cvt_f32_f16")
OP1(s_cvt_hi_f32_f16, "s_cvt_hi_f32_f16")
OP1(s_ceil_f32, "s_ceil_f32")
OP1(s_floor_f32, "s_floor_f32")
OP1(s_trunc_f32, "s_trunc_f32")
OP1(s_rndne_f32, "s_rndne_f32")

// c = fma(a, b, c) in an SGPR.
extern "C" __global__ void s_fmac_f32(const unsigned *__restrict__ in,
                                      unsigned *__restrict__ out, int n) {
  for (int k = 0; k < n; k++) {
    unsigned a = U(in[3 * k]), b = U(in[3 * k + 1]), c = U(in[3 * k + 2]);
    asm volatile("s_fmac_f32 %0, %1, %2" : "+s"(c) : "s"(a), "s"(b));
    if (__builtin_amdgcn_workitem_id_x() == 0) out[k] = c;
  }
}

// SCC of s_cmp_{lt,eq,u,nge}_f32 as bits 0-3.
extern "C" __global__ void s_cmp_f32(const unsigned *__restrict__ in,
                                     unsigned *__restrict__ out, int n) {
  for (int k = 0; k < n; k++) {
    unsigned a = U(in[3 * k]), b = U(in[3 * k + 1]), r;
    asm volatile("s_cmp_lt_f32 %1, %2\n s_cselect_b32 %0, 1, 0\n"
                 "s_cmp_eq_f32 %1, %2\n s_cselect_b32 s100, 2, 0\n s_or_b32 %0, %0, s100\n"
                 "s_cmp_u_f32 %1, %2\n s_cselect_b32 s100, 4, 0\n s_or_b32 %0, %0, s100\n"
                 "s_cmp_nge_f32 %1, %2\n s_cselect_b32 s100, 8, 0\n s_or_b32 %0, %0, s100"
                 : "=&s"(r) : "s"(a), "s"(b) : "s100", "scc");
    if (__builtin_amdgcn_workitem_id_x() == 0) out[k] = r;
  }
}

// (a | b << 32) + (b | a << 32), 64-bit, SCC untouched.
extern "C" __global__ void s_add_nc_u64(const unsigned *__restrict__ in,
                                        unsigned long long *__restrict__ out, int n) {
  for (int k = 0; k < n; k++) {
    unsigned a = U(in[3 * k]), b = U(in[3 * k + 1]);
    unsigned long long x = a | (unsigned long long)b << 32;
    unsigned long long y = b | (unsigned long long)a << 32, r;
    asm volatile("s_add_nc_u64 %0, %1, %2" : "=s"(r) : "s"(x), "s"(y));
    if (__builtin_amdgcn_workitem_id_x() == 0) out[k] = r;
  }
}

// Per lane: v_max_num_f32, v_min_num_f32, v_max3_num_f32, and
// v_mad_co_u64_u32 (a * b + (c | a << 32), 64 bits, and its carry).
extern "C" __global__ void valu_num(const unsigned *__restrict__ in,
                                    unsigned *__restrict__ out) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  unsigned a = in[3 * i], b = in[3 * i + 1], c = in[3 * i + 2];
  unsigned mx, mn, m3;
  asm volatile("v_max_num_f32 %0, %1, %2" : "=v"(mx) : "v"(a), "v"(b));
  asm volatile("v_min_num_f32 %0, %1, %2" : "=v"(mn) : "v"(a), "v"(b));
  asm volatile("v_max3_num_f32 %0, %1, %2, %3" : "=v"(m3) : "v"(a), "v"(b), "v"(c));
  unsigned long long acc = c | (unsigned long long)a << 32, d;
  unsigned carry;
  asm volatile("v_mad_co_u64_u32 %0, %1, %2, %3, %4" : "=v"(d), "=s"(carry) : "v"(a), "v"(b), "v"(acc));
  out[6 * i] = mx;
  out[6 * i + 1] = mn;
  out[6 * i + 2] = m3;
  out[6 * i + 3] = (unsigned)d;
  out[6 * i + 4] = (unsigned)(d >> 32);
  out[6 * i + 5] = carry & (1u << i) ? 1 : 0;
}
