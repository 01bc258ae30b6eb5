"""Stage 4, bench: time the student, SDPA and the references with one harness.

CPU method (this module; the CUDA method is `gpu.py`): all kernels timed interleaved in
one process, one call each per round, their order rotated round by round, after warm-up
calls, with `time.perf_counter` around each call; the headline is the median of every
timed call, the spread the inter-quartile range. The thread count is fixed before torch
starts and recorded.

Timing integrity: the kernel runs in the timed process, may have read our source and can
rewrite anything there (the timer, the harness, the samples), so the judge decides from
what that process cannot forge (grader/judge/judge.py, `_bench_size_cpu`):
- the judge paces the rounds: each round's inputs are made by the judge with its secret
  generator and sent just before the round (`Rounds.round`), so no call's inputs exist
  before it, and no answer can be prepared or cached ahead;
- every timed output of the kernel is taken the moment its call returns, inside the call's
  time (before the next kernel runs: work left running cannot finish it later, and an
  output that computes itself when first read is timed as the call's; every kernel's output
  is taken the same way), sent back, and the judge checks
  `ROWS_PER_HEAD` random rows of every head against float64, rows it picks after the
  output arrived: a kernel wrong on any timed call is wrong_answer;
- every call is a request of its own (`Rounds.round`'s `only`), so each kernel's call has a
  bracket on the judge's clock: its reported time must fit in it (else the grade is a
  runtime_error), and what the kernel's call leaves unaccounted must be what the harness's
  own work of a request costs (the judge does that work itself to know): time moved out of
  the kernel's reported call, whether dropped or handed to another kernel's call, stays in
  the kernel's bracket and is charged back to it, and flagged;
- SDPA and the references answer another question than the kernel: they get the round's
  inputs as (k, q, v), the same bytes in the same caches (no copy, no change of speed), so
  an output they leave alive or freed in the process (the harness's own local, a block of
  the allocator) is never the kernel's answer to copy;
- SDPA is timed in the judge's own, clean process too, between the rounds (the child stopped),
  and the slowdown is taken against at most 1.25x that: a baseline slowed in the kernel's process (an allocator, OpenMP's
  settings, threads left running: however it was done) flatters no one;
- torch's global state that SDPA's speed depends on (`StateGuard`: threads, the SDP
  backend flags, TF32 flags, denormal flushing) is compared with its value at the start
  before every SDPA call and put back; each change is reported (a flag in the result).
"""
from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import torch
import torch.nn.functional as F

from .check import make_inputs, truth
from ..core.config import Config, Shape
from ..core.result import BenchRow, Timing


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


def input_seed(nonce: int, size_round: int) -> int:
    """Seed of the fresh input set of one round (the judge's nonce mixes in)."""
    return (nonce * 1_000_003 + size_round * 7919) % (1 << 62)


# ---- torch's global state that SDPA's speed depends on ------------------------------------

class StateGuard:
    """The settings a kernel could change to slow SDPA down (it shares the process):
    thread counts, the SDP backend switches, TF32 and matmul precision, denormal flushing.
    `restore()` compares them with the snapshot taken at construction, puts back what
    changed, and remembers what it was."""

    def __init__(self):
        self.saved = self._read()
        self.changes: list[str] = []

    @staticmethod
    def _denormals_flushed() -> bool:
        return float(torch.tensor([1e-39], dtype=torch.float32).mul_(1.0)[0]) == 0.0

    def _read(self) -> dict:
        b = torch.backends
        state = {"num_threads": torch.get_num_threads(), "num_interop_threads": torch.get_num_interop_threads(),
                 "flash_sdp": b.cuda.flash_sdp_enabled(), "mem_efficient_sdp": b.cuda.mem_efficient_sdp_enabled(),
                 "math_sdp": b.cuda.math_sdp_enabled(), "matmul_allow_tf32": b.cuda.matmul.allow_tf32,
                 "cudnn_allow_tf32": b.cudnn.allow_tf32, "float32_matmul_precision": torch.get_float32_matmul_precision(),
                 "flush_denormal": self._denormals_flushed(), "mkldnn": b.mkldnn.enabled}
        if hasattr(b.cuda, "cudnn_sdp_enabled"):
            state["cudnn_sdp"] = b.cuda.cudnn_sdp_enabled()
        return state

    def restore(self) -> None:
        now = self._read()
        changed = [k for k in self.saved if now.get(k) != self.saved[k]]
        for key in changed:
            text = f"{key}: {self.saved[key]!r} -> {now.get(key)!r}"
            if text not in self.changes:
                self.changes.append(text)
            self._set(key, self.saved[key])

    @staticmethod
    def _set(key: str, value) -> None:
        b = torch.backends
        setters = {"num_threads": torch.set_num_threads, "flash_sdp": b.cuda.enable_flash_sdp,
                   "mem_efficient_sdp": b.cuda.enable_mem_efficient_sdp, "math_sdp": b.cuda.enable_math_sdp,
                   "flush_denormal": torch.set_flush_denormal,
                   "float32_matmul_precision": torch.set_float32_matmul_precision}
        if key in setters:
            setters[key](value)
        elif key == "matmul_allow_tf32":
            b.cuda.matmul.allow_tf32 = value
        elif key == "cudnn_allow_tf32":
            b.cudnn.allow_tf32 = value
        elif key == "mkldnn":
            b.mkldnn.enabled = value
        elif key == "cudnn_sdp" and hasattr(b.cuda, "enable_cudnn_sdp"):
            b.cuda.enable_cudnn_sdp(value)
        # num_interop_threads cannot be set twice in a process: reported only


# ---- one size -------------------------------------------------------------------------------

@dataclass
class Timed:
    """The timings of every kernel at one size, and what the judge asked to see."""
    timings: dict                          # kernel -> Timing
    reps: int                              # timed rounds
    method: str
    canary_outputs: dict = field(default_factory=dict)     # slot -> the student's kept output (CUDA)
    commit: dict = field(default_factory=dict)             # slot -> its digest, taken as its method ended (CUDA)
    state_changes: list = field(default_factory=list)      # StateGuard.changes
    extra: dict = field(default_factory=dict)


# rows of every timed output the judge checks, per (batch, head). A kernel wrong on one row of
# one head in every timed call (the held-out row_lottery, 2026-11-28: nothing gained, a verdict
# untrue) is caught with probability rows/S a call: at 4 rows, 1 in 64 at S = 256, and its 60
# calls slipped through 39% of the time (they did once); at 16, 1 in 16 a call, 2% over 60. The
# judge's cost a checked call (H = 8, one thread, this CPU): 0.51 -> 0.58 ms at S = 128, 1.85 ->
# 2.77 ms at S = 1024, where a CPU call of attention takes tens of ms.
ROWS_PER_HEAD = 16


class Rounds:
    """The child's side of one size of the CPU benchmark, paced by the judge (module doc):
    warm-up calls on inputs of its own, then one round per request on the judge's inputs,
    each kernel called once, the order rotated round by round."""

    def __init__(self, kernels: dict, guard: StateGuard | None = None):
        self.kernels, self.names = kernels, list(kernels)
        self.guard = guard or StateGuard()

    def warmup(self, shape: Shape, cfg: Config, nonce: int) -> None:
        for w in range(cfg.warmup_reps):
            q, k, v = make_inputs(shape, input_seed(nonce, -1 - w))
            for name, fn in self.kernels.items():
                if name == "sdpa":
                    self.guard.restore()
                fn(q.clone(), k.clone(), v.clone()) if name == "student" else fn(q, k, v)

    def round(self, r: int, q, k, v, keep=None, only: str | None = None, fresh: bool = False) -> dict:
        """{name: ms} of one call of each kernel (`only`: of that kernel alone, one request of
        the judge's a call): the student on copies of q, k, v, the others
        on (k, q, v), another question (module doc). `keep(name, out)` takes each kernel's
        output (its bytes) the moment its call returns, before any other kernel runs (work
        left running cannot finish the tensor behind the judge's back), and inside the call's
        time: an output that computes itself when first read (memory mapped with no access, a
        fault handler doing the work) is timed as the call's, and every kernel pays the same
        copy."""
        names = self.names if only is None else [n for n in self.names if n == only]
        samples = {}
        for i in range(len(names)):
            name = names[(r + i) % len(names)]
            fn = self.kernels[name]
            if name == "sdpa":
                self.guard.restore()
            # the student on copies (`fresh`: q, k, v are already its own, nobody else's inputs)
            args = ((q, k, v) if fresh else (q.clone(), k.clone(), v.clone())) if name == "student" else (k, q, v)
            t0 = time.perf_counter()
            out = fn(*args)
            if keep is not None:
                keep(name, out)
            samples[name] = (time.perf_counter() - t0) * 1e3
        return samples


def more_rounds(done: int, cfg: Config, elapsed_s: float, kernels: int) -> bool:
    """The stopping rule: at least min_reps rounds, then until rep_ms per kernel has passed,
    at most max_reps."""
    return done < cfg.max_reps and (done < cfg.min_reps or elapsed_s < cfg.rep_ms / 1000 * kernels)


def bench_size(kernels: dict, shape: Shape, cfg: Config, nonce: int, guard: StateGuard | None = None) -> Timed:
    """Interleaved CPU timings of trusted `kernels` ({"sdpa": fn, "naive": fn, ...}) at one
    size, inputs of its own (tools/bench_reference.py); a student's kernel is timed by the
    judge's rounds instead (grader/judge/judge.py)."""
    rounds = Rounds(kernels, guard)
    rounds.warmup(shape, cfg, nonce)
    samples = {name: [] for name in kernels}
    start = time.perf_counter()
    rep = 0
    while more_rounds(rep, cfg, time.perf_counter() - start, len(kernels)):
        q, k, v = make_inputs(shape, input_seed(nonce, rep))
        for name, ms in rounds.round(rep, q, k, v).items():
            samples[name].append(ms)
        rep += 1
    rounds.guard.restore()
    return Timed(timings={name: summarize(ts) for name, ts in samples.items()}, reps=rep,
                 method="cpu-perf_counter", state_changes=list(rounds.guard.changes))


def time_cpu(kernels: dict, shape: Shape, cfg: Config, seed: int) -> dict:
    """{name: Timing} of trusted kernels (tools/bench_reference.py), same harness."""
    return bench_size(kernels, shape, cfg, seed).timings


TIMING_DESCRIPTION = ("time.perf_counter around each call; kernels interleaved, their order rotated each "
                      "round; every round paced by the judge, on a fresh input set it made and sent just "
                      "then (none seen before, none known ahead); every timed output of the kernel sent "
                      f"back the moment its call returned and {ROWS_PER_HEAD} random rows per head checked "
                      "against float64; every call a request of its own, its time checked against the "
                      "judge's own clock (beside SDPA's, which carries the same bytes); median after warm-up")


# ---- the judge's side: what the child reports is only data ------------------------------------

class ImplausibleTimings(Exception):
    """The child's timings cannot be true (the message says why)."""


def plausible_timings(d, names: set, wall: float) -> dict:
    """The child's timings, kept only if they are plausible: finite, positive, the median
    within min..max, and no kernel's total time more than the wall time of the request."""
    out = {}
    if not isinstance(d, dict):
        raise ImplausibleTimings("the benchmark returned no timings")
    for name, t in d.items():
        if name not in names and not any(name == f"{n}_{m}" for n in names for m in ("do_bench", "cudagraph")):
            continue
        try:
            timing = Timing(**{k: t[k] for k in ("median_ms", "min_ms", "max_ms", "iqr_ms", "reps")})
            values = [timing.median_ms, timing.min_ms, timing.max_ms, timing.iqr_ms]
            if not all(isinstance(x, (int, float)) and 0 <= x < 1e9 for x in values) or \
                    not isinstance(timing.reps, int) or not timing.min_ms <= timing.median_ms <= timing.max_ms:
                raise ValueError(name)
            if timing.reps > 0 and timing.min_ms * timing.reps > wall * 1e3 * 1.05 + 5:
                raise ValueError(f"{name}: more time than the request took")
        except (KeyError, TypeError, ValueError) as e:
            raise ImplausibleTimings(f"the benchmark's timings are not plausible ({e})") from None
        out[name] = timing
    if "student" not in out or "sdpa" not in out:
        raise ImplausibleTimings("the benchmark returned no timing of the kernel or of SDPA")
    return out


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
