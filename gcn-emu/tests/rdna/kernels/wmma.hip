// wmma: one 16x16x16 f16 -> f32 WMMA per wave32 (launch one block of 32
// threads): D = A * B + C, A 16x16 row-major, B 16x16 row-major, C and D
// 16x16 f32 row-major. The lane layouts differ between gfx11 (A and B
// replicated in both halves of the wave, 16 halves per lane; D in every
// other row) and gfx12 (8 halves per lane; D's rows split by half-wave).
#define __global__ __attribute__((global))
typedef _Float16 half16 __attribute__((ext_vector_type(16)));
typedef _Float16 half8 __attribute__((ext_vector_type(8)));
typedef float float8 __attribute__((ext_vector_type(8)));
extern "C" __global__ void wmma(const _Float16 *__restrict__ a, const _Float16 *__restrict__ b,
                                const float *__restrict__ c, float *__restrict__ d) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
  unsigned r = lane % 16u;
  half16 av, bv;
  for (int k = 0; k < 16; ++k) {
    av[k] = a[r * 16 + k];   // lane holds row r of A
    bv[k] = b[k * 16 + r];   // lane holds column r of B
  }
  float8 cv;
  for (int i = 0; i < 8; ++i)
    cv[i] = c[(2 * i + lane / 16u) * 16 + r];
  float8 dv = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32(av, bv, cv);
  for (int i = 0; i < 8; ++i)
    d[(2 * i + lane / 16u) * 16 + r] = dv[i];
#else
  unsigned r = lane % 16u, h = lane / 16u;
  half8 av, bv;
  for (int k = 0; k < 8; ++k) {
    av[k] = a[r * 16 + h * 8 + k];
    bv[k] = b[(h * 8 + k) * 16 + r];
  }
  float8 cv;
  for (int i = 0; i < 8; ++i)
    cv[i] = c[(h * 8 + i) * 16 + r];
  float8 dv = __builtin_amdgcn_wmma_f32_16x16x16_f16_w32_gfx12(av, bv, cv);
  for (int i = 0; i < 8; ++i)
    d[(h * 8 + i) * 16 + r] = dv[i];
#endif
}
