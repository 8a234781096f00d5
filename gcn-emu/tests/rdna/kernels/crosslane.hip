// crosslane: the cross-lane operations of a wave32 (RDNA's default wave size).
// Launch with 32-thread blocks. Per thread i, out[i*6 + k]:
//   0 ds_swizzle xor 1 (swap adjacent lanes)   1 ds_bpermute from lane (i+1)%32
//   2 v_permlane16 (lane select 0x76543210/0xfedcba98)
//   3 v_permlanex16 (same selects, across the two rows of 16)
//   4 DPP row_shr:1 (bound_ctrl: lane 0 of each row gets 0)
//   5 DPP8 (lane select 7,6,5,4,3,2,1,0: reversed in each group of 8)
#define __global__ __attribute__((global))
extern "C" __global__ void crosslane(const int *__restrict__ in, int *__restrict__ out) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  unsigned g = __builtin_amdgcn_workgroup_id_x() * 32u + lane;
  int v = in[g];
  out[g * 6 + 0] = __builtin_amdgcn_ds_swizzle(v, 0x041f);
  out[g * 6 + 1] = __builtin_amdgcn_ds_bpermute((int)(((lane + 1u) & 31u) * 4u), v);
  out[g * 6 + 2] = __builtin_amdgcn_permlane16(v, v, 0x76543210u, 0xfedcba98u, false, false);
  out[g * 6 + 3] = __builtin_amdgcn_permlanex16(v, v, 0x76543210u, 0xfedcba98u, false, false);
  out[g * 6 + 4] = __builtin_amdgcn_update_dpp(0, v, 0x111, 0xf, 0xf, true);
  // dpp8 selects: lane j of each 8 reads lane sel[j], 3 bits each.
  out[g * 6 + 5] = __builtin_amdgcn_mov_dpp8(v, (7u) | (6u << 3) | (5u << 6) | (4u << 9) |
                                                   (3u << 12) | (2u << 15) | (1u << 18));
}
