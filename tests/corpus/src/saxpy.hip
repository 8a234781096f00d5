// saxpy: y[i] = a * x[i] + y[i]. HIP device code without HIP headers.
#define __global__ __attribute__((global))

extern "C" __global__ void saxpy(float a, const float *__restrict__ x,
                                 float *__restrict__ y, unsigned n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 256u +
               __builtin_amdgcn_workitem_id_x();
  if (i < n)
    y[i] = a * x[i] + y[i];
}
