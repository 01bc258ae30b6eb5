"""Containment of the child process that runs student code.

Always (every grade, sandbox or not), the parent (`grader.run`) enforces `Limits` on the
child's whole process tree: resident memory, number of processes, size of its work
folder, and the output it may print (kept: the first and last few KiB, the rest counted
and dropped; never parsed). A breach kills the tree and becomes `runtime_error`.

With bubblewrap (`bwrap`, Debian package `bubblewrap`) the child also runs in a
sandbox (`bwrap_command`): new network, PID, IPC and UTS namespaces (no network at
all; killing the sandbox kills every process in it), the whole file system read-only,
a private /tmp, and only its own work folder writable. Folders it must not see (the
other submissions, the batch's output, the instructor's hidden config) are covered by
empty read-only folders. All capabilities are dropped.
"""
from __future__ import annotations

import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path

GiB = 1 << 30


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 16 * GiB      # resident memory of the child's process tree
    max_processes: int = 256          # processes + threads are not counted; processes are
    disk_bytes: int = 4 * GiB         # size of the work folder (builds, temp files)
    output_bytes: int = 16 << 10      # printed output kept (head and tail halves)
    poll_s: float = 0.1               # how often the tree is measured

    def as_dict(self) -> dict:
        return {"memory_bytes": self.memory_bytes, "max_processes": self.max_processes,
                "disk_bytes": self.disk_bytes, "output_bytes": self.output_bytes}


def bwrap_path() -> str | None:
    """The bwrap binary: $GRADER_BWRAP, else `bwrap` on PATH; None when there is none or
    it cannot create namespaces here."""
    path = os.environ.get("GRADER_BWRAP") or shutil.which("bwrap")
    if not path or not os.access(path, os.X_OK):
        return None
    return path if _bwrap_works(path) else None


_WORKS: dict = {}


def _bwrap_works(path: str) -> bool:
    import subprocess
    if path not in _WORKS:
        try:
            proc = subprocess.run([path, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent",
                                   "true"], capture_output=True, timeout=20)
            _WORKS[path] = proc.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _WORKS[path] = False
    return _WORKS[path]


def bwrap_command(bwrap: str, cmd: list[str], workdir: Path, hide: list[Path], gpu: bool) -> list[str]:
    """`cmd` wrapped in a bubblewrap sandbox: read-only root, writable `workdir` only,
    `hide` covered, no network; `gpu` exposes /dev (the NVIDIA device files)."""
    args = [bwrap, "--die-with-parent", "--new-session", "--unshare-all",
            "--ro-bind", "/", "/", "--proc", "/proc"]
    args += ["--dev-bind", "/dev", "/dev"] if gpu else ["--dev", "/dev"]
    args += ["--tmpfs", "/tmp"]
    for path in _needed_under_tmp():           # a venv or checkout that lives in /tmp
        args += ["--ro-bind", path, path]
    covered = []
    for path in hide:
        path = Path(path).resolve()
        if path.is_dir():
            args += ["--tmpfs", str(path)]
            covered.append(str(path))
        elif path.exists():
            args += ["--ro-bind", "/dev/null", str(path)]
    args += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    for path in covered:     # read-only after the work folder (which may lie inside) is mounted
        args += ["--remount-ro", path]
    return args + ["--"] + cmd


def _needed_under_tmp() -> list[str]:
    """Folders the worker needs (the interpreter, its packages, the grader) that the
    private /tmp would cover."""
    import sys

    from .config import REPO_ROOT
    tmp = Path("/tmp").resolve()
    found: list[str] = []
    for p in [sys.prefix, sys.base_prefix, sys.exec_prefix, str(REPO_ROOT), *sys.path]:
        try:
            path = Path(p).resolve()
        except OSError:
            continue
        if path.is_relative_to(tmp) and path != tmp and path.exists():
            top = tmp / path.relative_to(tmp).parts[0]
            if str(top) not in found:
                found.append(str(top))
    return found


def _load_prctl():
    try:
        import ctypes
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


_PRCTL = _load_prctl()     # looked up before any fork: the child only makes the call


def die_with_parent() -> None:
    """preexec_fn: the child gets SIGKILL when the grader dies (even by kill -9), so no
    orphaned worker keeps running or writing. (Linux PR_SET_PDEATHSIG.)"""
    if _PRCTL is not None:
        _PRCTL(1, 9)


# ---- measuring the child's process tree -------------------------------------------------

_SCAN_LOCK = threading.Lock()
_SCAN: tuple[float, dict] = (0.0, {})
SCAN_TTL_S = 0.05      # a batch supervises many children: they share one scan of /proc


def _children_map() -> dict[int, list[tuple[int, int]]]:
    """ppid -> [(pid, rss_pages)] for every process on the machine (one scan of /proc per
    SCAN_TTL_S, shared by all the supervising threads of this process)."""
    global _SCAN
    import time
    with _SCAN_LOCK:
        if time.monotonic() - _SCAN[0] < SCAN_TTL_S:
            return _SCAN[1]
        _SCAN = (time.monotonic(), _scan_proc())
        return _SCAN[1]


def _scan_proc() -> dict[int, list[tuple[int, int]]]:
    tree: dict[int, list[tuple[int, int]]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", "rb") as f:
                stat = f.read().decode(errors="replace")
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2:].split()
        ppid, rss = int(fields[1]), int(fields[21])
        tree.setdefault(ppid, []).append((int(entry.name), rss))
    return tree


PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _pss_bytes(pid: int, rss_pages: int) -> int:
    """Proportional set size: pages shared by n processes count 1/n each, so forked
    copies of one process are not counted n times. Falls back to RSS."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as f:
            for line in f:
                if line.startswith(b"Pss:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return rss_pages * PAGE


def tree_usage(pid: int, max_processes: int | None = None) -> tuple[int, int]:
    """(memory bytes (PSS), number of processes) of `pid` and all its descendants. When
    there are more than `max_processes`, memory is not measured (returned as 0)."""
    tree = _children_map()
    rss_of = {p: r for kids in tree.values() for p, r in kids}
    members, stack, seen = [], [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        members.append(p)
        stack += [c for c, _ in tree.get(p, [])]
    if max_processes is not None and len(members) > max_processes:
        return 0, len(members)
    return sum(_pss_bytes(p, rss_of.get(p, 0)) for p in members), len(members)


def folder_bytes(path: Path) -> int:
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


class OutputCap:
    """Drain a pipe in a thread: keep the first and last `limit/2` bytes, count the rest."""

    def __init__(self, pipe, limit: int):
        self.head, self.tail, self.total = b"", b"", 0
        self.limit = limit
        self._thread = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self._thread.start()

    def _drain(self, pipe) -> None:
        half = self.limit // 2
        for chunk in iter(lambda: pipe.read1(65536), b""):
            self.total += len(chunk)
            if len(self.head) < half:
                take = half - len(self.head)
                self.head += chunk[:take]
                chunk = chunk[take:]
            self.tail = (self.tail + chunk)[-half:]
        pipe.close()

    def text(self, join_timeout: float = 2.0) -> str:
        self._thread.join(join_timeout)
        dropped = self.total - len(self.head) - len(self.tail)
        middle = f"\n... [{dropped} bytes of output dropped] ...\n" if dropped > 0 else ""
        return (self.head + middle.encode() + self.tail).decode("utf-8", "replace")
