#!/usr/bin/env python3
"""Write the seeds of the `emu` fuzz target (fuzz/corpus/emu/), made by the
real tools: HIP kernels compiled by clang-22 (saxpy of the corpus, the
emulator's corner-case kernels), one assembled from a mutated asm (4 GiB of
scratch per work-item), their `llvm-objdump-22 -d --symbolize-operands`
listings, and launches (normal, sanitized, seeded, a 2^96-workgroup grid),
in the layout fuzz/checks.rs `emu` reads; plus `.npy` seeds. Run from the
repository root: python3 fuzz/emu_seeds.py"""
import os
import struct
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "fuzz/corpus/emu")
MARK = b"\0\0LISTING\0\0"
HIP = ["clang-22", "-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib", "-O3"]


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, capture_output=True, **kw).stdout


def head(grid, block, flags):
    return struct.pack("<3I2HB", *grid, *block, flags)


def seed(name, obj, listing, grid=(2, 1, 1), block=(64, 1), flags=0):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(b"\0" + head(grid, block, flags) + obj + MARK + listing)


def main():
    os.makedirs(OUT, exist_ok=True)
    with tempfile.TemporaryDirectory() as d:
        objs = {}
        for src, arch in [("tests/corpus/src/saxpy.hip", "gfx942"),
                          ("tests/corpus/src/saxpy.hip", "gfx950"),
                          ("gcn-emu/tests/kernels/corner.hip", "gfx90a")]:
            stem = os.path.basename(src).split(".")[0] + "-" + arch
            o = os.path.join(d, stem + ".hsaco")
            run(HIP + [f"--offload-arch={arch}", "--no-gpu-bundle-output",
                       os.path.join(ROOT, src), "-o", o])
            objs[stem] = o
        # saxpy with 4 GiB of scratch per work-item (a hostile descriptor).
        s = os.path.join(d, "big.s")
        run(HIP + ["--offload-arch=gfx942", "-S", os.path.join(ROOT, "tests/corpus/src/saxpy.hip"), "-o", s])
        text = open(s).read().replace(".amdhsa_private_segment_fixed_size 0",
                                      ".amdhsa_private_segment_fixed_size 4294967295", 1)
        open(s, "w").write(text)
        run(["clang-22", "-target", "amdgcn-amd-amdhsa", "-mcpu=gfx942", "-x", "assembler", "-c", s,
             "-o", os.path.join(d, "big.o")])
        run(["ld.lld-22", "-shared", os.path.join(d, "big.o"), "-o", os.path.join(d, "big.hsaco")])
        objs["saxpy-scratch4g"] = os.path.join(d, "big.hsaco")
        for stem, o in objs.items():
            obj = open(o, "rb").read()
            listing = run(["llvm-objdump-22", "-d", "--symbolize-operands", o])
            seed(stem, obj, listing)
            if stem == "saxpy-gfx942":
                seed(stem + "-sanitize-seeded", obj, listing, flags=0xc0)
                seed(stem + "-grid-2e96", obj, listing, grid=(0xffffffff,) * 3, block=(256, 1))
                seed(stem + "-no-listing", obj, b"")
    # .npy seeds (mode byte odd).
    def npy(shape, descr="<f4", data=b""):
        h = ("{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)).encode() + b"\n"
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
    for name, b in [("npy-2x3", npy("(2, 3)", data=bytes(24))),
                    ("npy-wrapping-shape", npy("(4611686018427387904, 4)")),
                    ("npy-u2", npy("(4,)", "<u2", bytes(8)))]:
        open(os.path.join(OUT, name), "wb").write(b"\x01" + b)


main()
