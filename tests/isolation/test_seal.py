"""grader/isolation/seal.py: sealed code cannot be moved, unmapped or re-protected (mremap makes
no PERF_RECORD_MMAP2: moved code would go unseen by the CPU sampler), the seal is read from
outside the process, and the judge flags code left unsealed after the load."""
import ctypes
import ctypes.util
import subprocess
import sys
import textwrap
from types import SimpleNamespace

import pytest

from grader.isolation import seal


def _mseal_works() -> bool:
    probe = "from grader.isolation.seal import seal_code; n, why = seal_code(); print(n, why)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    return out.returncode == 0 and not out.stdout.startswith("0 ")


needs_mseal = pytest.mark.skipif(not _mseal_works(), reason="no mseal in this kernel")

# a process that seals its code, then loads a library it did not seal, and waits
PROBE = textwrap.dedent("""
    import ctypes, ctypes.util, os, sys
    from grader.isolation.seal import exec_file_mappings, seal_code
    n, why = seal_code()
    assert n > 0 and not why, (n, why)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.mremap.restype = ctypes.c_void_p
    libc.mremap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t, ctypes.c_int]
    start, end, path = exec_file_mappings()[0]
    assert libc.munmap(ctypes.c_void_p(start), ctypes.c_size_t(end - start)) != 0       # refused
    assert libc.mprotect(ctypes.c_void_p(start), ctypes.c_size_t(end - start), 7) != 0  # refused
    moved = libc.mremap(start, end - start, end - start, 1)                           # MREMAP_MAYMOVE
    assert moved in (None, ctypes.c_void_p(-1).value), "a sealed mapping moved"
    loaded = [os.path.basename(p) for _, _, p in exec_file_mappings()]
    late = next(p for p in sys.argv[1:] if not any(n.startswith(p.split(".so")[0] + ".so") for n in loaded))
    ctypes.CDLL(late)                            # loaded after the seal: unsealed
    # a sealed library's code made writable first (a constructor's mprotect): the seal keeps it so
    start = next(s for s, e, p in exec_file_mappings() if "ctypes" in p)
    assert libc.mprotect(ctypes.c_void_p(start), ctypes.c_size_t(4096), 7) != 0   # sealed: refused
    print("ready", os.path.basename(late), flush=True)
    sys.stdin.read()
""")


@needs_mseal
def test_sealed_code_stays_and_the_judge_sees_what_was_loaded_since():
    late = [p for p in map(ctypes.util.find_library, ("sqlite3", "uuid", "gdbm", "readline", "ncursesw", "bz2", "lzma", "z")) if p]
    if not late:
        pytest.skip("no library to load late")
    proc = subprocess.Popen([sys.executable, "-c", PROBE, *late], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("ready"), proc.stderr.read()[-2000:]
        name = line.split()[1]
        left = seal.unsealed(proc.pid)
        assert left and any(got.startswith(name.split(".so")[0]) for got in left), (name, left)
        assert not any(name.startswith("libpython") or name.startswith("python") for name in left), left
        assert seal.TOO_MANY in seal.unsealed(proc.pid, limit=10)     # past the limit: said, not read blind
        # the judge's check, on that process: strict
        from grader.judge.judge import Judge
        state = {"judge_flags": []}
        child = SimpleNamespace(proc=SimpleNamespace(pid=proc.pid))
        Judge._check_sealed(SimpleNamespace(_sealing=True, child=child, state=state))
        assert [f["tier"] for f in state["judge_flags"]] == ["strict"]
        assert "unsealed" in state["judge_flags"][0]["detail"]
        state["judge_flags"].clear()                 # a kernel without mseal: nothing expected, nothing said
        Judge._check_sealed(SimpleNamespace(_sealing=False, child=child, state=state))
        assert state["judge_flags"] == []
    finally:
        proc.kill()
        proc.wait()


def test_a_process_that_never_sealed_is_not_judged():
    import os
    assert seal.unsealed(os.getpid()) is None        # pytest's own process sealed nothing


@needs_mseal
def test_code_writable_when_sealed_is_reported():
    """An executable file mapping made writable before the seal (rwx text, a constructor's
    mprotect, or an "awx" section) can be written in place whatever the seal: reported."""
    probe = textwrap.dedent("""
        import ctypes, mmap, os, sys
        from grader.isolation.seal import exec_file_mappings, seal_code
        libc = ctypes.CDLL(None, use_errno=True)
        start, end, path = next(m for m in exec_file_mappings() if "_ctypes" in m[2])
        assert libc.mprotect(ctypes.c_void_p(start), ctypes.c_size_t(end - start), 7) == 0
        seal_code()
        print("ready", os.path.basename(path), flush=True)
        sys.stdin.read()
    """)
    proc = subprocess.Popen([sys.executable, "-c", probe], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        line = proc.stdout.readline()
        assert line.startswith("ready"), proc.stderr.read()[-2000:]
        assert f"{line.split()[1]} (writable)" in seal.unsealed(proc.pid)
        from grader.judge.cpusample import modified_code
        assert any("(writable)" in m for m in modified_code([proc.pid]))
    finally:
        proc.kill()
        proc.wait()
