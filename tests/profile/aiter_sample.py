#!/usr/bin/env python3
"""Copies a sample of aiter's measured GEMM times into
tests/profile/aiter_sample.csv, for the fast check of `gcn-patch profile`
(gcn-patch/tests/it/profile.rs, `profile_predicts_a_sample_of_aiters_measured_times`).

Usage: tests/profile/aiter_sample.py [AITER_REPO]   (default: $AITER_REPO or
/work/.mirror/ROCm+aiter/repo; a clone or bare mirror, read at HEAD)

The rule (no row is chosen by hand): from the two calibration files of
issue 32 (aiter/configs/bf16_tuned_gemm.csv, gfx950 rows;
aiter/configs/a8w8_bpreshuffle_tuned_gemm.csv, gfx942 rows), the rows whose
asm kernel's code object is in tests/corpus/aiter; for each such kernel the
row of the smallest M·N·K (ties: the first). Written with each row's tile
(from the kernel lists hsa/<gfx>/bf16gemm/bf16gemm_fp32bf16.csv and
hsa/gfx942/i8gemm/i8gemm_bf16_perTokenI8.csv) and the object's path in the
corpus. aiter is MIT-licensed; its commit is written in the header.
"""
import csv
import io
import os
import subprocess
import sys

repo = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("AITER_REPO", "/work/.mirror/ROCm+aiter/repo")
root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def show(path):
    return subprocess.run(["git", "-C", repo, "show", f"HEAD:{path}"], check=True,
                          capture_output=True, text=True).stdout


commit = subprocess.run(["git", "-C", repo, "rev-parse", "HEAD"], check=True, capture_output=True,
                        text=True).stdout.strip()
out = []
for path, gfx, kinds, tm, tn in [
    ("aiter/configs/bf16_tuned_gemm.csv", "gfx950", "hsa/gfx950/bf16gemm/bf16gemm_fp32bf16.csv", "tileM", "tileN"),
    ("aiter/configs/a8w8_bpreshuffle_tuned_gemm.csv", "gfx942", "hsa/gfx942/i8gemm/i8gemm_bf16_perTokenI8.csv",
     "tile_m", "tile_n"),
]:
    known = {r["knl_name"]: r for r in csv.DictReader(io.StringIO(show(kinds)))}
    best = {}
    for r in csv.DictReader(io.StringIO(show(path))):
        k = known.get(r["kernelName"])
        if r["gfx"] != gfx or k is None:
            continue
        co = f"tests/corpus/aiter/{gfx}/{os.path.dirname(kinds).split('/', 2)[2]}/{k['co_name']}"
        if not os.path.exists(os.path.join(root, co)):
            continue
        size = int(r["M"]) * int(r["N"]) * int(r["K"])
        if r["kernelName"] not in best or size < best[r["kernelName"]][0]:
            best[r["kernelName"]] = (size, r, k, co)
    for _, r, k, co in best.values():
        out.append({"file": os.path.basename(path), "gfx": gfx, "cu_num": r["cu_num"], "M": r["M"], "N": r["N"],
                    "K": r["K"], "splitK": r["splitK"], "outdtype": r.get("outdtype", ""), "us": r["us"],
                    "kernelName": r["kernelName"], "tile_m": k[tm], "tile_n": k[tn], "object": co})
dst = os.path.join(root, "tests/profile/aiter_sample.csv")
with open(dst, "w", newline="") as f:
    f.write(f"# measured kernel times copied from ROCm/aiter {commit} (MIT) by tests/profile/aiter_sample.py\n")
    w = csv.DictWriter(f, fieldnames=list(out[0]))
    w.writeheader()
    w.writerows(out)
print(f"{dst}: {len(out)} rows")
