"""Batch, devices: which GPUs a batch times on, and how each child is pointed at its GPU.

`--gpus` / `--gpu-ids` take GPU *indices*, never a count, numbered the way CUDA numbers
them in this process: when CUDA_VISIBLE_DEVICES is set (Slurm sets it to the GPUs it
gave the job, as indices or UUIDs), index i is the i-th entry of that list; otherwise it
is CUDA's device i. `--gpus visible` takes every GPU of CUDA_VISIBLE_DEVICES (the usual
choice under Slurm).

Each child gets CUDA_VISIBLE_DEVICES = its entry of the parent's list (so Slurm's choice
is kept, never overwritten with a bare index), and GRADER_GPU_UUID = that GPU's UUID, which
`nvidia-smi -i` is given: nvidia-smi ignores CUDA_VISIBLE_DEVICES and numbers GPUs its own
way, so an index handed to it can name another job's GPU. The UUID is asked of CUDA itself
(one short child process), which reads CUDA_VISIBLE_DEVICES exactly as the children will.
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys

VISIBLE = "CUDA_VISIBLE_DEVICES"
ALL = ("visible", "all")
_PROBE = ("import torch\n"
          "for i in range(torch.cuda.device_count()):\n"
          "    print('GPU-' + str(torch.cuda.get_device_properties(i).uuid))\n")


class DeviceError(Exception):
    """The GPU flag names GPUs this process cannot use; the message says which exist."""


def visible_entries(environ=os.environ) -> list[str] | None:
    """The entries of CUDA_VISIBLE_DEVICES; None when it is not set."""
    value = environ.get(VISIBLE)
    if value is None:
        return None
    return [e.strip() for e in value.split(",") if e.strip()]


def parse_gpus(text: str | None, environ=os.environ) -> tuple[int, ...]:
    """The GPU indices of `--gpus TEXT` ('0', '0,1', 'visible'), checked against
    CUDA_VISIBLE_DEVICES when it is set."""
    if not text:
        return ()
    vis = visible_entries(environ)
    shown = f"{VISIBLE}={environ.get(VISIBLE, '')!r}"
    if text.strip() in ALL:
        if vis is None:
            raise DeviceError(f"--gpus {text} takes the GPUs of {VISIBLE}, which is not set here: pass "
                              "indices, e.g. --gpus 0,1")
        if not vis:
            raise DeviceError(f"--gpus {text}: {shown} holds no GPU (did the job ask for one, e.g. "
                              "--gres=gpu:1?)")
        return tuple(range(len(vis)))
    try:
        indices = tuple(int(x) for x in text.split(","))
    except ValueError:
        raise DeviceError(f"--gpus {text!r}: expected GPU indices like 0 or 0,1 (not a count), or 'visible'") from None
    if any(i < 0 for i in indices) or len(set(indices)) != len(indices):
        raise DeviceError(f"--gpus {text!r}: indices must be distinct and >= 0")
    if vis is not None and max(indices) >= len(vis):
        raise DeviceError(f"--gpus {text} names GPU index {max(indices)}, but this process sees "
                          f"{len(vis)} GPU{'s' * (len(vis) != 1)} ({shown}, e.g. set by Slurm): --gpus "
                          f"takes indices, not a count; use --gpus {','.join(map(str, range(len(vis)))) or '0'} "
                          "or --gpus visible")
    return indices


def child_visible(index: int, environ=os.environ) -> str:
    """The CUDA_VISIBLE_DEVICES a child timing on GPU `index` gets: the parent's entry."""
    vis = visible_entries(environ)
    return vis[index] if vis is not None else str(index)


def is_uuid(entry: str) -> bool:
    return entry.startswith(("GPU-", "MIG-"))


def parse_probe(stdout: str) -> list[str]:
    """The UUIDs the CUDA probe printed, in CUDA's order."""
    return [line.strip() for line in stdout.splitlines() if line.strip().startswith(("GPU-", "MIG-"))]


@functools.lru_cache(maxsize=None)
def _cuda_uuids(visible: str | None) -> tuple[str, ...]:
    env = dict(os.environ)
    if visible is None:
        env.pop(VISIBLE, None)
    else:
        env[VISIBLE] = visible
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, timeout=120, env=env)
    except (OSError, subprocess.SubprocessError):
        return ()
    return tuple(parse_probe(proc.stdout)) if proc.returncode == 0 else ()


def gpu_uuid(index: int, environ=os.environ, probe=_cuda_uuids) -> str:
    """The UUID of GPU `index` (for nvidia-smi -i and the child's device check); "" when
    CUDA cannot say (nvidia-smi then falls back to the child's CUDA_VISIBLE_DEVICES)."""
    entry = child_visible(index, environ)
    if is_uuid(entry):
        return entry
    uuids = probe(environ.get(VISIBLE))
    return uuids[index] if index < len(uuids) else ""


def child_env(index: int, environ=os.environ, probe=_cuda_uuids) -> dict:
    """The environment that points a child at GPU `index`."""
    return {VISIBLE: child_visible(index, environ), "GRADER_GPU_UUID": gpu_uuid(index, environ, probe)}
