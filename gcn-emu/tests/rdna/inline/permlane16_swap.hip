// permlane16_swap: gfx1250's `v_permlane16_swap_b32` from clang-22's
// `__builtin_amdgcn_permlane16_swap` (LLVM's IntrinsicsAMDGPU.td: "Odd rows
// of the first operand are swapped with even rows of the second operand
// (one row is 16 lanes)"). One wave32 block: a = in[t], b = in[32 + t]
// (32-bit words); out[t] and out[32 + t] are the two results.
#define __global__ __attribute__((global))
// Byte offsets xor'ed with `key` (0 at launch), so that clang-22 does not
// use gfx1250's `scale_offset` addressing, which this test is not about.
extern "C" __global__ void permlane16_swap(const char *in, char *out, unsigned key) {
  unsigned t = (__builtin_amdgcn_workitem_id_x() * 4u) ^ key;
  int a = *(const int *)(in + t), b = *(const int *)(in + t + 128);
  auto r = __builtin_amdgcn_permlane16_swap(a, b, false, false);
  *(int *)(out + t) = r[0];
  *(int *)(out + t + 128) = r[1];
}
