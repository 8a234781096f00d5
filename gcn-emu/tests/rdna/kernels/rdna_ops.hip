// rdna_ops: RDNA instructions the other kernels lack (issue 35): VOP3 DPP
// (`v_fma_f32_e64_dpp`), `ds_cmpstore_rtn_b32/_b64` (RDNA's compare-swap
// operand order), RDNA's buffer atomics (gfx11 `buffer_atomic_max_f32`,
// gfx12 `buffer_atomic_max_num_f32`) through a raw V#, and the global
// atomics gfx11/gfx12 rename (`global_atomic_add_u64`, `_min_f32` /
// `_min_num_f32`, `_inc_u64`, `_sub_u32`, `_swap_b32`), and LDS f32 max/min
// (gfx11 `ds_max_f32`, gfx12 `ds_max_num_f32`).
// Launch one block of 32 threads (wave32). in[32]: small integers;
// fin[32]: multiples of 1/4 below 64 in magnitude (every sum and product
// here is exact in f32). Per thread t:
//   out[t*8 + 0]  the old lds[t^1] ds_cmpstore_rtn_b32 returned (in[t^1])
//   out[t*8 + 1]  lds[t] after lane t^1's compare-swap: 1000 + (t^1) if
//                 (t^1) % 3 == 0 (compare equal), else in[t]
//   out[t*8 + 2..3] the old lds64[t] ds_cmpstore_rtn_b64 returned (lo, hi)
//   out[t*8 + 4..5] lds64[t] afterwards: (t << 33 | 5) if t % 4 < 2 else
//                 unchanged; lds64[t] starts as in[t] * 3 + (t << 40)
//   out[t*8 + 6]  buffer_atomic_add_u32's return: bacc[t*4] (0 past
//                 num_records: lanes 28-31)
//   out[t*8 + 7]  (int)(buffer_atomic_max_f32's return, bacc[t*4+1])
//   fout[t*2 + 0] fma(row_shr:1 of fin (0 in lane 0 of each row), fin[t], 2.0)
//   fout[t*2 + 1] |row_shr:1 of fin| * -fin[t]
// bacc[t*4 + 0..3] (t < 28): += in[t]; max= fin[t]; min= fin[t]; += fin[t]
// (num_records 28 * 16 bytes: lanes 28-31 are out of range and dropped).
// bsum (num_records 8): [0] += in[t] (u32), [1] max= fin[t] (f32).
// gacc: [0..1] u64 += in[t] << 20; [2] min= fin (f32); [3] max= fin (f32);
//       [4] -= in[t] (u32); [5..6] u64 inc (wrapping at 1000): 32 times;
//       [8 + t] = in[t] (swap).
// lmax[k] (k < 4): the max of fin[t] over t % 4 == k, through LDS (from
// -1e30); lmax[4 + k]: the min (from 1e30).
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
extern "C" __global__ void rdna_ops(const int *__restrict__ in, const float *__restrict__ fin,
                                    int *__restrict__ out, float *__restrict__ fout, int *bacc,
                                    int *bsum, unsigned *gacc, float *lmax) {
  __shared__ int lds[32];
  __shared__ float fm[8];
  __shared__ unsigned long long lds64[32];
  unsigned t = __builtin_amdgcn_workitem_id_x();
  int v = in[t];
  float f = fin[t];
  // VOP3 DPP: a DPP move folded into a VOP3-only operation.
  float fd = __builtin_bit_cast(
      float, __builtin_amdgcn_update_dpp(0, __builtin_bit_cast(int, f), 0x111, 0xf, 0xf, true));
  fout[t * 2 + 0] = __builtin_fmaf(fd, f, 2.0f);
  fout[t * 2 + 1] = __builtin_fabsf(fd) * -f;
  // ds_cmpstore: each lane swaps in another lane's slot, so no two lanes
  // touch one address.
  lds[t] = v;
  if (t < 8) fm[t] = t < 4 ? -1e30f : 1e30f;
  lds64[t] = (unsigned long long)v * 3 + ((unsigned long long)t << 40);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  int other = in[t ^ 1];
  int exp = (t % 3 == 0) ? other : other + 1;
  __hip_atomic_compare_exchange_strong(&lds[t ^ 1], &exp, 1000 + (int)t, __ATOMIC_RELAXED,
                                       __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  unsigned long long e64 =
      (t % 4 < 2) ? (unsigned long long)v * 3 + ((unsigned long long)t << 40) : 7;
  __hip_atomic_compare_exchange_strong(&lds64[t], &e64, ((unsigned long long)t << 33) | 5,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED,
                                       __HIP_MEMORY_SCOPE_WORKGROUP);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  __hip_atomic_fetch_max(&fm[t % 4], f, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __hip_atomic_fetch_min(&fm[4 + t % 4], f, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_WORKGROUP);
  __builtin_amdgcn_fence(__ATOMIC_RELEASE, "workgroup");
  __builtin_amdgcn_s_barrier();
  __builtin_amdgcn_fence(__ATOMIC_ACQUIRE, "workgroup");
  if (t < 8) lmax[t] = fm[t];
  unsigned long long now64 = lds64[t];
  out[t * 8 + 0] = exp;
  out[t * 8 + 1] = lds[t];
  out[t * 8 + 2] = (int)e64;
  out[t * 8 + 3] = (int)(e64 >> 32);
  out[t * 8 + 4] = (int)now64;
  out[t * 8 + 5] = (int)(now64 >> 32);
  // Buffer atomics through a raw V# (OOB_SELECT 3: offset + 4 > num_records
  // is out of range).
  __amdgpu_buffer_rsrc_t r = __builtin_amdgcn_make_buffer_rsrc(bacc, 0, 28 * 16, 0x31004000);
  out[t * 8 + 6] = __builtin_amdgcn_raw_ptr_buffer_atomic_add_i32(v, r, t * 16, 0, 0);
  out[t * 8 + 7] = (int)__builtin_amdgcn_raw_ptr_buffer_atomic_fmax_f32(f, r, t * 16 + 4, 0, 0);
  __builtin_amdgcn_raw_ptr_buffer_atomic_fmin_f32(f, r, t * 16 + 8, 0, 0);
  __builtin_amdgcn_raw_ptr_buffer_atomic_fadd_f32(f, r, t * 16 + 12, 0, 0);
  __amdgpu_buffer_rsrc_t rs = __builtin_amdgcn_make_buffer_rsrc(bsum, 0, 8, 0x31004000);
  __builtin_amdgcn_raw_ptr_buffer_atomic_add_i32(v, rs, 0, 0, 0);
  __builtin_amdgcn_raw_ptr_buffer_atomic_fmax_f32(f, rs, 4, 0, 0);
  // Global atomics under RDNA's names.
  __hip_atomic_fetch_add((unsigned long long *)gacc, (unsigned long long)v << 20, __ATOMIC_RELAXED,
                         __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_min((float *)&gacc[2], f, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_max((float *)&gacc[3], f, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __hip_atomic_fetch_sub(&gacc[4], (unsigned)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
  __builtin_amdgcn_atomic_inc64((unsigned long *)&gacc[6], 1000ul, __ATOMIC_RELAXED, "agent");
  __hip_atomic_exchange(&gacc[8 + t], (unsigned)v, __ATOMIC_RELAXED, __HIP_MEMORY_SCOPE_AGENT);
}
