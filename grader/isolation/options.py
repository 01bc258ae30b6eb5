"""How one grade runs: the options a caller (the CLI, a batch) hands the judge."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from .sandbox import Limits


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
    # that hands it a device ({"CUDA_VISIBLE_DEVICES": "1", "GRADER_GPU_UUID": ...}).
    gate: object = None
    gpu_nodes: tuple = ()              # device nodes a sandboxed CUDA child gets (/dev/nvidia0, ...)
    ro_paths: tuple = ()               # more read-only binds for a sandboxed child
    total_timeout: float | None = None   # wall-clock cap on the whole submission (None: the config's)
