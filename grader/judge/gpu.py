"""The CUDA side of check and bench: poisoned memory, device-side timing, SDPA's backend.

Timing, one harness for the student, SDPA and the references (the method of
`triton.testing.do_bench` and `do_bench_cudagraph`, written out here so that every call
can get inputs it has not seen):
- events: `ROUNDS` interleaved rounds (a warm-up round first, discarded); in a round each
  kernel, in turn (the order rotated round by round), makes `CALLS` calls, each on its own
  input set of a pool, written with new counter-based numbers just before the call, with
  the L2 cache flushed (a 256 MiB buffer zeroed) before every call and CUDA events around
  it, and the persisting-L2 limit forced to 0 and the persisting lines reset before every
  call (`L2Persistence`: a kernel cannot keep its data resident across calls through an
  access-policy window). A kernel's figure is the median of its per-round medians: drift
  of the GPU's clocks lands on every kernel alike (a round's figures of two kernels are a
  pair, timed one after the other within the round; with graphs, replay i of each kernel,
  timed kernel after kernel: a looser pair). The per-round medians go back too
  (`extra["rounds"]`): the judge computes the slowdown's interval from them and asks for
  more rounds until it is precise (grader/analysis/confidence.py).
- graph (S <= GRAPH_MAX_S, where CPU launch overhead is a large share): `GRAPH_CALLS` calls
  on distinct input sets captured in one CUDA graph, replayed `REPLAYS` times with the
  pool refilled between replays (outside the timed region), no L2 flush (the calls run back to
  back, on inputs just written); the figure is the median replay time over GRAPH_CALLS. It is the headline when every kernel could be captured
  (a kernel that launches on the legacy default stream or synchronises cannot).
Every timed call of the student's kernel gets inputs the judge can make again: counter-based
(`counter_fill`: integer arithmetic on (the request's key, the call's slot, the position), the
same on the GPU and on the judge's CPU). Its output is copied on the timed stream right after
the call's end event, and the request's reply commits to every copy (a SHA-256 digest of each).
Only then does the judge draw CANARIES calls of each method, uniformly over its timed calls,
and ask for those outputs (`op_reveal`): a copy that does not match its digest is flagged, and
the rest are checked, random rows of every head, against float64 on the judge's own inputs.
No call can tell whether it will be checked: nothing in the process knows until every output
is committed.
"""
from __future__ import annotations

import hashlib
import time

import torch
import torch.nn.functional as F

from .bench import StateGuard, Timed, input_seed
from ..core.config import Config, Shape
from ..core.result import Timing

GRAPH_MAX_S = 256          # at and below this S, launch overhead is a large share
POISON_COPIES = 4
ROUNDS = 11                # interleaved rounds per size; the first is a warm-up, discarded
CALLS = 16                 # timed calls per kernel per round, each on its own input set
GRAPH_CALLS = 16           # calls captured in one graph, each on its own input set
WATCHED_KERNELS = 4000     # kernel records kept of the watched round (CALLS calls, flushes included)
# graph replays; the first is a warm-up, discarded. A replay costs a refill and 16 short calls,
# while a request costs ~0.45 s of fixed work (the event rounds, canaries, transfers): at S = 128
# (H200, 2026-11-27) 11 replays gave 220 rounds in the 10 s cap and a ±0.9-2.0% interval, so a
# request now brings four times the rounds for little more time
REPLAYS = 41
# GPU cycles spun before a replay's start event (~130 µs at the H200's 1980 MHz): longer than the
# host takes to submit the replay. Without it the event pair held that submission too: at S = 64
# (16 SDPA calls, 150 µs of work a replay) SDPA timed beside an honest kernel, while the judge
# checked the last request's canaries on the same CPU, ran 1.11-1.15x its time in a clean
# process (an H200, 2026-11-28), and 1.01x in one process with nothing beside it
HOST_COVER_CYCLES = 1 << 18
L2_FLUSH_BYTES = 256 << 20


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


def poison_allocator(like: torch.Tensor, byte: int = 0xFF) -> None:
    """Leave blocks of the output's size filled with `byte` (0xFF bytes: the NaN 0xFFFFFFFF,
    which no arithmetic produces) in torch's caching allocator, so the student's
    `empty_like(q)` gets poisoned memory and unwritten elements are counted exactly (other
    bytes: the judge's differential re-runs)."""
    word = int.from_bytes(bytes([byte & 0xFF]) * 4, "little", signed=True)
    blocks = [torch.full(like.shape, word, dtype=torch.int32, device=like.device) for _ in range(POISON_COPIES)]
    torch.cuda.synchronize()
    del blocks   # back to the cache, still full of the poison


def sdpa_backend(q: torch.Tensor) -> str:
    """The backend F.scaled_dot_product_attention picks for these inputs."""
    try:
        from torch.nn.attention import SDPBackend
        return SDPBackend(torch._fused_sdp_choice(q, q, q)).name
    except Exception:  # noqa: BLE001 - private API: best effort
        return "unknown"


class L2Persistence:
    """cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0) and cudaCtxResetPersistingL2Cache()
    through the CUDA runtime torch loaded (ctypes; torch exposes neither). `reset()` before a
    timed call; `available` False where the runtime cannot be found (then nothing is done,
    and results.json's `timing.l2_persisting_reset_by_S` says false)."""
    LIMIT_PERSISTING_L2 = 0x06

    def __init__(self):
        self.lib = None
        try:
            import ctypes
            with open("/proc/self/maps") as f:
                paths = sorted({line.split()[-1] for line in f if "libcudart.so" in line})
            self.lib = ctypes.CDLL(paths[0] if paths else "libcudart.so")
            self.lib.cudaDeviceSetLimit.argtypes = [ctypes.c_int, ctypes.c_size_t]
        except (OSError, AttributeError, IndexError):
            self.lib = None

    @property
    def available(self) -> bool:
        return self.lib is not None

    def reset(self) -> bool:
        """True when both calls returned cudaSuccess."""
        if self.lib is None:
            return False
        return self.lib.cudaDeviceSetLimit(self.LIMIT_PERSISTING_L2, 0) == 0 and \
            self.lib.cudaCtxResetPersistingL2Cache() == 0


def _timing(values_ms: list[float], reps: int) -> Timing:
    t = torch.tensor(values_ms, dtype=torch.float64)
    q1, med, q3 = (float(x) for x in torch.quantile(t, torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)))
    return Timing(median_ms=med, min_ms=float(t.min()), max_ms=float(t.max()), iqr_ms=q3 - q1, reps=reps)


# ---- the timed calls' inputs: counter-based, so that the judge can make any of them again ----------
MASK32 = 0xFFFFFFFF
_MUL = (0x7FEB352D, 0x5BD1E995, 0x2C1B3C6D)    # odd, < 2^31: x * m < 2^63 for x < 2^32, exact in int64
SQRT3 = 3.0 ** 0.5                             # uniform on [-1, 1) times sqrt(3): unit variance
DIGEST_BYTES = 16
FILL_LAUNCHES = 21         # the most kernels one counter fill launches (the watched round's census bound)
HARNESS_NAMES = 12         # the most distinct kernel names of one fill and one L2 flush


def counter_seed(key: int, slot: int) -> tuple[int, int]:
    """Two 32-bit words from (the request's key, a call's slot)."""
    h = hashlib.blake2b(f"{int(key)}:{int(slot)}".encode(), digest_size=8).digest()
    return int.from_bytes(h[:4], "little"), int.from_bytes(h[4:], "little")


def _layout(shape: Shape) -> tuple[int, int]:
    """(elements of one tensor, its offset step in a set's buffer: q, k, v each 1 KiB-aligned)."""
    numel = shape.B * shape.H * shape.S * shape.D
    return numel, -(-numel // Pool.ALIGN) * Pool.ALIGN


def counter_fill(buf: torch.Tensor, idx: torch.Tensor, seed: tuple[int, int], views: tuple,
                 qk_std: float = 1.0) -> None:
    """One input set's buffer (float32, 1-D) <- a function of (seed, position) alone: a
    multiply-xorshift hash in int64 (every product below 2^63, so exact on every device), its
    low 24 bits as uniform numbers on [-1, 1) (an exact conversion), times sqrt(3) (q and k
    times qk_std too): the GPU and the judge's CPU make the same numbers, to the last bit of
    that one rounding. `idx`: int64 positions 0 .. buf.numel() - 1 on buf's device. Several
    sets at once: `buf` (sets, positions), `seed` two int64 tensors (sets, 1), `views` the
    (sets, elements) regions of q, k, v."""
    lo, hi = seed
    x = torch.bitwise_xor(idx, lo)
    x.mul_(_MUL[0]).bitwise_and_(MASK32)
    x.bitwise_xor_(x >> 16)
    x.bitwise_xor_(hi)
    x.mul_(_MUL[1]).bitwise_and_(MASK32)
    x.bitwise_xor_(x >> 15)
    x.mul_(_MUL[2]).bitwise_and_(MASK32)
    x.bitwise_xor_(x >> 16)
    buf.copy_(x.bitwise_and_(0xFFFFFF))         # below 2^24: exact in float32
    buf.mul_(2.0 ** -23).sub_(1.0)
    if qk_std == 1.0:
        buf.mul_(SQRT3)
    else:
        views[0].mul_(SQRT3 * qk_std)
        views[1].mul_(SQRT3 * qk_std)
        views[2].mul_(SQRT3)


def counter_inputs(shape: Shape, key: int, slot: int) -> tuple:
    """q, k, v of one timed call, as `counter_fill` made them on the GPU: the judge's side, on its
    CPU, in numpy's uint32 arithmetic (the same hash modulo 2^32; the same float32 roundings),
    several times faster than torch's int64 here."""
    import numpy as np
    numel, stride = _layout(shape)
    lo, hi = counter_seed(key, slot)
    x = np.arange(3 * stride, dtype=np.uint32)
    x ^= np.uint32(lo)
    x *= np.uint32(_MUL[0])
    x ^= x >> np.uint32(16)
    x ^= np.uint32(hi)
    x *= np.uint32(_MUL[1])
    x ^= x >> np.uint32(15)
    x *= np.uint32(_MUL[2])
    x ^= x >> np.uint32(16)
    buf = (x & np.uint32(0xFFFFFF)).astype(np.float32)
    buf *= np.float32(2.0 ** -23)
    buf -= np.float32(1.0)
    views = tuple(buf[i * stride:i * stride + numel] for i in range(3))
    if shape.qk_std == 1.0:
        buf *= np.float32(SQRT3)
    else:
        for t, scale in zip(views, (SQRT3 * shape.qk_std, SQRT3 * shape.qk_std, SQRT3)):
            np.multiply(t, np.float32(scale), out=t)
    size = (shape.B, shape.H, shape.S, shape.D)
    return tuple(torch.from_numpy(t).view(size) for t in views)


def digest(data: bytes) -> str:
    """The commitment to one output's bytes ("" for no output): SHA-256 (the CPU's SHA
    instructions: 2-3x BLAKE2b's speed where they exist), its first DIGEST_BYTES."""
    return hashlib.sha256(data).hexdigest()[:2 * DIGEST_BYTES] if data else ""


class Pool:
    """`n` input sets of one shape on the GPU, filled on demand: with the request's key, the
    counter-based inputs of a slot (`counter_fill`, ~20 launches); else fresh random numbers (a
    generator seeded from the judge's nonce: the untimed calls). Each set's q, k, v are views of
    one buffer of its own (each tensor 1 KiB from the buffer's start), so that a set is filled
    in one pass (three per set, 48 a refill and thousands a request, were most of a graph
    request's time on an H200 when a fill was a normal_ a tensor). The event method fills set j just before call j (`fill`): no call's inputs
    exist before the call before it has ended, so no call can compute a later one's answer
    (with every set written ahead, at fixed offsets of one buffer, it could)."""
    ALIGN = 256                # floats

    def __init__(self, shape: Shape, n: int, nonce: int, key: int | None = None):
        size = (shape.B, shape.H, shape.S, shape.D)
        numel, stride = _layout(shape)
        self.shape, self.key = shape, key
        # one allocation, a set a row: a refill is one counter pass over every set (`refill`)
        self.all = torch.empty(n, 3 * stride, device="cuda")
        self.bufs = [self.all[j] for j in range(n)]
        self.sets = [tuple(b[i * stride:i * stride + numel].view(size) for i in range(3)) for b in self.bufs]
        self._regions = tuple(self.all[:, i * stride:i * stride + numel] for i in range(3))
        self.gen = torch.Generator(device="cuda").manual_seed(input_seed(nonce, 0))
        # made once, here: a fill launches the same kernels every time (the watched round's census)
        self._idx = torch.arange(3 * stride, device="cuda") if key is not None else None

    def fill(self, j: int, slot: int | None = None) -> None:
        """Set j: fresh random numbers, or (a timed call of the student's) the counter-based
        inputs of `slot` under the request's key, which the judge can make again."""
        if slot is None or self.key is None:
            self.bufs[j].normal_(generator=self.gen)
            return
        counter_fill(self.bufs[j], self._idx, counter_seed(self.key, slot), self.sets[j], self.shape.qk_std)

    def refill(self, slots: dict | None = None) -> None:
        """Every set (the graph method and the probes: written before the replay); `slots`:
        set -> the slot whose counter-based inputs it gets. Every set with a slot: one counter
        pass over all of them (each row its own seed; the same numbers as a set's own fill),
        ~20 launches a refill instead of ~20 a set."""
        slots = slots or {}
        if self.key is not None and len(self.bufs) > 1 and all(j in slots for j in range(len(self.bufs))):
            seeds = [counter_seed(self.key, slots[j]) for j in range(len(self.bufs))]
            lo, hi = (torch.tensor([s[i] for s in seeds], dtype=torch.int64, device=self.all.device).unsqueeze(1)
                      for i in range(2))
            counter_fill(self.all, self._idx, (lo, hi), self._regions, self.shape.qk_std)
            return
        for j in range(len(self.bufs)):
            self.fill(j, slots.get(j))


# ---- the judge's canaries ------------------------------------------------------------------
# Each request of the harness times the kernel on event_slots() calls (and graph_slots() more
# where the graph method ran); after the reply has committed to every output, the judge draws
# CANARIES of each method's, uniformly without replacement, so that no call is safer than
# another to get wrong. A
# kernel wrong on a fraction p of its timed calls passes n canaries with probability (1 - p)^n:
# with at least MIN_REQUESTS (grader/analysis/confidence.py) requests a size, n >= 100 and a kernel
# wrong on 5% of calls is caught with probability >= 99.4% (`detection`).
CANARIES = 20              # canary calls per method per request


def event_slots() -> int:
    """Canary positions of the event method: (round r >= 1, call j) -> (r - 1) * CALLS + j."""
    return (ROUNDS - 1) * CALLS


def graph_slots() -> int:
    """Canary positions of the graph method: (replay r >= 1, call j), after the event ones."""
    return (REPLAYS - 1) * GRAPH_CALLS


def pick_canaries(shape: Shape, rng, k: int = CANARIES, method: str = "graph") -> list[int]:
    """k event-method positions, and k graph positions where the graph method ran (`method`),
    each set drawn uniformly over its method's timed calls."""
    picks = rng.sample(range(event_slots()), min(k, event_slots()))
    if shape.S <= GRAPH_MAX_S and method == "graph":
        picks += [event_slots() + i for i in rng.sample(range(graph_slots()), min(k, graph_slots()))]
    return sorted(picks)


def detection(checked: int, wrong_fraction: float = 0.05) -> float:
    """The probability that `checked` canaries, drawn uniformly over the timed calls, catch a
    kernel wrong on `wrong_fraction` of them: 1 - (1 - p)^n."""
    return 1.0 - (1.0 - wrong_fraction) ** max(0, checked)


def _slot(name: str, index: int, slot: int) -> int:
    """The counter slot of a timed call: the student's own (what the judge may draw), another
    kernel's a negative one of its own, which the judge never draws."""
    return slot if name == "student" else -1 - (index * (event_slots() + graph_slots()) + slot)


def snapshot(out, shape: Shape):
    """A copy of a timed call's output taken on the timed stream right after the call's end
    event, before anything else runs there: work the call left running on another stream
    cannot finish the output later. None when the output is not a float32 tensor of the
    inputs' shape (nothing usable to keep)."""
    if not isinstance(out, torch.Tensor) or out.dtype != torch.float32 or \
            tuple(out.shape) != (shape.B, shape.H, shape.S, shape.D):
        return None
    try:
        return out.detach().clone()
    except torch.OutOfMemoryError:
        raise                    # the harness's keeping, not the kernel's output: a grader error
    except Exception:  # noqa: BLE001 - a tensor that cannot be copied: no usable output
        return None


def output_bytes(t) -> bytes:
    """A kept output's float32 bytes (b"" for none)."""
    return t.detach().to("cpu").contiguous().numpy().tobytes() if isinstance(t, torch.Tensor) else b""


def commit_outputs(kept: dict, shape: Shape) -> dict:
    """{slot: digest} of every kept output ("" for none), hashed in a few threads (hashlib lets
    go of the GIL). Taken as soon as a method's timed calls end, before any more of the
    kernel's code runs (the next method's warm-up, the wall probe), so no later call of it is a
    chance to rewrite what was kept."""
    from concurrent.futures import ThreadPoolExecutor
    slots = sorted(kept)
    with ThreadPoolExecutor(4) as pool:
        return dict(zip(slots, pool.map(lambda s: digest(output_bytes(kept[s])), slots)))


# ---- timing ----------------------------------------------------------------------------------

def time_events(kernels: dict, shape: Shape, nonce: int, key: int | None, kept: dict,
                guard: StateGuard | None = None, rounds: dict | None = None, watch: int | None = None,
                watched: dict | None = None) -> dict:
    """The event method (module doc). `key`: the student's timed calls get the counter-based
    inputs of their slots under it, and `kept` every one's output, by slot (None: fresh random
    inputs, nothing kept: the trusted use). `rounds`, if given, gets each kernel's per-round
    medians ("events") and whether every persisting-L2 reset succeeded ("l2_reset").
    `watch` (1 .. ROUNDS - 1, the judge's pick): the student's calls of that round run
    under torch's profiler (grader/judge/launches.py `Watch`), and `watched` gets the kernels
    they launched and each call's event time (ms); that round is left out of every
    kernel's figures (the profiler's own cost is in it; the rounds stay paired)."""
    pool = Pool(shape, CALLS, nonce, key)
    flush = torch.empty(L2_FLUSH_BYTES, dtype=torch.int8, device="cuda")
    persisting = L2Persistence()
    reset_ok = persisting.available
    stream = torch.cuda.current_stream()
    names = list(kernels)
    per_round = {n: [] for n in names}
    for r in range(ROUNDS):
        for i in range(len(names)):
            name = names[(r + i) % len(names)]
            fn = kernels[name]
            # every kernel's timed calls on counter-based inputs (the same harness work for all);
            # the student's on the slots the judge may draw, the others' on slots it never does
            slots = {}
            if r >= 1 and key is not None:
                slots = {j: _slot(name, names.index(name), (r - 1) * CALLS + j) for j in range(CALLS)}
            if name == "sdpa" and guard is not None:
                guard.restore()
            starts = [torch.cuda.Event(enable_timing=True) for _ in range(CALLS)]
            ends = [torch.cuda.Event(enable_timing=True) for _ in range(CALLS)]
            watching = None
            if name == "student" and watch is not None and r == watch and watched is not None:
                from .launches import Watch, harness_kernels
                # one fill and one flush observed on scratch memory (the pool untouched: no set
                # is written before its call); the outputs' copies are device-to-device copies,
                # which the census drops
                scratch = Pool(shape, 1, nonce ^ 0x5A5A, key)
                harness = harness_kernels([(lambda: scratch.fill(0, -1 if slots else None), CALLS),
                                           (flush.zero_, CALLS)])
                del scratch
                watching = Watch(max_kernels=WATCHED_KERNELS)
                torch.cuda.synchronize()
                watching.start()
            try:
                for j in range(CALLS):
                    pool.fill(j, slots.get(j))        # written now: no call sees a later call's inputs
                    reset_ok = persisting.reset() and reset_ok
                    flush.zero_()
                    starts[j].record(stream)
                    out = fn(*pool.sets[j])
                    ends[j].record(stream)
                    if name == "student" and j in slots:
                        kept[slots[j]] = snapshot(out, shape)
                    del out
            except BaseException:
                if watching is not None:
                    watching.stop(sync=False)
                raise
            if watching is not None:
                report = watching.stop()
                watched.update(report, round=r, event_ms=[s.elapsed_time(e) for s, e in zip(starts, ends)],
                               truncated=len(report["kernels"]) >= WATCHED_KERNELS, harness=harness)
            torch.cuda.synchronize()
            if r > 0 and r != watch:
                times = sorted(s.elapsed_time(e) for s, e in zip(starts, ends))
                per_round[name].append(times[len(times) // 2])
    timings = {n: _timing(v, len(v) * CALLS) for n, v in per_round.items()}
    if rounds is not None:
        rounds.update(events=per_round, l2_reset=reset_ok)
    return timings


def time_graphs(kernels: dict, shape: Shape, nonce: int, key: int | None, kept: dict,
                rounds: dict | None = None) -> dict | None:
    """The graph method (module doc), every kernel; None if one cannot be captured. `key`,
    `kept`: as `time_events`, the graph's slots after the event method's. `rounds`, if
    given, gets each kernel's per-replay times ("graph")."""
    out = {}
    base = event_slots()
    for name, fn in kernels.items():
        pool = Pool(shape, GRAPH_CALLS, nonce ^ hash(name) & 0xFFFF, key)
        pool.refill()
        try:
            fn(*pool.sets[0])                                   # warm-up outside the capture
            torch.cuda.synchronize()
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                outs = [fn(*pool.sets[j]) for j in range(GRAPH_CALLS)]
            torch.cuda.synchronize()
            # new inputs, the kernel run eagerly on them, then the graph on the same: a launch
            # the capture left out wrote outs[0] once, during the capture, from the old inputs
            pool.refill()
            eager = fn(*pool.sets[0]).clone()
            graph.replay()
            torch.cuda.synchronize()
            captured = _same_output(outs[0], eager)
        except Exception:  # noqa: BLE001 - capture refused (default stream, sync, ...)
            torch.cuda.synchronize()
            return None
        if not captured:
            # torch captures on a non-blocking stream, so a launch on the legacy default
            # stream (`<<<grid, block>>>`, the extension tutorial's way) is not refused: it
            # runs once, eagerly, and the graph replays without it. The replay's output is
            # then not the kernel's: time it with events, where it runs.
            del graph, outs
            torch.cuda.synchronize()
            return None
        values = []
        for r in range(REPLAYS):
            slots = {}
            if r >= 1 and key is not None:
                slots = {j: _slot(name, list(kernels).index(name), base + (r - 1) * GRAPH_CALLS + j)
                         for j in range(GRAPH_CALLS)}
            pool.refill(slots)
            torch.cuda.synchronize()
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            # the GPU kept busy while the host submits the replay: the host's launch latency (longer
            # while the judge's checks take the CPU) stays out of the events as long as it is
            # shorter than the spin (`HOST_COVER_CYCLES`); a host held up longer still shows
            torch.cuda._sleep(HOST_COVER_CYCLES)
            start.record()
            graph.replay()
            end.record()
            for j, slot in (slots.items() if name == "student" else ()):
                kept[slot] = snapshot(outs[j], shape)
            torch.cuda.synchronize()
            if r > 0:
                values.append(start.elapsed_time(end) / GRAPH_CALLS)
        out[name] = _timing(values, -1)
        if rounds is not None:
            rounds.setdefault("graph", {})[name] = values
        del graph, outs
    return out


def _same_output(got, want: torch.Tensor) -> bool:
    """A graph replay's output matches the eager call on the same inputs (within float
    rounding: a kernel may sum in a different order from run to run)."""
    if not isinstance(got, torch.Tensor) or got.shape != want.shape or got.dtype != want.dtype:
        return False
    return bool(torch.allclose(got.float(), want.float(), rtol=1e-3, atol=1e-4, equal_nan=True))


def wall_probe(fn, shape: Shape, nonce: int, reps: int = 5) -> tuple[float, float]:
    """(shortest wall-clock time (ms) of one call with the device synchronised before and
    after, shortest time (ms) the call took to return): work left running on another stream
    shows in the first, not in the events; the second is the host's launch cost (Triton's
    launcher: ~40 µs a kernel), which the first includes and the events may not."""
    pool = Pool(shape, 1, nonce ^ 0x3C3C)
    best, launch = float("inf"), float("inf")
    for _ in range(reps):
        pool.refill()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn(*pool.sets[0])
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - t0) * 1e3)
        launch = min(launch, (t1 - t0) * 1e3)
    return best, launch


def bench_size(kernels: dict, shape: Shape, cfg: Config, nonce: int, key: int | None = None,
               guard: StateGuard | None = None, watch: int | None = None) -> Timed:
    """Timings of every kernel at one size on the GPU (events; graphs at small S); `key`: the
    student's timed calls get counter-based inputs under it and every output is kept
    (`canary_outputs`, by slot; a graph slot only where the graph is the method); `watch`: the
    event round whose student calls run under the profiler (`time_events`)."""
    guard = guard or StateGuard()
    kept: dict = {}
    rounds: dict = {}
    watched: dict = {}
    # the wall probe's calls first: after a method's timed calls, no more of the kernel's code
    # runs before what they kept is committed to (`commit_outputs`)
    probe = wall_probe(kernels["student"], shape, nonce)
    events = time_events(kernels, shape, nonce, key, kept, guard, rounds, watch, watched)
    commit = commit_outputs(kept, shape) if key is not None else {}
    graph_kept: dict = {}
    graphs = time_graphs(kernels, shape, nonce, key, graph_kept, rounds) if shape.S <= GRAPH_MAX_S else None
    if graphs:
        commit.update(commit_outputs(graph_kept, shape) if key is not None else {})
        kept.update(graph_kept)
    del graph_kept
    guard.restore()
    headline = dict(graphs) if graphs else dict(events)
    timings = dict(headline)
    timings.update({f"{n}_do_bench": t for n, t in events.items()})
    if graphs:
        timings.update({f"{n}_cudagraph": t for n, t in graphs.items()})
    extra = {"sdpa_backend": sdpa_backend(torch.empty(shape.B, shape.H, shape.S, shape.D, device="cuda")),
             **dict(zip(("wall_probe_ms", "launch_ms"), probe)),
             "rounds": {n: v for n, v in rounds["graph" if graphs else "events"].items() if n in ("student", "sdpa")},
             "l2_persisting_reset": rounds["l2_reset"]}
    if watched:
        extra["watched"] = watched
    torch.cuda.synchronize()
    return Timed(timings=timings, reps=events["student"].reps, method="graph" if graphs else "events",
                 canary_outputs=kept, commit=commit, state_changes=list(guard.changes), extra=extra)


def timing_description() -> dict:
    return {
        "method": f"CUDA events around each call (L2 flushed before each), CUDA graphs at S <= {GRAPH_MAX_S} "
                  "when every kernel can be captured",
        "description": f"{ROUNDS - 1} interleaved rounds after a warm-up round, {CALLS} calls per kernel per "
                       "round, each call on an input set it has not seen (written with new counter-based numbers "
                       "just before the call), the L2 flushed and its persisting lines reset (limit 0) "
                       "before every call; median of the round medians; more rounds while the slowdown's 95% "
                       "interval is wider than the precision asked for or straddles a tier boundary. "
                       f"Graphs: {GRAPH_CALLS} calls on distinct inputs captured once, replayed "
                       f"{REPLAYS - 1} times with the inputs refilled between replays. Every timed call of "
                       "the kernel gets inputs the judge can make again, and its output, copied the moment "
                       "the call ends, is committed to (a digest of each in the reply) before the judge "
                       f"draws {CANARIES} calls of each method, uniformly over its timed calls, and checks "
                       "their outputs against float64. In one request of each size, drawn by the judge, one event round of the "
                       "kernel's calls runs under torch's profiler (the kernels they launch are checked: "
                       "grader/judge/launches.py); that round is left out of every kernel's figures.",
        "rounds": ROUNDS - 1, "calls_per_round": CALLS, "graph_calls": GRAPH_CALLS, "replays": REPLAYS - 1,
        "l2_flush": "events only",
    }


# ---- trusted use (tools/bench_reference.py): the same harness, no canaries -----------------

def time_events_interleaved(kernels: dict, shape: Shape, nonce: int = 1) -> dict:
    return time_events(kernels, shape, nonce, None, {})


def time_graph_all(kernels: dict, shape: Shape, nonce: int = 1) -> dict | None:
    return time_graphs(kernels, shape, nonce, None, {})


def _sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v)
