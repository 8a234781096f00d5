// gfx1250's eight-element scaled conversions through clang's AMDGPU
// builtins, for gcn-emu/tests/it/gfx1250_cvt.rs. Build for gfx1250 only
// (wave32) and launch one workgroup (the workgroup id of gfx1250 comes
// from cluster registers the emulator does not model); thread i converts
// element group i.
#define __global__ __attribute__((global))
typedef unsigned u32;
typedef u32 u32x2 __attribute__((ext_vector_type(2)));
typedef float f32x8 __attribute__((ext_vector_type(8)));
typedef __bf16 bf16x8 __attribute__((ext_vector_type(8)));
typedef _Float16 f16x8 __attribute__((ext_vector_type(8)));
#define TID __builtin_amdgcn_workitem_id_x()

// v_cvt_scale_pk8_bf16_fp8 (scale_sel 0): the eight OCP E4M3 bytes of
// src[i] times 2^(scale[i] byte 0 - 127), to bf16.
extern "C" __global__ void bf16_from_fp8(const u32x2 *src, const u32 *scale, bf16x8 *out, u32 n) {
  u32 i = TID;
  if (i < n) out[i] = __builtin_amdgcn_cvt_scale_pk8_bf16_fp8(src[i], scale[i], 0);
}

// v_cvt_scale_pk8_f32_bf8: E5M2 bytes to f32.
extern "C" __global__ void f32_from_bf8(const u32x2 *src, const u32 *scale, f32x8 *out, u32 n) {
  u32 i = TID;
  if (i < n) out[i] = __builtin_amdgcn_cvt_scale_pk8_f32_bf8(src[i], scale[i], 0);
}

// v_cvt_scale_pk8_f16_fp4: the eight E2M1 nibbles of src[i] to f16.
extern "C" __global__ void f16_from_fp4(const u32 *src, const u32 *scale, f16x8 *out, u32 n) {
  u32 i = TID;
  if (i < n) out[i] = __builtin_amdgcn_cvt_scale_pk8_f16_fp4(src[i], scale[i], 0);
}

// v_cvt_scale_pk8_bf16_fp8 with scale_sel 1 (not modelled: refused).
extern "C" __global__ void bf16_from_fp8_sel1(const u32x2 *src, const u32 *scale, bf16x8 *out) {
  u32 i = TID;
  out[i] = __builtin_amdgcn_cvt_scale_pk8_bf16_fp8(src[i], scale[i], 1);
}

// v_cvt_scalef32_pk8_fp8_f32: x[i] / 2^E(scale[i]) to OCP E4M3 bytes.
extern "C" __global__ void fp8_from_f32(const f32x8 *x, const float *scale, u32x2 *out, u32 n) {
  u32 i = TID;
  if (i < n) out[i] = __builtin_amdgcn_cvt_scalef32_pk8_fp8_f32(x[i], scale[i]);
}

// v_cvt_scalef32_pk8_fp4_f32: x[i] / 2^E(scale[i]) to E2M1 nibbles.
extern "C" __global__ void fp4_from_f32(const f32x8 *x, const float *scale, u32 *out, u32 n) {
  u32 i = TID;
  if (i < n) out[i] = __builtin_amdgcn_cvt_scalef32_pk8_fp4_f32(x[i], scale[i]);
}

// v_cvt_scalef32_pk8_fp4_f32 with the inline scale 1.0 (aiter's form).
extern "C" __global__ void fp4_from_f32_one(const f32x8 *x, u32 *out, u32 n) {
  u32 i = TID;
  if (i < n) out[i] = __builtin_amdgcn_cvt_scalef32_pk8_fp4_f32(x[i], 1.0f);
}
