#!/usr/bin/env bash
# A team's cache on Redis, measured on an imported library: two clones of a
# crate embedding it through gcn-build (feature `remote-cache`), each with
# its own path (hence its own OUT_DIR and local cache), sharing one
# redis-server started here on a free loopback port. Not part of the suite.
#
# Usage: tests/corpus/aiter-remote-cache.sh PROJECT_DIR
#   PROJECT_DIR: an imported project (kernels.toml and asm/), e.g. 290 of
#   aiter's hsa/gfx942 code objects imported with `gcn-patch import`.
#
# Steps, each timed (wall clock of `cargo build`):
#   deps    clone A with the manifest cut to its first kernel and no shared
#           cache: compiles gcn-build and its dependencies (OpenDAL, tokio);
#   cold    clone A, the whole manifest, GCN_BUILD_CACHE=redis://…: every
#           job assembled, objects and job records written to Redis;
#   warm    clone B (a fresh path: no OUT_DIR, no local cache), the same:
#           every job taken from Redis, no assembler run.
# The work directory is a temp dir (GCN_REMOTE_WORK=DIR to keep it).
set -euo pipefail
project=${1:?usage: tests/corpus/aiter-remote-cache.sh PROJECT_DIR}
[ -f "$project/kernels.toml" ] || { echo "error: $project/kernels.toml not found" >&2; exit 2; }
project=$(cd "$project" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/tests/setup.sh" >/dev/null
if [ -n "${GCN_REMOTE_WORK:-}" ]; then
    work=$GCN_REMOTE_WORK
    mkdir -p "$work"
else
    work=$(mktemp -d)
fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no --daemonize no \
    --dir "$work" --logfile "$work/redis.log" &
redis_pid=$!
cleanup() {
    kill "$redis_pid" 2>/dev/null || true
    [ -n "${GCN_REMOTE_WORK:-}" ] || rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.1; done
export CARGO_TARGET_DIR=$work/target CARGO_INCREMENTAL=0
unset GCN_BUILD_CACHE_DIR GCN_BUILD_CACHE

make_clone() { # NAME: a crate at $work/NAME embedding the project
    local crate=$work/$1
    rm -rf "$crate"
    mkdir -p "$crate/src"
    cp -al "$project/." "$crate/" 2>/dev/null || cp -a "$project/." "$crate/"
    rm -f "$crate/kernels.toml"
    cp "$project/kernels.toml" "$crate/kernels.full.toml"
    cp "$root/Cargo.lock" "$crate/Cargo.lock"
    cat >"$crate/Cargo.toml" <<EOF
[package]
name = "aiter-remote"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
gcn-embed = { path = "$root/gcn-embed" }

[build-dependencies]
gcn-build = { path = "$root/gcn-build", features = ["remote-cache"] }

[profile.dev.build-override]
opt-level = 3

[workspace]
EOF
    echo 'fn main() { gcn_build::Build::new().manifest("kernels.toml").compile(); }' >"$crate/build.rs"
    printf 'gcn_embed::include_kernels!();\nfn main() { println!("{} kernels", KERNELS.len()); }\n' >"$crate/src/main.rs"
}

timed() { # STEP DIR: `cargo build` in DIR, wall seconds to $work/STEP.time
    local step=$1 dir=$2
    (cd "$dir" && /usr/bin/time -f '%e' -o "$work/$step.time" cargo build --offline >"$work/$step.log" 2>&1) || {
        echo "error: step '$step' failed" >&2
        tail -40 "$work/$step.log" >&2
        exit 1
    }
}
status() { grep -h '^gcn-build: ' "$(ls -t "$CARGO_TARGET_DIR"/debug/build/aiter-remote-*/output | head -1)" | tail -1; }
# What the last build script run did, job by job: "N assembled", "N shared-cache".
states() { cut -d' ' -f1 "$(dirname "$(ls -t "$CARGO_TARGET_DIR"/debug/build/aiter-remote-*/output | head -1)")/out/gcn-build/report.txt" | sort | uniq -c | awk '{printf "%s%s %s", sep, $1, $2; sep=", "}'; }

make_clone a
make_clone b
sources=$(grep -c '^\[\[kernel.source\]\]' "$work/a/kernels.full.toml")
echo "project: $project ($sources sources); redis-server on 127.0.0.1:$port"
echo "gcn-patch $(git -C "$root" rev-parse --short HEAD), $(rustc --version), $(nproc) CPUs"
awk '/^\[\[kernel\]\]/ { n++ } n < 2' "$work/a/kernels.full.toml" >"$work/a/kernels.toml"
timed deps "$work/a"
echo "deps: $(cat "$work/deps.time") s"
export GCN_BUILD_CACHE=redis://127.0.0.1:$port
# Cargo gives the package the same OUT_DIR in both clones (a path package's
# hash does not hold its directory): clean it before each step, so each
# starts with no OUT_DIR and no local cache, as in a fresh target directory.
(cd "$work/a" && cargo clean --offline -p aiter-remote >/dev/null 2>&1) || true
cp "$work/a/kernels.full.toml" "$work/a/kernels.toml"
timed cold "$work/a"
echo "cold (clone A, empty Redis): $(cat "$work/cold.time") s; $(status); jobs: $(states)"
(cd "$work/b" && cargo clean --offline -p aiter-remote >/dev/null 2>&1) || true
cp "$work/b/kernels.full.toml" "$work/b/kernels.toml"
timed warm "$work/b"
echo "warm (clone B, from Redis): $(cat "$work/warm.time") s; $(status); jobs: $(states)"
echo "redis: $(redis-cli -p "$port" dbsize) keys, $(redis-cli -p "$port" info memory | grep '^used_memory_human' | tr -d '\r')"
