// scale_offset: clang-22 addresses `p[i]` on gfx1250 as the GLOBAL saddr
// form with `scale_offset` (the 32-bit VGPR index times the access's size),
// for 2-, 4-, 8- and 16-byte accesses; `end[-t]` gives a negative VGPR
// offset (gfx1250 sign-extends it) with an immediate offset that is not
// scaled. One wave32 block; `k` is 0 at launch.
#define __global__ __attribute__((global))
typedef int int4v __attribute__((ext_vector_type(4)));
extern "C" __global__ void scale_offset(const int *in, int *out, const long long *in64, long long *o64,
                                        const short *in16, short *o16, const int4v *in128, int4v *o128,
                                        unsigned k) {
  const int *end = in + 31 + k;
  int t = __builtin_amdgcn_workitem_id_x();
  out[t] = in[t] * 3;
  o64[t] = in64[t] + 1;
  o16[t] = in16[t] - 5;
  o128[t] = in128[t] + 7;
  out[32 + t] = end[-t];
}
