"""Grade the CPU fixture class on one machine and as a Slurm array of shards, then check
that the two gradebooks agree row for row.

    python tools/slurm/check_class.py WORK [--shards 3] [--class-subset alice,bob,...]

Steps (each timed): the fixture class (tools/fixture_class.py) with a hidden config, a
timestamps file (a late and a too-late submission) and the fast test config; a one-machine
`grader batch`; a single-node Slurm cluster on this machine (tools/slurm/cluster.sh, needs
root and the slurm-wlm and munge packages); the documented submit (tools/slurm/submit.sh:
the array of tools/slurm/grade.sbatch, one job per shard, asking for the CPUs the node has,
and a `collect` job depending on it, tools/slurm/collect.sbatch); the
comparison; the cluster stopped.

Compared: every column of grades.csv except the timings (`student_ms_S*`, `sdpa_ms_S*`,
`slowdown_S*`, the slowdown's interval `slowdown_low_S*` / `slowdown_high_S*` and the
`tier_boundary` mark made from it, `compile_seconds`) and the `review:` flags derived from
them. The config's performance tiers are replaced by one tier every correct kernel meets, so the score does not
depend on how fast a loaded machine ran a kernel: everything else in the score (hidden
config points, late penalties, the rubric) must come out the same. Exit 0 when the two
agree, 1 with the differences otherwise.

Two things are arranged so that the comparison is about merging, not about the machine:
each shard gets every CPU of the node (one shard at a time, as the one-machine batch had the
machine; with two shards sharing two cores the fork storm was stopped by the time limit
instead of the process limit, a verdict that races a limit against the clock), and the
write-escape's "output folder" target is the class folder, which both runs hide alike (the
message names the target, and each run's own OUT differs).
"""
from __future__ import annotations

import argparse
import csv
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))
sys.path.insert(0, str(REPO))
import fixture_class  # noqa: E402

TIMING = re.compile(r"^(student_ms|sdpa_ms|slowdown|slowdown_low|slowdown_high)_S\d+$|^compile_seconds$|^tier_boundary$")
HIDDEN = "[correctness]\nseed = 424242\n[[correctness.configs]]\nB = 1\nH = 2\nS = 173\nD = 64\n"
BATCH_FLAGS = ["--timeout-run", "8", "--memory-limit", "2", "--no-pdf"]
LATE_KIM = "2026-12-12T12:00:00+00:00"      # one started day after due + grace
CPUS = len(os.sched_getaffinity(0))          # what slurmd offers (tools/slurm/cluster.sh: nproc)


def comparable(path: Path) -> dict[str, dict]:
    """grades.csv by student, without the columns that legitimately differ run to run."""
    with open(path, newline="") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    for r in rows.values():
        for col in [c for c in r if TIMING.match(c)]:
            del r[col]
        r["flags"] = ";".join(f for f in r["flags"].split(";") if f and not f.startswith("review:"))
    return rows


def differences(one: dict, grid: dict) -> list[str]:
    out = []
    for sid in sorted(set(one) | set(grid)):
        if sid not in grid or sid not in one:
            out.append(f"{sid}: only in {'the one-machine batch' if sid in one else 'the merged shards'}")
            continue
        for col in one[sid]:
            if one[sid][col] != grid[sid].get(col):
                out.append(f"{sid}.{col}: one machine {one[sid][col]!r}, shards {grid[sid].get(col)!r}")
    return out


def fast_config(work: Path) -> Path:
    """The test config with one performance tier (the score must not depend on timing)."""
    text = (REPO / "tests" / "fast_config.toml").read_text()
    head, _, _ = text.partition("[[rubric.performance]]")
    tail = text[text.index("[deadline]"):]
    path = work / "config.toml"
    path.write_text(head + "[[rubric.performance]]\nmax_slowdown = 1e9\npoints = 25\n\n" + tail)
    return path


def run(cmd: list, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], text=True, capture_output=True, **kw)
    if proc.returncode != 0:
        raise SystemExit(f"failed ({proc.returncode}): {' '.join(map(str, cmd))}\n{proc.stdout[-3000:]}\n"
                         f"{proc.stderr[-3000:]}")
    return proc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("work", help="an empty (or disposable) folder")
    ap.add_argument("--shards", type=int, default=3)
    ap.add_argument("--class-subset", help="comma-separated student ids of the fixture class (default: all)")
    args = ap.parse_args()
    work = Path(args.work).resolve()
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    os.chmod(work, 0o755)
    py = os.environ.get("PYTHON") or run(["tools/python.sh"], cwd=REPO).stdout.strip()
    env = {**os.environ, "PYTHON": py, "GRADER_REPO": str(REPO)}
    times: dict[str, float] = {}

    t0 = time.monotonic()
    subs, hidden, config = work / "class", work / "hidden.toml", fast_config(work)
    # the write escape's "output folder" target is the class folder, which both runs hide the
    # same way (each run's own OUT differs, and the message names the target)
    expected = fixture_class.build(subs, subs, port=9)
    with open(subs / "timestamps.csv", "a") as f:        # a late submission that scores: -10%
        f.write(f"kim,{LATE_KIM}\n")
    from grader.isolation.sandbox import bwrap_path
    if bwrap_path() is None:       # without a sandbox the escapes would succeed: leave them out
        for sid in fixture_class.ESCAPES:
            (subs / f"{sid}.py").unlink()
            expected.pop(sid)
    if args.class_subset:
        keep = set(args.class_subset.split(","))
        for p in subs.iterdir():
            if p.name != "timestamps.csv" and p.name.split(".")[0] not in keep:
                shutil.rmtree(p) if p.is_dir() else p.unlink()
        expected = {k: v for k, v in expected.items() if k in keep}
    hidden.write_text(HIDDEN)
    flags = ["--config", config, *BATCH_FLAGS]

    t = time.monotonic()
    run([py, "-m", "grader", "batch", subs, "--out", work / "one", "--hidden", hidden, "--jobs", str(CPUS),
         *flags],
        cwd=REPO, env=env)
    times["one machine"] = time.monotonic() - t

    t = time.monotonic()
    started = run(["tools/slurm/cluster.sh", "start", work / "slurm"], cwd=REPO)
    env["SLURM_CONF"] = started.stdout.strip().split("=", 1)[1]
    times["cluster start"] = time.monotonic() - t
    try:
        t = time.monotonic()
        # every CPU per shard: one shard at a time, timed like the one-machine batch (a
        # cluster gives each shard its own node; two shards sharing 2 cores change verdicts
        # that race a limit against the clock, e.g. the fork storm's)
        # a request no node can meet is refused at once, with the nodes' sizes (it would pend forever)
        big = subprocess.run(["tools/slurm/submit.sh", "--cpus", str(CPUS + 1), subs, work / "never"],
                             cwd=REPO, env=env, capture_output=True, text=True)
        if big.returncode != 2 or "pend forever" not in big.stderr:
            raise SystemExit(f"submit.sh --cpus {CPUS + 1} on a {CPUS}-CPU node was not refused: {big.stderr}")
        # the documented submit (tools/slurm/submit.sh): the CPUs per shard come from sinfo,
        # the node's own count here, so the request never exceeds what a node has
        submitted = run(["tools/slurm/submit.sh", "--shards", str(args.shards), "--wait", "--logs", work,
                         subs, work / "grid", hidden, *flags], cwd=REPO,
                        env={**env, "GRADER_COLLECT_FLAGS": "--no-pdf"}, timeout=3600)
        print(submitted.stdout.strip())
        if f"{CPUS} CPUs each" not in submitted.stdout:
            raise SystemExit(f"submit.sh did not ask for this node's {CPUS} CPUs per shard: {submitted.stdout}")
        times["slurm array + collect"] = time.monotonic() - t
    finally:
        subprocess.run(["tools/slurm/cluster.sh", "stop", work / "slurm"], cwd=REPO)

    one, grid = comparable(work / "one" / "grades.csv"), comparable(work / "grid" / "all" / "grades.csv")
    diff = differences(one, grid)
    times["total"] = time.monotonic() - t0
    print(f"{len(one)} submissions ({len(expected)} in the fixture class), {args.shards} shards")
    print("; ".join(f"{k}: {v:.0f} s" for k, v in times.items()))
    hidden_pts = sum(1 for r in grid.values() if r.get("hidden1_passed") == "True")
    late = sorted(sid for sid, r in grid.items() if float(r["late_penalty"] or 0) > 0)
    print(f"merged gradebook: max_score {next(iter(grid.values()))['max_score']}, hidden config passed by "
          f"{hidden_pts}, late penalties for {', '.join(late) or 'nobody'}")
    for sid in sorted(grid):
        r = grid[sid]
        print(f"  {sid:<14} {r['status']:<19} {r['score']:>6} / {r['max_score']:<6} late {r['late_penalty']:<4} "
              f"hidden {r.get('hidden1_passed') or '-':<5} {r['flags']}")
    if diff:
        print("DIFFERENT:\n  " + "\n  ".join(diff))
        return 1
    print("the merged gradebook equals the one-machine gradebook, row for row (timings and review flags aside)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
