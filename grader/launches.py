"""Whose compute ran: the GPU kernels a checked call launched, observed, not inferred.

The symbol audits read what a kernel's binary could call; this reads what its checked calls
did launch. In the child (`observed`), every checked call on a GPU runs under torch's
profiler (Kineto on CUPTI's activity records: every kernel the CUDA context ran while it
was on, from any thread or stream), and the call's kernels go back to the judge by name,
stream and duration. The judge (`judge_launches`) sorts them:

- **own**: the submission's kernels: the `__global__` functions of its `_CUDA_SRC`, the
  `@triton.jit` functions of its `_TRITON_SRC` (by base name: "void fused<64>(float*)"
  is `fused`);
- **allocation**: ATen's fill and copy kernels (`torch::zeros`, `.contiguous()`), which a
  kernel's allocation may launch;
- **foreign**: a kernel of a library's attention work (cuBLAS, CUTLASS, cuDNN, gemm, flash
  or memory-efficient attention, softmax, reductions, exp) is strict `foreign_kernel`;
  ATen's other kernels (an elementwise `q * scale` in the glue) are the warning
  `aten_kernels`, as the operation audit makes the same operation; any other name is
  `unknown_kernel` for a person to review.

A checked call that launched no kernel of its own is `no_own_kernel` (review: the output
came from somewhere else: the host, a copy); kernels on more than one stream are
`side_streams` (warning). If the profiler cannot run, that is said (`launch_observation`,
review), never read as "clean".

Bounded, not structural: the observation is made in the child's process, which a native
kernel shares (the dispatcher and RecordFunction symbols are strict in the link audit,
dynamic loading too); a kernel of the student's own compiled under a library kernel's
exact name counts as its own; timed calls are not observed (their time is the judge's
canaries' and the physical floor's business).
"""
from __future__ import annotations

import re

MAX_KERNELS = 400           # kernel records kept per call (a kernel launching thousands is said so)

ALLOCATION = re.compile(r"FillFunctor|direct_copy_kernel|copy_device_to_device|CatArrayBatchedCopy|"
                        r"fill_kernel|zero_kernel")
# attention's own work in a library: products, softmax, its exponential and reductions, the SDPA kernels
FAMILIES = re.compile(r"(?i)cublas|cutlass|cudnn|gemm|gemv|xmma|flash|fmha|attention|softmax|reduce_kernel|"
                      r"exp_kernel|\bexp\w*Functor|bmm|matmul|\bsm\d{2,3}_|ampere_|volta_|turing_|hopper_|magma")
# ATen's other kernels (an elementwise `q * scale` in the C++ glue): a warning, as the operation
# audit makes the same dispatched operation (a Triton submission's are strict there)
ATEN = re.compile(r"at::native::|at::cuda::")


# ---- in the child ------------------------------------------------------------------------------

def observed(fn, *args):
    """(fn(*args), what it launched): {"kernels": [{name, stream, us}], "error": str|None}.
    The GPU is synchronised before the profiler stops, so every kernel the call started
    (on any stream) has run; an exception of fn still propagates, after the profiler stopped."""
    import torch
    report: dict = {"kernels": [], "error": None}
    try:
        from torch.profiler import ProfilerActivity, profile
        prof = profile(activities=[ProfilerActivity.CUDA])
        prof.__enter__()
    except Exception as exc:  # noqa: BLE001 - said, never read as "nothing launched"
        report["error"] = f"the profiler could not start: {type(exc).__name__}: {exc}"[:300]
        return fn(*args), report
    try:
        out = fn(*args)
        torch.cuda.synchronize()
    finally:
        try:
            prof.__exit__(None, None, None)
            report["kernels"] = _kernels(prof)
        except Exception as exc:  # noqa: BLE001
            report["error"] = f"the profiler failed: {type(exc).__name__}: {exc}"[:300]
    return out, report


def _kernels(prof) -> list[dict]:
    from torch.autograd import DeviceType
    out = []
    for e in prof.events():
        if getattr(e, "device_type", None) != DeviceType.CUDA:
            continue
        name = str(e.name)
        if name.startswith(("Memcpy", "Memset")):
            continue
        try:
            us = float(e.time_range.elapsed_us())
        except Exception:  # noqa: BLE001
            us = 0.0
        out.append({"name": name[:400], "stream": int(getattr(e, "device_resource_id", -1) or -1), "us": us})
        if len(out) >= MAX_KERNELS:
            break
    return out


# ---- in the judge ---------------------------------------------------------------------------

def own_names(src) -> frozenset:
    """The kernels a source defines: `__global__` functions (CUDA), jit functions (Triton)."""
    from .sourcetext import function_names, kernel_names
    if src.kind == "triton":
        return frozenset(function_names(src.text))
    return frozenset(kernel_names(src.text)) if src.kind == "cuda" else frozenset()


def base_name(kernel: str) -> str:
    """`fused` of "void (anonymous namespace)::fused<64>(float const*, int)"."""
    s = kernel.strip()
    if s.startswith("void "):
        s = s[5:]
    s = s.replace("(anonymous namespace)", "anon")
    depth, kept = 0, []
    for c in s:
        if c == "<":
            depth += 1
        elif c == ">":
            depth = max(0, depth - 1)
        elif c == "(" and depth == 0:
            break
        elif depth == 0:
            kept.append(c)
    return "".join(kept).split("::")[-1].strip()


def classify(name: str, own: frozenset) -> str:
    """own, allocation, foreign (a library's attention work), aten (ATen's other kernels) or unknown."""
    if base_name(name) in own:
        return "own"
    if ALLOCATION.search(name):
        return "allocation"
    if FAMILIES.search(name):
        return "foreign"
    return "aten" if ATEN.search(name) else "unknown"


def summarise(calls: list[dict], own: frozenset) -> dict:
    """What the checked calls launched, by kernel: {name: {count, class, us}}, and the
    calls with no own kernel, the streams, the profiler's errors."""
    kernels: dict = {}
    streams, errors, without_own = set(), [], 0
    for call in calls:
        if call.get("error"):
            errors.append(str(call["error"])[:300])
        records = [r for r in call.get("kernels") or [] if isinstance(r, dict)]
        if not call.get("error") and not any(classify(str(r.get("name", "")), own) == "own" for r in records):
            without_own += 1
        for r in records:
            name = str(r.get("name", ""))[:400]
            entry = kernels.setdefault(name, {"count": 0, "class": classify(name, own), "us": 0.0})
            entry["count"] += 1
            entry["us"] = round(entry["us"] + float(r.get("us") or 0.0), 3)
            if entry["class"] == "own":
                streams.add(r.get("stream"))
    return {"observed": len(calls) - len(errors), "calls": len(calls), "kernels": kernels,
            "without_own": without_own, "streams": len(streams), "errors": errors[:3]}


def launch_flags(summary: dict, hidden: bool = False) -> list[dict]:
    """The flags of a summary (public calls: kernels named; hidden calls: withheld)."""
    if not summary or not summary.get("calls"):
        return []
    where = "on a hidden config" if hidden else "in its checked calls"
    flags = []

    def names(cls: str) -> str:
        found = [(n, e["count"]) for n, e in summary["kernels"].items() if e["class"] == cls]
        return "; ".join(f"{n[:160]} x{c}" for n, c in found[:4]) + (f" (+{len(found) - 4} more)" if len(found) > 4 else "")
    foreign = any(e["class"] == "foreign" for e in summary["kernels"].values())
    unknown = any(e["class"] == "unknown" for e in summary["kernels"].values())
    if foreign:
        flags.append({"code": "foreign_kernel", "tier": "strict", "detail": (
            f"{where} the kernel launched GPU kernels of a library, not its own"
            + ("" if hidden else f": {names('foreign')}") + " (grader/launches.py)")})
    if any(e["class"] == "aten" for e in summary["kernels"].values()):
        flags.append({"code": "aten_kernels", "tier": "warning", "detail": (
            f"{where} the kernel launched ATen's kernels besides its own (work done outside the kernel)"
            + ("" if hidden else f": {names('aten')}"))})
    if unknown:
        flags.append({"code": "unknown_kernel", "tier": "review", "detail": (
            f"{where} the kernel launched GPU kernels that are not defined in its source"
            + ("" if hidden else f": {names('unknown')}"))})
    if summary.get("without_own"):
        flags.append({"code": "no_own_kernel", "tier": "review", "detail": (
            f"{summary['without_own']} of its checked calls launched none of the submission's own GPU kernels "
            "(the output came from elsewhere: the host, a copy, a library?)" if not hidden else
            f"{where} a call launched none of the submission's own GPU kernels")})
    if summary.get("streams", 0) > 1 and not hidden:
        flags.append({"code": "side_streams", "tier": "warning", "detail": (
            f"its own kernels ran on {summary['streams']} CUDA streams in its checked calls: work on a "
            "stream the timing does not wait for is not timed")})
    if summary.get("errors") and not hidden:
        flags.append({"code": "launch_observation", "tier": "review", "detail": (
            f"the kernels of {len(summary['errors'])} checked call(s) could not be observed: {summary['errors'][0]}")})
    return flags
