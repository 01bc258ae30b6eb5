"""The child process that runs untrusted code: compile, check and bench one submission.

`python -m grader.worker WORKDIR` reads WORKDIR/request.json and reports through
files only: one line per stage in WORKDIR/progress.jsonl (so the parent can apply
each stage's timeout) and the results so far in WORKDIR/state.json, rewritten
atomically after every step, so that a crash or a kill keeps what was learnt.
Its stdout/stderr are never parsed.
"""
from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import asdict
from pathlib import Path

from .config import REPO_ROOT, Config
from .parse import Source
from .result import write_json_atomic

REFERENCES = {"cpu": {"naive": "reference/naive.cpp", "fused": "reference/fused.cpp",
                      "fused_opt": "reference/fused_opt.cpp"},
              "cuda": {"naive": "reference/naive.cu", "fused": "reference/fused.cu",
                       "fused_opt": "reference/fused_tc.cu"}}


class StudentError(Exception):
    """The student's kernel raised while being benchmarked."""


def guarded(kernel):
    """`kernel`, with its exceptions turned into StudentError."""
    def call(q, k, v):
        try:
            return kernel(q, k, v)
        except Exception as exc:  # noqa: BLE001
            raise StudentError(exc) from exc
    return call


class Worker:
    def __init__(self, workdir: Path):
        self.workdir = workdir
        self.request = json.loads((workdir / "request.json").read_text())
        # the request holds the hidden configs and seed: gone before student code loads
        (workdir / "request.json").unlink()
        self.cfg = Config.from_json(self.request["config"])
        self.backend = self.request["backend"]
        self.device = "cuda" if self.backend == "cuda" else "cpu"
        self.state = {"compile": None, "checks": [], "failures": [], "bench": [],
                      "references": {}, "system": {}, "timing": {}, "stage_seconds": {},
                      "audit": {}, "verdict": None, "message": "", "done": False}
        from .integrity import OpAudit
        self.audit = OpAudit()
        self._stage_start = time.perf_counter()
        self._stage = None

    # -- reporting --------------------------------------------------------------
    def stage(self, name: str, detail: str = "") -> None:
        """Start a stage: the parent applies that stage's timeout from now on."""
        now = time.perf_counter()
        if self._stage is not None:
            secs = self.state["stage_seconds"].get(self._stage, 0.0) + now - self._stage_start
            self.state["stage_seconds"][self._stage] = round(secs, 3)
        self._stage, self._stage_start = name, now
        with open(self.workdir / "progress.jsonl", "a") as f:
            f.write(json.dumps({"stage": name, "detail": detail, "t": time.time()}) + "\n")
            f.flush()

    def save(self) -> None:
        write_json_atomic(self.workdir / "state.json", self.state)

    def finish(self, verdict: str, message: str) -> None:
        self.stage("done")
        self.state.update(verdict=verdict, message=message, done=True)
        self.save()

    # -- stages -----------------------------------------------------------------
    def run(self) -> None:
        import torch

        from . import compile as build
        from .system import describe

        threads = self.request["threads"]
        torch.set_num_threads(threads)
        self.stage("prepare", "the grader's binding module")
        build.prepare()
        self.warm_up(torch)
        if self.request.get("gate"):
            self.wait_for_device()
        self.state["system"] = describe(self.backend, threads)
        self.save()
        src = Source(**{**self.request["source"], "line_map": tuple(self.request["source"]["line_map"])})
        self.stage("compile", f"{src.file} ({src.kind})")
        result, kernel = build.compile_source(src, self.cfg)
        self.state["compile"] = asdict(result)
        self.save()
        if not result.ok:
            return self.finish("compile_error", "the kernel did not compile")
        if self.request.get("stop_after") == "compile":
            return self.finish("ok", "compiled (stopped after compiling, as requested)")

        if not self.run_checks(kernel):
            return
        if self.request.get("bench", True):
            references = self.build_references(build)
            self.run_bench(kernel, references)
        else:
            self.finish("ok", "correct on every config (benchmark skipped)")

    def warm_up(self, torch) -> None:
        """One-time costs paid before anything is timed or waited for, CPU only: the first
        TorchDispatchMode imports torch._dynamo (1.5-3 s), the GPU harness imports triton."""
        from .integrity import OpAudit
        OpAudit().call(lambda x: torch.empty_like(x), torch.empty(1))
        if self.device == "cuda":
            import triton.testing  # noqa: F401
            from . import gpu  # noqa: F401

    def wait_for_device(self) -> None:
        """Started ahead (batch mode): Python, torch and the binding module are loaded
        while another submission has the device. Wait, touching no GPU, until the parent
        hands over a device in WORKDIR/go.json (its environment, e.g. CUDA_VISIBLE_DEVICES,
        applied before CUDA starts in this process)."""
        self.stage("ready", "waiting for a free device")
        go = self.workdir / "go.json"
        while not go.is_file():
            time.sleep(0.02)
        env = json.loads(go.read_text())["env"]
        go.unlink()
        os.environ.update(env)
        self.stage("prepare", "the device")
        if env.get("GRADER_GPU_UUID"):
            from .gpu import select_gpu
            select_gpu(env["GRADER_GPU_UUID"])

    def run_checks(self, kernel) -> bool:
        from .check import check
        poison = None
        if self.device == "cuda":
            from .gpu import poison_allocator
            poison = poison_allocator

        def on_config(name, shape, hidden):
            self.stage("check", name if hidden else f"{name}: {shape}")
        def audited(q, k, v):
            return self.audit.call(kernel, q, k, v)
        results = check(audited, self.cfg.configs, self.cfg.hidden_configs, self.cfg.seed,
                        self.cfg.tolerance, self.device, poison, on_config)
        self.state["audit"] = self.audit.as_dict()
        self.state["checks"] = [asdict(r) for r, _ in results]
        self.state["failures"] = [kind for _, kind in results]
        self.save()
        kinds = set(self.state["failures"]) - {""}
        for verdict in ("not_implemented", "runtime_error", "wrong_answer"):
            if verdict in kinds:
                first = next(r for r, kind in results if kind == verdict)
                self.finish(verdict, f"{first.name}: {first.message}")
                return False
        return True

    def build_references(self, build) -> dict:
        """The reference kernels, built through the same path as the student's."""
        from .parse import parse_file
        kernels = {}
        if not self.request.get("references", True):
            return kernels     # batch mode times the references once per device instead
        for name, rel in REFERENCES[self.backend].items():
            path = REPO_ROOT / rel
            if not path.is_file():
                self.state["references"][name] = {"ok": False, "log": f"{rel} is missing"}
                kernels[name] = None
                continue
            self.stage("compile-references", rel)
            src = parse_file(path, name).sources[self.backend if self.backend == "cuda" else "cpp"]
            result, kernel = build.compile_source(src, self.cfg)
            self.state["references"][name] = {"ok": result.ok, "seconds": result.seconds,
                                              "cached": result.cached, "log": result.log}
            kernels[name] = kernel
        self.save()
        return kernels

    def run_bench(self, kernel, references: dict) -> None:
        from .check import exception_message, failure_kind
        try:
            self._run_bench(guarded(kernel), references)
        except StudentError as exc:
            cause = exc.__cause__
            self.finish(failure_kind(cause), f"attention raised during the benchmark "
                        f"({self.state.get('bench_size', '')}): {exception_message(cause)}")

    def _run_bench(self, kernel, references: dict) -> None:
        seed = self.cfg.seed + 1

        def on_size(shape):
            self.state["bench_size"] = str(shape)
            self.stage("bench", str(shape))
            # one untimed, audited call on fresh inputs of this size
            from .check import make_inputs
            self.audit.call(kernel, *make_inputs(shape, seed * 7 + shape.S, self.device))
            self.state["audit"] = self.audit.as_dict()
        if self.device == "cuda":
            from .gpu import bench_cuda
            rows, timing = bench_cuda(kernel, references, self.cfg, seed, on_size)
        else:
            from .bench import bench
            rows = bench(kernel, references, self.cfg, seed, on_size)
            timing = {"method": "cpu-perf_counter", "description":
                      "time.perf_counter around each call; kernels interleaved; median of "
                      "repeated calls on 3 rotating input sets after warm-up",
                      "warmup_reps": self.cfg.warmup_reps, "min_reps": self.cfg.min_reps,
                      "max_reps": self.cfg.max_reps, "threads": self.request["threads"]}
        self.state["bench"] = [asdict(r) for r in rows]
        self.state["timing"] = timing
        self.save()
        if self.device == "cpu":        # the machine's roofline, for the report (cached per machine)
            self.stage("roofline", "measuring this CPU's FMA peak and memory bandwidth")
            from .roofline import measure_cpu_ceilings
            try:
                self.state["ceilings"] = asdict(measure_cpu_ceilings(self.request["threads"]))
            except Exception as exc:  # noqa: BLE001 - the report then goes without a CPU roofline
                self.state["ceilings_note"] = f"{type(exc).__name__}: {exc}"[:300]
            self.save()
        for row in rows:
            err = row.recheck_max_err
            if err is None or not err < self.cfg.tolerance:
                shown = "no usable output" if err is None else f"max_err {err:.3g}"
                return self.finish("wrong_answer", f"wrong on the benchmark inputs at S={row.S} "
                                   f"({shown}); it was right on the check configs")
        self.finish("ok", "correct on every config")


def main() -> None:
    workdir = Path(sys.argv[1])
    worker = Worker(workdir)
    try:
        worker.run()
    except Exception as exc:  # noqa: BLE001 - report, the parent turns it into a verdict
        import traceback
        worker.state["internal_error"] = traceback.format_exc()[-4000:]
        worker.state["message"] = f"{type(exc).__name__}: {exc}"[:1000]
        worker.save()
        sys.exit(3)


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    main()
