"""Stage 5, result: the frozen dataclasses every stage returns, and the JSON document.

A student's failure is data, not an exception: each stage returns one of these, and
`GradeResult` gathers them into the document `--json PATH` writes (schema in
`grader/SCHEMA.md`). Verdicts and exit codes are a contract with students'
and instructors' scripts: do not rename them.
"""
from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .. import __version__

SCHEMA_VERSION = 1

# verdict -> process exit code of `python -m grader grade` (0 only for ok)
VERDICTS = {
    "ok": 0,
    "wrong_answer": 10,
    "compile_error": 11,
    "runtime_error": 12,
    "timeout": 13,
    "not_implemented": 14,
    "invalid_submission": 15,
    "cheat_suspected": 16,
    "grader_error": 70,      # the grader failed on this submission (a batch row, not the student's fault)
}
EXIT_USAGE = 2       # bad command line, config or hidden file: the caller's mistake
EXIT_INTERNAL = 70   # the grader itself failed (a bug: please report it)


@dataclass(frozen=True)
class CompileResult:
    ok: bool
    seconds: float               # wall time of this build (0 if loaded from the cache)
    log: str                     # trimmed compiler output, lines point at the .py file
    cached: bool = False         # True: identical sources were built before, nothing compiled
    module: str = ""             # extension module name (attn_<hash>)
    build_dir: str = ""
    headers: str = ""            # the header tier it was built with: proxy, lean or full ("" if failed)
    library_rel: str = ""        # the built library, relative to build_dir (<tier>/<module>.so)
    tier: str = ""               # the tier whose result this is: the one that compiled it, else the
                                 # last one tried (whose errors `log` shows); grader/build/tiers.py
    fallback: str = ""           # one line per fallback to a slower tier: the .py line that caused it


@dataclass(frozen=True)
class Mismatch:
    index: tuple[int, ...]       # (b, h, s, d)
    got: float
    expected: float


@dataclass(frozen=True)
class CheckResult:
    config: dict | None          # {B, H, S, D}; None for a hidden config
    name: str                    # "config 1", "hidden 1"
    max_err: float | None        # None when no comparable output came back
    passed: bool
    message: str                 # "" when passed; otherwise one sentence saying what is wrong
    mismatches: tuple[Mismatch, ...] = ()
    hidden: bool = False
    seconds: float = 0.0         # wall time of the student's call


@dataclass(frozen=True)
class Timing:
    """Repeated timings of one kernel at one size, in milliseconds."""
    median_ms: float
    min_ms: float
    max_ms: float
    iqr_ms: float                # spread: 75th - 25th percentile
    reps: int


@dataclass(frozen=True)
class BenchRow:
    S: int
    B: int
    H: int
    D: int
    student_ms: float | None
    sdpa_ms: float | None
    slowdown: float | None       # student_ms / sdpa_ms: the headline figure
    naive_ms: float | None
    fused_ms: float | None
    flops: int                   # 4·B·H·S²·D (two matmuls, multiply-add = 2 FLOPs)
    student_gflops: float | None
    timings: dict = field(default_factory=dict)   # kernel -> Timing
    recheck_max_err: float | None = None          # student's error on the timed inputs
    fused_opt_ms: float | None = None             # "fused (optimised)" reference, where there is one
    # the judge's own clock (CPU): the kernel alone less the harness's cost, and SDPA in the
    # judge's process; each held against the timed process's figures
    judge_clock: dict | None = None
    floor_ms: float | None = None                 # the physical floor: no honest call is faster
    # the slowdown's paired-bootstrap 95% interval (grader/analysis/confidence.py): low, high, level,
    # rounds, half_width (a fraction of the slowdown), target, cap_hit (the time cap ended the
    # timing before the interval was within target and clear of every tier boundary), run_to_run
    # (the grade-to-grade part added, confidence.RUN_TO_RUN)
    interval: dict | None = None


@dataclass(frozen=True)
class GradeResult:
    verdict: str
    message: str
    submission: dict             # {name, path, file}
    backend: str                 # "cpu", "cuda" or "triton"
    backend_reason: str
    compile: CompileResult | None
    checks: tuple[CheckResult, ...]
    bench: tuple[BenchRow, ...]
    system: dict
    timing: dict                 # how the bench figures were measured
    config: dict                 # tolerance, public configs, seed (or "withheld")
    stage_seconds: dict          # wall time per stage
    sources: dict = field(default_factory=dict)   # kind -> the kernel source graded (for the report)
    report_md: str | None = None  # the student's written answers (report.md), if handed in
    profiles: tuple = ()         # Nsight Compute kernels from the submission's profiles/ (grader/analysis/ncu.py)
    profile_notes: tuple = ()    # one line per profiles/ file that could not be read
    flags: tuple = ()            # integrity findings: {code, tier (strict|warning|review), detail}
    verdict_without_flags: str | None = None   # the verdict a strict flag replaced, if any
    message_without_flags: str | None = None   # ... and its message
    isolation: dict = field(default_factory=dict)   # sandbox used, limits enforced
    ceilings: dict = field(default_factory=dict)    # CPU: measured roofline (roofline.Ceilings fields)
    bench_quality: dict = field(default_factory=dict)   # were the timings taken on a quiet machine?
    numerics: dict = field(default_factory=dict)   # the precision the kernel most likely computed in
    launches: dict = field(default_factory=dict)   # GPU: the kernels its public checked calls launched
    probes: tuple = ()           # unscored calls that tell a failed config's two causes apart (diagnose.probe_plan)
    grader_version: str = __version__
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self):
        if self.verdict not in VERDICTS:
            raise ValueError(f"unknown verdict {self.verdict!r}")

    @property
    def exit_code(self) -> int:
        return VERDICTS[self.verdict]

    def to_json(self) -> dict:
        return asdict(self)


def write_json_atomic(path: Path | str, data: dict) -> None:
    """Write JSON so a reader never sees half a file (temp file + rename); every string
    printable (`safetext`: no terminal escape survives `jq -r`)."""
    from .safetext import printable_tree
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(printable_tree(finite(data)), f, indent=2, allow_nan=False)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)     # mkstemp makes 0600; results are meant to be read by others
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


# ---- rebuilding results from JSON (the child process hands them over as files) ----

def compile_from(d: dict | None) -> CompileResult | None:
    return None if d is None else CompileResult(**d)


def check_from(d: dict) -> CheckResult:
    mismatches = tuple(Mismatch(index=tuple(m["index"]), got=m["got"], expected=m["expected"])
                       for m in d.get("mismatches", ()))
    return CheckResult(**{**d, "mismatches": mismatches})


def bench_from(d: dict) -> BenchRow:
    timings = {k: (Timing(**t) if t is not None else None) for k, t in d.get("timings", {}).items()}
    return BenchRow(**{**d, "timings": timings})


def result_from(d: dict) -> GradeResult:
    """A GradeResult from its JSON document (what `--json` wrote)."""
    d = {**d, "profiles": tuple(d.get("profiles", ())), "profile_notes": tuple(d.get("profile_notes", ())),
         "flags": tuple(d.get("flags", ())), "probes": tuple(d.get("probes", ()))}
    return GradeResult(**{**d, "compile": compile_from(d["compile"]),
                          "checks": tuple(check_from(c) for c in d["checks"]),
                          "bench": tuple(bench_from(b) for b in d["bench"])})


def finite(obj):
    """Replace NaN/Inf floats by None, recursively, so the JSON is standard JSON."""
    if isinstance(obj, float):
        return obj if obj == obj and obj not in (float("inf"), float("-inf")) else None
    if isinstance(obj, dict):
        return {k: finite(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [finite(v) for v in obj]
    return obj
