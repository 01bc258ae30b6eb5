"""Where the child's CPU time went, sampled from outside its process: the CPU's launch observation.

On a GPU the judge sees which kernels a call launched (grader/judge/launches.py). On the CPU a
kernel's compute is code: its own, or torch's when it calls in (SDPA's flash kernel found by
an in-memory symbol lookup and called directly passes every name-based audit and dispatches
no operator). So while the CPU benchmark's rounds run, the judge samples the instruction
pointer of every thread of the child's process tree with `perf_event_open` (the kernel's
own timer, a sample every SAMPLE_US of a thread's CPU time, user space only), from its own
process: nothing the child does can hide a sample or change where it landed. Each sample is
attributed to the file mapped at that address (`/proc/PID/maps`):

- `own`: the submission's built library (the judge's audited copy the child loaded);
- `torch`: torch's and its math libraries' code (libtorch*, libc10*, MKL, oneDNN, OpenBLAS),
  anonymous executable memory (oneDNN's JIT code), code no file on disk holds (a memfd, a
  deleted file) and addresses in no mapping of a living process (a worker that exited):
  compute the judge cannot name is never the kernel's own, nor the harness's;
- `foreign`: code at an address where the harness's code sat before the kernel's library was
  loaded, now mapped from another file (torch's text copied to a file and mapped over itself),
  code mapped since at an address of its own (the references' libraries, a copy of torch's),
  and the kernel's library mapped anywhere but where it was loaded (`Layout`): torch's in the
  kernel's calls and SDPA's, neither in the whole run's counts;
- everything else (the C library, libm, OpenMP's runtime, Python) counts for neither.

A kernel's timed calls took so many milliseconds (their sum, held to the judge's clock); an
honest kernel's own code runs for a large share of that (its calling thread computes; OpenMP's
waits and libm take the rest). A kernel whose own code got almost none of the samples while
its calls ran computed somewhere else: torch's code, a JIT, the interpreter
(`foreign_cpu_time`). Where perf events cannot be opened
(a laptop whose kernel forbids them: perf_event_paranoid 3), `timing.cpu_observation` says
so; nothing is read as clean.
"""
from __future__ import annotations

import ctypes
import mmap
import os
import re
import statistics
import struct
from typing import NamedTuple

SAMPLE_US = 200                  # a sample every 0.2 ms of a thread's CPU time
RING_PAGES = 64                  # data pages of each CPU's ring buffer (256 KiB: ~10 000 samples)
MAX_EVENTS = 4096                # perf events (threads x CPUs) opened at most
# The kernel's own code got less than this share of one thread's samples over its timed calls:
# review (with at least REVIEW_SAMPLES expected), strict (below STRICT_SHARE, STRICT_SAMPLES)
# (measured on 2 cores, S = 64 and 256, 60-80 rounds: the references' own code got 110-195% of
# one thread's samples on a quiet machine, 4% on one loaded 100-fold, where its share beside
# SDPA's stayed that of its time; a kernel calling torch's flash kernel: 0% of both)
REVIEW_SHARE, REVIEW_SAMPLES = 0.3, 40
STRICT_SHARE, STRICT_SAMPLES = 0.05, 50

# torch's code and every other library of compute a kernel could call in: any BLAS, LAPACK, MKL or
# oneDNN build by its file name wherever it sits (numpy's bundled `libscipy_openblas64_-*.so` fell
# into "other" on 2026-11-28: a kernel's matmuls there passed the in-call rule), and numpy's own
# compiled modules
TORCH = re.compile(r"/lib(torch\w*|c10\w*)[.-][^/]*$|/[^/]*(openblas|blas|lapack|mkl|dnnl|gfortran)[^/]*$"
                   r"|/numpy(\.libs)?/.*\.so[^/]*$")

# Code no file on disk holds, as torch's: a memfd, a file deleted since it was mapped. A copy of
# torch's code there (libtorch_cpu's text copied into a memfd and mapped over itself, found by a
# review on 2026-11-28) has a path the name rule cannot know; an honest kernel's process runs
# none (none in any red-team or reference grade). So is an address in no mapping of its process
# when the judge reads the maps, after the rounds: a worker process that computed and exited, or
# code unmapped since; an honest kernel's samples all lie in mappings of its living process.
_NO_FILE = re.compile(r"^/memfd:|\(deleted\)$")

_NR_PERF_EVENT_OPEN = {"x86_64": 298, "aarch64": 241}
_PERF_TYPE_SOFTWARE, _PERF_COUNT_SW_CPU_CLOCK, _PERF_COUNT_SW_TASK_CLOCK = 1, 0, 1
_SAMPLE_IP, _SAMPLE_TID = 1, 2
_FLAG_DISABLED, _FLAG_INHERIT, _FLAG_EXCLUDE_KERNEL, _FLAG_EXCLUDE_HV = 1 << 0, 1 << 1, 1 << 5, 1 << 6
_FLAG_MMAP, _FLAG_MMAP2 = 1 << 8, 1 << 23          # a record of every executable mapping made (PERF_RECORD_MMAP2)
_PERF_FLAG_PID_CGROUP, _PERF_FLAG_FD_CLOEXEC = 4, 8
_IOC_ENABLE, _IOC_DISABLE, _IOC_SET_OUTPUT = 0x2400, 0x2401, 0x2405
_RECORD_SAMPLE, _RECORD_MMAP2 = 9, 10
MAX_MAPPED = 64                  # executable mappings kept (a kernel that maps thousands: counted, not kept)


class Unavailable(Exception):
    """perf events cannot be opened here (the message says why)."""


def _attr(per_cpu: bool = False) -> bytes:
    """struct perf_event_attr (128 bytes): a software clock, IP and TID sampled, user space only,
    disabled until enabled, and a record of every executable mapping the sampled tasks make.
    Per thread: the task clock, inherited by threads started later; per CPU for a cgroup
    (`per_cpu`): the CPU clock, which runs while the group's tasks do."""
    buf = bytearray(128)
    struct.pack_into("<IIQQQQQ", buf, 0, _PERF_TYPE_SOFTWARE, 128,
                     _PERF_COUNT_SW_CPU_CLOCK if per_cpu else _PERF_COUNT_SW_TASK_CLOCK,
                     SAMPLE_US * 1000, _SAMPLE_IP | _SAMPLE_TID, 0,
                     _FLAG_DISABLED | (0 if per_cpu else _FLAG_INHERIT) | _FLAG_EXCLUDE_KERNEL | _FLAG_EXCLUDE_HV
                     | _FLAG_MMAP | _FLAG_MMAP2)
    return bytes(buf)


class Sampler:
    """Instruction-pointer samples of every thread of the processes `pids`, one ring buffer a
    CPU. `start()`, `drain()` as often as the rounds allow (a full buffer loses samples, which
    are counted), `stop()`; `counts(library)` attributes them."""

    def __init__(self, pids: list[int], group: str | None = None):
        """`group`: a cgroup v2 folder holding the child (grader/isolation/cpugroup.py): one event
        a CPU samples every process and thread in it, however many threads the child starts
        (a thread per CPU per event otherwise: a kernel that parks thousands of threads made
        that too many to open, and the sampler gave up)."""
        import platform
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.libc.syscall.restype = ctypes.c_long
        self.nr = _NR_PERF_EVENT_OPEN.get(platform.machine())
        if self.nr is None:
            raise Unavailable(f"no perf_event_open number for {platform.machine()}")
        self.fds: list[int] = []
        self.rings: list[tuple[int, mmap.mmap]] = []
        self.samples: dict[tuple[int, int], int] = {}     # (pid, ip) -> count
        self.window: dict[tuple[int, int], int] = {}      # the same, since the last `take`
        self._maps: dict[int, list] = {}                   # pid -> its executable mappings (read once)
        self.layout: Layout | None = None                  # where the harness's code and the library sat
        self.mapped: list = []                             # executable mappings made while enabled: (file, what it is over)
        self.mapped_count = self.mapped_over = 0
        self.modified: list = []                           # code written in memory before the rounds (`modified_code`)
        self.lost = 0
        self.page = mmap.PAGESIZE
        self.scope = "threads"
        if group is not None:
            self._open_group(group)
            return
        attr = ctypes.create_string_buffer(_attr(), 128)
        tids = [(pid, int(t)) for pid in pids for t in _tasks(pid)]
        if not tids:
            raise Unavailable("the child has no threads to sample")
        cpus = _online_cpus()
        needed = len(tids) * len(cpus)
        limit = min(MAX_EVENTS, _raise_nofile(needed + 256) - 256)
        if needed > limit:
            raise Unavailable(f"{len(tids)} threads on {len(cpus)} CPUs: more perf events than the "
                              f"{limit} it can open")
        try:
            for cpu in cpus:
                leader = None
                for _pid, tid in tids:
                    fd = self.libc.syscall(ctypes.c_long(self.nr), attr, ctypes.c_int(tid), ctypes.c_int(cpu),
                                           ctypes.c_int(-1), ctypes.c_ulong(_PERF_FLAG_FD_CLOEXEC))
                    if fd < 0:
                        err = ctypes.get_errno()
                        if err == 3:         # ESRCH: the thread ended meanwhile
                            continue
                        raise Unavailable(f"perf_event_open: {os.strerror(err)}")
                    self.fds.append(fd)
                    if leader is None:
                        leader = fd
                        ring = mmap.mmap(fd, (1 + RING_PAGES) * self.page, mmap.MAP_SHARED,
                                         mmap.PROT_READ | mmap.PROT_WRITE)
                        self.rings.append((fd, ring))
                    elif self.libc.ioctl(ctypes.c_int(fd), ctypes.c_ulong(_IOC_SET_OUTPUT), ctypes.c_int(leader)) != 0:
                        raise Unavailable(f"perf event output: {os.strerror(ctypes.get_errno())}")
        except BaseException:
            self.close()
            raise

    def _open_group(self, group: str) -> None:
        attr = ctypes.create_string_buffer(_attr(per_cpu=True), 128)
        try:
            folder = os.open(group, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            raise Unavailable(f"the child's cgroup: {e.strerror}") from None
        try:
            for cpu in _online_cpus():
                fd = self.libc.syscall(ctypes.c_long(self.nr), attr, ctypes.c_int(folder), ctypes.c_int(cpu),
                                       ctypes.c_int(-1), ctypes.c_ulong(_PERF_FLAG_PID_CGROUP | _PERF_FLAG_FD_CLOEXEC))
                if fd < 0:
                    raise Unavailable(f"perf_event_open for the child's cgroup: {os.strerror(ctypes.get_errno())}")
                self.fds.append(fd)
                self.rings.append((fd, mmap.mmap(fd, (1 + RING_PAGES) * self.page, mmap.MAP_SHARED,
                                                 mmap.PROT_READ | mmap.PROT_WRITE)))
        except BaseException:
            self.close()
            raise
        finally:
            os.close(folder)
        self.scope = "cgroup"

    def start(self) -> None:
        for fd in self.fds:
            self.libc.ioctl(ctypes.c_int(fd), ctypes.c_ulong(_IOC_ENABLE), ctypes.c_int(0))

    def stop(self) -> None:
        for fd in self.fds:
            self.libc.ioctl(ctypes.c_int(fd), ctypes.c_ulong(_IOC_DISABLE), ctypes.c_int(0))
        self.drain()

    def drain(self) -> None:
        """Read every ring buffer's new records (samples counted by (pid, ip))."""
        size = RING_PAGES * self.page
        data = self.page
        for _, ring in self.rings:
            def record(at: int, n: int) -> bytes:
                """`n` bytes of the ring from `at`, wrapping past its end to its start."""
                if at + n <= data + size:
                    return bytes(ring[at:at + n])
                return bytes(ring[at:data + size]) + bytes(ring[data:data + n - (data + size - at)])
            head, tail = struct.unpack_from("<QQ", ring, 1024)
            while tail < head:
                at = data + tail % size
                kind, _misc, length = struct.unpack_from("<IHH", record(at, 8))
                if length < 8:
                    break
                if kind == _RECORD_SAMPLE:
                    ip, pid = struct.unpack_from("<QI", record(at, length), 8)
                    self.samples[(pid, ip)] = self.samples.get((pid, ip), 0) + 1
                    self.window[(pid, ip)] = self.window.get((pid, ip), 0) + 1
                elif kind == _RECORD_MMAP2:  # pid, tid, addr, len, pgoff, maj, min, ino, gen, prot, flags, name
                    rec = record(at, length)
                    if len(rec) >= 72:
                        pid, _tid, addr, span, _off, major, minor, ino = struct.unpack_from("<IIQQQIIQ", rec, 8)
                        name = os.path.basename(rec[72:].split(b"\0", 1)[0].decode("utf-8", "replace"))[:120]
                        over = _landed_on(self.layout, pid, addr, addr + span, (major, minor, ino))
                        self.mapped_count += 1
                        self.mapped_over += bool(over)
                        if over:                # those that landed on code first
                            self.mapped.insert(0, (name, over))
                            del self.mapped[MAX_MAPPED:]
                        elif len(self.mapped) < MAX_MAPPED:
                            self.mapped.append((name, over))
                elif kind == 2:             # PERF_RECORD_LOST: id, lost
                    rec = bytes(ring[at:at + 24]) if at + 24 <= data + size else b""
                    if len(rec) == 24:
                        n = struct.unpack_from("<Q", rec, 16)[0]
                        self.lost += n
                        self.window[(-1, -1)] = self.window.get((-1, -1), 0) + n
                tail += length
            struct.pack_into("<Q", ring, 1032, tail)

    def take(self) -> dict:
        """The samples since the last take ((pid, ip) -> count), after a drain: one request's,
        when the judge takes them after each (its bracket on the judge's clock)."""
        self.drain()
        got, self.window = self.window, {}
        return got

    def counts(self, library: str, samples: dict | None = None) -> dict:
        """{"own", "torch", "foreign", "other", "lost", "where"}: the samples (all of them, or
        `samples`: some `take`s merged, with the records the rings lost meanwhile) by where they
        landed, and the files that got the most of them. `self.layout` (a `Layout`, where the
        judge read one) decides foreign code; without it, the library's file is the kernel's
        wherever it is mapped and nothing is foreign."""
        out = {"own": 0, "torch": 0, "foreign": 0, "other": 0, "lost": self.lost if samples is None else 0}
        maps = self._maps
        files: dict[str, int] = {}
        for (pid, ip), n in (self.samples if samples is None else samples).items():
            if pid == -1:                           # records the ring lost in this window (`drain`)
                out["lost"] += n if samples is not None else 0
                continue
            if pid not in maps:
                maps[pid] = exec_maps(pid) if len(maps) < MAX_PROCESSES else []
            kind, path = _classify(maps[pid], ip, library, self.layout, pid)
            out[kind] += n
            name = os.path.basename(path) if path else "[anonymous]"
            files[name] = files.get(name, 0) + n
        out["where"] = dict(sorted(files.items(), key=lambda kv: -kv[1])[:6])
        return out

    def close(self) -> None:
        for _, ring in self.rings:
            try:
                ring.close()
            except Exception:  # noqa: BLE001
                pass
        for fd in self.fds:
            try:
                os.close(fd)
            except OSError:
                pass
        self.rings, self.fds = [], []


def _online_cpus() -> list[int]:
    """The CPUs the kernel has online ("0-3,8-11"), else 0 .. cpu_count - 1."""
    try:
        with open("/sys/devices/system/cpu/online") as f:
            out = []
            for part in f.read().strip().split(","):
                lo, _, hi = part.partition("-")
                out += range(int(lo), int(hi or lo) + 1)
            return out
    except (OSError, ValueError):
        return list(range(os.cpu_count() or 1))


def _raise_nofile(want: int) -> int:
    """Raise this process's soft limit of open files towards `want` (at most the hard limit);
    the soft limit after."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < want:
        new = want if hard == resource.RLIM_INFINITY else min(want, hard)
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (new, hard))
            soft = new
        except (ValueError, OSError):
            pass
    return soft


def _tasks(pid: int) -> list[str]:
    try:
        return os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []


MAX_MAPPINGS = 20000             # executable mappings read of one process (more: the rest unread, as unmapped)
MAX_PROCESSES = 64               # processes of the child's tree whose mappings are read


def exec_maps(pid: int | str) -> list[tuple[int, int, str, tuple, int]]:
    """(start, end, path, file, offset) of the executable mappings of `pid` ("self": the judge's
    own), sorted, at most MAX_MAPPINGS: path "" for anonymous memory, file the mapped file's
    (device, inode) as the kernel gives it ((0, 0, 0) for none), offset its page offset in it."""
    out = []
    try:
        with open(f"/proc/{pid}/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) < 5 or "x" not in parts[1]:
                    continue
                lo, hi = (int(x, 16) for x in parts[0].split("-"))
                major, _, minor = parts[3].partition(":")
                out.append((lo, hi, parts[5].strip()[:4096] if len(parts) > 5 else "",
                            (int(major, 16), int(minor or "0", 16), int(parts[4])), int(parts[2], 16)))
                if len(out) >= MAX_MAPPINGS:
                    break
    except (OSError, ValueError):
        pass
    return sorted(out)


def exec_segments(path: str) -> frozenset | None:
    """The page offsets in the file of an ELF library's executable PT_LOAD segments (where the
    loader maps its code from), read by the judge from its own copy before the child loads it;
    None where it is no 64-bit little-endian ELF file."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            if len(head) < 64 or head[:4] != b"\x7fELF" or head[4] != 2 or head[5] != 1:
                return None
            phoff, = struct.unpack_from("<Q", head, 32)
            phentsize, phnum = struct.unpack_from("<HH", head, 54)
            if phentsize < 56 or not 0 < phnum <= 64:
                return None
            f.seek(phoff)
            table = f.read(phentsize * phnum)
    except OSError:
        return None
    out = set()
    for i in range(len(table) // phentsize):
        ptype, flags, offset = struct.unpack_from("<IIQ", table, i * phentsize)
        if ptype == 1 and flags & 1:              # PT_LOAD, PF_X
            out.add(offset & ~0xFFF)
    return frozenset(out)


def _at(maps: list, ip: int):
    """The mapping of `maps` (sorted by start) holding `ip`, or None."""
    import bisect
    i = bisect.bisect_right(maps, (ip, float("inf"))) - 1
    if i >= 0 and maps[i][0] <= ip < maps[i][1]:
        return maps[i]
    return None


class Layout(NamedTuple):
    """Where code sat before the kernel's code could run, read by the judge from the child's
    `/proc/PID/maps` (a file's device and inode: its identity, whatever its name):
    - `harness`: pid -> the executable mappings of each process of the child's tree, read before
      the library was loaded (torch, the binding module, Python, libc, OpenMP's runtime, the vDSO);
    - `loader`: the process that loaded the library; `own`: the library's code there just after
      it was loaded (one mapping for each executable segment of its file, at the segment's offset;
      a second mapping of its file, made by its constructor, leaves nothing its own), its file.
    A sample's address in a `harness` mapping now of another file, in the library's file outside
    `own`, in a file mapped since (a copy of torch's code at an address of its own, the
    references' libraries), or in a process started since is foreign code, whatever its name:
    the harness maps no new code once it loaded the library, and starts no process."""
    harness: dict
    loader: int
    own: tuple
    own_file: tuple


def read_layout(before: dict, after: dict, library: str, segments: frozenset | None = None) -> Layout | None:
    """The `Layout` from the child's tree's executable mappings before the library was loaded
    (`before`: pid -> `exec_maps`) and just after (`after`): the library found by its path or
    its device and inode (a library its own constructor renamed), each of its mappings at the
    page offset of one of its executable segments (`segments`, `exec_segments`), one each, never
    over the harness's code; else nothing is its own. None where nothing could be read before
    (nothing to anchor on: the attribution by path)."""
    before = {pid: maps for pid, maps in before.items() if maps}
    if not before:
        return None
    try:
        st = os.stat(library)
        file = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    except OSError:
        file = None
    for pid, maps in after.items():
        harness = before.get(pid)
        mine = [m for m in maps if m[2] == library or m[3] == file]
        if not mine or harness is None:
            continue
        offsets = [m[4] if len(m) > 4 else None for m in mine]
        clean = (not any(a < m[1] and m[0] < b for m in mine for a, b, *_ in harness)
                 and len(set(offsets)) == len(offsets)
                 and (segments is None or all(o in segments for o in offsets)))
        return Layout(before, pid, tuple((m[0], m[1]) for m in mine) if clean else (), mine[0][3])
    return Layout(before, -1, (), (-1, -1, -1))


def _classify(maps: list, ip: int, library: str, layout: Layout | None = None, pid: int = -1) -> tuple[str, str]:
    """(own, torch, foreign or other; the file) of an address of process `pid`; `maps` its
    executable mappings sorted by start (`exec_maps`)."""
    m = _at(maps, ip)
    if m is None:
        return "torch", "[unmapped]"
    path, key = m[2], m[3]
    new = False
    if layout is None:
        if path == library:
            return "own", path
    else:
        harness = layout.harness.get(pid)
        if pid == layout.loader and key == layout.own_file and any(lo <= ip < hi for lo, hi in layout.own):
            return "own", path
        was = _at(harness, ip) if harness is not None else None
        if was is not None and was[3] != key:
            return "foreign", f"{os.path.basename(path) or '[anonymous]'} over {os.path.basename(was[2]) or '[anonymous]'}"
        new = was is None
    if not path or TORCH.search(path) or _NO_FILE.search(path):
        return "torch", path
    return ("foreign" if new else "other"), path


def _landed_on(layout: Layout | None, pid: int, lo: int, hi: int, file: tuple) -> str:
    """What an executable mapping made while the rounds ran lands on: the library's code, or a
    file of the harness's code that is not its own file ("" for neither: anonymous memory over
    anonymous memory, a new address)."""
    if layout is None:
        return ""
    if pid == layout.loader and any(a < hi and lo < b for a, b in layout.own):
        return "the kernel's library"
    for m in layout.harness.get(pid, layout.harness.get(layout.loader, ())):
        if m[0] < hi and lo < m[1] and m[3] != (0, 0, 0) and m[3] != file:
            return os.path.basename(m[2]) or "[anonymous]"
    return ""


def mapped_code(sampler) -> dict:
    """{"count", "over", "what"}: the executable mappings the child's tasks made while the rounds
    ran (PERF_RECORD_MMAP2), how many of them landed on the harness's code or the library's
    (each judged as it was read, however many), and a few said as their file and what they
    landed on, those first. The harness maps no new code once the library is loaded, so an honest
    kernel's rounds make none."""
    return {"count": sampler.mapped_count, "over": sampler.mapped_over,
            "what": [f"{name}" + (f" over {over}" if over else "") for name, over in sampler.mapped[:8]]}


def mapped_flags(S: int, counts: dict) -> list[dict]:
    """The flag of code the child mapped while its rounds ran (`mapped_code`), or []: strict where
    any landed on the harness's code or the library's (code swapped under the samples' feet: a
    copy of torch's mapped while computing and the original mapped back before the maps are
    read), review elsewhere."""
    m = counts.get("mapped") or {}
    if not m.get("count"):
        return []
    return [{"code": "foreign_cpu_time", "tier": "strict" if m.get("over") else "review", "detail": (
        f"S={S}: the kernel's process mapped executable code {m['count']} time(s) while its timed rounds ran, "
        f"{m.get('over', 0)} of them over the harness's code or its library's ({', '.join(m.get('what', [])[:4])}): "
        "the harness maps none once the kernel's library is loaded, and code mapped in and out between the samples "
        "and the judge's reading of the maps hides where they ran (recorded by the kernel, PERF_RECORD_MMAP2, "
        "grader/judge/cpusample.py)")}]


def modified_code(pids) -> list[str]:
    """The file-backed executable mappings of `pids` whose pages were written in memory (anonymous
    pages in `/proc/PID/smaps`: a private copy of a page made by a write, through /proc/PID/mem or
    an mprotect to writable and back) or can be (writable now), as "FILE (pid N)"; past
    4 x MAX_MAPPINGS mappings, seal.TOO_MANY (a process that made so many is not read blind).
    An honest kernel's process has none (its code and torch's are as the files hold them). Not `Private_Dirty`: a library the linker has
    just written is dirty in the page cache, unwritten by anyone since (every library of a fresh
    build read so, 2026-11-28); the library file itself is the judge's, which the child cannot write."""
    from ..isolation.seal import TOO_MANY, exec_file_fields
    out = []
    for pid in list(pids)[:MAX_PROCESSES]:
        try:
            for path, perms, got in exec_file_fields(pid, ("Anonymous",), 4 * MAX_MAPPINGS):
                written = path == TOO_MANY or "w" in perms or int((got.get("Anonymous") or "0").split()[0]) > 0
                if written:
                    out.append(f"{os.path.basename(path)[:120]}{' (writable)' if 'w' in perms else ''} (pid {pid})")
                    if len(out) >= 8:
                        return out
        except (OSError, ValueError):
            continue
    return out


def modified_flags(S: int, counts: dict) -> list[dict]:
    """Strict where the child's executable file mappings were written in memory (`modified_code`)."""
    what = counts.get("modified_code") or []
    if not what:
        return []
    return [{"code": "foreign_cpu_time", "tier": "strict", "detail": (
        f"S={S}: code of the kernel's process was written in memory while its rounds ran or before ({', '.join(what[:4])}): "
        "its samples no longer say whose code ran there; an honest kernel's process runs its code and torch's as "
        "their files hold them (/proc/PID/smaps, grader/judge/cpusample.py)")}]


# Within the kernel's own calls' brackets (a request a call), the share of its own code among
# the samples in its code and torch's: review below BRACKET_REVIEW, strict below BRACKET_STRICT,
# with at least BRACKET_SAMPLES samples in the two. An honest kernel's calls run its own code
# (the harness's part of a bracket is the channel, a copy of the inputs' bytes and the output's:
# Python, libc, numpy, none of it torch's compute); a kernel calling torch's compute for the work
# that costs (flash, bmm), however it pads its calls with code of its own, or whose own code runs
# only between its calls (a thread that spins while SDPA runs), does not. The faster half of its
# calls is held apart: it decides the tier (a kernel fast by torch on most calls and slow by its
# own code on the rest has its samples in the slow ones).
BRACKET_REVIEW, BRACKET_STRICT, BRACKET_SAMPLES = 0.5, 0.2, 40

# The calls themselves, each counted once (`calls_in_torch`): a call with at least CALL_SAMPLES
# samples in its code and torch's ran torch's code if its own got under BRACKET_STRICT of them.
# Which calls are the faster half is a matter of the judge's clock, and a loaded machine scrambles
# it: beside two spinning processes median_mix's (flash on 3 calls in 5) faster half at S = 256
# held 174 samples of its own against 87 (2026-11-28, review in 3 runs of 3, as in CI), while a
# call's samples are CPU time, which the load leaves where it was: of its calls counted, 32 of 57
# ran torch's code loaded and 35 of 59 quiet (36 of 60 by its design), none of 41 of an honest
# kernel's beside the same load (tests/fixtures/cpusample/per_call.json). Most of its calls in
# torch's code is strict, over a third review, with at least BRACKET_CALLS counted. A kernel that
# calls torch on fewer than half of its calls has its median (the tier) no faster than the
# fastest call of its own code: faster than that, all would be torch's, and more than half.
CALL_SAMPLES, BRACKET_CALLS, CALLS_REVIEW, CALLS_STRICT = 3, 30, 2 / 3, 0.5

class BracketSet(NamedTuple):
    """A set of the kernel's calls judged, {own, torch} in `cpu_samples[key]`: samples in its own
    code and torch's, or (unit "calls") calls that did not and did run torch's code."""
    key: str
    what: str
    unit: str
    minimum: int
    review: float          # its own share below this: review
    strict: float          # ... below this: strict


BRACKET_SETS = (
    BracketSet("in_calls", "its timed calls", "samples", BRACKET_SAMPLES, BRACKET_REVIEW, BRACKET_STRICT),
    BracketSet("in_fast_calls", "the faster half of its timed calls", "samples", BRACKET_SAMPLES, BRACKET_REVIEW,
               BRACKET_STRICT),
    BracketSet("calls_in_torch", "its timed calls, each counted once", "calls", BRACKET_CALLS, CALLS_REVIEW,
               CALLS_STRICT),
)


def bracket_sets(calls: list, sdpa_calls: list = ()) -> dict:
    """The sets of BRACKET_SETS from the kernel's calls [(ms on the judge's clock, {own, torch,
    other} of its bracket)]: all of them, the faster half (at or below the median: the tier),
    and each call counted once; and beside SDPA's calls [{own, torch, other}] (`torch_work`):
    the samples in torch's code of each and how many calls."""
    if not calls:
        return {}
    median = statistics.median(ms for ms, _ in calls)

    def merged(chosen) -> dict:
        return {k: sum(c.get(k, 0) for _, c in chosen) for k in ("own", "torch", "other")}
    counted = [c for _, c in calls if c.get("own", 0) + c.get("torch", 0) >= CALL_SAMPLES]
    in_torch = sum(1 for c in counted if c.get("own", 0) < BRACKET_STRICT * (c.get("own", 0) + c.get("torch", 0)))
    sets = {"in_calls": merged(calls), "in_fast_calls": merged([c for c in calls if c[0] <= median]),
            "calls_in_torch": {"own": len(counted) - in_torch, "torch": in_torch}}
    if sdpa_calls:
        sets["torch_work"] = {"torch": sets["in_calls"]["torch"], "calls": len(calls),
                              "sdpa_torch": sum(c.get("torch", 0) for c in sdpa_calls), "sdpa_calls": len(sdpa_calls)}
    return sets


def _sized(counts: dict, thin: bool) -> list:
    """[(set, own, torch)] of the sets in `counts`: with at least their minimum, or (thin) at
    least THIN_SAMPLES and fewer than their minimum."""
    out = []
    for spec in BRACKET_SETS:
        c = counts.get(spec.key) or {}
        own, torch_n = c.get("own", 0), c.get("torch", 0)
        if (THIN_SAMPLES <= own + torch_n < spec.minimum) if thin else own + torch_n >= spec.minimum:
            out.append((spec, own, torch_n))
    return out


def _share_text(spec: tuple, own: int, torch_n: int) -> str:
    if spec.unit == "calls":
        return (f"{torch_n} of its {own + torch_n} timed calls with {CALL_SAMPLES} CPU samples or more in its code "
                f"and torch's ran torch's code (its own under {BRACKET_STRICT:.0%} of each call's)")
    return (f"its own code got {own / (own + torch_n):.0%} of the CPU samples in its code and torch's while "
            f"{spec.what} ran ({own} against {torch_n})")


def _over(counts: dict, spec: tuple, pooled: str | None) -> str:
    """Which timings a set was pooled over (`pooled`: None where it is one timing's)."""
    if pooled is None:
        return ""
    return f" (over the {(counts.get(spec.key) or {}).get('runs', 0)} timings of this size{pooled})"


def in_call_flags(S: int, counts: dict, pooled: str | None = None) -> list[dict]:
    """The flag of the kernel's own calls (the sets of BRACKET_SETS in `counts`), or []: the
    strictest finding, of the lowest share. `pooled`: the sets are several timings' (pooled_sets),
    said with this after their count."""
    worst = None
    for spec, own, torch_n in _sized(counts, thin=False):
        share = own / (own + torch_n)
        if share < spec.review:
            rank = (share >= spec.strict, share)          # strict first, then the lowest share
            if worst is None or rank < worst[0]:
                worst = (rank, spec, own, torch_n)
    if worst is None:
        return []
    (loose, _), spec, own, torch_n = worst
    how = ("a call's samples are its CPU time, which a busy machine leaves where it was" if spec.unit == "calls"
           else "timed on the judge's clock")
    return [{"code": "foreign_cpu_time", "tier": "review" if loose else "strict", "detail": (
        f"S={S}: {_share_text(spec, own, torch_n)}{_over(counts, spec, pooled)}, each call a request of its "
        f"own, {how}: the work that costs ran in torch's code (sampled from outside its process, "
        "grader/judge/cpusample.py)")}]


# The torch code its calls ran, beside SDPA's (`torch_work`): the samples in torch's code a call
# of the kernel's against a call of SDPA's, whose brackets hold the same harness work (the same
# bytes in and out) and torch's flash kernel. A padded call (own code beside torch's flash kernel,
# however much) or a mix of calls (flash on most) still runs torch's code as SDPA's calls do: what
# the padding adds is its own code's samples, never fewer of torch's. An honest kernel's calls run
# the harness's torch code alone. Judged where SDPA's calls ran at least TORCH_WORK_SDPA torch
# samples each (its compute well above the harness's), TORCH_WORK_CALLS calls of each and
# TORCH_WORK_SAMPLES of SDPA's in all (the handout's S = 1024 on 2 cores: 14 rounds). Measured
# over the red-team class (2 cores, 2026-11-28, S = 256): with H = 2, SDPA's calls 3.2-5.5 samples
# each, the kernels that compute their own ran 0.09-0.21 of SDPA's, those calling torch's bmm, BLAS,
# flash or the dispatcher's SDPA 0.81-0.98, flash on 3 calls in 5 0.57; with H = 4 (SDPA 5.7-7.2),
# 0.04-0.14 and 0.78-1.11, and 0.61. At S = 64 SDPA's calls ran 0.6-2.7 samples each, of which the
# harness's torch code alone was 0.08-0.42 for the kernels computing their own: too near to judge.
TORCH_WORK_SDPA, TORCH_WORK_CALLS, TORCH_WORK_SAMPLES, TORCH_WORK_REVIEW, TORCH_WORK_STRICT = 3.0, 10, 60, 0.3, 0.45


def torch_work_flags(S: int, counts: dict) -> list[dict]:
    """The flag of the torch code the kernel's calls ran beside SDPA's calls, or []."""
    w = counts.get("torch_work")
    if not isinstance(w, dict):
        return []
    n, nd = w.get("calls", 0), w.get("sdpa_calls", 0)
    if n < TORCH_WORK_CALLS or nd < TORCH_WORK_CALLS:
        return []
    mine, sdpa = w.get("torch", 0) / n, w.get("sdpa_torch", 0) / nd
    if sdpa < TORCH_WORK_SDPA or w.get("sdpa_torch", 0) < TORCH_WORK_SAMPLES or mine < TORCH_WORK_REVIEW * sdpa:
        return []
    return [{"code": "foreign_cpu_time", "tier": "strict" if mine >= TORCH_WORK_STRICT * sdpa else "review",
             "detail": (
        f"S={S}: its timed calls ran {mine:.1f} CPU samples of torch's code each, SDPA's {sdpa:.1f} "
        f"({mine / sdpa:.0%}; {n} and {nd} calls, each a request of its own with the same harness work): "
        "the work that costs ran in torch's code, whatever ran beside it (samples are CPU time, sampled from "
        "outside its process, grader/judge/cpusample.py)")}]


# Fewer than a set's minimum, but at least THIN_SAMPLES, most of them torch's: too few to flag,
# enough to doubt. The size is timed again (its runs' samples are then judged together:
# judge._brackets_over_runs), as a busy machine's size is. An honest kernel's few samples are its
# own code's (a reference's faster half at S = 64: 49 against 4).
THIN_SAMPLES = 10


def thin_brackets(S: int, counts: dict) -> str | None:
    """Why the size must be timed again for its samples (a bench_quality reason), or None."""
    for spec, own, torch_n in _sized(counts, thin=True):
        if own / (own + torch_n) >= spec.review:
            continue
        if spec.unit == "calls":
            return (f"S={S}: too few of its timed calls with {CALL_SAMPLES} CPU samples or more to judge where "
                    f"they ran ({torch_n} of {own + torch_n} ran torch's code, fewer than {spec.minimum} counted)")
        return (f"S={S}: too few CPU samples in {spec.what} to judge where they ran ({own} of its own "
                f"against {torch_n} of torch's, fewer than {spec.minimum})")
    return None


def pooled_sets(runs: list, thin_only: bool) -> dict:
    """The sets of several timings of one size (each run's `cpu_samples`) summed, each with the
    count of timings it was pooled over (`runs`); those a timing had at least its minimum of
    left out where `thin_only` (judged alone already), and a set only one timing had."""
    merged: dict = {}
    for counts in runs:
        for spec in BRACKET_SETS:
            c = (counts or {}).get(spec.key)
            if not isinstance(c, dict) or not c:
                continue
            own, torch_n = c.get("own", 0), c.get("torch", 0)
            if thin_only and own + torch_n >= spec.minimum:
                continue
            m = merged.setdefault(spec.key, {"own": 0, "torch": 0, "runs": 0})
            m["own"] += own
            m["torch"] += torch_n
            m["runs"] += 1
    return {k: m for k, m in merged.items() if m["runs"] >= 2}


def thin_but_foreign(S: int, counts: dict, pooled: str) -> list[dict]:
    """Review for a set under its minimum yet almost none the kernel's own (below its strict bar):
    too few to be strict, never passed."""
    for spec, own, torch_n in _sized(counts, thin=True):
        if own / (own + torch_n) < spec.strict:
            return [{"code": "foreign_cpu_time", "tier": "review", "detail": (
                f"S={S}: {_share_text(spec, own, torch_n)}{_over(counts, spec, pooled)}, too few {spec.unit} to be "
                "strict (grader/judge/cpusample.py)")}]
    return []


def judge_samples(S: int, counts: dict, student_total_ms: float, sdpa_total_ms: float) -> list[dict]:
    """The flag of one size's sampled rounds, from two observations that must agree:
    - the kernel's timed calls took `student_total_ms` (its median call times the rounds: what
      the tier is decided on), yet its own code got almost none of one thread's samples of that
      time (an honest kernel's own code gets at least that: its calling thread computes);
    - and its code got far less of the samples in its and torch's code than its calls' share of
      the rounds' time beside SDPA's (`sdpa_total_ms`): a machine made busy by others slows
      both alike and leaves this share alone, where it takes the first one down."""
    brackets = sorted(in_call_flags(S, counts) + torch_work_flags(S, counts) + mapped_flags(S, counts)
                      + modified_flags(S, counts), key=lambda f: f["tier"] != "strict")
    if brackets:
        return brackets[:1]
    expected = student_total_ms * 1000.0 / SAMPLE_US          # samples of one thread busy all along
    own, torch_n = counts.get("own", 0), counts.get("torch", 0)
    if expected < REVIEW_SAMPLES or not sdpa_total_ms or own + torch_n == 0:
        return []
    own_share = own / expected
    time_share = student_total_ms / (student_total_ms + sdpa_total_ms)
    code_share = own / (own + torch_n)
    if own_share >= REVIEW_SHARE or code_share >= REVIEW_SHARE * time_share:
        return []
    strict = expected >= STRICT_SAMPLES and own_share < STRICT_SHARE and code_share < STRICT_SHARE * time_share
    total = sum((counts.get("where") or {}).values()) or 1
    where = ", ".join(f"{name} {n / total:.0%}" for name, n in list((counts.get("where") or {}).items())[:4])
    return [{"code": "foreign_cpu_time", "tier": "strict" if strict else "review", "detail": (
        f"S={S}: its timed calls took {student_total_ms:.1f} ms in all (median times rounds), but its own code "
        f"got {own_share:.0%} of one thread's CPU samples of that time, and {code_share:.0%} of those in its and "
        f"torch's code where its calls took {time_share:.0%} of the rounds' time beside SDPA's: its compute ran "
        f"elsewhere (the samples by file: {where}; sampled from outside its process, grader/judge/cpusample.py)")}]
