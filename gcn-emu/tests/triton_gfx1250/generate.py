#!/usr/bin/env python3
"""Triton 3.9 `tl.dot_scaled` kernels for gfx1250 (gcn-emu/tests/it/gfx1250_wmma.rs),
compiled without a GPU: one Mx16x128 block-scaled product (M 16 or 32) (E8M0 scales, one per
32 K), which Triton lowers to gfx1250's `v_wmma_scale_f32_16x16x128_f8f6f4`
with the operands' formats as its modifiers. A is M x K codes (fp4: two per byte
along K, low nibble first), B is K x N (fp4: two per byte along K), the scales
M x K/32 and N x K/32 bytes, C M x N f32, row-major. One wave32 (num_warps 1).
Writes ds_<a>_<b>-gfx1250 (M 16) and ds32_<a>_<b>-gfx1250 (M 32), each {ds.hsaco,ds.json}.
Usage: python3 gcn-emu/tests/triton_gfx1250/generate.py"""
import json, os, sys
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget

@triton.jit
def ds(a_ptr, b_ptr, as_ptr, bs_ptr, c_ptr, FMT_A: tl.constexpr, FMT_B: tl.constexpr, M: tl.constexpr):
    N: tl.constexpr = 16
    K: tl.constexpr = 128
    PA: tl.constexpr = 2 if FMT_A == "e2m1" else 1
    PB: tl.constexpr = 2 if FMT_B == "e2m1" else 1
    rm = tl.arange(0, M)
    rn = tl.arange(0, N)
    a = tl.load(a_ptr + rm[:, None] * (K // PA) + tl.arange(0, K // PA)[None, :])
    b = tl.load(b_ptr + tl.arange(0, K // PB)[:, None] * N + rn[None, :])
    sa = tl.load(as_ptr + rm[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    sb = tl.load(bs_ptr + rn[:, None] * (K // 32) + tl.arange(0, K // 32)[None, :])
    c = tl.dot_scaled(a, sa, FMT_A, b, sb, FMT_B)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], c)

# Triton 3.9's dot_scaled formats (e2m3/e3m2 are "NYI" for gfx1250's lhs),
# and M: 16, or 32 (two WMMAs, the second's B scales from lanes 16-31,
# `matrix_b_scale:MATRIX_SCALE_ROW1`).
PAIRS = [("e4m3", "e4m3", 16), ("e5m2", "e4m3", 16), ("e2m1", "e2m1", 16), ("e4m3", "e2m1", 16),
         ("e2m1", "e2m1", 32)]

def main():
    if triton.__version__ != "3.9.0":
        sys.exit(f"generate.py: need triton 3.9.0 (found {triton.__version__}); run bash tests/setup.sh")
    root = os.path.dirname(os.path.abspath(__file__))
    for fa, fb, m in PAIRS:
        sig = {"a_ptr": "*u8", "b_ptr": "*u8", "as_ptr": "*u8", "bs_ptr": "*u8", "c_ptr": "*fp32",
               "FMT_A": "constexpr", "FMT_B": "constexpr", "M": "constexpr"}
        src = triton.compiler.ASTSource(fn=ds, signature=sig, constexprs={"FMT_A": fa, "FMT_B": fb, "M": m})
        k = triton.compile(src, target=GPUTarget("hip", "gfx1250", 32), options={"num_warps": 1})
        name = f"ds_{fa}_{fb}" if m == 16 else f"ds{m}_{fa}_{fb}"
        out = os.path.join(root, f"{name}-gfx1250")
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, "ds.hsaco"), "wb") as f:
            f.write(k.asm["hsaco"])
        md = {key: getattr(k.metadata, key) for key in ("name", "shared", "num_warps", "arch")}
        md["signature"] = sig
        with open(os.path.join(out, "ds.json"), "w") as f:
            json.dump(md, f, indent=1, sort_keys=True, default=str)
            f.write("\n")
        wmma = sorted({l.strip() for l in k.asm["amdgcn"].splitlines() if l.strip().startswith("v_wmma")})
        print(f"{name}-gfx1250: shared={md['shared']} {' | '.join(wmma)}")

if __name__ == "__main__":
    main()
