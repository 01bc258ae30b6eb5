"""Grade one submission: parse here, run everything else in a child process.

The child (`grader.worker`) runs in its own process group with per-stage timeouts
applied from here, so an infinite loop becomes `timeout` and a segfault becomes
`runtime_error`, and this process always finishes with a complete GradeResult.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from .config import REPO_ROOT, Config
from .parse import Submission, parse
from .result import GradeResult, bench_from, check_from, compile_from, write_json_atomic
from .sandbox import (Limits, OutputCap, bwrap_command, bwrap_path, die_with_parent, folder_bytes,
                      tree_usage)

STAGE_NAMES = {"start": "starting", "prepare": "preparing the grader's binding module",
               "ready": "waiting for a device",
               "roofline": "measuring the CPU's roofline",
               "compile": "compiling", "compile-references": "compiling the reference kernels",
               "check": "checking", "bench": "benchmarking", "done": "done"}
POLL_S = 0.05
OUTPUT_TAIL = 2000


class GraderError(Exception):
    """Grading cannot start (the caller's or the machine's problem, not the student's)."""


@dataclass(frozen=True)
class RunOptions:
    """How the child runs. The defaults are a student's own `make grade`; batch mode sets
    a persistent work folder, the sandbox, what to hide and which GPU."""
    workdir: Path | None = None        # None: a temp folder, removed afterwards
    sandbox: bool = False              # run the child in bwrap (GraderError if unavailable)
    hide: tuple = ()                   # paths the sandboxed child must not see
    env: dict = field(default_factory=dict)   # extra environment (CUDA_VISIBLE_DEVICES, ...)
    stop_after: str | None = None      # "compile": build (into the work folder's cache) and stop
    references: bool = True            # time the reference kernels beside the student's
    limits: Limits = Limits()
    # Start the child ahead of its device: it loads Python, torch and the binding module,
    # then waits; `gate()` is called (blocking) once it waits, and returns the environment
    # that hands it a device ({"CUDA_VISIBLE_DEVICES": "1"}). Batch mode, GPU slots.
    gate: object = None


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


def _result(sub: Submission, cfg: Config, backend: str, reason: str, verdict: str, message: str,
            state: dict | None = None, isolation: dict | None = None) -> GradeResult:
    from .integrity import STRICT, audit_flags, scan, speed_flags
    state = state or {}
    from .evidence import read_profiles
    profiles, notes = read_profiles(sub) if sub.ok else ((), ())
    flags = [f for src in sub.sources.values() for f in scan(src)]
    flags += audit_flags(state.get("audit")) + speed_flags(state.get("bench", []), state.get("system", {}))
    strict = [f for f in flags if f.tier == STRICT]
    before = None
    if strict and verdict != "invalid_submission":
        before, verdict = verdict, "cheat_suspected"
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
        flags=tuple(f.as_dict() for f in flags), verdict_without_flags=before,
        isolation=isolation or {},
    )


def _timeout_for(cfg: Config, stage: str) -> float:
    if stage == "ready":      # waiting for the parent's gate: no student code has run
        return float("inf")
    if stage in ("start", "prepare", "compile", "compile-references"):
        return cfg.timeout_compile
    return {"check": cfg.timeout_check, "bench": cfg.timeout_bench,
            "roofline": cfg.timeout_bench}.get(stage, cfg.timeout_check)


def _read_state(workdir: Path) -> dict | None:
    """The child's results so far, validated; None if absent or not what we expect."""
    try:
        state = json.loads((workdir / "state.json").read_text())
    except (OSError, ValueError):
        return None
    expected = {"compile", "checks", "bench", "verdict", "done"}
    return state if isinstance(state, dict) and expected <= set(state) else None


def grade(path: Path | str, cfg: Config, backend: str = "auto", bench: bool = True,
          progress=None, keep_workdir: bool = False, options: RunOptions | None = None) -> GradeResult:
    """Grade the submission at `path`. `progress(stage, detail, elapsed_s)` is called
    whenever the child starts a stage."""
    options = options or RunOptions()
    sub = parse(path)
    if not sub.ok:
        return _result(sub, cfg, "none", "the submission could not be parsed",
                       "invalid_submission", sub.error)
    backend, reason = choose_backend(sub, backend)
    source = sub.sources["cuda" if backend == "cuda" else "cpp"]
    threads = cfg.threads or os.cpu_count() or 1
    if options.workdir is not None:
        workdir = Path(options.workdir).resolve()
        workdir.mkdir(parents=True, exist_ok=True)
        for stale in ("progress.jsonl", "state.json", "output.log"):
            (workdir / stale).unlink(missing_ok=True)
    else:
        workdir = Path(tempfile.mkdtemp(prefix="grade-"))
    request = {"source": {"kind": source.kind, "text": source.text, "file": source.file,
                          "line_map": list(source.line_map)},
               "config": cfg.to_json(), "backend": backend, "threads": threads, "bench": bench,
               "stop_after": options.stop_after, "references": options.references,
               "gate": options.gate is not None}
    (workdir / "request.json").write_text(json.dumps(request))
    try:
        verdict, message, state, isolation = _supervise(workdir, cfg, threads, progress, options,
                                                        gpu=backend == "cuda")
    finally:
        if not keep_workdir and options.workdir is None:
            shutil.rmtree(workdir, ignore_errors=True)
    return _result(sub, cfg, backend, reason, verdict, message, state, isolation)


def _child_command(workdir: Path, options: RunOptions, gpu: bool) -> tuple[list[str], dict, dict]:
    """(argv, environment, isolation record) of the worker process."""
    cmd = [sys.executable, "-m", "grader.worker", str(workdir)]
    env = {**os.environ, **options.env}
    if not options.sandbox:
        return cmd, env, {"sandbox": "none", "limits": options.limits.as_dict()}
    bwrap = bwrap_path()
    if bwrap is None:
        raise GraderError("the sandbox needs bubblewrap: install it (apt install bubblewrap) "
                          "or set GRADER_BWRAP to a bwrap binary")
    from .compile import cache_root
    for sub in ("cache", "home", "tmp"):
        (workdir / sub).mkdir(exist_ok=True)
    env.update({"GRADER_SHARED_CACHE": str(cache_root()), "GRADER_CACHE": str(workdir / "cache"),
                "HOME": str(workdir / "home"), "TMPDIR": str(workdir / "tmp"),
                "TRITON_CACHE_DIR": str(workdir / "home" / "triton"), "XDG_CACHE_HOME": str(workdir / "home")})
    shared_triton = cache_root() / "triton"
    if gpu and shared_triton.is_dir() and not (workdir / "home" / "triton").exists():
        shutil.copytree(shared_triton, workdir / "home" / "triton")
    wrapped = bwrap_command(bwrap, cmd, workdir, list(options.hide), gpu)
    return wrapped, env, {"sandbox": "bwrap", "bwrap": bwrap, "limits": options.limits.as_dict(),
                          "hidden_paths": len(options.hide), "network": "none"}


def _supervise(workdir: Path, cfg: Config, threads: int, progress, options: RunOptions,
               gpu: bool) -> tuple[str, str, dict, dict]:
    """Run the worker with per-stage timeouts and the limits; returns (verdict, message,
    state, isolation record)."""
    cmd, env, isolation = _child_command(workdir, options, gpu)
    env.update({"OMP_NUM_THREADS": str(threads), "PYTHONUNBUFFERED": "1",
                "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])})
    limits = options.limits
    proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                            preexec_fn=die_with_parent)
    output = OutputCap(proc.stdout, limits.output_bytes)
    start = time.monotonic()
    stage, detail, stage_start, seen = "start", "", start, 0
    timed_out, breach = None, None
    next_measure, next_disk = start, start
    gated = options.gate is None
    try:
        while proc.poll() is None:
            lines = _progress_lines(workdir)
            for entry in lines[seen:]:
                stage, detail, stage_start = entry["stage"], entry.get("detail", ""), time.monotonic()
                if progress is not None:
                    progress(stage, detail, stage_start - start)
            seen = len(lines)
            if stage == "ready" and not gated:
                gated = True
                env_for_device = options.gate()          # blocks until a device is free
                write_json_atomic(workdir / "go.json", {"env": env_for_device})
                stage_start = time.monotonic()
            now = time.monotonic()
            if now - stage_start > _timeout_for(cfg, stage):
                timed_out = (stage, detail, _timeout_for(cfg, stage))
                break
            if now >= next_measure:
                next_measure = now + limits.poll_s
                rss, procs = tree_usage(proc.pid, limits.max_processes)
                if procs > limits.max_processes:     # first: forked copies share their memory
                    breach = f"started more than {limits.max_processes} processes"
                elif rss > limits.memory_bytes:
                    breach = f"used more than {limits.memory_bytes / 2**30:g} GiB of memory"
            if breach is None and now >= next_disk:
                next_disk = now + 1.0
                if folder_bytes(workdir) > limits.disk_bytes:
                    breach = f"wrote more than {limits.disk_bytes / 2**30:g} GiB to its work folder"
            if breach is not None:
                break
            time.sleep(POLL_S)
    finally:
        _kill_group(proc)
        printed = output.text()
        (workdir / "output.log").write_text(printed)
    isolation = {**isolation, "output_bytes": output.total}
    state = _read_state(workdir) or {}
    where = f"{STAGE_NAMES.get(stage, stage)}{' (' + detail + ')' if detail else ''}"
    if timed_out is not None:
        return "timeout", f"{where} took longer than the {timed_out[2]:g} s limit", state, isolation
    if breach is not None:
        return "runtime_error", f"the kernel {breach} while {where} (stopped)", state, isolation
    if state.get("done"):
        return state["verdict"], state["message"], state, isolation
    rc = proc.returncode
    # the signal that killed the worker: a negative status, or 128+N from bwrap, which
    # reports its killed child that way
    sig = -rc if rc is not None and rc < 0 else (rc - 128 if rc is not None and rc >= 128 and options.sandbox
                                                 else None)
    if sig is not None:
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        return "runtime_error", f"the process crashed with {name} while {where}", state, isolation
    if "internal_error" in state:
        return "runtime_error", (f"the grader failed while {where}: {state['message']} "
                                 "(if your kernel is not the cause, please report this)"), state, isolation
    tail = printed[-OUTPUT_TAIL:].strip().splitlines()[-3:]
    return "runtime_error", (f"the process exited with status {rc} while {where}"
                             + (": " + " | ".join(tail) if tail else "")), state, isolation


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
