// crosslane: cross-lane builtins of one wave64. Launch with 64-thread blocks.
// out[i*5+0] = bpermute: value of lane (lane+1)%64
// out[i*5+1] = readlane 7 of the wave
// out[i*5+2] = DPP row_shr:1 (bound_ctrl: lanes 0 of each row get 0)
// out[i*5+3] = swizzle swap adjacent lanes (xor 1)
// out[i*5+4] = readfirstlane
#define __global__ __attribute__((global))
extern "C" __global__ void crosslane(const int *__restrict__ in, int *__restrict__ out) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  unsigned g = __builtin_amdgcn_workgroup_id_x() * 64u + lane;
  int v = in[g];
  int perm = __builtin_amdgcn_ds_bpermute((int)(((lane + 1u) & 63u) * 4u), v);
  int rl = __builtin_amdgcn_readlane(v, 7);
  int dpp = __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, true);
  int sw = __builtin_amdgcn_ds_swizzle(v, 0x041f);
  int fl = __builtin_amdgcn_readfirstlane(v);
  out[g * 5 + 0] = perm;
  out[g * 5 + 1] = rl;
  out[g * 5 + 2] = dpp;
  out[g * 5 + 3] = sw;
  out[g * 5 + 4] = fl;
}
