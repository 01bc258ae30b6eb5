#!/usr/bin/env python3
"""Is `make grade` (or the batch) slower than it was? Side by side, in one run.

Grades one file with this tree and with an older one (a `git archive` of it unpacked
anywhere: `git archive REV | tar x -C DIR`), each once to build its caches, then N times
each, alternating (new old, old new, ...) so that the machine's drift lands on both; prints
the wall time of every grade, the medians, their ratio and the stages that changed.

    python tools/grade_time_ab.py --old DIR [--file reference/fused.cu] [--backend auto] [--n 2]
    python tools/grade_time_ab.py --old DIR --batch FOLDER [--n 1]      # a batch instead
    python tools/grade_time_ab.py --old DIR --arm fixed=CONFIG        # a third arm: this tree, that config

The issue's bar: no more than 10% slower. `--arm NAME=CONFIG` adds an arm graded by this tree
with another config (e.g. `precision = 0`: the timing-confidence rounds off), so that what one
feature costs is told apart from what another does, in the same run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(tree: Path, args, out: Path, config: str | None = None) -> tuple[float, dict]:
    """(wall seconds, stage_seconds) of one grade (or batch) with the grader of `tree` (and
    `config`, when given)."""
    file = str((ROOT / args.file).resolve()) if not Path(args.file).is_absolute() else args.file
    if args.batch:
        cmd = [sys.executable, "-m", "grader", "batch", str(Path(args.batch).resolve()), "--out", str(out),
               "--no-pdf"] + (["--gpus", args.gpus] if args.gpus else [])
    else:
        cmd = [sys.executable, "-m", "grader", "grade", file, "--backend", args.backend, "--json", str(out)]
    if config:
        cmd += ["--config", str(Path(config).resolve())]
    env = {k: v for k, v in os.environ.items() if k != "GRADER_CACHE"}
    t0 = time.monotonic()
    proc = subprocess.run(cmd, cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    wall = time.monotonic() - t0
    stages = {}
    if args.batch:
        # a batch that stopped (the sandbox, the older tree) is no timing either
        if proc.returncode != 0 or not (out / "grades.csv").is_file():
            stages = {"FAILED": f"batch exit {proc.returncode}" + ("" if (out / "grades.csv").is_file() else ", no grades.csv")}
    else:
        # a grade that failed is no timing: said, not averaged in as a fast one
        doc = json.loads(out.read_text()) if out.is_file() else {}
        stages = doc.get("stage_seconds") or {}
        if doc.get("verdict") != "ok":
            stages = {"FAILED": f"verdict {doc.get('verdict', 'none: no results written')}"}
    return wall, stages


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--old", required=True, help="the older tree (unpacked git archive)")
    ap.add_argument("--file", default="reference/fused.cu")
    ap.add_argument("--backend", default="auto")
    ap.add_argument("--batch", default=None, help="a submissions folder: time `grader batch` instead")
    ap.add_argument("--gpus", default=None)
    ap.add_argument("--n", type=int, default=2)
    ap.add_argument("--arm", action="append", default=[], metavar="NAME=CONFIG",
                    help="another arm: this tree graded with CONFIG")
    a = ap.parse_args()
    # arm -> (tree, config)
    arms = {"new": (ROOT, None), "old": (Path(a.old).resolve(), None)}
    for spec in a.arm:
        name, _, config = spec.partition("=")
        if not name or not config or name in arms:
            ap.error(f"--arm {spec!r}: NAME=CONFIG, a name other than new/old")
        arms[name] = (ROOT, config)
    walls: dict = {n: [] for n in arms}
    stages: dict = {n: [] for n in arms}
    with tempfile.TemporaryDirectory() as tmp:
        for name, (tree, config) in arms.items():            # caches built, not counted
            w, _ = run(tree, a, Path(tmp) / f"warm-{name}", config)
            print(f"warm-up {name}: {w:.1f} s", flush=True)
        order = list(arms)
        for i in range(a.n):
            # each grade's turn rotates, so that the machine's drift lands on every arm
            for name in order[i % len(order):] + order[:i % len(order)]:
                tree, config = arms[name]
                w, st = run(tree, a, Path(tmp) / f"{name}{i}", config)
                if "FAILED" in st:
                    print(f"grade {i + 1}/{a.n} {name}: {w:.1f} s  FAILED ({st['FAILED']}): not counted", flush=True)
                    continue
                walls[name].append(w)
                stages[name].append(st)
                print(f"grade {i + 1}/{a.n} {name}: {w:.1f} s  "
                      + " ".join(f"{k}={v:.1f}" for k, v in st.items() if isinstance(v, (int, float))), flush=True)
    if not walls["new"] or not walls["old"]:
        print("\nno comparison: every grade of one tree failed (above)")
        return 1
    old = statistics.median(walls["old"])
    print()
    for name in arms:
        if name != "old" and walls[name]:
            m = statistics.median(walls[name])
            print(f"median wall: {name} {m:.1f} s, old {old:.1f} s: {name}/old {m / old:.3f} ({(m / old - 1):+.1%})")
    keys = sorted({k for arm in stages.values() for st in arm for k in st})
    for k in keys:
        vals = {n: [st.get(k) for st in stages[n] if isinstance(st.get(k), (int, float))] for n in stages}
        if any(vals.values()):
            m = {n: statistics.median(v) if v else 0.0 for n, v in vals.items()}
            print(f"  {k:<20} " + "   ".join(f"{n} {m[n]:7.2f} s" for n in arms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
