"""Build the Gradescope autograder image from the zip in a fresh root and grade submissions
through it, each in a memory cgroup of a given size, the way Gradescope does:

    sudo python3 tools/gradescope/emulate.py [--memory 768,3072] [--out DIR] [SUBMISSION ...]

1. a base root: `debootstrap --variant=minbase` of SUITE (cached under --cache: ~25 s once;
   bookworm by default, whose python3 is 3.11, which the CPU torch wheel of --wheels fits;
   `--suite noble` is Gradescope's Ubuntu 24.04, python 3.12, checked without a keyring
   where the machine has no ubuntu-keyring);
2. the image: a fresh copy of the base, the zip (tools/gradescope/build_zip.py) unpacked
   into /autograder/source, run_autograder copied to /autograder/run_autograder, and
   `apt-get update && bash /autograder/source/setup.sh` run in it as root (network on),
   as Gradescope's image build does (~70-100 s);
3. for every memory size and submission: a fresh container of that image (an overlay,
   else a copy), the submission in /autograder/submission with a submission_metadata.json
   shaped like Gradescope's, the page cache dropped (the container's reads are charged to
   it, as on a cold machine), /autograder/run_autograder run in a cgroup-v1 memory group of
   that size (its /sys/fs/cgroup/memory is that group, as in a Docker container), and
   /autograder/results/results.json read back, with the group's figures: memory.max_usage
   (page cache included), the peak of rss + shmem, the peak PSS of the submission's tree
   (worker and compiler, as the grader measures it), the judge's RSS while the worker
   lives, each process's peak RSS by role, a timeline, and the OOM killer's kills.

The summary goes to OUT/summary.json and a line per run to stdout; each results.json to
OUT/<submission>-<MB>.json. Needs root, debootstrap, bwrap and a cgroup-v1 memory
controller (/sys/fs/cgroup/memory); tests/course/test_gradescope_image.py runs it when
GRADER_GRADESCOPE_IMAGE=1. Every size must be > 0: a memory hog in an unlimited group
would take the machine.

torch comes from --torch-pip-args (default: the wheel of --wheels that fits the suite's
python, pinned by its exact version, +cpu): download.pytorch.org, which setup.sh uses on
Gradescope, need not be reachable. The other packages come from this machine's pip
configuration (its find-links and file:// indexes bound read-only into the root, except an
index that holds a torch of its own; its CA certificate copied in), else PyPI.
"""
from __future__ import annotations

import argparse
import configparser
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
import build_zip  # noqa: E402

CGROUP_V1 = Path("/sys/fs/cgroup/memory")
MIRRORS = {"bookworm": "http://deb.debian.org/debian", "noble": "http://archive.ubuntu.com/ubuntu"}
UBUNTU = {"noble", "jammy", "focal"}
DEFAULT_SUBMISSIONS = ["tests/submissions/correct/scalar_loop.py", "reference/fused.cpp",
                       "tests/submissions/wrong/missing_scale.py"]
ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
       "LANG": "C.UTF-8", "DEBIAN_FRONTEND": "noninteractive"}
MiB = 1 << 20


def log(msg: str) -> None:
    print(f"[emulate {time.strftime('%H:%M:%S')}] {msg}", flush=True)


# ---- the base root and the image ------------------------------------------------------------

def base_root(cache: Path, suite: str, mirror: str | None) -> Path:
    """A debootstrap'd minbase root of SUITE, made once and kept under CACHE."""
    base = cache / f"{suite}-minbase"
    if (base / ".emulate-complete").is_file():
        return base
    if not shutil.which("debootstrap"):
        raise SystemExit("debootstrap is missing: apt-get install debootstrap")
    tmp = cache / f"{suite}-minbase.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    cache.mkdir(parents=True, exist_ok=True)
    cmd = ["debootstrap", "--variant=minbase"]
    script: list[str] = []
    if suite in UBUNTU:
        cmd.append("--components=main,universe")
        keyring = Path("/usr/share/keyrings/ubuntu-archive-keyring.gpg")
        cmd.append(f"--keyring={keyring}" if keyring.is_file() else "--no-check-gpg")
        if not Path(f"/usr/share/debootstrap/scripts/{suite}").exists():
            script = ["/usr/share/debootstrap/scripts/gutsy"]      # every Ubuntu release uses it
    t0 = time.monotonic()
    log(f"debootstrap {suite} into {tmp}")
    subprocess.run(cmd + [suite, str(tmp), mirror or MIRRORS.get(suite, MIRRORS["bookworm"])] + script, check=True)
    (tmp / ".emulate-complete").write_text(f"{time.monotonic() - t0:.0f} s\n")
    tmp.rename(base)
    return base


def pip_sources() -> tuple[list[Path], str | None]:
    """Local paths this machine's pip configuration reads (find-links, file:// indexes) and
    that configuration as one pip.conf text, to pass into the root."""
    parser = configparser.ConfigParser()
    files = [Path("/etc/pip.conf"), Path("/etc/xdg/pip/pip.conf"), Path.home() / ".pip" / "pip.conf",
             Path.home() / ".config" / "pip" / "pip.conf"]
    if os.environ.get("PIP_CONFIG_FILE"):
        files.append(Path(os.environ["PIP_CONFIG_FILE"]))
    parser.read([str(f) for f in files if f.is_file()])
    wanted = {k: " ".join(parser.get("global", k).split()) for k in ("index-url", "extra-index-url", "find-links")
              if parser.has_option("global", k)}
    for k in ("index-url", "extra-index-url", "find-links"):
        env = os.environ.get("PIP_" + k.upper().replace("-", "_"))
        if env:
            wanted[k] = " ".join(filter(None, [wanted.get(k, "") if k != "index-url" else "", env]))
    paths: list[Path] = []
    for k, value in wanted.items():
        kept = []
        for item in value.split():
            path = Path(item[len("file://"):]) if item.startswith("file://") else Path(item)
            if path.is_absolute() and (path / "torch").exists():
                log(f"not passing {item} into the root: it holds a torch (the CUDA build?) other than --wheels'")
                continue
            kept.append(item)
            if path.is_absolute() and path.exists():
                paths.append(path)
        wanted[k] = " ".join(kept)
    wanted = {k: v for k, v in wanted.items() if v}
    # file:// indexes link to their files by relative paths (../../files/x.whl): bind the parent
    paths = [p.parent if p.name == "simple" else p for p in paths]
    cert = os.environ.get("PIP_CERT") or (parser.get("global", "cert") if parser.has_option("global", "cert") else "")
    if cert and Path(cert).is_file():        # a TLS-inspecting proxy's CA: build_image copies it in
        wanted["cert"] = cert
    if not wanted:
        return [], None
    text = "[global]\n" + "".join(f"{k} = {v}\n" for k, v in wanted.items())
    return sorted(set(paths)), text


SUITE_PYTHON = {"bookworm": "cp311", "noble": "cp312", "jammy": "cp310"}


def torch_wheel_args(wheels: Path, suite: str) -> str:
    """TORCH_PIP_ARGS for the CPU torch wheel of WHEELS that fits SUITE's python, pinned by
    its exact version (+cpu): no index can offer another build of it."""
    tag = SUITE_PYTHON.get(suite, "")
    found = sorted(wheels.glob(f"torch-*-{tag}-*.whl" if tag else "torch-*.whl"))
    if not found:
        raise SystemExit(f"no torch wheel for {tag or suite} in {wheels}: pass --wheels or --torch-pip-args")
    version = found[-1].name.split("-")[1]
    return f"torch=={version} --find-links {wheels}"


def bwrap(root: Path, argv: list[str], binds: list[Path] = (), cgroup: Path | None = None,
          env: dict | None = None, chdir: str = "/") -> list[str]:
    """The command line that runs ARGV as root in ROOT: its own /dev, /proc, PID and IPC
    namespaces, the host's network (Gradescope's containers have one), the host's /sys
    read-only with the memory group CGROUP as its /sys/fs/cgroup/memory."""
    cmd = ["bwrap", "--bind", str(root), "/", "--dev", "/dev", "--proc", "/proc", "--ro-bind", "/sys", "/sys",
           "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--hostname", "gradescope", "--die-with-parent",
           "--cap-add", "ALL", "--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf", "--clearenv", "--chdir", chdir]
    if cgroup is not None:
        cmd += ["--bind", str(cgroup), str(CGROUP_V1)]
    for path in binds:
        cmd += ["--ro-bind", str(path), str(path)]
    for k, v in {**ENV, **(env or {})}.items():
        cmd += ["--setenv", k, v]
    return cmd + argv


def build_image(base: Path, work: Path, config: Path, wheels: Path, torch_args: str | None,
                suite: str) -> tuple[Path, dict]:
    """The autograder image: base + the zip + setup.sh, built as Gradescope builds it."""
    image = work / "image"
    shutil.rmtree(image, ignore_errors=True)
    subprocess.run(["cp", "-a", "--reflink=auto", str(base), str(image)], check=True)
    zpath = build_zip.build(work / "autograder.zip", config)
    source = image / "autograder" / "source"
    source.mkdir(parents=True)
    with zipfile.ZipFile(zpath) as z:
        for info in z.infolist():
            z.extract(info, source)
            os.chmod(source / info.filename, (info.external_attr >> 16) & 0o777 or 0o644)
    shutil.copy2(source / "run_autograder", image / "autograder" / "run_autograder")
    if torch_args is None:
        torch_args = torch_wheel_args(wheels, suite)
    binds, conf = pip_sources()
    binds = sorted(set(binds) | {wheels})
    if conf:
        cert = re.search(r"^cert = (.*)$", conf, re.M)
        if cert:
            shutil.copy(cert.group(1), image / "etc" / "pip-ca.crt")
            conf = conf.replace(cert.group(0), "cert = /etc/pip-ca.crt")
        (image / "etc" / "pip.conf").write_text(conf)
    log(f"setup.sh in {image} (torch: pip install {torch_args})")
    t0 = time.monotonic()
    proc = subprocess.run(bwrap(image, ["bash", "-c", "apt-get update -q && cd /autograder/source && bash ./setup.sh"],
                                binds=binds, env={"TORCH_PIP_ARGS": torch_args}),
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - t0
    (work / "setup.log").write_text(proc.stdout)
    info = {"setup_s": round(seconds, 1), "setup_status": proc.returncode, "setup_log_tail": proc.stdout[-3000:],
            "python": _first_line(image, ["/autograder/venv/bin/python", "--version"]),
            "image_mib": _du_mib(image)}
    if proc.returncode != 0:
        raise SetupFailed(info)
    return image, info


class SetupFailed(Exception):
    def __init__(self, info: dict):
        super().__init__(f"setup.sh failed (status {info['setup_status']}):\n{info['setup_log_tail']}")
        self.info = info


def _first_line(root: Path, argv: list[str]) -> str:
    proc = subprocess.run(bwrap(root, argv), capture_output=True, text=True)
    return (proc.stdout + proc.stderr).strip().splitlines()[0] if (proc.stdout + proc.stderr).strip() else ""


def _du_mib(path: Path) -> int:
    proc = subprocess.run(["du", "-sxm", str(path)], capture_output=True, text=True)
    return int(proc.stdout.split()[0]) if proc.returncode == 0 else -1


# ---- one container ---------------------------------------------------------------------------

class Container:
    """A fresh container of IMAGE: an overlay (upper layer in WORK) where the kernel allows
    one, else a full copy."""

    def __init__(self, image: Path, work: Path):
        self.work, self.overlay = work, False
        shutil.rmtree(work, ignore_errors=True)
        self.root = work / "root"
        for d in ("upper", "work", "root"):
            (work / d).mkdir(parents=True)
        opts = f"lowerdir={image},upperdir={work / 'upper'},workdir={work / 'work'}"
        if subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, str(self.root)],
                          capture_output=True).returncode == 0:
            self.overlay = True
        else:
            self.root.rmdir()
            subprocess.run(["cp", "-a", "--reflink=auto", str(image), str(self.root)], check=True)

    def close(self) -> None:
        if self.overlay:
            subprocess.run(["umount", "-l", str(self.root)], check=False)
        shutil.rmtree(self.work, ignore_errors=True)


class MemoryGroup:
    """A cgroup-v1 memory group of LIMIT MiB; sampled while a command runs in it."""

    def __init__(self, name: str, limit_mib: int | None):
        self.path = CGROUP_V1 / name
        if self.path.exists():
            self.path.rmdir()
        self.path.mkdir()
        if limit_mib:
            (self.path / "memory.limit_in_bytes").write_text(str(limit_mib * MiB))
            memsw = self.path / "memory.memsw.limit_in_bytes"
            if memsw.exists():                        # no swap past the limit either
                memsw.write_text(str(limit_mib * MiB))
        self.peak_anon = 0
        self.roles: dict[str, int] = {}
        self.timeline: list = []          # (s, rss + shmem MiB, {role: RSS MiB}, the tree's PSS MiB) every 0.5 s
        self.peak_child_pss = 0           # MiB: the submission's tree (worker, compiler), as PSS
        self.judge_with_worker = 0        # MiB: the judge's RSS while the worker exists
        self._stop = threading.Event()

    def _stat(self) -> dict:
        out = {}
        for line in (self.path / "memory.stat").read_text().splitlines():
            k, v = line.split()
            out[k] = int(v)
        return out

    def _sample(self) -> None:
        t0, last = time.monotonic(), -1.0
        while not self._stop.wait(0.05):
            try:
                st = self._stat()
                anon = st.get("total_rss", 0) + st.get("total_shmem", 0)
                self.peak_anon = max(self.peak_anon, anon)
                now: dict[str, int] = {}
                pss = 0
                for pid in (self.path / "cgroup.procs").read_text().split():
                    try:
                        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                        status = Path(f"/proc/{pid}/status").read_text()
                    except OSError:
                        continue
                    hwm, rss = re.search(r"VmHWM:\s+(\d+) kB", status), re.search(r"VmRSS:\s+(\d+) kB", status)
                    if hwm and rss:
                        role = _role(cmd)
                        self.roles[role] = max(self.roles.get(role, 0), int(hwm.group(1)) >> 10)
                        now[role] = now.get(role, 0) + (int(rss.group(1)) >> 10)
                        if role in ("worker", "compiler"):   # the submission's tree, as the grader measures it (PSS)
                            pss += _pss_kib(pid)
                self.peak_child_pss = max(self.peak_child_pss, pss >> 10)
                if "worker" in now:               # the judge's share while the submission's tree exists
                    self.judge_with_worker = max(self.judge_with_worker, now.get("judge", 0))
                t = time.monotonic() - t0
                if t - last >= 0.5:
                    last = t
                    self.timeline.append((round(t, 1), anon >> 20, now, pss >> 10))
            except OSError:
                pass

    def run(self, argv: list[str], timeout: float) -> subprocess.CompletedProcess:
        procs = str(self.path / "cgroup.procs")

        def join():
            with open(procs, "w") as f:
                f.write(str(os.getpid()))
        sampler = threading.Thread(target=self._sample, daemon=True)
        sampler.start()
        try:
            return subprocess.run(argv, preexec_fn=join, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=timeout)
        finally:
            self._stop.set()
            sampler.join()

    def figures(self) -> dict:
        oom = re.search(r"oom_kill (\d+)", (self.path / "memory.oom_control").read_text())
        return {"max_usage_mib": int((self.path / "memory.max_usage_in_bytes").read_text()) >> 20,
                "peak_rss_shmem_mib": self.peak_anon >> 20, "process_peak_rss_mib": dict(sorted(self.roles.items())),
                "peak_submission_pss_mib": self.peak_child_pss, "judge_rss_with_worker_mib": self.judge_with_worker,
                "oom_kills": int(oom.group(1)) if oom else None, "timeline": self.timeline}

    def close(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.1)


def _pss_kib(pid: str) -> int:
    try:
        m = re.search(r"^Pss:\s+(\d+) kB", Path(f"/proc/{pid}/smaps_rollup").read_text(), re.M)
    except OSError:
        return 0
    return int(m.group(1)) if m else 0


def _role(cmdline: str) -> str:
    if "grader.course.gradescope" in cmdline:
        return "judge"
    if "grader.judge.worker" in cmdline:
        return "worker"
    if re.search(r"cc1plus|/ld |collect2|\bg\+\+|\bc\+\+|ninja|/as ", cmdline):
        return "compiler"
    return "other"


def stage_submission(src: Path, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        shutil.copytree(src, dest, dirs_exist_ok=True)
    elif src.suffix in (".cpp", ".cc"):
        dest.joinpath("attention.py").write_text(f'_CPP_SRC = r"""\n{src.read_text()}"""\n')
    else:
        shutil.copy(src, dest / "attention.py")


def metadata(created_at: str) -> dict:
    """submission_metadata.json as Gradescope writes it (its documented fields)."""
    return {"id": 123456, "created_at": created_at, "submission_method": "upload",
            "assignment": {"id": 25828, "course_id": 1234, "title": "attention",
                           "due_date": "2026-12-11T23:59:00.000000+00:00",
                           "late_due_date": None, "release_date": "2026-11-01T00:00:00.000000+00:00",
                           "group_submission": False, "group_size": None, "total_points": "100.0"},
            "users": [{"email": "student@example.com", "id": 1234, "name": "Student User",
                       "assignment": {"due_date": "2026-12-11T23:59:00.000000+00:00", "late_due_date": None,
                                      "release_date": "2026-11-01T00:00:00.000000+00:00"}}],
            "previous_submissions": []}


def drop_caches() -> None:
    """Empty the page cache, so the container's reads (torch's libraries, the compiler) are
    charged to its group as in a container started on a cold machine."""
    try:
        os.sync()
        Path("/proc/sys/vm/drop_caches").write_text("3\n")
    except OSError:
        pass


def grade(image: Path, work: Path, name: str, src: Path, memory_mib: int | None, timeout: float,
          env: dict | None = None) -> dict:
    box = Container(image, work / f"box-{name}-{memory_mib}")
    group = MemoryGroup(f"gradescope-emulate-{os.getpid()}-{name}-{memory_mib}", memory_mib)
    try:
        ag = box.root / "autograder"
        stage_submission(src, ag / "submission")
        (ag / "submission_metadata.json").write_text(json.dumps(metadata("2026-12-10T12:00:00.000000+00:00")))
        drop_caches()
        t0 = time.monotonic()
        proc = group.run(bwrap(box.root, ["/autograder/run_autograder"], cgroup=group.path, chdir="/autograder",
                               env=env), timeout)
        seconds = time.monotonic() - t0
        results_path = ag / "results" / "results.json"
        try:
            results = json.loads(results_path.read_text())
        except (OSError, ValueError) as e:
            results = {"missing": f"{type(e).__name__}: {e}"}
        return {"submission": name, "memory_mb": memory_mib, "seconds": round(seconds, 1), "status": proc.returncode,
                "stdout_tail": proc.stdout[-4000:], "results": results, **group.figures()}
    finally:
        group.close()
        box.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("submissions", nargs="*", default=DEFAULT_SUBMISSIONS,
                    help="folders, .py files or .cpp kernels (wrapped as _CPP_SRC)")
    ap.add_argument("--memory", default="768,3072", help="container memory sizes in MB")
    ap.add_argument("--suite", default="bookworm")
    ap.add_argument("--mirror", default=None)
    ap.add_argument("--cache", default="/var/cache/gradescope-emulate", help="where the base root is kept")
    ap.add_argument("--work", default=None, help="image and containers (default: OUT/work, removed after)")
    ap.add_argument("--out", default=str(REPO / "report" / "gradescope-emulate"))
    ap.add_argument("--config", default=str(REPO / "assignment" / "config.toml"))
    ap.add_argument("--wheels", default="/opt/wheels", help="folder holding the CPU torch wheel")
    ap.add_argument("--torch-pip-args", default=None, help="TORCH_PIP_ARGS for setup.sh")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per run_autograder")
    ap.add_argument("--keep", action="store_true", help="keep the image (--image reuses it)")
    ap.add_argument("--image", default=None, help="an image a --keep run left: skip the build")
    ap.add_argument("--env", action="append", default=[], metavar="K=V",
                    help="environment of run_autograder (MEMORY_MB=..., GRADER_CONFIG=...)")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.memory.split(",")]
    if min(sizes) <= 0:
        raise SystemExit("--memory: every size must be > 0 MB (a memory hog in an unlimited group takes the machine)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))     # finally: unmount, remove the groups
    if os.geteuid() != 0:
        raise SystemExit("needs root (debootstrap, mounts, cgroups)")
    if not (CGROUP_V1 / "memory.limit_in_bytes").exists():
        raise SystemExit(f"needs a cgroup-v1 memory controller at {CGROUP_V1}")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    work = Path(args.work) if args.work else out / "work"
    work.mkdir(parents=True, exist_ok=True)
    summary: dict = {"suite": args.suite, "config": args.config, "runs": []}
    t0 = time.monotonic()
    base = base_root(Path(args.cache), args.suite, args.mirror)
    summary["base_s"] = round(time.monotonic() - t0, 1)
    try:
        if args.image:
            image, info = Path(args.image), {"setup_s": None, "python": "", "image_mib": None, "reused": args.image}
        else:
            image, info = build_image(base, work, Path(args.config), Path(args.wheels), args.torch_pip_args,
                                      args.suite)
    except SetupFailed as e:
        summary.update(e.info)
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
        log(str(e))
        return 1
    summary.update(info)
    log(f"image built in {info['setup_s']} s ({info['python']}, {info['image_mib']} MiB)")
    try:
        for size in sizes:
            for sub in args.submissions:
                src = (REPO / sub) if not Path(sub).is_absolute() else Path(sub)
                name = src.stem if src.suffix else src.name
                run = grade(image, work, name, src, size, args.timeout,
                            dict(kv.split("=", 1) for kv in args.env))
                (out / f"{name}-{size}.json").write_text(json.dumps(run["results"], indent=1))
                summary["runs"].append(run)
                r = run["results"]
                log(f"{name} in {size} MB: {(r.get('extra_data') or {}).get('verdict')} "
                    f"score {r.get('score')} in {run['seconds']} s; max usage {run['max_usage_mib']} MiB, "
                    f"rss+shmem {run['peak_rss_shmem_mib']} MiB, submission PSS {run['peak_submission_pss_mib']} MiB, "
                    f"judge {run['judge_rss_with_worker_mib']} MiB while the worker lives, "
                    f"{run['process_peak_rss_mib']}, "
                    f"oom kills {run['oom_kills']}")
    finally:
        if not args.keep and not args.image:
            shutil.rmtree(work / "image", ignore_errors=True)
        summary["total_s"] = round(time.monotonic() - t0, 1)
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
