#!/usr/bin/env python3
"""What observing launches costs the timings after it (issue 26; PyTorch #144455: CUPTI left
attached after a profiler session can slow later kernels).

The judge observes every checked call, and two untimed calls per benchmark request, under
torch's profiler (grader/judge/launches.py), in the same process that is then timed. This grades
one kernel N times with the observation on and N times with it off
(GRADER_OBSERVE_LAUNCHES=0), alternating A B A B so that drift of the machine lands on both,
and prints per S the medians of the kernel's time, SDPA's time and the slowdown, on / off.

    python tools/profiler_ab.py [--file reference/fused.cu] [--n 3] [--backend auto] [--json OUT]

A ratio near 1.00 (within the grades' own spread, printed beside it) means the observation
leaves the timings alone.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def grade(file: str, backend: str, observe: bool, out: Path) -> dict:
    env = {**os.environ, "GRADER_OBSERVE_LAUNCHES": "1" if observe else "0"}
    cmd = [sys.executable, "-m", "grader", "grade", file, "--backend", backend, "--json", str(out)]
    subprocess.run(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    try:
        return json.loads(out.read_text())
    except (OSError, ValueError):
        return {"verdict": "no results (the grade failed)", "bench": []}


def spread(values: list[float]) -> float:
    """(max - min) / median of a few grades' figures."""
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", default="reference/fused.cu")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--n", type=int, default=3, help="grades per arm")
    ap.add_argument("--json", default=None, help="write every grade's figures here")
    a = ap.parse_args()
    runs: dict = {"on": [], "off": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.n):
            for arm in ("on", "off") if i % 2 == 0 else ("off", "on"):
                r = grade(a.file, a.backend, arm == "on", Path(tmp) / f"{arm}{i}.json")
                rows = {row["S"]: row for row in r.get("bench") or []}
                runs[arm].append({"verdict": r.get("verdict"), "launches": r.get("launches"), "rows": {
                                      s: {k: row.get(k) for k in ("student_ms", "sdpa_ms", "slowdown")}
                                      for s, row in rows.items()}})
                print(f"grade {i + 1}/{a.n} observation {arm}: {r.get('verdict')}, slowdowns "
                      + ", ".join(f"S={s} {row['slowdown']:.3f}" for s, row in rows.items() if row.get("slowdown")),
                      flush=True)
    sizes = sorted({s for arm in runs.values() for g in arm for s in g["rows"]})
    print(f"\n{a.file}: medians of {a.n} grades per arm; on / off (and each arm's spread, max-min over median)")
    print(f"{'S':>6} {'figure':<11} {'on':>10} {'off':>10} {'on/off':>8} {'spread on':>10} {'spread off':>11}")
    for s in sizes:
        for key in ("student_ms", "sdpa_ms", "slowdown"):
            on = [g["rows"][s][key] for g in runs["on"] if s in g["rows"] and g["rows"][s].get(key)]
            off = [g["rows"][s][key] for g in runs["off"] if s in g["rows"] and g["rows"][s].get(key)]
            if not on or not off:
                continue
            m_on, m_off = statistics.median(on), statistics.median(off)
            print(f"{s:>6} {key:<11} {m_on:>10.4f} {m_off:>10.4f} {m_on / m_off:>8.3f} {spread(on):>9.1%} "
                  f"{spread(off):>10.1%}")
    if a.json:
        Path(a.json).write_text(json.dumps(runs, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
