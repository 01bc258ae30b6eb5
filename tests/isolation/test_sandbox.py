"""grader/isolation/sandbox.py: what a sandboxed child is given (the policy is proven end to end by
the red-team suite and the batch tests; these are the unit checks)."""
import json
import os

import pytest
from pathlib import Path

from conftest import REPO

def test_a_compiler_outside_usr_is_bound_with_its_prefix(tmp_path, monkeypatch):
    """A GPU image's GCC lives in /opt/gcc: the sandboxed build must see /opt/gcc (bin,
    libexec, lib), not only /usr, or every build in the batch fails with 'g++: not found'."""
    from grader.isolation.sandbox import python_paths, toolchain_prefixes
    prefix = tmp_path / "opt" / "gcc"
    (prefix / "bin").mkdir(parents=True)
    (prefix / "libexec").mkdir()
    gxx = prefix / "bin" / "g++"
    gxx.write_text("#!/bin/sh\n")
    gxx.chmod(0o755)
    monkeypatch.setenv("CXX", str(gxx))
    assert str(prefix) in toolchain_prefixes()
    assert prefix in python_paths()
    monkeypatch.setenv("CXX", "/opt/g++")                   # a top-level folder is never bound whole
    assert "/opt" not in toolchain_prefixes()


def test_a_tool_under_a_home_folder_binds_its_bin_folder_only(tmp_path, monkeypatch):
    """pip install --user puts ninja in ~/.local/bin: ~/.local (keyrings, tokens) stays out."""
    from grader.isolation.sandbox import toolchain_prefixes
    home = tmp_path / "home"
    (home / ".local" / "bin").mkdir(parents=True)
    ninja = home / ".local" / "bin" / "ninja"
    ninja.write_text("#!/bin/sh\n")
    ninja.chmod(0o755)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{home / '.local' / 'bin'}:/usr/bin:/bin")
    found = toolchain_prefixes()
    assert str(home / ".local" / "bin") in found and str(home / ".local") not in found


def test_a_process_not_yet_in_the_sandbox_counts_no_tmpfs():
    """At a child's start its process tree is bwrap still in the judge's own root: the
    machine's /tmp is not the sandbox's and must not count in its memory (a fresh clone's CI
    read 24.3 GiB there and stopped a child before it ran a line)."""
    import os
    from grader.isolation.sandbox import tmpfs_bytes
    assert tmpfs_bytes([os.getpid()], 3 << 30) == 0
    assert tmpfs_bytes([], 3 << 30) == 3 << 30                  # nothing readable: the full sizes


# ---- the seccomp filter (grader/isolation/seccomp.py) ----------------------------------------------

def _run_filter(prog: bytes, nr: int, arch: int, arg0: int = 0, arg1: int = 0) -> int:
    """The classic-BPF program run on one seccomp_data (the instructions it uses)."""
    import struct
    ins = [struct.unpack_from("<HBBI", prog, i) for i in range(0, len(prog), 8)]
    data = struct.pack("<iIQ6Q", nr, arch, 0, arg0, arg1, 0, 0, 0, 0)
    acc, pc = 0, 0
    while True:
        code, jt, jf, k = ins[pc]
        if code == 0x20:
            acc = struct.unpack_from("<I", data, k)[0]
        elif code == 0x06:
            return k
        elif code == 0x54:                                          # ALU AND K
            acc &= k
        elif code in (0x15, 0x35, 0x45):
            hit = acc == k if code == 0x15 else acc >= k if code == 0x35 else bool(acc & k)
            pc += jt if hit else jf
        else:
            raise AssertionError(f"unexpected BPF code {code:#x}")
        pc += 1


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_the_filter_refuses_what_a_kernel_has_no_business_calling(machine):
    from grader.isolation import seccomp
    t, prog = seccomp.table(machine), seccomp.program(machine)
    eperm, allow = seccomp.RET_ERRNO | seccomp.EPERM, seccomp.RET_ALLOW
    for name in ("add_key", "keyctl", "request_key", "ptrace", "perf_event_open", "bpf", "process_vm_readv",
                 "unshare", "setns", "mount", "io_uring_setup", "userfaultfd", "open_by_handle_at"):
        assert _run_filter(prog, t["denied"][name], t["arch"]) == eperm, name
    for nr in (0, 1, 3, 9, 10, 11, 16, 17, 63, 64, 93, 94, 202, 231, 257, 262):   # read, write, mmap, ioctl, futex, ...
        if nr not in t["denied"].values() and nr not in (t["clone"], t["clone3"]):
            assert _run_filter(prog, nr, t["arch"]) == allow, nr
    # threads are clones without namespace flags; clone3's flags sit behind a pointer
    assert _run_filter(prog, t["clone"], t["arch"], 0x003D0F00) == allow          # pthread_create's flags
    assert _run_filter(prog, t["clone"], t["arch"], 0x10000000 | 17) == eperm      # CLONE_NEWUSER
    assert _run_filter(prog, t["clone3"], t["arch"]) == seccomp.RET_ERRNO | seccomp.ENOSYS
    # another ABI (i386's int $0x80: add_key is 286 there) or x32's numbers
    assert _run_filter(prog, 286, 0x40000003) == eperm
    if machine == "x86_64":
        assert _run_filter(prog, 0x40000000 | 248, t["arch"]) == eperm


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_a_unix_socket_opens_for_cudas_init_but_holds_nothing(machine):
    """CUDA's driver opens an AF_UNIX socket at initialisation to look for an MPS server
    (socket, then connect to /tmp/nvidia-mps/control, which is not there): refused, CUDA
    found no GPU and every sandboxed GPU grade was runtime_error (the H200, 2026-11-27).
    Allowed: socket(AF_UNIX) and connect. Refused: any other family (a TCP pair on the
    sandbox's loopback), socketpair, bind and listen, so no socket in the sandbox ever has a
    peer to queue memory with (the socket_memory attack)."""
    from grader.isolation import seccomp
    t, prog = seccomp.table(machine), seccomp.program(machine)
    eperm, allow = seccomp.RET_ERRNO | seccomp.EPERM, seccomp.RET_ALLOW
    socket = t["sockets"]["socket"]
    for kind in (1, 5, 5 | 0x80000, 1 | 0x800, (7 << 32) | 1):  # STREAM, SEQPACKET (CUDA's), + CLOEXEC, NONBLOCK
        assert _run_filter(prog, socket, t["arch"], 1, kind) == allow, kind       # AF_UNIX
    for kind in (2, 2 | 0x800, 3, 10, 0):   # DGRAM (a peer without listen: autobind), RAW, PACKET, none
        assert _run_filter(prog, socket, t["arch"], 1, kind) == eperm, kind
    for family in (2, 10, 16, 17):                                                # INET, INET6, NETLINK, PACKET
        assert _run_filter(prog, socket, t["arch"], family, 1) == eperm, family
    assert _run_filter(prog, socket, t["arch"], 1 | (1 << 32), 1) == eperm        # the whole word, not its low half
    for name in ("socketpair", "bind", "listen"):
        assert _run_filter(prog, t["denied"][name], t["arch"], 1) == eperm, name
    assert _run_filter(prog, t["sockets"]["connect"], t["arch"]) == allow


@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_a_cuda_childs_filter_lets_bind_and_listen_through_and_refuses_connect(machine):
    """CUDA's driver binds a Unix socket and listens on it at initialisation, and cuInit fails
    (CUDA_ERROR_OPERATING_SYSTEM) when either is refused (tools/sandbox_gpu_probe.py on the
    H200, 2026-11-27). Answered with success but not made, the driver's thread polling that
    socket spun a core for the child's life (tools/thread_cpu.py, the H200, 2026-11-27). A
    CUDA child's filter makes them and refuses every connect with ENOENT ("nothing there": what
    CUDA's MPS lookup gets anyway), so a listening socket never has a peer; everything else it
    refuses as a CPU child's does, and a CPU child's filter refuses bind and listen."""
    from grader.isolation import seccomp
    t = seccomp.table(machine)
    cuda, cpu = seccomp.program(machine, gpu=True), seccomp.program(machine)
    eperm, allow = seccomp.RET_ERRNO | seccomp.EPERM, seccomp.RET_ALLOW
    for name in ("bind", "listen"):
        assert _run_filter(cuda, t["denied"][name], t["arch"], 3) == allow, name
        assert _run_filter(cpu, t["denied"][name], t["arch"], 3) == eperm, name
    assert _run_filter(cuda, t["sockets"]["connect"], t["arch"], 3) == seccomp.RET_ERRNO | seccomp.ENOENT
    assert _run_filter(cpu, t["sockets"]["connect"], t["arch"], 3) == allow
    for name in set(t["denied"]) - {"bind", "listen"}:
        assert _run_filter(cuda, t["denied"][name], t["arch"]) == eperm, name
    assert _run_filter(cuda, t["sockets"]["socket"], t["arch"], 2, 1) == eperm       # AF_INET
    assert _run_filter(cuda, t["sockets"]["socket"], t["arch"], 1, 2) == eperm       # AF_UNIX datagrams


def _in_sandbox(tmp_path, script: str, gpu: bool) -> dict:
    """The JSON line `script` prints, run in the real sandbox with a CUDA (gpu) or CPU child's
    filter (skips without bubblewrap or a system-call table)."""
    import subprocess
    import sys
    from grader.isolation import sandbox
    from grader.isolation.seccomp import program_fd, table
    bwrap = sandbox.bwrap_path()
    if bwrap is None or table() is None:
        pytest.skip("needs bubblewrap and a system-call table for this machine")
    work = tmp_path / ("gpu" if gpu else "cpu")
    uid = sandbox.sandbox_uid()
    sandbox.prepare_workdir(work, uid)
    fd = program_fd(gpu=gpu)
    try:
        cmd = sandbox.bwrap_command(bwrap, [sys.executable, "-I", "-S", "-c", script], work, sandbox.Limits(),
                                    seccomp_fd=fd, uid=uid)
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, pass_fds=(fd,),
                              env=sandbox.child_env({}, work, Path("/tmp")))
    finally:
        os.close(fd)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_in_a_cuda_childs_sandbox_a_listening_socket_waits_and_has_no_peer(tmp_path):
    """Bind and listen are made, so a thread polling the socket waits (no spinning core: the
    faked listen answered every poll at once), and a second socket's connect is refused: the
    socket_memory attack's peer never exists."""
    script = ("import json, select, socket\n"
              "a, b = socket.socket(socket.AF_UNIX), socket.socket(socket.AF_UNIX)\n"
              "r = {'bind': a.bind('\\0grader-peer'), 'listen': a.listen(8)}\n"
              "p = select.poll(); p.register(a, select.POLLIN)\n"
              "r['poll'] = p.poll(200)\n"
              "try:\n    b.connect('\\0grader-peer'); r['peer'] = True\n"
              "except OSError as e:\n    r['peer'] = e.errno\n"
              "print(json.dumps(r))\n")
    assert _in_sandbox(tmp_path, script, gpu=True) == {"bind": None, "listen": None, "poll": [], "peer": 2}


@pytest.mark.parametrize("gpu", [False, True])
def test_no_datagram_socket_opens_in_the_sandbox(tmp_path, gpu):
    """A datagram socket needs no bind to receive: SO_PASSCRED and a failed connect have the
    kernel name it, and a second one sends to that name (11 datagrams queued before the first
    EAGAIN, in both filters, 2026-11-27): a peer, and the socket memory it queues counted
    nowhere. Only connection-based Unix sockets open."""
    script = ("import json, socket\n"
              "r = {}\n"
              "for name in ('SOCK_STREAM', 'SOCK_SEQPACKET', 'SOCK_DGRAM'):\n"
              "    try:\n        socket.socket(socket.AF_UNIX, getattr(socket, name)).close(); r[name] = 0\n"
              "    except OSError as e:\n        r[name] = e.errno\n"
              "print(json.dumps(r))\n")
    assert _in_sandbox(tmp_path, script, gpu) == {"SOCK_STREAM": 0, "SOCK_SEQPACKET": 0, "SOCK_DGRAM": 1}


def _self_test(tmp_path) -> dict:
    """The sandbox's self-test report on this machine (skips without bubblewrap or a table)."""
    from grader.isolation import sandbox
    from grader.isolation.seccomp import table
    bwrap = sandbox.bwrap_path()
    if bwrap is None:
        pytest.skip("needs bubblewrap")
    if table() is None:
        pytest.skip("no system-call table for this machine")
    return sandbox.self_test(bwrap, tmp_path / "w", sandbox.Limits(), ())


def test_the_sandbox_lets_cudas_socket_probe_through(tmp_path):
    """What CUDA's initialisation does, in the real sandbox: socket(AF_UNIX, SOCK_SEQPACKET)
    opens and its connect to the absent MPS control socket fails with ENOENT; a socket pair,
    a bound socket and a network socket are refused."""
    report = _self_test(tmp_path)
    assert report.get("unix_socket") is True and report.get("mps_connect_errno") == 2   # ENOENT, as CUDA expects
    assert report["socketpair"] is False and report.get("bind") is False and report.get("inet_socket") is False


def test_the_sandbox_refuses_a_key_in_the_keyring(tmp_path):
    """As root every sandbox is uid 65534 on the host, whose user keyring outlived the
    batch (one submission stored the hidden config, a later one printed it): the self-test
    tries add_key in the sandbox, and it must be refused."""
    report = _self_test(tmp_path)
    assert report["keyring"] is False and report["keyring_errno"] == 1


def test_cpu_time_of_reaped_children_stays_in_the_tree():
    """A kernel that forks short-lived burners: their CPU time left the tree with them, read
    as other processes' use, and the judge took the machine for busy (its clock's flags then
    only for review, the SDPA cap off)."""
    import subprocess
    import sys
    import time
    from grader.isolation.sandbox import tree_members
    code = ("import os, sys, time\n"
            "for _ in range(20):\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        t = time.process_time()\n"
            "        while time.process_time() - t < 0.03: pass\n"
            "        os._exit(0)\n"
            "    os.waitpid(pid, 0)\n"
            "print('done', flush=True)\n"
            "sys.stdin.read()\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "done"
        time.sleep(0.1)                                       # past the scan's cache
        ticks = sum(t for _, _, t in tree_members(proc.pid))
        hz = os.sysconf("SC_CLK_TCK")
        assert ticks / hz >= 0.4, ticks                      # 20 x 30 ms burnt by the reaped children
    finally:
        proc.kill()
        proc.wait()


def test_cpu_time_of_helpers_reaped_unaccounted_is_the_childs(tmp_path):
    """A held-out attack (issue 26): helpers started with SIGCHLD ignored are reaped by the
    kernel, their CPU time in no process of the tree, so it read as other processes' load,
    the machine as busy, and the judge's cap and clock charge went off. In its cgroup the
    child's CPU time keeps theirs. Without a cgroup to make (not root, no delegation) the
    tree is counted as before and the results say which."""
    import subprocess
    import sys
    import time
    from grader.isolation.cpugroup import CpuGroup
    from grader.isolation.sandbox import tree_members
    group, why = CpuGroup.make()
    if group is None:
        pytest.skip("no cgroup can be made here: " + why)
    burn = ("import os, signal, sys, time\n"
            "signal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
            "for _ in range(4):\n"
            "    if os.fork() == 0:\n"
            "        t = time.process_time()\n"
            "        while time.process_time() - t < 0.2: pass\n"
            "        os._exit(0)\n"
            "time.sleep(1.2)\n"
            "print('done', flush=True)\n"
            "sys.stdin.read()\n")
    hz = os.sysconf("SC_CLK_TCK")
    proc = subprocess.Popen([sys.executable, "-c", burn], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            preexec_fn=group.enter)
    try:
        assert proc.stdout.readline().strip() == "done"
        time.sleep(0.1)                                       # past the scan's cache
        tree = sum(t for _, _, t in tree_members(proc.pid)) / hz
        assert group.ticks() / hz >= 0.8 and tree < 0.5, (group.ticks() / hz, tree)   # 4 x 0.2 s
    finally:
        proc.kill()
        proc.wait()
        assert group.remove()
    assert not group.path.exists()


def test_a_frozen_group_stops_a_process_that_forks_and_exits_in_a_loop(tmp_path):
    """The review of the cgroup change: SIGSTOP over a list of pids misses a "pid hopper"
    (each process forks its successor and exits, so every pid is gone when the signal comes),
    and the judge's own SDPA timing ran beside it. Frozen, the group spends no CPU at all."""
    import subprocess
    import sys
    import time
    from grader.isolation.cpugroup import CpuGroup
    group, why = CpuGroup.make()
    if group is None or group.kind != "cgroup v2":
        if group is not None:
            group.remove()
        pytest.skip(f"no cgroup v2 group can be made here: {why or group.kind}")
    hop = ("import os, time\n"
           "while True:\n"
           "    if os.fork():\n"
           "        os._exit(0)\n"
           "    t = time.thread_time()\n"
           "    while time.thread_time() - t < 0.002: pass\n")
    proc = subprocess.Popen([sys.executable, "-c", hop], preexec_fn=group.enter, start_new_session=True)
    try:
        time.sleep(0.5)
        hz = os.sysconf("SC_CLK_TCK")
        assert group.freeze(True)
        before = group.ticks()
        time.sleep(1.0)
        spent = (group.ticks() - before) / hz
        assert group.freeze(False)
        time.sleep(0.3)
        assert spent < 0.05 and (group.ticks() - before) / hz > 0.05, spent     # still, then hopping again
    finally:
        group.kill()
        proc.wait()
        assert group.remove()


def test_the_child_is_counted_from_its_cgroup_and_the_group_goes_with_it(tmp_path):
    import time
    from grader.isolation.cpugroup import CpuGroup
    from grader.isolation.options import RunOptions
    from grader.judge.child import Child
    probe, why = CpuGroup.make()
    if probe is None:
        pytest.skip("no cgroup can be made here: " + why)
    probe.remove()
    child = Child(tmp_path / "work", RunOptions(), threads=1, gpu=False, deadline=time.monotonic() + 60)
    try:
        assert child.isolation["cpu_accounting"] in ("cgroup v2", "cgroup v1 cpuacct")
        assert child.proc.pid in child.cpu.members() or child.proc.poll() is not None
    finally:
        child.close()
    assert child.cpu_ticks() is not None and not child.cpu.path.exists()


def test_every_sandbox_gets_a_uid_of_its_own_as_root(tmp_path):
    """Nothing the kernel keeps per user (keyrings, inotify and message-queue quotas) is
    shared between two children or outlives one into the next: as root each sandbox drops to
    a uid no other sandbox of this grader had, and the self-test's probe runs as it."""
    import os

    from grader.isolation.sandbox import Limits, UID_BASE, UID_RANGE, bwrap_path, sandbox_uid, self_test
    if os.geteuid() != 0 or "GRADER_SANDBOX_UID" in os.environ:
        pytest.skip("as root only (a normal user's bwrap maps one uid)")
    uids = [sandbox_uid() for _ in range(1000)]
    assert len(set(uids)) == 1000 and all(UID_BASE <= u < UID_BASE + UID_RANGE for u in uids)
    if bwrap_path() is None:
        pytest.skip("needs bubblewrap")
    first = self_test(bwrap_path(), tmp_path / "a", Limits(), ())
    second = self_test(bwrap_path(), tmp_path / "b", Limits(), ())
    assert first["uid"] != second["uid"] and UID_BASE <= first["uid"] < UID_BASE + UID_RANGE
    assert first["gid"] == first["uid"] and first["groups"] == []


def test_a_folder_deeper_than_a_path_can_name_is_measured_and_removed(tmp_path):
    """grader/isolation/safefs.py: 2 600 nested folders (deeper than PATH_MAX) with files at the bottom
    and a link out: the judge's measure does not fail open (too deep), and the removal takes
    it all, without recursion and without following the link."""
    import os

    from grader.isolation.safefs import MAX_DEPTH, folder_usage, remove_tree
    outside = tmp_path / "outside.txt"
    outside.write_text("must stay")
    root = tmp_path / "work"
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(2600):
        os.mkdir("a", dir_fd=fd)
        deeper = os.open("a", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = deeper
    for i in range(50):
        os.close(os.open(f"f{i}", os.O_CREAT | os.O_WRONLY, 0o644, dir_fd=fd))
    os.symlink(str(outside), "link", dir_fd=fd)
    os.fchmod(fd, 0o500)                     # a folder the child made unwritable
    os.close(fd)
    size, entries, deep = folder_usage(root, 100_000)
    assert deep and entries >= MAX_DEPTH
    assert remove_tree(root) and not root.exists() and outside.read_text() == "must stay"
    assert remove_tree(root)                 # gone already: fine


def test_a_virtual_environment_reached_through_a_link_runs_in_the_sandbox(tmp_path):
    """A checkout whose .venv is a symbolic link to an environment elsewhere (walkthrough of
    2026-11-27): the environment is bound at its real folder, so the interpreter is named through
    it (sandbox_python) and the self-test runs, instead of failing with an IndexError."""
    import subprocess
    import sys
    if sys.prefix == sys.base_prefix:
        pytest.skip("needs a virtual environment")
    _self_test(tmp_path)                                   # skips without bubblewrap or a table
    link = tmp_path / "checkout" / ".venv"
    link.parent.mkdir()
    link.symlink_to(Path(sys.prefix).resolve(), target_is_directory=True)
    exe = link / Path(sys.executable).relative_to(sys.prefix)
    code = ("import json, sys; from pathlib import Path; from grader.isolation import sandbox; "
            "print(sandbox.sandbox_python()); "
            "print(json.dumps(sandbox.self_test(sandbox.bwrap_path(), Path(sys.argv[1]), sandbox.Limits(), ())))")
    proc = subprocess.run([str(exe), "-c", code, str(tmp_path / "w2")], capture_output=True, text=True,
                          cwd=REPO, timeout=120)
    assert proc.returncode == 0, proc.stderr[-800:]
    first, report = proc.stdout.strip().splitlines()[0], proc.stdout.strip().splitlines()[-1]
    assert first.startswith(str(Path(sys.prefix).resolve())), first
    report = json.loads(report)                 # self_test raises when the sandbox does not hold
    assert report["uid"] != 0 and int(report["cap_eff"], 16) == 0 and report["network"] is False, report
