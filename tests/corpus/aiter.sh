#!/usr/bin/env bash
# Copies a sample of aiter's hand-written code objects into tests/corpus/aiter.
#
# Usage: tests/corpus/aiter.sh AITER_REPO
#   AITER_REPO: a git repository of https://github.com/ROCm/aiter (a clone, or a
#   bare mirror); the files are read from its HEAD with `git show`, so its work
#   tree is not used.
#
# The sample rule (no file is chosen by hand):
#   * archs gfx942, gfx950, gfx1250 (`hsa/<arch>/`);
#   * a family is the first directory under `hsa/<arch>/`; the .co files directly
#     in `hsa/<arch>/` form one more family, `<arch>/_top`;
#   * in each family, its .co files sorted by path (C locale), take 4 at evenly
#     spaced ranks: floor(i * n / 4) for i = 0..3 (all of them when n <= 4).
# Outputs, relative to tests/corpus/aiter (replaced):
#   <arch>/<path under hsa/<arch>/>   the code objects, byte-exact
#   index.tsv                   arch, family, path in aiter, sha256
#   SOURCE.txt                  aiter's commit and license notice (MIT)
set -euo pipefail
export LC_ALL=C
repo=${1:?usage: tests/corpus/aiter.sh AITER_REPO (a clone of https://github.com/ROCm/aiter)}
out="$(cd "$(dirname "$0")" && pwd)/aiter"
per_family=4
rm -rf "$out"
mkdir -p "$out"
commit=$(git -C "$repo" rev-parse HEAD)
{
    echo "Sample of the code objects of ROCm/aiter (https://github.com/ROCm/aiter),"
    echo "commit $commit, copied unchanged by tests/corpus/aiter.sh. aiter's license:"
    echo
    git -C "$repo" show HEAD:LICENSE
} > "$out/SOURCE.txt"
printf 'arch\tfamily\taiter_path\tsha256\n' > "$out/index.tsv"
for arch in gfx942 gfx950 gfx1250; do
    git -C "$repo" ls-tree -r --name-only HEAD "hsa/$arch/" | grep '\.co$' | sort |
        awk -v arch="$arch" -F/ '{ fam = (NF == 3) ? "_top" : $3; print fam "\t" $0 }' > "$out/.list"
    for fam in $(cut -f1 "$out/.list" | sort -u); do
        mapfile -t files < <(awk -F'\t' -v f="$fam" '$1 == f { print $2 }' "$out/.list")
        n=${#files[@]}
        k=$(( n < per_family ? n : per_family ))
        for ((i = 0; i < k; i++)); do
            path=${files[$(( i * n / k ))]}
            dest="$out/$arch/${path#hsa/$arch/}"
            mkdir -p "$(dirname "$dest")"
            git -C "$repo" show "HEAD:$path" > "$dest"
            printf '%s\t%s\t%s\t%s\n' "$arch" "$fam" "$path" "$(sha256sum "$dest" | cut -d' ' -f1)" >> "$out/index.tsv"
        done
    done
done
rm -f "$out/.list"
echo "aiter sample: $(($(wc -l < "$out/index.tsv") - 1)) code objects, $(du -sh "$out" | cut -f1)"
