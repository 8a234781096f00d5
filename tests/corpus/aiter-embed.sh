#!/usr/bin/env bash
# Embeds a whole imported library in a Rust crate through gcn-build and
# measures it: the cold `cargo build`, the cached rebuild, the rustc time of
# the generated file and the binary size. Not part of the suite (all of aiter:
# 2,909 sources, tens of minutes on two cores and, with an engine that holds
# every document, about 15 GB).
#
# Usage: tests/corpus/aiter-embed.sh PROJECT_DIR
#   PROJECT_DIR: an imported project (kernels.toml and asm/), e.g. all of
#   aiter's hsa/ imported with `gcn-patch import $(cat cos.txt)`.
#
# The crate is made in a temp dir (GCN_EMBED_WORK=DIR to choose it and keep
# it): the project's files hard-linked (copied across file systems), a
# Cargo.toml depending on this checkout's gcn-embed and gcn-build by path,
# build.rs calling gcn-build on kernels.toml, and src/main.rs, which looks
# every kernel up by name and prints what it embeds. Set CARGO_TARGET_DIR to
# reuse compiled dependencies across runs (the kernels stay cold: the crate's
# path, hence its OUT_DIR, is new each run).
#
# Steps, each timed (wall clock; peak RSS of the largest process):
#   deps    `cargo build` with the manifest cut to its first kernel: compiles
#           gcn-build and its dependencies, once per target directory;
#   cold    the whole manifest: the build script assembles every job, then
#           rustc compiles the generated file;
#   rustc   src/main.rs touched: rustc and the linker only, with the
#           generated file unchanged (CARGO_INCREMENTAL=0 throughout, so this
#           is a full compile of the generated Rust);
#   noop    `cargo build` again: Cargo finds nothing changed (goal < 1 s);
#   rerun   kernels.toml touched: the build script reruns, every job takes
#           its recorded result (job fingerprints: no source read, 0
#           assembled), the generated file is left alone, and the crate is
#           compiled again; the build script's own time is read from
#           `cargo build --timings`;
#   edit    a rule added to the last kernel's source (`s_nop 0` before its
#           `s_endpgm`): that one job runs and is assembled, every other
#           job takes its record (build script time from `--timings`).
#   (GCN_EMBED_SKIP_RERUN=1 skips rerun and edit.)
# Between noop and rerun the program runs: it looks every kernel up by name
# and prints the time of that against a linear scan.
set -euo pipefail
project=${1:?usage: tests/corpus/aiter-embed.sh PROJECT_DIR (an imported project: kernels.toml and asm/)}
[ -f "$project/kernels.toml" ] || {
    echo "error: $project/kernels.toml not found" >&2
    echo "help: import the library first, e.g. gcn-patch import -m DIR/kernels.toml \$(find aiter/hsa -name '*.co')" >&2
    exit 2
}
project=$(cd "$project" && pwd)
root=$(cd "$(dirname "$0")/../.." && pwd)
bash "$root/tests/setup.sh" >/dev/null
if [ -n "${GCN_EMBED_WORK:-}" ]; then
    work=$GCN_EMBED_WORK
    mkdir -p "$work"
else
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
fi
crate=$work/aiter-embed
target=${CARGO_TARGET_DIR:-$work/target}
export CARGO_TARGET_DIR=$target CARGO_INCREMENTAL=0
rm -rf "$crate"
mkdir -p "$crate"
cp -al "$project/." "$crate/" 2>/dev/null || cp -a "$project/." "$crate/"
rm -f "$crate/kernels.toml"
cp "$project/kernels.toml" "$crate/kernels.full.toml"
mkdir -p "$crate/src"
cp "$root/Cargo.lock" "$crate/Cargo.lock"
cat >"$crate/Cargo.toml" <<EOF
[package]
name = "aiter-embed"
version = "0.1.0"
edition = "2021"
publish = false

[dependencies]
gcn-embed = { path = "$root/gcn-embed" }

[build-dependencies]
gcn-build = { path = "$root/gcn-build" }

# As the guide recommends (docs/src/guide/rust-crate.md).
[profile.dev.build-override]
opt-level = 3

[workspace]
EOF
cat >"$crate/build.rs" <<'EOF'
fn main() {
    gcn_build::Build::new().manifest("kernels.toml").compile();
}
EOF
cat >"$crate/src/main.rs" <<'EOF'
//! Every kernel of the library, embedded: each is found by name.
gcn_embed::include_kernels!();

fn main() {
    let (mut objects, mut bytes) = (0usize, 0usize);
    for k in KERNELS {
        objects += k.objects.len();
        bytes += k.objects.iter().map(|o| o.bytes.len()).sum::<usize>();
    }
    KERNELS.check().expect("a well-formed kernel table");
    let start = std::time::Instant::now();
    for k in KERNELS {
        let found = KERNELS.by_name(k.name).expect("every kernel is found by name");
        assert!(std::ptr::eq(found, k), "`{}` found another kernel", k.name);
    }
    let binary = start.elapsed();
    assert!(KERNELS.by_name("no_such_kernel").is_none());
    // What a linear scan (the lookup before issue 25) costs on the same names.
    let start = std::time::Instant::now();
    for k in KERNELS {
        let found = KERNELS.iter().find(|x| x.name == k.name);
        assert!(found.is_some());
    }
    let linear = start.elapsed();
    println!(
        "{} kernels, {objects} code objects, {bytes} bytes of code objects embedded; \
         every kernel found by name: {binary:?} for all (binary search), {linear:?} (linear scan)",
        KERNELS.len()
    );
}
EOF

cd "$crate"
# One timed step: writes "<seconds> <peak KiB>" to $work/STEP.time, keeps the log.
timed() {
    local step=$1
    shift
    /usr/bin/time -f '%e %M' -o "$work/$step.time" "$@" >"$work/$step.log" 2>&1 || {
        echo "error: step '$step' failed: $*" >&2
        tail -40 "$work/$step.log" >&2
        exit 1
    }
}
# The newest run of this crate's build script (a shared target dir holds older ones).
build_out() { dirname "$(ls -t "$target"/debug/build/aiter-embed-*/output | head -1)"; }
status_line() { grep -h '^gcn-build: ' "$(build_out)/output" | tail -1; }

kernels=$(grep -c '^\[\[kernel\]\]' kernels.full.toml)
sources=$(grep -c '^\[\[kernel.source\]\]' kernels.full.toml)
echo "project: $project ($kernels kernels, $sources sources)"
echo "crate:   $crate; target dir: $target"
echo "gcn-patch $(git -C "$root" rev-parse --short HEAD), $(rustc --version), $(nproc) CPUs"

awk '/^\[\[kernel\]\]/ { n++ } n < 2' kernels.full.toml >kernels.toml
# Cold means cold: no build of this crate left in the target dir (a reused
# GCN_EMBED_WORK gives the crate the same path, hence the same OUT_DIR), and
# no shared object cache.
cargo clean --offline -p aiter-embed >/dev/null 2>&1 || true
unset GCN_BUILD_CACHE_DIR
timed deps cargo build --offline
read -r deps_s deps_kb <"$work/deps.time"
echo "deps:  ${deps_s}s, peak ${deps_kb} KiB ($(status_line))"

cp kernels.full.toml kernels.toml
timed cold cargo build --offline
read -r cold_s cold_kb <"$work/cold.time"
cold_status=$(status_line)
echo "cold:  ${cold_s}s, peak ${cold_kb} KiB ($cold_status)"
out_dir=$(build_out)/out
generated=$out_dir/gcn_kernels.rs
stamp=$(stat -c %Y.%y "$generated")

touch src/main.rs
timed rustc cargo build --offline
read -r rustc_s rustc_kb <"$work/rustc.time"
echo "rustc: ${rustc_s}s, peak ${rustc_kb} KiB (generated file: $(wc -c <"$generated") bytes, $(wc -l <"$generated") lines)"

timed noop cargo build --offline
read -r noop_s noop_kb <"$work/noop.time"
echo "noop:  ${noop_s}s, peak ${noop_kb} KiB"
if grep -q 'Compiling aiter-embed' "$work/noop.log"; then
    echo "error: the no-op build compiled the crate again" >&2
    exit 1
fi

bin=$target/debug/aiter-embed
embedded=$(find "$out_dir/gcn-build" -path "$out_dir/gcn-build/cache" -prune -o -name '*.hsaco' -printf '%s\n' |
    awk '{ s += $1 } END { print s + 0 }')
strip -o "$work/aiter-embed.stripped" "$bin"
bin_size=$(stat -c %s "$bin")
stripped_size=$(stat -c %s "$work/aiter-embed.stripped")
echo "binary: $bin_size bytes (debug), $stripped_size stripped; embedded code objects: $embedded bytes"
"$bin"

# The build script's run time in the last `cargo build --timings`.
script_seconds() {
    python3 - "$target/cargo-timings/cargo-timing.html" <<'PY'
import json, re, sys
html = open(sys.argv[1]).read()
units = json.loads(re.search(r"const UNIT_DATA = (\[.*?\]);", html, re.S).group(1))
print(next(f"{u['duration']:.2f}" for u in units
           if u["name"] == "aiter-embed" and u.get("mode") == "run-custom-build"))
PY
}
if [ -n "${GCN_EMBED_SKIP_RERUN:-}" ]; then
    rerun_s=- rerun_kb=0 rerun_status="skipped (GCN_EMBED_SKIP_RERUN)"
    rerun_script=- edit_s=- edit_kb=0 edit_script=- edit_status="skipped (GCN_EMBED_SKIP_RERUN)"
else
    touch kernels.toml
    timed rerun cargo build --offline --timings
    read -r rerun_s rerun_kb <"$work/rerun.time"
    rerun_status=$(status_line)
    rerun_script=$(script_seconds || echo "?")
    echo "rerun: ${rerun_s}s (build script ${rerun_script}s), peak ${rerun_kb} KiB ($rerun_status)"
    case $rerun_status in
    *", 0 assembled,"*) ;;
    *)
        echo "error: the rerun assembled code objects again: $rerun_status" >&2
        exit 1
        ;;
    esac
    if [ "$(stat -c %Y.%y "$generated")" != "$stamp" ]; then
        echo "error: the rerun rewrote the unchanged generated file" >&2
        exit 1
    fi
    # One kernel's patch edited: a rule at the end of the manifest belongs
    # to the last kernel's last source.
    printf '\n[[kernel.source.rule]]\ninsert = "s_nop 0"\nbefore = "s_endpgm"\n' >>kernels.toml
    timed edit cargo build --offline --timings
    read -r edit_s edit_kb <"$work/edit.time"
    edit_status=$(status_line)
    edit_script=$(script_seconds || echo "?")
    echo "edit:  ${edit_s}s (build script ${edit_script}s), peak ${edit_kb} KiB ($edit_status)"
    case $edit_status in
    *", 1 assembled,"*) ;;
    *)
        echo "error: the edit of one kernel did not assemble exactly one code object: $edit_status" >&2
        exit 1
        ;;
    esac
fi

cat <<EOF

| step | wall time | peak RSS |
|---|---|---|
| dependencies (gcn-build and its crates, first kernel) | ${deps_s} s | $((deps_kb / 1024)) MiB |
| cold build of $kernels kernels ($sources sources; ${cold_status#gcn-build: }) | ${cold_s} s | $((cold_kb / 1024)) MiB |
| rustc + link of the crate (generated file unchanged) | ${rustc_s} s | $((rustc_kb / 1024)) MiB |
| no-op \`cargo build\` | ${noop_s} s | $((noop_kb / 1024)) MiB |
| build script rerun, everything cached (${rerun_status#gcn-build: }) | ${rerun_s} s (build script ${rerun_script} s) | $((rerun_kb / 1024)) MiB |
| one kernel's patch edited (${edit_status#gcn-build: }) | ${edit_s} s (build script ${edit_script} s) | $((edit_kb / 1024)) MiB |

binary: $bin_size bytes (debug), $stripped_size bytes stripped; the code objects it embeds: $embedded bytes
EOF
