#!/usr/bin/env bash
# Imports a list of code objects into a fresh project with `gcn-patch import`
# under /usr/bin/time -v, then measures the floor of that import: llvm-objdump
# of every object plus llvm-mc of every imported asm, on all cores
# (xargs -P$(nproc)), and prints a table. Not part of the suite: all 2,909 of
# aiter's hsa/ take about 10 minutes on two cores.
#
# Usage: tests/corpus/aiter-import.sh LIST [PROJECT]
#   LIST     a file naming one code object a line (relative paths are
#            relative to the current directory), e.g. /work/aiter/cos.txt
#            from /work/aiter/lib
#   PROJECT  an empty or absent directory to import into (default: a
#            temporary one, removed at the end)
# Environment:
#   GCN_PATCH  the gcn-patch binary (default: a release build of this
#              checkout, `cargo build --release --locked -p gcn-patch`)
#   LLVM_BIN   where llvm-objdump and llvm-mc are (default: LLVM 22's)
set -euo pipefail
list=${1:?usage: tests/corpus/aiter-import.sh LIST [PROJECT]}
llvm=${LLVM_BIN:-$(llvm-config-22 --bindir 2>/dev/null || echo /usr/lib/llvm-22/bin)}
for tool in llvm-objdump llvm-mc; do
    [ -x "$llvm/$tool" ] || {
        echo "aiter-import.sh: no $llvm/$tool: install LLVM 22 (bash tests/setup.sh, or apt-get install -y llvm-22) or set LLVM_BIN" >&2
        exit 1
    }
done
[ -x /usr/bin/time ] || { echo "aiter-import.sh: no /usr/bin/time: apt-get install -y time" >&2; exit 1; }

# The objects, absolute, before leaving the current directory.
objects=$(mktemp)
times=$(mktemp)
cleanup() { rm -f "$objects" "$times"; }
trap cleanup EXIT
while IFS= read -r f; do
    [ -n "$f" ] && realpath -- "$f"
done <"$list" >"$objects"
n=$(wc -l <"$objects")

repo=$(cd "$(dirname "$0")/../.." && pwd)
if [ -z "${GCN_PATCH:-}" ]; then
    (cd "$repo" && cargo build --release --locked -p gcn-patch >&2)
    GCN_PATCH=${CARGO_TARGET_DIR:-$repo/target}/release/gcn-patch
fi

if [ -n "${2:-}" ]; then
    project=$(realpath -m -- "$2")
    mkdir -p "$project"
    [ -z "$(ls -A "$project")" ] || { echo "aiter-import.sh: $project is not empty" >&2; exit 1; }
else
    project=$(mktemp -d)
    trap 'cleanup; rm -rf "$project"' EXIT
fi
jobs=$(nproc)

# /usr/bin/time -v's figures: wall seconds, user, system, peak RSS (KiB).
figures() {
    awk -F': ' '
        /Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
        /User time/ { u = $2 } /System time/ { s = $2 } /Maximum resident/ { m = $2 }
        END { printf "%.1f %.1f %.1f %d\n", w, u, s, m }' "$1"
}

echo "importing $n objects into $project with $GCN_PATCH ($jobs cores)" >&2
mapfile -t objs <"$objects"
(cd "$project" && /usr/bin/time -v -o "$times" "$GCN_PATCH" import "${objs[@]}" >import.log 2>&1) || {
    echo "aiter-import.sh: the import failed; the end of $project/import.log:" >&2
    tail -20 "$project/import.log" >&2
    exit 1
}
read -r import_wall import_user import_sys import_rss < <(figures "$times")
cp "$times" "$project/import.time"

# The floor, part 1: llvm-objdump of every object, as lift runs it.
/usr/bin/time -v -o "$times" xargs -a "$objects" -d '\n' -P "$jobs" -I{} \
    "$llvm/llvm-objdump" -d -z --symbolize-operands -j .text {} >/dev/null
read -r od_wall od_user od_sys od_rss < <(figures "$times")

# Part 2: llvm-mc of every imported asm, for the target its
# `.amdgcn_target` names (processor, then features as --mattr).
asm_list=$(mktemp)
find "$project/asm" -type f -name '*.s' | sort >"$asm_list"
m=$(wc -l <"$asm_list")
# shellcheck disable=SC2016
/usr/bin/time -v -o "$times" xargs -a "$asm_list" -d '\n' -P "$jobs" -n 1 bash -c '
    t=$(grep -m1 -o "\.amdgcn_target \"[^\"]*\"" "$1" | sed "s/.*--//; s/\"//g")
    proc=${t%%:*}
    mattr=""
    if [ "$t" != "$proc" ]; then
        IFS=: read -ra fs <<<"${t#*:}"
        for f in "${fs[@]}"; do mattr="$mattr,${f: -1}${f%?}"; done
    fi
    # gfx11 and gfx12 code is lifted (and built) with 16-bit register halves.
    case $proc in gfx11* | gfx12*) mattr="$mattr,+real-true16" ;; esac
    [ -z "$mattr" ] || mattr="--mattr=${mattr#,}"
    exec "$0" --triple=amdgcn-amd-amdhsa --mcpu="$proc" $mattr --filetype=obj -o /dev/null "$1"
' "$llvm/llvm-mc" 2>"$project/floor-mc.err" || {
    echo "aiter-import.sh: llvm-mc failed on some imported asm; see $project/floor-mc.err" >&2
}
read -r mc_wall mc_user mc_sys mc_rss < <(figures "$times")
rm -f "$asm_list"

floor=$(awk -v a="$od_wall" -v b="$mc_wall" 'BEGIN { printf "%.1f", a + b }')
ratio=$(awk -v i="$import_wall" -v f="$floor" 'BEGIN { printf "%.2f", i / f }')
kernels=$(grep -c '^\[\[kernel\]\]' "$project/kernels.toml" || true)
sources=$(grep -c '^\[\[kernel.source\]\]' "$project/kernels.toml" || true)
echo
echo "$n objects → $kernels kernels, $sources sources; $m asm files; $jobs cores"
echo
echo "| step | wall (s) | user (s) | system (s) | peak RSS (MiB) |"
echo "|---|---|---|---|---|"
printf '| gcn-patch import | %s | %s | %s | %d |\n' "$import_wall" "$import_user" "$import_sys" $((import_rss / 1024))
printf '| floor: llvm-objdump -d, every object | %s | %s | %s | %d |\n' "$od_wall" "$od_user" "$od_sys" $((od_rss / 1024))
printf '| floor: llvm-mc, every imported asm | %s | %s | %s | %d |\n' "$mc_wall" "$mc_user" "$mc_sys" $((mc_rss / 1024))
printf '| floor (the two) | %s | | | |\n' "$floor"
echo
echo "import / floor: $ratio"
