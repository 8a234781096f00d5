// cluster_load: gfx1250's multicast loads from clang-22's builtins, run in
// a cluster of workgroups. Each workgroup (one wave32 wave) loads its own
// 32 words of `in` with `cluster_load_b32`, 32 with
// `cluster_load_async_to_lds_b32` into LDS (after `s_wait_asynccnt`), and
// 8 bytes a lane with `cluster_load_async_to_lds_b64`, each with the mask
// `mask` (in M0); out gets the register, the LDS words and the 64-bit LDS
// words. The emulator models a multicast load as the issuer's own copy,
// so the mask must hold the issuer's flat rank.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define LDS __attribute__((address_space(3)))
#define GLOBAL __attribute__((address_space(1)))
typedef int v2i __attribute__((ext_vector_type(2)));

extern "C" __global__ void cluster_load(int *in, int *out, int mask) {
  __shared__ int lds[32];
  __shared__ v2i lds2[32];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  unsigned g = __builtin_amdgcn_workgroup_id_x();
  int GLOBAL *src = (int GLOBAL *)in + 128 * g;
  int r = __builtin_amdgcn_cluster_load_b32(src + t, 0, mask);
  __builtin_amdgcn_cluster_load_async_to_lds_b32(src + 32 + t, (int LDS *)lds + t, 0, 0, mask);
  __builtin_amdgcn_cluster_load_async_to_lds_b64((v2i GLOBAL *)(src + 64) + t, (v2i LDS *)lds2 + t, 0, 0, mask);
  __builtin_amdgcn_s_wait_asynccnt(0);
  int *o = out + 128 * g;
  o[t] = r;
  o[32 + t] = lds[t];
  o[64 + 2 * t] = lds2[t][0];
  o[64 + 2 * t + 1] = lds2[t][1];
}
