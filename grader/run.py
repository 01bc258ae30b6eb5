"""Grade one submission: the entry point, `grade()`.

It parses the submission (the file is never imported or run), chooses the backend, and
hands the rest to the judge (`grader/judge/judge.py`): everything that touches the student's
code runs in child processes (`grader/judge/worker.py`, through `grader/judge/child.py`), and the
judge decides every verdict. `_result` turns what was learnt into the GradeResult, with
the integrity flags (the static scan, the link audit, the operation audit, torch state the
kernel changed, speeds beyond the roofline) and `cheat_suspected` where one is strict.
May import: core, isolation, analysis, build, judge, evidence.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .core.config import Config
from .judge.judge import STAGE_NAMES, Judge, public_config  # noqa: F401 - re-exported: the CLI and batch use them
from .isolation.options import GraderError, RunOptions
from .build.parse import PRISTINE_TEMPLATE, Submission, is_template_stub, parse  # noqa: F401 - run.is_template_stub, its old home
from .core.result import GradeResult, bench_from, check_from, compile_from
from .core.system import gpu_present  # noqa: F401 - run.gpu_present, its old home, still works


def choose_backend(sub: Submission, requested: str) -> tuple[str, str]:
    """(backend, reason). `requested` is auto, cpu, cuda or triton."""
    has = set(sub.sources)
    if requested == "triton":
        if "triton" not in has:
            raise GraderError(f"{sub.file} has no _TRITON_SRC, so it cannot be graded with --backend triton")
        return "triton", "--backend triton was requested" + ("" if gpu_present() else TRITON_ON_CPU)
    if requested == "cpu":
        if "cpp" not in has:
            raise GraderError(f"{sub.file} has no _CPP_SRC, so it cannot be graded with "
                              "--backend cpu; use --backend cuda on a GPU machine"
                              + (" or --backend triton" if "triton" in has else ""))
        return "cpu", "--backend cpu was requested"
    if requested == "cuda":
        if "cuda" not in has:
            raise GraderError(f"{sub.file} has no _CUDA_SRC, so it cannot be graded with "
                              "--backend cuda; use --backend cpu" + (" or --backend triton" if "triton" in has else ""))
        if not gpu_present():
            raise GraderError("--backend cuda was requested but no CUDA GPU is visible; "
                              "use --backend cpu, or `make check-compile` to only compile")
        return "cuda", "--backend cuda was requested"
    implemented = {kind for kind in has if not is_template_stub(sub, kind)}
    if "triton" in implemented and not implemented & {"cuda", "cpp"}:
        # the Triton source is the one written: on a GPU, and in the interpreter without one
        return "triton", ("_TRITON_SRC is the implemented source" +
                          ("; a CUDA GPU is present" if gpu_present() else TRITON_ON_CPU))
    gpu = "cuda" in has and gpu_present()
    if gpu and "cpp" in has and is_template_stub(sub, "cuda") and not is_template_stub(sub, "cpp"):
        return "cpu", ("_CUDA_SRC is still the template's stub and _CPP_SRC holds your kernel; grading _CPP_SRC "
                       "on the CPU (--backend cuda, BACKEND=cuda with make, grades the CUDA source)")
    if gpu:
        return "cuda", "a CUDA GPU is present and the submission has _CUDA_SRC"
    if "cpp" in has:
        why = "no CUDA GPU is visible" if "cuda" in has else "the submission has only _CPP_SRC"
        return "cpu", f"{why}; grading _CPP_SRC on the CPU"
    if "triton" in has:
        return "triton", "the submission has _TRITON_SRC" + ("" if gpu_present() else TRITON_ON_CPU)
    raise GraderError(f"{sub.file} has only _CUDA_SRC and no CUDA GPU is visible here: grade it "
                      f"on a GPU machine, or run `make check-compile SUBMISSION={sub.path}` to "
                      "check that it compiles")


TRITON_ON_CPU = ("; no CUDA GPU is visible, so Triton's interpreter runs it on the CPU "
                 "(correctness only: no timing)")


def _config_summary(cfg: Config) -> dict:
    return {"tolerance": cfg.tolerance, "configs": [s.as_dict() for s in cfg.configs],
            "hidden_configs": len(cfg.hidden_configs),
            "seed": "withheld" if cfg.seed_is_secret else cfg.seed,
            "bench_sizes": [s.as_dict() for s in cfg.bench_shapes], "source": cfg.source}


def _result(sub: Submission, cfg: Config, backend: str, reason: str, verdict: str, message: str,
            state: dict | None = None, isolation: dict | None = None) -> GradeResult:
    from .evidence.exports import read_profiles
    from .judge.integrity import STRICT, Flag, audit_flags, floor_flags, scan, speed_flags, state_flags
    state = state or {}
    profiles, notes = read_profiles(sub) if sub.ok else ((), ())
    # a Triton source is audited when it is the one graded: a draft beside a graded C++/CUDA
    # kernel never runs, so its allowlist findings are not this grade's
    flags = [f for src in sub.sources.values() if src.kind != "triton" or backend == "triton" for f in scan(src)]
    flags += [Flag(**f) for f in state.get("link_flags", [])]
    flags += audit_flags(state.get("audit"), every_op_strict=backend == "triton")
    flags += state_flags(state.get("state_changes", []))
    from .core.config import ConfigError, load_precision
    try:
        precision = load_precision(cfg.source) if Path(cfg.source).is_file() else None
    except ConfigError:
        precision = None
    flags += speed_flags(state.get("bench", []), state.get("system", {}), precision)
    flags += floor_flags(state.get("bench", []))
    from .evidence.exports import provenance_flags
    flags += [Flag(**f) for f in provenance_flags({k: s.text for k, s in sub.sources.items()}, profiles)]
    flags += [Flag(**f) for f in state.get("judge_flags", [])]
    strict = [f for f in flags if f.tier == STRICT]
    before, before_message = None, None
    if strict and verdict not in ("invalid_submission", "grader_error"):
        before, before_message, verdict = verdict, message, "cheat_suspected"
        more = f" (+{len(strict) - 1} more: see flags)" if len(strict) > 1 else ""
        message = f"{strict[0].detail}{more}"
    return GradeResult(
        verdict=verdict, message=message,
        submission={"name": sub.name, "path": sub.path, "file": sub.file},
        backend=backend, backend_reason=reason,
        compile=compile_from(state.get("compile")),
        checks=tuple(check_from(c) for c in state.get("checks", [])),
        bench=tuple(bench_from(b) for b in state.get("bench", [])),
        system=state.get("system", {}), timing=state.get("timing", {}),
        config=_config_summary(cfg), stage_seconds=state.get("stage_seconds", {}),
        profiles=profiles, profile_notes=notes, ceilings=state.get("ceilings") or {},
        sources={kind: src.text for kind, src in sub.sources.items()}, report_md=sub.report_md,
        flags=tuple(f.as_dict() for f in flags), verdict_without_flags=before, message_without_flags=before_message,
        isolation=isolation or {}, bench_quality=state.get("bench_quality") or {},
        numerics=state.get("numerics") or {}, launches=state.get("launches") or {},
        probes=tuple(state.get("probes") or ()),
    )


# ---- the public entry point ----------------------------------------------------------------

def grade(path: Path | str, cfg: Config, backend: str = "auto", bench: bool = True,
          progress=None, keep_workdir: bool = False, options: RunOptions | None = None) -> GradeResult:
    """Grade the submission at `path`. `progress(stage, detail, elapsed_s)` is called
    whenever the judge starts a stage."""
    options = options or RunOptions()
    sub = parse(path)
    if not sub.ok:
        return _result(sub, cfg, "none", "the submission could not be parsed",
                       "invalid_submission", sub.error)
    backend, reason = choose_backend(sub, backend)
    judge = Judge(sub, cfg, backend, reason, options, progress, bench, keep_workdir)
    try:
        if judge.compile() and options.stop_after != "compile":
            judge.run_device()
    finally:
        result = finish(judge)
    return result


def finish(judge: Judge) -> GradeResult:
    """The GradeResult of a judge whose grade is over (`Judge.outcome`)."""
    return _result(judge.sub, judge.cfg, judge.backend, judge.reason, *judge.outcome())


def with_seed(cfg: Config, seed: int | None) -> Config:
    return cfg if seed is None else replace(cfg, seed=seed, seed_is_secret=True)
