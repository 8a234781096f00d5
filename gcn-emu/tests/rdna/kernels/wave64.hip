// wave64: RDNA in wave64 mode (built with -mwavefrontsize64, as a kernel
// may ask). Launch blocks of 64 threads. Per thread i, out[i*4 + k]:
//   0 ds_bpermute from lane (i+1)%64 (crosses the two halves of the wave)
//   1 readlane 40 (a lane of the upper half)
//   2 the wave's ballot of (in[i] odd), low 32 bits
//   3 the ballot's high 32 bits
#define __global__ __attribute__((global))
extern "C" __global__ void wave64(const int *__restrict__ in, int *__restrict__ out) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  unsigned g = __builtin_amdgcn_workgroup_id_x() * 64u + lane;
  int v = in[g];
  unsigned long long b = __builtin_amdgcn_ballot_w64((v & 1) != 0);
  out[g * 4 + 0] = __builtin_amdgcn_ds_bpermute((int)(((lane + 1u) & 63u) * 4u), v);
  out[g * 4 + 1] = __builtin_amdgcn_readlane(v, 40);
  out[g * 4 + 2] = (int)(unsigned)b;
  out[g * 4 + 3] = (int)(unsigned)(b >> 32);
}
