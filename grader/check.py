"""Stage 3, check: is the kernel's output softmax(q kᵀ/√D) v, to the tolerance?

For each config: fresh seeded random inputs, the kernel gets clones, the truth is
computed in float64. Each way to fail has its own message: an exception, a wrong
type / shape / dtype / device, an output that aliases an input, inputs modified by
the call, NaN/Inf, and finally max |out - truth| >= tolerance, with the first
mismatches (index, got, expected).
"""
from __future__ import annotations

import math
import re
import time

import torch

from .config import Shape
from .result import CheckResult, Mismatch

MAX_MISMATCHES = 5
NOT_IMPLEMENTED = re.compile(r"not implemented", re.IGNORECASE)


def make_inputs(shape: Shape, seed: int, device: str = "cpu") -> tuple[torch.Tensor, ...]:
    """q, k, v of shape (B, H, S, D), float32, reproducible from `seed`: standard normal,
    q and k times `shape.qk_std` (Shape's docstring)."""
    gen = torch.Generator().manual_seed(seed)
    size = (shape.B, shape.H, shape.S, shape.D)
    q, k, v = (torch.randn(size, generator=gen, dtype=torch.float32) for _ in range(3))
    if shape.qk_std != 1.0:
        q, k = q * shape.qk_std, k * shape.qk_std
    return q.to(device), k.to(device), v.to(device)


TRUTH_CHUNK_BYTES = 1 << 29   # above 512 MiB of float64 scores, compute head by head


def truth(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """softmax(q kᵀ / √D) v in float64, on the inputs' device: the reference every
    kernel is held to. Shapes (batch, heads, seq, head_dim)."""
    B, H, S, D = q.shape
    q64, k64, v64 = (t.detach().to(torch.float64) for t in (q, k, v))
    scale = 1.0 / math.sqrt(D)
    if B * H * S * S * 8 <= TRUTH_CHUNK_BYTES:
        return torch.softmax(q64 @ k64.transpose(-1, -2) * scale, dim=-1) @ v64
    out = torch.empty_like(q64)
    for b in range(B):
        for h in range(H):
            scores = q64[b, h] @ k64[b, h].T * scale
            out[b, h] = torch.softmax(scores, dim=-1) @ v64[b, h]
    return out


def exception_message(exc: BaseException) -> str:
    """The student's error without C++ backtraces: the first meaningful line."""
    text = str(exc).strip()
    text = text.split("\nException raised from")[0]
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (lines[0] if lines else type(exc).__name__)[:500]


def failure_kind(exc: BaseException) -> str:
    return "not_implemented" if NOT_IMPLEMENTED.search(str(exc)) else "runtime_error"


def _storage_ptr(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr()


def compare(out, q, k, v, expected: torch.Tensor, tolerance: float) -> tuple[float | None, str, tuple]:
    """(max_err, message, mismatches) of a kernel's output; message is "" when it passes."""
    if not isinstance(out, torch.Tensor):
        return None, f"attention returned {type(out).__name__}, expected a torch.Tensor", ()
    if tuple(out.shape) != tuple(q.shape):
        return None, (f"output has shape {tuple(out.shape)}, expected {tuple(q.shape)} "
                      "(batch, heads, seq, head_dim)"), ()
    if out.dtype != torch.float32:
        return None, f"output dtype is {out.dtype}, expected torch.float32", ()
    if out.device != q.device:
        return None, f"output is on {out.device}, expected {q.device} (the inputs' device)", ()
    got = out.detach().to("cpu", torch.float64)
    bad = ~torch.isfinite(got)
    if bad.any():
        first = tuple(int(i) for i in bad.nonzero()[0])
        return float("nan"), (f"output has {int(bad.sum())} NaN/Inf values (first at index "
                              f"{first}): an element never written, a division by zero, "
                              "or exp() overflow without max subtraction?"), ()
    err = (got - expected).abs()
    max_err = float(err.max()) if err.numel() else 0.0
    if max_err < tolerance:
        return max_err, "", ()
    from .diagnose import diagnose
    pattern = diagnose(got, expected, tuple(t.detach().to("cpu", torch.float64) for t in (q, k, v)), tolerance)
    idx = (err >= tolerance).nonzero()[:MAX_MISMATCHES]
    mismatches = tuple(Mismatch(index=tuple(int(i) for i in row), got=float(got[tuple(row)]),
                                expected=float(expected[tuple(row)])) for row in idx)
    n_bad = int((err >= tolerance).sum())
    return max_err, (f"max_err {max_err:.3g} >= tolerance {tolerance:g} "
                     f"({n_bad} of {err.numel()} elements off)" + (f"; {pattern}" if pattern else "")), mismatches


def check_one(kernel, shape: Shape, seed: int, tolerance: float, name: str,
              device: str = "cpu", hidden: bool = False, poison=None) -> tuple[CheckResult, str]:
    """Run the kernel on one config. Returns the result and its failure kind
    ("" when passed, else "wrong_answer", "runtime_error" or "not_implemented")."""
    q, k, v = make_inputs(shape, seed, device)
    expected = truth(q, k, v).cpu()
    args = tuple(t.clone() for t in (q, k, v))     # the kernel never sees our copies
    config = None if hidden else shape.as_dict()
    if poison is not None:
        poison(q)   # fill torch's free GPU memory with NaN: unwritten outputs show up
    t0 = time.perf_counter()
    try:
        out = kernel(*args)
        if device != "cpu":
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - any error in student code is data
        kind = failure_kind(exc)
        return CheckResult(config=config, name=name, max_err=None, passed=False, hidden=hidden,
                           message=f"attention raised: {exception_message(exc)}"), kind
    seconds = time.perf_counter() - t0
    if isinstance(out, torch.Tensor):
        for label, arg in zip("qkv", args):
            if _storage_ptr(out) == _storage_ptr(arg) and out.numel() > 0:
                return CheckResult(config=config, name=name, max_err=None, passed=False, hidden=hidden,
                                   message=f"output shares memory with input {label}; return a new tensor"), "wrong_answer"
    for label, arg, orig in zip("qkv", args, (q, k, v)):
        if not torch.equal(arg, orig):
            return CheckResult(config=config, name=name, max_err=None, passed=False, hidden=hidden,
                               message=f"the kernel modified its input {label}; inputs are read-only"), "wrong_answer"
    max_err, message, mismatches = compare(out, q, k, v, expected, tolerance)
    passed = message == ""
    return CheckResult(config=config, name=name, max_err=max_err, passed=passed, message=message,
                       mismatches=mismatches, hidden=hidden, seconds=round(seconds, 6)), \
        ("" if passed else "wrong_answer")


def withhold(result: CheckResult) -> CheckResult:
    """A hidden config's result with everything that could reveal its shape removed:
    the student's own exception text (it can print q.sizes()), shapes, element counts
    and indices. The category of the failure and max_err stay."""
    msg = result.message
    if msg.startswith("attention raised"):
        msg = "attention raised an exception (its text is withheld on hidden configs)"
    elif msg.startswith("output has shape"):
        msg = "output has the wrong shape"
    elif "NaN/Inf" in msg:
        msg = "output has NaN/Inf values"
    elif msg.startswith("max_err"):
        msg = msg.split(" (")[0]
    return CheckResult(config=None, name=result.name, max_err=result.max_err, passed=result.passed,
                       message=msg, mismatches=(), hidden=True, seconds=result.seconds)


def check(kernel, shapes: tuple[Shape, ...], hidden: tuple[Shape, ...], seed: int, tolerance: float,
          device: str = "cpu", poison=None, on_config=None) -> list[tuple[CheckResult, str]]:
    """Check every public, then every hidden config. `on_config(name)` reports progress."""
    results = []
    named = [(f"config {i + 1}", s, False) for i, s in enumerate(shapes)]
    named += [(f"hidden {i + 1}", s, True) for i, s in enumerate(hidden)]
    for i, (name, shape, is_hidden) in enumerate(named):
        if on_config is not None:
            on_config(name, shape, is_hidden)
        # each config gets its own seed, derived from the run's seed
        result, kind = check_one(kernel, shape, seed * 1000 + i, tolerance, name, device,
                                 is_hidden, poison)
        results.append((withhold(result) if is_hidden else result, kind))
        if device != "cpu" and results[-1][1] == "runtime_error":
            break   # after a CUDA fault the context is unusable: nothing more can run
    return results
