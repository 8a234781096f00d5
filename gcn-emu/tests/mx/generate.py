#!/usr/bin/env python3
"""Reference tables for gcn-emu's gfx950 MX formats (gcn-emu/tests/it/gfx950.rs),
from ml_dtypes (an independent implementation; pinned in tests/setup.sh):

* mx-values.txt: per format, the f32 bits of the value of every code
  (fp4 e2m1: 16 codes, fp6 e2m3 and e3m2: 64, e8m0: 256);
* mx-encode.txt: per 4/6-bit format, f32 inputs and ml_dtypes' code for them
  (round to nearest even): random values in and beyond the range (saturation),
  the midpoints between neighbouring codes (ties), ±0, ±max, ±inf.

Usage: python3 gcn-emu/tests/mx/generate.py"""
import os, sys
import numpy as np
import ml_dtypes

PIN = "0.5.4"
FORMATS = [("e2m1", ml_dtypes.float4_e2m1fn, 4), ("e2m3", ml_dtypes.float6_e2m3fn, 6),
           ("e3m2", ml_dtypes.float6_e3m2fn, 6)]

def main():
    if ml_dtypes.__version__ != PIN:
        sys.exit(f"generate.py: need ml_dtypes {PIN} (found {ml_dtypes.__version__}); run bash tests/setup.sh")
    root = os.path.dirname(os.path.abspath(__file__))
    rng = np.random.default_rng(33)
    with open(os.path.join(root, "mx-values.txt"), "w") as f:
        f.write("# format, then the f32 bits of the value of each code, from 0 (ml_dtypes %s)\n" % ml_dtypes.__version__)
        for name, t, bits in FORMATS:
            v = np.arange(0, 1 << bits, dtype=np.uint8).view(t).astype(np.float32)
            f.write(name + " " + " ".join("%08x" % x for x in v.view(np.uint32)) + "\n")
        v = np.arange(0, 256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu).astype(np.float32)
        f.write("e8m0 " + " ".join("%08x" % x for x in v.view(np.uint32)) + "\n")
    with open(os.path.join(root, "mx-encode.txt"), "w") as f:
        f.write("# format, then pairs f32-bits:code (round to nearest even, saturating; ml_dtypes %s)\n" % ml_dtypes.__version__)
        for name, t, bits in FORMATS:
            mx = float(ml_dtypes.finfo(t).max)
            half = 1 << (bits - 1)
            mags = np.arange(0, half, dtype=np.uint8).view(t).astype(np.float64)
            xs = np.concatenate([
                rng.uniform(-mx, mx, 96), rng.uniform(-1, 1, 64), rng.uniform(-4 * mx, 4 * mx, 32),
                (mags[:-1] + mags[1:]) / 2, -(mags[:-1] + mags[1:]) / 2,
                [0.0, -0.0, mx, -mx, np.inf, -np.inf]]).astype(np.float32)
            codes = xs.astype(t).view(np.uint8)
            f.write(name + " " + " ".join("%08x:%02x" % (x, c) for x, c in zip(xs.view(np.uint32), codes)) + "\n")

if __name__ == "__main__":
    main()
