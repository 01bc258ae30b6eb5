"""Grade one submission: parse here, run everything else in a child process.

The child (`grader.worker`) runs in its own process group with per-stage timeouts
applied from here, so an infinite loop becomes `timeout` and a segfault becomes
`runtime_error`, and this process always finishes with a complete GradeResult.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from .config import REPO_ROOT, Config
from .parse import Submission, parse
from .result import GradeResult, check_from, compile_from, bench_from

STAGE_NAMES = {"start": "starting", "prepare": "preparing the grader's binding module",
               "compile": "compiling", "compile-references": "compiling the reference kernels",
               "check": "checking", "bench": "benchmarking", "done": "done"}
POLL_S = 0.05
OUTPUT_TAIL = 2000


class GraderError(Exception):
    """Grading cannot start (the caller's or the machine's problem, not the student's)."""


def gpu_present() -> bool:
    """True if a CUDA GPU is usable (checked cheaply before importing torch)."""
    if not (Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi")):
        return False
    import torch
    return torch.cuda.is_available()


def choose_backend(sub: Submission, requested: str) -> tuple[str, str]:
    """(backend, reason). `requested` is auto, cpu or cuda."""
    has = set(sub.sources)
    if requested == "cpu":
        if "cpp" not in has:
            raise GraderError(f"{sub.file} has no _CPP_SRC, so it cannot be graded with "
                              "--backend cpu; use --backend cuda on a GPU machine")
        return "cpu", "--backend cpu was requested"
    if requested == "cuda":
        if "cuda" not in has:
            raise GraderError(f"{sub.file} has no _CUDA_SRC, so it cannot be graded with "
                              "--backend cuda; use --backend cpu")
        if not gpu_present():
            raise GraderError("--backend cuda was requested but no CUDA GPU is visible; "
                              "use --backend cpu, or `make check-compile` to only compile")
        return "cuda", "--backend cuda was requested"
    gpu = "cuda" in has and gpu_present()
    if gpu:
        return "cuda", "a CUDA GPU is present and the submission has _CUDA_SRC"
    if "cpp" in has:
        why = "no CUDA GPU is visible" if "cuda" in has else "the submission has only _CPP_SRC"
        return "cpu", f"{why}; grading _CPP_SRC on the CPU"
    raise GraderError(f"{sub.file} has only _CUDA_SRC and no CUDA GPU is visible here: grade it "
                      f"on a GPU machine, or run `make check-compile SUBMISSION={sub.path}` to "
                      "check that it compiles")


def _config_summary(cfg: Config) -> dict:
    return {"tolerance": cfg.tolerance, "configs": [s.as_dict() for s in cfg.configs],
            "hidden_configs": len(cfg.hidden_configs),
            "seed": "withheld" if cfg.seed_is_secret else cfg.seed,
            "bench_sizes": [s.as_dict() for s in cfg.bench_shapes], "source": cfg.source}


def read_profiles(sub: Submission) -> tuple[tuple, tuple]:
    """Every Nsight Compute CSV in the submission's profiles/ folder, parsed (grader/ncu.py);
    a file that does not parse becomes a one-line note, never a failed grade."""
    from .ncu import NcuError, read_files
    from .profile import profiles_dir
    folder = profiles_dir(Path(sub.path))
    if not folder.is_dir():
        return (), ()
    kernels, notes = [], []
    labels: dict = {}          # "after_details.csv" and "after_raw.csv" are one report: "after"
    for csv_file in sorted(folder.glob("*.csv")):
        labels.setdefault(re.sub(r"_(details|raw)$", "", csv_file.stem), []).append(csv_file)
    for label, files in labels.items():
        try:
            kernels += [dict(p.to_json(), profile=label) for p in read_files(files)]
        except NcuError as e:
            notes.append(str(e))
    return tuple(kernels), tuple(notes)


def _result(sub: Submission, cfg: Config, backend: str, reason: str, verdict: str, message: str,
            state: dict | None = None) -> GradeResult:
    state = state or {}
    profiles, notes = read_profiles(sub) if sub.ok else ((), ())
    return GradeResult(
        verdict=verdict, message=message,
        submission={"name": sub.name, "path": sub.path, "file": sub.file},
        backend=backend, backend_reason=reason,
        compile=compile_from(state.get("compile")),
        checks=tuple(check_from(c) for c in state.get("checks", [])),
        bench=tuple(bench_from(b) for b in state.get("bench", [])),
        system=state.get("system", {}), timing=state.get("timing", {}),
        config=_config_summary(cfg), stage_seconds=state.get("stage_seconds", {}),
        profiles=profiles, profile_notes=notes,
        sources={kind: src.text for kind, src in sub.sources.items()}, report_md=sub.report_md,
    )


def _timeout_for(cfg: Config, stage: str) -> float:
    if stage in ("start", "prepare", "compile", "compile-references"):
        return cfg.timeout_compile
    return {"check": cfg.timeout_check, "bench": cfg.timeout_bench}.get(stage, cfg.timeout_check)


def _read_state(workdir: Path) -> dict | None:
    """The child's results so far, validated; None if absent or not what we expect."""
    try:
        state = json.loads((workdir / "state.json").read_text())
    except (OSError, ValueError):
        return None
    expected = {"compile", "checks", "bench", "verdict", "done"}
    return state if isinstance(state, dict) and expected <= set(state) else None


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - OUTPUT_TAIL))
            return f.read().decode("utf-8", "replace").strip()
    except OSError:
        return ""


def grade(path: Path | str, cfg: Config, backend: str = "auto", bench: bool = True,
          progress=None, keep_workdir: bool = False) -> GradeResult:
    """Grade the submission at `path`. `progress(stage, detail, elapsed_s)` is called
    whenever the child starts a stage."""
    sub = parse(path)
    if not sub.ok:
        return _result(sub, cfg, "none", "the submission could not be parsed",
                       "invalid_submission", sub.error)
    backend, reason = choose_backend(sub, backend)
    source = sub.sources["cuda" if backend == "cuda" else "cpp"]
    threads = cfg.threads or os.cpu_count() or 1
    workdir = Path(tempfile.mkdtemp(prefix="grade-"))
    request = {"source": {"kind": source.kind, "text": source.text, "file": source.file,
                          "line_map": list(source.line_map)},
               "config": cfg.to_json(), "backend": backend, "threads": threads, "bench": bench}
    (workdir / "request.json").write_text(json.dumps(request))
    try:
        verdict, message, state = _supervise(workdir, cfg, threads, progress)
    finally:
        if not keep_workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    return _result(sub, cfg, backend, reason, verdict, message, state)


def _supervise(workdir: Path, cfg: Config, threads: int, progress) -> tuple[str, str, dict]:
    """Run the worker with per-stage timeouts; returns (verdict, message, state)."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONUNBUFFERED": "1",
           "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}
    log = open(workdir / "output.log", "wb")
    proc = subprocess.Popen([sys.executable, "-m", "grader.worker", str(workdir)], cwd=REPO_ROOT,
                            env=env, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    start = time.monotonic()
    stage, detail, stage_start, seen = "start", "", start, 0
    timed_out = None
    try:
        while proc.poll() is None:
            lines = _progress_lines(workdir)
            for entry in lines[seen:]:
                stage, detail, stage_start = entry["stage"], entry.get("detail", ""), time.monotonic()
                if progress is not None:
                    progress(stage, detail, stage_start - start)
            seen = len(lines)
            limit = _timeout_for(cfg, stage)
            if time.monotonic() - stage_start > limit:
                timed_out = (stage, detail, limit)
                break
            time.sleep(POLL_S)
    finally:
        _kill_group(proc)
        log.close()
    state = _read_state(workdir) or {}
    where = f"{STAGE_NAMES.get(stage, stage)}{' (' + detail + ')' if detail else ''}"
    if timed_out is not None:
        return "timeout", f"{where} took longer than the {timed_out[2]:g} s limit", state
    if state.get("done"):
        return state["verdict"], state["message"], state
    rc = proc.returncode
    if rc is not None and rc < 0:
        name = signal.Signals(-rc).name if -rc in signal.Signals._value2member_map_ else str(-rc)
        return "runtime_error", f"the process crashed with {name} while {where}", state
    if "internal_error" in state:
        return "runtime_error", (f"the grader failed while {where}: {state['message']} "
                                 "(if your kernel is not the cause, please report this)"), state
    tail = _tail(workdir / "output.log").splitlines()[-3:]
    return "runtime_error", (f"the process exited with status {rc} while {where}"
                             + (": " + " | ".join(tail) if tail else "")), state


def _progress_lines(workdir: Path) -> list[dict]:
    try:
        text = (workdir / "progress.jsonl").read_text()
    except OSError:
        return []
    entries = []
    for line in text.splitlines():
        try:
            entries.append(json.loads(line))
        except ValueError:
            break  # a line being written: read it next time
    return entries


def _kill_group(proc: subprocess.Popen) -> None:
    """Kill the child and everything it started (compilers, threads, forks)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    proc.wait()


def with_seed(cfg: Config, seed: int | None) -> Config:
    return cfg if seed is None else replace(cfg, seed=seed, seed_is_secret=True)
