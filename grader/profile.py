"""`make profile`: run Nsight Compute on the student's kernel and the references.

Writes `<label>.ncu-rep` and its `--page details` / `--page raw` CSV exports (base
units) into the submission's `profiles/` folder, then parses them (grader/ncu.py).
Without `ncu` or a GPU it says so in one line and prints the exact commands to run on
a GPU machine, and where to put the CSVs. Labels keep "before" and "after" apart.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from .config import REPO_ROOT, Config
from .ncu import NcuError, read_files

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


class ProfileError(Exception):
    """Profiling cannot run here or failed; the message says what to do."""


def profiles_dir(submission: Path) -> Path:
    """`profiles/` inside a submission folder, or beside a submission file."""
    submission = Path(submission)
    return (submission if submission.is_dir() else submission.parent) / "profiles"


def ncu_commands(driver_cmd: str, label: str, folder: str = "profiles") -> list[str]:
    """The commands, as a student would type them on a GPU machine."""
    sections = " ".join(f"--section {s}" for s in SECTIONS)
    base = f"{folder}/{label}"
    return [
        f"ncu --clock-control none --nvtx --nvtx-include profile/ {sections} "
        f"--metrics {','.join(METRICS)} -f -o {base} {driver_cmd}",
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
            model: str | None = None, progress=None) -> tuple[Path, list]:
    """Profile the submission's `_CUDA_SRC` and the CUDA references; returns (folder, profiles).
    On a machine without ncu or a GPU (or with backend "cpu") a `_CPP_SRC` is profiled on the
    CPU instead (grader/cpu_profile.py): (folder, its records, dicts)."""
    from .parse import parse
    if not re.fullmatch(r"[A-Za-z0-9_-]+", label):
        raise ProfileError(f"--label {label!r}: use letters, digits, '_' or '-' (e.g. before, after)")
    sub = parse(submission)
    if not sub.ok:
        raise ProfileError(sub.error)
    out = profiles_dir(submission)
    ncu = _find_ncu()
    gpu = Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi")
    if "cpp" in sub.sources and (backend == "cpu" or backend == "auto" and (
            "cuda" not in sub.sources or ncu is None or not gpu)):
        from .cpu_profile import CpuProfileError, measure, read_csv
        try:
            return out, read_csv(measure(sub, cfg, label, model, progress=progress))
        except CpuProfileError as e:
            raise ProfileError(str(e)) from None
    if "cuda" not in sub.sources:
        raise ProfileError(f"{sub.file} has no _CUDA_SRC; Nsight Compute profiles CUDA kernels "
                           "(a CPU kernel is profiled on the CPU: make profile BACKEND=cpu)")
    if ncu is None or not gpu:
        cmds = "\n  ".join(ncu_commands(f"python -m grader.profile_driver {submission}", label, str(out)))
        raise ProfileError(
            f"{'ncu (Nsight Compute) is not installed' if ncu is None else 'no GPU is visible'} here. "
            f"On a GPU machine run `make profile SUBMISSION={submission}`, or by hand from the repo root:"
            f"\n  {cmds}\nand keep the two CSVs in {out}/ (`python -m grader ncu {out}/*.csv` reads them).")
    out.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    report = out / label
    run = [ncu, "--clock-control", "none", "--nvtx", "--nvtx-include", "profile/",
           *[a for s in SECTIONS for a in ("--section", s)], "--metrics", ",".join(METRICS),
           "-f", "-o", str(report), sys.executable, "-m", "grader.profile_driver", str(Path(submission).resolve()),
           cfg.source]
    try:
        proc = subprocess.run(run, cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ProfileError(f"ncu ran longer than {timeout:g} s") from None
    (out / f"{label}_ncu.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 or not report.with_suffix(".ncu-rep").exists():
        tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        raise ProfileError(f"ncu failed (exit {proc.returncode}; log: {out}/{label}_ncu.log):\n{tail}")
    for page in ("details", "raw"):
        csv_path = out / f"{label}_{page}.csv"
        with open(csv_path, "w") as f:
            exp = subprocess.run([ncu, "-i", str(report.with_suffix(".ncu-rep")), "--csv", "--page", page,
                                  "--print-units", "base"], stdout=f, stderr=subprocess.PIPE, text=True)
        if exp.returncode != 0:
            raise ProfileError(f"exporting {csv_path.name} failed: {exp.stderr.strip()[:300]}")
    try:
        return out, read_files([out / f"{label}_details.csv", out / f"{label}_raw.csv"])
    except NcuError as e:
        raise ProfileError(f"the exported CSVs did not parse: {e}") from None
