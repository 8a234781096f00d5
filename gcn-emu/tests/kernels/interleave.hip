// interleave: kernels whose result depends on how the waves of a workgroup
// interleave between barriers (gcn-patch/tests/run.rs and compare.rs,
// `--slice`). Launch with one workgroup of 256 work-items (4 waves).
// HIP device code without HIP headers.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))

static __attribute__((device)) void sync() {
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
}

// A lost update: lane 0 of each wave reads a shared counter and writes it
// back plus one, with no barrier or atomic between. Waves run in turn
// count every wave; waves interleaved one instruction at a time all read
// before any writes, and count one.
extern "C" __global__ void lost_update(unsigned *__restrict__ out) {
  __shared__ unsigned count;
  unsigned i = __builtin_amdgcn_workitem_id_x();
  if (i == 0)
    count = 0;
  sync();
  if (i % 64 == 0) {
    volatile unsigned *c = &count;
    unsigned seen = *c;
    *c = seen + 1;
  }
  sync();
  if (i == 0)
    out[0] = count;
}

// A hand-off: wave 0 waits for the flag wave 1 sets (flag[0] = 0xffffffff
// before the launch, as `gcn-patch run`'s `out:` buffers are). Waves run in turn never end (wave 0 spins first); waves
// interleaved do.
extern "C" __global__ void handoff(volatile unsigned *flag, unsigned *out) {
  unsigned i = __builtin_amdgcn_workitem_id_x();
  if (i == 64)
    flag[0] = 1;
  if (i == 0) {
    unsigned n = 0;
    while (flag[0] == ~0u)
      n++;
    out[0] = n;
  }
}
