// wmma_w64: one 16x16x16 f16 -> f32 WMMA per wave64 (built with
// -mwavefrontsize64; launch one block of 64 threads): D = A * B + C, A 16x16
// row-major, B 16x16 row-major, C and D 16x16 f32 row-major. The layouts
// this source assumes (AMD's Matrix Instruction Calculator's) differ between
// gfx11 (A and B replicated in all four 16-lane groups, 16 halves per lane;
// D row 4*i + lane/16) and gfx12 (4 halves per lane: K 4*(lane/16) + k;
// D row 8*((lane/16)%2) + 4*(lane/32) + i).
#define __global__ __attribute__((global))
typedef _Float16 half16 __attribute__((ext_vector_type(16)));
typedef _Float16 half4 __attribute__((ext_vector_type(4)));
typedef float float4 __attribute__((ext_vector_type(4)));
extern "C" __global__ void wmma_w64(const _Float16 *__restrict__ a, const _Float16 *__restrict__ b,
                                    const float *__restrict__ c, float *__restrict__ d) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  unsigned r = lane % 16u, q = lane / 16u;
#if defined(__gfx1100__) || defined(__gfx1101__) || defined(__gfx1102__)
  half16 av, bv;
  for (int k = 0; k < 16; ++k) {
    av[k] = a[r * 16 + k];
    bv[k] = b[k * 16 + r];
  }
  float4 cv;
  for (int i = 0; i < 4; ++i)
    cv[i] = c[(4 * i + q) * 16 + r];
  float4 dv = __builtin_amdgcn_wmma_f32_16x16x16_f16_w64(av, bv, cv);
  for (int i = 0; i < 4; ++i)
    d[(4 * i + q) * 16 + r] = dv[i];
#else
  half4 av, bv;
  for (int k = 0; k < 4; ++k) {
    av[k] = a[r * 16 + 4 * q + k];
    bv[k] = b[(4 * q + k) * 16 + r];
  }
  unsigned row = 8 * (q % 2) + 4 * (q / 2);
  float4 cv;
  for (int i = 0; i < 4; ++i)
    cv[i] = c[(row + i) * 16 + r];
  float4 dv = __builtin_amdgcn_wmma_f32_16x16x16_f16_w64_gfx12(av, bv, cv);
  for (int i = 0; i < 4; ++i)
    d[(row + i) * 16 + r] = dv[i];
#endif
}
