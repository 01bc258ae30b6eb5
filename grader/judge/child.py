"""The judge's side of one worker process: spawn it (in the sandbox or not), talk to it
through the channel with a deadline on every request, supervise its limits, and say in
words how it died.

Every request has a timeout on the judge's clock and the submission has a total budget
(`deadline`); a limit breached (memory with the sandbox's tmpfs and memfds counted,
processes, work-folder size and file count) kills the whole process group. Nothing the
child writes can move a deadline: the judge decides which request it is waiting for.
"""
from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from ..isolation.cpugroup import CpuGroup
from ..isolation.channel import ChannelClosed, ChannelError, ChannelTimeout, Endpoint, widen
from ..core.config import REPO_ROOT
from ..isolation.options import GraderError, RunOptions
from ..isolation.safefs import MAX_DEPTH, folder_usage, remove_tree
from ..isolation.sandbox import OutputCap, die_with_parent, tmpfs_bytes, tree_members, tree_usage

OUTPUT_TAIL_LINES = 3
MAX_NOTES = 20


class ChildFailed(Exception):
    """The child stopped answering: `verdict` (timeout, runtime_error) and a message."""

    def __init__(self, verdict: str, message: str):
        super().__init__(message)
        self.verdict, self.message = verdict, message


class Child:
    """One worker process and the judge's side of its channel, supervised: limits measured
    every `poll_s`, the process group killed on a breach, on the total deadline and when
    the judge is done with it."""

    def __init__(self, workdir: Path, options: RunOptions, threads: int, gpu: bool, deadline: float):
        from ..isolation.sandbox import (SANDBOX_UID, SandboxError, bwrap_command, bwrap_path, child_env, prepare_workdir,
                              sandbox_uid)
        self.options, self.limits, self.workdir = options, options.limits, workdir
        self.deadline = deadline
        p2c_r, p2c_w = os.pipe()
        c2p_r, c2p_w = os.pipe()
        widen(p2c_w, c2p_w)
        cmd = [sys.executable, "-m", "grader.judge.worker", str(p2c_r), str(c2p_w)]
        if not gpu:          # no file under /proc opened for writing (grader/isolation/landlock.py)
            cmd.append("--no-proc-writes")
        home, tmp = workdir / "home", workdir / "tmp"
        if workdir.exists() and not remove_tree(workdir):     # a fresh folder, made here (any depth)
            raise GraderError(f"the work folder {workdir} from an earlier child could not be removed")
        for d in (home, tmp):
            d.mkdir(parents=True)
        from ..core.cache import cache_root
        extra = {**options.env, "OMP_NUM_THREADS": str(threads), "GRADER_CACHE": str(cache_root())}
        self.isolation = {"sandbox": "none", "limits": self.limits.as_dict()}
        if options.sandbox:
            bwrap = bwrap_path()
            if bwrap is None:
                raise GraderError("the sandbox needs bubblewrap: install it (apt install bubblewrap) "
                                  "or set GRADER_BWRAP to a bwrap binary")
            extra["GRADER_CACHE"] = str(workdir / "cache")
            extra["GRADER_SHARED_CACHE"] = str(cache_root())
            uid = sandbox_uid()
            prepare_workdir(workdir, uid)
            tmp = Path("/tmp")
            from ..isolation.seccomp import denied_names, program_fd
            seccomp_fd = program_fd(gpu=bool(options.gpu_nodes))   # CUDA's init: bind, listen faked
            try:
                cmd = bwrap_command(bwrap, cmd, workdir, self.limits, tuple(options.hide),
                                    tuple(options.ro_paths) + tuple(_dispatch_build_dirs()),
                                    tuple(options.gpu_nodes), seccomp_fd=seccomp_fd, uid=uid)
            except SandboxError as e:
                raise GraderError(str(e)) from None
            self.isolation = {"sandbox": "bwrap", "bwrap": bwrap, "limits": self.limits.as_dict(),
                              "network": "none", "uid": f"{uid}, its own" if uid != SANDBOX_UID else "unprivileged",
                              "gpu_nodes": list(options.gpu_nodes),
                              "seccomp": (f"{len(denied_names())} system calls refused" if seccomp_fd is not None
                                          else "none (no system-call table for this machine)")}
        env = child_env(extra, home, tmp)
        env["PYTHONPATH"] = str(REPO_ROOT)
        # the child's CPU time with every process it ever starts (grader/isolation/cpugroup.py)
        self.cpu, why = CpuGroup.make()
        self._cpu_last = 0
        self.isolation["cpu_accounting"] = self.cpu.kind if self.cpu else f"process tree ({why})"
        group = self.cpu

        def preexec() -> None:
            die_with_parent()
            if group is not None:
                try:
                    group.enter()
                except OSError:          # refused (a delegation rule): the tree is counted, below
                    pass

        extra_fds = (seccomp_fd,) if options.sandbox and seccomp_fd is not None else ()
        try:
            self.proc = subprocess.Popen(cmd, cwd=workdir if options.sandbox else REPO_ROOT, env=env,
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                         start_new_session=True, preexec_fn=preexec,
                                         pass_fds=(p2c_r, c2p_w) + extra_fds)
        except BaseException:
            if self.cpu is not None:
                self.cpu.remove()
            raise
        finally:
            for fd in extra_fds:
                os.close(fd)
        if self.cpu is not None and self.proc.pid not in self.cpu.members():
            self.cpu.remove(wait_s=0)
            self.cpu = None
            self.isolation["cpu_accounting"] = "process tree (the child could not enter its cgroup)"
        os.close(p2c_r)
        os.close(c2p_w)
        self.chan = Endpoint(c2p_r, p2c_w, nonblocking=True)
        self.output = OutputCap(self.proc.stdout, self.limits.output_bytes)
        self.breach: str | None = None
        self._stop = threading.Event()
        self._watch = threading.Thread(target=self._supervise, daemon=True)
        self._watch.start()

    def _supervise(self) -> None:
        next_disk = 0.0
        while not self._stop.wait(self.limits.poll_s):
            if self.proc.poll() is not None:
                return
            rss, procs = tree_usage(self.proc.pid, self.limits.max_processes)
            tmpfs = 0
            if self.options.sandbox and procs <= self.limits.max_processes:
                tmpfs = tmpfs_bytes([p for p, _, _ in tree_members(self.proc.pid)],
                                    self.limits.tmp_bytes + self.limits.shm_bytes)
            if procs > self.limits.max_processes:     # first: forked copies share their memory
                self.breach = f"started more than {self.limits.max_processes} processes"
            elif rss + tmpfs > self.limits.memory_bytes:
                self.breach = (f"used more than {self.limits.memory_bytes / 2**30:g} GiB of memory "
                               f"({rss / 2**30:.3g} GiB in its processes, {tmpfs / 2**30:.3g} GiB in its "
                               "/tmp and /dev/shm)")
            elif time.monotonic() >= next_disk:
                next_disk = time.monotonic() + 1.0
                # by descriptors, however deep the child went (grader/isolation/safefs.py)
                size, files, deep = folder_usage(self.workdir, self.limits.max_files)
                if size > self.limits.disk_bytes:
                    self.breach = f"wrote more than {self.limits.disk_bytes / 2**30:g} GiB to its work folder"
                elif files > self.limits.max_files:
                    self.breach = f"made more than {self.limits.max_files} files in its work folder"
                elif deep:
                    self.breach = f"made folders more than {MAX_DEPTH} levels deep in its work folder"
            if self.breach is not None:
                self.kill()
                return

    def request(self, header: dict, payload=None, timeout: float = 60.0, max_payload: int = 0,
                on_note=None) -> tuple[dict, bytes]:
        """Send one request and wait for its reply (notes passed to `on_note`), at most
        `timeout` seconds and never past the submission's deadline."""
        deadline = min(time.monotonic() + timeout, self.deadline)
        total_cap = deadline == self.deadline
        try:
            self.chan.send(header, payload, deadline=deadline)
            notes = 0
            while True:
                reply, data = self.chan.recv(deadline=deadline, max_payload=max_payload)
                if reply.get("event") == "note":
                    notes += 1
                    if on_note is not None and notes <= MAX_NOTES:
                        on_note(str(reply.get("text", ""))[:500])
                    continue
                return reply, data
        except ChannelTimeout:
            self.kill()
            raise ChildFailed("timeout", "the whole submission took longer than its time limit" if total_cap
                              else f"took longer than the {timeout:g} s limit") from None
        except ChannelClosed as e:
            try:        # a crashed worker: let bwrap report how it died before anything is killed
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
            self.kill()
            raise ChildFailed("runtime_error", self._death(e)) from None
        except ChannelError as e:                  # it wrote something that is not a frame
            self.kill()
            self.proc.wait()
            tail = self.tail()
            raise ChildFailed("runtime_error", f"the process broke the grader's protocol ({e})"
                              + (f": {tail}" if tail else "")) from None

    def _death(self, error: ChannelError) -> str:
        """Why the child stopped answering, in words: a breach, a signal, an exit status,
        or a broken protocol; with the last lines it printed."""
        self.proc.wait()
        if self.breach:
            return f"the kernel {self.breach} (stopped)"
        rc = self.proc.returncode
        tail = self.tail()
        said = f": {tail}" if tail else ""
        sig = -rc if rc is not None and rc < 0 else (
            rc - 128 if rc is not None and rc > 128 and self.options.sandbox else None)   # bwrap: 128 + N
        if sig is not None:
            name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
            return f"the process crashed with {name}{said}"
        if isinstance(error, ChannelClosed):
            return f"the process exited with status {rc}{said}"
        return f"the process broke the grader's protocol ({error}){said}"

    def tail(self) -> str:
        """The last lines the kernel printed (the assertion text of an abort, say)."""
        self.output.join(0.5)
        lines = [ln.strip() for ln in self.output.text().strip().splitlines() if ln.strip()]
        return " | ".join(lines[-OUTPUT_TAIL_LINES:])[-600:]

    @contextlib.contextmanager
    def paused(self):
        """Every process of the child's tree stopped (SIGSTOP) while the judge measures on its
        own (SDPA in its process, the harness's cost, the roofline, the clean GPU SDPA): a
        thread the kernel left spinning cannot slow the judge's figures (a fresh pair of eyes
        doubled the judge's SDPA time that way, to loosen the cap). Continued after. With a
        cgroup v2 group, the group is frozen: at once, new processes included, and no SIGCONT
        of the kernel's undoes it (a process that forks and exits in a loop outran the
        signals). Else SIGSTOP to every process found, until no new one appears."""
        group = getattr(self, "cpu", None)
        if group is not None:
            if group.freeze(True):
                try:
                    yield
                finally:
                    group.freeze(False)
                return
            group.freeze(False)                      # not frozen in time (or no freezer): signals
        stopped: set[int] = set()
        try:
            for _ in range(4):                       # until no process appears that was not stopped
                members = {pid for pid, _, _ in tree_members(self.proc.pid)}
                members |= set(group.members()) if group is not None else set()   # those that left the tree
                found = [pid for pid in members if pid not in stopped]
                if not found:
                    break
                for pid in found:
                    try:
                        os.kill(pid, signal.SIGSTOP)
                        stopped.add(pid)
                    except (ProcessLookupError, PermissionError):
                        pass
            yield
        finally:
            for pid in stopped:
                try:
                    os.kill(pid, signal.SIGCONT)
                except (ProcessLookupError, PermissionError):
                    pass

    def kill(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        if self.cpu is not None:         # and whatever left the process group
            self.cpu.kill()

    def cpu_ticks(self) -> int:
        """CPU time of the child and everything it started, in clock ticks: from its cgroup,
        else from its process tree now (a process that left the tree is missing there). One
        source for the child's life: a reading of the group that fails repeats the last one,
        never a tree count beside a group count."""
        if self.cpu is None:
            return sum(t for _, _, t in tree_members(self.proc.pid))
        ticks = self.cpu.ticks()
        if ticks is not None:
            self._cpu_last = ticks
        return self._cpu_last

    def close(self) -> None:
        """Ask the child to exit, then kill whatever is left of its process group."""
        if self.proc.poll() is None and self.breach is None:
            try:
                self.request({"op": "exit"}, timeout=5)
            except ChildFailed:
                pass
        self.kill()
        self.proc.wait()
        self._stop.set()
        self.output.join()
        self.chan.close()
        if self.cpu is not None:
            self.cpu.remove()


def _dispatch_build_dirs() -> list[Path]:
    """The binding module's build folder in the shared cache (the sandbox binds it alone)."""
    from ..build.compile import cache_root, dispatch_key
    folder = cache_root() / f"dispatch-{dispatch_key()}"
    return [folder] if folder.is_dir() else []
