#!/usr/bin/env bash
# Whole-library check and build: runs `gcn-patch check` and a cold
# `gcn-patch build` (release) on an imported project under /usr/bin/time -v,
# then the plain baseline over the same asm (every source x target:
# `clang-22 -cc1as` + `ld.lld-22 -shared`, `xargs -P$(nproc)`), and
# prints wall time, CPU time (user + system, tools included), peak RSS (the
# largest process) and each command's wall time over the baseline's.
# Not part of the suite: on all of aiter's 2,909 code objects it runs for
# several minutes (see docs/src/measurements.md, "Whole library: check and
# build").
#
# Usage: tests/corpus/aiter-check-build.sh PROJECT_DIR [MANIFEST]
#   PROJECT_DIR: a project made by `gcn-patch import` (e.g. of every .co of
#   aiter's hsa/); MANIFEST: its manifest, relative to PROJECT_DIR (default
#   kernels.toml). `build` writes the lock next to the manifest: run this on
#   a copy. The code objects go to a temporary directory, removed at the end.
#   GCN_PATCH_BIN=PATH measures that gcn-patch binary (e.g. an older
#   release build) instead of building this checkout's.
set -euo pipefail
usage="usage: tests/corpus/aiter-check-build.sh PROJECT_DIR [MANIFEST]"
project=$(cd "${1:?$usage}" && pwd)
manifest=${2:-kernels.toml}
[ -f "$project/$manifest" ] || { echo "no $manifest in $project ($usage)" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/../.." && pwd)
for tool in clang-22 ld.lld-22; do
    command -v "$tool" >/dev/null || { echo "$tool not found: run bash tests/setup.sh" >&2; exit 2; }
done
[ -x /usr/bin/time ] || { echo "/usr/bin/time not found: apt-get install time" >&2; exit 2; }
if [ -n "${GCN_PATCH_BIN:-}" ]; then
    bin=$GCN_PATCH_BIN
else
    (cd "$repo" && cargo build --release --locked -p gcn-patch --quiet)
    bin=${CARGO_TARGET_DIR:-$repo/target}/release/gcn-patch
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset GCN_BUILD_CACHE_DIR
jobs=$(nproc)

# "NAME wall cpu peak_kib" from a /usr/bin/time -v log.
figures() {
    awk -v name="$1" '
        /User time/ { cpu += $NF }
        /System time/ { cpu += $NF }
        /Maximum resident set size/ { rss = $NF }
        /Elapsed \(wall clock\)/ {
            n = split($NF, t, ":"); wall = 0
            for (i = 1; i <= n; i++) wall = wall * 60 + t[i]
        }
        END { printf "%s %.1f %.1f %d\n", name, wall, cpu, rss }' "$2"
}

run() { # NAME LOG COMMAND...: the command's own output goes to LOG.out
    local name=$1 log=$2
    shift 2
    echo "running $name..." >&2
    if ! /usr/bin/time -v -o "$log" "$@" >"$log.out" 2>&1; then
        echo "$name failed; the end of its output:" >&2
        tail -20 "$log.out" >&2
        exit 1
    fi
    figures "$name" "$log" >>"$work/table"
}

cd "$project"
run "gcn-patch check" "$work/check.time" "$bin" check --manifest "$manifest" -j "$jobs"
run "gcn-patch build" "$work/build.time" "$bin" build --manifest "$manifest" --out "$work/out" -j "$jobs"

# The baseline's inputs: one "N ASM TARGET TRUE16" line per source x target
# (asm paths are relative to the manifest's directory). TRUE16 is 1 when the
# asm names 16-bit register halves (`v1.l`): LLVM 22 takes them only with
# +real-true16, which the clang driver cannot pass to its assembler, so the
# baseline runs what `clang-22 -x assembler` runs, `clang-22 -cc1as` (as the
# engine does), with the feature where needed.
awk -v dir="$(cd "$(dirname "$manifest")" && pwd)" '
    /^\[\[kernel.source\]\]/ { asm = "" }
    /^asm = "/ { asm = $0; sub(/^asm = "/, "", asm); sub(/".*/, "", asm); if (asm !~ /^\//) asm = dir "/" asm }
    /^targets = \[/ && asm != "" {
        t = $0; sub(/^targets = \[/, "", t); sub(/\].*/, "", t); gsub(/[" ]/, "", t)
        n = split(t, ts, ",")
        for (i = 1; i <= n; i++) print ++jobs, asm, ts[i]
    }' "$manifest" | while read -r n asm target; do
    t16=0
    grep -qE '[[:space:],]v[0-9]+\.[lh]([[:space:],]|$)' "$asm" && t16=1
    echo "$n $asm $target $t16"
done >"$work/jobs.txt"
mkdir "$work/plain"
body='f=; [ "$3" = 1 ] && f="-target-feature +real-true16"; clang-22 -cc1as -triple amdgcn-amd-amdhsa -target-cpu "${2%%:*}" $f -filetype obj -o "$0.o" "$1" && ld.lld-22 -shared "$0.o" -o "$0.hsaco"'
run "xargs -P$jobs clang-22 + ld.lld-22" "$work/plain.time" \
    sh -c "cd '$work/plain' && xargs -P$jobs -n4 sh -c '$body' <'$work/jobs.txt'"

echo "$(wc -l <"$work/jobs.txt") jobs, $(ls "$work/plain"/*.hsaco | wc -l) objects by the baseline, $jobs at once"
awk '
    { name[NR] = $0; sub(/ [^ ]+ [^ ]+ [^ ]+$/, "", name[NR]); n = split($0, f, " ")
      wall[NR] = f[n-2]; cpu[NR] = f[n-1]; rss[NR] = f[n] }
    END {
        printf "| %-36s | %9s | %9s | %14s | %12s |\n", "command", "wall (s)", "CPU (s)", "peak RSS (MiB)", "wall / plain"
        printf "|%s|%s|%s|%s|%s|\n", "--------------------------------------", "-----------", "-----------", "----------------", "--------------"
        for (i = 1; i <= NR; i++)
            printf "| %-36s | %9.1f | %9.1f | %14.0f | %12.2f |\n", name[i], wall[i], cpu[i], rss[i] / 1024, wall[i] / wall[NR]
    }' "$work/table"
