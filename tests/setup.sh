#!/usr/bin/env bash
# Installs the pinned external tools gcn-patch's demo and tests use. Idempotent:
# does nothing when they are already present.
#   - LLVM 22 with the AMDGPU target: clang-22, ld.lld-22, llvm-objdump-22, llvm-mc-22 and
#     llvm-mca-22 (gcn-emu/tests/isa.rs) (Debian packages)
#   - GNU patch (tests compare our diff application with it)
#   - redis-server and nginx with its WebDAV module (nginx-light): the shared
#     cache's tests start their own servers on free loopback ports
#   - chromium (Debian package): `gcn-patch profile --html` pages are rendered
#     headless in it (gcn-patch/tests/it/profile_reports.rs)
#   - iree-compile from pip iree-base-compiler==3.13.0 (corpus regeneration and the
#     substitution integration test)
#   - triton==3.9.0 from pip (Triton corpus regeneration: tests/triton/generate.py)
#   - ml-dtypes==0.5.4 from pip (the MX format tables: gcn-emu/tests/mx/generate.py)
set -euo pipefail

IREE_VERSION=3.13.0
TRITON_VERSION=3.9.0
ML_DTYPES_VERSION=0.5.4
LLVM_MAJOR=22

as_root() {
    if [ "$(id -u)" = 0 ]; then "$@"; elif command -v sudo >/dev/null; then sudo "$@"; else
        echo "setup: need root to run: $*" >&2; exit 1; fi
}

need_apt=()
for tool in clang-$LLVM_MAJOR ld.lld-$LLVM_MAJOR llvm-objdump-$LLVM_MAJOR llvm-mc-$LLVM_MAJOR llvm-mca-$LLVM_MAJOR; do
    command -v "$tool" >/dev/null || need_apt=(clang-$LLVM_MAJOR lld-$LLVM_MAJOR llvm-$LLVM_MAJOR)
done
command -v patch >/dev/null || need_apt+=(patch)
command -v redis-server >/dev/null || need_apt+=(redis-server)
command -v chromium >/dev/null || need_apt+=(chromium)
nginx_bin=$(command -v nginx || echo /usr/sbin/nginx)
"$nginx_bin" -V 2>&1 | grep -q -- --with-http_dav_module || need_apt+=(nginx-light)
if [ ${#need_apt[@]} -gt 0 ]; then
    echo "setup: installing ${need_apt[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    if ! as_root apt-get install -y "${need_apt[@]}"; then
        as_root apt-get update
        as_root apt-get install -y "${need_apt[@]}"
    fi
fi

iree_ok() { command -v iree-compile >/dev/null && iree-compile --version 2>/dev/null | grep -q "version ${IREE_VERSION}"; }
if ! iree_ok; then
    echo "setup: installing iree-base-compiler==${IREE_VERSION} with pip"
    python3 -m pip install --quiet "iree-base-compiler==${IREE_VERSION}"
    hash -r
fi
if ! iree_ok; then
    echo "setup: iree-compile ${IREE_VERSION} is not on PATH after pip install;" >&2
    echo "       add pip's script directory (python3 -m site --user-base)/bin to PATH" >&2
    exit 1
fi
triton_ok() { python3 -c "import triton, sys; sys.exit(triton.__version__ != '${TRITON_VERSION}')" 2>/dev/null; }
if ! triton_ok; then
    echo "setup: installing triton==${TRITON_VERSION} with pip"
    python3 -m pip install --quiet "triton==${TRITON_VERSION}"
fi
if ! triton_ok; then
    echo "setup: python3 cannot import triton ${TRITON_VERSION} after pip install" >&2
    exit 1
fi
ml_dtypes_ok() { python3 -c "import ml_dtypes, sys; sys.exit(ml_dtypes.__version__ != '${ML_DTYPES_VERSION}')" 2>/dev/null; }
if ! ml_dtypes_ok; then
    echo "setup: installing ml-dtypes==${ML_DTYPES_VERSION} with pip"
    python3 -m pip install --quiet "ml-dtypes==${ML_DTYPES_VERSION}"
fi
if ! ml_dtypes_ok; then
    echo "setup: python3 cannot import ml_dtypes ${ML_DTYPES_VERSION} after pip install" >&2
    exit 1
fi
echo "setup: $(clang-$LLVM_MAJOR --version | head -1); $(iree-compile --version | grep -m1 'compiler version')"
