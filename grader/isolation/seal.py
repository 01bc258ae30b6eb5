"""Code that stays where it was loaded: mseal (Linux 6.10+) on a process's executable file
mappings. A sealed mapping cannot be unmapped, moved (mremap), mapped over (MAP_FIXED) or
have its protection changed (mprotect), by the process or anything it loads; the seal
shows as `sl` in /proc/PID/smaps' VmFlags, so the judge checks it from outside.

Why: the CPU sampler names a sample by the address it fell at (grader/judge/cpusample.py).
mremap makes no PERF_RECORD_MMAP2, so a copy of torch's code moved over the library's pages
for the length of a call, and the library's own pages moved back before the judge reads the
maps, would leave nothing to see, its samples the kernel's own. The worker seals every
executable file mapping before the library loads (torch's, Python's, the C library's) and
again just after (the library's and what it brought), before any request of the judge's.
A write through /proc/self/mem goes past a seal; the Landlock rule refuses that
(grader/isolation/landlock.py).
"""
from __future__ import annotations

import ctypes
import os

SYS_MSEAL = 462                 # one number on every architecture
ENOSYS = 38


def exec_file_mappings(maps: str = "/proc/self/maps") -> list[tuple[int, int, str]]:
    """(start, end, path) of each executable mapping of a file."""
    out = []
    try:
        with open(maps) as f:
            for line in f:
                fields = line.split(None, 5)
                if len(fields) == 6 and "x" in fields[1] and fields[5].startswith("/"):
                    start, end = fields[0].split("-")
                    out.append((int(start, 16), int(end, 16), fields[5].strip()))
    except (OSError, ValueError):
        return []
    return out


def seal_code() -> tuple[int, str]:
    """Seal every executable file mapping of this process: (how many, "" or why not all). A
    mapping that will not seal (changed since the maps were read) leaves the others to seal."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    sealed, why = 0, ""
    for start, end, path in exec_file_mappings():
        if libc.syscall(SYS_MSEAL, ctypes.c_ulong(start), ctypes.c_size_t(end - start), ctypes.c_ulong(0)) < 0:
            err = ctypes.get_errno()
            if err == ENOSYS:
                return 0, "no mseal in this kernel (Linux 6.10+)"
            why = why or f"mseal of {os.path.basename(path)}: {os.strerror(err)}"
            continue
        sealed += 1
    return sealed, why


TOO_MANY = "(more executable mappings than the judge reads)"


def exec_file_fields(pid: int, keys: tuple, limit: int):
    """Each executable mapping of a file (an inode) in /proc/PID/smaps, as (file, permissions,
    {key: value}) for the smaps fields in `keys`; after `limit` mappings of any kind, one last
    (TOO_MANY, "", {}): a reader must not be blinded by a process that made too many.
    Raises OSError when the file cannot be read."""
    head, got, count = None, {}, 0
    with open(f"/proc/{pid}/smaps") as f:
        for line in f:
            fields = line.split(None, 5)
            if len(fields) >= 5 and "-" in fields[0] and len(fields[1]) == 4:
                if head is not None:
                    yield (*head, got)
                count += 1
                if count > limit:
                    yield TOO_MANY, "", {}
                    return
                head = ((fields[5].strip() if len(fields) == 6 else "?", fields[1])
                        if "x" in fields[1] and fields[4] != "0" else None)
                got = {}
            elif head is not None:
                key, _, value = line.partition(":")
                if key in keys:
                    got[key] = value.strip()
    if head is not None:
        yield (*head, got)


def unsealed(pid: int, limit: int = 80000) -> list[str] | None:
    """The executable file mappings of process `pid` left unsealed (its smaps' VmFlags lack `sl`)
    or writable (a library's code made writable before it was sealed, or loaded so: a seal
    keeps it writable), as "FILE"; TOO_MANY among them past `limit` mappings. None when it has
    none sealed (a process that never sealed: bwrap's, or a kernel without mseal) or cannot be
    read."""
    left, sealed = [], 0
    try:
        for path, perms, got in exec_file_fields(pid, ("VmFlags",), limit):
            if path == TOO_MANY:
                left.append(TOO_MANY)
            elif "sl" in got.get("VmFlags", "").split() and "w" not in perms:
                sealed += 1
            else:
                sealed += "sl" in got.get("VmFlags", "").split()
                left.append(os.path.basename(path)[:120] + (" (writable)" if "w" in perms else ""))
    except (OSError, ValueError):
        return None
    return left if sealed else None
