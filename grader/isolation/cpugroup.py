"""The CPU time of one child and of every process it ever started, from a cgroup of its own.

The judge tells a quiet machine from a busy one by the machine's busy clock ticks less its
own and the child's (grader/judge/quality.py). Counted from the child's process tree, a
process that leaves the tree takes its CPU time with it: a helper reaped automatically
(SIGCHLD ignored) never reaches its parent's `cutime`, so a kernel could start helpers
that spin while SDPA runs and have them read as other processes' load, which turns the
judge's clock flags to review and the SDPA cap off. A cgroup counts every process in it,
exited ones included, and no process leaves it without write access to the cgroup tree,
which the sandbox does not give. The child enters the group between fork and exec, before
any of its code runs.

cgroup v2 (`cpu.stat` usage_usec, its core accounting, present without any controller) is
tried first, then v1's cpuacct (`cpuacct.usage`). Creating a group needs write access to
the judge's own cgroup (root, or a delegated subtree); where none can be made, `make`
returns None with the reason and the judge counts the process tree as before.
"""
from __future__ import annotations

import itertools
import os
import time
from pathlib import Path

PREFIX = "grader-child"
_COUNTER = itertools.count()


def _mounts() -> list[tuple[str, str, str, str]]:
    """(root, mount point, fstype, super options) of every cgroup mount (/proc/self/mountinfo)."""
    found = []
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                fields, tail = left.split(), right.split()
                if len(fields) >= 5 and len(tail) >= 3 and tail[0] in ("cgroup", "cgroup2"):
                    found.append((fields[3], fields[4].replace("\\040", " "), tail[0], tail[2]))
    except OSError:
        pass
    return found


def _own_paths() -> dict[str, str]:
    """This process's cgroup per hierarchy: "" for v2, the controller list for v1."""
    paths = {}
    try:
        with open("/proc/self/cgroup") as f:
            for line in f:
                parts = line.rstrip("\n").split(":", 2)
                if len(parts) == 3:
                    paths[parts[1]] = parts[2]
    except OSError:
        pass
    return paths


def _inside(mount_root: str, mount_point: str, path: str) -> Path | None:
    """The folder of cgroup `path` under a mount of the hierarchy whose root is `mount_root`."""
    if path != mount_root and not path.startswith(mount_root.rstrip("/") + "/"):
        return None
    return Path(mount_point) / path[len(mount_root):].lstrip("/")


def _candidates() -> list[tuple[str, Path, str]]:
    """(kind, parent folder, usage file) where a group could be made, v2 first."""
    own, out = _own_paths(), []
    for root, point, fstype, opts in _mounts():
        if fstype == "cgroup2" and "" in own:
            parent = _inside(root, point, own[""])
            if parent is not None:
                out.append(("cgroup v2", parent, "cpu.stat"))
    for root, point, fstype, opts in _mounts():
        # cpuacct alone: mounted with `cpu` (the common `cpu,cpuacct`), a group of its own would
        # also be a CFS group, weighing the child's threads as one process against the rest
        if fstype == "cgroup" and "cpuacct" in opts.split(",") and "cpu" not in opts.split(","):
            key = next((k for k in own if "cpuacct" in k.split(",")), None)
            parent = _inside(root, point, own[key]) if key is not None else None
            if parent is not None:
                out.append(("cgroup v1 cpuacct", parent, "cpuacct.usage"))
    return out


class CpuGroup:
    """One child's cgroup: `enter` (run in the child before exec), `ticks`, `kill`, `remove`."""

    def __init__(self, kind: str, path: Path, usage: str):
        self.kind, self.path, self.usage = kind, path, usage

    @classmethod
    def make(cls) -> tuple[CpuGroup | None, str]:
        """A fresh group, or None and why none could be made."""
        why = "no cgroup hierarchy with CPU accounting is mounted"
        for kind, parent, usage in _candidates():
            _sweep(parent)
            path = parent / f"{PREFIX}-{os.getpid()}-{next(_COUNTER)}"
            try:
                try:
                    path.mkdir()
                except FileExistsError:        # left by a judge killed with its pid, now reused
                    path.rmdir()
                    path.mkdir()
            except OSError as e:
                why = f"{kind}: cannot make a group in {parent} ({e.strerror or e})"
                continue
            group = cls(kind, path, usage)
            if group.ticks() is None or not (path / "cgroup.procs").exists():
                group.remove()
                why = f"{kind}: the group has no {usage}"
                continue
            return group, ""
        return None, why

    def enter(self) -> None:
        """preexec_fn: move the calling process (the forked child, before exec) into the group."""
        fd = os.open(self.path / "cgroup.procs", os.O_WRONLY)
        try:
            os.write(fd, b"0")
        finally:
            os.close(fd)

    def members(self) -> list[int]:
        try:
            return [int(x) for x in (self.path / "cgroup.procs").read_text().split()]
        except (OSError, ValueError):
            return []

    def ticks(self) -> int | None:
        """CPU time of every process that ever ran in the group, in clock ticks."""
        hz = os.sysconf("SC_CLK_TCK")
        try:
            text = (self.path / self.usage).read_text()
        except OSError:
            return None
        try:
            if self.usage == "cpu.stat":
                usec = next(int(line.split()[1]) for line in text.splitlines() if line.startswith("usage_usec "))
                return usec * hz // 1_000_000
            return int(text.strip()) * hz // 1_000_000_000
        except (StopIteration, ValueError, IndexError):
            return None

    def freeze(self, frozen: bool) -> bool:
        """cgroup v2: every process of the group stopped at once (`cgroup.freeze`), those it
        starts meanwhile included, and no SIGCONT resumes them; True once the kernel says the
        group is frozen (or thawed). False where the group cannot be frozen."""
        try:
            (self.path / "cgroup.freeze").write_text("1" if frozen else "0")
        except OSError:
            return False
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            try:
                events = (self.path / "cgroup.events").read_text()
            except OSError:
                return False
            if f"frozen {int(frozen)}" in events.splitlines():
                return True
            time.sleep(0.002)
        return False

    def kill(self) -> None:
        """SIGKILL to every process in the group, those that left the process group included."""
        try:
            (self.path / "cgroup.kill").write_text("1")
            return
        except OSError:
            pass
        for pid in self.members():
            try:
                os.kill(pid, 9)
            except OSError:
                pass

    def remove(self, wait_s: float = 2.0) -> bool:
        """Remove the group once its processes are gone (killed ones take a moment to leave)."""
        end = time.monotonic() + wait_s
        while True:
            try:
                self.path.rmdir()
                return True
            except FileNotFoundError:
                return True
            except OSError:
                if time.monotonic() >= end:
                    return False
                self.kill()
                time.sleep(0.02)


def _sweep(parent: Path) -> None:
    """Remove the empty groups a judge killed outright left behind (its pid no longer runs)."""
    try:
        entries = list(parent.glob(f"{PREFIX}-*-*"))
    except OSError:
        return
    for path in entries:
        try:
            pid = int(path.name.split("-")[2])
        except (IndexError, ValueError):
            continue
        if pid != os.getpid() and not Path(f"/proc/{pid}").exists():
            try:
                path.rmdir()               # only an empty group goes; a busy one stays
            except OSError:
                pass
