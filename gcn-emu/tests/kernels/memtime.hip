// memtime: reads the shader clock (s_memtime), which the emulator does not
// implement: for the unsupported-instruction error.
#define __global__ __attribute__((global))
extern "C" __global__ void memtime(unsigned long long *out) {
  out[0] = __builtin_amdgcn_s_memtime();
}
