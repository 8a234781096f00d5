// lds_dma: loads straight from memory into LDS (buffer_load_dword ... lds and
// global_load_lds_dword), then reads LDS back. Per LLVM's definition of the
// intrinsics, lane L's dword goes to LDS at ldsptr + offset + 4·L.
// Launch one block of 64 threads.
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
typedef __attribute__((address_space(3))) void lds_void;
typedef __attribute__((address_space(1))) void global_void;
extern "C" __global__ void lds_dma(int *in, int *out, int n) {
  __shared__ int a[64 + 16];
  __shared__ int b[64 + 16];
  unsigned lane = __builtin_amdgcn_workitem_id_x();
  __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc(in, 0, n * 4, 0x00020000);
  // Buffer path: lanes past n read 0 (range checked); an immediate offset
  // of 16 bytes applies to both the memory and the LDS address.
  __builtin_amdgcn_raw_ptr_buffer_load_lds(r, (lds_void *)a, 4, lane * 4, 0, 16, 0);
  // Global path: every lane reads in[lane + 64].
  __builtin_amdgcn_global_load_lds((global_void *)(in + 64 + lane), (lds_void *)b, 4, 0, 0);
  __builtin_amdgcn_s_waitcnt(0);
  __builtin_amdgcn_s_barrier();
  out[lane] = a[lane + 4];
  out[64 + lane] = b[lane];
}
