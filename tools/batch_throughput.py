"""Batch throughput benchmark (GPU machine): N submissions graded end to end (compile,
check, bench, PDF) on one GPU, then on two, with the wall time and the ratio printed.

    python tools/batch_throughput.py [--n 50] [--gpus 0 0,1] [--jobs 16] [--work DIR]

The class is made of real kernels: copies of the reference CUDA kernels (naive, fused,
fused_opt) and of the GPU test submissions (correct, wrong, out-of-bounds), each with a
distinct comment so that every one is compiled separately, as a real class would be.
Each run writes a fresh OUT folder (nothing is reused between the two runs).
"""
from __future__ import annotations

import argparse
import csv
import json
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KINDS = [("reference/fused.cu", 4), ("reference/naive.cu", 2), ("reference/fused_tc.cu", 2),
         ("tests/submissions/gpu/correct_rows.py", 1), ("tests/submissions/gpu/never_writes_tail.py", 1)]


def make_class(dest: Path, n: int) -> Counter:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    cycle = [path for path, weight in KINDS for _ in range(weight)]
    kinds: Counter = Counter()
    for i in range(n):
        rel = cycle[i % len(cycle)]
        text = (REPO / rel).read_text()
        if rel.endswith(".cu"):
            text = f'_CUDA_SRC = r"""\n// student {i:03d}\n{text}\n"""\n'
        else:
            text = text.replace('_CUDA_SRC = r"""', f'_CUDA_SRC = r"""\n// student {i:03d}', 1)
        (dest / f"s{i:03d}.py").write_text(text)
        kinds[Path(rel).stem] += 1
    return kinds


def run(subs: Path, out: Path, gpus: str, jobs: int) -> dict:
    if out.exists():
        shutil.rmtree(out)
    cmd = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--gpus", gpus,
           "--jobs", str(jobs)]
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    for line in proc.stdout:               # the batch's own log, as it happens
        print(f"  {time.monotonic() - t0:6.1f} s  {line.rstrip()}", flush=True)
    proc.wait()
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"batch failed with exit code {proc.returncode}")
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    pdfs = sum(1 for r in rows if (out / r["submission"] / "report.pdf").is_file())
    stages: dict = {}
    gpus_used: Counter = Counter()
    for r in rows:
        doc = json.loads((out / r["submission"] / "results.json").read_text())
        for stage, secs in doc.get("stage_seconds", {}).items():
            stages.setdefault(stage, []).append(secs)
        gpus_used[doc.get("system", {}).get("gpu_uuid") or "?"] += 1
    print("  mean seconds per stage of the device phase: "
          + ", ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in sorted(stages.items())))
    print("  submissions per GPU (by UUID): " + ", ".join(f"{u[-8:]} {n}" for u, n in sorted(gpus_used.items())))
    return {"gpus": gpus, "wall_s": round(wall, 1), "n": len(rows), "pdfs": pdfs,
            "per_min": round(len(rows) / wall * 60, 2),
            "statuses": dict(Counter(r["status"] for r in rows)),
            "summary_pdf": (out / "summary.pdf").is_file()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50)
    ap.add_argument("--gpus", nargs="+", default=["0", "0,1"])
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--work", default="/tmp/batch-throughput")
    ap.add_argument("--json", help="write the figures here")
    args = ap.parse_args()
    work = Path(args.work)
    kinds = make_class(work / "subs", args.n)
    print(f"{args.n} submissions: {dict(kinds)}")
    results = []
    for gpus in args.gpus:
        r = run(work / "subs", work / f"out-{gpus.replace(',', '_')}", gpus, args.jobs)
        results.append(r)
        print(f"GPUs {gpus}: {r['n']} graded in {r['wall_s']} s ({r['per_min']} per minute), "
              f"{r['pdfs']} report PDFs, summary.pdf {r['summary_pdf']}; {r['statuses']}")
    if len(results) >= 2:
        print(f"throughput ratio ({results[1]['gpus']} vs {results[0]['gpus']}): "
              f"{results[1]['per_min'] / results[0]['per_min']:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
