"""Timing fidelity: grade the same submission N times (separate grader processes, as
a student would) and print how much the headline times move between runs.

Target (GPU issue): spread (max - min) / median within 1% at S = 512 and 1024 and
within 3% at S = 128. Prints the spreads of the student's and SDPA's headline times.
"""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
LIMITS = {128: 3.0}          # percent; every other S: 1%
DEFAULT_LIMIT = 1.0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("submission", nargs="?", default=str(REPO / "reference" / "fused.cu"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--backend", default="auto")
    args = ap.parse_args()
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.runs):
            out = Path(tmp) / f"run{i}.json"
            proc = subprocess.run([sys.executable, "-m", "grader", "grade", args.submission, "--backend",
                                   args.backend, "--json", str(out), "--quiet"], cwd=REPO,
                                  capture_output=True, text=True)
            if not out.exists():
                sys.exit(f"run {i + 1} wrote no results:\n{proc.stdout}\n{proc.stderr}")
            doc = json.loads(out.read_text())
            if doc["verdict"] != "ok":
                sys.exit(f"run {i + 1}: verdict {doc['verdict']}: {doc['message']}")
            runs.append(doc)
            print(f"run {i + 1}: " + "  ".join(f"S={b['S']}: {b['student_ms'] * 1e3:.2f} us" for b in doc["bench"]),
                  flush=True)
    print(f"\ntiming fidelity over {args.runs} grades of {args.submission} "
          f"({runs[0]['system'].get('gpu') or runs[0]['system'].get('cpu')}; method: {runs[0]['timing'].get('method')})")
    print(f"{'S':>6} {'kernel':>8} {'median':>12} {'min':>12} {'max':>12} {'spread':>8} {'limit':>6}  verdict")
    ok = True
    for i, row in enumerate(runs[0]["bench"]):
        for kernel in ("student", "sdpa"):
            values = [r["bench"][i][f"{kernel}_ms"] * 1e3 for r in runs]
            med = statistics.median(values)
            spread = 100 * (max(values) - min(values)) / med
            limit = LIMITS.get(row["S"], DEFAULT_LIMIT)
            passed = spread <= limit
            ok &= passed or kernel != "student"
            print(f"{row['S']:>6} {kernel:>8} {med:>10.2f}us {min(values):>10.2f}us {max(values):>10.2f}us "
                  f"{spread:>7.2f}% {limit:>5.0f}%  {'PASS' if passed else 'FAIL'}")
    print("spread = (max - min) / median of the headline times across runs")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
