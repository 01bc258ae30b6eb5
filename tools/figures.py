"""Every figure the handout, the model answers and NOTES quote, computed from the model, the
config and the fixtures (never typed): tools/handout.py writes them into the documents,
tests/test_figures.py checks no other figure is typed there.

    fixture()            the references' `make profile` export (H200, cold), parsed once
    kernel(range, name)  one kernel of it
    precision_errors()   max |out - truth| of simulated reduced-precision kernels
"""
from __future__ import annotations

import functools
import math
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from grader.analysis import ai_model
from grader.core import config  # noqa: E402

NCU = REPO / "tests" / "fixtures" / "ncu"
RESULTS = REPO / "tests" / "fixtures" / "results"
EXPORT = "references_h200"            # make profile SUBMISSION=reference/fused.cu, H200, cold (README there)


@functools.lru_cache(maxsize=None)
def fixture(export: str = EXPORT) -> tuple:
    from grader.analysis.ncu import read_files
    return tuple(read_files([NCU / f"{export}_details.csv", NCU / f"{export}_raw.csv"]))


def kernel(nvtx: str, name: str, export: str = EXPORT):
    """The profile of kernel `name` (a substring of its signature) in NVTX range `nvtx`."""
    found = [p for p in fixture(export) if p.nvtx == nvtx and name in p.kernel]
    if len(found) != 1:
        raise LookupError(f"{export}: {len(found)} kernels named {name!r} in range {nvtx!r}")
    return found[0]


def kernel_metric(nvtx: str, name: str, metric: str, export: str = EXPORT) -> float:
    """One raw metric of one kernel launch (the raw page, base units)."""
    from grader.analysis.ncu import read_launches
    found = [l.metrics[metric] for l in read_launches((NCU / f"{export}_raw.csv").read_text(), export)
             if l.nvtx == nvtx and name in l.kernel]
    if len(found) != 1:
        raise LookupError(f"{export}: {len(found)} launches of {name!r} in range {nvtx!r}")
    return found[0]


def range_kernels(nvtx: str, export: str = EXPORT) -> list:
    return [p for p in fixture(export) if p.nvtx == nvtx and not p.tool_kernel]


def bench_shape() -> tuple[int, int, int, list[int]]:
    cfg = config.load()
    b = cfg.bench_shapes[0]
    return b.B, b.H, b.D, [s.S for s in cfg.bench_shapes]


def reference_block_rows() -> int:
    """Query rows per block of reference/fused.cu (its `kRows`)."""
    return int(re.search(r"constexpr int kRows = (\d+);", (REPO / "reference" / "fused.cu").read_text())[1])


def l2_mib() -> float:
    """The profiled GPU's L2 (device attribute in the export), MiB."""
    return next(p.l2_cache_bytes for p in fixture() if p.l2_cache_bytes) / 2**20


def fp32_peak() -> float:
    """Nsight Compute's FP32 peak in the export (FLOP/s)."""
    return max(p.peak_fp32_flop_per_s for p in fixture() if p.peak_fp32_flop_per_s)


def model_naive(S: int):
    B, H, D, _ = bench_shape()
    return ai_model.naive(B, H, S, D)


def time_weighted_dram_pct(nvtx: str) -> float:
    ks = range_kernels(nvtx)
    return sum(p.dram_pct * p.duration_us for p in ks) / sum(p.duration_us for p in ks)


def range_us(nvtx: str) -> float:
    return sum(p.duration_us for p in range_kernels(nvtx))


# ---- reduced precision, simulated -----------------------------------------------------------

TF32_DROPPED_BITS = 13                     # of fp32's 23 mantissa bits: TF32 keeps 23 - 13 = 10
TF32_MANTISSA_BITS = 23 - TF32_DROPPED_BITS


def _tf32(x, mode: str):
    """x rounded to TF32: "rna" = to nearest, ties away (PTX cvt.rna.tf32.f32), "trunc" = the
    low TF32_DROPPED_BITS mantissa bits dropped."""
    import torch
    bits = x.contiguous().view(torch.int32)
    if mode == "rna":
        bits = bits + (1 << (TF32_DROPPED_BITS - 1))
    return (bits & ~((1 << TF32_DROPPED_BITS) - 1)).view(torch.float32)


def _attention(q, k, v, operand):
    """softmax(q kᵀ/√D) v in fp32 where both products take their operands through `operand`
    (a (x) -> (big, small) split: the product is the sum of the pairs' products)."""
    import torch
    scale = 1.0 / math.sqrt(q.shape[-1])

    def mm(a, b):
        parts_a, parts_b = operand(a), operand(b)
        return sum(torch.matmul(x, y) for i, x in enumerate(parts_a) for j, y in enumerate(parts_b) if i + j < 2)
    s = mm(q, k.transpose(-1, -2)) * scale
    p = torch.softmax(s, dim=-1)
    return mm(p, v)


PRECISION_OPERANDS = {
    "tf32 (round to nearest)": lambda x: (_tf32(x, "rna"),),
    "tf32 (truncated)": lambda x: (_tf32(x, "trunc"),),
    "3xtf32": lambda x: (_tf32(x, "rna"), _tf32(x - _tf32(x, "rna"), "rna")),
    "bf16": lambda x: (x.to(__import__("torch").bfloat16).to(__import__("torch").float32),),
}
SEEDS = range(10)           # the public seed 0 (the judge's inputs exactly: check.config_seed) and nine more


@functools.lru_cache(maxsize=None)
def precision_errors_by_config() -> dict:
    """precision -> [(smallest, largest) max |out - truth| over SEEDS, per public config]:
    the products' operands rounded, fp32 accumulation and softmax, float64 truth
    (grader/judge/check.py). A simulation of the arithmetic, not of any kernel's order of sums."""
    import torch

    from grader.judge.check import config_seed, make_inputs, truth
    threads = torch.get_num_threads()
    torch.set_num_threads(1)                  # one summation order wherever the tool runs
    out = {}
    for name, operand in PRECISION_OPERANDS.items():
        per_config = []
        for i, shape in enumerate(config.load().configs):
            errs = []
            for seed in SEEDS:
                q, k, v = make_inputs(shape, config_seed(seed, i))
                errs.append((_attention(q, k, v, operand).double() - truth(q, k, v)).abs().max().item())
            per_config.append((min(errs), max(errs)))
        out[name] = per_config
    torch.set_num_threads(threads)
    return out


@functools.lru_cache(maxsize=None)
def output_stds() -> list[tuple[float, float]]:
    """Per public config, the (smallest, largest) standard deviation of the output's entries
    (float64 truth) over SEEDS: the scale the absolute tolerance is measured against."""
    from grader.judge.check import config_seed, make_inputs, truth
    out = []
    for i, shape in enumerate(config.load().configs):
        stds = [float(truth(*make_inputs(shape, config_seed(seed, i))).std()) for seed in SEEDS]
        out.append((min(stds), max(stds)))
    return out


def precision_errors() -> dict:
    """precision -> (smallest, largest) max |out - truth| over the public configs and SEEDS."""
    return {name: (min(lo for lo, _ in c), max(hi for _, hi in c)) for name, c in precision_errors_by_config().items()}
