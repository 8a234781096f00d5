#!/usr/bin/env python3
"""The WMMA/SWMMAC lane layouts of RDNA3 (gfx11) and RDNA4 (gfx12) as AMD's
Matrix Instruction Calculator prints them (github.com/ROCm/
amd_matrix_instruction_calculator, MIT, commit 2ef91896bcdc, which covers
both generations' WMMA and RDNA4's SWMMAC). Writes wmma_layouts.txt beside
this script: for each architecture, instruction, wave size and matrix (A, B,
C, and the sparse index K), every register slot of every lane and the matrix
element it holds. gcn-emu/tests/it/wmma.rs checks gcn_emu::wmma's layouts
against it. Only these facts are kept, not the calculator.

Usage:
  git clone https://github.com/ROCm/amd_matrix_instruction_calculator /tmp/calc
  git -C /tmp/calc checkout 2ef91896bcdc
  pip install tabulate==0.9.0   # the calculator's one dependency
  python3 gcn-emu/tests/rdna/wmma_layouts.py /tmp/calc/matrix_calculator.py"""
import json, os, re, subprocess, sys

ROOT = os.path.dirname(os.path.abspath(__file__))
# One instruction per layout class: the layout depends on the generation, the
# input element width, K, sparsity and the accumulator width only.
INSTRUCTIONS = {
    "rdna3": ["v_wmma_f32_16x16x16_f16", "v_wmma_f16_16x16x16_f16", "v_wmma_i32_16x16x16_iu8",
              "v_wmma_i32_16x16x16_iu4"],
    "rdna4": ["v_wmma_f32_16x16x16_f16", "v_wmma_f16_16x16x16_f16", "v_wmma_i32_16x16x16_iu8",
              "v_wmma_f32_16x16x16_fp8_fp8", "v_wmma_i32_16x16x16_iu4", "v_wmma_i32_16x16x32_iu4",
              "v_swmmac_f32_16x16x32_f16", "v_swmmac_f16_16x16x32_f16", "v_swmmac_i32_16x16x32_iu8",
              "v_swmmac_i32_16x16x32_iu4", "v_swmmac_i32_16x16x64_iu4", "v_swmmac_f32_16x16x32_fp8_fp8"],
}
COL = re.compile(r"v(\d+)(?:\.\[(\d+):(\d+)\])?$")
CELL = re.compile(r"([ABCDK])\[(\d+)\]\[(\d+)\]")


def layout(calc, arch, inst, wave, matrix):
    p = subprocess.run([sys.executable, calc, "-a", arch, "-i", inst, f"-{matrix}", "-M", "-w", str(wave),
                        "--csv"], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"{arch} {inst} w{wave} {matrix}: {p.stderr[-500:]}")
    lines = [l for l in p.stdout.splitlines() if l and not l.startswith(("Architecture", "Instruction"))]
    head = lines[0].split(",")[1:]
    cols = []
    for h in head:
        m = COL.match(h)
        if not m:
            sys.exit(f"{arch} {inst}: column {h!r}")
        reg, hi, lo = int(m.group(1)), m.group(2), m.group(3)
        cols.append([reg, int(lo) if lo else 0, int(hi) + 1 if hi else 32])
    # cells[lane][col] = [row, col] of the first element the slot holds (a
    # sparse A register and an index nibble hold a group of four K).
    cells = {}
    for l in lines[1:]:
        parts = l.split(",")
        lane = int(parts[0])
        row = []
        for c in parts[1:]:
            m = CELL.search(c)
            # B[k][j] is kept as (j, k), so the first is always < 16.
            row.append(None if not m else [int(m.group(3)), int(m.group(2))] if m.group(1) == "B"
                       else [int(m.group(2)), int(m.group(3))])
        cells[lane] = row
    return {"cols": cols, "lanes": cells}


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    calc = sys.argv[1]
    out = {}
    for arch, insts in INSTRUCTIONS.items():
        for inst in insts:
            for wave in (32, 64):
                mats = ["A", "B"] + (["D", "k"] if "swmmac" in inst else ["C"])
                for m in mats:
                    key = f"{arch} {inst} {wave} {m.upper()}"
                    out[key] = layout(calc, arch, inst, wave, m)
    # Text, one block per layout: `layout ARCH INSTRUCTION WAVE MATRIX`, then
    # `cols` (each register slot as reg.lo_bit.hi_bit), then one line per lane:
    # the lane and, per slot, the element's row (1 hex digit) and column (2),
    # (B's column then row), or `---` when the slot holds nothing.
    path = os.path.join(ROOT, "wmma_layouts.txt")
    with open(path, "w") as f:
        f.write("# made by wmma_layouts.py from AMD's Matrix Instruction Calculator 2ef91896bcdc\n")
        for key, lay in out.items():
            f.write(f"layout {key}\n")
            f.write("cols " + " ".join(f"{r}.{lo}.{hi}" for r, lo, hi in lay["cols"]) + "\n")
            for lane in sorted(lay["lanes"]):
                cells = "".join("---" if c is None else f"{c[0]:01x}{c[1]:02x}" for c in lay["lanes"][lane])
                f.write(f"{lane} {cells}\n")
    print(f"{path}: {len(out)} layouts")


if __name__ == "__main__":
    main()
