// buffer_oob: raw buffer loads and stores through a V# whose num_records
// (bytes) is n_in * 4 for the input and n_out * 4 for the output. Lanes past
// the end read 0 and their stores are dropped, as on hardware.
// Launch one block of 32 threads (wave32). The V# flags word differs
// per generation; 0x00020000 is the CDNA tests' (see the book: not yet checked on RDNA).
#define __global__ __attribute__((global))
extern "C" __global__ void buffer_oob(int *in, int *out, int n_in, int n_out) {
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  __amdgpu_buffer_rsrc_t rin = __builtin_amdgcn_make_buffer_rsrc(in, 0, n_in * 4, 0x00020000);
  __amdgpu_buffer_rsrc_t rout = __builtin_amdgcn_make_buffer_rsrc(out, 0, n_out * 4, 0x00020000);
  int v = __builtin_amdgcn_raw_buffer_load_b32(rin, lane * 4, 0, 0);
  __builtin_amdgcn_raw_buffer_store_b32(v + 1, rout, lane * 4, 0, 0);
}
