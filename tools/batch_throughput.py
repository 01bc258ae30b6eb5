"""Batch throughput benchmark (GPU machine): N submissions graded end to end (compile,
check, bench, PDF) on one GPU, then on two, with the wall time and the ratio printed.

    python tools/batch_throughput.py [--n 50] [--gpus 0 0,1] [--jobs 16] [--work DIR]

The class is made of real kernels: copies of the reference CUDA kernels (naive, fused,
fused_opt) and of the GPU test submissions (correct, wrong, out-of-bounds), each with a
distinct comment so that every one is compiled separately, as a real class would be.
Each run grades a class of its own (a salt in every source, so no run finds another's
builds in the cache) into a fresh OUT folder. The grader's binding module and the
reference kernels are built once, by the first run (or before it), as on any installed
grader; `--cold` removes the build cache before each run.
"""
from __future__ import annotations

import argparse
import csv
import json
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
KINDS = [("reference/fused.cu", 4), ("reference/naive.cu", 2), ("reference/fused_tc.cu", 2),
         ("tests/submissions/gpu/correct_rows.py", 1), ("tests/submissions/gpu/never_writes_tail.py", 1)]


def make_class(dest: Path, n: int, salt: str = "") -> Counter:
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    cycle = [path for path, weight in KINDS for _ in range(weight)]
    kinds: Counter = Counter()
    for i in range(n):
        rel = cycle[i % len(cycle)]
        text = (REPO / rel).read_text()
        if rel.endswith(".cu"):
            text = f'_CUDA_SRC = r"""\n// student {i:03d} {salt}\n{text}\n"""\n'
        else:
            text = text.replace('_CUDA_SRC = r"""', f'_CUDA_SRC = r"""\n// student {i:03d} {salt}', 1)
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
    finished = []                          # when each submission's progress line came
    for line in proc.stdout:               # the batch's own log, as it happens
        now = time.monotonic() - t0
        print(f"  {now:6.1f} s  {line.rstrip()}", flush=True)
        if line.startswith("[") and "ETA" in line:
            finished.append(now)
    proc.wait()
    wall = time.monotonic() - t0
    if proc.returncode != 0:
        raise SystemExit(f"batch failed with exit code {proc.returncode}")
    with open(out / "grades.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    folder = {r["submission"]: (out / "students" / r["submission"]) if (out / "students").is_dir()
              else out / r["submission"] for r in rows}        # OUT/students/<id>/ since the judge split
    pdfs = sum(1 for r in rows if (folder[r["submission"]] / "report.pdf").is_file())
    stages: dict = {}
    bench_parts: dict = {}
    gpus_used: Counter = Counter()
    runs, noisy, why = [], 0, Counter()      # timings of each size (re-timed when noisy), and why
    for r in rows:
        try:
            doc = json.loads((folder[r["submission"]] / "results.json").read_text())
        except (OSError, ValueError):
            continue                       # a row without results (an invalid submission)
        for stage, secs in doc.get("stage_seconds", {}).items():
            stages.setdefault(stage, []).append(secs)
        # where the GPU bench's seconds went (the judge's clock): the child's requests, the judge's
        # side of them, waiting for the canaries' float64 checks; summed over the sizes
        by_part: dict = {}
        for secs in ((doc.get("timing") or {}).get("bench_seconds_by_S") or {}).values():
            for part in ("requests", "checks", "canaries_wait", "total"):
                by_part[part] = by_part.get(part, 0.0) + float(secs.get(part) or 0.0)
        for part, secs in by_part.items():
            bench_parts.setdefault(part, []).append(secs)
        gpus_used[doc.get("system", {}).get("gpu_uuid") or "?"] += 1
        quality = doc.get("bench_quality") or {}
        runs += [q.get("runs", 1) for q in quality.get("per_size", [])]
        noisy += quality.get("status") == "noisy"
        why.update(re.sub(r"^S=\d+: |[\d.]+", "", r)[:70] for r in quality.get("reasons", []))
    print("  mean seconds per stage of the device phase: "
          + ", ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in sorted(stages.items())))
    if bench_parts:      # two lanes slowed each other's bench 2.7x on an H200 x2 (2026-11-28): which part
        print("  mean bench seconds by part (GPU): "
              + ", ".join(f"{k} {sum(v) / len(v):.2f}" for k, v in bench_parts.items()))
    if runs:             # re-timings: a lane's noise (2026-11-28, x2: every size three times)
        print(f"  timings per size {sum(runs) / len(runs):.2f} (mean), noisy grades {noisy} of {len(rows)}"
              + "".join(f"; {n}x {w}" for w, n in why.most_common(3)))
    print("  submissions per GPU (by UUID): " + ", ".join(f"{u[-8:]} {n}" for u, n in sorted(gpus_used.items())))
    # steady state: the interval between completions after the first fifth (the start-up:
    # binding module, reference run, first compiles) until the last one
    k = len(finished) // 5
    steady = (finished[-1] - finished[k]) / (len(finished) - 1 - k) if len(finished) - 1 > k else None
    first = finished[0] if finished else None
    print(f"  first submission done at {first:.1f} s; steady state {steady:.2f} s per submission "
          f"(completions {k + 1}..{len(finished)})" if steady else "  too few completions for a steady state")
    return {"gpus": gpus, "wall_s": round(wall, 1), "n": len(rows), "pdfs": pdfs,
            "first_done_s": round(first, 1) if first else None,
            "steady_s_per_submission": round(steady, 2) if steady else None,
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
    ap.add_argument("--cold", action="store_true", help="remove the build cache before each run")
    args = ap.parse_args()
    work = Path(args.work)
    results = []
    if not args.cold:      # an installed grader: binding module and references built, untimed
        make_class(work / "subs-warmup", 1, salt=f"warm-up {time.time_ns()}")
        print("warm-up (not timed): one submission, to build the binding module and the references")
        run(work / "subs-warmup", work / "out-warmup", args.gpus[0].split(",")[0], args.jobs)
    for gpus in args.gpus:
        if args.cold:
            sys.path.insert(0, str(REPO))
            from grader.build.compile import cache_root
            shutil.rmtree(cache_root(), ignore_errors=True)
        # a class of its own per run (a salt in every source): no run reuses another's builds
        name = gpus.replace(',', '_')
        kinds = make_class(work / f"subs-{name}", args.n, salt=f"run {name} {time.time_ns()}")
        print(f"{args.n} submissions: {dict(kinds)}")
        r = run(work / f"subs-{name}", work / f"out-{name}", gpus, args.jobs)
        results.append(r)
        print(f"GPUs {gpus}: {r['n']} graded in {r['wall_s']} s ({r['per_min']} per minute), "
              f"{r['pdfs']} report PDFs, summary.pdf {r['summary_pdf']}; {r['statuses']}")
    if len(results) >= 2:
        a, b = results[0], results[1]
        print(f"throughput ratio ({b['gpus']} vs {a['gpus']}): end to end {b['per_min'] / a['per_min']:.2f}x"
              + (f", steady state {a['steady_s_per_submission'] / b['steady_s_per_submission']:.2f}x"
                 if a["steady_s_per_submission"] and b["steady_s_per_submission"] else ""))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
