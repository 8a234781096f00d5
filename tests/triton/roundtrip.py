#!/usr/bin/env python3
"""Triton's side of the round-trip test (issue 10), no GPU needed.

  roundtrip.py dump KERNEL ARCH DUMP_DIR CACHE_DIR
      compile KERNEL (from generate.py) for ARCH with TRITON_KERNEL_DUMP=1:
      writes DUMP_DIR/<hash>/KERNEL.{ttir,ttgir,llir,amdgcn,hsaco} and the
      cache entry (with KERNEL.json) under CACHE_DIR
  roundtrip.py override KERNEL ARCH OVERRIDE_DIR CACHE_DIR OUT_HSACO
      compile again with TRITON_KERNEL_OVERRIDE=1 TRITON_OVERRIDE_DIR=OVERRIDE_DIR
      (Triton prints `Overriding kernel with file ...`) and write the code
      object Triton returns to OUT_HSACO
Both bypass Triton's cache (TRITON_ALWAYS_COMPILE=1)."""
import os, sys

def main():
    mode, name, arch = sys.argv[1], sys.argv[2], sys.argv[3]
    os.environ["TRITON_DEFAULT_FP_FUSION"] = "1"
    os.environ["TRITON_DISABLE_LINE_INFO"] = "1"
    os.environ["TRITON_ALWAYS_COMPILE"] = "1"
    if mode == "dump":
        os.environ["TRITON_KERNEL_DUMP"] = "1"
        os.environ["TRITON_DUMP_DIR"] = sys.argv[4]
        os.environ["TRITON_CACHE_DIR"] = sys.argv[5]
    elif mode == "override":
        os.environ["TRITON_KERNEL_OVERRIDE"] = "1"
        os.environ["TRITON_OVERRIDE_DIR"] = sys.argv[4]
        os.environ["TRITON_CACHE_DIR"] = sys.argv[5]
    else:
        sys.exit(f"roundtrip.py: unknown mode {mode}")
    # Import after the environment is set: Triton reads its knobs from it.
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import generate
    import triton
    from triton.backends.compiler import GPUTarget
    if triton.__version__ != "3.9.0":
        sys.exit(f"roundtrip.py: need triton 3.9.0 (found {triton.__version__}); run bash tests/setup.sh")
    fn, sig, consts = generate.KERNELS[name]
    src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs=consts)
    k = triton.compile(src, target=GPUTarget("hip", arch, generate.ARCHS[arch]))
    if mode == "override":
        with open(sys.argv[6], "wb") as f:
            f.write(k.asm["hsaco"])
    print(f"shared={k.metadata.shared} hash={src.hash()}")

if __name__ == "__main__":
    main()
