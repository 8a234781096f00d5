#!/usr/bin/env python3
"""A Triton layernorm compiled for AMD without a GPU (the Triton guide's quick
start, and the tests' second Triton flow, issue 23).

  layernorm.py DUMP_DIR CACHE_DIR [ARCH] [BLOCK ...]
      compile `layernorm` for ARCH (default gfx942) once per BLOCK (default
      1024) with TRITON_KERNEL_DUMP=1: each specialization is dumped to
      DUMP_DIR/<hash>/layernorm.{ttir,ttgir,llir,amdgcn,hsaco}, its cache
      entry (with layernorm.json, the launch metadata) written under CACHE_DIR.
Prints one line per specialization: `BLOCK=<n> shared=<bytes> hash=<hash>`."""
import os, sys

# Set before importing Triton, which reads its knobs from the environment.
os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"   # the fp-fusion default, set explicitly (else Triton warns)
os.environ["TRITON_KERNEL_DUMP"] = "1"
os.environ["TRITON_DUMP_DIR"] = sys.argv[1]
os.environ["TRITON_CACHE_DIR"] = sys.argv[2]
os.environ["TRITON_ALWAYS_COMPILE"] = "1"
os.environ["TRITON_DISABLE_LINE_INFO"] = "1"

import triton
import triton.language as tl
from triton.backends.compiler import GPUTarget

@triton.jit
def layernorm(x, y, w, b, stride, n, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    m = cols < n
    v = tl.load(x + row * stride + cols, mask=m, other=0.0)
    mean = tl.sum(v, axis=0) / n
    d = tl.where(m, v - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / n + eps)
    out = d * rstd * tl.load(w + cols, mask=m) + tl.load(b + cols, mask=m)
    tl.store(y + row * stride + cols, out, mask=m)

SIGNATURE = {"x": "*fp32", "y": "*fp32", "w": "*fp32", "b": "*fp32",
             "stride": "i32", "n": "i32", "eps": "fp32", "BLOCK": "constexpr"}

def main():
    arch = sys.argv[3] if len(sys.argv) > 3 else "gfx942"
    blocks = [int(b) for b in sys.argv[4:]] or [1024]
    wave = 32 if arch.startswith(("gfx11", "gfx12")) else 64
    for block in blocks:
        src = triton.compiler.ASTSource(fn=layernorm, signature=SIGNATURE,
                                        constexprs={"BLOCK": block})
        k = triton.compile(src, target=GPUTarget("hip", arch, wave))
        print(f"BLOCK={block} shared={k.metadata.shared} hash={src.hash()}")

if __name__ == "__main__":
    main()
