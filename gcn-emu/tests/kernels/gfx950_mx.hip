// gfx950's microscaling (MX) instructions through clang's AMDGPU builtins,
// for gcn-emu/tests/gfx950.rs. Build for gfx950 only; launch with 64 threads
// (one wave) unless a kernel says otherwise.
#define __global__ __attribute__((global))
typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v4i __attribute__((ext_vector_type(4)));
typedef int v2i __attribute__((ext_vector_type(2)));
typedef float v4f __attribute__((ext_vector_type(4)));
typedef float v16f __attribute__((ext_vector_type(16)));
typedef __bf16 v2bf __attribute__((ext_vector_type(2)));
#define TID (__builtin_amdgcn_workitem_id_x() + 64 * __builtin_amdgcn_workgroup_id_x())

// v_cvt_scalef32_pk_fp4_f32: x[2 i], x[2 i + 1] / scale[i] to fp4, written
// into byte 0, 1 and 3 of out[3 i .. 3 i + 3] (whose other bytes keep their
// value: the caller fills them).
extern "C" __global__ void fp4_encode(const float *x, const float *scale, unsigned *out,
                                      unsigned n) {
  unsigned i = TID;
  if (i >= n) return;
  float a = x[2 * i], b = x[2 * i + 1], s = scale[i];
  unsigned *o = out + 3 * i;
  o[0] = __builtin_amdgcn_cvt_scalef32_pk_fp4_f32(o[0], a, b, s, 0);
  o[1] = __builtin_amdgcn_cvt_scalef32_pk_fp4_f32(o[1], a, b, s, 1);
  o[2] = __builtin_amdgcn_cvt_scalef32_pk_fp4_f32(o[2], a, b, s, 3);
}

// v_cvt_scalef32_pk_bf16_fp8: the low and the high pair of fp8 bytes of
// in[i], times scale[i], to bf16: out[2 i] (low pair), out[2 i + 1] (high).
extern "C" __global__ void bf16_from_fp8(const unsigned *in, const float *scale, v2bf *out,
                                         unsigned n) {
  unsigned i = TID;
  if (i >= n) return;
  out[2 * i] = __builtin_amdgcn_cvt_scalef32_pk_bf16_fp8(in[i], scale[i], false);
  out[2 * i + 1] = __builtin_amdgcn_cvt_scalef32_pk_bf16_fp8(in[i], scale[i], true);
}

// v_cvt_pk_u8_f32: x[4 i + k] into byte k of out[i], over old[i].
extern "C" __global__ void pk_u8(const float *x, const unsigned *old, unsigned *out,
                                 unsigned n) {
  unsigned i = TID;
  if (i >= n) return;
  unsigned w = old[i];
  w = __builtin_amdgcn_cvt_pk_u8_f32(x[4 * i], 0, w);
  w = __builtin_amdgcn_cvt_pk_u8_f32(x[4 * i + 1], 1, w);
  w = __builtin_amdgcn_cvt_pk_u8_f32(x[4 * i + 2], 2, w);
  w = __builtin_amdgcn_cvt_pk_u8_f32(x[4 * i + 3], 3, w);
  out[i] = w;
}

// v_mfma_scale_f32_16x16x128_f8f6f4 with (cbsz, blgp, opsel_a, opsel_b):
// lane l reads its A and B registers (8 dwords each, of which fp6 uses 6 and
// fp4 4), C (4), its scale dwords sa and sb, and writes D (4).
#define MFMA16(NAME, CBSZ, BLGP, OPA, OPB)                                                  \
  extern "C" __global__ void NAME(const v8i *a, const v8i *b, const v4f *c, const int *sa, \
                                  const int *sb, v4f *d) {                                 \
    unsigned l = __builtin_amdgcn_workitem_id_x();                                         \
    d[l] = __builtin_amdgcn_mfma_scale_f32_16x16x128_f8f6f4(a[l], b[l], c[l], CBSZ, BLGP,  \
                                                            OPA, sa[l], OPB, sb[l]);       \
  }
MFMA16(mfma16_fp8_fp8, 0, 0, 0, 0)
MFMA16(mfma16_bf8_fp6, 1, 2, 1, 2)
MFMA16(mfma16_fp6_bf6, 2, 3, 3, 0)
MFMA16(mfma16_bf6_fp4, 3, 4, 2, 1)
MFMA16(mfma16_fp4_fp4, 4, 4, 0, 3)
MFMA16(mfma16_fp4_bf8, 4, 1, 1, 1)

#define MFMA32(NAME, CBSZ, BLGP, OPA, OPB)                                                  \
  extern "C" __global__ void NAME(const v8i *a, const v8i *b, const v16f *c, const int *sa, \
                                  const int *sb, v16f *d) {                                \
    unsigned l = __builtin_amdgcn_workitem_id_x();                                         \
    d[l] = __builtin_amdgcn_mfma_scale_f32_32x32x64_f8f6f4(a[l], b[l], c[l], CBSZ, BLGP,   \
                                                           OPA, sa[l], OPB, sb[l]);        \
  }
MFMA32(mfma32_fp6_fp6, 2, 2, 0, 2)
MFMA32(mfma32_fp4_fp8, 4, 0, 3, 1)

// v_smfmac_f32_16x16x128_fp8_fp8: sparse A (4 dwords: 16 non-zeros), dense
// B (8 dwords), the sparsity index dword, D = C + A·B in place.
extern "C" __global__ void smfmac16_fp8(const v4i *a, const v8i *b, const int *idx, v4f *d) {
  unsigned l = __builtin_amdgcn_workitem_id_x();
  d[l] = __builtin_amdgcn_smfmac_f32_16x16x128_fp8_fp8(a[l], b[l], d[l], idx[l], 0, 0);
}

// ds_read_b64_tr_b4: lane l stores in[l] (8 bytes) at LDS byte 8 l, then
// every lane reads the transposed 64 bits at its own address.
extern "C" __global__ void tr4(const v2i *in, v2i *out) {
  __attribute__((shared)) v2i lds[64];
  unsigned l = __builtin_amdgcn_workitem_id_x();
  lds[l] = in[l];
  __builtin_amdgcn_s_waitcnt(0xc07f);
  __builtin_amdgcn_s_barrier();
  out[l] = __builtin_amdgcn_ds_read_tr4_b64_v2i32(
      (__attribute__((address_space(3))) v2i *)((__attribute__((address_space(3))) char *)lds +
                                                8 * l));
}
