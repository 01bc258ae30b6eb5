"""The machine a result was measured on: every result carries it."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _nvidia_smi(fields: str, gpu: str | None = None) -> list[str]:
    """Fields of one GPU (an index or a UUID): `gpu`, else the GPU this process was handed
    (GRADER_GPU_UUID), else the first of CUDA_VISIBLE_DEVICES (else 0)."""
    if gpu is None:
        gpu = os.environ.get("GRADER_GPU_UUID") or os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(",")[0]
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", gpu],
                             capture_output=True, text=True, timeout=10)
        return [x.strip() for x in out.stdout.strip().split(",")] if out.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        return []


def describe(backend: str, threads: int) -> dict:
    """CPU, torch, threads; and for CUDA: GPU name, SMs, L2, driver, CUDA, clocks."""
    import torch
    info = {
        "cpu": _cpu_name(), "cpu_cores": os.cpu_count(), "platform": platform.platform(),
        "python": platform.python_version(), "torch": torch.__version__, "threads": threads,
    }
    if backend == "cuda" and torch.cuda.is_available():
        props = torch.cuda.get_device_properties(torch.cuda.current_device())
        smi = _nvidia_smi("driver_version,clocks.sm,clocks.mem,clocks.max.sm")
        info.update({
            "gpu": props.name, "gpu_uuid": f"GPU-{props.uuid}", "sm_count": props.multi_processor_count,
            "l2_bytes": getattr(props, "L2_cache_size", None),
            "gpu_memory_bytes": props.total_memory, "cuda": torch.version.cuda,
            "capability": f"{props.major}.{props.minor}",
            "driver": smi[0] if smi else None,
            # read before any work: an idle GPU reports its idle clock here; the clock
            # during timing is in the result's `timing` (clock_sm_mhz_after_bench)
            "clock_sm_mhz_at_start": smi[1] if len(smi) > 1 else None,
            "clock_mem_mhz_at_start": smi[2] if len(smi) > 2 else None,
            "clock_sm_max_mhz": smi[3] if len(smi) > 3 else None,
        })
    return info


def gpu_present() -> bool:
    """True if a CUDA GPU is usable (checked cheaply before importing torch)."""
    from pathlib import Path
    if not (Path("/dev/nvidia0").exists() or shutil.which("nvidia-smi")):
        return False
    import torch
    return torch.cuda.is_available()
