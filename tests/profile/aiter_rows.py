#!/usr/bin/env python3
"""Predicted (gcn-patch profile) against measured (aiter's tuned-GEMM tables)
kernel times for aiter's asm GEMMs.

Reads from aiter's mirror (bare git, default /work/.mirror/ROCm+aiter/repo or
$AITER_REPO) `aiter/configs/bf16_tuned_gemm.csv` (the rows whose kernelName is
an asm kernel of hsa/gfx950/bf16gemm, launched as
csrc/py_itfs_cu/asm_gemm_a16w16.cu does: grid N/tileN, ceil(M/tileM), splitK;
256 work-items; strides in bytes; alpha 1; a zeroed semaphore) and
`aiter/configs/a8w8_bpreshuffle_tuned_gemm.csv` (the gfx942 rows of the asm
kernels of hsa/gfx942/i8gemm, launched as asm_gemm_a8w8.cu does: grid
(N/tile_n)·splitK, ceil(M/tile_m); 256 work-items; lda, ldb = K bytes, ldc =
2N bytes), runs `gcn-patch profile --json` on the device of the row's
gfx and cu_num, and prints a Markdown table with |predicted/measured - 1|,
its median and 90th percentile, and Spearman's rank correlation, per file and
together. The script fits nothing (the fitted figures are in the device
table, gcn-emu/src/profile/device.rs). Usage:

    tests/profile/aiter_rows.py GCN_PATCH_BINARY [ROWS] [--held-out]

`--held-out`: instead of the two calibration files, every other CSV of
aiter/configs with rows of the same asm kernels (bf16gemm on gfx942 and
gfx950, i8gemm on gfx942) — the check the model was not tuned on.

ROWS limits the rows taken (every ROWS-th distinct shape first; default all).
With $AITER_ROWS_JSON set to a directory, each row's `profile --json` report
is kept there (for the calibration's analysis).
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

REPO = os.environ.get("AITER_REPO", "/work/.mirror/ROCm+aiter/repo")
DEVICES = {("gfx950", "256"): "mi355x", ("gfx942", "304"): "mi300x", ("gfx942", "80"): "mi308x"}


def show(path):
    return subprocess.run(["git", "-C", REPO, "show", f"HEAD:{path}"],
                          check=True, capture_output=True).stdout


def kernels(gfx):
    rows = csv.DictReader(io.StringIO(show(f"hsa/{gfx}/bf16gemm/bf16gemm_fp32bf16.csv").decode()))
    return {r["knl_name"]: r for r in rows}


def spearman(x, y):
    rx = np.argsort(np.argsort(x))
    ry = np.argsort(np.argsort(y))
    return float(np.corrcoef(rx, ry)[0, 1])


def profile(binary, d, co, symbol, grid, device, args, tag):
    cmd = [binary, "profile", co, "--kernel", symbol, "--grid", ",".join(map(str, grid)),
           "--block", "256", "--device", device, "--json", os.path.join(d, "p.json"), "--zero-rest"]
    for a in args:
        cmd += ["--arg", a]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=d)
    if p.returncode != 0 and "named `ptr_semaphore`" in p.stderr:
        # The kernels without the split-K handshake take no semaphore.
        i = cmd.index("ptr_semaphore=sem.npy")
        del cmd[i - 1:i + 1]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=d)
    secs = time.time() - t0
    if p.returncode != 0:
        return None, p.stderr.strip()[:300], secs
    j = json.load(open(os.path.join(d, "p.json")))
    keep = os.environ.get("AITER_ROWS_JSON")
    if keep:
        os.makedirs(keep, exist_ok=True)
        j["_grid"] = list(grid)
        json.dump(j, open(os.path.join(keep, tag + ".json"), "w"))
    return j, None, secs


def tag(r):
    return f"{r['gfx']}_{r['cu_num']}_{r['M']}x{r['N']}x{r['K']}_s{r['splitK']}_{r['kernelName']}"


def extract(d, path):
    # Named by the whole path: gfx942 and gfx950 have objects of one name.
    co = os.path.join(d, path.replace("/", "_"))
    if not os.path.exists(co):
        open(co, "wb").write(show(path))
    return co


def table(path):
    return list(csv.DictReader(io.StringIO(show(path).decode())))


def bf16_rows(binary, d, limit, path="aiter/configs/bf16_tuned_gemm.csv", gfxs=("gfx950",)):
    known = {g: kernels(g) for g in gfxs}
    rows = [r for r in table(path) if r.get("gfx") in known and r.get("kernelName") in known[r["gfx"]]
            and (r["gfx"], r.get("cu_num")) in DEVICES]
    if limit:
        rows = rows[::max(1, len(rows) // limit)][:limit]
    for r in rows:
        k = known[r["gfx"]][r["kernelName"]]
        m, n, kk, split = int(r["M"]), int(r["N"]), int(r["K"]), max(1, int(r["splitK"]))
        tm, tn = int(k["tileM"]), int(k["tileN"])
        if n * kk * 2 > 256 << 20:
            continue
        co = extract(d, f"hsa/{r['gfx']}/bf16gemm/{k['co_name']}")
        bf16_out = r.get("outdtype", "torch.bfloat16") == "torch.bfloat16"
        esize = 2 if bf16_out else 4
        np.save(os.path.join(d, "a.npy"), np.zeros(m * kk, dtype="<u2"))
        np.save(os.path.join(d, "b.npy"), np.zeros(n * kk, dtype="<u2"))
        gdx, gdy = (n + tn - 1) // tn, (m + tm - 1) // tm
        np.save(os.path.join(d, "sem.npy"), np.zeros(gdx * gdy, dtype="<u4"))
        args = [
            f"D=out:{'bf16' if bf16_out else 'f32'}:{m * n}",
            "A=a.npy", "B=b.npy", "C=u64:0", "Bias=u64:0", "ptr_semaphore=sem.npy",
            "alpha=f32:1", "beta=f32:0",
            f"strideD0=u32:{esize * n}", f"strideC0=u32:{esize * n}",
            f"strideA0=u32:{2 * kk}", f"strideB0=u32:{2 * kk}",
            f"Mdim=u32:{m}", f"Ndim=u32:{n}", f"Kdim=u32:{kk}", f"splitk=u32:{split}",
            f"is_out_b16=u32:{int(bf16_out)}",
        ]
        j, err, secs = profile(binary, d, co, r["kernelName"], (gdx, gdy, split),
                               DEVICES[(r["gfx"], r["cu_num"])], args, tag(r))
        yield os.path.basename(path).removesuffix(".csv"), r, j, err, secs


def i8_rows(binary, d, limit, path="aiter/configs/a8w8_bpreshuffle_tuned_gemm.csv"):
    cfg = csv.DictReader(io.StringIO(show("hsa/gfx942/i8gemm/i8gemm_bf16_perTokenI8.csv").decode()))
    known = {r["knl_name"]: r for r in cfg}
    rows = [r for r in table(path) if r.get("gfx") == "gfx942" and r.get("kernelName") in known
            and (r["gfx"], r.get("cu_num")) in DEVICES]
    if limit:
        rows = rows[::max(1, len(rows) // limit)][:limit]
    for r in rows:
        k = known[r["kernelName"]]
        m, n, kk = int(r["M"]), int(r["N"]), int(r["K"])
        ks = int(r["splitK"]) or 1
        tm, tn = int(k["tile_m"]), int(k["tile_n"])
        if n * kk > 256 << 20:
            continue
        co = extract(d, f"hsa/gfx942/i8gemm/{k['co_name']}")
        np.save(os.path.join(d, "a.npy"), np.zeros(m * kk, dtype="i1"))
        np.save(os.path.join(d, "b.npy"), np.zeros(n * kk, dtype="i1"))
        np.save(os.path.join(d, "sa.npy"), np.ones(m, dtype="<f4"))
        np.save(os.path.join(d, "sb.npy"), np.ones(n, dtype="<f4"))
        # A zero bias: the kernels read it even when aiter passes none.
        np.save(os.path.join(d, "bias.npy"), np.zeros(n, dtype="<f4"))
        args = [
            f"C=out:bf16:{m * n}", "A=a.npy", "B=b.npy", "SA=sa.npy", "SB=sb.npy", "BIAS=bias.npy",
            f"M=u32:{m}", f"Ndim=u32:{n}", f"K=u32:{kk}",
            f"PA=u32:{kk}", f"PB=u32:{kk}", f"PC=u32:{2 * n}", f"KS=u32:{ks}",
        ]
        grid = ((n // tn) * ks, (m + tm - 1) // tm, 1)
        j, err, secs = profile(binary, d, co, r["kernelName"], grid,
                               DEVICES[(r["gfx"], r["cu_num"])], args, tag(r))
        if j is None and "names none of the kernel's arguments" in err:
            # No names in the metadata: aiter's packed KernelArgs by
            # position (6 pointers each with 2 pad dwords, then m, n, k,
            # lda, ldb, ldc, ks each with 3 pad dwords), the rest zero.
            vals = {0: args[0].split("=", 1)[1], 3: "a.npy", 6: "b.npy", 9: "sa.npy",
                    12: "sb.npy", 15: "bias.npy"}
            for i, a in enumerate(args[6:]):
                vals[18 + 4 * i] = a.split("=", 1)[1]
            # The metadata declares 55 arguments, 3 more pointers (46, 49,
            # 52) than aiter's struct passes: null here.
            vals.update({46: "u64:0", 49: "u64:0", 52: "u64:0"})
            pos = [vals.get(i, "u32:0") for i in range(55)]
            j, err, secs = profile(binary, d, co, r["kernelName"], grid,
                                   DEVICES[(r["gfx"], r["cu_num"])], pos, tag(r))
        yield os.path.basename(path).removesuffix(".csv"), r, j, err, secs


CALIBRATION = ("aiter/configs/bf16_tuned_gemm.csv", "aiter/configs/a8w8_bpreshuffle_tuned_gemm.csv")


def held_out(binary, d, limit):
    """Every other CSV of aiter/configs (model_configs included) with rows
    of the asm kernels above: bf16gemm (gfx942, gfx950) and i8gemm
    (gfx942)."""
    files = subprocess.run(["git", "-C", REPO, "ls-tree", "-r", "--name-only", "HEAD", "aiter/configs"],
                           check=True, capture_output=True, text=True).stdout.split()
    for path in sorted(files):
        if not path.endswith(".csv") or path in CALIBRATION:
            continue
        head = table(path)[:1]
        if not head or not {"gfx", "cu_num", "M", "N", "K", "us", "kernelName"} <= set(head[0]):
            continue
        yield from bf16_rows(binary, d, limit, path, ("gfx942", "gfx950"))
        yield from i8_rows(binary, d, limit, path)


def main():
    args = [a for a in sys.argv[1:] if a != "--held-out"]
    binary = os.path.abspath(args[0])
    limit = int(args[1]) if len(args) > 1 else None
    out = []
    with tempfile.TemporaryDirectory() as d:
        gens = ((held_out(binary, d, limit),) if "--held-out" in sys.argv else
                (bf16_rows(binary, d, limit), i8_rows(binary, d, limit)))
        for gen in gens:
            for f, r, j, err, secs in gen:
                if j is None:
                    print(f"<!-- {f} {r['kernelName']} {r['M']}x{r['N']}x{r['K']}: failed: {err} -->")
                    continue
                out.append((f, r, j, secs))
    print("| file | gfx | CUs | M | N | K | splitK | kernel | measured µs | predicted µs | predicted/measured − 1 | profile s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    by = {}
    for f, r, j, secs in out:
        mu, pu = float(r["us"]), j["predicted_us"]
        e = pu / mu - 1
        by.setdefault(f, []).append((pu, mu))
        by.setdefault("both", []).append((pu, mu))
        name = r["kernelName"].removeprefix("_ZN5aiter").rstrip("E").lstrip("0123456789")
        print(f"| {f} | {r['gfx']} | {r['cu_num']} | {r['M']} | {r['N']} | {r['K']} | {r['splitK']} | {name} | "
              f"{mu:.2f} | {pu:.2f} | {e:+.0%} | {secs:.0f} |")
    print()
    for f, v in by.items():
        errs = [abs(p / m - 1) for p, m in v]
        print(f"{f}: rows {len(v)}; median |error| {np.median(errs):.0%}; 90th percentile "
              f"{np.percentile(errs, 90):.0%}; Spearman {spearman([p for p, _ in v], [m for _, m in v]):.2f}")


if __name__ == "__main__":
    main()
