// tensor_dma: gfx1250's tensor data mover from clang-22's
// `__builtin_amdgcn_tensor_load_to_lds` / `__builtin_amdgcn_tensor_store_from_lds`
// and `__builtin_amdgcn_s_wait_tensorcnt`, with the descriptor built as
// Triton 3.9 builds it (triton/backends/amd/driver.c `encodeTDMDescriptor`).
// One wave32 workgroup:
// - load: the tile of 16 x 6 f32 (dim0 x dim1) of `src` (row stride
//   `stride` elements) whose origin is (c0, r0), with `dim0 - c0` columns
//   and `dim1 - r0` rows left in the tensor, into LDS (prefilled with -1)
//   padded by 1 dword after every 8; `out` gets the first 128 LDS words.
// - store: an 8 x 4 f32 tile written to LDS by the lanes (value 3i + 1 at
//   word i) stored to `dst` at origin (c1, r1), with `dim0 - c1` columns
//   and `dim1 - r1` rows left.
#define __global__ __attribute__((global))
typedef unsigned int v4u __attribute__((ext_vector_type(4)));
typedef int v8i __attribute__((ext_vector_type(8)));
typedef int v4i __attribute__((ext_vector_type(4)));

__attribute__((shared)) float lds[256];
__attribute__((shared)) float lds2[32];

static __attribute__((device)) unsigned lds_addr(float *p) {
  return (unsigned)(unsigned long)(__attribute__((address_space(3))) float *)p;
}

// Group 0: predicate 1, LDS address, global address, type 2.
static __attribute__((device)) v4u group0(unsigned lds, const float *g) {
  unsigned long a = (unsigned long)g;
  v4u r = {1u, lds, (unsigned)a, (unsigned)(a >> 32) & 0x1ffffffu | 0x80000000u};
  return r;
}

// Group 1 of a 2-D f32 tile: extents left (t0, t1), tile (b0, b1), row
// stride, padding (interval and amount in dwords; 0: none).
static __attribute__((device)) v8i group1(unsigned t0, unsigned t1, unsigned b0, unsigned b1,
                                          unsigned stride, unsigned every, unsigned amount) {
  unsigned d0 = 2u << 16;
  if (every)
    d0 |= 1u << 20 | (unsigned)(__builtin_ctz(every) - 1) << 22 | (amount - 1) << 25;
  v8i r = {(int)d0, (int)(t0 << 16), (int)(t0 >> 16 | t1 << 16), (int)(t1 >> 16 | b0 << 16),
           (int)b1, (int)stride, 0, 0};
  return r;
}

extern "C" __global__ void tensor_dma(const float *src, float *out, float *dst, unsigned dim0,
                                      unsigned dim1, unsigned stride, unsigned c0, unsigned r0,
                                      unsigned c1, unsigned r1) {
  unsigned t = __builtin_amdgcn_workitem_id_x();
  for (unsigned i = t; i < 256; i += 32)
    lds[i] = -1.0f;
  lds2[t] = (float)(3 * t + 1);
  __builtin_amdgcn_fence(__ATOMIC_SEQ_CST, "workgroup");
  __builtin_amdgcn_s_barrier();
  v4i z = {0, 0, 0, 0};
  __builtin_amdgcn_tensor_load_to_lds(group0(lds_addr(lds), src + r0 * stride + c0),
                                      group1(dim0 - c0, dim1 - r0, 16, 6, stride, 8, 1), z, z, 0);
  __builtin_amdgcn_tensor_store_from_lds(group0(lds_addr(lds2), dst + r1 * stride + c1),
                                         group1(dim0 - c1, dim1 - r1, 8, 4, stride, 0, 0), z, z, 0);
  __builtin_amdgcn_s_wait_tensorcnt(0);
  for (unsigned i = t; i < 128; i += 32)
    out[i] = lds[i];
}
