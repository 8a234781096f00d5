#!/usr/bin/env bash
# Lifts and rebuilds every code object of aiter's hsa/ tree (about 2,900 .co
# files for gfx942, gfx950 and gfx1250), not only the sample in
# tests/corpus/aiter, and prints the same table as the suite's lift test.
# Not part of the suite: about 10 minutes on two cores (a release build).
#
# Usage: tests/corpus/aiter-survey.sh AITER_REPO
#   AITER_REPO: a git repository of https://github.com/ROCm/aiter (a clone or
#   a bare mirror); hsa/ is read from its HEAD with `git archive`.
set -euo pipefail
repo=${1:?usage: tests/corpus/aiter-survey.sh AITER_REPO (a clone of https://github.com/ROCm/aiter)}
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
git -C "$repo" archive HEAD hsa/gfx942 hsa/gfx950 hsa/gfx1250 | tar -x -C "$work"
echo "aiter $(git -C "$repo" rev-parse HEAD): $(find "$work/hsa" -name '*.co' | wc -l) code objects"
bash tests/setup.sh
GCN_AITER_HSA="$work/hsa" cargo test --release --locked -p gcn-patch --test it \
    -- --ignored --exact lift::aiter_full_survey_rebuilds_byte_identically --nocapture
