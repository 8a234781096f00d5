// math: integer and float operations per element.
// iout[i*6+k]: a+b, a*b, a/b (b!=0), a%b, mulhi(a,b), (a<<(b&31))^(a>>3)
// fout[i*6+k]: x*y+z (fma), x/y, sqrtf(|x|), min(x,y), (float)a, x-y
#define __global__ __attribute__((global))
extern "C" __global__ void math(const unsigned *__restrict__ a, const unsigned *__restrict__ b,
                                const float *__restrict__ x, const float *__restrict__ y,
                                const float *__restrict__ z, unsigned *__restrict__ iout,
                                float *__restrict__ fout, unsigned n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 128u + __builtin_amdgcn_workitem_id_x();
  if (i >= n)
    return;
  unsigned av = a[i], bv = b[i] | 1u;
  iout[i * 6 + 0] = av + bv;
  iout[i * 6 + 1] = av * bv;
  iout[i * 6 + 2] = av / bv;
  iout[i * 6 + 3] = av % bv;
  iout[i * 6 + 4] = (unsigned)(((unsigned long long)av * bv) >> 32);
  iout[i * 6 + 5] = (av << (bv & 31u)) ^ (av >> 3);
  float xv = x[i], yv = y[i], zv = z[i];
  fout[i * 6 + 0] = __builtin_fmaf(xv, yv, zv);
  fout[i * 6 + 1] = xv / yv;
  fout[i * 6 + 2] = __builtin_sqrtf(__builtin_fabsf(xv));
  fout[i * 6 + 3] = __builtin_fminf(xv, yv);
  fout[i * 6 + 4] = (float)(int)av;
  fout[i * 6 + 5] = xv - yv;
}
