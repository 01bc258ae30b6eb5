"""No file under /proc opened for writing: a Landlock rule the child's worker lays on itself
before the kernel's library loads (Linux 5.13+ with Landlock among its security modules).

Why: /proc/PID/mem written by the process itself goes past every page's protection and
makes no mapping, so code written into the library's (or torch's) executable pages for the
length of a call and dropped again (MADV_DONTNEED) before the judge reads /proc/PID/smaps
leaves no trace; in that window torch's code relocated into the library would be sampled as
the kernel's own (grader/judge/cpusample.py; the red team's `procmem_window`). Neither the
seccomp filter (it cannot read a path) nor mseal (a sealed read-only mapping was written
through /proc/self/mem on Linux 6.18) refuses it. Landlock decides on the file, in the
kernel, however the open is made, and the rule binds every process the worker starts.

Only writing is ruled (LANDLOCK_ACCESS_FS_WRITE_FILE), and only under procfs, with REFER
handled and granted alike (a ruleset of ABI 1, without it, refuses every rename across folders:
Triton's cache and torch's builds make them; so ABI 2, Linux 5.19, is the least laid). The rule
binds the thread that lays it and the threads and processes it starts, not threads already
running: the worker lays it first, while its process has one thread (torch's import starts
more; a thread left out could open /proc/self/mem for all: the descriptor is the process's).
Procfs: the bwrap sandbox already leaves nothing else writable but the work folder, /tmp and
/dev/shm, and a grade without the sandbox (`make grade` on a student's laptop) needs the
rest as it was. The rule cannot be lifted by the process or anything it loads.
"""
from __future__ import annotations

import ctypes
import os

# the system calls (one number on every architecture since Linux 5.13) and their constants
SYS_CREATE_RULESET, SYS_ADD_RULE, SYS_RESTRICT_SELF = 444, 445, 446
CREATE_RULESET_VERSION = 1
ACCESS_FS_WRITE_FILE = 1 << 1
ACCESS_FS_REFER = 1 << 13          # ABI 2: renames and links across folders (unhandled, always refused)
RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def abi() -> int:
    """The running kernel's Landlock ABI version; 0 where it has none (or it is not enabled)."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    got = libc.syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), CREATE_RULESET_VERSION)
    return max(0, int(got))


def proc_mounts(mountinfo: str = "/proc/self/mountinfo") -> list[str]:
    """Where procfs is mounted in this process's view (its mount points, as paths)."""
    found = []
    try:
        with open(mountinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                left, _, right = line.partition(" - ")
                if right.split(" ", 1)[0] == "proc":
                    # octal escapes (\040 for a space) in the mount point
                    found.append(left.split()[4].encode().decode("unicode_escape"))
    except OSError:
        return ["/proc"]
    return found or ["/proc"]


def writable_roots(excluded: list[str], top: str = "/") -> list[str]:
    """The paths to grant writing beneath so that everything is writable as before except the
    trees at `excluded`: `top` itself when none lies inside it, else its entries, each
    treated the same way (a procfs under /run/x/proc leaves /run's other entries)."""
    top = os.path.normpath(top)
    inside = [m for m in excluded if m == top or m.startswith(top.rstrip("/") + "/")]
    if not inside:
        return [top]
    if top in inside:
        return []
    try:
        entries = sorted(os.listdir(top))
    except OSError:
        return []
    out = []
    for name in entries:
        path = os.path.join(top, name)
        if os.path.islink(path):
            continue                        # its target is ruled where it lies (a link into /proc: not at all)
        if os.path.isdir(path):
            out += writable_roots(inside, path)
        else:
            out.append(path)
    return out


def refuse_proc_writes() -> str:
    """Lay the rule on this process (and what it starts): "" when laid, else why not."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    version = abi()
    if version < 1:
        return "no Landlock in this kernel (or it is not among its security modules)"
    if version < 2:
        return f"Landlock ABI {version}: it would refuse every rename across folders (ABI 2, Linux 5.19, needed)"
    threads = len(os.listdir("/proc/self/task"))
    if threads > 1:
        return f"{threads} threads already running: the rule would bind only the one laying it"
    handled = ctypes.c_uint64(ACCESS_FS_WRITE_FILE | ACCESS_FS_REFER)   # struct landlock_ruleset_attr's first field
    ruleset = libc.syscall(SYS_CREATE_RULESET, ctypes.byref(handled), ctypes.c_size_t(8), 0)
    if ruleset < 0:
        return f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}"
    try:
        for path in writable_roots(proc_mounts()):
            try:
                fd = os.open(path, os.O_PATH | os.O_NOFOLLOW | os.O_CLOEXEC)
            except OSError:
                continue                    # gone since it was listed: nothing to write there
            try:
                # REFER is a folder's right; a file (at the top level) takes writing alone
                access = ACCESS_FS_WRITE_FILE | (ACCESS_FS_REFER if os.path.isdir(path) else 0)
                rule = _PathBeneath(access, fd)
                if libc.syscall(SYS_ADD_RULE, ruleset, RULE_PATH_BENEATH, ctypes.byref(rule), 0) < 0:
                    err = ctypes.get_errno()
                    if err not in (22, 77):  # EINVAL, EBADFD: not a file a rule can name; skipped
                        return f"landlock_add_rule({path}): {os.strerror(err)}"
            finally:
                os.close(fd)
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return f"no_new_privs: {os.strerror(ctypes.get_errno())}"
        if libc.syscall(SYS_RESTRICT_SELF, ruleset, 0) < 0:
            return f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}"
    finally:
        os.close(ruleset)
    return ""
