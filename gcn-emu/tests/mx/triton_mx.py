#!/usr/bin/env python3
"""Triton 3.9 `tl.dot_scaled` kernels for gcn-emu/tests/it/gfx950.rs, compiled
without a GPU for gfx950, where Triton lowers them to the block-scaled MFMA
`v_mfma_scale_f32_{32x32x64,16x16x128}_f8f6f4` (an independent compiler's
placement of the fp4/fp8 elements and their E8M0 scales in the lanes).
Writes <kernel>/{<kernel>.hsaco,<kernel>.json} here (the .json: Triton's
launch metadata, shared and num_warps).
Usage: python3 gcn-emu/tests/mx/triton_mx.py"""
import json, os, sys
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
import triton, triton.language as tl
from triton.backends.compiler import GPUTarget

@triton.jit
def dot_scaled(a, b, sa, sb, c, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
               FA: tl.constexpr, FB: tl.constexpr):
    # A: [BM, BK / PA] bytes (fp4: two elements a byte, the even K in the low
    # nibble), B: [BK / PB, BN]; scales [BM, BK / 32] and [BN, BK / 32] (E8M0).
    PA: tl.constexpr = 2 if FA == "e2m1" else 1
    PB: tl.constexpr = 2 if FB == "e2m1" else 1
    rm = tl.arange(0, BM)
    rn = tl.arange(0, BN)
    ka = tl.arange(0, BK // PA)
    kb = tl.arange(0, BK // PB)
    rs = tl.arange(0, BK // 32)
    av = tl.load(a + rm[:, None] * (BK // PA) + ka[None, :])
    bv = tl.load(b + kb[:, None] * BN + rn[None, :])
    sav = tl.load(sa + rm[:, None] * (BK // 32) + rs[None, :])
    sbv = tl.load(sb + rn[:, None] * (BK // 32) + rs[None, :])
    acc = tl.dot_scaled(av, sav, FA, bv, sbv, FB)
    tl.store(c + rm[:, None] * BN + rn[None, :], acc)

# (name, BM, BN, BK, A format, B format)
KERNELS = [
    ("scaled_fp4_32", 32, 32, 128, "e2m1", "e2m1"),
    ("scaled_fp4_16", 16, 16, 256, "e2m1", "e2m1"),
    ("scaled_fp8_fp4_32", 32, 32, 128, "e4m3", "e2m1"),
    ("scaled_fp8_fp4_16", 16, 16, 256, "e4m3", "e2m1"),
    ("scaled_fp8_32", 32, 32, 128, "e4m3", "e4m3"),
    ("scaled_bf8_fp8_16", 16, 16, 256, "e5m2", "e4m3"),
]

def main():
    if triton.__version__ != "3.9.0":
        sys.exit(f"triton_mx.py: need triton 3.9.0 (found {triton.__version__}); run bash tests/setup.sh")
    root = os.path.dirname(os.path.abspath(__file__))
    for name, bm, bn, bk, fa, fb in KERNELS:
        ty = {"e4m3": "*fp8e4nv", "e5m2": "*fp8e5"}
        sig = {"a": ty.get(fa, "*u8"), "b": ty.get(fb, "*u8"), "sa": "*u8", "sb": "*u8", "c": "*fp32", "BM": "constexpr",
               "BN": "constexpr", "BK": "constexpr", "FA": "constexpr", "FB": "constexpr"}
        consts = {"BM": bm, "BN": bn, "BK": bk, "FA": fa, "FB": fb}
        src = triton.compiler.ASTSource(fn=dot_scaled, signature=sig, constexprs=consts)
        k = triton.compile(src, target=GPUTarget("hip", "gfx950", 64))
        out = os.path.join(root, name)
        os.makedirs(out, exist_ok=True)
        with open(os.path.join(out, f"{name}.hsaco"), "wb") as f:
            f.write(k.asm["hsaco"])
        md = {key: getattr(k.metadata, key) for key in ("name", "shared", "num_warps", "arch")}
        md["signature"] = sig
        md["constexprs"] = consts
        with open(os.path.join(out, f"{name}.json"), "w") as f:
            json.dump(md, f, indent=1, sort_keys=True, default=str)
            f.write("\n")
        ops = sorted({l.split()[0] for l in k.asm["amdgcn"].splitlines()
                      if l.strip().startswith(("v_mfma", "ds_read_b64_tr"))})
        print(f"{name}: shared={md['shared']} num_warps={md['num_warps']} {' '.join(ops)}")

if __name__ == "__main__":
    main()
