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


# make profile's warm exports on the H200 (--cache-control none, the kernels back to back); the
# naive CUDA reference ran in each (as "naive", and in naive_h200_warm as the student too)
WARM_H200 = ("references_h200_warm", "naive_h200_warm", "fused_tc_h200_warm")


def warm_reads(name: str, S: int) -> list[float]:
    """DRAM bytes read by every warm H200 run of the naive CUDA kernel `name` at S."""
    return [p.dram_bytes_read for e in WARM_H200 for p in fixture(e)
            if p.nvtx.endswith(f"_S{S}") and re.search(rf"\b{name}\(", p.kernel)]


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


def ncu_rule(nvtx: str, name: str, export: str = EXPORT) -> str:
    """Nsight Compute's whole SOLBottleneck rule text for one kernel launch (the details page)."""
    from grader.analysis.ncu import read_launches
    found = [l.metrics.get("__rule_SOLBottleneck") for l in read_launches((NCU / f"{export}_details.csv").read_text(), export)
             if l.nvtx == nvtx and name in l.kernel]
    if len(found) != 1 or not found[0]:
        raise LookupError(f"{export}: no single SOLBottleneck rule for {name!r} in range {nvtx!r}")
    return found[0]


def fp32_instructions(nvtx: str, name: str, export: str = EXPORT) -> dict:
    """{"ffma", "fadd", "fmul"} -> FP32 thread instructions of one kernel launch: Nsight Compute's
    FLOPs are 2·FFMA + FADD + FMUL (an FFMA counts two), its instructions their plain sum."""
    return {op: kernel_metric(nvtx, name, f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum", export)
            for op in ("ffma", "fadd", "fmul")}


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


def fp32_peak_clock_hz() -> float:
    """The SM clock of Nsight Compute's FP32 peak in the export (fp32_peak = 2 × FFMA lanes ×
    this clock, `sm__cycles_elapsed.avg.per_second` of the launch it was highest in): ncu takes
    the clock it measured, not the 1.98 GHz the course's own peaks use."""
    from grader.analysis.ncu import read_launches
    launches = read_launches((NCU / f"{EXPORT}_raw.csv").read_text(), EXPORT)
    peak, hz = max((2 * l.metrics["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"]
                    * l.metrics["sm__cycles_elapsed.avg.per_second"], l.metrics["sm__cycles_elapsed.avg.per_second"])
                   for l in launches)
    assert abs(peak / fp32_peak() - 1) < 1e-9
    return hz


def l2_out_peak() -> float:
    """Nsight Compute's peak of L2's output in the export (bytes/s): the "L2 out" roof."""
    return max(p.peak_l2_bytes_per_s for p in fixture() if p.peak_l2_bytes_per_s)


# every make profile export of the course's kernels on the H200 (cold and warm)
H200_EXPORTS = ("references_h200", "naive_h200", "fused_tc_h200") + WARM_H200


def fastest_l2_delivery(exports: tuple = H200_EXPORTS) -> tuple:
    """(bytes/s, export, profile): the highest L2→SM delivery rate of any kernel in the exports
    (grader/analysis/roofline.py fastest_l2_delivery): what the course measured against the L2 roofs."""
    from grader.analysis.roofline import fastest_l2_delivery as fastest
    return max(((rate, e, p) for e in exports if (found := fastest(list(fixture(e)))) for rate, p in [found]),
               key=lambda t: t[0])


def notes_row(heading: str, first_cell: str) -> list[str]:
    """The cells of the row `| first_cell | ...` of the first table after `heading` in
    reference/NOTES.md: a session log's measurement, which the documents quote by its section."""
    text = (REPO / "reference" / "NOTES.md").read_text()
    rest = text[text.index(heading):]
    row = next(line for line in rest.splitlines() if line.startswith(f"| {first_cell} |"))
    return [cell.strip() for cell in row.strip().strip("|").split("|")]


def _ms_range(cell: str) -> tuple[float, float]:
    """"16-28" -> (16.0, 28.0); "25.3" -> (25.3, 25.3)."""
    lo, _, hi = cell.partition("-")
    return float(lo), float(hi or lo)


def cpu_fused_opt_speedup(S: int = 1024) -> tuple[float, tuple, tuple]:
    """(fused ms / fused_opt ms at the ranges' midpoints, fused ms range, fused_opt ms range) of
    reference/fused_opt.cpp against fused.cpp in NOTES §4 (2 threads, the 2-core machine): the CPU
    grade in tests/fixtures/results has no fused_opt time."""
    cells = notes_row("### `fused_opt.cpp`", str(S))
    fused, opt = _ms_range(cells[2]), _ms_range(cells[3])
    return sum(fused) / sum(opt), fused, opt


def model_naive(S: int):
    B, H, D, _ = bench_shape()
    return ai_model.naive(B, H, S, D)


def time_weighted_dram_pct(nvtx: str) -> float:
    ks = range_kernels(nvtx)
    return sum(p.dram_pct * p.duration_us for p in ks) / sum(p.duration_us for p in ks)


def range_us(nvtx: str) -> float:
    return sum(p.duration_us for p in range_kernels(nvtx))


def range_ai(nvtx: str, bytes_field: str) -> float:
    """FLOP/byte of a range's kernels together: their FP32-instruction FLOPs over their bytes at
    one level, `bytes_field` a KernelProfile field ("dram_bytes", "l2_delivered_bytes": L2→SM,
    "l2_bytes": L2 out)."""
    ks = range_kernels(nvtx)
    return sum(p.flop for p in ks) / sum(getattr(p, bytes_field) for p in ks)


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


def _fp32_matmul(a, b):
    """a @ b in float32, summed in one order on every machine: each product rounded to fp32,
    then added to the running sum in index order (a plain loop without FMA). A BLAS matmul
    sums in an order of its own that depends on the CPU (its vector width, its library), and
    the figures this feeds are quoted to two digits: an AVX-512 machine printed 3.7e-07 where
    the handout, generated elsewhere, said 3.5e-07. Elementwise float32 ops round each element
    by itself, so the result is the same bits whatever the CPU or the number of threads."""
    import torch
    at, b = a.transpose(-1, -2).contiguous(), b.contiguous()   # row i of `at` is column i of a
    acc = torch.zeros(a.shape[:-1] + b.shape[-1:], dtype=torch.float32)
    for i in range(a.shape[-1]):
        acc += at[..., i, :, None] * b[..., i, None, :]
    return acc


def _fp32_softmax(s):
    """softmax over the last dim in float32: max shift, exp rounded once to fp32 (computed in
    float64, so no vector library's exp decides the last bit), the sum in key order."""
    import torch
    e = torch.exp((s - s.amax(dim=-1, keepdim=True)).double()).float()
    return e / _fp32_matmul(e, torch.ones(e.shape[-1], 1))


def _attention(q, k, v, operand):
    """softmax(q kᵀ/√D) v in fp32 where both products take their operands through `operand`
    (a (x) -> (big, small) split: the product is the sum of the pairs' products, each pair's
    product summed by _fp32_matmul and the pairs added in order)."""
    scale = 1.0 / math.sqrt(q.shape[-1])

    def mm(a, b):
        parts_a, parts_b = operand(a), operand(b)
        return sum(_fp32_matmul(x, y) for i, x in enumerate(parts_a) for j, y in enumerate(parts_b) if i + j < 2)
    s = mm(q, k.transpose(-1, -2)) * scale
    return mm(_fp32_softmax(s), v)


PRECISION_OPERANDS = {
    "fp32": lambda x: (x,),
    "tf32 (round to nearest)": lambda x: (_tf32(x, "rna"),),
    "tf32 (truncated)": lambda x: (_tf32(x, "trunc"),),
    "3xtf32": lambda x: (_tf32(x, "rna"), _tf32(x - _tf32(x, "rna"), "rna")),
    "bf16": lambda x: (x.to(__import__("torch").bfloat16).to(__import__("torch").float32),),
}
SEEDS = range(10)           # the public seed 0 (the judge's inputs exactly: check.config_seed) and nine more


@functools.lru_cache(maxsize=None)
def _cases() -> tuple:
    """(config index, q, k, v, float64 truth) for every public config and seed, made seed by
    seed (config_seed's scrypt is cached for 8 seeds: seed-major order derives each seed once)."""
    from grader.judge.check import config_seed, make_inputs, truth
    out = []
    for seed in SEEDS:
        for i, shape in enumerate(config.load().configs):
            q, k, v = make_inputs(shape, config_seed(seed, i))
            out.append((i, q, k, v, truth(q, k, v)))
    return tuple(out)


@functools.lru_cache(maxsize=None)
def precision_errors_by_config() -> dict:
    """precision -> [(smallest, largest) max |out - truth| over SEEDS, per public config]:
    the products' operands rounded, fp32 sums in a fixed order (_fp32_matmul) and an fp32
    softmax, float64 truth (grader/judge/check.py). A simulation of the arithmetic, not of
    any kernel's order of sums; the same figures on every machine."""
    import torch
    errs: dict = {name: {} for name in PRECISION_OPERANDS}
    threads = torch.get_num_threads()
    torch.set_num_threads(1)        # the same bits with any number; one is fastest for these small ops
    try:
        for i, q, k, v, want in _cases():
            for name, operand in PRECISION_OPERANDS.items():
                errs[name].setdefault(i, []).append((_attention(q, k, v, operand).double() - want).abs().max().item())
    finally:
        torch.set_num_threads(threads)
    return {name: [(min(e), max(e)) for _, e in sorted(by.items())] for name, by in errs.items()}


@functools.lru_cache(maxsize=None)
def output_stds() -> list[tuple[float, float]]:
    """Per public config, the (smallest, largest) standard deviation of the output's entries
    (float64 truth) over SEEDS: the scale the absolute tolerance is measured against."""
    stds: dict = {}
    for i, _, _, _, want in _cases():
        stds.setdefault(i, []).append(float(want.std()))
    return [(min(s), max(s)) for _, s in sorted(stds.items())]


def precision_errors() -> dict:
    """precision -> (smallest, largest) max |out - truth| over the public configs and SEEDS."""
    return {name: (min(lo for lo, _ in c), max(hi for _, hi in c)) for name, c in precision_errors_by_config().items()}
