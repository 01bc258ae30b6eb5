"""Can a sandboxed child initialise CUDA here, and if not, what stops it?

    python tools/sandbox_gpu_probe.py [GPU]       (GPU: an nvidia-smi index or UUID, default 0)

Runs a small probe (cuInit and cuDeviceGetCount through libcuda, the device nodes it sees)
inside the batch's sandbox with that GPU's nodes bound, as a grade would (bubblewrap, a CUDA
child's seccomp filter, a uid of its own as root), and whether a socket bound and listening
there has a peer, and the CPU time of two idle seconds after a context (a spinning driver
thread); then with one part of the sandbox changed at a time: without the filter,
with the shared uid 65534 instead of its own, with a CPU child's filter. Where the filter is
what stops it, each refused system call is let through in turn to name the one the driver
needs. One JSON line a variant; exit 0 when the full sandbox initialises CUDA and its idle
context burns no CPU. Run by
tools/gpu_session.sh's setup phase (as root on the GPU machine).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grader.isolation.sandbox import (SANDBOX_UID, Limits, bwrap_command, bwrap_path, child_env,  # noqa: E402
                                      gpu_device_nodes, prepare_workdir, sandbox_uid)
from grader.isolation.seccomp import denied_names, program_fd  # noqa: E402

_PROBE = r"""
import ctypes, glob, json, os
r = {"uid": os.getuid()}
r["nodes"] = {p: [oct(os.stat(p).st_mode & 0o777), os.access(p, os.R_OK | os.W_OK)] for p in sorted(glob.glob("/dev/nvidia*"))}
try:
    lib = ctypes.CDLL("libcuda.so.1")
except OSError as e:
    r["libcuda"] = str(e)
else:
    r["cuInit"] = lib.cuInit(0)
    n = ctypes.c_int(-1)
    r["count_rc"] = lib.cuDeviceGetCount(ctypes.byref(n))
    r["count"] = n.value
    # a context, then two idle seconds: the process's CPU time in them (a driver thread
    # spinning, as beside the faked bind and listen of 2026-11-27: ~2 s)
    import time
    dev, ctx = ctypes.c_int(0), ctypes.c_void_p()
    if lib.cuDeviceGet(ctypes.byref(dev), 0) == 0 and lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0:
        lib.cuCtxSetCurrent(ctx)
        t = os.times(); time.sleep(2); u = os.times()
        r["idle_cpu_s"] = round(u.user + u.system - t.user - t.system, 2)
# what a student's kernel gets from bind and listen: no peer to queue memory with
import socket
a, b = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    a.bind("\0grader-peer"); a.listen(8); r["bind_listen"] = "made"
    b.connect("\0grader-peer"); r["peer"] = "connected"
except OSError as e:
    r.setdefault("bind_listen", "refused"); r["peer"] = e.strerror
print(json.dumps(r))
"""


def probe(gpu: str, seccomp: bool = True, own_uid: bool = True, allow: tuple = (), cuda_filter: bool = True) -> dict:
    with tempfile.TemporaryDirectory(prefix="gpu-probe-") as d:
        work = Path(d) / "w"
        uid = sandbox_uid() if own_uid else SANDBOX_UID
        prepare_workdir(work, uid)
        fd = program_fd(allow, gpu=cuda_filter) if seccomp else None
        cmd = bwrap_command(bwrap_path(), [sys.executable, "-I", "-S", "-c", _PROBE], work, Limits(),
                            gpu_nodes=tuple(gpu_device_nodes(gpu)), seccomp_fd=fd, uid=uid)
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=child_env({}, work, Path("/tmp")),
                                  stdin=subprocess.DEVNULL, pass_fds=() if fd is None else (fd,))
        finally:
            if fd is not None:
                os.close(fd)
        try:
            return json.loads(proc.stdout.strip().splitlines()[-1])
        except (ValueError, IndexError):
            return {"rc": proc.returncode, "stderr": proc.stderr.strip()[-300:]}


def works(r: dict) -> bool:
    return r.get("cuInit") == 0 and r.get("count", 0) > 0


def main() -> int:
    gpu = sys.argv[1] if len(sys.argv) > 1 else "0"
    print("nodes bound:", gpu_device_nodes(gpu))
    direct = subprocess.run([sys.executable, "-I", "-S", "-c", _PROBE], capture_output=True, text=True, timeout=120)
    print("outside the sandbox:", direct.stdout.strip() or direct.stderr.strip()[-300:])
    full = probe(gpu)
    print("full sandbox:", json.dumps(full))
    if works(full):
        if full.get("idle_cpu_s", 0) > 0.5:      # a thread spinning beside every sandboxed grade
            print(f"the sandboxed context burned {full['idle_cpu_s']} s of CPU in 2 idle seconds "
                  f"(outside it: see above): a driver thread spins; tools/thread_cpu.py beside a grade names it")
            return 1
        return 0
    plain = probe(gpu, seccomp=False)
    print("without the seccomp filter:", json.dumps(plain))
    print("with uid 65534:", json.dumps(probe(gpu, own_uid=False)))
    print("neither:", json.dumps(probe(gpu, seccomp=False, own_uid=False)))
    print("the CPU child's filter (bind, listen refused):", json.dumps(probe(gpu, cuda_filter=False)))
    if works(plain):
        # the filter with nothing refused (its architecture check alone), then each refusal alone
        names = [*denied_names(), "socket", "clone", "clone3"]
        bare = probe(gpu, allow=tuple(names), cuda_filter=False)
        print("the filter refusing nothing:", json.dumps(bare))
        for name in names if works(bare) else []:
            r = probe(gpu, allow=tuple(n for n in names if n != name), cuda_filter=False)
            if not works(r):
                print(f"the driver needs {name}: refusing it alone:", json.dumps(r))
    return 1


if __name__ == "__main__":
    sys.exit(main())
