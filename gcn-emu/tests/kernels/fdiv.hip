// fdiv: out[i] = x[i] / d, an IEEE f32 division (clang-22 emits v_div_scale,
// v_rcp_f32, Newton steps, v_div_fmas and v_div_fixup).
#define __global__ __attribute__((global))
extern "C" __global__ void fdiv(const float *__restrict__ x, float d, float *__restrict__ out,
                                unsigned n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
  if (i >= n)
    return;
  out[i] = x[i] / d;
}
