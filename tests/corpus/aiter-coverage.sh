#!/usr/bin/env bash
# The emulator's coverage over every gfx942 and gfx950 code object of aiter's
# hsa/ tree (about 2,900 .co files), not only the sample in tests/corpus/aiter:
# the share of distinct mnemonics gcn-emu implements and the number of kernels
# whose every instruction it implements, per processor and together, with the
# mnemonics that block most kernels. Not part of the suite (minutes on two
# cores); run it niced beside other work:
#
#   nice -n 19 tests/corpus/aiter-coverage.sh AITER_REPO
#
#   AITER_REPO: a git repository of https://github.com/ROCm/aiter (a clone or
#   a bare mirror); hsa/ is read from its HEAD with `git archive`.
#
#   nice -n 19 tests/corpus/aiter-coverage.sh AITER_REPO gfx1250
#
#   surveys aiter's hsa/gfx1250 instead (38 objects, about a minute), with
#   the sample in tests/corpus/aiter/gfx1250 (test aiter_gfx1250_coverage).
set -euo pipefail
repo=${1:?usage: tests/corpus/aiter-coverage.sh AITER_REPO (a clone of https://github.com/ROCm/aiter)}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ "${2:-}" = gfx1250 ]; then
    git -C "$repo" archive HEAD hsa/gfx1250 | tar -x -C "$work"
    echo "aiter $(git -C "$repo" rev-parse HEAD): $(find "$work/hsa" -name '*.co' | wc -l) gfx1250 code objects"
    bash tests/setup.sh
    GCN_AITER_HSA="$work/hsa" cargo test --locked -p gcn-emu --test it \
        -- --ignored --exact coverage::aiter_gfx1250_coverage --nocapture
    exit
fi
git -C "$repo" archive HEAD hsa/gfx942 hsa/gfx950 | tar -x -C "$work"
echo "aiter $(git -C "$repo" rev-parse HEAD): $(find "$work/hsa" -name '*.co' | wc -l) gfx942/gfx950 code objects"
bash tests/setup.sh
GCN_AITER_HSA="$work/hsa" cargo test --release --locked -p gcn-emu --test it \
    -- --ignored --exact coverage::aiter_full_coverage --nocapture
