#!/usr/bin/env bash
# Copies the aiter code objects the emulator's NumPy tests run but the
# sample (tests/corpus/aiter.sh, 4 objects a family by rank) does not hold,
# into tests/corpus/aiter-tests: each named below with the test that runs it.
#
# Usage: tests/corpus/aiter-tests.sh AITER_REPO
#   AITER_REPO: a git repository of https://github.com/ROCm/aiter (a clone or
#   a bare mirror); the files are read from its HEAD with `git show`.
# Outputs, relative to tests/corpus/aiter-tests (replaced):
#   <arch>/<path under hsa/<arch>/>   the code objects, byte-exact
#   index.tsv                         arch, path in aiter, sha256, test
#   SOURCE.txt                        aiter's commit and license notice (MIT)
set -euo pipefail
export LC_ALL=C
repo=${1:?usage: tests/corpus/aiter-tests.sh AITER_REPO (a clone of https://github.com/ROCm/aiter)}
out="$(cd "$(dirname "$0")" && pwd)/aiter-tests"
# path in aiter <TAB> the test (gcn-emu/tests/...) that runs it
files=(
    "hsa/gfx1250/fmha_v3_bwd/bwd_hd128_odo_bf16.co	aiter_gfx1250.rs: aiter_gfx1250_odo_bf16_matches_numpy"
)
rm -rf "$out"
mkdir -p "$out"
commit=$(git -C "$repo" rev-parse HEAD)
{
    echo "Code objects of ROCm/aiter (https://github.com/ROCm/aiter),"
    echo "commit $commit, copied unchanged by tests/corpus/aiter-tests.sh. aiter's license:"
    echo
    git -C "$repo" show HEAD:LICENSE
} > "$out/SOURCE.txt"
printf 'arch\taiter_path\tsha256\ttest\n' > "$out/index.tsv"
for entry in "${files[@]}"; do
    path=${entry%%$'\t'*}
    test=${entry#*$'\t'}
    arch=$(echo "$path" | cut -d/ -f2)
    dest="$out/$arch/${path#hsa/$arch/}"
    mkdir -p "$(dirname "$dest")"
    git -C "$repo" show "HEAD:$path" > "$dest"
    printf '%s\t%s\t%s\t%s\n' "$arch" "$path" "$(sha256sum "$dest" | cut -d' ' -f1)" "$test" >> "$out/index.tsv"
done
echo "aiter test objects: $(($(wc -l < "$out/index.tsv") - 1))"
