#!/bin/sh
# Regenerates the tiny code objects used by gcn-embed's tests: one empty
# kernel `k` per target ID, compiled with clang-22 and linked with ld.lld-22
# into a loadable code object (.hsaco), default code object version (v6).
# flags.tsv records target, file, sha256 and `llvm-readelf-22 -h` Flags.
# Needs: apt-get install -y clang-22 lld-22 llvm-22
set -eu
cd "$(dirname "$0")"
printf 'kernel void k(global int *p) { p[__builtin_amdgcn_workitem_id_x()] = 1; }\n' > k.cl
for t in gfx942 gfx942:sramecc+:xnack- gfx942:xnack+ gfx90a gfx1100 gfx1201 \
         gfx9-4-generic gfx11-generic gfx12-generic; do
  f=$(echo "$t" | sed 's/+/on/g; s/:\(sramecc\|xnack\)-/:\1off/g; s/:/_/g')
  clang-22 --target=amdgcn-amd-amdhsa -mcpu="$t" -nogpulib -O2 -c -x cl k.cl -o "$f.o"
  ld.lld-22 -shared "$f.o" -o "$f.hsaco"
  rm -f "$f.o"
  printf '%s\t%s\t%s\t%s\n' "$t" "$f.hsaco" "$(sha256sum "$f.hsaco" | cut -d' ' -f1)" \
    "$(llvm-readelf-22 -h "$f.hsaco" | sed -n 's/.*Flags: *//p')"
done > flags.tsv
rm -f k.cl
cat flags.tsv
