#!/usr/bin/env python3
"""Survey: which of aiter's kernels name a VGPR at or past their
`.amdhsa_accum_offset` (gfx90a+: the VGPRs and AGPRs are one file, the
AGPRs from that offset on, so `v[offset + i]` is `a[i]`), and whether any
also names the AGPR it shares (what `Program::check_registers` refused
until the emulator modelled the unified file; it runs them now).

    git -C AITER_REPO archive HEAD hsa/gfx942 hsa/gfx950 | tar -x -C DIR
    python3 tests/corpus/aiter-unified-vgprs.py DIR

Reads each `.co`'s kernel descriptors (COMPUTE_PGM_RSRC1/RSRC3 at bytes
48/44 of the `.kd` symbol) and, for kernels whose offset is below their
VGPR count, the `llvm-objdump-22 -d` listing. Figures: docs/src/guide/run.md
("The unified VGPR/AGPR file"). Standard library only.
"""
import glob
import re
import struct
import subprocess
import sys


def symbols(b):
    shoff = struct.unpack_from("<Q", b, 0x28)[0]
    shentsize, shnum = struct.unpack_from("<HH", b, 0x3A)
    secs = [struct.unpack_from("<IIQQQQIIQQ", b, shoff + i * shentsize) for i in range(shnum)]
    out = []
    for s in secs:
        if s[1] != 2:  # SHT_SYMTAB
            continue
        strtab = secs[s[6]]
        for j in range(s[5] // 24):
            name, _, _, shndx, value, _ = struct.unpack_from("<IBBHQQ", b, s[4] + j * 24)
            start = strtab[4] + name
            out.append((b[start:b.index(b"\0", start)].decode(), shndx, value))
    return secs, out


def regs(text, file):
    """Registers of `file` ('v' or 'a') an instruction's text names."""
    got = set()
    for lo, hi in re.findall(rf"(?<![\w\[]){file}\[(\d+):(\d+)\]", text):
        got.update(range(int(lo), int(hi) + 1))
    got.update(int(r) for r in re.findall(rf"(?<![\w\[]){file}(\d+)\b", text))
    return got


def main(root):
    kernels = past = shared = 0
    for co in sorted(glob.glob(f"{root}/**/*.co", recursive=True)):
        b = open(co, "rb").read()
        try:
            secs, syms = symbols(b)
        except (struct.error, ValueError) as e:
            print(f"skipped {co}: {e}")
            continue
        need = {}
        for name, shndx, value in syms:
            if not name.endswith(".kd") or shndx == 0 or shndx >= len(secs):
                continue
            kernels += 1
            s = secs[shndx]
            rsrc3, rsrc1 = struct.unpack_from("<II", b, s[4] + value - s[3] + 44)
            vgprs, accum = ((rsrc1 & 0x3F) + 1) * 8, ((rsrc3 & 0x3F) + 1) * 4
            if accum < vgprs:
                need[name[:-3]] = accum
        if not need:
            continue
        listing = subprocess.run(["llvm-objdump-22", "-d", co], capture_output=True, text=True).stdout
        used, cur = {}, None
        for line in listing.splitlines():
            m = re.match(r"^[0-9a-f]+ <(.*)>:", line)
            if m:
                cur = m.group(1)
                continue
            if cur in need and line.startswith("\t"):
                text = line.split("//")[0]
                v, a = used.setdefault(cur, (set(), set()))
                v.update(regs(text, "v"))
                a.update(regs(text, "a"))
        for k, accum in need.items():
            v, a = used.get(k, (set(), set()))
            over = sorted(r for r in v if r >= accum)
            if not over:
                continue
            past += 1
            both = sorted(r for r in over if r - accum in a)
            shared += bool(both)
            print(f"{co} {k}: accum_offset {accum}, VGPRs past it v{over[0]}-v{over[-1]}, "
                  f"AGPRs named {len(a)}, shared {len(both)}")
    print(f"{kernels} kernels; {past} name a VGPR past .amdhsa_accum_offset; "
          f"{shared} also name an AGPR such a VGPR shares")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else ".")
