"""Gradescope autograder, CPU path: /autograder/submission -> /autograder/results/results.json.

`tools/gradescope/run_autograder` calls `python -m grader.gradescope` for every submission.
Gradescope's containers have no GPU, so this grades `_CPP_SRC` on the CPU: the feedback a
student gets while working. GPU grades come from the course's cluster (INSTRUCTORS.md).

What makes it fit the container (Gradescope's defaults: 768 MB of memory, a 10-minute
timeout, half a CPU; an instructor may raise them in the assignment's settings and pass
--memory-mb / --timeout-s to match):
- the stage timeouts of the config are scaled down so compile + check + bench end before
  Gradescope's timeout, leaving RESERVE_S for starting up and writing the results: a
  kernel that runs too long ends in the verdict `timeout`, never in a killed container;
- the submission's process tree may use the container's memory less PARENT_MB (this
  process and the margin), so a memory hog ends in `runtime_error`, not in "Killed";
- torch and OpenMP threads follow the container's CPU quota (cgroups), not the host's cores;
- the reference kernels are not timed (the student's kernel and SDPA are).

results.json is always written: a submission's failure is a verdict like any other, and a
failure of the grader itself (or of this machine) is a result with score 0 that says so.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

RESERVE_S = 60          # of the container's timeout: Python and the grader starting, the results
PARENT_MB = 128         # of the container's memory: this process, the page cache's margin


@dataclass(frozen=True)
class Container:
    """The Gradescope container the autograder runs in (its assignment settings)."""
    memory_mb: int = 768             # Gradescope's default memory limit
    timeout_s: float = 600           # Gradescope's default overall timeout (10 minutes)


class OutOfTime(Exception):
    """run_autograder's outer timeout (SIGTERM) arrived."""


def fit_timeouts(cfg, container: Container):
    """The config with compile + check + bench scaled to fit the container's timeout (never raised)."""
    budget = container.timeout_s - RESERVE_S
    total = cfg.timeout_compile + cfg.timeout_check + cfg.timeout_bench
    if budget <= 0:
        raise ValueError(f"--timeout-s {container.timeout_s:g} leaves no time to grade (at least {RESERVE_S + 60} s)")
    scale = min(1.0, budget / total)
    down = lambda s: math.floor(s * scale * 10) / 10  # noqa: E731 - tenths, never rounded up past the budget
    return replace(cfg, timeout_compile=down(cfg.timeout_compile), timeout_check=down(cfg.timeout_check),
                   timeout_bench=down(cfg.timeout_bench))


def cpu_quota(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """CPUs this container may use (cgroup v2 cpu.max or v1 cfs quota), rounded up; None if unlimited."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        if quota != "max":
            return max(1, math.ceil(int(quota) / int(period)))
        return None
    except (OSError, ValueError):
        pass
    try:
        quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return max(1, math.ceil(quota / period)) if quota > 0 else None
    except (OSError, ValueError):
        return None


def submitted_at(root: Path) -> str | None:
    """The submission time Gradescope recorded (submission_metadata.json `created_at`)."""
    try:
        return json.loads((root / "submission_metadata.json").read_text()).get("created_at")
    except (OSError, ValueError, AttributeError):
        return None


def grade_submission(root: Path, config_path: Path, container: Container) -> dict:
    """Grade ROOT/submission on the CPU and return Gradescope's results document."""
    from . import config
    from . import gradebook as gb
    from .run import GraderError, RunOptions, grade
    from .sandbox import Limits
    started = time.monotonic()
    cfg = fit_timeouts(config.load(config_path), container)
    cfg = replace(cfg, threads=cpu_quota() or cfg.threads)
    rubric, deadline = config.load_rubric(config_path)
    limits = Limits(memory_bytes=(container.memory_mb - PARENT_MB) << 20)
    try:
        result = grade(root / "submission", cfg, backend="cpu",
                       options=RunOptions(limits=limits, references=False))
    except GraderError as e:           # e.g. only _CUDA_SRC: nothing this machine can run
        return {"score": 0, "output": f"Not graded here: {e}\n\n{NO_GPU}", "output_format": "text",
                "tests": [], "extra_data": {"verdict": "not_graded"}, "execution_time": _since(started)}
    doc = result.to_json()
    when = submitted_at(root)
    items = gb.score_items(doc, rubric, hidden_count=0)
    late = gb.lateness(when, deadline)
    out = gb.gradescope(doc, items, late)
    notes = [f"verdict: {doc['verdict']} - {doc['message']}", NO_GPU,
             f"Limits here: {cfg.timeout_compile:g} s to compile, {cfg.timeout_check:g} s to check, "
             f"{cfg.timeout_bench:g} s to benchmark, {limits.memory_bytes >> 20} MiB of memory; "
             f"{cfg.threads or 'all'} CPU thread(s)."]
    compile_log = (doc.get("compile") or {}).get("log") or ""
    if doc["verdict"] == "compile_error" and compile_log:       # the errors themselves, lines of the .py
        notes.insert(1, "compile log:\n" + compile_log[-6000:])
    if deadline is not None and when is None:
        notes.append("Gradescope recorded no submission time: treated as on time.")
    out.update(output="\n\n".join(notes), output_format="text", execution_time=_since(started),
               extra_data={"verdict": doc["verdict"], "grader_version": doc.get("grader_version"),
                           "submitted_at": when})
    return out


NO_GPU = ("This is the course's CPU autograder (Gradescope has no GPUs): it grades _CPP_SRC. "
          "CUDA kernels are graded on the course's GPU cluster; the score here is the public "
          "rubric's, and hidden configs, a person's review and the cluster's timings may change it.")


def failure(message: str, started: float | None = None) -> dict:
    """The results of a run the grader itself could not finish: score 0, and it says why."""
    return {"score": 0, "output": "The autograder itself failed on this submission: this is not a verdict on "
                                  f"your code. The course staff can see the details.\n\n{message[:2000]}",
            "output_format": "text", "tests": [], "stdout_visibility": "hidden",
            "extra_data": {"verdict": "grader_error", "error": message[:2000]},
            **({"execution_time": _since(started)} if started is not None else {})}


def _since(t0: float) -> float:
    return round(time.monotonic() - t0, 1)


def _on_sigterm(signum, frame):
    raise OutOfTime("the autograder ran out of time (Gradescope's timeout is near)")


def main(argv: list[str] | None = None) -> int:
    from .config import DEFAULT_CONFIG
    from .result import write_json_atomic
    ap = argparse.ArgumentParser(prog="python -m grader.gradescope", description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="/autograder", help="Gradescope's /autograder folder")
    ap.add_argument("--config", default=str(DEFAULT_CONFIG))
    ap.add_argument("--memory-mb", type=int, default=Container.memory_mb, help="the container's memory (MB)")
    ap.add_argument("--timeout-s", type=float, default=Container.timeout_s, help="the autograder timeout (s)")
    args = ap.parse_args(argv)
    root = Path(args.root)
    started = time.monotonic()
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        results = grade_submission(root, Path(args.config), Container(args.memory_mb, args.timeout_s))
        code = 0
    except BaseException as e:  # noqa: BLE001 - whatever happens, Gradescope gets a results file
        import traceback
        traceback.print_exc()          # /autograder/results/stdout: the instructor's view
        results, code = failure(f"{type(e).__name__}: {e}", started), 1
    write_json_atomic(root / "results" / "results.json", results)
    print(json.dumps({k: results.get(k) for k in ("score", "extra_data")}))
    return code


if __name__ == "__main__":
    sys.exit(main())
