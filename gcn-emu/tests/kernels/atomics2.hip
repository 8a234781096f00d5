// Buffer, packed-bf16 and scalar atomics, through inline asm (assembled by
// clang-22's integrated assembler, LLVM's MC), for gcn-emu/tests/hip.rs.
// Launch one wave (64 threads).
#define __global__ __attribute__((global))
#if defined(__gfx90a__)
#define RTN "glc"
#else
#define RTN "sc0"
#endif

// Lane l adds l + 1 to dword l % 8 of a buffer of num_records bytes, with
// return (old[l]), then takes the unsigned max with 1000 + l at dword
// l % 4 + 8 without return; dwords at or past num_records are not touched
// and return 0. cas[0..2] (a u64): compare-and-swap from lane 0 only.
extern "C" __global__ void buffer_atomics(unsigned *buf, unsigned num_records, unsigned *old,
                                          unsigned long *cas) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc(buf, 0, num_records, 0x00020000);
  unsigned v = lane + 1;
  asm volatile("buffer_atomic_add %0, %1, %2, 0 offen " RTN "\n\ts_waitcnt vmcnt(0)"
               : "+v"(v) : "v"((lane % 8) * 4), "s"(r) : "memory");
  old[lane] = v;
  asm volatile("buffer_atomic_umax %0, %1, %2, 0 offen offset:32\n\ts_waitcnt vmcnt(0)"
               :: "v"(1000 + lane), "v"((lane % 4) * 4), "s"(r) : "memory");
  __amdgpu_buffer_rsrc_t rc = __builtin_amdgcn_make_buffer_rsrc(cas, 0, 8, 0x00020000);
  if (lane == 0) {
    // {src, cmp}: swap in 0x1122334455667788 where 42 is.
    typedef unsigned long ul4 __attribute__((ext_vector_type(2)));
    ul4 d = {0x1122334455667788ul, 42ul};
    asm volatile("buffer_atomic_cmpswap_x2 %0, off, %1, 0 " RTN "\n\ts_waitcnt vmcnt(0)"
                 : "+v"(d) : "s"(rc) : "memory");
    cas[1] = d.x;
  }
}

#if !defined(__gfx90a__)
// Lane l adds the bf16 pair (1.5, -0.25) to pair l % 4 of p.
extern "C" __global__ void bf16_atomics(unsigned *p) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  unsigned *a = p + lane % 4;
  unsigned v = 0xbe803fc0u; // bf16 -0.25 (hi), 1.5 (lo)
  asm volatile("global_atomic_pk_add_bf16 %0, %1, off\n\ts_waitcnt vmcnt(0)" :: "v"(a), "v"(v) : "memory");
}
#endif

// Scalar memory: out[0] = the old p[0] of `s_atomic_add p[0], 5` (with
// return), p[1] stored with s_store_dword, p[2] = s_atomic_umax(p[2], 77).
extern "C" __global__ void scalar_atomics(unsigned *p, unsigned *out) {
  unsigned v = 5, m = 77, s = 123;
  asm volatile("s_atomic_add %0, %1, 0x0 glc\n\ts_waitcnt lgkmcnt(0)" : "+s"(v) : "s"(p) : "memory");
  asm volatile("s_store_dword %0, %1, 0x4\n\ts_waitcnt lgkmcnt(0)" :: "s"(s), "s"(p) : "memory");
  asm volatile("s_atomic_umax %0, %1, 0x8\n\ts_waitcnt lgkmcnt(0)" :: "s"(m), "s"(p) : "memory");
  out[0] = v;
}

#if defined(__gfx950__)
// gfx950 permlane swaps: out[l] = (the permlane16 swap's two results,
// then permlane32's) of x = l and y = 100 + l.
extern "C" __global__ void permlane_swaps(unsigned *out) {
  unsigned l = __builtin_amdgcn_workitem_id_x();
  auto p = __builtin_amdgcn_permlane16_swap(l, 100 + l, false, false);
  auto q = __builtin_amdgcn_permlane32_swap(l, 100 + l, false, false);
  out[l] = p[0];
  out[64 + l] = p[1];
  out[128 + l] = q[0];
  out[192 + l] = q[1];
}
#endif

// v_cvt_off_f32_i4 on each nibble value: out[i] for i = 0..15.
extern "C" __global__ void cvt_off(const unsigned *in, float *out) {
  unsigned l = __builtin_amdgcn_workitem_id_x();
  float f;
  asm volatile("v_cvt_off_f32_i4 %0, %1" : "=v"(f) : "v"(in[l]));
  out[l] = f;
}

// s_setvskip: out[l] = 7 (the v_mov skipped), out[64 + l] = 42 (issued).
extern "C" __global__ void vskip(unsigned *out) {
  unsigned l = __builtin_amdgcn_workitem_id_x();
  unsigned a = 7, b = 7;
  asm volatile("s_setvskip %1, 2\n\ts_nop 0\n\tv_mov_b32 %0, 42\n\ts_setvskip %2, 0\n\ts_nop 0"
               : "+v"(a) : "s"(4u), "s"(0u));
  asm volatile("s_setvskip %1, 1\n\ts_nop 0\n\tv_mov_b32 %0, 42\n\ts_setvskip %1, 1\n\ts_nop 0"
               : "+v"(b) : "s"(4u));
  out[l] = a;
  out[64 + l] = b;
}

#if defined(__gfx950__)
// v_cvt_f32_bf16 of the low half of in[i]: out[i].
extern "C" __global__ void cvt_bf16(const unsigned *in, float *out) {
  unsigned i = __builtin_amdgcn_workitem_id_x() + 256 * __builtin_amdgcn_workgroup_id_x();
  float f;
  asm volatile("v_cvt_f32_bf16 %0, %1" : "=v"(f) : "v"(in[i]));
  out[i] = f;
}
#endif
