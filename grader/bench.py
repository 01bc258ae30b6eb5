"""Stage 4, bench: time the student, SDPA and both references with one harness.

CPU method: all four kernels are timed interleaved in one process (one call each,
round after round), after warm-up calls, on three rotating sets of fresh inputs,
with `time.perf_counter` around each call; the headline is the median, the spread
the inter-quartile range. The thread count is fixed before torch starts and
recorded. The student's output of the last timed call is re-checked against float64
truth, so a kernel cannot be right on the check inputs and wrong when timed.
(The CUDA method lives in `gpu_timing.py`.)
"""
from __future__ import annotations

import statistics
import time

import torch
import torch.nn.functional as F

from .check import make_inputs, truth
from .config import Config, Shape
from .result import BenchRow, Timing

N_INPUT_SETS = 3


def flops(shape: Shape) -> int:
    """FLOPs of attention: two (S×S×D) matmuls, 2 FLOPs per multiply-add: 4·B·H·S²·D."""
    return 4 * shape.B * shape.H * shape.S * shape.S * shape.D


def sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)


def summarize(times_ms: list[float]) -> Timing:
    ordered = sorted(times_ms)
    n = len(ordered)
    q1, q3 = (statistics.quantiles(ordered, n=4)[0], statistics.quantiles(ordered, n=4)[2]) \
        if n >= 2 else (ordered[0], ordered[0])
    return Timing(median_ms=statistics.median(ordered), min_ms=ordered[0], max_ms=ordered[-1],
                  iqr_ms=q3 - q1, reps=n)


def time_cpu(kernels: dict, shape: Shape, cfg: Config, seed: int) -> tuple[dict, torch.Tensor, tuple]:
    """Interleaved timings of every kernel at one size. Returns ({name: Timing}, last
    student output, the inputs it was computed from)."""
    sets = [make_inputs(shape, seed + i) for i in range(N_INPUT_SETS)]
    for _ in range(cfg.warmup_reps):
        for fn in kernels.values():
            for q, k, v in sets[:1]:
                fn(q, k, v)
    samples = {name: [] for name in kernels}
    budget_s = cfg.rep_ms / 1000 * len(kernels)
    start = time.perf_counter()
    last_out, last_in = None, sets[0]
    rep = 0
    while rep < cfg.max_reps and (rep < cfg.min_reps or time.perf_counter() - start < budget_s):
        q, k, v = sets[rep % N_INPUT_SETS]
        for name, fn in kernels.items():
            args = (q.clone(), k.clone(), v.clone()) if name == "student" else (q, k, v)
            t0 = time.perf_counter()
            out = fn(*args)
            samples[name].append((time.perf_counter() - t0) * 1e3)
            if name == "student":
                last_out, last_in = out, (q, k, v)
        rep += 1
    return {name: summarize(ts) for name, ts in samples.items()}, last_out, last_in


def bench(student, references: dict, cfg: Config, seed: int, on_size=None) -> list[BenchRow]:
    """Benchmark rows for every size in the config (CPU). `references` maps "naive" /
    "fused" to kernels (or None when a reference could not be built)."""
    rows = []
    for i, shape in enumerate(cfg.bench_shapes):
        if on_size is not None:
            on_size(shape)
        kernels = {"student": student, "sdpa": sdpa}
        kernels.update({name: fn for name, fn in references.items() if fn is not None})
        timings, out, inputs = time_cpu(kernels, shape, cfg, seed * 1000 + 100 + 10 * i)
        rows.append(make_row(shape, timings, recheck_error(out, inputs)))
    return rows


def recheck_error(out, inputs) -> float | None:
    """max |out - truth| of a timed call (None if the output is not a usable tensor)."""
    if not isinstance(out, torch.Tensor) or tuple(out.shape) != tuple(inputs[0].shape):
        return None
    err = (out.detach().double() - truth(*inputs).to(out.device)).abs().max()   # float64, on out's device
    return float(err) if torch.isfinite(err) else float("nan")


def make_row(shape: Shape, timings: dict, recheck: float | None) -> BenchRow:
    ms = {name: (t.median_ms if t is not None else None) for name, t in timings.items()}
    student, base = ms.get("student"), ms.get("sdpa")
    slowdown = student / base if student and base else None
    n_flops = flops(shape)
    return BenchRow(S=shape.S, B=shape.B, H=shape.H, D=shape.D, student_ms=student, sdpa_ms=base,
                    slowdown=slowdown, naive_ms=ms.get("naive"), fused_ms=ms.get("fused"),
                    flops=n_flops, student_gflops=(n_flops / (student * 1e6) if student else None),
                    timings=timings, recheck_max_err=recheck, fused_opt_ms=ms.get("fused_opt"))
