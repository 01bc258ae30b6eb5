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

Timed calls: at every benchmark size the judge picks one event round of one request at random,
and the kernel's calls of that round run under the profiler too (`Watch`; the round is left out of
the figures). Besides the classes above, the round is held against the kernel's untimed
calls at that size (`timed_launches`: fewer of its own kernels than CALLS times theirs) and
against its own event times (`untimed_work`: kernels busy longer than the calls measured).
Measured on an H100 (tools/profiler_ab.py, reference/fused.cu, observation on vs off, two
grades each): the profiler sessions leave the later timings alone (slowdown ratios 0.998 to
1.001; SDPA's and the kernel's own times within 3% at S = 128 and 0.4% above).

Bounded, not structural: the observation is made in the child's process, which a native
kernel shares (the dispatcher and RecordFunction symbols are strict in the link audit,
dynamic loading too, torch's other internals a warning), so a kernel that can tell the
profiler is on can behave while watched; a kernel of the student's own compiled under a
library kernel's exact name counts as its own.
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

class Watch:
    """Torch's profiler (CUDA activity) on between `start()` and `stop()`: `stop()`
    synchronises the GPU first, so every kernel started meanwhile, on any stream, has run,
    and returns {"kernels": [{name, stream, us}], "error": str|None}. A profiler that cannot
    start or read is said in "error", never read as "nothing launched"."""

    def __init__(self, max_kernels: int = MAX_KERNELS):
        self.report: dict = {"kernels": [], "error": None}
        self.prof = None
        self.max_kernels = max_kernels

    def start(self) -> None:
        try:
            import warnings
            from torch.profiler import ProfilerActivity, profile
            prof = profile(activities=[ProfilerActivity.CUDA])
            # torch's "Profiler clears events at the end of each cycle" (once a process, on
            # stderr): the harness's, not the kernel's, and it led a crash message's stderr
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                prof.__enter__()
            self.prof = prof
        except Exception as exc:  # noqa: BLE001
            self.report["error"] = f"the profiler could not start: {type(exc).__name__}: {exc}"[:300]

    def stop(self, sync: bool = True) -> dict:
        """The report; `sync` False after the watched code raised (its error stands, no second one
        from the synchronisation). A CUDA error the synchronisation raises propagates, after
        the profiler stopped."""
        import torch
        if self.prof is None:
            return self.report
        try:
            if sync:
                torch.cuda.synchronize()
        finally:
            try:
                self.prof.__exit__(None, None, None)
                self.report["kernels"] = _kernels(self.prof, self.max_kernels)
            except Exception as exc:  # noqa: BLE001
                self.report["error"] = f"the profiler failed: {type(exc).__name__}: {exc}"[:300]
            self.prof = None
        return self.report


def harness_kernels(parts: list) -> dict:
    """{kernel name: count} the harness itself launches in a watched round: `parts` [(fn, n)],
    each fn (one input set's fill, one L2 flush) observed once and counted n times. The judge
    takes these out of the round's census (`judge_watched`), within its own bounds, so that
    the harness's writes between the timed calls are not read as the kernel's work."""
    out: dict = {}
    for fn, n in parts:
        if n <= 0:
            continue
        _, seen = observed(fn)
        for k in seen["kernels"]:
            out[k["name"]] = out.get(k["name"], 0) + n
    return out


def observed(fn, *args):
    """(fn(*args), what it launched): {"kernels": [{name, stream, us}], "error": str|None}.
    The GPU is synchronised before the profiler stops, so every kernel the call started
    (on any stream) has run; an exception of fn still propagates, after the profiler stopped."""
    watch = Watch()
    watch.start()
    try:
        out = fn(*args)
    except BaseException:
        watch.stop(sync=False)
        raise
    return out, watch.stop()


def _kernels(prof, limit: int = MAX_KERNELS) -> list[dict]:
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
        if len(out) >= limit:
            break
    return out


# ---- in the judge ---------------------------------------------------------------------------

def own_names(src) -> frozenset:
    """The kernels a source defines: `__global__` functions (CUDA), jit functions (Triton)."""
    from ..core.sourcetext import function_names, kernel_names
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


def launch_flags(summary: dict, hidden: bool = False, where: str = "") -> list[dict]:
    """The flags of a summary (public calls: kernels named; hidden calls: withheld)."""
    if not summary or not summary.get("calls"):
        return []
    where = where or ("on a hidden config" if hidden else "in its checked calls")
    flags = []

    def names(cls: str) -> str:
        found = [(n, e["count"]) for n, e in summary["kernels"].items() if e["class"] == cls]
        return "; ".join(f"{n[:160]} x{c}" for n, c in found[:4]) + (f" (+{len(found) - 4} more)" if len(found) > 4 else "")
    foreign = any(e["class"] == "foreign" for e in summary["kernels"].values())
    unknown = any(e["class"] == "unknown" for e in summary["kernels"].values())
    if foreign:
        flags.append({"code": "foreign_kernel", "tier": "strict", "detail": (
            f"{where} the kernel launched GPU kernels of a library, not its own"
            + ("" if hidden else f": {names('foreign')}") + " (grader/judge/launches.py)")})
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
            f"{summary['without_own']} of its {'timed rounds' if 'timed' in where else 'checked calls'} launched "
            "none of the submission's own GPU kernels "
            "(the output came from elsewhere: the host, a copy, a library?)" if not hidden else
            f"{where} a call launched none of the submission's own GPU kernels")})
    if summary.get("streams", 0) > 1 and not hidden:
        flags.append({"code": "side_streams", "tier": "warning", "detail": (
            f"its own kernels ran on {summary['streams']} CUDA streams {where}: work on a "
            "stream the timing does not wait for is not timed")})
    if summary.get("errors") and not hidden:
        flags.append({"code": "launch_observation", "tier": "review", "detail": (
            f"{where}, the kernels of {len(summary['errors'])} call(s) or round(s) could not be observed: "
            f"{summary['errors'][0]}")})
    return flags


# ---- the timed calls: one round a benchmark request, watched ----------------------------------
# The judge picks one event round of one benchmark request a size at random (grader/judge/gpu.py
# `time_events`); the kernel's calls of that round run under the profiler, and that round is
# left out of the figures. What it launched is classified as above, and held against what
# the same kernel's untimed calls at that size launch and against the round's event times.
UNTIMED_WORK = 1.25          # own kernels' GPU time above this share of the calls' event time


def own_count(report: dict, own: frozenset) -> int:
    """The submission's kernels in one observation."""
    return sum(1 for r in report.get("kernels") or [] if isinstance(r, dict)
               and classify(str(r.get("name", "")), own) == "own")


def judge_watched(rounds: list[dict], own: frozenset, untimed_own: dict) -> tuple[dict, list[dict]]:
    """(summary, flags) of the watched timed rounds: `rounds` [{S, kernels, error, event_ms,
    truncated}], `untimed_own` {S: the fewest own kernels an untimed call at S launched}.
    - the kernels' classes: foreign strict, ATen's a warning, unknown for review (as for the
      checked calls);
    - `timed_launches` (review): fewer own kernels than CALLS times what an untimed call
      launches: some timed calls computed nothing on the GPU (an answer from elsewhere);
    - `untimed_work` (review): own kernels busy longer than UNTIMED_WORK times the calls'
      event time: work ran outside the timed windows (another stream, or left running)."""
    rounds, harness = _without_harness(rounds, own)
    summary = summarise(rounds, own)
    flags = launch_flags(summary, where="in its timed calls")
    per_size = {}
    for rnd in rounds:
        if rnd.get("error"):
            continue
        S = rnd.get("S")
        calls = len(rnd.get("event_ms") or [])
        n_own = own_count(rnd, own)
        own_us = sum(float(r.get("us") or 0.0) for r in rnd.get("kernels") or []
                     if isinstance(r, dict) and classify(str(r.get("name", "")), own) == "own")
        event_us = 1000.0 * sum(rnd.get("event_ms") or [])
        expected = calls * untimed_own.get(S, 0)
        per_size.setdefault(S, []).append({"calls": calls, "own_launches": n_own, "expected": expected,
                                           "own_us": round(own_us, 3), "event_us": round(event_us, 3)})
        if expected and n_own < expected and not rnd.get("truncated") and \
                not any(f["code"] == "timed_launches" for f in flags):
            flags.append({"code": "timed_launches", "tier": "review", "detail": (
                f"S={S}: in a timed round its {calls} calls launched {n_own} of its own kernels, where each of "
                f"its untimed calls launches {untimed_own[S]}: some timed calls computed nothing on the GPU")})
        if own_us > UNTIMED_WORK * event_us + 20 and not any(f["code"] == "untimed_work" for f in flags):
            flags.append({"code": "untimed_work", "tier": "review", "detail": (
                f"S={S}: in a timed round its kernels ran {own_us:.0f} us on the GPU while its calls measured "
                f"{event_us:.0f} us: work ran outside the timed calls (another stream, or left running)")})
    return {"rounds": len(rounds), "kernels": summary["kernels"], "without_own": summary["without_own"],
            "errors": summary["errors"], "by_S": {str(k): v for k, v in per_size.items()},
            "harness": harness}, flags


def _without_harness(rounds: list[dict], own: frozenset) -> tuple[list[dict], dict]:
    """The rounds without the kernels the harness launched between the timed calls (each
    round's `harness` {name: count}: its input fills and L2 flushes), and {name: how many were
    taken out}. At most the count said of each name is taken out, and never a kernel the
    submission defines or a library's attention kernel: a report that names more than the
    harness launches hides only ATen's glue and allocations."""
    kept, removed = [], {}
    for rnd in rounds:
        left = {n: c for n, c in (rnd.get("harness") or {}).items()
                if classify(n, own) in ("aten", "allocation")}
        if not left:
            kept.append(rnd)
            continue
        kernels = []
        for k in rnd.get("kernels") or []:
            name = str(k.get("name", "")) if isinstance(k, dict) else ""
            if left.get(name, 0) > 0:
                left[name] -= 1
                removed[name] = removed.get(name, 0) + 1
                continue
            kernels.append(k)
        kept.append({**rnd, "kernels": kernels})
    return kept, removed
