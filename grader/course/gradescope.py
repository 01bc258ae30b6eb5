"""Gradescope autograder, CPU path: /autograder/submission -> /autograder/results/results.json.

`tools/gradescope/run_autograder` calls `python -m grader.course.gradescope` for every submission.
Gradescope's containers have no GPU, so this grades `_CPP_SRC` on the CPU: the feedback a
student gets while working. GPU grades come from the course's cluster (INSTRUCTORS.md).

What makes it fit the container (an instructor sets memory and timeout in the assignment's
Autograder Settings; Gradescope's defaults are 768 MB, 10 minutes, half a CPU):
- the container's memory is read from its cgroup (memory.max, or cgroup v1's
  memory.limit_in_bytes); --memory-mb only stands in where it cannot be read;
- the judge's own memory is accounted for as measured (JUDGE_MB: Python, the grader and
  torch; CACHE_MB: the page cache the compiler and torch's libraries need kept), and the
  submission's process tree may use the rest, so a memory hog ends in `runtime_error`, not
  in "Killed". A container too small to compile any kernel (MIN_MB: Gradescope's default
  768 MB is) is not graded at all: the result says so, to the student and the staff, and
  blames no kernel. A build stopped by that limit, and anything the container's own
  out-of-memory killer takes, are reported as the autograder's memory, never the kernel's;
- the stage timeouts of the config are scaled down so compile + check + bench end before
  Gradescope's timeout, leaving RESERVE_S for starting up and writing the results: a
  kernel that runs too long ends in the verdict `timeout`, never in a killed container;
- torch and OpenMP threads follow the container's CPU quota (cgroups), not the host's cores;
- the reference kernels are not timed (the student's kernel and SDPA are);
- lateness follows Gradescope's dates (submission_metadata.json): the student's own due
  date and late due date (an extension) over the assignment's, over the config's
  [deadline]; the config's grace and penalty per day apply to them.

results.json is always written: a submission's failure is a verdict like any other, and a
failure of the grader itself (or of this machine) is a result with score 0 that says so.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import re
import signal
import sys
import time
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, timezone
from pathlib import Path

RESERVE_S = 60          # of the container's timeout: Python and the grader starting, the results
# Memory, measured with tools/gradescope/emulate.py (the image built from the zip in a fresh
# root, run_autograder in cgroup memory groups; INSTRUCTORS.md section 8 has the figures):
# this process peaks at 341 MiB RSS while the worker exists (Python, the grader, torch, SDPA
# timed here; 408 MiB while premeasure_ceilings runs, before the worker starts); the
# submission's tree (the worker with torch, the compiler) at 620-633 MiB PSS while a kernel
# builds with the lean headers, 1754-1757 MiB with the full ones (a PYBIND11_MODULE, an
# #include the lean headers lack).
JUDGE_MB = 384          # this process at its peak while the submission's tree exists
CACHE_MB = 128          # page cache kept in use (cc1plus, headers, torch's libraries), the
                        # build's files, and what a fast allocation adds between two polls
MIN_MB = 1280           # below this even a lean-header build cannot fit: nothing is graded
RECOMMENDED_MB = 3072   # every kernel fits, full-header builds included (INSTRUCTORS.md)
DEFAULT_MB = 768        # Gradescope's default, used when neither the cgroup nor --memory-mb says


@dataclass(frozen=True)
class Container:
    """The Gradescope container the autograder runs in (its assignment settings)."""
    memory_mb: int = DEFAULT_MB      # the container's memory limit
    timeout_s: float = 600           # Gradescope's default overall timeout (10 minutes)
    memory_from: str = "Gradescope's default"    # where memory_mb was read: the cgroup, a setting

    @property
    def kernel_mb(self) -> int:
        """What the submission's process tree (the worker, the compiler, the kernel) may use."""
        return self.memory_mb - JUDGE_MB - CACHE_MB


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


_UNLIMITED = 1 << 50       # cgroup v1 says "no limit" with a number near 2^63


def cgroup_memory_mb(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """This container's memory limit in MiB (cgroup v2 memory.max, v1 memory.limit_in_bytes);
    None where it has none or none can be read."""
    for path in (root / "memory.max", root / "memory" / "memory.limit_in_bytes"):
        try:
            text = path.read_text().strip()
        except OSError:
            continue
        if text == "max":
            return None
        try:
            limit = int(text)
        except ValueError:
            continue
        return limit >> 20 if 0 < limit < _UNLIMITED else None
    return None


def oom_kills(root: Path = Path("/sys/fs/cgroup")) -> int | None:
    """How many processes the container's out-of-memory killer has taken so far (cgroup v2
    memory.events, v1 memory.oom_control); None where it cannot be read."""
    for path in (root / "memory.events", root / "memory" / "memory.oom_control"):
        try:
            for line in path.read_text().splitlines():
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
        except (OSError, ValueError):
            continue
    return None


def container(memory_mb: int | None, timeout_s: float, cgroup_root: Path = Path("/sys/fs/cgroup")) -> Container:
    """The container as it is: its cgroup's memory limit where one can be read (an
    instructor's setting in run_autograder cannot then disagree with it), else MEMORY_MB."""
    measured = cgroup_memory_mb(cgroup_root)
    if measured is not None:
        return Container(measured, timeout_s, "the container's cgroup")
    if memory_mb is not None:
        return Container(memory_mb, timeout_s, "MEMORY_MB in run_autograder")
    return Container(DEFAULT_MB, timeout_s)


def _metadata(root: Path) -> dict:
    try:
        meta = json.loads((root / "submission_metadata.json").read_text())
    except (OSError, ValueError):
        return {}
    return meta if isinstance(meta, dict) else {}


def submitted_at(root: Path) -> str | None:
    """The submission time Gradescope recorded (submission_metadata.json `created_at`)."""
    when = _metadata(root).get("created_at")
    return when if isinstance(when, str) else None


def _date(value) -> datetime | None:
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        when = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo is not None else when.replace(tzinfo=timezone.utc)


@dataclass(frozen=True)
class Dates:
    """The deadline a Gradescope submission is held to, and where it came from."""
    deadline: object              # config.Deadline or None
    late_due: datetime | None     # Gradescope's late due date: later than this, score 0
    note: str                     # in words, for the student


def gradescope_dates(meta: dict, configured) -> Dates:
    """The deadline of this submission: Gradescope's per-student dates (users[].assignment:
    an extension) over the assignment's (assignment.due_date / late_due_date), over the
    config's [deadline] (`configured`). The config's grace and penalty per day apply to
    Gradescope's dates; its max_late_days gives way to a late due date. A group submission
    takes its members' latest dates (one member's extension covers the group)."""
    from ..core.config import Deadline
    users = [u.get("assignment") for u in meta.get("users") or [] if isinstance(u, dict)]
    users = [a for a in users if isinstance(a, dict)]
    assignment = meta.get("assignment") if isinstance(meta.get("assignment"), dict) else {}

    def latest(key: str, source: list[dict]) -> datetime | None:
        dates = [d for d in (_date(a.get(key)) for a in source) if d is not None]
        return max(dates) if dates else None
    own_due, course_due = latest("due_date", users), latest("due_date", [assignment])
    own_late, course_late = latest("late_due_date", users), latest("late_due_date", [assignment])
    due = own_due or course_due
    late_due = (own_late or course_late) if due is not None else None
    if due is None:
        return Dates(configured, None, "the course's deadline (Gradescope sent no due date)"
                     if configured is not None else "no deadline")
    base = configured or Deadline(due=due)
    deadline = replace(base, due=due, max_late_days=0 if late_due is not None else base.max_late_days)
    if own_due is not None and course_due is not None and own_due != course_due:
        note = f"your due date on Gradescope, {due.isoformat()} (the assignment's is {course_due.isoformat()})"
    else:
        note = f"Gradescope's due date, {due.isoformat()}"
    if late_due is not None:
        note += f"; late submissions until {late_due.isoformat()}"
    return Dates(deadline, late_due, note)


def lateness(when: str | None, dates: Dates):
    """gradebook.lateness against Gradescope's dates, with its late due date as the cut-off."""
    from ..score import gradebook as gb
    late = gb.lateness(when, dates.deadline)
    at = _date(when)
    if dates.late_due is not None and at is not None and late.days:
        grace = timedelta(minutes=dates.deadline.grace_minutes)
        if at > dates.late_due + grace:
            return replace(late, penalty=1.0, note=f"{late.days} day{'s' * (late.days != 1)} late: past the "
                                                   f"late due date ({dates.late_due.isoformat()})")
    return late


def grade_submission(root: Path, config_path: Path, container: Container,
                     cgroup: Path = Path("/sys/fs/cgroup")) -> dict:
    """Grade ROOT/submission on the CPU and return Gradescope's results document."""
    from ..core import config
    from ..score import gradebook as gb
    from ..run import GraderError, RunOptions, grade
    from ..isolation.sandbox import Limits
    started = time.monotonic()
    cfg = fit_timeouts(config.load(config_path), container)
    cfg = replace(cfg, threads=cpu_quota() or cfg.threads)
    rubric, configured = config.load_rubric(config_path)
    if container.memory_mb < MIN_MB:
        return memory_failure(container, started, "container_memory", (
            f"This autograder's container has {container.memory_mb} MB of memory ({container.memory_from}); "
            f"grading a kernel needs at least {MIN_MB} MB: the grader with torch loaded (about {JUDGE_MB} MB), the "
            "compiler building your kernel against torch's headers, then your kernel. Nothing was graded."))
    limits = Limits(memory_bytes=container.kernel_mb << 20)
    premeasure_ceilings(cfg.threads or os.cpu_count() or 1)
    kills = oom_kills(cgroup)
    try:
        result = grade(root / "submission", cfg, backend=_cpu_backend(root / "submission"),
                       options=RunOptions(limits=limits, references=False))
    except GraderError as e:           # e.g. only _CUDA_SRC: nothing this machine can run
        return {"score": 0, "output": f"Not graded here: {e}\n\n{NO_GPU}", "output_format": "text",
                "tests": [], "extra_data": {"verdict": "not_graded"}, "execution_time": _since(started)}
    doc = result.to_json()
    killed = (oom_kills(cgroup) or 0) - (kills or 0)
    if killed > 0 and doc["verdict"] in ("runtime_error", "compile_error", "timeout"):   # what a kill can cause
        building = doc["message"].startswith(_stage("compile")) or doc["verdict"] == "compile_error"
        return memory_failure(container, started, "container_out_of_memory", (
            f"The container ran out of memory ({container.memory_mb} MB) while grading "
            f"{'(compiling: your kernel had not run yet)' if building else '(your kernel was running)'}: its "
            f"out-of-memory killer stopped {killed} process{'es' * (killed != 1)} before the grader's own limit "
            f"for your kernel ({container.kernel_mb} MiB) caught anything, so the grade cannot say whose memory it "
            f"was (it had reached: {doc['verdict']} - {doc['message'][:300]})."
            + ("" if building else " If your kernel allocates large buffers, look there first.")), doc, killed)
    if _grader_out_of_memory(doc):
        fallback = (doc.get("compile") or {}).get("fallback")
        building = doc["verdict"] == "compile_error" or doc["message"].startswith(_stage("compile"))
        return memory_failure(container, started, "compile_memory" if building else "startup_memory", (
            f"{'Compiling your kernel' if building else 'Starting the grader (Python, torch, its binding module)'} "
            f"needed more than the {container.kernel_mb} MiB this container leaves for it: the compiler and a "
            "Python with torch loaded, not your kernel, which never ran"
            + (" (your source needs the full torch headers, whose build takes about 1.8 GB: " + fallback[:300] + ")"
               if fallback else "") + "."), doc, killed)
    meta = _metadata(root)
    when = submitted_at(root)
    dates = gradescope_dates(meta, configured)
    items = gb.score_items(doc, rubric, hidden_count=0)
    late = lateness(when, dates)
    out = gb.gradescope(doc, items, late)
    notes = [gb.headline(doc), NO_GPU,
             f"Limits here: {cfg.timeout_compile:g} s to compile, {cfg.timeout_check:g} s to check, "
             f"{cfg.timeout_bench:g} s to benchmark, {limits.memory_bytes >> 20} MiB of memory (the container's "
             f"{container.memory_mb} MB less the grader's own); {cfg.threads or 'all'} CPU thread(s)."]
    compile_log = (doc.get("compile") or {}).get("log") or ""
    if doc["verdict"] == "compile_error" and compile_log:       # the errors themselves, lines of the .py
        notes.insert(1, "compile log:\n" + compile_log[-6000:])
    if dates.deadline is not None:
        notes.append(f"Deadline: {dates.note}. " + ("Gradescope recorded no submission time: treated as on time."
                                                    if when is None else f"This submission: {late.note}."))
    out.update(output="\n\n".join(notes), output_format="text", execution_time=_since(started),
               extra_data={"verdict": doc["verdict"], "grader_version": doc.get("grader_version"),
                           "submitted_at": when, "memory": _memory(container, killed),
                           "deadline": {"due": dates.deadline.due.isoformat() if dates.deadline else None,
                                        "late_due": dates.late_due.isoformat() if dates.late_due else None,
                                        "from": dates.note, "late_days": late.days, "penalty": late.penalty}})
    return out


# the judge's stages before any code of the submission runs (grader/judge/judge.py STAGE_NAMES)
_BEFORE_THE_KERNEL = ("start", "prepare", "compile", "audit", "roofline")


def _stage(name: str) -> str:
    from ..judge.judge import STAGE_NAMES
    return STAGE_NAMES[name]


def _grader_out_of_memory(doc: dict) -> bool:
    """The grade ended on the memory limit before the kernel ever ran, and no error of the
    source's own is known: the worker starting or a build was stopped (runtime_error in a
    stage before the kernel's), or the source needs the full torch headers from the start
    (the judge's scan said so: nothing else was built) and their build was stopped."""
    message = doc.get("message") or ""
    if doc["verdict"] == "runtime_error" and "of memory" in message and any(
            message.startswith(_stage(s)) for s in _BEFORE_THE_KERNEL):
        return True
    build = doc.get("compile") or {}
    return (doc["verdict"] == "compile_error" and build.get("tier") == "full" and "memory" in message
            and " is not in " in (build.get("fallback") or ""))


def premeasure_ceilings(threads: int) -> None:
    """Measure this CPU's roofline (grader/analysis/roofline.py: its STREAM triad holds 3 x 128 MiB)
    now, before the worker starts, into the cache the judge reads after the benchmark: at
    that point the worker still holds torch and the kernel, and the two together were the
    largest peak of a grade (judge 688 MiB + worker 343 MiB RSS). A fresh container always
    measures; what fails here, the judge tries again and reports."""
    try:
        from ..analysis.roofline import measure_cpu_ceilings
        measure_cpu_ceilings(threads)
    except Exception:  # noqa: BLE001 - the judge measures (or notes why not) as it always does
        pass


def peak_mib() -> int:
    """This process's peak resident memory (MiB): VmHWM, the high-water mark of its own
    address space. Not ru_maxrss: Linux keeps the largest of every address space the process
    ever had, and a child that Python starts with vfork had its parent's until exec."""
    try:
        with open("/proc/self/status") as f:
            return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1)) >> 10
    except (OSError, AttributeError):
        import resource
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss >> 10


def _memory(container: Container, killed: int | None = None) -> dict:
    """The memory figures of this run, for the staff: the container, the kernel's share,
    the peaks of this process and of its largest child (worker or compiler)."""
    import resource
    own = peak_mib()
    child = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss >> 10
    return {"container_mb": container.memory_mb, "from": container.memory_from, "kernel_limit_mib": container.kernel_mb,
            "judge_peak_mib": own, "largest_child_peak_mib": child, "oom_kills": killed}


def _cpu_backend(submission: Path) -> str:
    """cpu, or triton when the Triton source is the one written (Triton's interpreter checks
    it on this CPU where the image has Triton, the `triton` extra; else the grade says how
    to install it)."""
    from ..isolation.options import GraderError
    from ..build.parse import parse
    from ..run import choose_backend
    import importlib.util
    sub = parse(submission)
    try:
        triton = sub.ok and choose_backend(sub, "auto")[0] == "triton"
    except GraderError:
        return "cpu"
    if triton and importlib.util.find_spec("triton") is None:
        raise GraderError("your _TRITON_SRC is the source written, and this autograder's image has no Triton "
                          "to check it with (the course builds it with the `triton` extra to grade Triton here)")
    return "triton" if triton else "cpu"


def memory_failure(container: Container, started: float, reason: str, what: str, doc: dict | None = None,
                   killed: int | None = None) -> dict:
    """A result for a grade the container's memory could not hold: score 0, and it says so
    to the student (not their code) and to the staff (what to set)."""
    text = (f"{what}\n\nThis is not a verdict on your code. Course staff: raise the assignment's memory in its "
            f"Autograder Settings to {RECOMMENDED_MB} MB or more (INSTRUCTORS.md, section 8), then regrade.")
    extra = {"verdict": "grader_error", "reason": reason, "memory": _memory(container, killed)}
    if doc is not None:
        extra.update(grade_verdict=doc["verdict"], grade_message=doc["message"][:2000])
    return {"score": 0, "output": text, "output_format": "text", "tests": [], "stdout_visibility": "hidden",
            "extra_data": extra, "execution_time": _since(started)}


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
    from ..core.config import DEFAULT_CONFIG
    from ..core.result import write_json_atomic
    ap = argparse.ArgumentParser(prog="python -m grader.course.gradescope", description=__doc__.splitlines()[0])
    ap.add_argument("--root", default="/autograder", help="Gradescope's /autograder folder")
    ap.add_argument("--config", default=str(DEFAULT_CONFIG))
    ap.add_argument("--memory-mb", type=int, default=None,
                    help="the container's memory (MB), where its cgroup cannot be read (else it is ignored)")
    ap.add_argument("--timeout-s", type=float, default=Container.timeout_s, help="the autograder timeout (s)")
    args = ap.parse_args(argv)
    root = Path(args.root)
    started = time.monotonic()
    signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        cgroup = Path(os.environ.get("GRADER_CGROUP_ROOT", "/sys/fs/cgroup"))    # tests point it elsewhere
        results = grade_submission(root, Path(args.config), container(args.memory_mb, args.timeout_s, cgroup),
                                   cgroup)
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
