// buffer_oob_raw: buffer_oob with RDNA's V# flags word: 0x31004000, the
// one AMD's composable_kernel uses on gfx11 (ck.hpp,
// CK_BUFFER_RESOURCE_3RD_DWORD): OOB_SELECT (bits 29:28) = 3, the raw
// range check: a dword is out of range when offset + 4 > num_records
// (bytes). Lanes past n_in read 0, stores past n_out are dropped.
// Launch one block of 32 threads (wave32).
#define __global__ __attribute__((global))
extern "C" __global__ void buffer_oob_raw(int *in, int *out, int n_in, int n_out) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  __amdgpu_buffer_rsrc_t rin = __builtin_amdgcn_make_buffer_rsrc(in, 0, n_in * 4, 0x31004000);
  __amdgpu_buffer_rsrc_t rout = __builtin_amdgcn_make_buffer_rsrc(out, 0, n_out * 4, 0x31004000);
  int v = __builtin_amdgcn_raw_buffer_load_b32(rin, lane * 4, 0, 0);
  __builtin_amdgcn_raw_buffer_store_b32(v + 1, rout, lane * 4, 0, 0);
}
