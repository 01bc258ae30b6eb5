"""The CUDA side of check and bench: poisoned memory, device-side timing, SDPA's backend.

Timing uses the maintained implementations in `triton.testing`:
- `do_bench`: CUDA events around each call, the L2 cache flushed (a 256 MB buffer
  zeroed) before every call, warm-up excluded, median of the calls. It runs in
  interleaved rounds (student, SDPA, naive, fused, student, ...), the first round
  discarded, and the figure is the median of the per-round medians: drift of the
  GPU's clocks then lands on every kernel alike (one long window per kernel
  measured 1.3% run-to-run spread at S = 512 and 1024 on an H200).
- `do_bench_cudagraph`: the calls captured in a CUDA graph and replayed, which strips
  the CPU launch overhead that dominates at small S (the L2 is not flushed).
The headline figure of a size is the graph figure when S <= GRAPH_MAX_S and every
kernel could be captured (a kernel that launches on the legacy default stream or
synchronises cannot), else the do_bench figure. Each row records its method.
"""
from __future__ import annotations

import torch
import torch.nn.functional as F

from .bench import make_row, recheck_error
from .check import make_inputs
from .config import Config, Shape
from .result import BenchRow, Timing

GRAPH_MAX_S = 256          # at and below this S, launch overhead is a large share
POISON_COPIES = 4
ROUNDS = 11                # interleaved rounds per size; the first is a warm-up, discarded
ROUND_MS = 50              # do_bench time per kernel per round
INPUT_SETS = 3             # separately allocated inputs, one per round in turn


def select_gpu(uuid: str) -> int:
    """Make the GPU with this UUID ("GPU-...") the current device and return its index.
    A child started ahead of its GPU (batch mode) gets CUDA_VISIBLE_DEVICES set in-process;
    that only takes effect if nothing has initialised CUDA yet, so the GPU is picked by
    UUID among those visible, whichever way it went."""
    for i in range(torch._C._cuda_getDeviceCount()):
        if f"GPU-{torch.cuda.get_device_properties(i).uuid}" == uuid:
            torch.cuda.set_device(i)
            return i
    raise RuntimeError(f"the GPU this grade was given ({uuid}) is not visible to its process")


def poison_allocator(like: torch.Tensor) -> None:
    """Leave NaN-filled blocks of the output's size in torch's caching allocator, so
    the student's `empty_like(q)` gets NaN memory and unwritten elements show up."""
    blocks = [torch.full_like(like, float("nan")) for _ in range(POISON_COPIES)]
    torch.cuda.synchronize()
    del blocks   # back to the cache, still full of NaN


def sdpa_backend(q: torch.Tensor) -> str:
    """The backend F.scaled_dot_product_attention picks for these inputs."""
    try:
        from torch.nn.attention import SDPBackend
        return SDPBackend(torch._fused_sdp_choice(q, q, q)).name
    except Exception:  # noqa: BLE001 - private API: best effort
        return "unknown"


def _timing(times_ms: list[float]) -> Timing:
    t = torch.tensor(times_ms, dtype=torch.float64)
    q1, med, q3 = (float(x) for x in torch.quantile(t, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)))
    return Timing(median_ms=med, min_ms=float(t.min()), max_ms=float(t.max()), iqr_ms=q3 - q1,
                  reps=len(times_ms))


def time_events_interleaved(kernels: dict, input_sets: list | None = None) -> dict:
    """do_bench in interleaved rounds (each kernel once per round, in turn), so clock or
    thermal drift lands on every kernel alike. With `input_sets`, kernels take (q, k, v)
    and round r uses set r mod len(input_sets): separately allocated buffers, so a
    kernel's sensitivity to where its data sits in memory averages out. Per kernel: the
    median of its per-round medians; min/max/iqr are over the rounds. Round 0 warms up."""
    from triton.testing import do_bench
    per_round = {name: [] for name in kernels}
    for r in range(ROUNDS):
        args = input_sets[r % len(input_sets)] if input_sets else ()
        for name, fn in kernels.items():
            ms = do_bench(lambda fn=fn: fn(*args), warmup=5, rep=ROUND_MS, return_mode="median")
            if r > 0:
                per_round[name].append(ms)
    return {name: _timing(values) for name, values in per_round.items()}


def time_graph(fn) -> Timing | None:
    """triton do_bench_cudagraph: replays of a captured graph; None if `fn` cannot be captured."""
    from triton.testing import do_bench_cudagraph
    try:
        q = do_bench_cudagraph(fn, rep=100, quantiles=[0.0, 0.25, 0.5, 0.75, 1.0])
    except Exception:  # noqa: BLE001 - capture refused (default stream, sync, ...)
        torch.cuda.synchronize()
        return None
    return Timing(median_ms=q[2], min_ms=q[0], max_ms=q[4], iqr_ms=q[3] - q[1], reps=-1)


def bench_cuda(student, references: dict, cfg: Config, seed: int, on_size=None,
               shapes: tuple[Shape, ...] | None = None) -> tuple[list[BenchRow], dict]:
    """Benchmark rows for every size (CUDA) and the description of the method."""
    rows, backends, methods = [], {}, {}
    for i, shape in enumerate(shapes or cfg.bench_shapes):
        if on_size is not None:
            on_size(shape)
        sets = [make_inputs(shape, seed * 1000 + 100 + 10 * i + j, "cuda") for j in range(INPUT_SETS)]
        q, k, v = sets[0]
        backends[shape.S] = sdpa_backend(q)
        last = {}

        def student_call(q, k, v):
            last["out"], last["inputs"] = student(q, k, v), (q, k, v)
            return last["out"]
        kernels = {"student": student_call, "sdpa": F.scaled_dot_product_attention}
        kernels.update({name: fn for name, fn in references.items() if fn is not None})
        events = time_events_interleaved(kernels, sets)
        graphs = ({name: time_graph(lambda fn=fn: fn(q, k, v)) for name, fn in kernels.items()}
                  if shape.S <= GRAPH_MAX_S else {})
        use_graph = bool(graphs) and all(t is not None for t in graphs.values())
        headline = graphs if use_graph else events
        methods[shape.S] = "do_bench_cudagraph" if use_graph else "do_bench"
        torch.cuda.synchronize()
        recheck = recheck_error(last.get("out"), last.get("inputs", (q, k, v)))
        rows.append(_row(shape, headline, events, graphs, recheck))
    timing = {
        "method": "triton.testing (do_bench_cudagraph at S <= %d when capturable, else do_bench)" % GRAPH_MAX_S,
        "method_by_S": methods,
        "description": "device-side CUDA event timing; do_bench flushes the L2 before every call; "
                       f"{ROUNDS - 1} interleaved rounds of {ROUND_MS} ms per kernel after a warm-up round, "
                       f"rotating over {INPUT_SETS} separately allocated input sets, median of the round "
                       "medians; do_bench_cudagraph replays a captured graph to remove CPU launch overhead",
        "rounds": ROUNDS - 1, "round_ms": ROUND_MS, "input_sets": INPUT_SETS, "l2_flush": "do_bench only",
        "sdpa_backend_by_S": backends,
    }
    from .system import _nvidia_smi
    clocks = _nvidia_smi("clocks.sm,clocks.mem")
    timing["clock_sm_mhz_after_bench"] = clocks[0] if clocks else None
    timing["clock_mem_mhz_after_bench"] = clocks[1] if len(clocks) > 1 else None
    return rows, timing


def _row(shape: Shape, headline: dict, events: dict, graphs: dict, recheck) -> BenchRow:
    """bench.make_row on the headline timings, keeping both methods' timings beside them."""
    timings = dict(headline)
    timings.update({f"{name}_do_bench": t for name, t in events.items()})
    timings.update({f"{name}_cudagraph": t for name, t in graphs.items() if t is not None})
    return make_row(shape, timings, recheck)
