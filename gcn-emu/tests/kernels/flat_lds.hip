// flat_lds: a generic pointer that is LDS or global memory depending on an
// argument, so the compiler must use flat instructions; through LDS each
// lane writes its value and reads its neighbour's. Launch one block of 64.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
extern "C" __global__ void flat_lds(int *g, int *out, int use_lds) {
  __shared__ int s[64];
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  int *p = use_lds ? s : g;
  p[lane] = (int)lane * 3 + 1;
  __atomic_fetch_add(&p[(lane + 5) & 63], 100, __ATOMIC_RELAXED);
  __builtin_amdgcn_s_waitcnt(0);
  __builtin_amdgcn_s_barrier();
  out[lane] = p[(lane + 1) & 63];
}
