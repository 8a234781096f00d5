#!/usr/bin/env bash
# Regenerates the gcn-patch test corpus (tests/corpus) with the real tools.
#
# Usage: tests/corpus/regen.sh        (works from any directory)
#
# Requires:
#   iree-compile   pip install iree-base-compiler==3.13.0
#   clang-22       apt-get install -y clang-22 lld-22 llvm-22
#
# Outputs (all relative to tests/corpus; the previous iree/ and hip/ trees are
# replaced). Every .rocmasm/.hsaco/.s file is the byte-exact compiler output:
# nothing is stripped or rewritten here.
#   iree/<target>/<op>.rocmasm  IREE dump (--iree-hal-dump-executable-files-to)
#                               (plus iree/gfx950/matmul_lds_dma.*, see below)
#   iree/<target>/<op>.hsaco    IREE's own code object from the same compile
#   iree/index.tsv              op, target, executable, rocmasm, hsaco
#   hip/<target>/<kernel>.s     clang-22 HIP device assembly
#   TOOLS.txt                   versions of the tools that produced the files
#
# IREE dispatches: with the sources in src/, every op (matmul, conv, softmax)
# lowers to exactly ONE dispatch (`<op>_dispatch_0`; the linalg.fill is fused
# into the matmul/conv dispatch, linalg.softmax stays one dispatch). IREE names
# the dump files `module_<executable>_rocm_hsaco_fb.{rocmasm,hsaco}`; the
# <executable> part is what `--iree-hal-substitute-executable-object` takes:
#   iree-compile src/matmul.mlir --iree-hal-target-device=hip \
#     --iree-rocm-target=gfx942 \
#     --iree-hal-substitute-executable-object=matmul_dispatch_0=iree/gfx942/matmul.hsaco \
#     -o matmul.vmfb
# If a future IREE splits an op into several dispatches, this script keeps all
# of them, sorted by executable name, as <op>_0, <op>_1, ... (and index.tsv
# lists each), so nothing is silently dropped.
#
# HIP: clang-22 is called with -mcode-object-version=6 for every target. That
# is clang-22's default already, but the generic targets (gfx9-generic,
# gfx9-4-generic, gfx10-3-generic, gfx11-generic, gfx12-generic) REQUIRE code
# object v6 ("gfx9-generic is only available on code object version 6 or
# better"), so it is pinned explicitly to keep the output stable.
set -euo pipefail

CORPUS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$CORPUS"
export LC_ALL=C

IREE_TARGETS=(gfx942 gfx950 gfx90a gfx1100 gfx1201)
IREE_OPS=(matmul conv softmax)
HIP_TARGETS=(gfx908 gfx90a gfx942 gfx1030 gfx1100 gfx1201
  gfx9-generic gfx9-4-generic gfx10-3-generic gfx11-generic gfx12-generic)
HIP_KERNELS=(saxpy reduce)

need() {
  if ! command -v "$1" >/dev/null 2>&1; then
    echo "error: '$1' not found in PATH; install it with: $2" >&2
    exit 1
  fi
}
need iree-compile "pip install iree-base-compiler==3.13.0"
need clang-22 "apt-get install -y clang-22 lld-22 llvm-22"

IREE_VERSION="$(iree-compile --version 2>&1 | sed -n 's/^ *IREE compiler version //p')"
case "$IREE_VERSION" in
  3.13.0*) ;;
  *) echo "warning: expected iree-compile 3.13.0, found '$IREE_VERSION'" \
       "(pip install iree-base-compiler==3.13.0)" >&2 ;;
esac

TMP="$(mktemp -d)"
trap 'rm -rf "$TMP"' EXIT

{
  echo "# Tools used by tests/corpus/regen.sh"
  echo "iree-compile: $(iree-compile --version 2>&1 | sed -n 's/^ *IREE compiler version //p')"
  echo "iree-compile LLVM: $(iree-compile --version 2>&1 | sed -n 's/^ *LLVM version //p')"
  echo "clang-22: $(clang-22 --version | head -n 1)"
} >"$TMP/TOOLS.txt"

# ---------------------------------------------------------------- IREE ----
rm -rf iree
mkdir -p iree
printf 'op\ttarget\texecutable\trocmasm\thsaco\n' >"$TMP/index.tsv"
# iree_op OP TARGET: compile src/OP.mlir for TARGET, keep every dispatch's
# .rocmasm and .hsaco as iree/TARGET/OP[_i].*, and add their index rows.
iree_op() {
  local op="$1" target="$2"
  mkdir -p "iree/$target"
  local dump="$TMP/dump-$target-$op"
  iree-compile "src/$op.mlir" \
    --iree-hal-target-device=hip \
    --iree-rocm-target="$target" \
    --iree-hal-dump-executable-files-to="$dump" \
    -o /dev/null
  local asms
  mapfile -t asms < <(cd "$dump" && ls -1 module_*_rocm_hsaco_fb.rocmasm | sort)
  if [ "${#asms[@]}" -eq 0 ]; then
    echo "error: iree-compile produced no .rocmasm for $op on $target" >&2
    exit 1
  fi
  local i=0 asm exe hsaco name
  for asm in "${asms[@]}"; do
    exe="${asm#module_}"
    exe="${exe%_rocm_hsaco_fb.rocmasm}"
    hsaco="module_${exe}_rocm_hsaco_fb.hsaco"
    if [ ! -f "$dump/$hsaco" ]; then
      echo "error: $dump/$hsaco missing next to $asm" >&2
      exit 1
    fi
    if [ "${#asms[@]}" -eq 1 ]; then name="$op"; else name="${op}_$i"; fi
    cp "$dump/$asm" "iree/$target/$name.rocmasm"
    cp "$dump/$hsaco" "iree/$target/$name.hsaco"
    printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$target" "$exe" \
      "iree/$target/$name.rocmasm" "iree/$target/$name.hsaco" >>"$TMP/index.tsv"
    i=$((i + 1))
  done
}
for target in "${IREE_TARGETS[@]}"; do
  for op in "${IREE_OPS[@]}"; do
    iree_op "$op" "$target"
  done
done
# IREE's gfx950 LDS-DMA matmul (src/matmul_lds_dma.mlir, 4096^3 f16): the
# dump double-buffers its tiles through `buffer_load_dwordx4 ... lds` (a
# 19 KB dump; the hazard checker must not fail IREE's own kernel).
iree_op matmul_lds_dma gfx950
mv "$TMP/index.tsv" iree/index.tsv

# ----------------------------------------------------------------- HIP ----
rm -rf hip
for target in "${HIP_TARGETS[@]}"; do
  mkdir -p "hip/$target"
  for kernel in "${HIP_KERNELS[@]}"; do
    clang-22 -x hip --cuda-device-only -nogpuinc -nogpulib \
      --offload-arch="$target" -mcode-object-version=6 -O3 -S \
      -o "hip/$target/$kernel.s" "src/$kernel.hip"
  done
done

mv "$TMP/TOOLS.txt" TOOLS.txt
echo "corpus regenerated in $CORPUS"
