// signed_voffset: gfx1250 sign-extends the 32-bit VGPR offset of a GLOBAL
// access with an SGPR base (LLVM's GCNSubtarget.h `hasSignedGVSOffset`).
// One wave32 block; `n` bytes per buffer, `key` 0 at launch (so that the
// offset stays in a VGPR, without `scale_offset`). Lane t reads the word
// 4(t + 1) bytes below `in + n`, writes x + 7 as far below `out + n` and
// adds x to the word as far below `acc + n`: clang-22 addresses all three
// as `s[BASE] + v0`, v0 negative.
#define __global__ __attribute__((global))
extern "C" __global__ void signed_voffset(const char *in, char *out, char *acc,
                                          unsigned n, int key) {
  int t = __builtin_amdgcn_workitem_id_x();
  int off = key - 4 * t - 4;
  const char *ie = in + n;
  char *oe = out + n, *ae = acc + n;
  int x = *(const int *)(ie + off);
  *(int *)(oe + off) = x + 7;
  __hip_atomic_fetch_add((int *)(ae + off), x, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
