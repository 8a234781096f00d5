// A HIP kernel and its host launch, without HIP headers: compiling it for the
// host (`clang-22 -x hip -nogpuinc -nogpulib -c`) writes a .hip_fatbin offload
// bundle (tests/corpus/containers.sh).
#define __global__ __attribute__((global))
#define __device__ __attribute__((device))
#define __host__ __attribute__((host))
struct dim3 { unsigned x, y, z; __host__ __device__ dim3(unsigned x=1, unsigned y=1, unsigned z=1) : x(x), y(y), z(z) {} };
typedef struct ihipStream_t* hipStream_t;
typedef int hipError_t;
extern "C" hipError_t hipLaunchKernel(const void*, dim3, dim3, void**, unsigned long, hipStream_t);
extern "C" unsigned __hipPushCallConfiguration(dim3, dim3, unsigned long, hipStream_t);
extern "C" hipError_t __hipPopCallConfiguration(dim3*, dim3*, unsigned long*, hipStream_t*);
extern "C" __global__ void scale(float *x, float a, unsigned n) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  if (i < n) x[i] *= a;
}
void launch(float *x, float a, unsigned n) { scale<<<n / 64, 64, 0, 0>>>(x, a, n); }
