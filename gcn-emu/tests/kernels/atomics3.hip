// atomics3: packed bf16 atomic adds on global memory and f32/u32 atomics
// through a buffer resource (buffer_atomic_*). Launch with 256-thread blocks.
#define __global__ __attribute__((global))
typedef __bf16 bf16x2 __attribute__((ext_vector_type(2)));

extern "C" __global__ void pk_add_bf16(bf16x2 *acc, const bf16x2 *__restrict__ in, unsigned n) {
  unsigned t = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
  if (t < n)
    __builtin_amdgcn_global_atomic_fadd_v2bf16(&acc[t % 8], in[t]);
}

extern "C" __global__ void buffer_atomics(float *facc, unsigned *uacc, const float *__restrict__ in,
                                          unsigned n) {
  unsigned t = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
  if (t >= n)
    return;
  __amdgpu_buffer_rsrc_t f = __builtin_amdgcn_make_buffer_rsrc(facc, 0, 16 * 4, 0x00027000);
  __amdgpu_buffer_rsrc_t u = __builtin_amdgcn_make_buffer_rsrc(uacc, 0, 16 * 4, 0x00027000);
  // Elements 0..19: 16 and up are past num_records and do nothing.
  __builtin_amdgcn_raw_ptr_buffer_atomic_fadd_f32(in[t], f, (t % 20) * 4, 0, 0);
  unsigned old = __builtin_amdgcn_raw_ptr_buffer_atomic_add_i32(1, u, (t % 20) * 4, 0, 0);
  (void)old;
}
