// CDNA's dot products through clang's AMDGPU builtins, for
// gcn-emu/tests/it/dot.rs: out[16 i + k] for input words a[i], b[i], c[i]
// (k even: clamp off, odd: clamp on). The bf16 dot (dot12-insts) is gfx950
// only (`__gfx950__`). Launch with 64 threads.
#define __global__ __attribute__((global))
typedef _Float16 half2_ __attribute__((ext_vector_type(2)));
typedef short short2_ __attribute__((ext_vector_type(2)));
typedef unsigned short ushort2_ __attribute__((ext_vector_type(2)));
typedef __bf16 bf2_ __attribute__((ext_vector_type(2)));

extern "C" __global__ void dots(const unsigned *a, const unsigned *b, const unsigned *c,
                                unsigned *o) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  unsigned x = a[i], y = b[i], z = c[i];
  float zf = __builtin_bit_cast(float, z);
  half2_ hx = __builtin_bit_cast(half2_, x), hy = __builtin_bit_cast(half2_, y);
  short2_ sx = __builtin_bit_cast(short2_, x), sy = __builtin_bit_cast(short2_, y);
  ushort2_ ux = __builtin_bit_cast(ushort2_, x), uy = __builtin_bit_cast(ushort2_, y);
  unsigned *p = o + 16 * i;
  p[0] = __builtin_bit_cast(unsigned, __builtin_amdgcn_fdot2(hx, hy, zf, false));
  p[1] = __builtin_bit_cast(unsigned, __builtin_amdgcn_fdot2(hx, hy, zf, true));
  p[2] = __builtin_amdgcn_sdot2(sx, sy, (int)z, false);
  p[3] = __builtin_amdgcn_sdot2(sx, sy, (int)z, true);
  p[4] = __builtin_amdgcn_udot2(ux, uy, z, false);
  p[5] = __builtin_amdgcn_udot2(ux, uy, z, true);
  p[6] = __builtin_amdgcn_sdot4((int)x, (int)y, (int)z, false);
  p[7] = __builtin_amdgcn_sdot4((int)x, (int)y, (int)z, true);
  p[8] = __builtin_amdgcn_udot4(x, y, z, false);
  p[9] = __builtin_amdgcn_udot4(x, y, z, true);
  p[10] = __builtin_amdgcn_sdot8((int)x, (int)y, (int)z, false);
  p[11] = __builtin_amdgcn_sdot8((int)x, (int)y, (int)z, true);
  p[12] = __builtin_amdgcn_udot8(x, y, z, false);
  p[13] = __builtin_amdgcn_udot8(x, y, z, true);
#ifdef __gfx950__
  bf2_ bx = __builtin_bit_cast(bf2_, x), by = __builtin_bit_cast(bf2_, y);
  p[14] = __builtin_bit_cast(unsigned, __builtin_amdgcn_fdot2_f32_bf16(bx, by, zf, false));
  p[15] = __builtin_bit_cast(unsigned, __builtin_amdgcn_fdot2_f32_bf16(bx, by, zf, true));
#endif
}
