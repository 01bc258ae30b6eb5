"""Stage 3, check: is the kernel's output softmax(q kᵀ/√D) v, to the tolerance?

For each config: fresh seeded random inputs, the kernel gets clones, the truth is
computed in float64. Each way to fail has its own message: an exception, a wrong
type / shape / dtype / device, an output that aliases an input, inputs modified by
the call, NaN/Inf, and finally max |out - truth| >= tolerance, with the first
mismatches (index, got, expected).
"""
from __future__ import annotations

import functools
import hashlib
import math
import re
import time

import torch

from ..core.config import Shape
from ..core.result import CheckResult, Mismatch
from ..core.safetext import printable

MAX_MISMATCHES = 5
NOT_IMPLEMENTED = re.compile(r"not implemented", re.IGNORECASE)


# A config's inputs come from the course's seed through a slow, memory-hard key derivation
# (scrypt) and a hash per config: a kernel that prints its public inputs cannot search the
# seed back (a seed below 10^9 fell to a 2.4 s search when each config's generator was seeded
# with seed * 1000 + i; torch's CPU generator keeps 32 bits of its seed, so even a long seed
# left every config's generator a 2^32 search), and one config's inputs say nothing of another's.
SEED_KDF = {"n": 1 << 14, "r": 8, "p": 1}          # ~16 MiB and ~50 ms a seed, once per process


@functools.lru_cache(maxsize=8)
def _seed_key(seed: int) -> bytes:
    return hashlib.scrypt(str(int(seed)).encode(), salt=b"attention-grader: config inputs", dklen=32,
                          maxmem=64 << 20, **SEED_KDF)


def config_seed(seed: int, index: int) -> int:
    """The generator seed of config `index` (public first, then hidden) under the course's
    `seed`: 63 bits of SHA-256(scrypt(seed), index)."""
    digest = hashlib.sha256(_seed_key(seed) + int(index).to_bytes(8, "little")).digest()
    return int.from_bytes(digest[:8], "little") >> 1


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


CUDA_HINTS = (
    ("invalid configuration argument", "a grid or block the device cannot run: more than 1024 threads in a "
     "block, a dimension of 0, or gridDim.y/z above 65535"),
    ("too many resources requested", "the block asks for more registers or shared memory than an SM has: "
     "fewer threads per block, or __launch_bounds__"),
    ("invalid argument", "a launch the device refuses: more dynamic shared memory than the default 48 KiB "
     "without cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes) before the "
     "launch, more than 1024 threads in a block, or a grid or block dimension of 0"),
    ("illegal memory access", "an out-of-bounds read or write in your kernel: an index past the end of q, k, v, "
     "the output or a shared array (compute-sanitizer names the line)"),
    ("misaligned address", "a vector load or store (float4) at an address that is not a multiple of its size"),
    ("device-side assert", "an assert in your device code failed"),
    ("unspecified launch failure", "your kernel crashed on the GPU (most often an out-of-bounds access)"),
)


def cuda_fault(exc: BaseException) -> str | None:
    """A CUDA error in the student's terms (what it usually means, and that it is the
    kernel's launch or memory access, not the grader), or None for any other exception.
    CUDA reports a kernel's fault at the next synchronisation, so it can surface in the
    harness's own call after the kernel returned."""
    text = str(exc)
    if "CUDA error" not in text and type(exc).__name__ != "AcceleratorError":
        return None
    hint = next((h for key, h in CUDA_HINTS if key in text), "")
    return (f"the kernel faulted on the GPU ({exception_message(exc)})" + (f": {hint}" if hint else "")
            + "; CUDA reports a fault at the next synchronisation after the launch, so the cause is your launch "
              "or its memory accesses")


def raised_on_gpu(message: str) -> str:
    """What a CUDA kernel's own error says, in the student's terms: a message of the student's
    code (a TORCH_CHECK on cudaGetLastError) that quotes one of CUDA's error strings, and says
    it was CUDA's or a launch's, gets that error's usual meaning (CUDA_HINTS); "" when it quotes
    none, names neither, or already carries the hint."""
    low = message.lower()
    if "faulted on the GPU" in message or not re.search(r"cuda|launch", low):
        return ""
    key, hint = next(((key, h) for key, h in CUDA_HINTS if key in low), ("", ""))
    return f"CUDA's \"{key}\" means {hint}" if hint else ""


def raised_text(raised: dict, gpu: bool) -> tuple[str, str]:
    """(failure kind, the kernel's exception text, explained on the GPU) from the child's
    `raised` field: the child's word, so its kind is one of two and its text printable."""
    kind = raised.get("kind") if raised.get("kind") in ("not_implemented", "runtime_error") else "runtime_error"
    text = printable(str(raised.get("message", "")))[:500]
    hint = raised_on_gpu(text) if gpu else ""
    return kind, text + (f" ({hint})" if hint else "")


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
        unwritten = unwritten_message(out) if out.dtype == torch.float32 else ""
        if unwritten:
            return float("nan"), unwritten, ()
        first = tuple(int(i) for i in bad.nonzero()[0])
        from ..analysis.diagnose import diagnose
        pattern = diagnose(got, expected, tuple(t.detach().to("cpu", torch.float64) for t in (q, k, v)), tolerance)
        return float("nan"), (f"output has {int(bad.sum())} NaN/Inf values (first at index "
                              f"{first}): " + (pattern or "a division by zero, or exp() overflow without max "
                                               "subtraction?")), ()
    err = (got - expected).abs()
    max_err = float(err.max()) if err.numel() else 0.0
    if max_err < tolerance:
        return max_err, "", ()
    from ..analysis.diagnose import diagnose
    pattern = diagnose(got, expected, tuple(t.detach().to("cpu", torch.float64) for t in (q, k, v)), tolerance)
    idx = (err >= tolerance).nonzero()[:MAX_MISMATCHES]
    mismatches = tuple(Mismatch(index=tuple(int(i) for i in row), got=float(got[tuple(row)]),
                                expected=float(expected[tuple(row)])) for row in idx)
    n_bad = int((err >= tolerance).sum())
    return max_err, (f"max_err {max_err:.3g} >= tolerance {tolerance:g} "
                     f"({n_bad} of {err.numel()} elements off)" + (f"; {pattern}" if pattern else "")), mismatches


# ---- in the child (grader/judge/worker.py): one call of the kernel --------------------------

POISON_BITS = -1        # int32 view of the poison: 0xFFFFFFFF, a NaN no arithmetic produces


POISON_BYTE = 0xFF      # the check's poison; the differential re-runs use DIFFERENTIAL_BYTES
DIFFERENTIAL_BYTES = (0x00, 0x41)       # 0x41414141 = 12.078 as a float: finite, not zero


def cpu_poison(on: bool, byte: int = POISON_BYTE) -> None:
    """While on, every CPU allocation torch makes (the kernel's empty_like(q) too) is filled
    with `byte` (grader/build/dispatch.cpp; 0xFF bytes: NaN), so an output element never written is
    counted exactly. A binding module without it leaves CPU memory as it is."""
    from ..build import compile as build
    setter = getattr(build._dispatch(), "set_cpu_poison", None)
    if setter is not None:
        setter(on, byte)


def describe_output(out, q) -> dict:
    """What the kernel returned, in words the judge can check: type, shape, dtype, device."""
    if not isinstance(out, torch.Tensor):
        return {"type": type(out).__name__}
    return {"type": "Tensor", "shape": list(out.shape), "dtype": str(out.dtype), "device": str(out.device),
            "expected_device": str(q.device)}


def call_once(kernel, q, k, v, device: str = "cpu", poison=None) -> tuple[dict, bytes | None]:
    """Call `kernel` once on clones of q, k, v (in the child). Returns the reply for the
    judge (what came back, which inputs it modified or aliases, seconds, or the exception)
    and the output's float32 bytes when it is a float32 tensor of q's shape."""
    args = tuple(t.clone() for t in (q, k, v))     # the kernel never sees our copies
    if poison is not None and device != "cpu":
        poison(q)   # fill torch's free GPU memory with NaN: unwritten outputs show up
    t0 = time.perf_counter()
    try:
        if poison is not None and device == "cpu":
            poison(True)
        try:
            out = kernel(*args)
        finally:
            if poison is not None and device == "cpu":
                poison(False)
        if device != "cpu":
            torch.cuda.synchronize()
    except Exception as exc:  # noqa: BLE001 - any error in student code is data
        return {"raised": {"kind": failure_kind(exc), "message": cuda_fault(exc) or exception_message(exc)}}, None
    seconds = time.perf_counter() - t0
    reply = {"output": describe_output(out, q), "seconds": seconds, "aliases": "", "modified": []}
    if isinstance(out, torch.Tensor):
        for label, arg in zip("qkv", args):
            if _storage_ptr(out) == _storage_ptr(arg) and out.numel() > 0:
                reply["aliases"] = label
                break
    reply["modified"] = [label for label, arg, orig in zip("qkv", args, (q, k, v)) if not torch.equal(arg, orig)]
    data = None
    if isinstance(out, torch.Tensor) and out.dtype == torch.float32 and tuple(out.shape) == tuple(q.shape):
        data = out.detach().to("cpu").contiguous().numpy().tobytes()
    return reply, data


# ---- in the judge (grader/run.py): the verdict on one call -------------------------------

def row_error(data: bytes | None, q, k, v, rng, rows_per_head: int) -> float | None:
    """max |out - truth| over `rows_per_head` random rows of every (batch, head) of a timed
    output (float32 bytes from the child), rows drawn by the judge's `rng` after the output
    arrived; truth in float64 for those rows only (S·D work a row, not S²·D). None when the
    bytes are not an output of q's shape; NaN when a checked value is not finite."""
    B, H, S, D = q.shape
    if data is None or len(data) != q.numel() * 4:
        return None
    out = torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(B * H, S, D)
    # every head's rows at once (batched products, not B·H small ones: each small product an
    # OpenMP region, and with a core busy elsewhere those regions made a grade's checks 10x slower)
    rows = torch.tensor([rng.sample(range(S), min(rows_per_head, S)) for _ in range(B * H)])
    at = rows.unsqueeze(-1).expand(-1, -1, D)
    picked = torch.gather(q.reshape(B * H, S, D), 1, at).double()
    scores = (picked @ k.reshape(B * H, S, D).double().transpose(1, 2)) / math.sqrt(D)
    want = torch.softmax(scores, dim=-1) @ v.reshape(B * H, S, D).double()
    err = (torch.gather(out, 1, at).double() - want).abs()
    if not bool(torch.isfinite(err).all()):
        return float("nan")
    return float(err.max())


def judge_call(reply: dict, data: bytes, q, k, v, expected: torch.Tensor, tolerance: float, name: str,
               hidden: bool = False, config: dict | None = None, gpu: bool = False) -> tuple[CheckResult, str]:
    """The check result of one call from the child's reply and output bytes, judged
    against `expected` (float64 truth the judge computed). Returns the result and its
    failure kind ("" when passed, else "wrong_answer", "runtime_error" or "not_implemented").
    `gpu`: the kernel ran on the GPU (a CUDA error it raised itself is explained)."""
    def failed(message: str, kind: str = "wrong_answer", max_err=None) -> tuple[CheckResult, str]:
        return CheckResult(config=config, name=name, max_err=max_err, passed=False, hidden=hidden,
                           message=message), kind
    try:
        parsed = _parsed(reply, data, q, gpu, failed)
    except (TypeError, ValueError, KeyError, AttributeError, ArithmeticError) as e:
        # a reply the worker never writes (a forged frame): the kernel's fault, never the grader's
        return failed(f"{MALFORMED} ({type(e).__name__})", "runtime_error")
    if not isinstance(parsed, torch.Tensor):
        return parsed                                   # a failure the reply itself shows
    seconds = reply.get("seconds")
    seconds = float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool) \
        and 0 <= seconds < 1e6 else 0.0
    max_err, message, mismatches = compare(parsed, q, k, v, expected, tolerance)     # the judge's own work
    return CheckResult(config=config, name=name, max_err=max_err, passed=message == "", message=message,
                       mismatches=mismatches, hidden=hidden, seconds=round(seconds, 6)), \
        ("" if message == "" else "wrong_answer")


MALFORMED = "the kernel's process sent a malformed reply"


def _parsed(reply, data, q, gpu, failed):
    """The output tensor the reply describes, or the failure it shows (`failed`'s result);
    raises on a reply of the wrong types (judge_call: a malformed reply)."""
    raised = reply.get("raised")
    if isinstance(raised, dict):
        kind, text = raised_text(raised, gpu)
        return failed(f"attention raised: {text}", kind)
    meta = reply.get("output") if isinstance(reply.get("output"), dict) else {}
    # every field is the child's word: checked for type before use (a forged frame with
    # `shape: 7` crashed the judge: grader_error, batch exit 70)
    shape_said = meta.get("shape", [])
    if not isinstance(shape_said, list) or not all(isinstance(x, int) for x in shape_said) or \
            not all(isinstance(meta.get(f, ""), str) for f in ("type", "dtype", "device", "expected_device")):
        return failed(f"{MALFORMED} (its output's description is not what the grader's worker writes)",
                      "runtime_error")
    if meta.get("type") != "Tensor":
        return failed(f"attention returned {printable(str(meta.get('type', 'nothing')))[:60]}, expected a torch.Tensor")
    if shape_said != list(q.shape):
        return failed(f"output has shape {str(tuple(shape_said[:8]))[:120]}, expected {tuple(q.shape)} "
                      "(batch, heads, seq, head_dim)")
    if meta.get("dtype") != "torch.float32":
        return failed(f"output dtype is {printable(str(meta.get('dtype')))[:40]}, expected torch.float32")
    if meta.get("device") != meta.get("expected_device"):
        return failed(f"output is on {printable(str(meta.get('device')))[:40]}, expected "
                      f"{printable(str(meta.get('expected_device')))[:40]} "
                      "(the inputs' device)")
    if reply.get("aliases") in ("q", "k", "v"):
        return failed(f"output shares memory with input {reply['aliases']}; return a new tensor")
    modified = [m for m in (reply.get("modified") if isinstance(reply.get("modified"), list) else [])
                if m in ("q", "k", "v")]
    if modified:
        return failed(f"the kernel modified its input {modified[0]}; inputs are read-only")
    if len(data) != q.numel() * 4:
        return failed("the output's data did not come back whole", "runtime_error")
    return torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(q.shape)


POISONED = "output elements were never written (they still hold the grader's NaN poison)"


def unwritten_message(out: torch.Tensor) -> str:
    """How many output elements still hold the poison (never written), and where the
    first block of them is; "" when none."""
    bits = out.detach().to("cpu").contiguous().view(torch.int32)
    poisoned = bits == POISON_BITS
    n = int(poisoned.sum())
    if n == 0:
        return ""
    flat = poisoned.reshape(-1)
    first = int(flat.nonzero()[0])
    run = flat[first:]
    stop = int((~run).nonzero()[0]) if bool((~run).any()) else run.numel()
    B, H, S, D = out.shape
    idx = (first // (H * S * D), first // (S * D) % H, first // D % S, first % D)
    last = first + stop - 1
    rows = f"rows s={idx[2]}..{last // D % S}" if stop > D else f"row s={idx[2]}"
    return (f"{n} of {out.numel()} {POISONED}; the first block starts at index {idx} and spans {stop} elements "
            f"({rows} of b={idx[0]}, h={idx[1]}): rows or keys past a tile boundary, or heads/batches the launch "
            "does not cover?")


UNINITIALISED = "the kernel reads memory it never wrote"
RACE = "the output changes from run to run"


def _differ(a: torch.Tensor, b: torch.Tensor, tolerance: float) -> torch.Tensor:
    """Elements that differ between two outputs: one finite and the other not, or apart by
    at least the tolerance (a reduction order's last bits are not a difference)."""
    fa, fb = torch.isfinite(a), torch.isfinite(b)
    both_nan = torch.isnan(a) & torch.isnan(b)
    apart = (a.double() - b.double()).abs() >= tolerance
    return ((fa != fb) | (fa & fb & apart) | (~fa & ~fb & ~both_nan & (a != b)))


def _holds(t: torch.Tensor, byte: int) -> torch.Tensor:
    """Elements whose bits are `byte` four times: the memory as the allocator filled it."""
    word = int.from_bytes(bytes([byte]) * 4, "little", signed=True)
    return t.contiguous().view(torch.int32) == word


RACE_HINTS = {
    "cpu": "a race: OpenMP threads sharing one scratch buffer or accumulator? (declare it inside the parallel "
           "loop, or make it `private` or a `reduction`)",
    "gpu": "a race (threads writing the same element, an accumulation without atomics, a missing barrier)?",
    # a C++ kernel whose library starts no threads (linkaudit.starts_threads): no race is possible
    "cpu_serial": "your library starts no threads (no OpenMP, std::thread or at::parallel_for), so this is no "
                  "race: state kept from one call to the next, a `static` or global buffer, running sum or "
                  "accumulator that is not reset at the start of every call (make it a local, or clear it on "
                  "every call)",
}


def differential_message(first: bytes, runs: dict, shape: tuple, tolerance: float, device: str = "gpu") -> str:
    """The forensic diagnosis from re-runs of one failed config on the same inputs with the
    memory handed out filled with other bytes (`runs`: label -> output bytes or None; labels
    "0x00", "0x00 again", "0x41", "0x41 again"): a race when two runs with the same memory differ;
    an uninitialised read when the output follows the memory's contents, which needs each fill to
    reproduce its own output (or the checked run to be the poison's NaN where it differs); a
    race when the checked run differs from re-runs that agree, finite; "" when none. `device`:
    "cpu" for a C++ kernel on the CPU (the race is named in OpenMP's terms), "cpu_serial" for one
    whose library starts no threads (then what changes is state kept between calls)."""
    def out(data):
        if data is None or len(data) != math.prod(shape) * 4:
            return None
        return torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(shape)
    base = out(first)
    zero, zero2, other, other2 = (out(runs.get(k)) for k in ("0x00", "0x00 again", "0x41", "0x41 again"))
    hint = RACE_HINTS.get(device, RACE_HINTS["gpu"])

    def evidence(a, b, la, lb) -> str:
        d = _differ(a, b, tolerance)
        idx = tuple(int(i) for i in d.nonzero()[0])
        return (f"{int(d.sum())} of {d.numel()} output elements differ (first at (b, h, s, d) = {idx}: "
                f"{float(a[idx]):.4g} with {la}, {float(b[idx]):.4g} with {lb})")

    def read(a, b, la, lb) -> str:
        return (f"{UNINITIALISED}: re-run on the same inputs, its output follows what the grader leaves in "
                f"fresh memory ({evidence(a, b, la, lb)}): a buffer read before it is written (torch::empty "
                "or an accumulator not zeroed, shared memory not initialised); initialise it (torch::zeros, "
                "or write every element before reading it)")
    for a, b in ((zero, zero2), (other, other2)):
        if a is not None and b is not None and bool(_differ(a, b, tolerance).any()):
            return f"{RACE} on the same inputs and the same memory: {evidence(a, b, 'one run', 'the next')}: {hint}"
    # elements still holding exactly each run's fill were never written: the check's own
    # "never written" message says that; a value computed from the fill is a read
    if None not in (zero, zero2, other, other2):     # both fills reproduced themselves just above
        d = _differ(zero, other, tolerance)
        if bool(d.any()):
            if bool((_holds(zero, 0x00)[d] & _holds(other, 0x41)[d]).all()):
                return ""
            return read(zero, other, "free memory filled with 0x00 bytes", "0x41 bytes")
    if base is None or zero is None:
        return ""
    d = _differ(base, zero, tolerance)
    if not bool(d.any()) or bool((_holds(base, POISON_BYTE)[d] & _holds(zero, 0x00)[d]).all()):
        return ""
    if bool(torch.isnan(base)[d].all()):             # the poison's NaN, carried into what was computed
        return read(base, zero, "the NaN poison", "free memory filled with 0x00 bytes")
    if zero2 is not None:                            # finite and different, while the re-runs agree
        return (f"{RACE} on the same inputs: {evidence(base, zero, 'the checked run', 'a re-run')}, while "
                f"re-runs with the same memory agree: {hint}")
    return ""


STATE = "the kernel carries state from one (batch, head) to the next"


def head_state_message(out: torch.Tensor, expected: torch.Tensor, tolerance: float,
                       got: torch.Tensor | None = None, want: torch.Tensor | None = None) -> str:
    """The kernel's output on two identical heads (1, 2, S, D) against the truth: the second
    wrong and the first right is state carried between heads (no offset tells equal heads
    apart); both right is an offset into the wrong slice in the full call, unless the full
    call's output `got` (against `want`) is right but for whole batches (or heads) left zero
    or NaN: those were never computed; "" otherwise."""
    err = (out - expected).abs().nan_to_num(float("inf")).flatten(2).amax(-1)[0]
    first, second = float(err[0]), float(err[1])
    if first < tolerance <= second:
        return (f"{STATE}: called on two identical heads, the first comes out right and the second wrong "
                f"(max_err {second:.3g}), which no batch/head offset can explain: a scratch buffer, running "
                "max or sum that is not reset for each (b, h)")
    if first < tolerance and second < tolerance:
        from ..analysis.diagnose import never_computed
        missing = never_computed(got.double(), want, tolerance) if got is not None and want is not None else ""
        if missing:
            return missing
        return ("a batch/head offset (stride): called on two identical heads, both come out right, so each "
                "head's own computation is right and the full call reads or writes the wrong (b, h) slice "
                "(the offset of (b, h) is (b·H + h)·S·D)")
    return ""


def with_forensics(result: CheckResult, forensic: str) -> CheckResult:
    """The check result with the differential diagnosis first; the first run's figures kept."""
    if not forensic:
        return result
    from dataclasses import replace
    if POISONED in result.message:      # the poison's NaN came back: computed from it, not left
        return replace(result, message=forensic)
    head = re.split(r"[:;] ", result.message, maxsplit=1)[0]
    return replace(result, message=f"{forensic} (the checked run: {head})")


def withhold(result: CheckResult) -> CheckResult:
    """A hidden config's result with everything that could reveal its shape removed: the
    student's own exception text (it can print q.sizes()), shapes, element counts, indices
    and max_err (a kernel could encode the shape in its error). What stays: passed, and
    the category of the failure. The full result goes to the instructor only."""
    msg = result.message
    # default-deny: only fixed texts, chosen by the failure's category; nothing of the message
    # itself (a forged reply put the hidden shape in the returned "type", held-out attack of 2026-11-27)
    if result.passed:
        msg = ""
    elif msg.startswith("attention raised"):
        msg = "attention raised an exception (its text is withheld on hidden configs)"
    elif msg.startswith("attention returned"):
        msg = "attention returned something other than a torch.Tensor"
    elif msg.startswith("output has shape"):
        msg = "output has the wrong shape"
    elif msg.startswith("output dtype"):
        msg = "output has the wrong dtype"
    elif msg.startswith("output is on"):
        msg = "output is on the wrong device"
    elif "never written" in msg:
        msg = "output has elements that were never written"
    elif "NaN/Inf" in msg:
        msg = "output has NaN/Inf values"
    elif msg.startswith("max_err"):
        msg = "max_err at or above the tolerance (its value is withheld on hidden configs)"
    elif msg.startswith("output shares memory with input"):
        msg = "output shares memory with an input; return a new tensor"
    elif msg.startswith("the kernel modified its input"):
        msg = "the kernel modified an input; inputs are read-only"
    elif msg.startswith(MALFORMED):
        msg = MALFORMED
    else:
        msg = "failed on this hidden config (the details are withheld on hidden configs)"
    return CheckResult(config=None, name=result.name, max_err=None, passed=result.passed,
                       message=msg, mismatches=(), hidden=True, seconds=0.0)


