#!/usr/bin/env python3
"""Reference table for gfx1250's `v_cvt_scale_pk8_*` up-conversions
(gcn-emu/tests/it/gfx1250_cvt.rs), from NumPy and ml_dtypes (pinned in
tests/setup.sh), never from the emulator:

gfx1250-cvt.txt: one line per (destination, source format, E8M0 scale byte):
the destination bits of every source code times 2^(byte - 127) (byte 0xff:
NaN), computed in float64 (exact: every fp8/fp4 value times a power of two
is) and rounded once to nearest even by NumPy (f16, f32) or ml_dtypes (bf16).

Usage: python3 gcn-emu/tests/mx/gfx1250_cvt.py"""
import os, sys
import numpy as np
import ml_dtypes

PIN = "0.5.4"
SCALES = [0, 1, 100, 117, 127, 128, 134, 150, 200, 254, 255]
CASES = [("bf16", ml_dtypes.bfloat16, np.uint16, "e4m3fn", ml_dtypes.float8_e4m3fn, 8),
         ("f32", np.float32, np.uint32, "e5m2", ml_dtypes.float8_e5m2, 8),
         ("f16", np.float16, np.uint16, "e2m1", ml_dtypes.float4_e2m1fn, 4)]

def main():
    if ml_dtypes.__version__ != PIN:
        sys.exit(f"gfx1250_cvt.py: need ml_dtypes {PIN} (found {ml_dtypes.__version__}); run bash tests/setup.sh")
    root = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(root, "gfx1250-cvt.txt"), "w") as f:
        f.write("# dst src scale-byte, then the dst bits of code 0, 1, ... times 2^(byte-127) (ml_dtypes %s, numpy %s)\n"
                % (ml_dtypes.__version__, np.__version__))
        for dname, dt, bits_t, sname, st, width in CASES:
            vals = np.arange(0, 1 << width, dtype=np.uint8).view(st).astype(np.float64)
            for e in SCALES:
                s = np.array([e], dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float64)[0]
                with np.errstate(over="ignore", invalid="ignore"):
                    out = (vals * s).astype(dt).view(bits_t)
                digits = 2 * np.dtype(bits_t).itemsize
                f.write("%s %s %d %s\n" % (dname, sname, e, " ".join("%0*x" % (digits, x) for x in out)))

if __name__ == "__main__":
    main()
