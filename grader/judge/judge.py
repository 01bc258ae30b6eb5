"""The judge: grades one submission in phases, owning every secret and every verdict.

The judge is this process. It parses the submission, then runs everything that touches
the student's code in a child process (`grader/judge/worker.py`, sandboxed in batch mode) that
it talks to through pipes (`grader/isolation/channel.py`). The judge owns every secret and every
verdict, as the contest judges do (CMS keeps its checker out of the contestant's process):
- it generates every input (public and hidden configs, from the seed the child never
  sees), computes the float64 truth, and decides each config's verdict and max_err from
  the output tensor the child sends back;
- the child's reports (compile log, timings, the operation audit) are data it validates;
- it reads the built library itself (`safefs`: no link followed, regular files only,
  size capped), audits its symbols (`linkaudit`) and hands the child that audited copy;
- it applies every timeout from its own clock: per request, and a total per submission
  that nothing the child writes can switch off;
- the hidden configs run last, after the benchmark, with the child's printed output
  kept out of every student-visible file from the moment their inputs are sent.

An infinite loop becomes `timeout`, a segfault `runtime_error` (with the last lines the
kernel printed), a breach of the limits `runtime_error` with the reason; the judge always
finishes with a verdict and message (`Judge.outcome`; grader/run.py makes the GradeResult).
"""
from __future__ import annotations

import os
import random
import re
import secrets
import shutil
import statistics
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, replace
from pathlib import Path

from .child import Child, ChildFailed
from ..core.config import REPO_ROOT, Config, Shape
from ..isolation.options import RunOptions
from ..build.parse import Submission

STAGE_NAMES = {"start": "starting", "prepare": "loading torch and the grader's binding module",
               "ready": "waiting for a device", "device": "taking the device",
               "roofline": "measuring the CPU's roofline",
               "compile": "compiling", "audit": "auditing the built library",
               "queued": "waiting for its turn on a device", "load": "loading the kernel",
               "compile-references": "compiling the reference kernels",
               "check": "checking", "bench": "benchmarking", "hidden": "checking the hidden configs",
               "baseline": "timing SDPA in a clean process",
               "done": "done"}
MAX_RESTARTS = 2                 # fresh children after crashes on public configs, at most
PROBE_SEEDS = 1 << 20            # config_seed index of the diagnostic probes' inputs (far past any config's)
LIBRARY_MAX_BYTES = 512 << 20


def public_config(cfg: Config) -> Config:
    """What the child may know of the config: no hidden configs, no seed."""
    return replace(cfg, seed=0, hidden_configs=(), seed_is_secret=False)


class Judge:
    """Grades one parsed submission in phases: `compile()` (build, audit, copy the library
    out of the child's reach), then `run_device()` (load, check, bench, hidden configs).
    A student's own grade runs both in one child; a batch runs them in two (compile with
    `--jobs` others, then holding a device), and `result()` gathers everything."""

    def __init__(self, sub: Submission, cfg: Config, backend: str, reason: str, options: RunOptions,
                 progress=None, bench: bool = True, keep_workdir: bool = False):
        self.sub, self.cfg, self.backend, self.reason = sub, cfg, backend, reason
        self.options, self.progress, self.bench_on = options, progress, bench
        self.source = sub.sources[SOURCE_KIND[backend]]
        self.threads = cfg.threads or os.cpu_count() or 1
        self.device = device_of(backend)
        # a Triton kernel without a GPU runs in Triton's interpreter: checked, never timed
        self.interpreter = backend == "triton" and self.device == "cpu"
        # Triton compiles a kernel on its first launch at each new specialisation (and an
        # autotuned one times its configs then): inside a checked or benchmark call, so those
        # calls get this much longer on a GPU
        self.jit_s = TRITON_JIT_S if backend == "triton" and self.device == "cuda" else 0.0
        # CUDA: the checked and untimed calls' kernels observed under the profiler (grader/judge/launches.py);
        # GRADER_OBSERVE_LAUNCHES=0 (the judge's environment) turns it off, for measuring its cost
        # (tools/profiler_ab.py); results.json's `launches` then says so
        self.observe = os.environ.get("GRADER_OBSERVE_LAUNCHES", "1") != "0"
        self.state: dict = {"checks": [], "bench": [], "stage_seconds": {}, "link_flags": [], "judge_flags": []}
        self.private: dict = {"hidden_checks": []}
        self.verdict: str | None = None
        self.message = ""
        self.child: Child | None = None
        self.children = 0
        self.restarts = 0                 # fresh children after a crash (MAX_RESTARTS)
        self._device_env: dict | None = None   # set once the device was taken (run_device)
        self._gpu_nodes: tuple = ()
        self._context_broken = False      # a CUDA fault: the child's context cannot run more
        self._judged: list = []           # public configs' errors beside each precision's (numerics)
        self._launches: dict = {False: [], True: []}   # per checked call, public and hidden: kernels launched
        self._untimed_reports: dict = {}  # S -> the bench requests' untimed calls' launches
        self._watched: list = []          # the watched timed round of every bench request
        self._clean_process = None        # CUDA: the clean SDPA process (CleanSdpa)
        self._bench_kernels: list = []    # what the child timed beside the student's kernel (sdpa, references)
        self._cpu_observation = ""        # CPU: why the child's CPU time was not sampled, if it was not
        self._cpu_sampled = ""            # CPU: how it was (cpusample.Sampler.scope)
        self._layout = None               # CPU: where the harness's code and the library sat (cpusample.Layout)
        self.child_dir: Path | None = None
        self.library: Path | None = None
        self._starts_threads: bool | None = None     # the built library can start threads (linkaudit)
        self.output_public = ""
        self.output_private = ""
        self.output_bytes = 0
        self.isolation: dict = {}
        self._sealing = False             # the worker sealed its code before the load (_restrict)
        self._temp = options.workdir is None
        self.keep_workdir = keep_workdir
        if options.workdir is not None:
            self.workdir = Path(options.workdir).resolve()
            self.workdir.mkdir(parents=True, exist_ok=True)
        else:
            self.workdir = Path(tempfile.mkdtemp(prefix="grade-"))
        self.libdir = Path(tempfile.mkdtemp(prefix="grade-lib-"))
        os.chmod(self.libdir, 0o755)
        # the total cap counts the time a child of this submission runs, not the time it waits
        # for a compile slot or a device
        self.budget = options.total_timeout or cfg.timeout_total
        # the judge needs torch for inputs and truth: import it while the child starts
        threading.Thread(target=_import_torch, daemon=True).start()
        self._started = time.monotonic()
        self._stage = ("start", "", time.monotonic())

    # -- bookkeeping ----------------------------------------------------------------------
    def stage(self, name: str, detail: str = "") -> None:
        now = time.monotonic()
        prev, _, since = self._stage
        if prev not in ("start",):
            secs = self.state["stage_seconds"].get(prev, 0.0) + now - since
            self.state["stage_seconds"][prev] = round(secs, 3)
        self._stage = (name, detail, now)
        if self.progress is not None and name != "done":
            self.progress(name, detail, now - self._started)

    def where(self) -> str:
        name, detail, _ = self._stage
        return f"{STAGE_NAMES.get(name, name)}{' (' + detail + ')' if detail else ''}"

    def finish(self, verdict: str, message: str) -> None:
        if self.verdict is None:
            self.verdict, self.message = verdict, message

    def _fail(self, failed: ChildFailed) -> None:
        self.finish(failed.verdict, f"{self.where()}: {failed.message}" if failed.verdict != "timeout"
                    else f"{self.where()} {failed.message}")

    def _spawn(self, gpu_nodes: tuple = ()) -> Child:
        if self.child is None:
            self.stage("start")
            env = {**self.options.env, **({"TRITON_INTERPRET": "1"} if self.interpreter else {})}
            options = replace(self.options, gpu_nodes=gpu_nodes or self.options.gpu_nodes,
                              ro_paths=tuple(self.options.ro_paths) + (str(self.libdir),), env=env)
            self._child_started, self._waited = time.monotonic(), 0.0
            # each child a fresh folder: nothing one child left (a link, a FIFO) is there for
            # the next, and the judge never walks what a child wrote
            self.children += 1
            self.child_dir = self.workdir / f"child{self.children}"
            self.child = Child(self.child_dir, options, self.threads, self.device == "cuda",
                               time.monotonic() + self.budget)
            self.isolation = self.child.isolation
            if self._temp and self.children == 1 and self.options.stop_after != "compile" and self.options.gate is None:
                # a student's own grade: one child for every phase; the clean SDPA process imports
                # torch while the child does (grader/judge/baseline.py), long before the benchmark
                self._start_clean_sdpa()
            self.stage("prepare")
            reply, _ = self.child.request({"op": "start", "backend": self.backend, "device": self.device,
                                           "threads": self.threads,
                                           "config": public_config(self.cfg).to_json()},
                                          timeout=self.cfg.timeout_compile)
            if "error" in reply:           # no student code has run yet: this is the grader's own failure
                raise ChildFailed("grader_error", f"the grader could not start its worker: "
                                  f"{str(reply['error'])[:800]}")
        return self.child

    def _expect(self, reply: dict) -> dict:
        """A reply, or ChildFailed if it reports an error of the worker itself."""
        if "error" in reply:
            raise ChildFailed("runtime_error", f"the grader's worker failed: {str(reply['error'])[:500]} "
                              "(if your kernel is not the cause, please report this)")
        return reply

    def _start_clean_sdpa(self) -> None:
        """The clean SDPA process (grader/judge/baseline.py), where this grade times on a GPU and none is
        started yet: torch's import then overlaps the child's own start or its checks."""
        if self._clean_process is None and self.device == "cuda" and self.bench_on and self.cfg.bench_shapes:
            self._clean_process = CleanSdpa()

    def _close_clean_sdpa(self) -> None:
        if self._clean_process is not None:
            self._clean_process.close()
            self._clean_process = None

    def close_child(self) -> None:
        if self.child is not None:
            self.budget -= time.monotonic() - self._child_started - self._waited
            self.child.close()
            self.output_public += self.child.output.text(0)
            self.output_private += self.child.output.text(1)
            # what the student sees counts the public phase's bytes alone: a kernel printing
            # S bytes on a hidden config would otherwise spell S in isolation.output_bytes
            self.output_bytes += self.child.output.counted(0)
            self.private["output_bytes_hidden"] = self.private.get("output_bytes_hidden", 0) + \
                self.child.output.counted(1)
            self.child = None

    # -- phase 1: compile ----------------------------------------------------------------
    def compile(self) -> bool:
        """Build the kernel in the child, then read, audit and copy the library. True when
        the grade goes on (it compiled)."""
        if self.source.kind == "triton":
            return self._take_triton()
        notes: list[str] = []           # the build's notes (before _spawn: it may fail first)
        try:
            child = self._spawn()
            self.stage("compile", f"{self.source.file} ({self.source.kind})")

            def note(text: str) -> None:
                notes.append(str(text)[:2000])
                if self.progress is not None:
                    self.progress("compile", text, time.monotonic() - self._started)
            reply, _ = child.request({"op": "compile", "source": _source_json(self.source)},
                                     timeout=self.cfg.timeout_compile, on_note=note)
            self._expect(reply)
            result = _compile_dict(reply.get("compile"))
            self.state["compile"] = result
            if not result["ok"]:
                self.finish("compile_error", "the kernel did not compile")
                return False
            self.stage("audit")
            self._take_library(result)
        except ChildFailed as failed:
            if notes and failed.verdict == "runtime_error" and "of memory" in failed.message:
                self._full_tier_out_of_memory(notes, failed)
            else:
                self._fail(failed)
            return False
        if self.options.stop_after == "compile" and self.verdict is None:
            self.finish("ok", "compiled (stopped after compiling, as requested)")
        return self.verdict is None or self.options.stop_after == "compile"

    def _take_triton(self) -> bool:
        """A Triton source's "compile" in the judge: parsed (never imported here), its
        `attention` found, and the file the child will import written where the child
        cannot write, its lines where the student's file has them. Triton compiles each
        kernel in the child, on its first launch."""
        from ..core.result import CompileResult
        self.stage("compile", f"{self.source.file} (triton)")
        t0 = time.monotonic()
        log = triton_problem(self.source)
        ok = not log
        self.state["compile"] = asdict(CompileResult(ok=ok, seconds=round(time.monotonic() - t0, 3), log=log,
                                                     tier="triton"))
        if not ok:
            self.finish("compile_error", "the Triton source is not a valid kernel file")
            return False
        folder = self.libdir / "triton"
        folder.mkdir(mode=0o755)
        self.library = folder / _module_file(self.source.file)
        self.library.write_text(self.source.file_text())
        os.chmod(self.library, 0o644)
        if self.options.stop_after == "compile" and self.verdict is None:
            self.finish("ok", "parsed and audited (stopped after compiling, as requested: Triton compiles "
                        "its kernels when they are first launched)")
        return True

    def _full_tier_out_of_memory(self, notes: list[str], failed: ChildFailed) -> None:
        """The build fell back to the full torch headers (a faster tier failed, or the source
        needs them) and that build broke the memory limit (a Gradescope container: the full
        headers need more than its memory). The code did not compile here: a compile_error
        whose log is the fallback's reason, the faster tier's first error, not a crash."""
        from ..core.result import CompileResult
        log = "\n".join(notes) + (f"\nthe build with the full torch headers then {failed.message}: "
                                   "this grader's memory limit cannot hold it, so the error above is "
                                   "the one that counts (the grader's lean headers need far less)")
        self.state["compile"] = asdict(CompileResult(ok=False, seconds=0.0, log=log, tier="full",
                                                     fallback="\n".join(notes)))
        self.finish("compile_error", "the kernel did not compile (the full torch headers need more "
                    "memory than this grader has; see the compile log)")

    def _take_library(self, result: dict) -> None:
        """Read the built library out of the child's cache without trusting anything there
        (grader/isolation/safefs.py), audit its symbols, and keep a copy the child cannot write."""
        from ..build.compile import cache_root, source_hash
        from .linkaudit import audit_library, starts_threads
        from ..isolation.safefs import UnsafeFile, read_regular
        name = f"attn_{self.source.kind}_{source_hash(self.source, public_config(self.cfg))}"
        root = (self.child_dir / "cache") if self.options.sandbox else cache_root()
        rel = Path("build") / name / str(result.get("library_rel", ""))
        try:
            if not _safe_library_rel(result.get("library_rel", ""), name):
                raise UnsafeFile(f"unexpected library path {result.get('library_rel')!r}")
            data = read_regular(root, rel, LIBRARY_MAX_BYTES)
        except UnsafeFile as e:
            raise ChildFailed("runtime_error", f"the built library could not be read safely ({e})") from None
        copy = self.libdir / "kernel.so"
        copy.write_bytes(data)
        os.chmod(copy, 0o755)
        self.library = copy
        # what the toolchain and the tier's headers link by themselves (grader/judge/linkaudit.py),
        # for the tier the library was really built in (its validated folder, not the child's
        # word); measured once per machine, and that time is the judge's, not the student's
        from .linkaudit import KERNEL_OBJECT, OBJECT_FILES, audit_objects, baseline_objects, header_baseline, merge_flags
        from .integrity import STRICT, Flag
        tier = result["library_rel"].split("/")[0]
        t0 = time.monotonic()
        baseline = header_baseline(self.source.kind, public_config(self.cfg), tier)
        self._waited += time.monotonic() - t0
        if self.child is not None:
            self.child.deadline += time.monotonic() - t0
        flags = audit_library(data, self.source, baseline)
        self._starts_threads = starts_threads(data)
        # and the kernel's own object files, beside the library (nothing of the student's has
        # run yet: they are the compiler's output): a call the toolchain also links into every
        # library (so into the baseline) is still the kernel's own there
        objects, missing = [], []
        for obj in OBJECT_FILES:
            try:
                objects.append(read_regular(root, rel.parent / obj, LIBRARY_MAX_BYTES))
            except UnsafeFile:
                missing.append(obj)                      # cuda.cuda.o: CUDA builds only
        if KERNEL_OBJECT[self.source.kind] in missing:
            flags.append(Flag("unauditable", STRICT, f"{self.source.file}: the kernel's object file "
                              f"{KERNEL_OBJECT[self.source.kind]} is not beside its built library"))
        else:
            flags = merge_flags(flags, audit_objects(objects, self.source,
                                                     baseline_objects(self.source.kind, public_config(self.cfg), tier)))
        self.state["link_flags"] = [f.as_dict() for f in flags]

    # -- phase 2: the device --------------------------------------------------------------
    def run_device(self, gpu_nodes: tuple = ()) -> None:
        """Load the audited library, check the public configs, bench, then the hidden ones."""
        if self.verdict is not None or self.library is None:
            return
        try:
            self._start_clean_sdpa()            # torch's import beside the device child's
            child = self._spawn(gpu_nodes)
            env = {}
            if self.options.gate is not None:
                self.stage("ready", "waiting for a free device")
                t0 = time.monotonic()
                env = dict(self.options.gate())
                self._waited += time.monotonic() - t0
                child.deadline += time.monotonic() - t0
            self._device_env, self._gpu_nodes = env, gpu_nodes
            self._open_device()
            public_ok = self._checks(self.cfg.configs, hidden=False)
            if not public_ok:
                self._probes()
            self._name_the_precision()
            if public_ok and self.bench_on and self.verdict is None and not self.interpreter:
                self._bench()
        except ChildFailed as failed:
            self._fail(failed)
        finally:
            self._close_clean_sdpa()
        self._hidden()
        if self.verdict is None:
            self.finish("ok", NOT_TIMED_IN_INTERPRETER if self.interpreter and self.bench_on else
                        "correct on every config" if self.bench_on else "correct on every config (benchmark skipped)")

    def _open_device(self) -> None:
        """The child takes the device (the GPU the lane gave, its threads) and loads the
        audited library."""
        env = self._device_env
        self.stage("device")
        reply, _ = self.child.request({"op": "device", "env": {k: v for k, v in env.items()
                                                               if k == "CUDA_VISIBLE_DEVICES"},
                                       "gpu_uuid": env.get("GRADER_GPU_UUID", ""), "threads": self.threads},
                                      timeout=self.cfg.timeout_compile)
        self.state["system"] = {**self._expect(reply).get("system", {}), **_judge_system(self.threads)}
        self.stage("load")
        self._restrict()
        before = self._child_maps()
        if before is not None:          # the library's code segments, read from the judge's copy before it loads
            from .cpusample import exec_segments
            segments = exec_segments(str(self.library))
        reply = self._expect(self.child.request({"op": "load", "library": str(self.library),
                                                 "kind": self.source.kind}, timeout=self.cfg.timeout_check)[0])
        if before is not None:          # where the harness's code sat and the library landed (cpusample.Layout)
            from .cpusample import read_layout
            self._layout = read_layout(before, self._child_maps() or {}, str(self.library), segments)
        if "raised" in reply:            # a Triton file whose loading raised (its module-level code)
            raise ChildFailed("runtime_error", str(reply["raised"].get("message", ""))[:1500])
        self._check_sealed()

    def _restrict(self) -> None:
        """(CPU) Just before the load, the worker seals its code (grader/isolation/seal.py) and
        says whether its Landlock rule holds (no file under /proc opened for writing, laid
        when it started: grader/isolation/landlock.py); the answer comes before any of the
        kernel's code has run, and is said in `isolation.code_sealed` and `proc_writes`. The
        GPU's child is left as it was: its CPU time is not attributed, and neither has run
        on a GPU."""
        self._sealing = False
        if self.device != "cpu":
            return
        reply = self._expect(self.child.request({"op": "restrict"}, timeout=self.cfg.timeout_check)[0])
        why = str(reply.get("why_not") or "")[:300]
        self.child.isolation["proc_writes"] = (f"allowed ({why})" if why else
                                               "refused (Landlock: no file under /proc opened for writing)")
        sealed, seal_why = reply.get("sealed"), str(reply.get("seal_why_not") or "")[:300]
        self._sealing = isinstance(sealed, int) and sealed > 0 and not seal_why
        self.child.isolation["code_sealed"] = ("every executable file mapping, before the library loaded and after "
                                               "(mseal)" if self._sealing else f"no ({seal_why or 'nothing sealed'})")

    def _check_sealed(self) -> None:
        """(CPU) After the load, every executable file mapping of the child's processes that
        sealed any is sealed (`sl` in /proc/PID/smaps): the worker seals the library's code once
        it is loaded, and only code that ran at the load (a constructor) can stop it. Unsealed,
        code could be moved in and out of the library's pages unseen (mremap makes no
        PERF_RECORD_MMAP2): strict."""
        if not self._sealing:
            return
        from ..isolation.sandbox import tree_members
        from ..isolation.seal import unsealed
        from .cpusample import MAX_PROCESSES
        left = sorted({name for pid, _, _ in tree_members(self.child.proc.pid)[:MAX_PROCESSES]
                       for name in (unsealed(pid) or ())})
        if left:
            self.state["judge_flags"].append({"code": "foreign_cpu_time", "tier": "strict", "detail": (
                f"the kernel's process left code unsealed after its library loaded ({', '.join(left[:4])}): the "
                "harness seals every executable mapping then, and only code run at the load can stop it; unsealed, "
                "code can be moved into the library's pages and out again unseen, and its CPU samples no longer "
                "say whose code ran (grader/isolation/seal.py)")})

    def _child_maps(self) -> dict | None:
        """(CPU) The executable mappings of every process of the child's tree (cpusample.exec_maps),
        or None where its samples are not attributed (the GPU)."""
        if self.device != "cpu":
            return None
        from .cpusample import MAX_PROCESSES, exec_maps
        from ..isolation.sandbox import tree_members
        return {pid: exec_maps(pid) for pid, _, _ in tree_members(self.child.proc.pid)[:MAX_PROCESSES]}

    def _restart(self) -> None:
        """A fresh child after a crash, so the configs after it still run (and count)."""
        self.close_child()
        self.restarts += 1
        self._spawn(self._gpu_nodes)
        self._open_device()
        self._context_broken = False

    def _may_restart(self, hidden: bool, configs_left: int) -> bool:
        """A fresh child for the public configs still to run, within MAX_RESTARTS (never in
        the hidden phase, whose crash text is withheld)."""
        return not hidden and configs_left > 0 and self.restarts < MAX_RESTARTS

    def _usable(self) -> bool:
        """True when the child can take another call (alive, its CUDA context whole)."""
        return self.child is not None and self.child.proc.poll() is None and not self._context_broken

    def _checks(self, shapes: tuple, hidden: bool) -> bool:
        """Each config: inputs and truth made here, the kernel's output judged here."""
        from .check import config_seed, judge_call, make_inputs, truth, withhold
        ok = True
        offset = 0 if not hidden else len(self.cfg.configs)
        for i, shape in enumerate(shapes):
            name = f"hidden {i + 1}" if hidden else f"config {i + 1}"
            self.stage("hidden" if hidden else "check", name if hidden else f"{name}: {shape}")
            q, k, v = make_inputs(shape, config_seed(self.cfg.seed, offset + i))
            expected = truth(q, k, v)
            payload = b"".join(t.numpy().tobytes() for t in (q, k, v))
            try:
                reply, data = self.child.request({"op": "call", "shape": shape.as_dict(), "observe": self.observe},
                                                 payload,
                                                 timeout=self.cfg.timeout_check + self.jit_s, max_payload=q.numel() * 4)
                reply = self._expect(reply)
            except ChildFailed as failed:
                result = _crashed_check(name, shape, hidden, failed)
                self._record_check(result, hidden)
                # a crash costs this config, not the public ones after it: they run in a fresh
                # child (not after a timeout, which would cost the limit again, nor on hidden
                # configs, whose crash text is withheld)
                if failed.verdict != "runtime_error" or not self._may_restart(hidden, len(shapes) - i - 1):
                    raise
                self._fail(failed)
                ok = False
                self._restart()
                continue
            self.state["audit"] = reply.get("audit") if isinstance(reply.get("audit"), dict) else {}
            if isinstance(reply.get("launches"), dict):      # the GPU kernels it launched (grader/judge/launches.py)
                self._launches[hidden].append(reply["launches"])
            result, kind = judge_call(reply, data, q, k, v, expected, self.cfg.tolerance, name, hidden,
                                      None if hidden else shape.as_dict(), gpu=self.device == "cuda")
            if not hidden and result.max_err is not None and kind in ("", "wrong_answer"):
                self._precision_evidence(name, q, k, v, expected, result)
            if kind == "wrong_answer" and not hidden and data is not None:
                result = self._forensics(result, shape, payload, data)
            self._record_check(withhold(result) if hidden else result, hidden, full=result)
            if kind:
                ok = False
                msg = withhold(result).message if hidden else result.message
                self.finish(kind, f"{name}: {msg}")
                if self.device != "cpu" and kind == "runtime_error":
                    # after a CUDA fault the context is unusable: the public configs after
                    # it run in a fresh child, as after a crash
                    self._context_broken = True
                    if not self._may_restart(hidden, len(shapes) - i - 1):
                        break
                    self._restart()
        return ok

    def _forensics(self, result, shape: Shape, payload: bytes, first: bytes):
        """A wrong public config re-run (never scored) on the same inputs with the memory the
        kernel gets filled with other bytes, and once more alike: an output that follows the
        memory's contents read memory it never wrote; one that changes between two alike runs
        races (check.differential_message). A re-run that fails says nothing."""
        from .check import DIFFERENTIAL_BYTES, differential_message, with_forensics
        runs: dict = {}
        # each fill twice: an output that follows the memory must reproduce itself under each fill
        plan = [("0x00", DIFFERENTIAL_BYTES[0]), ("0x00 again", DIFFERENTIAL_BYTES[0]),
                ("0x41", DIFFERENTIAL_BYTES[1]), ("0x41 again", DIFFERENTIAL_BYTES[1])]
        for label, byte in plan:
            reply, data = self._rerun(shape, payload, byte)
            if reply is None:
                return result
            runs[label] = data
        device = "gpu"
        if self.device == "cpu" and self.source.kind == "cpp":
            # a library that starts no threads cannot race: its run-to-run change is kept state
            device = "cpu_serial" if self._starts_threads is False else "cpu"
        found = differential_message(first, runs, (shape.B, shape.H, shape.S, shape.D), self.cfg.tolerance, device)
        if not found and shape.B * shape.H > 1:
            found = self._head_state(shape, payload, first)
        return with_forensics(result, found)

    def _rerun(self, shape: Shape, payload: bytes, poison=True):
        """One never-scored call of the kernel; (reply, output bytes), or (None, None) when it
        raised or the child failed (a fresh child then, for the configs after it)."""
        try:
            reply, data = self.child.request({"op": "call", "shape": shape.as_dict(), "poison": poison,
                                              "observe": self.observe}, payload,
                                             timeout=self.cfg.timeout_check + self.jit_s,
                                             max_payload=shape.B * shape.H * shape.S * shape.D * 4)
        except ChildFailed:
            self._fresh_child()     # the verdict stands; the configs after it need a child
            return None, None
        if not isinstance(reply, dict) or "raised" in reply or "error" in reply:
            if self.device != "cpu":
                self._fresh_child()     # a CUDA fault leaves the context unusable
            return None, None
        return reply, data

    def _head_state(self, shape: Shape, payload: bytes, first: bytes) -> str:
        """Slice (0, 0) right and another wrong: the kernel called on two identical heads (both
        that right slice's inputs). The second wrong means state carried from one (b, h) to the
        next, since no offset can tell equal heads apart; both right means an offset."""
        import torch

        from .check import head_state_message, truth
        B, H, S, D = shape.B, shape.H, shape.S, shape.D
        n = B * H * S * D
        if len(first) != n * 4 or len(payload) != 3 * n * 4:
            return ""
        q, k, v = (torch.frombuffer(bytearray(payload[i * n * 4:(i + 1) * n * 4]), dtype=torch.float32)
                   .reshape(B, H, S, D) for i in range(3))
        got = torch.frombuffer(bytearray(first), dtype=torch.float32).reshape(B, H, S, D).double()
        want = truth(q, k, v)
        err = (got - want).abs().nan_to_num(float("inf")).flatten(2).amax(-1)       # (B, H)
        if not (err[0, 0] < self.cfg.tolerance and bool((err >= self.cfg.tolerance).any())):
            return ""
        twin = Shape(B=1, H=2, S=S, D=D, qk_std=shape.qk_std)
        dup = [t[0:1, 0:1].expand(1, 2, S, D).contiguous() for t in (q, k, v)]
        reply, data = self._rerun(twin, b"".join(t.numpy().tobytes() for t in dup))
        if reply is None or data is None or len(data) != 2 * S * D * 4:
            return ""
        out = torch.frombuffer(bytearray(data), dtype=torch.float32).reshape(1, 2, S, D).double()
        return head_state_message(out, truth(*dup), self.cfg.tolerance, got=got, want=want)

    def _probes(self) -> None:
        """A failed public config that differs from every passing one in two ways (config 2: the
        only B > 1 and the only S not a multiple of 64) is called again, never scored, with one of
        them changed back (grader/analysis/diagnose.py probe_plan): which change passes names the
        cause. Shapes from the public configs, inputs made here under their own seeds; before the
        hidden configs, so nothing of theirs is near. Results in `probes`; a failed call says nothing."""
        from ..analysis.diagnose import probe_plan
        from .check import config_seed, judge_call, make_inputs, truth
        found = []
        for i, probe in enumerate(probe_plan(self.state["checks"])):
            if not self._usable():
                break
            shape = Shape(**probe["shape"])
            self.stage("check", f"unscored probe of {probe['config']}: {shape}")
            q, k, v = make_inputs(shape, config_seed(self.cfg.seed, PROBE_SEEDS + i))
            reply, data = self._rerun(shape, b"".join(t.numpy().tobytes() for t in (q, k, v)))
            if reply is None or data is None:
                continue
            result, _ = judge_call(reply, data, q, k, v, truth(q, k, v), self.cfg.tolerance, "probe")
            found.append({**probe, "passed": result.passed, "max_err": result.max_err})
        if found:
            self.state["probes"] = found

    def _precision_evidence(self, name: str, q, k, v, expected, result) -> None:
        """This config's error beside attention computed here in each precision a kernel may
        use (grader/analysis/numerics.py); the judgement is made over every public config at the end."""
        from ..analysis.numerics import errors_by_precision, likely_precision
        from ..core.config import PRECISIONS, load_precision
        try:
            errors = errors_by_precision(q, k, v, expected)
            # the lesson says whether the precision is allowed: the config's [precision] policy
            allowed = load_precision(self.cfg.source).allowed if Path(self.cfg.source).is_file() else PRECISIONS
        except Exception:  # noqa: BLE001 - forensics never cost a grade
            return
        self._judged.append({"name": name, "max_err": result.max_err, "passed": result.passed, "errors": errors})
        self.state["numerics"] = likely_precision(self._judged, self.cfg.tolerance, allowed)

    def _name_the_precision(self) -> None:
        """A config the usual mistakes do not explain, whose error is a reduced precision's
        rounding (numerics), is told so in its own message and in the verdict's."""
        precision = (self.state.get("numerics") or {}).get("precision")
        if not precision or precision in ("fp32", "mixed"):
            return
        from ..analysis.numerics import rounding_phrase
        none = "the error fits none of the usual mistakes"
        said = rounding_phrase(precision)
        for c in self.state["checks"]:
            if not c.get("hidden") and none in c.get("message", ""):
                c["message"] = c["message"].replace(none, said)
        if self.message and none in self.message:
            self.message = self.message.replace(none, said)

    def _fresh_child(self) -> None:
        """A new child after a forensic re-run broke this one (within the restart budget)."""
        if self.restarts < MAX_RESTARTS:
            try:
                self._restart()
            except ChildFailed:
                pass

    def _record_check(self, result, hidden: bool, full=None) -> None:
        self.state["checks"].append(asdict(result))
        if hidden:
            self.private["hidden_checks"].append(asdict(full or result))

    def _hidden(self) -> None:
        """The hidden configs, last: the child's output goes private from here on."""
        if not self.cfg.hidden_configs or self.library is None or self.options.stop_after == "compile":
            return
        if not self._usable():
            # the child is gone (a crash on the last public config) or its CUDA context is: the
            # hidden configs run in a fresh one, so where a crash happened changes nothing
            if self.restarts >= MAX_RESTARTS or self._device_env is None or self.verdict == "timeout":
                return        # (a kernel that ran out of time is not given the limit again)
            try:
                self._restart()
            except ChildFailed:
                return        # the hidden configs did not run
        self.child.output.private()
        public_audit = dict(self.state.get("audit") or {})
        try:
            self._checks(self.cfg.hidden_configs, hidden=True)
        except ChildFailed as failed:
            self.finish(failed.verdict, "a hidden config: the kernel "
                        + ("took longer than the time limit" if failed.verdict == "timeout"
                           else "crashed or broke a limit (details are withheld on hidden configs)"))
        finally:
            self._withhold_hidden_audit(public_audit)

    def _withhold_hidden_audit(self, public_audit: dict) -> None:
        """The operation audit's counts of the hidden calls are the instructor's: a kernel that
        dispatched S operations on a hidden config would print the hidden S in the student's
        flags. The student's results keep the audit of the public calls; what the hidden calls
        added goes to the private part, and only a strict finding (attention's own compute
        dispatched) reaches the verdict, as one flag without names or counts."""
        from .integrity import STRICT_OPS
        hidden = self.state.get("audit") if isinstance(self.state.get("audit"), dict) else {}
        before = public_audit.get("flagged") if isinstance(public_audit.get("flagged"), dict) else {}
        after = hidden.get("flagged") if isinstance(hidden.get("flagged"), dict) else {}
        added = {str(op)[:200]: n - before.get(op, 0) for op, n in list(after.items())[:200]
                 if isinstance(n, int) and n > before.get(op, 0)}
        self.state["audit"] = public_audit
        if added:
            self.private["audit_hidden"] = added
        if any(STRICT_OPS.match(op) or self.backend == "triton" for op in added):
            self.state["judge_flags"].append({"code": "dispatched_compute", "tier": "strict", "detail": (
                "on a hidden config the kernel dispatched PyTorch compute operations (which ones, and how "
                "often, are withheld with the hidden configs)")})

    def _bench(self) -> None:
        """Every benchmark size: fresh inputs for every timed call, every output checked (CPU: the
        judge's own inputs, a round at a time) or committed to and a few drawn afterwards and
        checked here against float64 (GPU: inputs the judge makes again). A size timed
        on a busy machine or with a wide spread is timed again (at most MAX_RERUNS times) and
        the quietest run kept; `bench_quality` says how it went."""
        from .quality import MAX_RERUNS, summarize
        child = self.child
        kernels = self._bench_kernels = ["sdpa"]
        if self.options.references:
            self.stage("compile-references")
            reply, _ = child.request({"op": "references"}, timeout=self.cfg.timeout_compile * 3)
            refs = self._expect(reply).get("references", {})
            self.state["references"] = refs
            kernels += [n for n, r in refs.items() if isinstance(r, dict) and r.get("ok")]
        rng = random.Random(secrets.randbits(64))
        rows, timing, per_size = [], {}, []
        if self._clean_process is not None and not self._clean_process.ready():
            self._clean_process = None          # said after the benchmark (timing.clean_sdpa)
        for shape in self.cfg.bench_shapes:
            runs = []
            for attempt in range(1 + MAX_RERUNS):
                self.stage("bench", str(shape) + (f" (again: the machine was busy, the timings spread or the "
                                                  f"CPU samples were too few, {attempt}/{MAX_RERUNS})" if attempt else ""))
                run = (self._bench_size_cpu if self.device == "cpu" else self._bench_size)(shape, kernels, rng)
                if run is None:
                    return                      # the kernel raised: the verdict is set
                runs.append(run)
                if not run["quality"]["noisy"]:
                    break
            best = _kept_run(runs)
            recheck = _worst([r["recheck"] for r in runs])
            rows.append({**best["row"], "recheck_max_err": recheck})
            for flag in best.get("clock_flags", []) + _brackets_over_runs(shape.S, runs, best):
                self.state["judge_flags"].append(on_busy(flag, bool(best.get("busy"))))
            timing.setdefault("method_by_S", {})[shape.S] = best["method"]
            timing.setdefault("reps_by_S", {})[shape.S] = best["reps"]
            if best.get("seconds") is not None:    # CUDA: where the size's bench seconds went
                timing.setdefault("bench_seconds_by_S", {})[shape.S] = best["seconds"]
            if best.get("checked_calls") is not None:
                timing.setdefault("checked_calls_by_S", {})[shape.S] = best["checked_calls"]
            if best.get("cpu_samples") is not None:     # CPU: where its time went (grader/judge/cpusample.py)
                timing.setdefault("cpu_samples_by_S", {})[shape.S] = best["cpu_samples"]
            if best.get("sdpa_backend"):
                timing.setdefault("sdpa_backend_by_S", {})[shape.S] = best["sdpa_backend"]
            if "l2_reset" in best:          # CUDA: the persisting-L2 reset found the CUDA runtime (grader/judge/gpu.py)
                timing.setdefault("l2_persisting_reset_by_S", {})[shape.S] = best["l2_reset"]
            per_size.append({**best["quality"], "runs": len(runs),
                             "discarded": [r["quality"]["reasons"][:4] for r in runs if r is not best]})
        self.state["bench"] = rows
        self.state["timing"] = {**_timing_description(self.device, self.cfg, self.threads), **timing}
        from .bench import ROWS_PER_HEAD
        if self.device == "cpu" and self._cpu_observation:
            self.state["timing"]["cpu_observation"] = self._cpu_observation
        if self.device == "cpu" and self._cpu_sampled:
            self.state["timing"]["cpu_sampled"] = self._cpu_sampled
        if self.device == "cpu" and self._cpu_observation and self.options.sandbox:
            # an instructor's grade (the batch's sandbox): said as a flag; a student's own grade on a
            # laptop whose kernel forbids perf events (Debian's, Ubuntu's) has the note in `timing`
            self.state["judge_flags"].append({"code": "cpu_observation", "tier": "review", "detail": (
                "where the kernel's timed calls spent their CPU time could not be sampled here ("
                f"{self._cpu_observation}): compute it ran in torch's code would go unseen (grader/judge/cpusample.py)")})
        if self.device == "cpu":
            self.state["timing"]["checked"] = f"every timed call of the kernel, {ROWS_PER_HEAD} random rows per head"
        else:
            from .gpu import CANARIES, detection
            checked = timing.get("checked_calls_by_S") or {0: 0}
            least = min(checked.values())
            self.state["timing"]["canaries_per_size"] = least
            self.state["timing"]["checked"] = (
                f"canary calls, {CANARIES} per timing method in every request, drawn uniformly over the timed "
                "calls after the process had committed to every output (copied the moment each call ended, a "
                f"digest of each in its reply), on inputs the judge made again, {ROWS_PER_HEAD} random "
                f"rows per head checked: at least {least} a size, so a kernel wrong on 5% of its timed calls "
                f"is caught with probability {detection(least):.1%} or more")
        self.state["bench_quality"] = summarize(per_size, self.cfg, self.device)
        if self.device == "cpu":
            self.stage("roofline", "measuring this CPU's FMA peak and memory bandwidth")
            from ..analysis.roofline import measure_cpu_ceilings
            try:
                with self.child.paused():
                    self.state["ceilings"] = asdict(measure_cpu_ceilings(self.threads))
            except Exception as exc:  # noqa: BLE001 - the report then goes without a CPU roofline
                self.state["ceilings_note"] = f"{type(exc).__name__}: {exc}"[:300]
        if self.device != "cpu" and rows:
            self._clean_sdpa(rows)
        from .integrity import floor_ms
        for row in rows:
            row["floor_ms"] = floor_ms(row["flops"], self.device, self.state.get("system", {}),
                                       self.state.get("ceilings"))
        for row in rows:
            err = row["recheck_max_err"]
            if err is None or not err < self.cfg.tolerance:
                shown = "no usable output" if err is None else f"max_err {err:.3g}"
                self.finish("wrong_answer", f"wrong on the benchmark inputs at S={row['S']} ({shown}); it "
                            "was right on the check configs")
                return

    def _cpu_sampler(self):
        """A started Sampler of the child's threads (grader/judge/cpusample.py), or None where perf
        events cannot be opened here (said once in timing.cpu_observation)."""
        from .cpusample import Sampler, Unavailable, modified_code
        from ..isolation.sandbox import tree_members
        if os.environ.get("GRADER_CPU_SAMPLING", "1") == "0":      # the judge's environment: for measuring its cost
            self._cpu_observation = "not sampled: GRADER_CPU_SAMPLING=0 in the grader's environment"
            return None
        group = self.child.cpu
        sampler, why = None, ""
        if group is not None and group.kind == "cgroup v2":    # every thread, however many (one event a CPU)
            try:
                sampler = Sampler([], group=str(group.path))
            except (Unavailable, OSError) as exc:
                why = f" (the child's cgroup could not be sampled: {exc})"
        try:
            sampler = sampler or Sampler([pid for pid, _, _ in tree_members(self.child.proc.pid)])
        except (Unavailable, OSError) as exc:
            self._cpu_observation = f"not sampled: {exc}{why}"[:300]
            return None
        self._cpu_sampled = sampler.scope
        sampler.layout = self._layout
        sampler.modified = modified_code(pid for pid, _, _ in tree_members(self.child.proc.pid))
        sampler.start()
        return sampler

    def _clean_sdpa(self, rows: list) -> None:
        """(CUDA) SDPA timed again in a clean process of the judge's on the same GPU, the same
        harness and method (grader/judge/baseline.py), the child idle: the row's baseline counts for
        at most GPU_SDPA_CAP times it (cap_baseline), a baseline slowed beyond GPU_SLOWED_REVIEW
        is flagged. Skipped on a busy GPU (the row's timings are noisy: the clean figure would be
        no cleaner); a measurement that fails is said in `timing`, never read as clean."""
        from .baseline import GPU_SDPA_CAP, GPU_SLOWED_REVIEW
        from ..analysis.confidence import scaled
        self.stage("baseline", "SDPA timed in a clean process on the same GPU")
        methods = self.state["timing"].get("method_by_S", {})
        sizes = [{"shape": next(s for s in self.cfg.bench_shapes if s.S == row["S"]).as_dict(),
                  "method": methods.get(row["S"], "events")} for row in rows]
        uuid = str(self.state.get("system", {}).get("gpu_uuid") or "")
        t0 = time.monotonic()
        beside = [n for n in getattr(self, "_bench_kernels", ()) if n not in ("sdpa", "student")]   # as the child timed SDPA
        cached = clean_sdpa_cached(uuid, sizes, beside)
        process = None if cached else (self._clean_process or CleanSdpa())
        try:
            if cached:
                clean, why = cached, ""
            elif process.ready():
                with self.child.paused():       # nothing of the kernel's runs on the CPU meanwhile
                    clean, why = process.measure(uuid, sizes, self._device_env, beside, self.cfg.source)
            else:
                clean, why = None, process.why
        finally:
            if process is not None:
                process.close()
            self._close_clean_sdpa()
            spent = time.monotonic() - t0       # the judge's time, not the kernel's
            self._waited += spent
            if self.child is not None:
                self.child.deadline += spent
        if clean is None:
            self.state["timing"]["clean_sdpa"] = {"error": why}
            return
        self.state["timing"]["clean_sdpa"] = {"sdpa_ms_by_S": clean, "cap": GPU_SDPA_CAP, "beside": beside}
        noisy = self.state.get("bench_quality", {}).get("status") == "noisy"
        for i, row in enumerate(rows):
            ms = clean.get(str(row["S"]))
            base = row.get("sdpa_ms")
            if not ms or not base:
                continue
            row["judge_clock"] = {**(row.get("judge_clock") or {}), "sdpa_ms": ms}
            if base > GPU_SLOWED_REVIEW * ms:
                self.state["judge_flags"].append({"code": "baseline_slowed", "tier": "review", "detail": (
                    f"S={row['S']}: SDPA took {base:.4f} ms a call beside your kernel but {ms:.4f} ms in a clean "
                    f"process on the same GPU ({base / ms:.2f}x): something in your kernel's process slowed the "
                    f"baseline; the slowdown is computed against at most {GPU_SDPA_CAP:g}x the clean SDPA")})
            if noisy:
                continue
            raw, cap = row["slowdown"], GPU_SDPA_CAP * ms
            if base > cap and row.get("student_ms"):
                rows[i] = {**row, "slowdown": row["student_ms"] / cap,
                           "judge_clock": {**row["judge_clock"], "sdpa_capped_ms": cap},
                           "interval": scaled(row.get("interval"), raw, row["student_ms"] / cap)}

    def _bench_size(self, shape: Shape, kernels: list, rng) -> dict | None:
        """Every kernel timed at one size on the GPU: one request of the child's harness
        (grader/judge/gpu.py), then more while the slowdown's interval is not yet precise or
        straddles a tier boundary (grader/analysis/confidence.py), each with canaries of its own; a
        request during which NVML saw the GPU throttled is discarded and counted (the judge's
        own sampling, grader/judge/quality.py `ClockMonitor`). None when the kernel raised (the
        verdict is set)."""
        from .bench import make_row, summarize
        from ..analysis.confidence import MIN_REQUESTS
        from .quality import ClockMonitor, Meter
        uuid = self.state.get("system", {}).get("gpu_uuid")
        meter = Meter(self.child, self.device, uuid)
        monitor = ClockMonitor(uuid)
        # the GPU harness's rounds come a request at a time: no base time, MIN_REQUESTS of them
        rule = self._stopping_rule(base_s=0.0, min_groups=MIN_REQUESTS)
        start = time.monotonic()
        first, samples, errs, reps, discarded, throttled = None, {"student": [], "sdpa": []}, [], 0, [], []
        groups: list[int] = []            # the request each round came from (0, 1, ... in the order kept)
        kept = 0
        # one request of the first MIN_REQUESTS, drawn here, has a round of timed calls watched
        # (grader/judge/launches.py); a request's canaries are checked in a thread while the child
        # times the next
        watched_request, sent = rng.randrange(MIN_REQUESTS), 0
        checker = ThreadPoolExecutor(1)
        pending = []
        spent_in = {"canaries_wait": 0.0, "requests": 0.0, "checks": 0.0}   # the size's seconds, by part
        try:
            while True:
                t0 = time.monotonic()
                # every request times every kernel: SDPA's time depends on what it is interleaved
                # with at small S (grader/judge/baseline.py), so its rounds are all alike, and
                # alike with the clean process's (an H200, 2026-11-27: SDPA beside the student's
                # kernel alone ran 1.10-1.12x the clean SDPA beside the references at S = 64)
                with monitor.window() as health:
                    got = self._bench_request(shape, kernels, rng, watch=sent == watched_request)
                sent += 1
                if got is None:
                    return None
                spent_in["requests"] += got["wall"]
                spent_in["checks"] += time.monotonic() - t0 - got["wall"]
                pending.append(checker.submit(_check_canaries, shape, *got["check"]))
                spent = time.monotonic() - start
                if health.throttled and spent < rule.cap_s:
                    discarded.append(health.reason)
                    continue
                if health.throttled:
                    throttled.append(health.reason)
                monitor.keep(health)
                if first is None:
                    first = got
                elif got["method"] != first["method"]:
                    break                      # rounds of another method are not comparable
                rounds = got["rounds"]
                if not rounds:
                    break                      # a harness without per-round figures: one request
                for name in samples:
                    samples[name] += rounds[name]
                groups += [kept] * len(rounds["student"])
                kept += 1
                reps += got["reps"] or 0
                if not rule.more(samples["student"], samples["sdpa"], time.monotonic() - start, groups):
                    break
            t0 = time.monotonic()
            changed = []
            for job in pending:
                got_errs, got_changed = job.result()
                errs += got_errs
                changed += got_changed
            spent_in["canaries_wait"] += time.monotonic() - t0
        finally:
            checker.shutdown(wait=False, cancel_futures=True)
        if changed:
            self.state["judge_flags"].append({"code": "changed_outputs", "tier": "strict", "detail": (
                f"S={shape.S}: {len(changed)} of the timed outputs the judge drew were not the ones your process "
                "had committed to (their digests differ): outputs rewritten after their calls")})
        if self.observe and sent <= watched_request:   # the size ended before its watched request: said
            self._watched.append({"S": shape.S, "kernels": [], "event_ms": [],
                                  "error": f"S={shape.S}: the size ended before its watched round"})
        meter.wall()
        timings = dict(first["timings"])
        if len(samples["student"]) > len(first["rounds"].get("student", ())):
            try:
                timings.update({n: replace(summarize(v), reps=reps if first["method"] != "graph" else -1)
                                for n, v in samples.items()})
            except Exception as e:  # noqa: BLE001 - the child's figures, checked in _bench_request
                raise ChildFailed("runtime_error", f"the benchmark's rounds are not plausible ({e})") from None
        row = asdict(make_row(shape, timings, None))
        row["interval"] = rule.summary()
        quality = meter.quality(shape, timings, self.cfg)
        quality.update(monitor.summary(discarded))
        if throttled:
            quality["reasons"].append(f"S={shape.S}: timed while the GPU was throttled ({throttled[0]}) until the "
                                      "cap on time per size")
            quality["noisy"] = True
        return {"row": row, "recheck": _worst(errs), "method": first["method"], "reps": reps or first["reps"],
                "sdpa_backend": first["sdpa_backend"], "quality": quality, "l2_reset": first["l2_reset"],
                "checked_calls": len(errs),
                "seconds": {**{k: round(v, 3) for k, v in spent_in.items()}, "sent": sent,
                            "total": round(time.monotonic() - start, 3)}}

    def _bench_request(self, shape: Shape, kernels: list, rng, watch: bool = False) -> dict | None:
        """One request of the GPU harness: its timings, per-round figures and what its canaries'
        check needs (`check`: the arguments of `_check_canaries`); None when the kernel raised
        (the verdict is set). The student's timed calls get counter-based inputs under a key
        drawn here, the reply commits to every output, and only then are the checked calls
        drawn and their outputs asked for (grader/judge/gpu.py); `watch`: a round of this
        request's timed calls runs under the profiler (grader/judge/launches.py)."""
        from .bench import ImplausibleTimings, plausible_timings
        from .gpu import ROUNDS, pick_canaries
        child = self.child
        # one event round whose calls the child runs under the profiler (grader/judge/launches.py)
        watch = rng.randrange(1, ROUNDS) if watch and self.observe else None
        size = shape.B * shape.H * shape.S * shape.D * 4
        key = rng.getrandbits(62)
        t0 = time.monotonic()
        reply, _ = child.request({"op": "bench", "shape": shape.as_dict(), "nonce": rng.getrandbits(62),
                                  "key": key, "kernels": kernels, "observe": self.observe, "watch": watch},
                                 None, timeout=self.cfg.timeout_bench + self.jit_s, max_payload=0)
        wall = time.monotonic() - t0
        reply = self._expect(reply)
        self.state["audit"] = reply.get("audit") if isinstance(reply.get("audit"), dict) else {}
        for report in (reply.get("launches") if isinstance(reply.get("launches"), list) else [])[:4]:
            if isinstance(report, dict):       # untimed calls at this size, observed (grader/judge/launches.py)
                self._launches[False].append(report)
                self._untimed_reports.setdefault(shape.S, []).append(report)
        if self._raised_in_bench(reply, shape):
            return None
        try:
            timings = plausible_timings(reply.get("timings"), set(kernels) | {"student"}, wall)
        except ImplausibleTimings as e:
            raise ChildFailed("runtime_error", str(e)) from None
        self._note_state_changes(reply.get("state_changes"))
        method = str(reply.get("method", ""))[:60]
        commit = _plausible_commit(reply.get("commit"))
        # the calls checked, drawn now that every output is committed to: nothing in the child's
        # process knew which they would be while it ran them
        picked = pick_canaries(shape, _PICKER, method=method)
        back, data = child.request({"op": "reveal", "slots": picked}, None, timeout=self.cfg.timeout_bench,
                                   max_payload=size * len(picked))
        back = self._expect(back)
        returned = back.get("returned") if isinstance(back.get("returned"), list) else []
        check = (key, picked, [commit.get(s, "") for s in picked], returned, data or b"", _PICKER.getrandbits(64))
        extra = reply.get("extra") if isinstance(reply.get("extra"), dict) else {}
        watched = _plausible_watch(extra.get("watched"), watch)
        if watched is not None:
            self._watched.append({**watched, "S": shape.S})
        elif watch is not None:
            self._watched.append({"S": shape.S, "kernels": [], "error": "the timed round to watch was not reported"})
        probe = extra.get("wall_probe_ms")
        seen = any(f["code"] == "async_work" and f["detail"].startswith(f"S={shape.S}:")
                   for f in self.state["judge_flags"])
        # against the event method's time plus the host's launch cost: a synchronised call pays that
        # cost, which graphs and back-to-back event calls hide (Triton's launcher: ~40 µs a kernel, so
        # the course's naive Triton reference was 0.146 ms synchronised vs 0.021 ms by graph on an H200)
        on_stream = timings.get("student_do_bench", timings["student"]).median_ms
        launch = extra.get("launch_ms")
        launch = launch if isinstance(launch, (int, float)) and 0 <= launch < 1e3 else 0.0
        if isinstance(probe, (int, float)) and probe > 2 * on_stream + launch + 0.1 and not seen:
            self.state["judge_flags"].append({"code": "async_work", "tier": "review", "detail": (
                f"S={shape.S}: a call takes {probe:.3f} ms with the device synchronised but "
                f"{on_stream:.3f} ms by the events on the timed stream: work left running "
                "on another stream?")})
        return {"timings": timings, "check": check, "method": method, "wall": wall,
                "rounds": _plausible_rounds(extra.get("rounds"), timings, wall),
                "reps": reply.get("reps") if isinstance(reply.get("reps"), int) else None,
                "sdpa_backend": str(extra.get("sdpa_backend", ""))[:40],
                "l2_reset": extra.get("l2_persisting_reset") is True}

    def _raised_in_bench(self, reply: dict, shape: Shape) -> bool:
        """True (the verdict set) when the child says the kernel raised while benchmarked."""
        if "raised" not in reply:
            return False
        raised = reply["raised"] if isinstance(reply["raised"], dict) else {}
        if self.device != "cpu":
            self._context_broken = True     # a CUDA fault leaves the context unusable: hidden configs restart
        from .check import raised_text
        kind, text = raised_text(raised, self.device == "cuda")
        self.finish(kind, f"attention raised during the benchmark ({shape}): {text}")
        return True

    def _stopping_rule(self, base_s: float, min_groups: int = 0):
        """How many rounds a size gets (grader/analysis/confidence.py): the configured minimum (`base_s`
        of timing, `min_groups` requests), then more until the slowdown's 95% interval is
        within `precision` and clear of every tier boundary, or the cap on time per size."""
        from ..analysis.confidence import CAP_S, RUN_TO_RUN, StoppingRule
        cfg = self.cfg
        backend = "cuda" if self.device == "cuda" else "cpu"
        return StoppingRule(cfg.min_reps, cfg.max_reps, base_s, cfg.precision_cap_s or CAP_S[backend],
                            cfg.precision, cfg.tier_bounds, min_groups, run_to_run=RUN_TO_RUN[backend])

    def _note_state_changes(self, changes) -> None:
        """The StateGuard's reported changes (data from the child), each kept once."""
        self.state.setdefault("state_changes", [])
        for change in (changes if isinstance(changes, list) else [])[:20]:
            if isinstance(change, str) and change[:200] not in self.state["state_changes"]:
                self.state["state_changes"].append(change[:200])

    def _bench_size_cpu(self, shape: Shape, kernels: list, rng) -> dict | None:
        """One timing of every kernel at one size on the CPU, paced and checked by the judge
        (grader/judge/bench.py's module doc): each round on inputs made here and sent just then,
        each call a request of its own whose time is held to the judge's clock, the kernel's output of every round checked on
        random rows; then the harness's cost and SDPA measured in this process. None when the
        kernel raised (the verdict is set)."""
        from .bench import ROWS_PER_HEAD, ImplausibleTimings, make_row, summarize
        from .check import make_inputs, row_error
        from ..analysis.confidence import scaled
        from .quality import Meter
        child = self.child
        names = ["student"] + list(kernels)
        rule = self._stopping_rule(base_s=self.cfg.rep_ms / 1000 * len(names))
        size = shape.B * shape.H * shape.S * shape.D * 4
        deadline = time.monotonic() + self.cfg.timeout_bench
        meter = Meter(child, self.device, None)

        def ask(header: dict, payload=None, max_payload: int = 0) -> tuple[dict, bytes, float] | None:
            t0 = time.monotonic()
            reply, data = child.request(header, payload, timeout=max(1.0, deadline - t0), max_payload=max_payload)
            wall_ms = (time.monotonic() - t0) * 1e3
            reply = self._expect(reply)
            if isinstance(reply.get("audit"), dict):
                self.state["audit"] = reply["audit"]
            return None if self._raised_in_bench(reply, shape) else (reply, data, wall_ms)

        def inputs() -> tuple[tuple, bytes]:
            qkv = make_inputs(shape, rng.getrandbits(62))
            return qkv, b"".join(t.numpy().tobytes() for t in qkv)

        if ask({"op": "bench_begin", "shape": shape.as_dict(), "nonce": rng.getrandbits(62),
                "kernels": kernels}) is None:
            return None
        samples: dict = {n: [] for n in names}
        errs: list = []
        # each round's time on the judge's clock that the kernel's call did not report: every call
        # is a request of its own, so its bracket holds its time whatever its process reports, and
        # time moved out of its call (dropped, or handed to another kernel's) stays in it
        unaccounted: list = []
        held, held_bytes = None, b""    # the inputs the other kernels get (the last the kernel got), and their bytes
        paired: list = []               # each round's kernel's unaccounted time less SDPA's (the same harness work)
        in_calls: list = []             # (reported ms, the CPU samples of its bracket) of each of the kernel's calls
        sdpa_calls: list = []           # the CPU samples of each of SDPA's calls' brackets
        # SDPA timed here too, on a round's own (k, q, v) as the child's SDPA got them, with the child's
        # processes stopped, between the rounds: paired in time with them (SDPA measured once, after
        # the rounds, ran 0.5-1.9x the child's on an honest kernel's grades as the 2-core machine
        # drifted, and the cap cost fused_opt.cpp a tier), and at most ~1/JUDGE_SDPA_EVERY of the time
        judge_sdpa: list = []
        judge_next = 0.0
        sampler = self._cpu_sampler()   # where the child's CPU time goes, sampled from outside
        start = time.monotonic()
        r = 0
        try:
            while rule.more(samples["student"], samples["sdpa"], time.monotonic() - start):
                (q, k, v), payload = inputs()
                times, excess = {}, {}
                sdpa_got, out = None, None
                # one request a call, in the round's rotated order: the student's brings the round's
                # inputs; the others take the last inputs sent (as (k, q, v): another question), which
                # the kernel has already seen, so no call learns anything ahead of its own request
                for name in (names[(r + i) % len(names)] for i in range(len(names))):
                    # every request carries a set's bytes and brings an output's back, so that each
                    # kernel's bracket holds the same harness work (SDPA's: the kernel's twin)
                    if name == "student":
                        (send, held) = (payload, (q, k, v))
                        held_bytes = payload
                    elif held is None:
                        held, held_bytes = inputs()
                        send = held_bytes
                    else:                 # the references take the set the child holds
                        send = held_bytes if name == "sdpa" else None
                    if sampler is not None:
                        sampler.take()            # the samples between requests: nobody's call
                    got = ask({"op": "bench_round", "round": r, "only": name}, send, max_payload=size)
                    window = sampler.take() if sampler is not None else None   # this call's bracket's samples
                    if got is None:
                        return None
                    reply, data, wall_ms = got
                    times.update(round_samples(reply.get("samples"), [name], wall_ms, r))
                    excess[name] = wall_ms - times[name]
                    if name == "student" and window is not None:
                        in_calls.append((times[name], window))
                    if name == "sdpa" and window is not None:
                        sdpa_calls.append(window)
                    if name == "student":
                        out = data if reply.get("returned") is True else None
                    if name == "sdpa":
                        sdpa_got = held
                # the judge's own work after the round's calls, none of it between them (its torch
                # threads still spinning after a check slowed the next call: SDPA's, 0.1 -> 3 ms)
                errs.append(row_error(out, q, k, v, rng, ROWS_PER_HEAD))
                for name, ms in times.items():
                    samples[name].append(ms)
                unaccounted.append(excess["student"])
                paired.append(excess["student"] - excess["sdpa"])
                r += 1
                if time.monotonic() >= judge_next:
                    t0 = time.monotonic()
                    sq, sk, sv = sdpa_got
                    with child.paused():
                        judge_sdpa.append(_sdpa_once(sk, sq, sv, self.threads))
                    spent = time.monotonic() - t0          # the judge's time, not the kernel's
                    child.deadline += spent
                    deadline += spent
                    judge_next = time.monotonic() + JUDGE_SDPA_EVERY * spent
        except ImplausibleTimings as e:
            raise ChildFailed("runtime_error", str(e)) from None
        finally:
            from .cpusample import mapped_code, modified_code
            from ..isolation.sandbox import tree_members
            counts = None
            if sampler is not None:
                try:
                    sampler.stop()
                    counts = sampler.counts(str(self.library))
                    counts.update(_in_calls(sampler, str(self.library), in_calls, sdpa_calls))
                    counts["mapped"] = mapped_code(sampler)
                    counts["modified_code"] = sorted(set(sampler.modified) | set(modified_code(
                        pid for pid, _, _ in tree_members(self.child.proc.pid))))
                finally:
                    sampler.close()
        meter.wall()
        got = ask({"op": "bench_end"})
        if got is None:
            return None
        self._note_state_changes(got[0].get("state_changes"))
        timings = {n: summarize(v) for n, v in samples.items()}
        row = asdict(make_row(shape, timings, None))
        # the harness's cost is measured as the rounds ran (an honest OpenMP kernel's threads still
        # spinning between calls slow both alike); SDPA's clean figure with the kernel's processes
        # stopped: nothing of it runs while the judge times the baseline the cap is taken from
        harness_ms = _harness_here(shape, 1)       # the harness's work of one request: the kernel's call's
        if len(judge_sdpa) < JUDGE_SDPA_MIN:        # a size of few rounds: more samples, after them
            with child.paused():
                judge_sdpa += _sdpa_here(shape, self.threads, rng, JUDGE_SDPA_MIN - len(judge_sdpa))
        sdpa_ms = statistics.median(judge_sdpa)
        clock = {"unaccounted_ms": round(statistics.median(unaccounted), 4), "harness_ms": round(harness_ms, 4),
                 "sdpa_ms": round(sdpa_ms, 4), "paired_ms": round(statistics.median(paired), 4)}
        quality = meter.quality(shape, timings, self.cfg)
        # the cap and the flags hold on a machine other processes left alone (a busy one slows
        # the judge's own SDPA and the kernel's process alike, unevenly); not the spread, which
        # the kernel itself can widen
        busy = _busy(quality)
        raw = row["slowdown"]
        row = {**row, "judge_clock": clock} if busy else cap_baseline({**row, "judge_clock": clock})
        row["interval"] = scaled(rule.summary(), raw, row["slowdown"])
        flags = clock_flags(shape, timings, clock, busy)
        doubt = None
        if counts is not None:
            from .cpusample import judge_samples, thin_brackets
            flags += judge_samples(shape.S, counts, timings["student"].median_ms * len(samples["student"]),
                                   timings["sdpa"].median_ms * len(samples["sdpa"]))
            # few samples pointing at torch, where no strict flag said it already: the size is timed
            # again, such a run is kept last (a kernel that changed its ways once timed again keeps
            # none of its first run's figures) and the doubt is said if nothing settles it
            if not _strict_foreign(flags):
                doubt = thin_brackets(shape.S, counts)
            if doubt:
                quality = {**quality, "noisy": True, "reasons": quality["reasons"] + [doubt]}
        return {"row": row, "clock_flags": flags, "busy": busy, "recheck": _worst(errs), "doubt": doubt,
                "method": "cpu-perf_counter", "reps": r, "sdpa_backend": "", "checked_calls": len(errs),
                "quality": quality, "cpu_samples": counts}

    # -- the result --------------------------------------------------------------------------
    def _judge_launches(self) -> None:
        """Whose GPU kernels the checked calls ran (grader/judge/launches.py): the public calls'
        kernels by name in the results, the hidden calls' in the instructor's part only."""
        if not self.observe and self.device == "cuda":
            self.state["launches"] = {"off": "not observed: GRADER_OBSERVE_LAUNCHES=0 in the grader's environment"}
            return
        if not (self._launches[False] or self._launches[True]):
            return
        from .launches import launch_flags, own_names, summarise
        own = own_names(self.source)
        public = summarise(self._launches[False], own)
        self.state["launches"] = public
        flags = launch_flags(public)
        if self._launches[True]:
            hidden = summarise(self._launches[True], own)
            self.private["launches_hidden"] = hidden
            said = {f["code"] for f in flags}
            flags += [f for f in launch_flags(hidden, hidden=True) if f["code"] not in said]
        if self._watched:
            from .launches import judge_watched, own_count
            untimed = {S: min(own_count(r, own) for r in reports) for S, reports in self._untimed_reports.items()
                       if reports and not any(r.get("error") for r in reports)}
            public["timed"], timed_flags = judge_watched(self._watched, own, untimed)
            said = {f["code"] for f in flags}
            flags += [f for f in timed_flags if f["code"] not in said]
        self.state["judge_flags"] += flags

    def outcome(self) -> tuple[str, str, dict, dict]:
        """(verdict, message, state, isolation) once the grade is over: what the judge
        decided and measured. grader/run.py `finish` makes the GradeResult of it, with what
        only the layers above know (the static scan's and the evidence's flags)."""
        self.close_child()
        self._close_clean_sdpa()               # a grade that ended before its benchmark
        self.stage("done")
        # the hidden phase's time is the instructor's too (a kernel can sleep S ms on a
        # hidden config): the student's stage times stop where the hidden configs begin
        hidden_s = self.state["stage_seconds"].pop("hidden", None)
        if hidden_s is not None:
            self.private["stage_seconds_hidden"] = hidden_s
        self._judge_launches()
        shutil.rmtree(self.libdir, ignore_errors=True)      # the judge's own folder
        if self._temp and not self.keep_workdir:
            from ..isolation.safefs import remove_tree
            remove_tree(self.workdir)           # the children's folders in it: any depth (grader/isolation/safefs.py)
        isolation = {**self.isolation, "output_bytes": self.output_bytes}
        verdict, message = self.verdict or "runtime_error", self.message or "the grade did not finish"
        return verdict, message, self.state, isolation


# The judge's clock against the timed process's figures (`clock_flags`). Measured on the 2-core
# CPU machine with the references (quiet): a round's unaccounted time was 1.0-2.2x the harness's
# own work done here (1.2-1.5 ms vs 0.57 ms at S = 128; 9.2-12.5 vs 9.2-11 ms at S = 1024), hence
# a review flag above UNACCOUNTED_RATIO x that + UNACCOUNTED_SLACK_MS and a strict one above
# UNACCOUNTED_STRICT x that + UNACCOUNTED_STRICT_SLACK_MS (OpenMP threads of another kernel
# still spinning can cost the harness a scheduler tick, ~4 ms, between two calls; a kernel
# 180x slower reporting SDPA's time leaves tens to hundreds of ms a call); SDPA beside an honest OpenMP kernel ran
# 1.0-1.7x its time in the judge's process (fused_opt.cpp at S = 1024: 23.0 vs 13.4 ms, once),
# and up to 18x beside the OpenMP references of a student's own grade (S = 200: 3.1 vs 0.17 ms:
# their threads still spinning take a core for a scheduler tick): so the slowdown is taken
# against at most SDPA_CAP x the judge's SDPA, which makes any slowing of the baseline, honest
# or not, worth nothing, and a slowed baseline is a review flag above SLOWED_REVIEW, never strict.
# The kernel's unaccounted time beside SDPA's (`paired_ms`, the median over rounds of its call's
# less SDPA's in the same round, both requests doing the same harness work): honest kernels
# -0.96 .. +0.84 ms (fused.cpp, fused_opt.cpp, 2-core machine, S = 128-1024, 7 grades, 2026-11-28: the
# widest at S = 1024, a 14-17 ms SDPA call, 13-15 rounds), where the unaccounted time alone was
# 0.7-5.9 ms and its line (below) 2-12 ms: a line of PAIRED_SLACK_MS plus PAIRED_RATIO of SDPA's
# call, charged beyond it; strict beyond PAIRED_STRICT x + 1 ms
PAIRED_SLACK_MS, PAIRED_RATIO, PAIRED_STRICT, PAIRED_STRICT_SLACK_MS = 0.15, 0.06, 3.0, 1.0
# SDPA's requests, though, run in the kernel's process, which can delay them before SDPA's timer
# starts and so make `paired_ms` negative, hiding a shave (held-out, 2026-11-28: SDPA's requests
# 1.35 ms late, the kernel's calls 1.2 ms short, paired -1.43 ms, no flag): below minus
# PAIRED_NEG_SLACK_MS + PAIRED_NEG_RATIO of SDPA's call (honest: down to -0.96 ms beside a 17 ms
# SDPA call), what lies beyond is charged to the kernel and flagged
PAIRED_NEG_SLACK_MS, PAIRED_NEG_RATIO = 0.5, 0.08


def paired_line(sdpa_call_ms: float | None) -> float:
    return PAIRED_SLACK_MS + PAIRED_RATIO * (sdpa_call_ms or 0.0)


def paired_floor(sdpa_call_ms: float | None) -> float:
    """How far below zero `paired_ms` goes for honest kernels (SDPA's requests no slower than theirs)."""
    return -(PAIRED_NEG_SLACK_MS + PAIRED_NEG_RATIO * (sdpa_call_ms or 0.0))


def paired_charge(paired, sdpa_call_ms: float | None) -> float:
    """What `paired_ms` charges the kernel a call: beyond the line above zero, or beyond the
    floor below it (SDPA's requests slowed in its process)."""
    if not isinstance(paired, (int, float)):
        return 0.0
    return max(0.0, paired - paired_line(sdpa_call_ms), paired_floor(sdpa_call_ms) - paired)


UNACCOUNTED_RATIO, UNACCOUNTED_STRICT = 1.5, 3.0
UNACCOUNTED_SLACK_MS, UNACCOUNTED_STRICT_SLACK_MS = 1.5, 20.0
SLOWED_REVIEW = 1.6
SDPA_CAP = 1.25
CLOCK_SLACK_MS = 0.05


def _harness_here(shape: Shape, kernels: int, reps: int = 9) -> float:
    """Median time (ms) of the harness's own work of one request of the kernel's call, done here
    (`kernels`: timers): the inputs through a pipe and into tensors, one copy of their bytes (the
    other kernels'), its output's bytes through a pipe, and the timer. What a call's request
    costs beyond the call, at the least."""
    import threading

    import torch
    n = shape.B * shape.H * shape.S * shape.D
    payload = bytes(12 * n)
    times = []
    for _ in range(reps):
        r, w = os.pipe()
        t0 = time.perf_counter()
        got = bytearray()

        def drain() -> None:
            while len(got) < 16 * n:
                chunk = os.read(r, 1 << 20)
                if not chunk:
                    return
                got.extend(chunk)
        sink = threading.Thread(target=drain, daemon=True)
        sink.start()
        os.write(w, payload)
        kept = bytes(payload)
        flat = torch.frombuffer(bytearray(kept), dtype=torch.float32)
        q, k, v = (flat[i * n:(i + 1) * n].reshape(shape.B, shape.H, shape.S, shape.D) for i in range(3))
        os.write(w, torch.zeros_like(q).contiguous().numpy().tobytes())
        for _ in range(kernels):
            time.perf_counter()
        sink.join()
        times.append((time.perf_counter() - t0) * 1e3)
        os.close(r)
        os.close(w)
    return statistics.median(times)


def clock_flags(shape: Shape, timings: dict, clock: dict, busy: bool = False) -> list[dict]:
    """Strict flags when the timed process's figures disagree with the judge's own clock:
    the kernel's calls took much longer on the judge's clock (a request a call) than it
    reported and the harness's own work of a request can explain (time taken out of the
    kernel's reported calls), or SDPA ran much slower in the
    kernel's process than in the judge's (its baseline slowed, however it was done). `busy`:
    other processes used the machine meanwhile; the details say so, and that no cap was
    applied (`on_busy` makes the flags review)."""
    base, sdpa_ms = timings["sdpa"].median_ms, clock["sdpa_ms"]
    lost, harness = clock["unaccounted_ms"], clock["harness_ms"]
    flags = []
    paired, line = clock.get("paired_ms"), paired_line(sdpa_ms)      # the judge's own SDPA: not the child's figure
    if lost > UNACCOUNTED_RATIO * harness + UNACCOUNTED_SLACK_MS:
        strict = lost > UNACCOUNTED_STRICT * harness + UNACCOUNTED_STRICT_SLACK_MS
        flags.append({"code": "forged_timings", "tier": "strict" if strict else "review", "detail": (
            f"S={shape.S}: your kernel's timed call took {lost:.3f} ms more on the judge's clock than your process "
            f"reported for it, and the harness's own work of a call takes {harness:.3f} ms: time left out of the "
            "reported call (timings rewritten in the timed process: dropped, or handed to another kernel's call)"
            + (BUSY_NOTE if busy else ""))})
    elif isinstance(paired, (int, float)) and paired > line:
        strict = paired > PAIRED_STRICT * line + PAIRED_STRICT_SLACK_MS
        flags.append({"code": "forged_timings", "tier": "strict" if strict else "review", "detail": (
            f"S={shape.S}: your kernel's timed call took {paired:.3f} ms more on the judge's clock beyond what your "
            "process reported than SDPA's did, with the same harness work around each (a request a call, the "
            f"same bytes in and out; honest kernels stay within {line:.3f} ms): time left out of the reported call "
            "(the timer rewritten in the timed process)" + (BUSY_NOTE if busy else ""))})
    elif isinstance(paired, (int, float)) and paired < paired_floor(sdpa_ms):
        flags.append({"code": "forged_timings", "tier": "review", "detail": (
            f"S={shape.S}: SDPA's requests took {-paired:.3f} ms longer beyond its calls than your kernel's did, with "
            f"the same harness work around each (honest kernels: within {-paired_floor(sdpa_ms):.3f} ms): something "
            "in your process delayed the baseline's requests, which would hide time left out of your calls; "
            "what lies beyond is charged to your kernel" + (BUSY_NOTE if busy else ""))})
    if base > SLOWED_REVIEW * sdpa_ms + CLOCK_SLACK_MS:
        flags.append({"code": "baseline_slowed", "tier": "review", "detail": (
            f"S={shape.S}: SDPA took {base:.3f} ms a call beside your kernel but {sdpa_ms:.3f} ms in the "
            f"judge's own process ({base / max(sdpa_ms, 1e-9):.1f}x): something in your kernel's process slowed "
            "the baseline (its allocator, OpenMP's settings, threads left running, ...); "
            + (BUSY_NOTE.lstrip("; ") + ": the slowdown was not capped, the SDPA column is its baseline" if busy else
               f"the slowdown is computed against at most {SDPA_CAP:g}x the judge's SDPA"))})
    return flags


def cap_baseline(row: dict) -> dict:
    """The row with its slowdown held to the judge's clock (CPU; on a machine other processes
    left alone):
    - SDPA's time capped at SDPA_CAP x the judge's own measurement: a baseline slowed in the
      kernel's process (by an attack, or by an honest kernel's OpenMP threads still spinning
      while SDPA runs: up to 1.7x measured beside reference/fused_opt.cpp on the 2-core
      machine) cannot flatter the kernel;
    - the time the kernel's call took beyond what it reported (its request's bracket on the
      judge's clock) and the review line (UNACCOUNTED_RATIO x the harness's cost of a request +
      UNACCOUNTED_SLACK_MS) charged to the kernel's calls: time moved out of its reported
      calls, by whatever rewrote the timer, buys at most that line; and beside SDPA's calls
      (`paired_ms`: the kernel's unaccounted time less SDPA's, round by round, each call a
      request with the same bytes in and out) at most `paired_line`: the larger charge is taken."""
    clock = row.get("judge_clock") or {}
    base, mine, clean = row.get("sdpa_ms"), row.get("student_ms"), clock.get("sdpa_ms")
    if not (base and mine):
        return row
    denominator = min(base, SDPA_CAP * clean) if clean else base
    charged = max(0.0, (clock.get("unaccounted_ms") or 0.0)
                  - (UNACCOUNTED_RATIO * (clock.get("harness_ms") or 0.0) + UNACCOUNTED_SLACK_MS))
    # beside SDPA's call, the same harness work: a tighter line, and a floor (SDPA's requests delayed)
    charged = max(charged, paired_charge(clock.get("paired_ms"), clean or base))
    if denominator == base and not charged:
        return row
    clock = dict(clock)
    if denominator != base:
        clock["sdpa_capped_ms"] = denominator
    if charged:
        clock["charged_ms"] = round(charged, 4)
    return {**row, "slowdown": (mine + charged) / denominator, "judge_clock": clock}


BUSY_NOTE = ("; but the machine was busy while this size was timed (other processes used its cores), so "
             "their load may explain it rather than your kernel")
# Flags whose evidence a busy machine cannot fake: foreign_cpu_time compares where the
# kernel's CPU samples landed (its code or torch's) with its share of the rounds' time, and
# samples are taken per thread's CPU time, so load thins both alike (grader/judge/cpusample.py)
LOAD_PROOF = ("foreign_cpu_time",)


def on_busy(flag: dict, busy: bool) -> dict:
    """A clock flag of the kept run: the judge's clock against its figures is strict on a
    machine other processes left alone; on one still busy after the re-runs, for a person
    to review, except a flag in LOAD_PROOF (on a loaded CI machine, SDPA's own flash kernel
    called straight through lost its strict flag to load alone)."""
    return {**flag, "tier": "review"} if busy and flag.get("code") not in LOAD_PROOF else flag


def _busy(quality: dict) -> bool:
    """Other processes used the machine while timing (the judge's measure, not the spread)."""
    from .quality import BUSY_CORES
    return (quality.get("other_cores_busy") or 0) > BUSY_CORES or bool(quality.get("other_gpu_processes"))


def _plausible_rounds(d, timings: dict, wall_s: float) -> dict:
    """The child's per-round figures of the kernel and SDPA ({} when there are none, or
    they cannot be the rounds its timings summarise: as many as it says, finite, positive,
    their median the reported one, no more time than the request took). Data from the
    timed process, like the timings: the judge's own checks are the canaries and the clock."""
    import math
    if not isinstance(d, dict):
        return {}
    out = {}
    for name in ("student", "sdpa"):
        v = d.get(name)
        if not isinstance(v, list) or not 2 <= len(v) <= 10_000 or not all(
                isinstance(x, (int, float)) and math.isfinite(x) and 0 < x < 1e6 for x in v):
            return {}
        if abs(statistics.median(v) - timings[name].median_ms) > 1e-6 * max(1.0, timings[name].median_ms) \
                or sum(v) > wall_s * 1e3 * 1.05 + 5:
            return {}
        out[name] = [float(x) for x in v]
    return out if len(out["student"]) == len(out["sdpa"]) else {}


_CLEAN_SDPA: dict = {}           # (uuid, sizes) -> (time measured, {S: ms}): a batch's grades share it
CLEAN_SDPA_TTL_S = 600.0
CLEAN_SDPA_TIMEOUT_S = 120.0


def _clean_sdpa_key(uuid: str, sizes: list, beside: list = ()) -> tuple:
    import json
    return uuid, json.dumps(sizes, sort_keys=True), tuple(sorted(beside))


def clean_sdpa_cached(uuid: str, sizes: list, beside: list = ()) -> dict | None:
    """A clean SDPA measurement of these sizes on this GPU, beside the same references, from
    the last CLEAN_SDPA_TTL_S, if any."""
    hit = _CLEAN_SDPA.get(_clean_sdpa_key(uuid, sizes, beside))
    return hit[1] if hit and time.monotonic() - hit[0] < CLEAN_SDPA_TTL_S else None


class CleanSdpa:
    """The judge's clean SDPA process (grader/judge/baseline.py), started when the device phase
    begins so that torch's import overlaps the checks; `ready()` before the benchmark,
    `measure()` after it, `close()` always."""

    def __init__(self):
        import subprocess
        import sys
        self.proc = None
        self.why = ""
        self.is_ready = False
        try:
            self.proc = subprocess.Popen([sys.executable, "-m", "grader.judge.baseline"], stdin=subprocess.PIPE,
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                         cwd=str(REPO_ROOT))
        except OSError as exc:
            self.why = f"the clean SDPA process did not start: {exc}"[:200]

    def ready(self, timeout: float = CLEAN_SDPA_TIMEOUT_S) -> bool:
        """Wait until the process has imported torch (so nothing of it runs while timing)."""
        import select
        if self.is_ready:
            return True
        if self.proc is None or self.proc.stdout is None:
            return False
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        line = self.proc.stdout.readline() if r else ""
        if line.strip() != "ready":
            self.why = "the clean SDPA process did not get ready"
            self.close()
            return False
        self.is_ready = True
        return True

    def measure(self, uuid: str, sizes: list, device_env: dict | None = None, beside: list = (),
                config: str = "") -> tuple[dict | None, str]:
        """({S: SDPA ms}, "") of `sizes` on the GPU `uuid`, interleaved with the course's
        reference kernels `beside` (built with `config`) as the child timed it (kept for
        CLEAN_SDPA_TTL_S, for a batch's grades: `clean_sdpa_cached`), or (None, why);
        `device_env`'s CUDA_VISIBLE_DEVICES is applied in the process before CUDA starts there."""
        import json
        import subprocess
        if self.proc is None or self.proc.poll() is not None:
            return None, self.why or "the clean SDPA process ended early"
        try:
            env = {k: v for k, v in (device_env or {}).items() if k == "CUDA_VISIBLE_DEVICES"}
            out, err = self.proc.communicate(json.dumps({"uuid": uuid, "sizes": sizes, "env": env,
                                                         "beside": list(beside), "config": config}),
                                             timeout=CLEAN_SDPA_TIMEOUT_S)
            doc = json.loads(out.strip().splitlines()[-1]) if self.proc.returncode == 0 else {}
            got = doc["sdpa_ms"] if doc else None
            if doc and sorted(doc.get("beside") or []) != sorted(beside):     # a reference did not build there
                return None, f"the clean SDPA process timed it beside {doc.get('beside')}, not {sorted(beside)}"
        except (subprocess.TimeoutExpired, ValueError, KeyError, IndexError, TypeError, OSError) as exc:
            self.close()
            return None, f"the clean SDPA measurement failed: {type(exc).__name__}"
        if not isinstance(got, dict) or not got or not all(isinstance(v, (int, float)) and v > 0 for v in got.values()):
            return None, "the clean SDPA measurement failed: " + ((err or "").strip().splitlines() or ["no output"])[-1][:200]
        _CLEAN_SDPA[_clean_sdpa_key(uuid, sizes, beside)] = (time.monotonic(), got)
        return got, ""

    def close(self) -> None:
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        try:
            self.proc.communicate(timeout=5)
        except Exception:  # noqa: BLE001 - gone either way
            pass
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                if pipe is not None:
                    pipe.close()
            except Exception:  # noqa: BLE001
                pass


# the checked calls and rows are drawn from the OS's entropy, not the judge's generator, whose
# other draws (keys, nonces) reach the child
_PICKER = secrets.SystemRandom()


def _in_calls(sampler, library: str, calls: list, sdpa_calls: list = ()) -> dict:
    """The sets of the kernel's own calls' bracket samples (every call a request of its own,
    grader/judge/cpusample.py `bracket_sets`): all of them (`in_calls`), those of its faster
    half (`in_fast_calls`: the calls at or below the median, which decide its tier), each
    {own, torch, other}, its calls counted once (`calls_in_torch`: {own, torch} calls), and
    torch's code in its calls beside SDPA's calls (`torch_work`)."""
    from .cpusample import bracket_sets

    def attributed(window) -> dict:
        c = sampler.counts(library, window)       # foreign code and lost samples are torch's in a call
        return {"own": c["own"], "torch": c["torch"] + c["foreign"] + c["lost"], "other": c["other"]}
    return bracket_sets([(ms, attributed(w)) for ms, w in calls], [attributed(w) for w in sdpa_calls])


def _strict_foreign(flags: list) -> bool:
    """A strict `foreign_cpu_time` among these flags: the samples have spoken for this size."""
    return any(f.get("code") == "foreign_cpu_time" and f.get("tier") == "strict" for f in flags)


def _kept_run(runs: list) -> dict:
    """The timing of a size whose figures stand: a quiet one, else the least noisy, a run whose CPU
    samples left a doubt (cpusample.thin_brackets) last of all: a kernel that called torch in the
    faster half of its first timing and its own code once timed again keeps the second's figures."""
    return min(runs, key=lambda r: (r["quality"]["noisy"], bool(r.get("doubt")), r["quality"]["score"]))


def _brackets_over_runs(S: int, runs: list, best: dict) -> list[dict]:
    """The CPU's bracket flag (grader/judge/cpusample.py `in_call_flags`) from the samples of the
    kernel's calls over every timing of this size, where the size was timed more than once and
    the kept run's own flags hold none as strict: every run's calls are the kernel's, and one
    run's samples can fall short of the rule's minimum. Judged twice: the samples of all runs,
    then those of the runs too thin to judge alone (a run with enough samples was judged alone
    already; pooled with thin ones, a load that scrambled its faster half dilutes theirs).
    What lost median_mix its flag in two CI class runs (found 2026-11-28): at S = 64 one run's
    faster half held 1 sample of its own against 22 of torch's, too few, so only a re-timed size
    (its spread above the old 0.5 bar) flagged it, and a loaded machine scrambles which calls
    are the faster half (at S = 256, 102 against 110: review). Such a size is now timed again for
    its samples (cpusample.thin_brackets) and its thin runs are judged together. Pooled samples
    that only doubt (review) are said where the kept run said nothing: beside a process spinning
    the other core, median_mix's runs at S = 64 held 14/22 and 1/17 (own/torch), review pooled,
    and nothing at all was flagged before. Pooled samples still under the rule's minimum yet
    almost none the kernel's own (below BRACKET_STRICT) are review too, and so is a doubt every
    timing left standing: a kernel kept just under the minimum is said, never passed. A strict
    finding of a timing not kept stands too: the kept timing's figures are another run's, but the
    samples said what the kernel's calls ran (a kernel that calls torch only in a timing it makes
    noisy, and computes its own when timed again, is flagged by its first)."""
    from .cpusample import in_call_flags, pooled_sets, thin_but_foreign
    if _strict_foreign(best.get("clock_flags", [])):
        return []
    for run in runs:
        for f in run.get("clock_flags", []) if run is not best else ():
            if f.get("code") == "foreign_cpu_time" and f.get("tier") == "strict":
                return [{**f, "detail": f"{f['detail']} (a timing of this size not kept: {len(runs)} timed)"}]
    kept_said = any(f.get("code") == "foreign_cpu_time" for f in best.get("clock_flags", []))
    found = []
    for thin_only in ((False, True) if len(runs) >= 2 else ()):
        merged = pooled_sets([run.get("cpu_samples") for run in runs], thin_only)
        what = ", each too thin to judge alone" if thin_only else ""
        found += in_call_flags(S, merged, pooled=what) + thin_but_foreign(S, merged, what)
    strict = [f for f in found if f["tier"] == "strict"]
    if strict:
        return strict[:1]
    if kept_said:
        return []
    if found:           # only doubt: for a person
        return found[:1]
    if best.get("doubt"):       # every timing left the doubt standing: said, never passed on it
        return [{"code": "foreign_cpu_time", "tier": "review", "detail": (
            f"{best['doubt']}; timed {len(runs)} times, it stayed so (grader/judge/cpusample.py)")}]
    return []


def _plausible_commit(d) -> dict:
    """The child's commitments ([[slot, digest]]), bounded: slot -> digest, for slots of the
    harness's timed calls and digests of the right form ("" for no output)."""
    from .gpu import DIGEST_BYTES, event_slots, graph_slots
    out: dict = {}
    if not isinstance(d, list):
        return out
    for item in d[:event_slots() + graph_slots()]:
        if isinstance(item, list) and len(item) == 2 and type(item[0]) is int and isinstance(item[1], str) \
                and 0 <= item[0] < event_slots() + graph_slots() \
                and re.fullmatch(f"(?:[0-9a-f]{{{2 * DIGEST_BYTES}}})?", item[1]):
            out.setdefault(item[0], item[1])
    return out


def _check_canaries(shape: Shape, key: int, picked: list, digests: list, returned: list, data: bytes,
                    seed: int) -> tuple[list, list]:
    """(each drawn call's error, the slots whose output was not the one committed to): an
    output is checked only where its bytes have the digest the reply committed to, against
    float64 on the judge's own making of that call's inputs, random rows of every head (rows
    drawn here, after the output arrived: grader/judge/check.py `row_error`). Run in a thread
    while the child times the next request."""
    import random

    from .bench import ROWS_PER_HEAD
    from .check import row_error
    from .gpu import counter_inputs, digest
    rng = random.Random(seed)
    size = shape.B * shape.H * shape.S * shape.D * 4
    errs, changed, offset = [], [], 0
    for i, slot in enumerate(picked):
        if (returned[i] if i < len(returned) else False) is not True or offset + size > len(data):
            errs.append(None)                 # no usable output
            continue
        out = data[offset:offset + size]
        offset += size
        if not digests[i] or digest(out) != digests[i]:
            changed.append(slot)
            errs.append(None)
            continue
        errs.append(row_error(out, *counter_inputs(shape, key, slot), rng, ROWS_PER_HEAD))
    return errs, changed


def _plausible_watch(d, watch: int | None) -> dict | None:
    """The child's report of the watched timed round, bounded (grader/judge/launches.py), or None when
    there is none or it is not of the round asked for."""
    import math
    from .gpu import CALLS, FILL_LAUNCHES, HARNESS_NAMES, WATCHED_KERNELS
    if watch is None or not isinstance(d, dict) or d.get("round") != watch:
        return None
    events = d.get("event_ms")
    kernels = d.get("kernels")
    if not isinstance(events, list) or len(events) != CALLS or not all(
            isinstance(x, (int, float)) and math.isfinite(x) and 0 <= x < 1e6 for x in events) \
            or not isinstance(kernels, list):
        return None
    kept = [{"name": str(k.get("name", ""))[:400], "stream": k.get("stream") if type(k.get("stream")) is int else -1,
             "us": float(k["us"]) if isinstance(k.get("us"), (int, float)) and math.isfinite(k["us"]) else 0.0}
            for k in kernels[:WATCHED_KERNELS] if isinstance(k, dict)]
    error = d.get("error")
    # the harness's own launches between the timed calls (its counter fills and L2 flushes): a
    # few names, at most FILL_LAUNCHES + 1 launches a call in all
    harness = d.get("harness") if isinstance(d.get("harness"), dict) else {}
    harness = dict([(str(n)[:400], c) for n, c in harness.items()
                    if type(c) is int and 0 < c <= CALLS * FILL_LAUNCHES][:HARNESS_NAMES])
    if sum(harness.values()) > CALLS * (FILL_LAUNCHES + 1):
        harness = {}
    return {"kernels": kept, "event_ms": [float(x) for x in events], "truncated": d.get("truncated") is True
            or len(kernels) >= WATCHED_KERNELS, "error": str(error)[:300] if error else None, "harness": harness}


def _worst(errs: list) -> float | None:
    """The largest error; None if a call gave no usable output, NaN if one was not finite."""
    if any(e is None for e in errs):
        return None
    if any(e != e for e in errs):
        return float("nan")
    return max(errs, default=0.0)


def round_samples(d, names: list, wall_ms: float, r: int) -> dict:
    """{name: ms} of one round from the child's reply, held to the judge's clock: every
    kernel asked for, finite and non-negative, and together no more than the round's
    wall time on the judge's clock (the child's perf_counter and the judge's monotonic
    clock are the same clock)."""
    from .bench import ImplausibleTimings
    if not isinstance(d, dict) or set(d) != set(names):
        raise ImplausibleTimings(f"the benchmark's round {r} did not time every kernel")
    out = {}
    for name in names:
        ms = d[name]
        if not isinstance(ms, (int, float)) or isinstance(ms, bool) or not 0 <= ms < 1e9:
            raise ImplausibleTimings(f"the benchmark's round {r} reported {str(ms)[:40]} ms for {name}")
        out[name] = float(ms)
    total = sum(out.values())
    if total > wall_ms + 0.05:
        what = (f"round {r}'s call of {names[0]} took {total:.3f} ms by the process's timer, more than the "
                f"{wall_ms:.3f} ms its request took on the judge's clock") if len(names) == 1 else (
                f"round {r}'s calls add up to {total:.3f} ms, more than the {wall_ms:.3f} ms the round took on "
                "the judge's clock")
        raise ImplausibleTimings(f"the benchmark's times are not plausible: {what}")
    return out


JUDGE_SDPA_EVERY = 9        # the judge's SDPA samples take at most ~1/(1 + this) of a size's timing
JUDGE_SDPA_MIN = 5


def _sdpa_once(q, k, v, threads: int) -> float:
    """One SDPA call's time (ms) in the judge's own process, with the grade's thread count."""
    import torch
    import torch.nn.functional as F
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        t0 = time.perf_counter()
        F.scaled_dot_product_attention(q, k, v)
        return (time.perf_counter() - t0) * 1e3
    finally:
        torch.set_num_threads(before)


def _sdpa_here(shape: Shape, threads: int, rng, reps: int = 5) -> list[float]:
    """Times (ms) of SDPA in the judge's own process, with the grade's thread count, on fresh
    inputs (the child is stopped meanwhile): the baseline no kernel can touch. The first call
    warms up and is not kept."""
    from .check import make_inputs
    q, k, v = make_inputs(shape, rng.getrandbits(62))
    return [_sdpa_once(q, k, v, threads) for _ in range(reps + 1)][1:]


def _import_torch() -> None:
    import torch  # noqa: F401

    from . import check  # noqa: F401


def _source_json(src) -> dict:
    return {"kind": src.kind, "text": src.text, "file": src.file, "line_map": list(src.line_map)}


def _compile_dict(d) -> dict:
    """The child's CompileResult, validated field by field (it is only data)."""
    from ..core.result import CompileResult
    if not isinstance(d, dict):
        raise ChildFailed("runtime_error", "the compile step returned no result")
    fields = CompileResult.__dataclass_fields__
    out = {}
    for name, f in fields.items():
        value = d.get(name, f.default)
        want = {"ok": bool, "seconds": (int, float), "cached": bool}.get(name, str)
        if not isinstance(value, want):
            value = f.default if not isinstance(f.default, type(None)) else None
        out[name] = value[:20000] if isinstance(value, str) else value
    return out


def _safe_library_rel(rel, name: str) -> bool:
    """`<tier>/<name>.so` or `<tier>/<name>_vN.so`: the only shapes a build produces."""
    import re
    return isinstance(rel, str) and re.fullmatch(rf"(proxy|lean|full)/{re.escape(name)}(_v\d+)?\.so", rel) is not None


def _crashed_check(name: str, shape: Shape, hidden: bool, failed: ChildFailed):
    from ..core.result import CheckResult
    message = ("the kernel took longer than the time limit" if failed.verdict == "timeout"
               else f"the kernel crashed: {failed.message}")
    if hidden:
        message = "the kernel crashed or ran past its limit (details are withheld on hidden configs)"
    return CheckResult(config=None if hidden else shape.as_dict(), name=name, max_err=None, passed=False,
                       message=message, hidden=hidden)


def _judge_system(threads: int) -> dict:
    """What the judge itself knows of the machine (the child's description is only data)."""
    from ..core.system import _cpu_name
    import platform
    return {"cpu": _cpu_name(), "cpu_cores": os.cpu_count(), "threads": threads,
            "platform": platform.platform(), "python": platform.python_version()}


def _timing_description(device: str, cfg: Config, threads: int) -> dict:
    if device == "cuda":
        from .gpu import timing_description
        return timing_description()
    from .bench import TIMING_DESCRIPTION
    return {"method": "cpu-perf_counter", "description": TIMING_DESCRIPTION, "warmup_reps": cfg.warmup_reps,
            "min_reps": cfg.min_reps, "max_reps": cfg.max_reps, "threads": threads}


SOURCE_KIND = {"cpu": "cpp", "cuda": "cuda", "triton": "triton"}
TRITON_JIT_S = 60.0
NOT_TIMED_IN_INTERPRETER = ("correct on every config (not timed: without a GPU, Triton's interpreter runs "
                            "the kernel in NumPy on the CPU, one program at a time, thousands of times "
                            "slower than the compiled kernel, so its time says nothing about yours; "
                            "grade on a GPU for the timing)")


def device_of(backend: str) -> str:
    """Where a backend's kernel runs: cuda, or the CPU (C++, and Triton's interpreter)."""
    if backend == "cuda":
        return "cuda"
    if backend == "triton":       # TRITON_INTERPRET=1 asks for the interpreter on a GPU machine too
        from ..core.system import gpu_present
        return "cuda" if os.environ.get("TRITON_INTERPRET") != "1" and gpu_present() else "cpu"
    return "cpu"


def triton_problem(src) -> str:
    """Why a Triton source cannot be loaded, in the compiler-log style (file:line), or ""."""
    import ast
    try:
        tree = ast.parse(src.text)
        compile(tree, src.file, "exec")        # compiled to bytecode, never run
    except SyntaxError as e:
        return f"{src.file}:{src.file_line(e.lineno or 1)}: Python syntax error in _TRITON_SRC: {e.msg}"
    except (ValueError, RecursionError, MemoryError) as e:
        return f"{src.file}: _TRITON_SRC cannot be compiled: {type(e).__name__}"
    if not any(isinstance(s, ast.FunctionDef) and s.name == "attention" for s in tree.body):
        return (f"{src.file}: _TRITON_SRC has no top-level `def attention(q, k, v)`: the grader calls that "
                "function, which launches your Triton kernels and returns the output tensor")
    return ""


def _module_file(name: str) -> str:
    """The name the child imports the Triton source under (the student's file name, made safe)."""
    import re
    stem = re.sub(r"[^A-Za-z0-9_]", "_", name.removesuffix(".py"))[:60] or "kernel"
    return f"{stem}.py"
