"""Timing fidelity: grade the same submission N times (separate grader processes, as
a student would) and print how much the headline figures move between runs.

The bar is the slowdown, the figure the grade is decided by (issue 29): its spread
(max - min) / median across grades within 1% at every size, and every grade's 95%
interval (grader/analysis/confidence.py) holding every other grade's slowdown. The student's and
SDPA's times are printed beside it, for information (a clock that drifts between grades
moves both alike, and the ratio not).
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
LIMIT = 1.0                  # percent: the slowdown's spread across grades, every size


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
            print(f"run {i + 1}: " + "  ".join(f"S={b['S']}: {b['student_ms'] * 1e3:.2f} µs" for b in doc["bench"]),
                  flush=True)
    print(f"\ntiming fidelity over {args.runs} grades of {args.submission} "
          f"({runs[0]['system'].get('gpu') or runs[0]['system'].get('cpu')}; method: {runs[0]['timing'].get('method')})")
    print(f"{'S':>6} {'figure':>9} {'median':>12} {'min':>12} {'max':>12} {'spread':>8} {'limit':>6}  verdict")
    ok = True
    for i, row in enumerate(runs[0]["bench"]):
        for kernel in ("student", "sdpa"):
            values = [r["bench"][i][f"{kernel}_ms"] * 1e3 for r in runs]
            med = statistics.median(values)
            spread = 100 * (max(values) - min(values)) / med
            print(f"{row['S']:>6} {kernel:>9} {med:>10.2f}µs {min(values):>10.2f}µs {max(values):>10.2f}µs "
                  f"{spread:>7.2f}%      -  (information)")
        ratios = [r["bench"][i]["slowdown"] for r in runs]
        med = statistics.median(ratios)
        spread = 100 * (max(ratios) - min(ratios)) / med
        passed = spread <= LIMIT
        ok &= passed
        print(f"{row['S']:>6} {'slowdown':>9} {med:>11.4f}x {min(ratios):>11.4f}x {max(ratios):>11.4f}x "
              f"{spread:>7.2f}% {LIMIT:>5.0f}%  {'PASS' if passed else 'FAIL'}")
        intervals = [r["bench"][i].get("interval") or {} for r in runs]
        for j, iv in enumerate(intervals):
            if not iv:
                print(f"{'':>6} run {j + 1}: no interval in its results")
                ok = False
                continue
            outside = [k + 1 for k, x in enumerate(ratios) if not iv["low"] <= x <= iv["high"]]
            ok &= not outside
            print(f"{'':>6} run {j + 1}: 95% interval {iv['low']:.4f}-{iv['high']:.4f}x (±{iv['half_width']:.2%}, "
                  f"{iv['rounds']} rounds{', cap hit' if iv.get('cap_hit') else ''})"
                  + (f": does not hold run(s) {outside}'s slowdown  FAIL" if outside else ""))
        part = between_grades(ratios, intervals)
        if part is not None:
            print(f"{'':>6} what varied between grades beyond their rounds: sd {part[0]:.2%} of the slowdown "
                  f"(the grades' sd {part[1]:.2%}, their rounds' {part[2]:.2%}); each interval adds "
                  f"{part[3]:.2%} (confidence.RUN_TO_RUN)" + ("  ABOVE IT" if part[0] > part[3] else ""))
        quality = [r.get("bench_quality", {}).get("status") for r in runs]
        if "noisy" in quality:
            print(f"{'':>6} noisy runs: {[j + 1 for j, q in enumerate(quality) if q == 'noisy']}")
    print("spread = (max - min) / median across runs; the bar is the slowdown's")
    sys.exit(0 if ok else 1)


def between_grades(ratios: list[float], intervals: list[dict]) -> tuple[float, float, float, float] | None:
    """The grade-to-grade standard deviation the grades' own rounds do not explain, as a
    fraction of the slowdown: sqrt(sd(slowdowns)² - se²), se the median standard error the
    intervals imply without the run-to-run part they add. With that part, the sd of the
    slowdowns, se and the part added (None below three grades or without intervals)."""
    from statistics import NormalDist
    ivs = [iv for iv in intervals if iv.get("half_width") is not None]
    if len(ratios) < 3 or len(ivs) < len(ratios):
        return None
    z = NormalDist().inv_cdf(1 - (1 - ivs[0].get("level", 0.95)) / 2)
    added = ivs[0].get("run_to_run") or 0.0
    se = statistics.median((max(0.0, iv["half_width"] ** 2 - (z * (iv.get("run_to_run") or 0.0)) ** 2)) ** 0.5 / z
                           for iv in ivs)
    sd = statistics.stdev(ratios) / statistics.median(ratios)
    return max(0.0, sd * sd - se * se) ** 0.5, sd, se, added


if __name__ == "__main__":
    main()
