"""`make profile`: run Nsight Compute on the student's kernel and the references.

Two exports per label, each a `.ncu-rep` with its `--page details` / `--page raw` CSVs
(base units) in the submission's `profiles/` folder, parsed by grader/analysis/ncu.py:

- cold, `<label>*`: Nsight Compute's default `--cache-control all` flushes every cache
  before each kernel, so each kernel reads its inputs from DRAM: what the AI model counts;
- warm, `<label>_warm*`: `--cache-control none --replay-mode application`, the kernels back
  to back as in a forward pass, each finding in L2 what the one before left there. Whole-
  application replay (the program runs once per metric pass) keeps that true in every pass:
  with kernel replay a kernel's later passes would find its own inputs cached by its first.

The driver names its outer NVTX range after the export (`profile` / `profile_warm`), so
the parser tells them apart from the data itself (grader/analysis/ncu.py: CACHE_RANGES). Without
`ncu` or a GPU it says so in one line and prints the exact commands to run on a GPU
machine, and where to put the CSVs. Labels keep "before" and "after" apart.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ..core.config import REPO_ROOT, Config
from ..analysis.ncu import NcuError, read_files
from ..build.parse import profiles_dir  # (grader.evidence.profile.profiles_dir, its old home, still works)

SECTIONS = ("SpeedOfLight", "SpeedOfLight_RooflineChart", "MemoryWorkloadAnalysis")
# the raw metrics the roofline needs (FORMATS.md §3.4, §4): counts, bytes, clocks, peaks
METRICS = (
    "gpu__time_duration.sum", "dram__bytes_read.sum", "dram__bytes_write.sum",
    "dram__bytes.sum.per_second", "dram__bytes.sum.peak_sustained", "dram__cycles_elapsed.avg.per_second",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum", "sm__sass_thread_inst_executed_op_fadd_pred_on.sum",
    "sm__sass_thread_inst_executed_op_fmul_pred_on.sum",
    "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained", "sm__cycles_elapsed.avg.per_second",
    "smsp__cycles_elapsed.avg.per_second",
    "lts__lts2xbar_cycles_active.sum.per_second", "lts__lts2xbar_cycles_active.sum.peak_sustained",
    "lts__cycles_elapsed.avg.per_second",
    "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    "l1tex__throughput.avg.pct_of_peak_sustained_active", "lts__throughput.avg.pct_of_peak_sustained_elapsed",
)
# The bytes L2 delivers to the SMs, each SM's copy counted (the crossbar into L1TEX), and the
# read sectors L1 asked of L2: beside ncu's L2 roofline traffic (32 B x lts2xbar cycles, above),
# which counts a line that L2 sends to many SMs at once one time only (a shared read of k and v
# by every block of a head is served once, delivered many times)
DELIVERED_METRICS = ("l1tex__m_xbar2l1tex_read_sectors.sum", "l1tex__m_xbar2l1tex_read_sectors.sum.pct_of_peak_sustained_elapsed",
                     "lts__t_sectors_srcunit_tex_op_read.sum")


class ProfileError(Exception):
    """Profiling cannot run here or failed; the message says what to do."""


WARM = "_warm"        # label suffix of the warm-pipeline export


def ncu_args(warm: bool = False, delivered: bool = True) -> list[str]:
    """Nsight Compute's options for the cold (default) or the warm-pipeline export (without
    `delivered`: the metrics every Nsight Compute knows, for one whose list lacks those)."""
    cache = ["--cache-control", "none", "--replay-mode", "application"] if warm else []
    metrics = METRICS + (DELIVERED_METRICS if delivered else ())
    return ["--clock-control", "none", *cache, "--nvtx", "--nvtx-include", "profile_warm/" if warm else "profile/",
            *[a for s in SECTIONS for a in ("--section", s)], "--metrics", ",".join(metrics)]


def ncu_commands(driver_cmd: str, label: str, folder: str = "profiles", warm: bool = False) -> list[str]:
    """The commands, as a student would type them on a GPU machine (cold, or with `warm` the
    warm-pipeline export: its files carry the `_warm` suffix, its driver the --warm flag)."""
    base = f"{folder}/{label}{WARM if warm else ''}"
    return [
        f"ncu {' '.join(ncu_args(warm))} -f -o {base} {driver_cmd}{' --warm' if warm else ''}",
        f"ncu -i {base}.ncu-rep --csv --page details --print-units base > {base}_details.csv",
        f"ncu -i {base}.ncu-rep --csv --page raw --print-units base > {base}_raw.csv",
    ]


def _find_ncu() -> str | None:
    found = shutil.which("ncu")
    if found:
        return found
    for pattern in ("/usr/local/cuda/bin/ncu", "/opt/nvidia/nsight-compute/*/ncu"):
        for p in sorted(Path("/").glob(pattern.lstrip("/")), reverse=True):
            return str(p)
    return None


def profile(submission: Path, cfg: Config, label: str = "after", timeout: float = 540, backend: str = "auto",
            model: str | None = None, progress=None, warm: bool = True) -> tuple[Path, list]:
    """Profile the submission's `_CUDA_SRC` and the CUDA references: the cold export, then
    (with `warm`) the warm-pipeline one; returns (folder, profiles of both). On a machine
    without ncu or a GPU (or with backend "cpu") a `_CPP_SRC` is profiled on the CPU instead
    (grader/evidence/cpu_profile.py): (folder, its records, dicts)."""
    from ..build.parse import parse
    if not re.fullmatch(r"[A-Za-z0-9_-]+", label):
        raise ProfileError(f"--label {label!r}: use letters, digits, '_' or '-' (e.g. before, after)")
    if label.endswith(WARM):
        raise ProfileError(f"--label {label!r}: labels ending in {WARM!r} are the warm exports make profile "
                           "writes itself; pick another label")
    sub = parse(submission)
    if not sub.ok:
        raise ProfileError(sub.error)
    out = profiles_dir(submission)
    ncu = _find_ncu()
    gpu = Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi")
    triton = triton_profile(sub, backend)
    if triton and (ncu is None or not gpu):
        raise ProfileError(f"{'ncu (Nsight Compute) is not installed' if ncu is None else 'no GPU is visible'} "
                           "here: a Triton kernel is profiled with Nsight Compute on a GPU (Triton's interpreter "
                           "runs NumPy on the CPU: nothing of the kernel to profile). On a GPU machine run "
                           f"`make profile SUBMISSION={submission} BACKEND=triton`.")
    if not triton and "cpp" in sub.sources and (backend == "cpu" or backend == "auto" and (
            "cuda" not in sub.sources or ncu is None or not gpu)):
        from .cpu_profile import CpuProfileError, measure, read_csv
        try:
            return out, read_csv(measure(sub, cfg, label, model, progress=progress))
        except CpuProfileError as e:
            raise ProfileError(str(e)) from None
    if "cuda" not in sub.sources and not triton:
        raise ProfileError(f"{sub.file} has no _CUDA_SRC; Nsight Compute profiles CUDA kernels "
                           "(a CPU kernel is profiled on the CPU: make profile BACKEND=cpu)")
    if ncu is None or not gpu:
        driver = f"python -m grader.evidence.profile_driver {submission}"
        cmds = "\n  ".join(ncu_commands(driver, label, str(out)) + ncu_commands(driver, label, str(out), warm=True))
        raise ProfileError(
            f"{'ncu (Nsight Compute) is not installed' if ncu is None else 'no GPU is visible'} here. "
            f"On a GPU machine run `make profile SUBMISSION={submission}`, or by hand from the repo root "
            f"(the cold export, then the warm one):\n  {cmds}\nand keep the CSVs in {out}/ "
            f"(`python -m grader ncu {out}/*.csv` reads them).")
    out.mkdir(parents=True, exist_ok=True)
    files = _run(ncu, submission, cfg, out, label, timeout, warm=False, triton=triton)
    if warm:
        try:
            files += _run(ncu, submission, cfg, out, label + WARM, timeout, warm=True, triton=triton)
        except ProfileError as e:
            raise ProfileError(f"the cold export is in {out}/{label}_*.csv; the warm one failed: {e}") from None
    try:
        return out, read_files(files[:2]) + (read_files(files[2:]) if files[2:] else [])
    except NcuError as e:
        raise ProfileError(f"the exported CSVs did not parse: {e}") from None


def triton_profile(sub, backend: str) -> bool:
    """Whether `make profile` profiles the submission's Triton source: asked for, or the
    source the grader would grade (grader/run.py choose_backend: the one implemented)."""
    if "triton" not in sub.sources or backend in ("cpu", "cuda"):
        return False
    if backend == "triton":
        return True
    from ..build.parse import is_template_stub
    return not is_template_stub(sub, "triton") and all(is_template_stub(sub, k) for k in sub.sources if k != "triton")


def _run(ncu: str, submission: Path, cfg: Config, out: Path, label: str, timeout: float, warm: bool,
         triton: bool = False) -> list[Path]:
    """One ncu run and its two CSV exports; returns [details, raw]."""
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop("TRITON_INTERPRET", None)       # the compiled kernels are profiled, never the interpreter
    if triton:
        # an autotuned kernel picks its config by timing, again in every process: the warm
        # export's application replay runs the driver once per metric pass and needs the same
        # kernels (grids) in each, so the first run's choice is kept on disk and reused
        env["TRITON_CACHE_AUTOTUNING"] = "1"
    report = out / label
    driver = [sys.executable, "-m", "grader.evidence.profile_driver", str(Path(submission).resolve()), cfg.source,
              *(["--warm"] if warm else []), *(["--triton"] if triton else [])]
    log = ""
    for delivered in (True, False):
        try:
            proc = subprocess.run([ncu, *ncu_args(warm, delivered), "-f", "-o", str(report), *driver], cwd=REPO_ROOT,
                                  env=env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise ProfileError(f"ncu ran longer than {timeout:g} s ({label})") from None
        log += proc.stdout + proc.stderr
        # an Nsight Compute without the delivered-bytes metrics refuses the whole list: once more without
        if proc.returncode == 0 or not re.search(r"(?i)metric.{0,80}(not found|failed to find|invalid)|"
                                                 r"(failed to find|unknown|invalid) metric", proc.stdout + proc.stderr):
            break
        log += "\n(make profile: again without the delivered-bytes metrics)\n"
    (out / f"{label}_ncu.log").write_text(log)
    if proc.returncode != 0 or not report.with_suffix(".ncu-rep").exists():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        raise ProfileError(f"ncu failed (exit {proc.returncode}; log: {out}/{label}_ncu.log):\n{tail}")
    files = []
    for page in ("details", "raw"):
        csv_path = out / f"{label}_{page}.csv"
        with open(csv_path, "w") as f:
            exp = subprocess.run([ncu, "-i", str(report.with_suffix(".ncu-rep")), "--csv", "--page", page,
                                  "--print-units", "base"], stdout=f, stderr=subprocess.PIPE, text=True)
        if exp.returncode != 0:
            raise ProfileError(f"exporting {csv_path.name} failed: {exp.stderr.strip()[:300]}")
        files.append(csv_path)
    return files
