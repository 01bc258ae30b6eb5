"""The child process that runs untrusted code: a compute service for the judge.

`python -m grader.judge.worker RFD WFD`: requests arrive on file descriptor RFD, replies leave
on WFD (`grader/isolation/channel.py`). The judge (`grader/run.py`, the parent) owns every secret
and every verdict: it generates the inputs, keeps the float64 truth, and decides from
the output tensors this process sends back. This process receives no seed, no hidden
config file and none of the grader's environment; it only compiles, loads and calls
kernels and times them, and everything it reports (timings, the operation audit) is
data the parent validates, never a verdict. Its printed output goes to a pipe the
parent drains; it writes no file the parent reads.

Requests (`op`): start, device, compile, restrict (CPU), load, references, call, bench (CUDA), bench_begin,
bench_round and bench_end (the CPU's rounds, paced by the judge), exit. Each gets
one reply; a compile may send `note` events before its reply.
"""
from __future__ import annotations

import os
import sys
import time
import traceback
from dataclasses import asdict, replace

from ..isolation.channel import Endpoint
from ..core.config import REPO_ROOT, Config, Shape

REFERENCES = {"cpu": {"naive": "reference/naive.cpp", "fused": "reference/fused.cpp",
                      "fused_opt": "reference/fused_opt.cpp"},
              "cuda": {"naive": "reference/naive.cu", "fused": "reference/fused.cu",
                       "fused_opt": "reference/fused_tc.cu"},
              "triton": {"naive": "reference/naive.triton.py", "fused": "reference/fused.triton.py"}}


class Worker:
    def __init__(self, chan: Endpoint, proc_writes: str | None = None):
        self.chan = chan
        # (CPU) why no Landlock rule refuses writes under /proc ("" when one does), laid in main()
        self.proc_writes = proc_writes
        self.cfg: Config | None = None
        self.backend = "cpu"
        self.device = "cpu"
        self.kernel = None
        self.references: dict = {}
        self.audit = None
        self._native, self._native_ok = None, False     # the binding module's operator observer
        self._observed_before: list = []     # CUDA: the launches of a bench request's untimed call
        self._kept = None                     # CUDA: (shape, slot -> output) of the last bench request, until revealed
        self._round_inputs = None             # CPU: the last benchmark inputs the judge sent (their bytes)

    # -- the loop -------------------------------------------------------------------------
    def serve(self) -> None:
        while True:
            header, payload = self.chan.recv(max_payload=1 << 34)
            op = header.get("op")
            handler = getattr(self, f"op_{op}", None)
            if handler is None:
                self.chan.send({"error": f"unknown request {op!r}"})
                continue
            try:
                reply, data = handler(header, payload)
            except Exception as exc:  # noqa: BLE001 - the parent turns it into a verdict
                from .check import cuda_fault
                fault = cuda_fault(exc) if self.kernel is not None and op in KERNEL_OPS else None
                if fault:       # the kernel's fault, surfaced at the harness's next synchronisation
                    reply, data = {"raised": {"kind": "runtime_error", "message": fault}, "fault": True}, None
                else:
                    reply, data = {"error": f"{type(exc).__name__}: {exc}"[:1000],
                                   "traceback": traceback.format_exc()[-4000:]}, None
            self.chan.send(reply, data)
            if op == "exit":
                return

    # -- requests -------------------------------------------------------------------------
    def op_start(self, h: dict, _) -> tuple[dict, None]:
        """Load torch and the grader's binding module (untimed, before any student code)."""
        import torch

        from ..build import compile as build
        from .integrity import OpAudit
        self.cfg = Config.from_json(h["config"])
        self.backend = h["backend"]
        self.device = h.get("device") or ("cuda" if self.backend == "cuda" else "cpu")
        torch.set_num_threads(h["threads"])
        t0 = time.perf_counter()
        build.prepare()
        from .integrity import ALLOWED_OPS, VALUE_READS
        allowed = ALLOWED_OPS - VALUE_READS if self.backend == "triton" else ALLOWED_OPS
        self.audit = OpAudit(allowed)
        # one-time costs paid before anything is timed: the first dispatch mode's (the
        # torch._dynamo import it once brought is skipped: integrity.OpAudit.call)
        self.audit.call(lambda x: torch.empty_like(x), torch.empty(1))
        self.audit = OpAudit(allowed)
        # the operators of the calls made outside the dispatch mode (warm-up, timed), counted by
        # the binding module's observer (grader/build/dispatch.cpp) from here on
        try:
            self._native = build._dispatch()
            self._native_ok = bool(self._native.observe_ops())
        except Exception:  # noqa: BLE001 - an older binding module: said in the audit (op_observation)
            self._native, self._native_ok = None, False
        # torch's global state before any student code: what SDPA is timed with (bench.StateGuard)
        from .bench import StateGuard
        self.guard = StateGuard()
        return {"ok": True, "prepare_seconds": round(time.perf_counter() - t0, 3)}, None

    def op_device(self, h: dict, _) -> tuple[dict, None]:
        """Take the device the judge hands over (its environment applied before CUDA starts)."""
        from ..core.system import describe
        os.environ.update({k: str(v) for k, v in h.get("env", {}).items()})
        if self.device == "cuda" and h.get("gpu_uuid"):
            from .gpu import select_gpu
            select_gpu(h["gpu_uuid"])
        return {"system": describe("cuda" if self.device == "cuda" else "cpu", h["threads"])}, None

    def op_compile(self, h: dict, _) -> tuple[dict, None]:
        from ..build import compile as build
        from ..build.parse import Source
        src = Source(**{**h["source"], "line_map": tuple(h["source"]["line_map"])})

        def note(text: str) -> None:
            self.chan.send({"event": "note", "text": str(text)[:500]})
        result, _ = build.compile_source(src, self.cfg, on_note=note, load=False)
        return {"compile": asdict(result)}, None

    def op_restrict(self, _h: dict, _) -> tuple[dict, None]:
        """(CPU) Whether no file under /proc opens for writing in this process or any it starts
        (grader/isolation/landlock.py: laid in main(), while the process had one thread), and
        every executable file mapping sealed now (grader/isolation/seal.py): asked for just
        before `load`, and answered before any of the kernel's code has run."""
        from ..isolation.seal import seal_code
        sealed, seal_why = seal_code()          # torch's, Python's, the C library's code
        why = "the worker was not started with the rule" if self.proc_writes is None else self.proc_writes
        return {"why_not": why, "sealed": sealed, "seal_why_not": seal_why}, None

    def op_load(self, h: dict, _) -> tuple[dict, None]:
        """dlopen the judge's audited copy of the kernel library (static initialisers run), or
        import the judge's copy of a Triton source (its module-level code runs)."""
        from ..build import compile as build
        if h.get("kind") == "triton":
            try:
                self.kernel = _windowed(load_triton(h["library"]), self._native if self._native_ok else None)
            except Exception as exc:  # noqa: BLE001 - the student's module-level code, or no Triton
                return {"raised": {"kind": "runtime_error", "message": triton_load_error(exc, h["library"])}}, None
        else:
            self.kernel = build._load(h["library"])
        if self.device == "cpu":                # the code loaded with it, sealed too (the judge checks)
            from ..isolation.seal import seal_code
            seal_code()
        return {"ok": True}, None

    def op_references(self, _h: dict, _) -> tuple[dict, None]:
        """Build and load the reference kernels through the student's build path (a
        student's own grade; batch mode times them once per device instead)."""
        from ..build import compile as build
        from ..build.parse import parse_file
        out = {}
        for name, rel in REFERENCES[self.backend].items():
            path = REPO_ROOT / rel
            if not path.is_file():
                out[name] = {"ok": False, "log": f"{rel} is missing"}
                continue
            if self.backend == "triton":       # the course's own files: imported as they are
                t0 = time.perf_counter()
                self.references[name] = load_triton(str(path))
                out[name] = {"ok": True, "seconds": round(time.perf_counter() - t0, 3), "cached": False, "log": ""}
                continue
            src = parse_file(path, name).sources[self.backend if self.backend == "cuda" else "cpp"]
            result, kernel = build.compile_source(src, self.cfg)
            out[name] = {"ok": result.ok, "seconds": result.seconds, "cached": result.cached, "log": result.log}
            if kernel is not None:       # the course's kernel: its operators are not the student's
                self.references[name] = replace(kernel, observed=False)
        return {"references": out}, None

    def op_call(self, h: dict, payload: bytes) -> tuple[dict, bytes | None]:
        """One checked call: the kernel on the judge's inputs; the output goes back whole."""
        from .check import call_once
        shape = Shape(**h["shape"])
        q, k, v = _tensors(payload, shape, 3, self.device)
        poison = None
        wanted = h.get("poison", True)
        if wanted is not False:
            import functools
            byte = wanted if type(wanted) is int and 0 <= wanted <= 255 else 0xFF
            if self.device == "cuda":
                from .gpu import poison_allocator
                poison = functools.partial(poison_allocator, byte=byte)
            else:
                from .check import cpu_poison
                poison = functools.partial(cpu_poison, byte=byte)
        launches: list = []
        kernel = self._audited
        if self.device == "cuda" and _observing(h):   # observed (grader/judge/launches.py)
            from .launches import observed

            def kernel(q, k, v):
                out, report = observed(self._audited, q, k, v)
                launches.append(report)
                return out
        reply, out = call_once(kernel, q, k, v, self.device, poison)
        reply["audit"] = self.audit.as_dict()
        if launches:
            reply["launches"] = launches[0]
        return reply, out

    def op_bench(self, h: dict, _payload: bytes) -> tuple[dict, None]:
        """(CUDA) Time the kernels at one size; the student's timed calls get counter-based inputs
        under the judge's `key`, and the reply commits to every one's output (`commit`: slot ->
        digest). The outputs stay here for `op_reveal`, which the judge sends once it has the
        commitments and has drawn the calls it checks."""
        import torch

        shape = Shape(**h["shape"])
        key = h.get("key")
        key = key if type(key) is int else 0
        kernels = self._bench_kernels(h, shape)
        self._kept = None
        self._unaudited_begin()
        try:
            from .gpu import bench_size            # the CPU's rounds are the judge's (op_bench_round)
            watch = h.get("watch") if _observing(h) else None
            watch = watch if type(watch) is int else None
            timed = bench_size(kernels, shape, self.cfg, int(h["nonce"]), key, self.guard, watch)
        except StudentError as exc:
            self._unaudited_end()
            return _raised(exc, self.audit), None
        commit = [[slot, d] for slot, d in sorted(timed.commit.items())]
        self._kept = (shape, timed.canary_outputs)
        reply = {"timings": {n: asdict(t) for n, t in timed.timings.items()}, "reps": timed.reps,
                 "method": timed.method, "state_changes": timed.state_changes, "commit": commit,
                 "extra": timed.extra}
        if self.device == "cuda" and _observing(h):
            reply["launches"] = self._launches_after(h, shape)
        self._unaudited_end()
        reply["audit"] = self.audit.as_dict()
        if self.device == "cuda":
            torch.cuda.synchronize()
        return reply, None

    def op_reveal(self, h: dict, _) -> tuple[dict, bytes | None]:
        """(CUDA) The kept outputs of the slots the judge drew, after the commitments; the rest
        are dropped."""
        from .gpu import output_bytes          # the bytes the commitment's digest was taken of
        _, kept = self._kept or (None, {})
        self._kept = None
        slots = h.get("slots") if isinstance(h.get("slots"), list) else []
        outs = [output_bytes(kept.get(s)) if type(s) is int else b"" for s in slots]
        del kept
        data = b"".join(outs)
        return {"returned": [bool(o) for o in outs]}, data or None

    # -- the CPU benchmark, paced by the judge one round at a time (grader/judge/bench.py) -----------
    def op_bench_begin(self, h: dict, _) -> tuple[dict, None]:
        """One size: an audited untimed call, then the warm-up calls on inputs of its own."""
        from .bench import Rounds
        shape = Shape(**h["shape"])
        self._rounds = (shape, Rounds(self._bench_kernels(h, shape), self.guard))
        self._round_inputs = None
        self._unaudited_begin()
        try:
            self._rounds[1].warmup(shape, self.cfg, int(h["nonce"]))
        except StudentError as exc:
            self._unaudited_end()
            return _raised(exc, self.audit), None
        return {"ok": True, "audit": self.audit.as_dict()}, None

    def op_bench_round(self, h: dict, payload: bytes) -> tuple[dict, bytes | None]:
        """One round on the judge's inputs, or (`only`) one kernel's call of it: the inputs come
        with the request that brings them (the student's call's, and the first of a size), and
        a call without them takes the last ones sent; the student's output goes back whole
        (its bytes taken the moment its call returned, inside the call's time)."""
        shape, rounds = self._rounds
        only = h.get("only") if isinstance(h.get("only"), str) else None
        fresh = False
        if payload:
            # the others' copy of the bytes (a libc copy, no torch compute in the kernel's bracket),
            # and the kernel's own tensors on the bytes as they came (no copy)
            self._round_inputs = bytes(payload)
            q, k, v = _tensors(payload, shape, 3, "cpu")
            fresh = only is not None
        elif self._round_inputs is None:
            raise ValueError("a benchmark call before any inputs were sent")
        else:
            q, k, v = _tensors(self._round_inputs, shape, 3, "cpu")       # a copy of their own
        taken: dict = {}

        def keep(name: str, out) -> None:          # every kernel's bytes, inside its call's time
            taken[name] = _output_bytes(out, shape)
        try:
            samples = rounds.round(int(h["round"]), q, k, v, keep=keep, only=only, fresh=fresh)
        except StudentError as exc:
            self._unaudited_end()
            return _raised(exc, self.audit), None
        # the kernel's output bytes back; in a call of its own, any kernel's (SDPA's request does
        # the same work as the kernel's: its bracket is the kernel's twin on the judge's clock)
        data = taken.get(only or "student") or None
        return {"samples": samples, "returned": data is not None}, data

    def op_bench_end(self, _h: dict, _) -> tuple[dict, None]:
        shape, rounds = self._rounds
        rounds.guard.restore()
        self._unaudited_end()
        return {"state_changes": list(rounds.guard.changes), "audit": self.audit.as_dict()}, None

    def _launches_after(self, h: dict, shape: Shape) -> list:
        """The kernels launched by the audited untimed call before the timing and by one more
        call after it, outside the operation audit's dispatch mode, as a timed call runs
        (grader/judge/launches.py): a kernel that computes differently while untimed shows here."""
        from .check import make_inputs
        from .launches import observed
        reports = list(self._observed_before)
        try:
            reports.append(observed(self.kernel, *make_inputs(shape, int(h["nonce"]) ^ 0x3C3C, self.device))[1])
        except Exception:  # noqa: BLE001 - the timing's verdict stands; this call's kernels are lost
            pass           # (a CUDA fault here surfaces at the reply's synchronisation: the kernel's, as before)
        return reports

    def _bench_kernels(self, h: dict, shape: Shape) -> dict:
        """The kernels a bench request names ({"student": ..., "sdpa": ..., references}), after
        one untimed, audited call of the student's on fresh inputs of this size."""
        from .check import make_inputs
        kernels = {"student": _guarded(self.kernel)}
        for name in h.get("kernels", []):
            if name == "sdpa":
                import torch.nn.functional as F
                kernels["sdpa"] = F.scaled_dot_product_attention
            elif name in self.references:
                kernels[name] = self.references[name]
        inputs = make_inputs(shape, int(h["nonce"]) ^ 0x5A5A, self.device)
        self._observed_before = []
        if self.device == "cuda" and _observing(h):
            from .launches import observed
            self._observed_before = [observed(self.audit.call, self.kernel, *inputs)[1]]
        else:
            self.audit.call(self.kernel, *inputs)
        return kernels

    def op_exit(self, _h: dict, _) -> tuple[dict, None]:
        return {"ok": True}, None

    def _audited(self, q, k, v):
        return self.audit.call(self.kernel, q, k, v)

    # -- the calls outside the dispatch mode: their operators, counted natively ----------------
    def _unaudited_begin(self) -> None:
        """Forget what the observer counted so far (the audited calls, which the dispatch mode saw)."""
        if self._native_ok:
            self._native.take_ops()

    def _unaudited_end(self) -> None:
        """Merge the operators the calls since `_unaudited_begin` dispatched into the audit."""
        if not self._native_ok:
            self.audit.unaudited(None, None)
            return
        calls, ops = self._native.take_ops()
        self.audit.unaudited(calls, ops, every_op=self.backend == "triton")


KERNEL_OPS = ("call", "bench", "bench_begin", "bench_round")     # requests that run the student's kernel


def _raised(exc: Exception, audit) -> dict:
    from .check import cuda_fault, exception_message, failure_kind
    cause = exc.__cause__
    return {"raised": {"kind": failure_kind(cause), "message": cuda_fault(cause) or exception_message(cause)},
            "audit": audit.as_dict()}


class StudentError(Exception):
    """The student's kernel raised while being benchmarked."""


def _observing(h: dict) -> bool:
    """Whether the judge wants this request's GPU launches observed (GRADER_OBSERVE_LAUNCHES)."""
    return h.get("observe", True) is not False


def _windowed(kernel, native):
    """A Python kernel (Triton's `attention`) whose calls the binding module's operator
    observer counts, as it counts a compiled kernel's (grader/build/dispatch.cpp `kernel_window`)."""
    if native is None:
        return kernel

    def call(q, k, v):
        native.kernel_window(True)
        try:
            return kernel(q, k, v)
        finally:
            native.kernel_window(False)
    return call


def _guarded(kernel):
    """`kernel`, with its exceptions turned into StudentError."""
    def call(q, k, v):
        try:
            return kernel(q, k, v)
        except Exception as exc:  # noqa: BLE001
            raise StudentError(exc) from exc
    return call


def _tensors(payload: bytes, shape: Shape, count: int, device: str) -> list:
    """`count` float32 tensors of `shape` from the judge's bytes, on `device`."""
    import torch
    n = shape.B * shape.H * shape.S * shape.D
    flat = torch.frombuffer(payload if isinstance(payload, bytearray) else bytearray(payload), dtype=torch.float32)
    if flat.numel() != n * count:
        raise ValueError(f"expected {count} tensors of {n} floats, got {flat.numel()} floats")
    size = (shape.B, shape.H, shape.S, shape.D)
    return [flat[i * n:(i + 1) * n].reshape(size).to(device) for i in range(count)]


def _output_bytes(out, shape: Shape) -> bytes:
    """The output's float32 bytes if it is a float32 tensor of `shape`, else b""."""
    import torch
    if not isinstance(out, torch.Tensor) or out.dtype != torch.float32 or \
            tuple(out.shape) != (shape.B, shape.H, shape.S, shape.D):
        return b""
    return out.detach().to("cpu").contiguous().numpy().tobytes()


def load_triton(path: str):
    """`attention` of a Triton source file, imported as a module of its own. Triton's
    cache (its compiled kernels) goes to this process's cache folder; TRITON_INTERPRET,
    when the judge set it, was in the environment before triton was first imported."""
    import importlib.util
    os.environ.setdefault("TRITON_CACHE_DIR", os.path.join(os.environ.get("GRADER_CACHE", "/tmp"), "triton"))
    name = f"triton_submission_{abs(hash(path)) % 10**8}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module           # @triton.jit reads the function's source through its module
    spec.loader.exec_module(module)
    attention = getattr(module, "attention", None)
    if not callable(attention):
        raise TypeError("the file defines no function attention(q, k, v)")
    return attention


def triton_load_error(exc: Exception, path: str) -> str:
    """Why loading a Triton source failed, in a line: Triton missing, or the file's own error."""
    if isinstance(exc, ImportError) and getattr(exc, "name", "") and str(exc.name).split(".")[0] == "triton":
        return ("Triton is not installed in the grader's Python: on a GPU machine it comes with torch's "
                "CUDA build; on a CPU-only machine install the extra, pip install -e '.[triton]' "
                "(Triton's interpreter then runs the kernel on the CPU)")
    tb = traceback.extract_tb(exc.__traceback__)
    here = [f for f in tb if f.filename == path]
    where = f"{os.path.basename(path)}:{here[-1].lineno}: " if here else ""
    return f"{where}loading the Triton source raised {type(exc).__name__}: {exc}"[:1500]


def main() -> None:
    rfd, wfd = int(sys.argv[1]), int(sys.argv[2])
    proc_writes = None
    if "--no-proc-writes" in sys.argv[3:]:     # a CPU child: first, while this process has one thread
        from ..isolation.landlock import refuse_proc_writes
        proc_writes = refuse_proc_writes()
    Worker(Endpoint(rfd, wfd), proc_writes).serve()


if __name__ == "__main__":
    main()
