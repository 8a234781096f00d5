#!/usr/bin/env python3
"""Triton 3.9 kernels for gcn-emu's tests (gcn-emu/tests/it/triton.rs), compiled
without a GPU: `tl.dot` matmuls on 8-bit inputs, which Triton lowers to the
fp8/bf8 and i8 MFMA of each target (gfx942: FNUZ fp8 e4m3fnuz/e5m2fnuz;
gfx950: OCP fp8 e4m3fn/e5m2). Writes <kernel>-<arch>/{<kernel>.hsaco,<kernel>.json}
(the .json: Triton's launch metadata, shared and num_warps), and the fp8
reference tables fp8-values.txt and fp8-encode.txt (from ml_dtypes).
Usage: python3 gcn-emu/tests/triton/generate.py"""
import json, os, sys
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget

@triton.jit
def mm8(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=c.dtype.element_ty)
    for k in range(0, K, BK):
        av = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        bv = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(av, bv)
    tl.store(c + rm[:, None] * N + rn[None, :], acc)

CONSTS = {"BM": 32, "BN": 32, "BK": 64}
# (name, arch, a type, b type, c type)
KERNELS = [
    ("mm_fp8", "gfx942", "*fp8e4b8", "*fp8e4b8", "*fp32"),
    ("mm_bf8", "gfx942", "*fp8e5b16", "*fp8e5b16", "*fp32"),
    ("mm_fp8", "gfx950", "*fp8e4nv", "*fp8e4nv", "*fp32"),
    ("mm_bf8", "gfx950", "*fp8e5", "*fp8e5", "*fp32"),
    ("mm_i8", "gfx942", "*i8", "*i8", "*i32"),
    ("mm_i8", "gfx950", "*i8", "*i8", "*i32"),
]

def tables(root):
    """fp8-values.txt: the value of each of the 256 codes of every 8-bit format,
    from ml_dtypes (an independent implementation: `pip install ml-dtypes`), as
    f32 bit patterns; and fp8-encode.txt: f32 inputs and their round-to-nearest-
    even encodings (in range only)."""
    import numpy as np, ml_dtypes
    fmts = [("e4m3fnuz", ml_dtypes.float8_e4m3fnuz), ("e5m2fnuz", ml_dtypes.float8_e5m2fnuz),
            ("e4m3fn", ml_dtypes.float8_e4m3fn), ("e5m2", ml_dtypes.float8_e5m2)]
    with open(os.path.join(root, "fp8-values.txt"), "w") as f:
        f.write("# format, then the f32 bits of codes 0..255 (ml_dtypes %s)\n" % ml_dtypes.__version__)
        for name, t in fmts:
            v = np.arange(256, dtype=np.uint8).view(t).astype(np.float32).view(np.uint32)
            f.write(name + " " + " ".join("%08x" % x for x in v) + "\n")
    rng = np.random.default_rng(7)
    with open(os.path.join(root, "fp8-encode.txt"), "w") as f:
        f.write("# format, then pairs f32-bits:code (round to nearest even, ml_dtypes %s)\n" % ml_dtypes.__version__)
        for name, t in fmts:
            mx = float(ml_dtypes.finfo(t).max)
            tiny = float(ml_dtypes.finfo(t).smallest_subnormal)
            xs = np.concatenate([
                rng.uniform(-mx, mx, 64), rng.uniform(-1, 1, 64) * 4, rng.uniform(-8, 8, 64) * tiny,
                # the midpoints between neighbouring codes: ties to even
                (np.arange(0, 127, dtype=np.uint8).view(t).astype(np.float64)
                 + np.arange(1, 128, dtype=np.uint8).view(t).astype(np.float64)) / 2,
                [0.0, -0.0, mx, -mx]]).astype(np.float32)
            xs = xs[np.isfinite(xs) & (np.abs(xs) <= mx)]
            codes = xs.astype(t).view(np.uint8)
            f.write(name + " " + " ".join("%08x:%02x" % (x, c) for x, c in zip(xs.view(np.uint32), codes)) + "\n")

def main():
    if triton.__version__ != "3.9.0":
        sys.exit(f"generate.py: need triton 3.9.0 (found {triton.__version__}); run bash tests/setup.sh")
    root = os.path.dirname(os.path.abspath(__file__))
    tables(root)
    for name, arch, ta, tb, tc in KERNELS:
        sig = {"a": ta, "b": tb, "c": tc, "M": "i32", "N": "i32", "K": "i32",
               "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
        src = triton.compiler.ASTSource(fn=mm8, signature=sig, constexprs=CONSTS)
        k = triton.compile(src, target=GPUTarget("hip", arch, 64))
        out = os.path.join(root, f"{name}-{arch}")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{name}.hsaco"), "wb") as f:
            f.write(k.asm["hsaco"])
        md = {key: getattr(k.metadata, key) for key in ("name", "shared", "num_warps", "arch")}
        md["signature"] = sig
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump(md, f, indent=1, sort_keys=True, default=str)
            f.write("\n")
        mfma = sorted({l.split()[0] for l in k.asm["amdgcn"].splitlines()
                       if l.strip().startswith(("v_mfma", "ds_read_b64_tr"))})
        print(f"{name}-{arch}: shared={md['shared']} num_warps={md['num_warps']} {' '.join(mfma)}")

if __name__ == "__main__":
    main()
