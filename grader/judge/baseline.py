"""SDPA timed in a clean process: the GPU baseline no kernel's process can touch.

The CUDA harness times SDPA beside the student's kernel, in the student's process (grader/judge/gpu.py),
where native code can slow it: an allocator, a stream priority, the persisting-L2 window, a
kernel left running, torch's settings (the state guard puts back the ones it knows). So after
the benchmark the judge runs this module in a process of its own, on the same GPU, with the
same harness (`time_events`, or `time_graphs` where the grade's headline was the graph
method), SDPA beside what the child timed it with except the student's kernel (the course's
reference kernels in a student's own grade, nothing in a batch), and holds the baseline
measured beside the kernel to at most GPU_SDPA_CAP times it (grader/judge/judge.py
`_clean_sdpa`). Like with like: on an H200 at S = 64, SDPA interleaved with the references ran
1.12x (fused.cu's grade) and 1.21x (fused_tc.cu's) its time alone, which capped honest
kernels' slowdowns and flagged them for review, while beside the references in both
processes an honest kernel leaves SDPA where it was.

    echo '{"uuid": "GPU-...", "sizes": [{"shape": {...}, "method": "graph"}],
           "beside": ["naive", "fused", "fused_opt"], "config": "assignment/config.toml"}' | python -m grader.judge.baseline

prints "ready" once torch is imported (CUDA is not started until the request comes), then
{"sdpa_ms": {"<S>": ms}, "seconds": s}. The judge starts it when the device phase begins, so
that torch's import is paid while the kernel is checked, and waits for "ready" before the
benchmark (nothing of it runs while the kernel is timed). Trusted code only: no student code
is loaded here. An empty request ends it.
"""
from __future__ import annotations

import json
import sys
import time

GPU_SDPA_CAP = 1.10         # the baseline beside the kernel counts for at most this times the clean one
GPU_SLOWED_REVIEW = 1.20    # above this, a review flag (baseline_slowed)


def references(names: list, config: str) -> dict:
    """The course's CUDA reference kernels `names` (grader/judge/worker.py REFERENCES), built as
    the child builds them (the build cache makes this a load); those that do not build are left
    out (the measurement says which it was beside)."""
    from dataclasses import replace

    from ..build import compile as build
    from ..build.parse import parse_file
    from ..core.config import REPO_ROOT, load
    from .worker import REFERENCES
    cfg, out = load(config) if config else load(), {}
    for name in names:
        rel = REFERENCES["cuda"].get(name)
        if rel and (REPO_ROOT / rel).is_file():
            result, kernel = build.compile_source(parse_file(REPO_ROOT / rel, name).sources["cuda"], cfg)
            if kernel is not None:
                out[name] = replace(kernel, observed=False)
    return out


def measure(uuid: str, sizes: list[dict], beside: dict | None = None) -> dict:
    """{S: SDPA's median ms} with the harness's method of each size, interleaved with the
    kernels `beside` ({name: callable}) as the child interleaved it with them."""
    import torch.nn.functional as F

    from ..core.config import Shape
    from .gpu import select_gpu, time_events_interleaved, time_graph_all
    if uuid:
        select_gpu(uuid)
    out = {}
    for size in sizes:
        shape = Shape(**size["shape"])
        kernels = {"sdpa": F.scaled_dot_product_attention, **(beside or {})}
        timings = time_graph_all(kernels, shape) if size.get("method") == "graph" else None
        if timings is None:
            timings = time_events_interleaved(kernels, shape)
        out[str(shape.S)] = timings["sdpa"].median_ms
    return out


def main() -> int:
    import torch  # noqa: F401 - the import is the slow part: before "ready"

    from . import gpu  # noqa: F401
    try:        # the child's process has the grader's operator observer registered: this one too, alike
        from ..build.compile import _dispatch
        _dispatch().observe_ops()
    except Exception:  # noqa: BLE001 - no binding module here: SDPA timed without it
        pass
    print("ready", flush=True)
    text = sys.stdin.read()
    if not text.strip():
        return 0
    t0 = time.monotonic()
    request = json.loads(text)
    import os
    for key, value in (request.get("env") or {}).items():    # before CUDA starts in this process
        if key == "CUDA_VISIBLE_DEVICES":
            os.environ[key] = str(value)
    beside = references(list(request.get("beside") or []), str(request.get("config") or ""))
    result = {"sdpa_ms": measure(str(request.get("uuid") or ""), list(request["sizes"]), beside),
              "beside": sorted(beside)}
    result["seconds"] = round(time.monotonic() - t0, 3)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
