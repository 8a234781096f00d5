#!/usr/bin/env bash
# Runs `gcn-patch run OBJECT --list-unsupported` over every gfx942 and gfx950
# code object of aiter's hsa/ tree (not only the sample in tests/corpus/aiter)
# and prints, per architecture: objects, kernels, instructions, how many
# objects exit 0 (the emulator implements every instruction form of every
# kernel, each probed without a fault), 1 (something is missing) and 2 (bad
# input), the missing mnemonics, and the time taken.
# Not part of the suite (a release build, then minutes on two cores).
#
# Usage: [AITER_ARCHS=gfx950] tests/corpus/aiter-unsupported.sh AITER_REPO
#   AITER_REPO: a git repository of https://github.com/ROCm/aiter (a clone or
#   a bare mirror); hsa/ is read from its HEAD with `git archive`.
#   AITER_ARCHS: the architectures to survey (default: gfx942 gfx950).
set -euo pipefail
repo=${1:?usage: tests/corpus/aiter-unsupported.sh AITER_REPO (a clone of https://github.com/ROCm/aiter)}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$repo" archive HEAD hsa/gfx942 hsa/gfx950 | tar -x -C "$work"
bash tests/setup.sh
cargo build --release --locked -p gcn-patch --features cli
bin=$PWD/target/release/gcn-patch
echo "aiter $(git -C "$repo" rev-parse HEAD)"
for arch in ${AITER_ARCHS:-gfx942 gfx950}; do
    start=$(date +%s)
    find "$work/hsa/$arch" -name '*.co' | sort > "$work/$arch.list"
    # One line per object: exit code, then the report (stdout) on one line.
    xargs -a "$work/$arch.list" -P "$(nproc)" -I{} sh -c \
        '"$0" run "$1" --list-unsupported > "$1.out" 2> "$1.err"; echo "$? $1"' "$bin" {} \
        > "$work/$arch.codes"
    secs=$(( $(date +%s) - start ))
    objects=$(wc -l < "$work/$arch.list")
    exit0=$(grep -c '^0 ' "$work/$arch.codes" || true)
    exit1=$(grep -c '^1 ' "$work/$arch.codes" || true)
    exit2=$(grep -vc '^[01] ' "$work/$arch.codes" || true)
    kernels=0
    instructions=0
    while read -r code obj; do
        line=$(tail -n 1 "$obj.out" 2>/dev/null || true)
        k=$(sed -n 's/.* of \([0-9]*\) kernel(s).*/\1/p; s/.*instructions in \([0-9]*\) kernel(s).*/\1/p' <<< "$line" | head -n 1)
        n=$(sed -n 's/.*kernel(s) (\([0-9]*\) instructions).*/\1/p; s/.* of \([0-9]*\) instructions in .*/\1/p' <<< "$line" | head -n 1)
        kernels=$(( kernels + ${k:-0} ))
        instructions=$(( instructions + ${n:-0} ))
    done < "$work/$arch.codes"
    echo "$arch: $objects objects, $kernels kernels, $instructions instructions; exit 0: $exit0, exit 1: $exit1, exit 2: $exit2; ${secs}s"
    find "$work/hsa/$arch" -name '*.co.out' -exec cat {} + \
        | sed -n 's/^unsupported: \([^ ]*\) .*/\1/p' | sort | uniq -c | sort -rn | sed 's/^/  missing: /' || true
    { grep -v '^0 ' "$work/$arch.codes" || true; } | head -n 20 | while read -r code obj; do
        echo "  exit $code: ${obj#"$work"/}: $(head -c 300 "$obj.err")"
    done
done
