// valu_loop: a VALU-bound kernel for the emulator's speed bench
// (benches/speed.rs). Each work-item runs `rounds` iterations of integer
// arithmetic on registers (a linear congruential step, a xorshift and a
// rotate) and writes one result: memory is touched once per work-item.
#define __global__ __attribute__((global))
extern "C" __global__ void valu_loop(const unsigned *__restrict__ seed, unsigned *__restrict__ out,
                                     unsigned rounds) {
  unsigned i = __builtin_amdgcn_workgroup_id_x() * 256u + __builtin_amdgcn_workitem_id_x();
  unsigned x = seed[i], y = x ^ 0x9e3779b9u;
  for (unsigned r = 0; r < rounds; ++r) {
    x = x * 1664525u + 1013904223u;
    y ^= y << 13;
    y ^= y >> 17;
    y ^= y << 5;
    x += (y >> 3) | (y << 29);
  }
  out[i] = x ^ y;
}
