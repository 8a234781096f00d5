// approx: the approximate instructions, one output each, and an IEEE division.
// out[i*6+k]: rcp(x), rsq(|x|), sqrt(|x|), exp2(x), log2(|x|), x/y
// dout[i]: rcp(d) in f64
#define __global__ __attribute__((global))
extern "C" __global__ void approx(const float *__restrict__ x, const float *__restrict__ y,
                                  const double *__restrict__ d, float *__restrict__ out,
                                  double *__restrict__ dout, unsigned n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
  if (i >= n)
    return;
  float xv = x[i], yv = y[i];
  out[i * 6 + 0] = __builtin_amdgcn_rcpf(xv);
  out[i * 6 + 1] = __builtin_amdgcn_rsqf(__builtin_fabsf(xv));
  out[i * 6 + 2] = __builtin_amdgcn_sqrtf(__builtin_fabsf(xv));
  out[i * 6 + 3] = __builtin_amdgcn_exp2f(xv);
  out[i * 6 + 4] = __builtin_amdgcn_logf(__builtin_fabsf(xv));
  out[i * 6 + 5] = xv / yv;
  dout[i] = __builtin_amdgcn_rcp(d[i]);
}
