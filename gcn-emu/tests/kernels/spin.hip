// spin: waits until flag[0] becomes nonzero, which nothing in the kernel
// does: an endless loop, for the instruction budget.
#define __global__ __attribute__((global))
extern "C" __global__ void spin(volatile unsigned *flag, unsigned *out) {
  unsigned n = 0;
  while (flag[0] == 0)
    n++;
  out[0] = n;
}
