"""Containment of the child process that runs student code.

Always (every grade, sandbox or not), the judge (`grader.run`) enforces `Limits` on the
child's whole process tree: resident memory, number of processes, size of its work
folder, and the output it may print (kept: the first and last few KiB, the rest counted
and dropped; never parsed). A breach kills the tree and becomes `runtime_error`. The
child gets an allowlisted environment (`child_env`): none of the grader's variables.

With bubblewrap (`bwrap`, Debian package `bubblewrap`) the child also runs in a sandbox
(`bwrap_command`), shaped like the contest judges' (isolate, CMS):
- an unprivileged uid and no capabilities, even when the grader runs as root: as root,
  bwrap builds the sandbox and the child drops to a uid of its own (`sandbox_uid`: no
  other child, before or beside it, has it) before it runs anything, with no capability
  left and no way back (no_new_privs); as a normal
  user, bwrap's own user namespace does it. So the child can neither unmount nor remount
  anything, nor write any file it does not own.
- an allowlist of read-only binds instead of `/`: the system folders (`/usr`, `/lib*`, a
  few files of `/etc`), the Python interpreter and its packages, the grader package
  alone (not the repository), the one binding-module build it needs, and the paths the
  judge names (the audited kernel library). Other submissions, every OUT folder, the
  hidden config, the instructor's home are not there at all: nothing to uncover.
- its own work folder the only writable place, plus `/tmp` and `/dev/shm` as tmpfs of a
  fixed size, whose contents count in the memory limit (`tmpfs_bytes`);
- new network (none at all), PID, IPC and UTS namespaces; killing the sandbox kills
  every process in it; on CUDA only the chosen GPU's device nodes.
`self_test` proves it on this machine before a batch runs student code.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

GiB = 1 << 30
MiB = 1 << 20
SANDBOX_UID = int(os.environ.get("GRADER_SANDBOX_UID", "65534"))     # nobody
SANDBOX_GID = int(os.environ.get("GRADER_SANDBOX_GID", "65534"))     # nogroup
# As root, every sandbox gets a uid (and gid) of its own from this range, so that nothing the
# kernel keeps per user (keyrings, inotify and message-queue quotas, ...) is shared between
# two children or outlives one into the next; GRADER_SANDBOX_UID set: that one uid for all.
UID_BASE = int(os.environ.get("GRADER_SANDBOX_UID_BASE", "3900000"))
UID_RANGE = 100_000
_uid_lock = threading.Lock()
_uid_next = [int.from_bytes(os.urandom(4), "little") % UID_RANGE]


def sandbox_uid() -> int:
    """A uid for the next sandbox: its own, as root (UID_BASE + a counter that starts at a
    random place, so concurrent graders rarely meet); SANDBOX_UID otherwise, or when
    GRADER_SANDBOX_UID names one."""
    if not as_root() or "GRADER_SANDBOX_UID" in os.environ:
        return SANDBOX_UID
    with _uid_lock:
        _uid_next[0] = (_uid_next[0] + 1) % UID_RANGE
        return UID_BASE + _uid_next[0]


@dataclass(frozen=True)
class Limits:
    memory_bytes: int = 16 * GiB      # the child's memory: processes (PSS) + its /tmp and /dev/shm
    max_processes: int = 256          # processes of the tree (threads are not counted)
    disk_bytes: int = 4 * GiB         # size of the work folder (builds, temp files)
    output_bytes: int = 16 << 10      # printed output kept (head and tail halves)
    poll_s: float = 0.1               # how often the tree is measured
    max_files: int = 100_000          # entries in the work folder

    @property
    def tmp_bytes(self) -> int:
        """Size of the sandbox's /tmp (a tmpfs: memory): an eighth of the memory, <= 1 GiB."""
        return max(16 * MiB, min(GiB, self.memory_bytes // 8))

    @property
    def shm_bytes(self) -> int:
        """Size of the sandbox's /dev/shm (a tmpfs): a sixteenth of the memory, <= 256 MiB."""
        return max(8 * MiB, min(256 * MiB, self.memory_bytes // 16))

    def as_dict(self) -> dict:
        return {"memory_bytes": self.memory_bytes, "max_processes": self.max_processes,
                "disk_bytes": self.disk_bytes, "output_bytes": self.output_bytes,
                "tmp_bytes": self.tmp_bytes, "shm_bytes": self.shm_bytes}


class SandboxError(Exception):
    """The sandbox cannot be used here; the message says why and what to do."""


def bwrap_path() -> str | None:
    """The bwrap binary: $GRADER_BWRAP, else `bwrap` on PATH; None when there is none or
    it cannot create namespaces here."""
    path = os.environ.get("GRADER_BWRAP") or shutil.which("bwrap")
    if not path or not os.access(path, os.X_OK):
        return None
    return path if _bwrap_works(path) else None


_WORKS: dict = {}


def _bwrap_works(path: str) -> bool:
    if path not in _WORKS:
        try:
            proc = subprocess.run([path, *_namespace_args(), "--ro-bind", "/", "/", "--die-with-parent",
                                   "true"], capture_output=True, timeout=20)
            _WORKS[path] = proc.returncode == 0
        except (OSError, subprocess.SubprocessError):
            _WORKS[path] = False
    return _WORKS[path]


def as_root() -> bool:
    return os.geteuid() == 0


def _namespace_args() -> list[str]:
    """Namespaces: as root, no user namespace (bwrap needs root to build the mounts from
    paths only root can read; the child drops to SANDBOX_UID itself); otherwise the user
    namespace is how an unprivileged bwrap works at all."""
    ns = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]
    if as_root():
        return ns
    return ["--unshare-user", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_GID), "--disable-userns", *ns]


# The child's first instruction as root: become SANDBOX_UID for good, then run the command.
# After setresuid from 0 every capability is gone; bwrap set no_new_privs, so no setuid
# binary can give one back.
_DROP = ("import os,sys\n"
         "os.setgroups([]); os.setresgid({gid},{gid},{gid}); os.setresuid({uid},{uid},{uid})\n"
         "assert os.getuid() == {uid} and os.geteuid() == {uid}\n"
         "os.execv(sys.argv[1], sys.argv[1:])\n")


# ---- what the child may see ---------------------------------------------------------------

_ETC_FILES = ("ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "nsswitch.conf")


def _system_binds() -> list[str]:
    """Binds of the system folders: /usr, and /bin /lib /lib64 /sbin ... as the symlinks
    they are on a merged-/usr system, else read-only binds."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.is_dir():
            args += ["--ro-bind", str(path), str(path)]
    args += ["--perms", "0755", "--dir", "/etc"]      # bwrap would make it 0700: closed to the child
    for name in _ETC_FILES:
        path = Path("/etc") / name
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


_ACCOUNTS: Path | None = None


def _accounts_dir(uid: int = SANDBOX_UID) -> Path:
    """A minimal /etc/passwd and /etc/group (root and the sandbox's uid, named student), so
    getpwuid works without showing the machine's accounts: one folder per uid."""
    global _ACCOUNTS
    with _uid_lock:
        if _ACCOUNTS is None or not _ACCOUNTS.is_dir():
            _ACCOUNTS = Path(tempfile.mkdtemp(prefix="grader-accounts-"))
            os.chmod(_ACCOUNTS, 0o755)
        folder = _ACCOUNTS / str(uid)
        if not (folder / "group").is_file():
            folder.mkdir(mode=0o755, exist_ok=True)
            gid = uid if uid != SANDBOX_UID else SANDBOX_GID
            (folder / "passwd").write_text(f"root:x:0:0:root:/root:/usr/sbin/nologin\n"
                                           f"student:x:{uid}:{gid}:student:/nonexistent:/usr/sbin/nologin\n")
            (folder / "group").write_text(f"root:x:0:\nstudent:x:{gid}:\n")
            for name in ("passwd", "group"):
                os.chmod(folder / name, 0o644)
        return folder


def sandbox_python() -> str:
    """The interpreter's path as the sandbox shows it. A virtual environment reached through a
    symbolic link (`.venv -> /elsewhere/venv`) is bound at its real folder (python_paths), so the
    link's path does not exist inside: the same interpreter is named through the real prefix
    (not the fully resolved binary, which would leave the environment: Python finds pyvenv.cfg
    beside the path it was started by)."""
    exe = Path(sys.executable)
    try:
        return str(Path(sys.prefix).resolve() / exe.relative_to(sys.prefix))
    except ValueError:                       # an interpreter outside its prefix: as it is
        return sys.executable


def python_paths() -> list[Path]:
    """Folders the interpreter and the toolchain need: the Python prefixes, the sys.path
    folders that hold packages, the CUDA toolkit, LD_LIBRARY_PATH. Never the repository
    (the grader package is bound alone), a home folder, the working folder, or an
    ancestor of any of them: a path like '' in sys.path must not bind the instructor's home."""
    from ..core.config import REPO_ROOT
    never = {Path("/").resolve(), REPO_ROOT.resolve(), Path.home().resolve(), Path.cwd().resolve()}
    wanted = [sys.prefix, sys.base_prefix, sys.exec_prefix]
    wanted += [p for p in sys.path if p and ("site-packages" in p or "dist-packages" in p)]
    wanted += [os.environ.get("CUDA_HOME", ""), os.environ.get("CUDA_PATH", "")]
    wanted += os.environ.get("LD_LIBRARY_PATH", "").split(os.pathsep)
    wanted += toolchain_prefixes()
    found: list[Path] = []
    for p in wanted:
        if not p:
            continue
        try:
            path = Path(p).resolve()
        except OSError:
            continue
        if path.is_file():                     # python311.zip and the like
            path = path.parent
        if not path.is_dir() or path.is_relative_to("/usr"):
            continue
        if any(path == n or n.is_relative_to(path) for n in never):
            continue
        if any(path == f or path.is_relative_to(f) for f in found):
            continue
        found = [f for f in found if not f.is_relative_to(path)] + [path]
    return found


# the programs a build runs: torch's load_inline calls $CXX (else c++) and ninja, nvcc calls
# its host compiler, the compiler its assembler and linker
_TOOLS = ("c++", "g++", "gcc", "cc", "nvcc", "ninja", "ld", "as")


def toolchain_prefixes() -> list[str]:
    """The install folders of the compilers a build runs, where they live outside /usr (a
    GPU image's /opt/gcc/bin/g++ -> /opt/gcc): a sandboxed build must find them, and their
    libexec and lib folders, at the same paths."""
    path = os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin")
    found = []
    for tool in (os.environ.get("CXX", ""), os.environ.get("CC", ""), *_TOOLS):
        where = shutil.which(tool.split()[0], path=path) if tool.strip() else None
        for p in {where, os.path.realpath(where)} if where else ():
            # its prefix, never a top-level folder like /opt itself, and under a home folder
            # (~/.local/bin/ninja) the bin folder alone: ~/.local holds keyrings and tokens
            bindir = Path(p).parent
            homes = (Path.home(), Path("/home"), Path("/root"))
            in_home = any(bindir.is_relative_to(h) for h in homes)
            wide = bindir.name == "bin" and len(bindir.parent.parts) > 2 and not in_home
            found.append(str(bindir.parent if wide else bindir))
    return found


def _ancestors_dirs(paths: list[Path], made: set) -> list[str]:
    """--dir for each ancestor of `paths` (mode 0755, so SANDBOX_UID can pass through even
    where the host's is 0700, as /root is), each once."""
    args: list[str] = []
    for path in paths:
        for parent in reversed(path.parents):
            if str(parent) in ("/", "/tmp", "/dev", "/dev/shm", "/proc") or str(parent) in made or \
                    str(parent).startswith("/usr"):
                continue
            made.add(str(parent))
            args += ["--perms", "0755", "--dir", str(parent)]
    return args


def bwrap_command(bwrap: str, cmd: list[str], workdir: Path, limits: Limits, hide: tuple = (),
                  ro_paths: tuple = (), gpu_nodes: tuple = (), seccomp_fd: int | None = None,
                  uid: int = SANDBOX_UID) -> list[str]:
    """`cmd` wrapped in the sandbox (module doc): `workdir` the only writable folder,
    `ro_paths` bound read-only at their own path, `gpu_nodes` the device nodes bound (none:
    no GPU), nothing under `hide` bound even when an allowlisted folder would contain it;
    `seccomp_fd` (grader/isolation/seccomp.py: the caller passes it on) the system calls refused;
    `uid` the one the child runs as, as root (`sandbox_uid()`: its own; gid the same number)."""
    from ..core.config import REPO_ROOT
    hide_res = [Path(h).resolve() for h in hide]
    workdir = Path(workdir).resolve()

    args = [bwrap, *_namespace_args(), "--die-with-parent", "--new-session", "--cap-drop", "ALL"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    if as_root():
        args += ["--cap-add", "CAP_SETUID", "--cap-add", "CAP_SETGID"]    # for the drop, then gone
    args += _system_binds()
    acc = _accounts_dir(uid if as_root() else SANDBOX_UID)
    args += ["--ro-bind", str(acc / "passwd"), "/etc/passwd", "--ro-bind", str(acc / "group"), "/etc/group"]
    binds = [p for p in python_paths() if not _under_hidden(p, hide_res, workdir)]
    binds.append(REPO_ROOT / "grader")
    binds += [Path(p).resolve() for p in ro_paths]
    binds = [b for b in dict.fromkeys(binds) if b.exists() and not str(b).startswith("/usr/")]
    # /proc, /dev and the two tmpfs first: a bind under /tmp (a temp folder, a venv in /tmp)
    # must be mounted on top of the new /tmp, not hidden by it
    args += ["--proc", "/proc", "--dev", "/dev"]
    for node in gpu_nodes:
        args += ["--dev-bind", str(node), str(node)]
    if gpu_nodes:
        args += ["--ro-bind", "/sys", "/sys"]
    args += ["--perms", "1777", "--size", str(limits.tmp_bytes), "--tmpfs", "/tmp",
             "--perms", "1777", "--size", str(limits.shm_bytes), "--tmpfs", "/dev/shm"]
    made: set = set()
    args += _ancestors_dirs(binds + [workdir], made)
    for path in binds:
        args += ["--ro-bind", str(path), str(path)]
    args += ["--bind", str(workdir), str(workdir), "--chdir", str(workdir)]
    python = sandbox_python()
    cmd = [python if c == sys.executable else c for c in cmd]
    if as_root():
        drop = _DROP.format(uid=uid, gid=uid if uid != SANDBOX_UID else SANDBOX_GID)
        return args + ["--", python, "-I", "-S", "-c", drop, *cmd]
    return args + ["--", *cmd]


def _under_hidden(path: Path, hide: list[Path], workdir: Path) -> bool:
    """True if binding `path` would show something the child must not see."""
    return any(path == h or path.is_relative_to(h) or h.is_relative_to(path) for h in hide)


def prepare_workdir(workdir: Path, uid: int = SANDBOX_UID) -> None:
    """The child's work folder (fresh, made by the judge with the folders in it), owned by
    the uid the child runs as (root: `uid`), every ancestor left to root: the child
    cannot rename or replace its own folder. Only the judge's own folders are changed:
    nothing a child wrote is walked (a link in it could point anywhere)."""
    workdir.mkdir(parents=True, exist_ok=True)
    if as_root():
        gid = uid if uid != SANDBOX_UID else SANDBOX_GID
        for sub in [workdir, *(p for p in workdir.iterdir() if not p.is_symlink() and p.is_dir())]:
            os.lchown(sub, uid, gid)


def gpu_device_nodes(gpu: str) -> list[str]:
    """The device nodes a CUDA child needs for one GPU (a UUID or an nvidia-smi index):
    the control and UVM nodes, and /dev/nvidia<minor> of that GPU alone (its minor number
    from /proc/driver/nvidia/gpus/<bus id>/information). Every /dev/nvidia<N> where the
    minor cannot be found (then the isolation record says so)."""
    nodes = [n for n in ("/dev/nvidiactl", "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools") if os.path.exists(n)]
    minor = None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=pci.bus_id", "--format=csv,noheader", "-i", gpu],
                             capture_output=True, text=True, timeout=10).stdout.strip().splitlines()
        if out:
            bus = out[0].strip().lower()
            for cand in (bus, bus[4:] if len(bus) > 12 else "0000" + bus[-8:]):
                info = Path("/proc/driver/nvidia/gpus") / cand / "information"
                if info.is_file():
                    for line in info.read_text().splitlines():
                        if line.startswith("Device Minor:"):
                            minor = int(line.split(":")[1])
    except (OSError, subprocess.SubprocessError, ValueError):
        minor = None
    if minor is not None and os.path.exists(f"/dev/nvidia{minor}"):
        return nodes + [f"/dev/nvidia{minor}"]
    return nodes + sorted(str(p) for p in Path("/dev").glob("nvidia[0-9]*"))


# ---- the environment ------------------------------------------------------------------------

# Variables the child may inherit: how to find the toolchain and libraries, and nothing
# else of the grader's (no tokens, no GRADER_* settings, no Slurm or cloud credentials).
_PASS_ENV = ("PATH", "LD_LIBRARY_PATH", "CUDA_HOME", "CUDA_PATH", "CC", "CXX", "LANG", "LC_ALL", "TZ",
             "NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES")
# ... and those the judge sets itself (device, threads, caches)
_JUDGE_ENV = ("CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "GRADER_CACHE", "GRADER_SHARED_CACHE",
              "PYTORCH_NVML_BASED_CUDA_CHECK", "TORCH_CUDA_ARCH_LIST", "MAX_JOBS", "TRITON_INTERPRET")


def child_env(extra: dict, home: Path, tmp: Path) -> dict:
    """The child's whole environment: an allowlist of the grader's, then `extra` (only
    the keys the judge may set), then the child's own HOME and temp folder."""
    env = {k: os.environ[k] for k in _PASS_ENV if k in os.environ}
    env.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    env.setdefault("LANG", "C.UTF-8")
    env.update({k: str(v) for k, v in extra.items() if k in _JUDGE_ENV})
    env.update({"HOME": str(home), "TMPDIR": str(tmp), "XDG_CACHE_HOME": str(home / ".cache"),
                "TRITON_CACHE_DIR": str(home / ".triton"), "PYTHONUNBUFFERED": "1",
                "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"})
    return env


# ---- proving the sandbox holds, on this machine ----------------------------------------------

_PROBE = r"""
import ctypes, json, os, socket, sys
hide = json.loads(sys.argv[1])
libc = ctypes.CDLL(None, use_errno=True)
report = {"uid": os.getuid(), "euid": os.geteuid(), "gid": os.getgid(), "groups": os.getgroups()}
status = open("/proc/self/status").read()
report["cap_eff"] = status.split("CapEff:")[1].split()[0]
report["cap_prm"] = status.split("CapPrm:")[1].split()[0]
report["no_new_privs"] = status.split("NoNewPrivs:")[1].split()[0]
report["umount_tmp"] = libc.umount2(b"/tmp", 2) == 0
report["remount_root_rw"] = libc.mount(None, b"/", None, 32 | 1 << 5, None) == 0 or libc.mount(None, b"/usr", None, 32, None) == 0
def shows(path):
    # a hidden folder may exist only as the chain of empty folders down to the work folder
    if not os.path.lexists(path):
        return False
    here = os.getcwd()
    if not os.path.isdir(path) or os.path.islink(path) or not (here + "/").startswith(path.rstrip("/") + "/"):
        return True
    rest = here[len(path.rstrip("/")) + 1:].split("/")
    for part in rest:
        if sorted(os.listdir(path)) != [part]:
            return True
        path = os.path.join(path, part)
    return False
report["hidden_visible"] = [p for p in hide if shows(p)]
report["root_writable"] = os.access("/", os.W_OK) or os.access("/usr", os.W_OK)
try:
    s = socket.create_connection(("1.1.1.1", 53), timeout=1)
    report["network"] = True
except OSError:
    report["network"] = False
st = os.statvfs("/tmp")
report["tmp_bytes"] = st.f_blocks * st.f_frsize
# the seccomp filter: a key in the user keyring would outlive this sandbox (add_key)
nr = {"x86_64": 248, "aarch64": 217}.get(os.uname().machine)
if nr is not None:
    libc.syscall.restype = ctypes.c_long
    key = libc.syscall(ctypes.c_long(nr), b"user", b"grader-probe", b"x", ctypes.c_size_t(1), ctypes.c_int(-4))
    report["keyring"] = key >= 0
    report["keyring_errno"] = ctypes.get_errno()
# sockets: kernel memory no limit counts (a Unix socket pair's buffers), and no one to talk to
pair = (ctypes.c_int * 2)()
report["socketpair"] = libc.socketpair(1, 1, 0, pair) == 0
# ... but CUDA's initialisation opens a Unix socket to look for an MPS server: it must open,
# and its connect find nothing; nothing may be bound or listened on, nor any other family opened
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    report["unix_socket"] = True
    try:
        s.connect("/tmp/nvidia-mps/control")
        report["mps_connect_errno"] = 0
    except OSError as e:
        report["mps_connect_errno"] = e.errno
    try:
        s.bind("\0grader-probe")
        report["bind"] = True
    except OSError:
        report["bind"] = False
except OSError:
    report["unix_socket"], report["mps_connect_errno"], report["bind"] = False, None, False
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    report["inet_socket"] = True
except OSError:
    report["inet_socket"] = False
try:        # a datagram socket receives without a bind (the kernel names it): a peer
    socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    report["dgram_socket"] = True
except OSError:
    report["dgram_socket"] = False
print(json.dumps(report))
"""


def self_test(bwrap: str, workdir: Path, limits: Limits, hide: tuple) -> dict:
    """Run a probe inside the sandbox and return what it saw; SandboxError if the sandbox
    does not hold here (capabilities left, a mount it could change, a hidden path it can
    see, network, root, /tmp unbounded)."""
    uid = sandbox_uid()
    prepare_workdir(workdir, uid)
    from .seccomp import program_fd
    probe = [sys.executable, "-I", "-S", "-c", _PROBE, __import__("json").dumps([str(h) for h in hide])]
    fd = program_fd()
    cmd = bwrap_command(bwrap, probe, workdir, limits, hide, seccomp_fd=fd, uid=uid)
    env = child_env({}, workdir, Path("/tmp"))
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env, stdin=subprocess.DEVNULL,
                              pass_fds=() if fd is None else (fd,))
        report = __import__("json").loads(proc.stdout.strip().splitlines()[-1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError) as e:
        err = getattr(proc, "stderr", "") if "proc" in locals() else ""
        raise SandboxError(f"the sandbox self-test did not run ({type(e).__name__}: {e}; {str(err).strip()[-300:]})") \
            from None
    finally:
        if fd is not None:
            os.close(fd)
    problems = []
    if report["uid"] == 0 or report["euid"] == 0:
        problems.append("the child runs as root")
    if int(report["cap_eff"], 16) or int(report["cap_prm"], 16):
        problems.append(f"the child keeps capabilities ({report['cap_eff']})")
    if report["umount_tmp"] or report["remount_root_rw"]:
        problems.append("the child can unmount or remount")
    if report["hidden_visible"]:
        problems.append(f"the child sees {report['hidden_visible'][0]}")
    if report["root_writable"]:
        problems.append("the child can write / or /usr")
    if report["network"]:
        problems.append("the child has network")
    if report["tmp_bytes"] > limits.tmp_bytes * 1.01:
        problems.append("/tmp is not bounded")
    if report.get("keyring"):
        problems.append("the child can store a key in the kernel's keyring (no seccomp filter)")
    if report.get("socketpair") or report.get("bind") or report.get("inet_socket") or report.get("dgram_socket"):
        problems.append("the child can make a socket pair, bind a socket, or open a network or datagram one "
                        "(no seccomp filter)")
    if report.get("unix_socket") is False and report.get("keyring") is False:
        problems.append("the seccomp filter refuses socket(AF_UNIX), which CUDA's initialisation needs")
    if problems:
        raise SandboxError("the sandbox does not hold on this machine: " + "; ".join(problems))
    return report


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


def _children_map() -> dict[int, list[tuple[int, int, int]]]:
    """ppid -> [(pid, rss_pages, cpu_ticks)] for every process on the machine (one scan of
    /proc per SCAN_TTL_S, shared by all the supervising threads of this process)."""
    global _SCAN
    import time
    with _SCAN_LOCK:
        if time.monotonic() - _SCAN[0] < SCAN_TTL_S:
            return _SCAN[1]
        _SCAN = (time.monotonic(), _scan_proc())
        return _SCAN[1]


def _scan_proc() -> dict[int, list[tuple[int, int, int]]]:
    tree: dict[int, list[tuple[int, int, int]]] = {}
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
        # utime + stime, and cutime + cstime: the children it has reaped (a short-lived process
        # the kernel forks is gone by the next scan, its CPU time with it, and would read as
        # "other processes": a busy machine, whose timings the judge trusts less)
        ticks = int(fields[11]) + int(fields[12]) + int(fields[13]) + int(fields[14])
        tree.setdefault(ppid, []).append((int(entry.name), rss, ticks))
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


def tree_members(pid: int) -> list[tuple[int, int, int]]:
    """(pid, rss_pages, cpu_ticks) of `pid` and all its descendants."""
    tree = _children_map()
    info = {p: (p, r, t) for kids in tree.values() for p, r, t in kids}
    members, stack, seen = [], [pid], set()
    while stack:
        p = stack.pop()
        if p in seen:
            continue
        seen.add(p)
        if p in info:
            members.append(info[p])
        stack += [c for c, _, _ in tree.get(p, [])]
    return members


def _memfd_bytes(pids: list[int]) -> int:
    """Memory held in memfds the processes have open: written with write(), never mapped,
    it shows in no resident size (tmpfs files are bounded by the sandbox's tmpfs sizes)."""
    seen, total = set(), 0
    for pid in pids:
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:
            continue
        for fd in fds:
            path = f"/proc/{pid}/fd/{fd}"
            try:
                if not os.readlink(path).startswith("/memfd:"):
                    continue
                st = os.stat(path)
            except OSError:
                continue
            if (st.st_dev, st.st_ino) not in seen:
                seen.add((st.st_dev, st.st_ino))
                total += st.st_blocks * 512
    return total


def tmpfs_bytes(pids: list[int], fallback: int) -> int:
    """Bytes in the sandbox's /tmp and /dev/shm (tmpfs: memory), read through a sandboxed
    process's root (/proc/<pid>/root: both are mount points the child cannot replace);
    `fallback` (their full sizes) when no process's root can be read. A process still in the
    judge's own root (bwrap before its pivot_root, at the child's start) is skipped: its /tmp
    is the machine's (a fresh clone's CI read 24.3 GiB there and stopped a child that had not
    run a line); 0 when every process is so (nothing of the sandbox exists yet)."""
    try:
        host = os.stat("/")
    except OSError:
        host = None
    outside = 0
    for pid in reversed(pids):
        try:
            root = os.stat(f"/proc/{pid}/root")
            if host is not None and (root.st_dev, root.st_ino) == (host.st_dev, host.st_ino):
                outside += 1
                continue
            used = 0
            for mount in ("tmp", "dev/shm"):
                st = os.statvfs(f"/proc/{pid}/root/{mount}")
                if st.f_blocks * st.f_frsize > fallback:        # not a sandbox tmpfs (sized by us)
                    raise OSError("not the sandbox's tmpfs")
                used += (st.f_blocks - st.f_bfree) * st.f_frsize
            return used
        except OSError:
            continue
    return 0 if pids and outside == len(pids) else fallback


def tree_usage(pid: int, max_processes: int | None = None) -> tuple[int, int]:
    """(memory bytes, number of processes) of `pid` and all its descendants: their PSS and
    the memfds they hold. When there are more than `max_processes`, memory is not measured
    (returned as 0)."""
    members = tree_members(pid)
    if max_processes is not None and len(members) > max_processes:
        return 0, len(members)
    pids = [p for p, _, _ in members]
    return sum(_pss_bytes(p, r) for p, r, _ in members) + _memfd_bytes(pids), len(members)


class OutputCap:
    """Drain a pipe in a thread: keep the first and last `limit/2` bytes, count the rest.
    `private()` sends everything read from then on to a second, private buffer (the
    hidden configs' output, which no student-visible file may hold)."""

    def __init__(self, pipe, limit: int):
        self.limit = limit
        self._bufs = [[b"", b"", 0], [b"", b"", 0]]     # public, private: head, tail, total
        self._which = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, args=(pipe,), daemon=True)
        self._thread.start()

    @property
    def total(self) -> int:
        return self._bufs[0][2] + self._bufs[1][2]

    def counted(self, which: int = 0) -> int:
        """Bytes read into the public (0) or the private (1) buffer, kept or dropped."""
        return self._bufs[which][2]

    def private(self) -> None:
        with self._lock:
            self._which = 1

    def _drain(self, pipe) -> None:
        half = self.limit // 2
        for chunk in iter(lambda: pipe.read1(65536), b""):
            with self._lock:
                buf = self._bufs[self._which]
                buf[2] += len(chunk)
                if len(buf[0]) < half:
                    take = half - len(buf[0])
                    buf[0] += chunk[:take]
                    chunk = chunk[take:]
                buf[1] = (buf[1] + chunk)[-half:]
        pipe.close()

    def join(self, timeout: float = 2.0) -> None:
        self._thread.join(timeout)

    def text(self, which: int = 0) -> str:
        head, tail, total = self._bufs[which]
        dropped = total - len(head) - len(tail)
        middle = f"\n... [{dropped} bytes of output dropped] ...\n" if dropped > 0 else ""
        return (head + middle.encode() + tail).decode("utf-8", "replace")
