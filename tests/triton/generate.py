#!/usr/bin/env python3
"""Regenerates the Triton corpus without a GPU (issue 10): add, tl.dot matmul and softmax
compiled by triton==3.9.0 (see tests/setup.sh) for gfx942, gfx950, gfx90a, gfx1100, gfx1201.
Writes <kernel>-<arch>/{<kernel>.amdgcn,<kernel>.hsaco,<kernel>.json}; the .json holds Triton's
launch metadata (shared, num_warps, hash, ...). Usage: python3 tests/triton/generate.py"""
import json, os, sys
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget

@triton.jit
def add(x, y, o, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

@triton.jit
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        av = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        bv = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(av, bv)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)

@triton.jit
def softmax(x, o, stride, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    v = tl.load(x + row * stride + cols, mask=cols < n, other=-float("inf"))
    e = tl.exp(v - tl.max(v, axis=0))
    tl.store(o + row * stride + cols, e / tl.sum(e, axis=0), mask=cols < n)

KERNELS = {
    "add": (add, {"x": "*fp32", "y": "*fp32", "o": "*fp32", "n": "i32", "BLOCK": "constexpr"},
            {"BLOCK": 1024}),
    "matmul": (matmul, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                        "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
               {"BM": 64, "BN": 64, "BK": 32}),
    "softmax": (softmax, {"x": "*fp32", "o": "*fp32", "stride": "i32", "n": "i32",
                          "BLOCK": "constexpr"}, {"BLOCK": 1024}),
}
ARCHS = {"gfx942": 64, "gfx950": 64, "gfx90a": 64, "gfx1100": 32, "gfx1201": 32}

def main():
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"  # no machine-specific source paths in the corpus
    if triton.__version__ != "3.9.0":
        sys.exit(f"generate.py: need triton 3.9.0 (found {triton.__version__}); run bash tests/setup.sh")
    root = os.path.dirname(os.path.abspath(__file__))
    for name, (fn, sig, consts) in KERNELS.items():
        for arch, wave in ARCHS.items():
            src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts)
            k = triton.compile(src, target=GPUTarget("hip", arch, wave))
            out = os.path.join(root, f"{name}-{arch}")
            os.makedirs(out, exist_ok=True)
            with open(os.path.join(out, f"{name}.amdgcn"), "w") as f:
                f.write(k.asm["amdgcn"].replace(root, "tests/triton"))
            with open(os.path.join(out, f"{name}.hsaco"), "wb") as f:
                f.write(k.asm["hsaco"])
            md = {key: getattr(k.metadata, key) for key in
                  ("name", "shared", "num_warps", "hash", "warp_size", "arch")
                  if hasattr(k.metadata, key)}
            with open(os.path.join(out, f"{name}.json"), "w") as f:
                json.dump(md, f, indent=1, sort_keys=True, default=str)
                f.write("\n")
            print(f"{name}-{arch}: shared={md.get('shared')} num_warps={md.get('num_warps')}")

if __name__ == "__main__":
    main()
