#!/usr/bin/env python3
"""Which engine ran the executed instructions of a test run (issue 33).

    GCN_EMU_ENGINE_TALLY=/tmp/tally cargo test -p gcn-emu --test iree
    python3 gcn-emu/tests/engine_mix.py /tmp/tally

Reads the DIR/<pid>.tsv files the emulator writes when GCN_EMU_ENGINE_TALLY
is set (gcn-emu/src/tally.rs) and prints, per test executable, the executed
wave-instructions, the fraction the reference executor (exec.rs) ran, and
its most executed mnemonics there; CDNA (wave64) and RDNA waves apart.
"""
import collections
import pathlib
import sys

top = int(sys.argv[2]) if len(sys.argv) > 2 else 8
by = collections.defaultdict(lambda: collections.Counter())
for f in sorted(pathlib.Path(sys.argv[1]).glob("*.tsv")):
    lines = f.read_text().splitlines()
    exe = lines[0].lstrip("# ").rsplit("-", 1)[0]
    for line in lines[1:]:
        engine, mnemonic, n, *generation = line.split("\t")
        key = f"{exe} ({generation[0]})" if generation else exe
        by[key][(engine, mnemonic)] += int(n)
for exe, c in sorted(by.items()):
    total = sum(c.values())
    ref = {m: n for (e, m), n in c.items() if e == "reference"}
    nref = sum(ref.values())
    print(f"{exe}: {total} wave-instructions, {nref} ({100 * nref / max(total, 1):.2f} %) on the reference executor")
    for m, n in sorted(ref.items(), key=lambda x: -x[1])[:top]:
        print(f"    {100 * n / total:7.3f} %  {m}")
