"""The system calls a kernel has no business making, refused by the Linux kernel itself: a
seccomp filter for the sandbox (bubblewrap loads it with `--seccomp FD`). A shared leaf.

A symbol audit reads names; a kernel can issue a system call by number from any
instruction (a `syscall` hidden in another instruction's immediate, a prefix the
disassembly shows differently, a 32-bit `int $0x80` with its own numbering). The filter
decides on the call itself, whatever issued it, as Docker's default profile and the
contest sandboxes (isolate) do. Refused with EPERM:

- the kernel keyrings (add_key, request_key, keyctl): as root every sandbox is the host's
  uid 65534, and a key stored by one submission outlived it for the next to read;
- reading or writing other processes (ptrace, process_vm_readv/writev, pidfd_getfd, kcmp),
  performance counters (perf_event_open), BPF, userfaultfd, io_uring (a second syscall
  path no filter sees);
- namespaces (unshare, setns, clone with a CLONE_NEW* flag), mounts of every kind,
  pivot_root, chroot; kernel modules, kexec, reboot, swap, clocks, quotas, the kernel log,
  file handles (open_by_handle_at walks past every mount);
- sockets that could ever have a peer (the network namespace is empty, and a kernel has no
  one to talk to; 2.5 GiB queued in Unix socket buffers was kernel memory no limit counted):
  every family but AF_UNIX, every type but the connection-based SOCK_STREAM and
  SOCK_SEQPACKET (a datagram socket needs no listen to receive: SO_PASSCRED and a failed
  connect have the kernel name it, and another one sends to that name), and socketpair. A
  CPU child's filter refuses bind and listen, so no socket ever listens; a CUDA child's
  refuses connect instead (ENOENT, "nothing there"), so nothing ever connects to one that
  listens. CUDA's driver needs both halves: at initialisation it connects to look for an MPS
  server (/tmp/nvidia-mps/control, absent here: ENOENT, as it expects), and it binds a Unix
  socket and listens on it, failing cuInit (CUDA_ERROR_OPERATING_SYSTEM) when either is
  refused (tools/sandbox_gpu_probe.py, the H200, 2026-11-27). Bind and listen answered with
  success but not made were worse: the driver's thread polling that socket woke at once
  (a socket that never listened reads as hung up) and spun a whole core for the child's
  life, and the judge's own checks, in OpenMP on every core, ran 2-12x slower beside it
  (tools/thread_cpu.py, the H200, 2026-11-27: a sandboxed batch of one, bench 40 s vs 19 s);
- System V shared memory, message queues and semaphores (shmget, msgget, semget: kernel
  memory too, outside the processes' resident size);
- any call of another ABI than the machine's own (i386's `int $0x80`, x32).
clone3 answers ENOSYS, as under Docker: its flags sit behind a pointer no filter can read,
and the C library then falls back to clone, whose flags it can.

The program is classic BPF (struct sock_filter: u16 code, u8 jt, u8 jf, u32 k), built here
for x86-64 and arm64; on another machine `program()` is None and the sandbox says so.
"""
from __future__ import annotations

import os
import platform
import struct

# struct seccomp_data: int nr; u32 arch; u64 instruction_pointer; u64 args[6] (little-endian)
_NR, _ARCH, _ARG0 = 0, 4, 16
AF_UNIX = 1
_LD_W_ABS, _JEQ, _JGE, _JSET, _RET, _AND = 0x20, 0x15, 0x35, 0x45, 0x06, 0x54
_ARG1 = _ARG0 + 8
SOCK_STREAM, SOCK_SEQPACKET, SOCK_TYPE_MASK = 1, 5, 0xF
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000
EPERM, ENOENT, ENOSYS = 1, 2, 38
# CLONE_NEWNS | NEWCGROUP | NEWUTS | NEWIPC | NEWUSER | NEWPID | NEWNET
CLONE_NEW_FLAGS = 0x00020000 | 0x02000000 | 0x04000000 | 0x08000000 | 0x10000000 | 0x20000000 | 0x40000000

_X86_64 = {"arch": 0xC000003E, "x32_bit": 0x40000000, "clone": 56, "clone3": 435, "denied": {
    "ptrace": 101, "syslog": 103, "uselib": 134, "vhangup": 153, "pivot_root": 155, "_sysctl": 156,
    "adjtimex": 159, "chroot": 161, "acct": 163, "settimeofday": 164, "mount": 165, "umount2": 166,
    "swapon": 167, "swapoff": 168, "reboot": 169, "sethostname": 170, "setdomainname": 171, "iopl": 172,
    "ioperm": 173, "init_module": 175, "delete_module": 176, "quotactl": 179, "nfsservctl": 180,
    "lookup_dcookie": 212, "clock_settime": 227, "kexec_load": 246, "add_key": 248, "request_key": 249,
    "keyctl": 250, "unshare": 272, "perf_event_open": 298, "fanotify_init": 300, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "clock_adjtime": 305, "setns": 308, "process_vm_readv": 310,
    "process_vm_writev": 311, "kcmp": 312, "finit_module": 313, "kexec_file_load": 320, "bpf": 321,
    "userfaultfd": 323, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
    "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "socketpair": 53, "bind": 49, "listen": 50, "shmget": 29, "msgget": 68, "semget": 64},
    "sockets": {"socket": 41, "connect": 42}}
_ARM64 = {"arch": 0xC00000B7, "x32_bit": None, "clone": 220, "clone3": 435, "denied": {
    "lookup_dcookie": 18, "umount2": 39, "mount": 40, "pivot_root": 41, "chroot": 51, "vhangup": 58,
    "quotactl": 60, "acct": 89, "unshare": 97, "kexec_load": 104, "init_module": 105, "delete_module": 106,
    "clock_settime": 112, "syslog": 116, "ptrace": 117, "reboot": 142, "sethostname": 161,
    "setdomainname": 162, "settimeofday": 170, "adjtimex": 171, "add_key": 217, "request_key": 218,
    "keyctl": 219, "swapon": 224, "swapoff": 225, "perf_event_open": 241, "fanotify_init": 262,
    "name_to_handle_at": 264, "open_by_handle_at": 265, "clock_adjtime": 266, "setns": 268,
    "process_vm_readv": 270, "process_vm_writev": 271, "kcmp": 272, "finit_module": 273,
    "bpf": 280, "userfaultfd": 282, "kexec_file_load": 294, "io_uring_setup": 425, "io_uring_enter": 426,
    "io_uring_register": 427, "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431,
    "fsmount": 432, "fspick": 433, "pidfd_getfd": 438, "process_madvise": 440, "mount_setattr": 442,
    "socketpair": 199, "bind": 200, "listen": 201, "shmget": 194, "msgget": 186, "semget": 190},
    "sockets": {"socket": 198, "connect": 203}}
TABLES = {"x86_64": _X86_64, "aarch64": _ARM64}


def table(machine: str | None = None) -> dict | None:
    """The syscall table of this machine (platform.machine()), None where there is none here."""
    return TABLES.get(machine or platform.machine())


def denied_names(machine: str | None = None) -> list[str]:
    t = table(machine)
    return sorted(t["denied"]) if t else []


# refused names that a CUDA child's filter lets through; it refuses connect instead (module doc)
GPU_ALLOWED = ("bind", "listen")


def program(machine: str | None = None, allow: tuple = (), gpu: bool = False) -> bytes | None:
    """The filter as bytes of struct sock_filter, or None on a machine without a table;
    `allow`: names of the denied list let through (tools/sandbox_gpu_probe.py: which refusal
    a driver trips over); `gpu`: a CUDA child's, where GPU_ALLOWED are made and every connect
    answers ENOENT."""
    t = table(machine)
    if t is None:
        return None
    # (code, jt label or offset, jf label or offset, k); labels resolved below
    ins: list[list] = [[_LD_W_ABS, 0, 0, _ARCH], [_JEQ, 1, 0, t["arch"]], [_RET, 0, 0, RET_ERRNO | EPERM],
                       [_LD_W_ABS, 0, 0, _NR]]
    if t["x32_bit"]:
        ins.append([_JGE, "deny", 0, t["x32_bit"]])
    checked = [("clone3", "enosys", t["clone3"]), ("clone", "clone", t["clone"]),
               ("socket", "socket", t["sockets"]["socket"])]
    if gpu:
        checked.append(("connect", "enoent", t["sockets"]["connect"]))
    for name, label, nr in checked:
        if name not in allow:
            ins.append([_JEQ, label, 0, nr])
    for name, nr in sorted(t["denied"].items(), key=lambda item: item[1]):
        if name not in allow and not (gpu and name in GPU_ALLOWED):
            ins.append([_JEQ, "deny", 0, nr])
    labels = {}
    ins.append([_RET, 0, 0, RET_ALLOW])
    labels["clone"] = len(ins)
    ins += [[_LD_W_ABS, 0, 0, _ARG0], [_JSET, "deny", 0, CLONE_NEW_FLAGS], [_RET, 0, 0, RET_ALLOW]]
    labels["socket"] = len(ins)          # socket(domain, type, ...): AF_UNIX alone, the whole 64-bit
    ins += [[_LD_W_ABS, 0, 0, _ARG0], [_JEQ, 0, "deny", AF_UNIX], [_LD_W_ABS, 0, 0, _ARG0 + 4],
            [_JEQ, 0, "deny", 0],        # word; a type (its low bits: the kernel reads an int) with a connection
            [_LD_W_ABS, 0, 0, _ARG1], [_AND, 0, 0, SOCK_TYPE_MASK],
            [_JEQ, "allow", 0, SOCK_STREAM], [_JEQ, "allow", "deny", SOCK_SEQPACKET]]
    labels["allow"] = len(ins)
    ins.append([_RET, 0, 0, RET_ALLOW])
    labels["deny"] = len(ins)
    ins.append([_RET, 0, 0, RET_ERRNO | EPERM])
    labels["enosys"] = len(ins)
    ins.append([_RET, 0, 0, RET_ERRNO | ENOSYS])
    labels["enoent"] = len(ins)
    ins.append([_RET, 0, 0, RET_ERRNO | ENOENT])
    out = bytearray()
    for i, (code, jt, jf, k) in enumerate(ins):
        jt = labels[jt] - i - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - i - 1 if isinstance(jf, str) else jf
        assert 0 <= jt < 256 and 0 <= jf < 256, "a jump out of reach"
        out += struct.pack("<HBBI", code, jt, jf, k)
    return bytes(out)


def program_fd(allow: tuple = (), gpu: bool = False) -> int | None:
    """A file descriptor holding `program()` at offset 0, for `bwrap --seccomp FD` (the
    caller passes it to the child and closes its own copy); None without a table."""
    prog = program(allow=allow, gpu=gpu)
    if prog is None:
        return None
    fd = os.memfd_create("grader-seccomp", 0) if hasattr(os, "memfd_create") else None
    if fd is None:
        import tempfile
        fd = os.dup(tempfile.TemporaryFile().fileno())
    os.write(fd, prog)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
