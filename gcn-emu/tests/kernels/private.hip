// private: a per-work-item array indexed at run time, which clang places
// in scratch (private memory): scratch_* on gfx942/gfx950 (architected
// flat scratch). Launch with 256-thread blocks.
#define __global__ __attribute__((global))

extern "C" __global__ void private_array(const unsigned *__restrict__ in,
                                         unsigned *__restrict__ out, unsigned n) {
  unsigned t = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
  if (t >= n)
    return;
  unsigned a[64];
  for (unsigned i = 0; i < 64; i++)
    a[i] = in[(t + i) % n] * (i + 1);
  unsigned k = in[t] % 64;
  out[t] = a[k] + a[(k + 7) % 64];
}

// A generic pointer that is private or global memory at run time: flat_*
// accesses, in the private aperture for odd inputs.
extern "C" __global__ void private_or_global(const unsigned *__restrict__ in,
                                             unsigned *__restrict__ out,
                                             unsigned *__restrict__ spill, unsigned n) {
  unsigned t = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
  if (t >= n)
    return;
  unsigned a[16];
  unsigned *p = (in[t] & 1) ? a : spill + t * 16;
  for (unsigned i = 0; i < 16; i++)
    p[i] = in[(t + i) % n] + i;
  unsigned s = 0;
  for (unsigned i = 0; i <= in[t] % 16; i++)
    s += p[i];
  out[t] = s;
}
