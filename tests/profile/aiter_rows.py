#!/usr/bin/env python3
"""Predicted (gcn-patch profile) against measured (aiter's tuned-GEMM tables)
kernel times for aiter's asm GEMMs.

Reads aiter's `aiter/configs/bf16_tuned_gemm.csv` from the mirror (bare git,
default /work/.mirror/ROCm+aiter/repo or $AITER_REPO), takes the rows whose
kernelName is an asm kernel of hsa/<gfx>/bf16gemm, builds each launch as
aiter's csrc/py_itfs_cu/asm_gemm_a16w16.cu does (grid N/tileN, ceil(M/tileM),
splitK; 256 work-items; strides in bytes; alpha 1; a zeroed semaphore), runs
`gcn-patch profile --device mi355x --json`, and prints a Markdown table with
|predicted/measured - 1|, its median and 90th percentile, and Spearman's rank
correlation. Nothing is fitted. Usage:

    tests/profile/aiter_rows.py GCN_PATCH_BINARY [ROWS]

ROWS limits the rows taken (every ROWS-th distinct shape first; default all).
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


def main():
    binary = os.path.abspath(sys.argv[1])
    limit = int(sys.argv[2]) if len(sys.argv) > 2 else None
    table = list(csv.DictReader(io.StringIO(show("aiter/configs/bf16_tuned_gemm.csv").decode())))
    known = {g: kernels(g) for g in {"gfx950"}}
    rows = [r for r in table if r["gfx"] in known and r["kernelName"] in known[r["gfx"]]]
    if limit:
        step = max(1, len(rows) // limit)
        rows = rows[::step][:limit]
    out = []
    with tempfile.TemporaryDirectory() as d:
        for r in rows:
            k = known[r["gfx"]][r["kernelName"]]
            m, n, kk, split = int(r["M"]), int(r["N"]), int(r["K"]), max(1, int(r["splitK"]))
            tm, tn = int(k["tileM"]), int(k["tileN"])
            if n * kk * 2 > 256 << 20:
                continue
            co = os.path.join(d, k["co_name"])
            if not os.path.exists(co):
                open(co, "wb").write(show(f"hsa/{r['gfx']}/bf16gemm/{k['co_name']}"))
            bf16_out = r["outdtype"] == "torch.bfloat16"
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
            cmd = [binary, "profile", co, "--kernel", r["kernelName"],
                   "--grid", f"{gdx},{gdy},{split}", "--block", "256",
                   "--device", DEVICES[(r["gfx"], r["cu_num"])], "--json", os.path.join(d, "p.json"),
                   "--zero-rest"]
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
                print(f"<!-- {r['kernelName']} {m}x{n}x{kk}: failed: {p.stderr.strip()[:300]} -->")
                continue
            j = json.load(open(os.path.join(d, "p.json")))
            out.append((r, j, secs))
    print("| gfx | M | N | K | splitK | kernel | measured µs | predicted µs | predicted/measured − 1 | bound | profile s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    errs, pred, meas = [], [], []
    for r, j, secs in out:
        mu, pu = float(r["us"]), j["predicted_us"]
        e = pu / mu - 1
        errs.append(abs(e)); pred.append(pu); meas.append(mu)
        name = r["kernelName"].removeprefix("_ZN5aiter").rstrip("E").lstrip("0123456789")
        print(f"| {r['gfx']} | {r['M']} | {r['N']} | {r['K']} | {r['splitK']} | {name} | {mu:.2f} | {pu:.2f} | {e:+.0%} | {j['bound']} | {secs:.0f} |")
    if errs:
        print()
        print(f"rows: {len(errs)}; median |error| {np.median(errs):.0%}; 90th percentile {np.percentile(errs, 90):.0%}; "
              f"Spearman {spearman(pred, meas):.2f}")


if __name__ == "__main__":
    main()
