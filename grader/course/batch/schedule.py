"""Batch, scheduling: compile slots, device slots and the per-submission pipeline.

Per submission, in its own child process (sandboxed per `policy.py`), in its own work
folder `OUT/.work/<id, made safe>` (`work_folder`): (a) compile, `--jobs` at once on the CPU cores; (b) check +
bench holding one device slot: one GPU (`--gpus`; timings never share a GPU) or, on the
CPU backend, the whole machine (no compile runs while it checks and times; its process
starts beforehand, under a compile slot); (c) the outputs
(`outputs.py`). The reference kernels are timed once per device slot, trusted, outside
the sandbox, so each student's grade times only their kernel and SDPA.
"""
from __future__ import annotations

import hashlib
import json
import os
import queue
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from ...core.config import Config, Deadline, Rubric
from ...core.result import GradeResult, write_json_atomic
from .discover import BatchError, Entry, discover_all, extract_zip, read_timestamps, shard_of, stage, submission_key
from .outputs import course_score, student_folder, with_references, write_gradebook, write_submission
from .policy import hidden_paths, prove_sandbox, sandbox_mode, warn
from .record import setup_from

AHEAD_PER_GPU = 3              # GPU children per GPU: the one timing + those started ahead


@dataclass(frozen=True)
class BatchOptions:
    submissions: Path
    out: Path
    cfg: Config
    rubric: Rubric
    deadline: Deadline | None
    hidden_file: Path | None = None
    config_file: Path | None = None
    jobs: int = 1
    gpus: tuple[int, ...] = ()
    shard: tuple[int, int] = (1, 1)          # K/N, 1-based
    backend: str = "auto"
    sandbox: str = "auto"                    # auto | on | off
    timestamps: Path | None = None
    render_pdf: bool = True
    memory_gb: float = 16.0                  # per submission, resident (grader/isolation/sandbox.py)


# ---- the run --------------------------------------------------------------------------------

def work_folder(out: Path, sid: str) -> Path:
    """A submission's work folder: its id kept to letters, digits and `._-`, with a digest of
    the whole id. The build runs under it, and ninja (torch's extension builds) reads `$` in a
    path as its own escape: a correct kernel handed in as `mallory$(id).py` failed to compile."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", sid)[:60].lstrip(".") or "_"
    return out / ".work" / f"{safe}-{hashlib.sha256(sid.encode('utf-8', 'surrogateescape')).hexdigest()[:10]}"


def _slot_backend(slot: str) -> str:
    """"gpuN" slots grade CUDA submissions, the "cpu" slot CPU ones."""
    return "cuda" if slot.startswith("gpu") else "cpu"


def _slot_env(slot: str) -> dict:
    """The child's view of the devices: its one GPU (devices.py: Slurm's choice kept), or none."""
    from .devices import child_env
    return child_env(int(slot[3:])) if slot.startswith("gpu") else {"CUDA_VISIBLE_DEVICES": ""}


class Batch:
    def __init__(self, opts: BatchOptions, log=print):
        self.opts = opts
        self.log = log
        self.out = opts.out.resolve()
        self.cfg = opts.cfg
        self.compile_slots = threading.Semaphore(max(1, opts.jobs))
        # GPU lanes: per GPU, the children alive at once (one timing, the others started
        # ahead: a start takes ~3-8 s, loaded; with two GPUs a GPU frees every ~3 s)
        self.lanes: dict[str, int] = {f"gpu{g}": 0 for g in opts.gpus}
        self.lane_cv = threading.Condition()
        self.gpu_locks = {f"gpu{g}": threading.Lock() for g in opts.gpus}
        self.gpu_uuids: dict[str, str] = {}
        # device slots by backend: "gpuN" take CUDA submissions, "cpu" the CPU ones
        self.devices: dict[str, queue.Queue] = {"cuda": queue.Queue(), "cpu": queue.Queue()}
        self.pending_refs = 0
        self.ref_errors: list[str] = []
        self.references: dict[str, dict] = {}
        self.sandbox = sandbox_mode(opts.sandbox, warn)
        self.done = 0
        self.lock = threading.Lock()
        self.started = time.monotonic()
        self._grading_setup = None

    # -- setup -------------------------------------------------------------------------
    def _backend(self, sub) -> str:
        """The backend a submission is graded with (cuda if it can and a GPU is asked for)."""
        from ...run import choose_backend
        return choose_backend(sub, self.opts.backend)[0]

    # -- reference run, once per slot ---------------------------------------------------------
    def _reference_run(self, slot: str, backend: str) -> dict:
        from ...run import RunOptions, grade
        ref = {"cuda": "reference/fused.cu", "cpu": "reference/fused.cpp"}[backend]
        from ...core.config import REPO_ROOT
        from ...core.cache import cache_root
        env = {"TRITON_CACHE_DIR": str(cache_root() / "triton"), **_slot_env(slot)}
        t0 = time.monotonic()
        result = grade(REPO_ROOT / ref, self.cfg, backend=backend,
                       options=RunOptions(env=env, references=True))
        doc = result.to_json()
        write_json_atomic(self.out / "references" / f"{slot}.json", doc)
        if result.verdict != "ok":
            raise BatchError(f"the reference run on {slot} failed ({result.verdict}: {result.message}); "
                             "fix the machine before grading (see OUT/references/)")
        self.log(f"reference run on {slot}: {ref} ok ({time.monotonic() - t0:.0f} s); "
                 + ", ".join(f"S={b['S']}: SDPA {b['sdpa_ms']:.4g} ms, fused {b['fused_ms']:.4g} ms"
                             for b in doc["bench"]))
        return doc

    # -- one submission -------------------------------------------------------------------
    def grade_one(self, entry: Entry, key: str, source: Path, backend: str):
        """Compile (a compile slot), then check and bench (the device): two children, each
        in the sandbox. Returns (results document, the Judge: its outputs and private part)."""
        from ...build.parse import parse
        from ...run import Judge, RunOptions, choose_backend, finish
        from ...isolation.sandbox import Limits
        workdir = work_folder(self.out, entry.id)
        if workdir.exists():
            from ...isolation.safefs import remove_tree
            remove_tree(workdir)                 # what an earlier run's children left, any depth
        workdir.mkdir(parents=True, exist_ok=True)
        sub = parse(source)
        reason = choose_backend(sub, self.opts.backend)[1]
        options = RunOptions(workdir=workdir, sandbox=self.sandbox, hide=hidden_paths(self.opts),
                             limits=Limits(memory_bytes=int(self.opts.memory_gb * 2**30)), references=False,
                             env={"CUDA_VISIBLE_DEVICES": ""})
        judge = Judge(sub, self.cfg, backend, reason, options)
        slot = ""
        try:
            with self.compile_slots:                # a. compile, --jobs at once, no GPU
                go_on = judge.compile()
                judge.close_child()
            if go_on:                               # b. check + bench on one device
                judge.stage("queued")               # (its turn: a lane, the CPU, the slot's references)
                slot = self._run_on_gpu(judge) if judge.device == "cuda" else self._run_on_cpu(judge)
        finally:
            result = finish(judge)
        return with_references(result, self.references.get(slot), slot), judge

    def _run_on_cpu(self, judge) -> str:
        """A CPU submission's child is started ahead too (RunOptions.gate): it loads Python,
        torch and the binding module (~4-9 s of CPU work, so under a compile slot, never while
        another submission is timed), then takes the CPU slot and every compile slot with it
        for its checks, benchmark and hidden configs. Started after taking them, that load
        was 4-9 s of the batch's serial part a submission. Until the gate no code of the
        submission has run in it (its library is loaded after: `Judge._open_device`)."""
        n = max(1, self.opts.jobs)
        held = {"prepare": True, "slot": None, "exclusive": 0}

        def gate() -> dict:
            self.compile_slots.release()            # the start is done: CPU work ends here
            held["prepare"] = False
            held["slot"] = self._take_device("cpu")
            for _ in range(n):
                self.compile_slots.acquire()
                held["exclusive"] += 1
            return {}
        self.compile_slots.acquire()
        judge.options = replace(judge.options, gate=gate)
        try:
            judge.run_device()
            judge.close_child()
        finally:
            for _ in range(held["exclusive"]):
                self.compile_slots.release()
            if held["prepare"]:
                self.compile_slots.release()
            if held["slot"] is not None:
                self.devices["cpu"].put(held["slot"])
        return held["slot"] or "cpu"

    def _run_on_gpu(self, judge) -> str:
        """A GPU submission's child is started before its GPU is free: it loads Python,
        torch and the binding module (~3 s, CPU only) while the GPU is busy, and gets the
        GPU when it frees (RunOptions.gate). Each GPU is a lane of at most AHEAD_PER_GPU
        children (one timing, the others waiting); a child is placed in a lane when it
        starts, so its sandbox holds only that GPU's device nodes."""
        from ...isolation.sandbox import gpu_device_nodes
        slot = self._acquire_lane()
        held = []
        uuid = self.gpu_uuids.get(slot, "")

        def gate() -> dict:
            self.gpu_locks[slot].acquire()
            held.append(slot)
            return {"GRADER_GPU_UUID": uuid}
        visible = uuid or _slot_env(slot)["CUDA_VISIBLE_DEVICES"]
        judge.options = replace(judge.options, gate=gate,
                                env={"CUDA_VISIBLE_DEVICES": visible, "PYTORCH_NVML_BASED_CUDA_CHECK": "1"})
        try:
            judge.run_device(gpu_nodes=tuple(gpu_device_nodes(visible)) if self.sandbox else ())
            judge.close_child()
        finally:
            if held:
                self.gpu_locks[slot].release()
            self._release_lane(slot)
        return slot

    def _acquire_lane(self) -> str:
        """The GPU slot with the fewest children (waits while every ready lane is full)."""
        with self.lane_cv:
            while True:
                ready = [s for s in self.lanes if s in self.references]
                free = [s for s in ready if self.lanes[s] < AHEAD_PER_GPU]
                if free:
                    slot = min(free, key=lambda s: self.lanes[s])
                    self.lanes[slot] += 1
                    return slot
                if self.pending_refs == 0 and not ready:
                    raise BatchError("no GPU could run the reference kernels: " + "; ".join(self.ref_errors))
                self.lane_cv.wait(0.5)

    def _release_lane(self, slot: str) -> None:
        with self.lane_cv:
            self.lanes[slot] -= 1
            self.lane_cv.notify_all()

    @contextmanager
    def _exclusive_if_cpu(self, slot: str):
        """On the CPU slot, hold every compile slot: no compiler (or report render) runs
        while the CPU is being timed. GPU slots need nothing."""
        n = max(1, self.opts.jobs) if slot == "cpu" else 0
        for _ in range(n):
            self.compile_slots.acquire()
        try:
            yield
        finally:
            for _ in range(n):
                self.compile_slots.release()

    def finish_one(self, entry: Entry, key: str, result: GradeResult, seconds: float, judge=None) -> dict:
        doc = result.to_json() if isinstance(result, GradeResult) else result
        # batch.json sits in the student's folder: its time leaves the hidden phase out (a
        # kernel can sleep S ms on a hidden config); the instructor's copy has that time
        hidden_s = (judge.private.get("stage_seconds_hidden") or 0.0) if judge is not None else 0.0
        record = {"submission": entry.id, "key": key, "verdict": doc["verdict"],
                  "seconds": round(max(0.0, seconds - hidden_s), 2), "source": str(entry.path)}
        # rendering is CPU work, like compiling: it takes a compile slot, so it never runs
        # while a CPU submission is being timed (that holds every slot)
        private = None
        if judge is not None:
            private = {**judge.private, "submission": entry.id,
                       "hidden_checks": judge.private.get("hidden_checks", []),
                       "output_hidden_configs": judge.output_private, "seconds": round(seconds, 2)}
        return write_submission(student_folder(self.out, entry.id), work_folder(self.out, entry.id), doc, record,
                                self.opts.render_pdf, self.compile_slots, self.log,
                                output=judge.output_public if judge is not None else None,
                                private=private, private_folder=self.out / "instructor",
                                score=lambda d: course_score(self.out, entry.id, d, self._setup()),
                                hidden_s=hidden_s)

    def _setup(self):
        """What the gradebook scores with (its rubric, hidden count, deadline, times), so the
        PDF written now shows the score the gradebook will give."""
        with self.lock:
            if self._grading_setup is None:
                opts = self.opts
                try:
                    stamps = read_timestamps(self._timestamps_file())
                except BatchError:
                    stamps = {}        # the gradebook's rebuild says why, and re-renders the PDF
                self._grading_setup = setup_from(opts.cfg, opts.rubric, opts.deadline, stamps, opts.shard)
            return self._grading_setup

    # -- the whole batch -----------------------------------------------------------------
    def run(self) -> dict:
        from ...build.parse import parse
        opts = self.opts
        found, skipped_names = discover_all(opts.submissions)
        entries = shard_of(found, *opts.shard)
        self.out.mkdir(parents=True, exist_ok=True)
        times = self._timestamps_file()
        if times is not None and times.is_file():
            try:
                read = f"{len(read_timestamps(times))} submission times read from it (lateness)"
            except BatchError as e:
                read = f"not read: {e}"
            skipped_names = [f"{times.name}: the timestamps file, {read}" if line.startswith(f"{times.name}: not a")
                             and times.parent.resolve() == opts.submissions.resolve() else line for line in skipped_names]
            self.log(f"timestamps: {times}: {read}")
        if skipped_names:
            (self.out / "not_graded.txt").write_text("".join(f"{line}\n" for line in skipped_names))
            self.log(f"{len(skipped_names)} name(s) in {opts.submissions} not graded (OUT/not_graded.txt): "
                     + "; ".join(skipped_names[:3]) + (" ..." if len(skipped_names) > 3 else ""))
        k, n = opts.shard
        self.log(f"batch: {len(entries)} submission(s) in {opts.submissions}"
                 + (f" (shard {k}/{n})" if n > 1 else "") + f" -> {self.out}; "
                 f"sandbox: {'bwrap' if self.sandbox else 'NONE'}; jobs {opts.jobs}; "
                 f"devices: {', '.join(f'GPU {g}' for g in opts.gpus) or 'CPU'}")
        todo, skipped = [], 0
        for e in entries:
            error, source, backend = None, None, "none"
            try:
                source = self._unpack(e)
                sub = parse(source)
                if sub.ok:
                    backend = self._backend(sub)
            except Exception as err:  # noqa: BLE001 - a bad zip, GraderError: this student's problem
                error = str(err)
            if error is None:
                from ...judge.judge import device_of        # triton: the GPU or its interpreter, graded apart
                key = submission_key(source, self.cfg, backend if backend != "triton" else f"triton-{device_of(backend)}")
            else:
                try:       # never read (or follow) what could not be staged: its lstat is the key
                    st = os.lstat(e.path)
                    seen = f"{st.st_mode}|{st.st_size}|{st.st_mtime_ns}"
                except OSError:
                    seen = "gone"
                key = "invalid-" + hashlib.sha256(f"{seen}|{error}".encode()).hexdigest()[:16]
            if self._complete(e, key):
                skipped += 1
                continue
            todo.append((e, key, source, backend, error))
        if skipped:
            self.log(f"{skipped} submission(s) unchanged since their last grade: skipped")
        from ...judge.judge import device_of       # cpu, cuda, and triton: on the GPU, or its interpreter on the CPU
        backends = {device_of(t[3]) for t in todo if t[3] in ("cpu", "cuda", "triton")}
        slots = [f"gpu{g}" for g in opts.gpus] if "cuda" in backends else []
        if "cpu" in backends or not slots:
            slots.append("cpu")
        if "cuda" in backends and not opts.gpus:
            raise BatchError("some submissions are graded on CUDA: pass --gpus (e.g. --gpus 0)")
        if backends and self.sandbox:
            from ...isolation.sandbox import Limits
            prove_sandbox(self.out, hidden_paths(opts), Limits(memory_bytes=int(opts.memory_gb * 2**30)), self.log)
        if backends:
            self._prepare(slots)
        total = len(todo)
        with ThreadPoolExecutor(max_workers=max(1, opts.jobs) + len(slots)) as pool:
            futures = {pool.submit(self._one, *t): t[0] for t in todo}
            for fut in as_completed(futures):
                record = fut.result()
                self._progress(record, total)
        rows = write_gradebook(self.out, [e.id for e in entries], opts.cfg, opts.rubric, opts.deadline,
                               read_timestamps(self._timestamps_file()), render_pdf=opts.render_pdf,
                               shard=opts.shard)
        return {"graded": total, "skipped": skipped, "rows": rows,
                "seconds": round(time.monotonic() - self.started, 1)}

    def _timestamps_file(self) -> Path | None:
        if self.opts.timestamps:
            return self.opts.timestamps
        if self.opts.deadline:
            return self.opts.submissions / self.opts.deadline.timestamps
        return None

    def _prepare(self, slots: list[str]) -> None:
        """Build the shared binding module (the compile children need it), pin the CUDA
        arch, then time the references on every slot in the background: a slot takes
        submissions once its own reference run is done, and compiling starts at once."""
        import subprocess
        from ...core.config import REPO_ROOT
        proc = subprocess.run([sys.executable, "-c", "from grader.build import compile; compile.prepare()"],
                              cwd=REPO_ROOT, capture_output=True, text=True)
        if proc.returncode != 0:
            raise BatchError(f"building the grader's binding module failed: {proc.stderr.strip()[-500:]}")
        gpu_slots = [s for s in slots if s.startswith("gpu")]
        from ...core.system import _nvidia_smi
        self.gpu_uuids = {s: _slot_env(s)["GRADER_GPU_UUID"] for s in gpu_slots}
        if gpu_slots and self.cfg.cuda_arch == "auto":     # compile children see no GPU: pin the arch
            cap = (_nvidia_smi("compute_cap", gpu=self.gpu_uuids[gpu_slots[0]] or None) or [""])[0]
            if cap:
                self.cfg = replace(self.cfg, cuda_arch=cap)
        self.pending_refs = len(slots)

        def reference(slot: str) -> None:
            try:
                with self._exclusive_if_cpu(slot):   # the CPU reference is timed with no compiler running
                    self.references[slot] = self._reference_run(slot, _slot_backend(slot))
                self.devices[_slot_backend(slot)].put(slot)
            except Exception as e:  # noqa: BLE001 - reported; the slot is not used
                self.ref_errors.append(f"{slot}: {e}")
                self.log(f"reference run on {slot} failed: {e}")
            finally:
                with self.lock:
                    self.pending_refs -= 1
        for slot in slots:
            threading.Thread(target=reference, args=(slot,), daemon=True).start()

    def _take_device(self, backend: str) -> str:
        """A device slot of `backend` whose reference run succeeded (waits for one)."""
        while True:
            try:
                return self.devices[backend].get(timeout=0.5)
            except queue.Empty:
                with self.lock:
                    hopeless = self.pending_refs == 0 and self.devices[backend].empty() and not any(
                        _slot_backend(s) == backend for s in self.references)
                if hopeless:
                    raise BatchError("no device could run the reference kernels: "
                                     + "; ".join(self.ref_errors))

    def _unpack(self, e: Entry) -> Path:
        """The submission as the batch grades it: a copy under OUT/.src/<id> (a zip unpacked,
        a folder or .py copied without following links), never the class folder itself."""
        if e.kind == "invalid":
            raise ValueError(e.problem)
        if e.kind == "zip":
            return extract_zip(e.path, self.out / ".src" / e.id)
        return stage(e, self.out / ".src" / e.id)

    def _complete(self, e: Entry, key: str) -> bool:
        folder = student_folder(self.out, e.id)
        try:
            record = json.loads((folder / "batch.json").read_text())
        except (OSError, ValueError):
            return False
        return record.get("key") == key and (folder / "results.json").is_file()

    def _one(self, e: Entry, key: str, source: Path | None, backend: str, error: str | None) -> dict:
        from ...build.parse import Submission
        from ...run import _result, grade
        t0 = time.monotonic()
        try:
            if error is not None:
                sub = Submission(path=str(e.path), name=e.id, file=None, sources={}, error=error)
                result = _result(sub, self.cfg, "none", "the submission could not be read",
                                 "invalid_submission", error)
            elif backend == "none":
                result = grade(source, self.cfg)        # parse error: no child is started
            else:
                result, judge = self.grade_one(e, key, source, backend)
                return self.finish_one(e, key, result, time.monotonic() - t0, judge)
            return self.finish_one(e, key, result, time.monotonic() - t0)
        except Exception as exc:  # noqa: BLE001 - one submission never stops the batch
            import traceback
            self.log(f"grader error on {e.id}: {exc}\n{traceback.format_exc()[-2000:]}")
            return self._grader_error_row(e, key, f"{type(exc).__name__}: {exc}", time.monotonic() - t0)

    def _grader_error_row(self, e: Entry, key: str | None, error: str, seconds: float) -> dict:
        """A row with status grader_error for a submission the grader failed on (its
        outputs written like any other, so the gradebook shows it; never resumed as done)."""
        from ...build.parse import Submission
        from ...run import _result
        sub = Submission(path=str(e.path), name=e.id, file=None, sources={}, error=error)
        result = _result(sub, self.cfg, "none", "the grader failed", "grader_error",
                         f"grader error (not the student's fault): {error}"[:1000])
        try:
            # key None: a re-run grades it again
            return self.finish_one(e, None, result, seconds)
        except Exception as exc:  # noqa: BLE001 - even the outputs failed: the log has it
            self.log(f"grader error on {e.id}: could not write its outputs either: {exc}")
            return {"submission": e.id, "verdict": "grader_error", "seconds": round(seconds, 1), "key": None}

    def _progress(self, record: dict, total: int) -> None:
        with self.lock:
            self.done += 1
            elapsed = time.monotonic() - self.started
            eta = elapsed / self.done * (total - self.done)
            width = 20
            bar = "#" * round(width * self.done / max(total, 1))
            self.log(f"[{bar:<{width}}] {self.done:>3}/{total} ETA {_fmt_s(eta)} | {record['submission']:<20} "
                     f"{record['verdict']:<18} {record['seconds']:6.1f} s")


def _fmt_s(s: float) -> str:
    s = int(s)
    return f"{s // 60}m{s % 60:02d}s"
