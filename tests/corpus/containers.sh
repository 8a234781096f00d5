#!/usr/bin/env bash
# Makes the code-object containers of tests/corpus/containers with the real tools.
#
# Usage: tests/corpus/containers.sh     (from any directory; deterministic)
# Requires clang-22 (apt-get install -y clang-22 lld-22 llvm-22) and iree-compile
# (pip install iree-base-compiler==3.13.0).
# Outputs, relative to tests/corpus/containers (replaced):
#   scale-host.o             host object of src/scale.hip for gfx942 + gfx1100:
#                            its .hip_fatbin holds an offload bundle
#   scale-host-compressed.o  the same with --offload-compress (a CCOB bundle)
#   scale.hipfb              the device-only offload bundle (--cuda-device-only -c)
#   softmax-gfx942.vmfb      IREE module of src/softmax.mlir for gfx942
#   softmax-cpu.vmfb         the same for the CPU (llvm-cpu): a module without AMDGPU code
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
out="$here/containers"
for t in clang-22 iree-compile; do
    command -v "$t" >/dev/null || {
        echo "containers.sh: $t not found (apt-get install -y clang-22 lld-22 llvm-22; pip install iree-base-compiler==3.13.0)" >&2
        exit 1
    }
done
rm -rf "$out"
mkdir -p "$out"
cd "$here"
hip=(clang-22 -x hip -nogpuinc -nogpulib -O3 --offload-arch=gfx942 --offload-arch=gfx1100)
"${hip[@]}" -c src/scale.hip -o "$out/scale-host.o"
"${hip[@]}" --offload-compress -c src/scale.hip -o "$out/scale-host-compressed.o"
"${hip[@]}" --cuda-device-only -c src/scale.hip -o "$out/scale.hipfb"
iree-compile src/softmax.mlir --iree-hal-target-device=hip --iree-rocm-target=gfx942 \
    -o "$out/softmax-gfx942.vmfb"
iree-compile src/softmax.mlir --iree-hal-target-device=local \
    --iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=generic \
    -o "$out/softmax-cpu.vmfb"
ls -l "$out"
