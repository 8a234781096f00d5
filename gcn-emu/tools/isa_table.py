#!/usr/bin/env python3
"""Generate gcn-emu's instruction-property table (src/isa/table.rs).

Inputs, all checked in under gcn-emu/tools/isa/ so that a build or a test
needs no network:

* cdna4.tsv: the operands of every CDNA4 (gfx950) instruction in each
  encoding, extracted from AMD's machine-readable ISA XML
  (amdgpu_isa_cdna4.xml, bundle AMD_GPU_MR_ISA_XML_2025_09_05, MIT) as
  published in tinygrad 0.14.0's wheel
  (tinygrad/runtime/autogen/amd/cdna/{enum,operands}.py, MIT), the one
  reproducible copy reachable from here (PyPI). `extract` rewrites it from
  that wheel, checked against WHEEL_SHA256.
* targets.tsv: which mnemonics llvm-mc-22 accepts per target (gfx90a,
  gfx942, gfx950): `targets` rewrites it by assembling each bare mnemonic.
* mca.tsv: each MFMA's latency and reciprocal throughput in LLVM's
  scheduling model (llvm-mca-22): `timing` rewrites it. The XML has no
  cycle counts.
* extra.tsv: gfx90a instructions the CDNA4 XML lacks, by analogy.
* rdna3.tsv, rdna4.tsv, targets-rdna3.tsv, targets-rdna4.tsv: the same
  for RDNA3 (amdgpu_isa_rdna3_5.xml, tinygrad's autogen/amd/rdna3) and RDNA4
  (amdgpu_isa_rdna4.xml, autogen/amd/rdna4), written by the same `extract`
  and `targets`. gfx1250 has no XML in the bundle: it is only a target
  column of RDNA4's list (which RDNA4 mnemonics llvm-mc-22 assembles there).
  Graphics-only encodings (export, image, interpolation, LDS direct) are
  left out of the RDNA tables.

`generate` (the default) writes src/isa/table.rs, rdna3.rs and rdna4.rs; `generate --check` exits
1 when the checked-in table differs from what it would write. Python 3
standard library only.

Usage:
  python3 gcn-emu/tools/isa_table.py extract --wheel tinygrad-0.14.0-py3-none-any.whl
  python3 gcn-emu/tools/isa_table.py targets [--llvm-mc llvm-mc-22] [--check]
  python3 gcn-emu/tools/isa_table.py timing [--llvm-mca llvm-mca-22] [--check]
  python3 gcn-emu/tools/isa_table.py generate [--check]
"""

import argparse
import ast
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "isa")
OUT = os.path.join(HERE, "..", "src", "isa", "table.rs")

WHEEL = "tinygrad-0.14.0-py3-none-any.whl"
WHEEL_SHA256 = "d2a5bea33c637fdf105963632329876b3d3253d38295ac1ffd2ff81646d93be3"
WHEEL_DIR = "tinygrad/runtime/autogen/amd/cdna/"
XML_SOURCE = "amdgpu_isa_cdna4.xml from AMD_GPU_MR_ISA_XML_2025_09_05.zip (AMD, MIT)"

# What tinygrad added to its enums from AMD's PDF, not the XML (its
# generate.py FIXES["cdna"]): left out.
NOT_XML = {"DS_GWS_SEMA_RELEASE_ALL", "DS_GWS_SEMA_V", "DS_GWS_SEMA_P", "V_MFMA_LD_SCALE_B32",
           "V_MFMA_F32_16X16X8_XF32", "V_MFMA_F32_32X32X4_XF32"}

# Targets in bit order (bit i of Props::targets); append, never reorder.
TARGETS = ["gfx90a", "gfx942", "gfx950"]
# RDNA targets: bits 3.. of Props::targets, after TARGETS (isa::RDNA_TARGETS).
RDNA3_TARGETS = ["gfx1100", "gfx1101", "gfx1102", "gfx1103", "gfx1150", "gfx1151"]
RDNA4_TARGETS = ["gfx1200", "gfx1201", "gfx1250"]
ALL_TARGETS = TARGETS + RDNA3_TARGETS + RDNA4_TARGETS

# One table per generation: where its extract is in the wheel, its files here.
GENS = {
    "cdna4": dict(wheel_dir=WHEEL_DIR, xml=XML_SOURCE, tsv="cdna4.tsv", targets_tsv="targets.tsv",
                  targets=TARGETS, out="table.rs", not_xml=NOT_XML),
    # tinygrad's FIXES["rdna3"], ["rdna4"]: from the PDF, not the XML.
    "rdna3": dict(wheel_dir="tinygrad/runtime/autogen/amd/rdna3/",
                  xml="amdgpu_isa_rdna3_5.xml from AMD_GPU_MR_ISA_XML_2025_09_05.zip (AMD, MIT)",
                  tsv="rdna3.tsv", targets_tsv="targets-rdna3.tsv", targets=RDNA3_TARGETS, out="rdna3.rs",
                  not_xml={"S_SUBVECTOR_LOOP_BEGIN", "S_SUBVECTOR_LOOP_END", "FLAT_ATOMIC_CSUB_U32"}),
    "rdna4": dict(wheel_dir="tinygrad/runtime/autogen/amd/rdna4/",
                  xml="amdgpu_isa_rdna4.xml from AMD_GPU_MR_ISA_XML_2025_09_05.zip (AMD, MIT)",
                  tsv="rdna4.tsv", targets_tsv="targets-rdna4.tsv", targets=RDNA4_TARGETS, out="rdna4.rs",
                  not_xml={"S_GET_BARRIER_STATE", "S_BARRIER_INIT", "S_BARRIER_JOIN", "S_WAITCNT",
                           "S_BARRIER_LEAVE"}),
}
# Graphics-only encodings of the RDNA extracts: not in the tables.
GRAPHICS = {"EXPOp", "LDSDIROp", "MIMGOp", "VINTERPOp", "VDSDIROp", "VEXPORTOp", "VIMAGEOp", "VSAMPLEOp"}

# Mnemonics LLVM prints that the CDNA4 XML spells differently or lacks:
# LLVM name -> XML name (lower case). gfx90a's MFMA names, LLVM's aliases.
ALIASES = {
    "v_mfma_f32_32x32x4bf16_1k": "v_mfma_f32_32x32x4_2b_bf16",
    "v_mfma_f32_16x16x4bf16_1k": "v_mfma_f32_16x16x4_4b_bf16",
    "v_mfma_f32_4x4x4bf16_1k": "v_mfma_f32_4x4x4_16b_bf16",
    "v_mfma_f32_32x32x8bf16_1k": "v_mfma_f32_32x32x8_bf16",
    "v_mfma_f32_16x16x16bf16_1k": "v_mfma_f32_16x16x16_bf16",
    "v_mfma_f32_32x32x1f32": "v_mfma_f32_32x32x1_2b_f32",
    "v_mfma_f32_16x16x1f32": "v_mfma_f32_16x16x1_4b_f32",
    "v_mfma_f32_4x4x1f32": "v_mfma_f32_4x4x1_16b_f32",
    "v_mfma_f32_32x32x2f32": "v_mfma_f32_32x32x2_f32",
    "v_mfma_f32_16x16x4f32": "v_mfma_f32_16x16x4_f32",
    "v_mfma_f32_32x32x4f16": "v_mfma_f32_32x32x4_2b_f16",
    "v_mfma_f32_16x16x4f16": "v_mfma_f32_16x16x4_4b_f16",
    "v_mfma_f32_4x4x4f16": "v_mfma_f32_4x4x4_16b_f16",
    "v_mfma_f32_32x32x8f16": "v_mfma_f32_32x32x8_f16",
    "v_mfma_f32_16x16x16f16": "v_mfma_f32_16x16x16_f16",
    "v_mfma_i32_32x32x4i8": "v_mfma_i32_32x32x4_2b_i8",
    "v_mfma_i32_16x16x4i8": "v_mfma_i32_16x16x4_4b_i8",
    "v_mfma_i32_4x4x4i8": "v_mfma_i32_4x4x4_16b_i8",
    "v_mfma_f64_16x16x4f64": "v_mfma_f64_16x16x4_f64",
    "v_mfma_f64_4x4x4f64": "v_mfma_f64_4x4x4_4b_f64",
    "v_fma_mix_f32": "v_mad_mix_f32",
    "v_fma_mixlo_f16": "v_mad_mixlo_f16",
    "v_fma_mixhi_f16": "v_mad_mixhi_f16",
    "v_accvgpr_read_b32": "v_accvgpr_read",
    "v_accvgpr_write_b32": "v_accvgpr_write",
}

# Encoding classes of the extract -> Rust Format; the first one an
# instruction has, in this order, is its format.
FORMATS = [
    ("SOP1Op", "Sop1"), ("SOP2Op", "Sop2"), ("SOPKOp", "Sopk"), ("SOPCOp", "Sopc"),
    ("SOPPOp", "Sopp"), ("SMEMOp", "Smem"), ("DSOp", "Ds"), ("FLATOp", "Flat"),
    ("GLOBALOp", "Global"), ("SCRATCHOp", "Scratch"), ("MUBUFOp", "Mubuf"),
    ("MTBUFOp", "Mtbuf"), ("VOP1Op", "Vop1"), ("VOP2Op", "Vop2"), ("VOPCOp", "Vopc"),
    ("VOP3POp", "Vop3p"), ("VOP3PX2Op", "Vop3p"), ("VOP3SDOp", "Vop3"), ("VOP3Op", "Vop3"),
    # RDNA4's memory encodings, RDNA3's dual-issue VALU pair.
    ("VGLOBALOp", "Global"), ("VFLATOp", "Flat"), ("VSCRATCHOp", "Scratch"), ("VBUFFEROp", "Mubuf"),
    ("VOPDOp", "Vopd"),
]
ENC_ORDER = [c for c, _ in FORMATS]

# Operand order as LLVM prints it (fields absent from an instruction are skipped).
ORDER = [
    "vdst", "sdst", "sdata", "vdata", "addr", "vaddr", "data", "data0", "data1", "vsrc",
    "saddr", "srsrc", "rsrc", "sbase", "soffset", "scale_src0", "scale_src1",
    "src0", "ssrc0", "vsrc0", "src1", "vsrc1", "ssrc1", "src2", "simm16", "simm32",
]
# Scaled MFMA: LLVM prints vdst, src0, src1, src2, then the two scales.
ORDER_SCALE = ["vdst", "src0", "src1", "src2", "scale_src0", "scale_src1"]

KIND = {
    "OPR_VGPR": "Vgpr", "OPR_ACCVGPR": "Agpr", "OPR_VGPR_OR_ACCVGPR": "VgprOrAgpr",
    "OPR_VGPR_OR_LDS": "Vgpr", "OPR_SRC_VGPR": "Vgpr", "OPR_SRC_ACCVGPR": "Agpr",
    "OPR_SRC_VGPR_OR_ACCVGPR": "VgprOrAgpr", "OPR_SRC_VGPR_OR_ACCVGPR_OR_CONST": "VgprOrAgprOrConst",
    "OPR_SREG": "Sgpr", "OPR_SREG_NOVCC": "Sgpr", "OPR_SDST": "Sgpr",
    "OPR_SRC": "Any", "OPR_SRC_NOLIT": "Any", "OPR_SRC_SIMPLE": "Any", "OPR_SRC_NOLDS": "Any",
    "OPR_SSRC": "Scalar", "OPR_SSRC_NOLIT": "Scalar", "OPR_SSRC_LANESEL": "Scalar",
    "OPR_SMEM_OFFSET": "Scalar",
    "OPR_SIMM16": "Imm", "OPR_SIMM32": "Imm", "OPR_SIMM8": "Imm", "OPR_SIMM4": "Imm", "OPR_WAITCNT": "Imm", "OPR_HWREG": "Imm", "OPR_SENDMSG": "Imm",
    "OPR_LABEL": "Label",
    # RDNA: v_cmpx writes EXEC; m0 or an inline constant; no AGPRs, so a
    # VGPR-or-inline source is VgprOrAgprOrConst; the rest are immediates.
    "OPR_EXEC": "Sgpr", "OPR_SDST_NULL": "Sgpr", "OPR_SREG_M0_INL": "Scalar", "OPR_SREG_M0": "Scalar",
    "OPR_SREG_LITERAL": "Scalar", "OPR_SMEM_OFFSET_NOK": "Scalar", "OPR_SSRC_BARRIER_ID": "Scalar",
    "OPR_SRC_VGPR_OR_INLINE": "VgprOrAgprOrConst",
    "OPR_DELAY": "Imm", "OPR_CLAUSE": "Imm", "OPR_WAIT_EVENT": "Imm", "OPR_WAITCNT_DEPCTR": "Imm",
    "OPR_VERSION": "Imm", "OPR_TGT": "Imm", "OPR_ATTR": "Imm", "OPR_SENDMSG_RTN": "Imm", "OPR_SIMM5": "Imm",
    "OPR_SIMM24": "Imm", "OPR_WAIT_MEM_DS": "Imm", "OPR_WAIT_ALU": "Imm", "OPR_SLEEP": "Imm",
}


def body(text):
    """The lines that are data: a check ignores the header (tool versions)."""
    return [l for l in text.splitlines() if not l.startswith("#")]


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------- extract

def extract(wheel):
    got = sha256(wheel)
    if got != WHEEL_SHA256:
        sys.exit(f"{wheel}: sha256 {got}, expected {WHEEL_SHA256} ({WHEEL}; `pip download tinygrad==0.14.0 --no-deps`)")
    for gen in GENS.values():
        extract_gen(wheel, gen)


def extract_gen(wheel, gen):
    wheel_dir, not_xml = gen["wheel_dir"], gen["not_xml"]
    with zipfile.ZipFile(wheel) as z:
        enum_src = z.read(wheel_dir + "enum.py").decode()
        ops_src = z.read(wheel_dir + "operands.py").decode()
    opcodes = {}
    for node in ast.parse(enum_src).body:
        if isinstance(node, ast.ClassDef) and node.name.endswith("Op"):
            for st in node.body:
                if isinstance(st, ast.Assign) and isinstance(st.value, ast.Constant):
                    opcodes[(node.name, st.targets[0].id)] = st.value.value
                elif isinstance(st, ast.Assign) and isinstance(st.value, ast.Name):
                    # V_XOR_B32 = V_XOR_B32_E32: the name without suffix.
                    opcodes[(node.name, st.targets[0].id)] = opcodes[(node.name, st.value.id)]
    rows = []
    for node in ast.walk(ast.parse(ops_src)):
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "OPERANDS":
            for k, v in zip(node.value.keys, node.value.values):
                enc, name = k.value.id, k.attr
                fields = []
                for fk, fv in zip(v.keys, v.values):
                    fmt, bits, ty = fv.elts
                    fields.append(f"{fk.value}:{fmt.attr.removeprefix('FMT_')}:{bits.value}:{ty.attr}")
                rows.append((enc, name, opcodes.get((enc, name), -1), ",".join(fields)))
    # Instructions without operands (s_endpgm, v_nop, ...) are only in enum.py.
    have = {(r[0], r[1]) for r in rows}
    for (enc, name), op in opcodes.items():
        if (enc, name) in have or name.endswith(("_E32", "_E64")) or name in not_xml:
            continue
        rows.append((enc, name, op, ""))
    rows = [r for r in rows if r[0] not in GRAPHICS]
    rows.sort()
    path = os.path.join(DATA, gen["tsv"])
    with open(path, "w") as f:
        f.write(f"# {gen['xml']}, as extracted in {WHEEL} (sha256 {WHEEL_SHA256}), {wheel_dir}operands.py and enum.py.\n")
        f.write("# Written by gcn-emu/tools/isa_table.py extract; do not edit.\n")
        f.write("# encoding\tinstruction\topcode\tfield:format:bits:operand-type,...\n")
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")
    print(f"wrote {path}: {len(rows)} rows")


def read_extra():
    """tools/isa/extra.tsv: instruction, analog in the XML, why."""
    out = []
    with open(os.path.join(DATA, "extra.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            name, like, _why = line.rstrip("\n").split("\t")
            out.append((name, like))
    return out


def read_xml_rows(gen=GENS["cdna4"]):
    rows = []
    with open(os.path.join(DATA, gen["tsv"])) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            enc, name, opcode, fields = line.rstrip("\n").split("\t")
            ops = []
            for fld in filter(None, fields.split(",")):
                n, fmt, bits, ty = fld.split(":")
                ops.append((n, fmt, int(bits), ty))
            rows.append((enc, name.lower(), int(opcode), ops))
    if gen["tsv"] != "cdna4.tsv":
        return rows
    for name, like in read_extra():
        copied = [(enc, name, -1, ops) for (enc, n, _, ops) in rows if n == like]
        if not copied:
            sys.exit(f"extra.tsv: {name} is like {like}, which is not in cdna4.tsv")
        rows.extend(copied)
    return rows


# ---------------------------------------------------------------- targets

def llvm_names(rows, aliases=ALIASES):
    names = sorted({r[1] for r in rows} | set(aliases))
    return names


def targets(llvm_mc, check=False):
    for gen in GENS.values():
        targets_gen(llvm_mc, gen, check)


def targets_gen(llvm_mc, gen, check):
    names = llvm_names(read_xml_rows(gen), ALIASES if gen["tsv"] == "cdna4.tsv" else {})
    result = {}
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "m.s")
        with open(src, "w") as f:
            # A VOPD half alone is not an instruction: asked as the Y half
            # (every X opcode is also a Y one) of a pair.
            f.write("\n".join(f"v_dual_mov_b32 v0, v1 :: {n}" if n.startswith("v_dual_") else n
                              for n in names) + "\n")
        for t in gen["targets"]:
            p = subprocess.run([llvm_mc, "-triple=amdgcn-amd-amdhsa", f"-mcpu={t}", src, "-o", os.devnull],
                               capture_output=True, text=True)
            bad = {}
            for m in re.finditer(r"m\.s:(\d+):\d+: error: (.*)", p.stderr):
                bad[int(m.group(1))] = m.group(2)
            for i, n in enumerate(names, 1):
                e = bad.get(i, "")
                ok = not e.startswith(("instruction not supported", "invalid instruction", "invalid VOPDY"))
                if ok:
                    result.setdefault(n, []).append(t)
    version = subprocess.run([llvm_mc, "--version"], capture_output=True, text=True).stdout
    v = re.search(r"LLVM version (\S+)", version)
    path = os.path.join(DATA, gen["targets_tsv"])
    import io
    f = io.StringIO()
    if True:
        f.write(f"# Mnemonics {os.path.basename(llvm_mc)} (LLVM {v.group(1) if v else '?'}) assembles per target, bare:\n")
        f.write("# 'instruction not supported on this GPU' or 'invalid instruction' means absent.\n")
        if any(n.startswith("v_dual_") for n in names):
            f.write("# A VOPD v_dual_* is asked as the Y half of `v_dual_mov_b32 v0, v1 :: v_dual_*`.\n")
        f.write("# Written by gcn-emu/tools/isa_table.py targets; do not edit.\n")
        for n in names:
            f.write(f"{n}\t{','.join(result.get(n, []))}\n")
    text = f.getvalue()
    if check:
        with open(path) as g:
            if body(g.read()) != body(text):
                sys.exit(f"{path} is not what {llvm_mc} says: run `python3 gcn-emu/tools/isa_table.py targets`")
        print(f"{gen['targets_tsv']} up to date")
        return
    with open(path, "w") as g:
        g.write(text)
    print(f"wrote {path}: {len(names)} mnemonics")


def read_targets(gen=GENS["cdna4"]):
    out = {}
    with open(os.path.join(DATA, gen["targets_tsv"])) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            n, ts = line.rstrip("\n").split("\t")
            out[n] = [t for t in ts.split(",") if t]
    return out


# ---------------------------------------------------------------- timing

def mfma_text(name, ops):
    """An MFMA with registers of the sizes the table gives, for llvm-mca."""
    def rng(f, lo, n):
        return f"{f}{lo}" if n == 1 else f"{f}[{lo}:{lo + n - 1}]"
    d = {o[0]: max(1, (o[2] + 31) // 32) for o in ops}
    v = 0
    parts = [rng("a", 0, d["vdst"])]
    for f in ("src0", "src1"):
        parts.append(rng("v", v, d[f]))
        v += d[f]
    if name.startswith("v_smfmac"):
        parts.append(rng("v", v, 1))
    else:
        parts.append(rng("a", 0, d["src2"]))
    if name.startswith("v_mfma_scale"):
        parts += [f"v{v}", f"v{v + 1}"]
    return f"{name} " + ", ".join(parts)


def timing(llvm_mca, check=False):
    rows = read_xml_rows()
    avail = read_targets()
    spelled = {}  # (target, XML name) -> LLVM's spelling there
    for a, x in ALIASES.items():
        for t in avail.get(a, []):
            spelled[(t, x)] = a
    mfma = {}
    for enc, name, _, ops in rows:
        if enc in ("VOP3POp", "VOP3PX2Op") and name.startswith(("v_mfma", "v_smfmac")):
            mfma[name] = ops
    out = []
    with tempfile.TemporaryDirectory() as d:
        for t in TARGETS:
            names = [n for n in sorted(mfma) if t in avail.get(n, []) or (t, n) in spelled]
            src = os.path.join(d, f"{t}.s")
            with open(src, "w") as f:
                for n in names:
                    f.write(mfma_text(spelled.get((t, n), n), mfma[n]) + "\n")
            p = subprocess.run([llvm_mca, "-mtriple=amdgcn-amd-amdhsa", f"-mcpu={t}", "-iterations=1",
                                "--all-views=false", "--instruction-info", src], capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit(f"{llvm_mca} -mcpu={t} failed: {p.stderr[:2000]}")
            lines = [l for l in p.stdout.splitlines() if re.match(r"\s*\d+\s+\d+\s+[\d.]+\s", l)]
            if len(lines) != len(names):
                sys.exit(f"{llvm_mca} -mcpu={t}: {len(lines)} instruction lines for {len(names)} MFMAs")
            for n, l in zip(names, lines):
                _, lat, rt = l.split()[:3]
                out.append((n, t, int(lat), float(rt)))
    version = subprocess.run([llvm_mca, "--version"], capture_output=True, text=True).stdout
    v = re.search(r"LLVM version (\S+)", version)
    text = (f"# MFMA latency and reciprocal throughput (cycles) in {os.path.basename(llvm_mca)}'s (LLVM "
            f"{v.group(1) if v else '?'}) scheduling model, not measured on hardware.\n"
            "# Written by gcn-emu/tools/isa_table.py timing; do not edit.\n"
            "# instruction\ttarget\tlatency\trthroughput\n")
    text += "".join(f"{n}\t{t}\t{lat}\t{rt:g}\n" for n, t, lat, rt in out)
    path = os.path.join(DATA, "mca.tsv")
    if check:
        with open(path) as g:
            if body(g.read()) != body(text):
                sys.exit(f"{path} is not what {llvm_mca} says: run `python3 gcn-emu/tools/isa_table.py timing`")
        print("timing up to date")
        return
    with open(path, "w") as g:
        g.write(text)
    print(f"wrote {path}: {len(out)} rows")


def read_timing():
    out = {}
    with open(os.path.join(DATA, "mca.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            n, t, lat, rt = line.rstrip("\n").split("\t")
            if float(rt) != int(float(rt)):
                sys.exit(f"mca.tsv: {n} on {t}: reciprocal throughput {rt} is not whole cycles")
            out[(n, t)] = (int(lat), int(float(rt)))
    return out


# ---------------------------------------------------------------- derive

def ds_access(n, has_vdst):
    r = n[3:]
    if r == "nop":
        return "None"
    if r.startswith(("read", "load")):
        return "Read"
    if r.startswith(("write", "store")):
        return "Write"
    if r.startswith(("bpermute", "permute", "swizzle")):
        return "None"
    return "Atomic(Ret::Yes)" if (has_vdst or "_rtn_" in r) else "Atomic(Ret::No)"


def vmem_access(n, fmt):
    r = n.split("_", 1)[1]
    if r.startswith("atomic"):
        return "Atomic(Ret::IfGlc)"
    if r.startswith("load"):
        return "Read"
    if r.startswith("store"):
        return "Write"
    return "None"  # cache control: buffer_wbl2, buffer_inv, buffer_wbinvl1*


def smem_access(n):
    r = n[2:]
    if r.startswith(("load", "buffer_load", "scratch_load")):
        return "Read"
    if r.startswith(("store", "buffer_store", "scratch_store")):
        return "Write"
    if r.startswith(("atomic", "buffer_atomic")):
        return "Atomic(Ret::IfGlc)"
    return "None"  # s_memtime, s_memrealtime, s_dcache_*, s_atc_probe*


MATRIX = ("v_mfma", "v_smfmac", "v_wmma", "v_swmmac")
# Matrix ops whose vdst is also the accumulator read.
SPARSE = ("v_smfmac", "v_swmmac")


def derive(name, encs, ops_by_enc, rdna=False):
    enc = next(e for e in ENC_ORDER if e in encs)
    fmt = dict(FORMATS)[enc]
    if fmt == "Vop3p" and name.startswith(MATRIX):
        fmt = "Mfma"
    if enc == "VBUFFEROp" and name.startswith("tbuffer"):
        fmt = "Mtbuf"
    # The operand list LLVM prints: VALU's promoted (VOP3) form names every
    # operand (a carry-out sdst, a compare's sdst), the others their own.
    src_enc = enc
    if fmt in ("Vop1", "Vop2", "Vopc"):
        for e in ("VOP3SDOp", "VOP3Op"):
            if e in encs:
                src_enc = e
                break
    ops = ops_by_enc[src_enc]
    if rdna and src_enc in ("VOP3Op", "VOP3SDOp"):
        # The RDNA extracts type VOP3's src0 as a VGPR (`vsrc0` on RDNA4):
        # its DPP form's. The VOP3 field takes any source, as the compilers'
        # output shows (`v_or3_b32 v10, s2, v36, v10`). And v_cmpx's EXEC
        # destination is implicit: LLVM prints none.
        ops = [("src0", o[1], o[2], "OPR_SRC") if o[0] in ("src0", "vsrc0") and o[3] == "OPR_VGPR" else o
               for o in ops if o[3] != "OPR_EXEC"]
    if fmt == "Vopd":
        # The extract names one half's operands (Y); X's have the same shape.
        ren = {"vdsty": "vdst", "srcy0": "src0", "vsrcy1": "vsrc1"}
        ops = [(ren.get(o[0], o[0]), *o[1:]) for o in ops]
    counters, memory, access = "NONE", "None", "None"
    has_vdst = any(o[0] == "vdst" for o in ops)
    if fmt == "Smem":
        counters, memory, access = "LGKM", "Scalar", smem_access(name)
    elif fmt == "Ds":
        counters = "LGKM"
        access = ds_access(name, has_vdst)
        if name.startswith("ds_gws") or name in ("ds_ordered_count",):
            memory = "Gds"
        elif name[3:].startswith(("bpermute", "permute", "swizzle", "nop")):
            memory = "None"
        else:
            memory = "Lds"
    elif fmt in ("Flat", "Global", "Scratch", "Mubuf", "Mtbuf"):
        counters = "VM_LGKM" if fmt == "Flat" else "VM"
        memory = {"Flat": "Flat", "Global": "Global", "Scratch": "Scratch", "Mubuf": "Buffer", "Mtbuf": "Buffer"}[fmt]
        access = vmem_access(name, fmt)
        if rdna:
            # gfx10+: stores (and atomics without return) count on vscnt
            # (gfx12: storecnt), loads on vmcnt (loadcnt).
            vm = {"Write": "VS", "None": "VM"}.get(access, "VM_VS" if access.startswith("Atomic") else "VM")
            counters = vm + "_LGKM" if fmt == "Flat" else vm
    elif name in ("s_sendmsg", "s_sendmsghalt"):
        counters = "LGKM"
    # The XML's VOP2 operands leave out the literal K of v_fmamk/v_fmaak
    # (LLVM prints `v_fmamk_f32 vdst, src0, K, vsrc1`, `v_fmaak_f32 vdst, src0, vsrc1, K`).
    if re.match(r"v_(fma|mad)(mk|ak)_", name):
        ops = ops + [("simm32", "ANY", 32 if name.endswith("f32") else 16, "OPR_SIMM32")]
    lds_dma = fmt in ("Global", "Scratch") and "_load_lds_" in name
    order = ORDER_SCALE if name.startswith("v_mfma_scale") else ORDER
    if re.match(r"v_(fma|mad)mk_", name):
        order = ["vdst", "src0", "simm32", "vsrc1"]
    # SOPK's `sdst` field is a source where nothing is written to it: the
    # compared register of s_cmpk_*, the mask s_cbranch_i_fork reads, and
    # the register s_setreg_b32 writes to the hardware register its simm16
    # names (LLVM prints `s_setreg_b32 hwreg(...), s0`: simm16 first).
    sopk_src = fmt == "Sopk" and (
        name.startswith("s_cmpk_") or name in ("s_cbranch_i_fork", "s_setreg_b32"))
    if name == "s_setreg_b32":
        order = ["simm16", "sdst"]
    rank = {n: i for i, n in enumerate(order)}
    ops = sorted(ops, key=lambda o: rank.get(o[0], len(order)))
    out = []
    for (f, dfmt, bits, ty) in ops:
        if f == "sdst" and sopk_src:
            role = "Src"
        elif f in ("vdst", "sdst"):
            role = "DstSrc" if name.startswith(SPARSE) else "Dst"
        elif f in ("sdata", "vdata"):
            # Written by loads (and s_memtime), read by stores and s_atc_probe
            # (its mode), both by atomics (the return needs glc/sc0).
            role = {"Read": "Dst", "Write": "Src"}.get(access, "DstSrc" if access.startswith("Atomic") else "Dst")
            if name.startswith("s_atc_probe"):
                role = "Src"
        else:
            role = "Src"
        kind = KIND.get(ty)
        if kind is None:
            sys.exit(f"{name}: operand {f} of unknown type {ty}: map it in KIND")
        out.append((f, role, kind, bits, dfmt))
    # Destinations that keep part of their old value, so are read too: the
    # accumulate-in-place VALU ops (D = A*B + D), a lane write, the scalar
    # ops that update sdst, and d16 loads that fill part of their registers
    # (the other 16 bits are kept).
    d16_partial = "_d16" in name and access == "Read" and (
        "_format_" not in name or name.endswith(("_x", "_xyz")))
    if (re.match(r"v_(f?mac|pk_fmac|dot\dc)_", name) or name == "v_writelane_b32"
            or re.match(r"s_(cmov|cmovk|addk|mulk|bitset[01])_", name) or d16_partial):
        out = [(o[0], "DstSrc", *o[2:]) if o[1] == "Dst" and o[0] in ("vdst", "sdst", "vdata") else o for o in out]
    acc = "None"
    if fmt == "Mfma":
        d = next(o for o in out if o[0] == "vdst")
        if name.startswith(SPARSE):
            acc = f"Some(Acc {{ read_bits: {d[3]}, write_bits: {d[3]} }})"
        else:
            c = next(o for o in out if o[0] == "src2")
            acc = f"Some(Acc {{ read_bits: {c[3]}, write_bits: {d[3]} }})"
    return dict(format=fmt, counters=counters, memory=memory, access=access, ops=out, acc=acc,
                lds_dma=lds_dma, encs=sorted({dict(FORMATS)[e] for e in encs}, key=[f for _, f in FORMATS].index))


def generate(gen=GENS["cdna4"]):
    cdna = gen["tsv"] == "cdna4.tsv"
    rows = read_xml_rows(gen)
    avail = read_targets(gen)
    by_name = {}
    for enc, name, opcode, ops in rows:
        e = by_name.setdefault(name, {"encs": {}, "opcode": {}})
        e["encs"][enc] = ops
        e["opcode"][enc] = opcode
    entries = []
    for name in sorted(by_name):
        e = by_name[name]
        p = derive(name, e["encs"], e["encs"], rdna=not cdna)
        first = next(x for x in ENC_ORDER if x in e["encs"])
        p["opcode"] = e["opcode"][first] if e["opcode"][first] >= 0 else "u16::MAX"
        p["name"] = name
        p["targets"] = avail.get(name, [])
        entries.append(p)
    sched = read_timing() if cdna else {}
    for p in entries:
        p["sched"] = [sched.get((p["name"], t)) for t in TARGETS]
    index = {p["name"]: i for i, p in enumerate(entries)}
    aliases_in = ALIASES if cdna else {}
    # An instruction LLVM spells differently on a target is there too.
    for a, target in aliases_in.items():
        if target in index:
            p = entries[index[target]]
            p["targets"] = [t for t in TARGETS if t in p["targets"] or t in avail.get(a, [])]
    aliases = []
    for a, target in sorted(aliases_in.items()):
        if target not in index:
            sys.exit(f"alias {a} -> {target}: {target} is not in {gen['tsv']}")
        aliases.append((a, index[target], avail.get(a, [])))

    def targets_expr(ts):
        bits = [f"T_{t.upper()}" for t in ALL_TARGETS if t in ts]
        return " | ".join(bits) if bits else "0"

    lines = [
        f"// @generated by gcn-emu/tools/isa_table.py from gcn-emu/tools/isa/{gen['tsv']}",
        f"// ({gen['xml']}) and gcn-emu/tools/isa/{gen['targets_tsv']}. Do not edit:",
        "// run `python3 gcn-emu/tools/isa_table.py generate`.",
        "",
        "use super::*;",
        "use Kind::*;",
        "use Role::*;",
        "",
        "const fn op(name: &'static str, role: Role, kind: Kind, bits: u16, format: &'static str) -> Operand {",
        "    Operand { name, role, kind, bits, format }",
        "}",
        "",
        f"/// Instructions in the table: {len(entries)}.",
        "pub static TABLE: [Props; %d] = [" % len(entries),
    ]
    for p in entries:
        ops = ", ".join(
            f"op(\"{f}\", {r}, {k}, {b}, \"{df}\")"
            for (f, r, k, b, df) in p["ops"])
        encs = ", ".join(f"Format::{x}" for x in p["encs"])
        sched = ", ".join("None" if x is None else f"Some(Sched {{ latency: {x[0]}, issue: {x[1]} }})"
                          for x in p["sched"])
        lines.append(
            f"    Props {{ name: \"{p['name']}\", format: Format::{p['format']}, encodings: &[{encs}], "
            f"opcode: {p['opcode']}, targets: {targets_expr(p['targets'])}, counters: Counters::{p['counters']}, "
            f"memory: Memory::{p['memory']}, access: Access::{p['access']}, lds_dma: {str(p['lds_dma']).lower()}, "
            f"operands: &[{ops}], acc: {p['acc']}, sched: [{sched}] }},")
    lines.append("];")
    lines.append("")
    lines.append("/// LLVM's spellings the XML lacks, sorted: (mnemonic, entry, targets).")
    lines.append("pub static ALIASES: [(&str, u16, u16); %d] = [" % len(aliases))
    for a, i, ts in aliases:
        lines.append(f"    (\"{a}\", {i}, {targets_expr(ts)}),")
    lines.append("];")
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd")
    x = sub.add_parser("extract", help="rewrite tools/isa/{cdna4,rdna3,rdna4}.tsv from tinygrad's wheel")
    x.add_argument("--wheel", required=True)
    t = sub.add_parser("targets", help="rewrite tools/isa/targets*.tsv with llvm-mc")
    t.add_argument("--llvm-mc", default="llvm-mc-22")
    t.add_argument("--check", action="store_true", help="exit 1 if targets.tsv differs")
    m = sub.add_parser("timing", help="rewrite tools/isa/mca.tsv with llvm-mca")
    m.add_argument("--llvm-mca", default="llvm-mca-22")
    m.add_argument("--check", action="store_true", help="exit 1 if mca.tsv differs")
    g = sub.add_parser("generate", help="write src/isa/table.rs, rdna3.rs, rdna4.rs")
    g.add_argument("--check", action="store_true", help="exit 1 if the checked-in table differs")
    a = ap.parse_args()
    if a.cmd == "extract":
        extract(a.wheel)
    elif a.cmd == "targets":
        if shutil.which(a.llvm_mc) is None:
            sys.exit(f"{a.llvm_mc} not found: install it with `apt-get install -y llvm-22` (or run tests/setup.sh)")
        targets(a.llvm_mc, a.check)
    elif a.cmd == "timing":
        if shutil.which(a.llvm_mca) is None:
            sys.exit(f"{a.llvm_mca} not found: install it with `apt-get install -y llvm-22` (or run tests/setup.sh)")
        timing(a.llvm_mca, a.check)
    else:
        for gen in GENS.values():
            out = os.path.join(os.path.dirname(OUT), gen["out"])
            text = generate(gen)
            if getattr(a, "check", False):
                with open(out) as f:
                    if f.read() != text:
                        sys.exit(f"{os.path.normpath(out)} is not what the generator writes: run `python3 gcn-emu/tools/isa_table.py generate`")
                print(f"{gen['out']} up to date")
            else:
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with open(out, "w") as f:
                    f.write(text)
                print(f"wrote {os.path.normpath(out)}")


if __name__ == "__main__":
    main()
