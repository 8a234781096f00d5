#!/usr/bin/env python3
"""The RDNA test corpus (issue 35): code objects for gfx1100 (RDNA3) and
gfx1201 (RDNA4) made by the real compilers, no GPU needed.

* kernels/*.hip, compiled by clang-22 (`-x hip --cuda-device-only -nogpuinc
  -nogpulib -O3`) for each target: LDS and barriers, cross-lane (ds_swizzle,
  ds_bpermute, permlane16/x16, DPP, DPP8), WMMA, atomics (global, LDS, f32),
  buffer out-of-bounds (CDNA's V# word 3 and composable_kernel's gfx11 one),
  a wave64 kernel (-mwavefrontsize64), and rdna_ops (VOP3 DPP,
  ds_cmpstore, RDNA's buffer and global atomic names).
* Triton 3.9 (its AMD backend, wave32): an f16 matmul (tl.dot: WMMA) and a
  row softmax, with Triton's launch metadata (.json: shared, num_warps).

IREE 3.13's matmul, conv and softmax for gfx1100/gfx1201 are in
tests/corpus/iree/ (tests/corpus/regen.sh). Writes <target>/<kernel>.hsaco
(and .json for Triton) beside this script and checks every object
disassembles with llvm-objdump-22 (gfx1201's Triton matmul uses true16
VGPR halves, which LLVM 22 decodes only with --mattr=+real-true16).
HIP objects are reproducible (`-fuse-cuid=none`: see hip()); Triton's are
as Triton writes them.
Usage: python3 gcn-emu/tests/rdna/generate.py"""
import json, os, shutil, subprocess, sys

TARGETS = ["gfx1100", "gfx1201"]
# Kernels built with more than the common flags: wave64 asks for 64 lanes.
FLAGS = {"wave64.hip": ["-mwavefrontsize64"], "wmma_w64.hip": ["-mwavefrontsize64"]}
ROOT = os.path.dirname(os.path.abspath(__file__))


def need(tool, how):
    if shutil.which(tool) is None:
        sys.exit(f"generate.py: {tool} not found: {how}")


def hip():
    need("clang-22", "apt-get install -y clang-22 lld-22 llvm-22 (or bash tests/setup.sh)")
    kdir = os.path.join(ROOT, "kernels")
    for src in sorted(os.listdir(kdir)):
        if not src.endswith(".hip"):
            continue
        for t in TARGETS:
            out = os.path.join(ROOT, t, src[:-4] + ".hsaco")
            os.makedirs(os.path.dirname(out), exist_ok=True)
            # -fuse-cuid=none: clang's default compilation-unit id is random
            # (`-fuse-cuid=random`), and it names a symbol in the object
            # (`__hip_cuid_<16 hex digits>`), so each run wrote different
            # bytes; `hash` hashes the paths too. With `none` the symbol is
            # `__hip_cuid_` and two runs write the same object. (The id keeps
            # static device variables of several units apart when linked
            # together; each kernel here is one unit.)
            subprocess.run(["clang-22", "-x", "hip", "--cuda-device-only", "-nogpuinc", "-nogpulib", "-O3",
                            "--no-gpu-bundle-output", "-fuse-cuid=none", f"--offload-arch={t}",
                            *FLAGS.get(src, []),
                            os.path.join(kdir, src), "-o", out],
                           check=True)


def triton_kernels():
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    if triton.__version__ != "3.9.0":
        sys.exit(f"generate.py: need triton 3.9.0 (found {triton.__version__}); run bash tests/setup.sh")

    @triton.jit
    def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            av = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            bv = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(av, bv)
        tl.store(c + rm[:, None] * N + rn[None, :], acc)

    @triton.jit
    def softmax(x, y, N, BN: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BN)
        v = tl.load(x + row * N + cols, mask=cols < N, other=-float("inf"))
        v = v - tl.max(v, axis=0)
        e = tl.exp(v)
        tl.store(y + row * N + cols, e / tl.sum(e, axis=0), mask=cols < N)

    kernels = [
        ("matmul", matmul, {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32",
                            "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"},
         {"BM": 32, "BN": 32, "BK": 32}),
        ("softmax", softmax, {"x": "*fp32", "y": "*fp32", "N": "i32", "BN": "constexpr"}, {"BN": 128}),
    ]
    for t in TARGETS:
        for name, fn, sig, consts in kernels:
            src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts)
            k = triton.compile(src, target=GPUTarget("hip", t, 32))
            base = os.path.join(ROOT, t, f"triton_{name}")
            os.makedirs(os.path.dirname(base), exist_ok=True)
            with open(base + ".hsaco", "wb") as f:
                f.write(k.asm["hsaco"])
            md = k.metadata
            with open(base + ".json", "w") as f:
                json.dump({"name": md.name, "shared": md.shared, "num_warps": md.num_warps,
                           "warp_size": md.warp_size, "constexprs": consts}, f, indent=1, sort_keys=True)
                f.write("\n")


def triton_gfx1250():
    """Triton 3.9's f16 matmul (the one above) for gfx1250, into gfx1250/:
    its B operand reaches the WMMA through `ds_load_tr16_b128`. Only this
    object is made for gfx1250 (`python3 generate.py gfx1250` makes it
    alone)."""
    os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
    import triton, triton.language as tl
    from triton.backends.compiler import GPUTarget
    if triton.__version__ != "3.9.0":
        sys.exit(f"generate.py: need triton 3.9.0 (found {triton.__version__}); run bash tests/setup.sh")

    @triton.jit
    def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm = tl.program_id(0) * BM + tl.arange(0, BM)
        rn = tl.program_id(1) * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            av = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            bv = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            acc += tl.dot(av, bv)
        tl.store(c + rm[:, None] * N + rn[None, :], acc)

    sig = {"a": "*fp16", "b": "*fp16", "c": "*fp32", "M": "i32", "N": "i32", "K": "i32",
           "BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    consts = {"BM": 32, "BN": 32, "BK": 32}
    src = triton.compiler.ASTSource(fn=matmul, signature=sig, constexprs=consts)
    k = triton.compile(src, target=GPUTarget("hip", "gfx1250", 32))
    base = os.path.join(ROOT, "gfx1250", "triton_matmul")
    os.makedirs(os.path.dirname(base), exist_ok=True)
    with open(base + ".hsaco", "wb") as f:
        f.write(k.asm["hsaco"])
    md = k.metadata
    with open(base + ".json", "w") as f:
        json.dump({"name": md.name, "shared": md.shared, "num_warps": md.num_warps,
                   "warp_size": md.warp_size, "constexprs": consts}, f, indent=1, sort_keys=True)
        f.write("\n")


def check():
    need("llvm-objdump-22", "apt-get install -y llvm-22 (or bash tests/setup.sh)")
    for t in TARGETS:
        for f in sorted(os.listdir(os.path.join(ROOT, t))):
            if f.endswith(".hsaco"):
                path = os.path.join(ROOT, t, f)
                p = subprocess.run(["llvm-objdump-22", "-d", path], capture_output=True, text=True)
                if p.returncode != 0:
                    sys.exit(f"{t}/{f}: llvm-objdump-22 -d failed: {p.stderr[:500]}")
                longs = sum(1 for l in p.stdout.splitlines() if l.strip().startswith(".long"))
                note = ""
                if longs:
                    # Triton's gfx12 code uses true16 (v9.l): LLVM 22 decodes it only when asked.
                    q = subprocess.run(["llvm-objdump-22", "-d", "--mattr=+real-true16", path],
                                       capture_output=True, text=True)
                    if ".long" in q.stdout:
                        sys.exit(f"{t}/{f}: words llvm-objdump-22 cannot decode even with --mattr=+real-true16")
                    note = f" ({longs} true16 words: --mattr=+real-true16)"
                print(f"{t}/{f}: {sum(1 for l in p.stdout.splitlines() if l.startswith(chr(9)))} instructions{note}")


if __name__ == "__main__":
    if sys.argv[1:] == ["gfx1250"]:
        triton_gfx1250()
        sys.exit(0)
    hip()
    triton_kernels()
    check()
