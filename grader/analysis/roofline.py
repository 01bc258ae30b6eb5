"""Roofline: ceilings and points for the GPU (Nsight Compute) and the CPU, and the chart.

GPU ceilings come from the theoretical peaks Nsight Compute writes into the export
(FORMATS.md §4: FP32 = 2 × FFMA peak/cycle × SM clock; DRAM and L2 peak bytes/cycle × their
clocks); without them, from GPU_TABLE. Ceilings per precision (FP32 FMA, 3xTF32, TF32), for
the speed review flags: precision_ceilings. CPU ceilings are measured on the machine
(grader/analysis/native/cpu_ceilings.cpp: FMA-bound loop, STREAM triad) and cached. Points: each
kernel at the DRAM and the L2 level (GPU: the bytes the SMs received from L2, "L2→SM", where
the export has them, else L2's output as Nsight Compute's L2 roofline counts it, "L2 out";
grader/analysis/ncu.py l2_level), or from the AI model's FLOPs and bytes and a measured time (CPU).

Two L2 roofs where the export has the L2→SM bytes (ROOFS): L2 out, what L2 can send, bounds the
L2→SM traffic of every line one SM reads alone (each byte delivered is a byte sent); the L2→SM
port roof, every SM's L1 input port at once (~33.6 TB/s on an H200, 3.3x L2 out), is not a
bandwidth L2 can supply: only lines L2 multicasts to many SMs at once are delivered faster than
L2 out. No kernel of the course's H200 exports received more than ~2.1 TB/s.
"""
from __future__ import annotations

import json
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path


@dataclass(frozen=True)
class Ceilings:
    device: str
    peak_flop_per_s: float
    bandwidth_bytes_per_s: dict        # level -> bytes/s ("DRAM", "L2→SM" or "L2 out")
    source: str                        # where the numbers come from

    def ridge(self, level: str) -> float:
        """AI (FLOP/byte) where the memory roof meets the compute roof."""
        return self.peak_flop_per_s / self.bandwidth_bytes_per_s[level]


@dataclass(frozen=True)
class Point:
    label: str
    group: str                         # student, naive, fused, fused_opt, ...
    level: str                         # DRAM, L2→SM, L2 out, or "model" (CPU: algorithmic bytes)
    ai: float                          # FLOP/byte
    flop_per_s: float


# Fallback ceilings (no peaks in the export). FP32 = SMs × 128 lanes × 2 × boost clock;
# DRAM: datasheet bandwidth; L2 out: Nsight Compute's theoretical peak of L2's output, read from
# the exports (32 B × lts2xbar cycles per L2 cycle × the L2 clock, FORMATS.md §4.4): 188 cycles
# at 1.71 GHz on the H200 (tests/fixtures/ncu/references_h200_raw.csv), 160 at 1.70 GHz on the
# H100, whose 50 MiB L2 has fewer slices (triton_h100_raw.csv). Peaks, not measured throughputs.
HOPPER_SMS, HOPPER_BOOST_HZ = 132, 1.98e9       # H100 SXM and H200: SMs and maximum SM clock
L2_IN, L2_OUT = "L2→SM", "L2 out"               # the two L2 levels (grader/analysis/ncu.py l2_level)
# what each roof bounds (the chart's legend, `python -m grader roofline`, the report's note)
ROOFS = {"DRAM": "DRAM bandwidth",
         L2_OUT: "what L2 can send: bounds the L2→SM bytes of lines one SM reads alone",
         L2_IN: "every SM's L1 input port at once: only lines L2 multicasts to many SMs reach it"}
GPU_TABLE = {
    "H200": Ceilings("NVIDIA H200", HOPPER_SMS * 128 * 2 * HOPPER_BOOST_HZ, {"DRAM": 4.8e12, L2_OUT: 32 * 188 * 1.71e9},
                     "table: 132 SMs x 128 FP32 lanes x 2 x 1.98 GHz; DRAM 4.8 TB/s (datasheet)"),
    "H100": Ceilings("NVIDIA H100 SXM", HOPPER_SMS * 128 * 2 * HOPPER_BOOST_HZ, {"DRAM": 3.35e12, L2_OUT: 32 * 160 * 1.70e9},
                     "table: 132 SMs x 128 FP32 lanes x 2 x 1.98 GHz; DRAM 3.35 TB/s (datasheet)"),
}
L2_MIB = {"H200": 60, "H100": 50}      # L2 capacity (device attribute of the H200 exports: 62,914,560 B)

# Dense FLOPs per SM per clock by compute capability and precision (a multiply-add = 2).
# fp32: FP32 lanes × 2 (sm80: 64 lanes; sm86/sm89/sm90: 128). tf32: tensor cores, one TF32
# product per fp32 product: 1,024 on sm80 (A100: 156 TFLOP/s = 108 SMs × 1,024 × 1.41 GHz),
# 2,048 on sm90 (H100 SXM and H200: 132 × 2,048 × 1.98 GHz = 535.3 TFLOP/s dense). 3xtf32: three
# TF32 products per fp32 product (big·big + big·small + small·big), a third of the TF32 rate.
# One clock policy for every peak the course computes (GPU_TABLE, precision_ceilings, the review
# flags, the handout's roofline table): the maximum SM clock, 1.98 GHz, which the H100 held
# throughout the grader's timing (NVML, 2026-11-25: median and minimum 1980 MHz at every size).
# Where an export carries Nsight Compute's own peaks (gpu_ceilings: the report's roofline,
# NOTES §5) they are used as they are, at the SM clock ncu measured: FP32 66.8 TFLOP/s at 1.976
# GHz in the H200 fixture, against 66.9 at 1.98 GHz; a text that quotes one says which. NVIDIA's datasheet quotes TF32 at 1.83 GHz (494.7 TFLOP/s dense). `make profile`
# leaves the clocks to the GPU (--clock-control none), and there the tensor-core kernel ran
# slower than the others: in the H200 fixture at S = 1024 (smsp__cycles_elapsed.avg.per_second)
# fused_tc_kernel at 1.78 GHz, the CUDA-core kernels at 1.95-1.97 GHz; so a profiled
# tensor-core rate sits up to ~10% below these peaks.
# Capabilities not listed have no tensor-core ceiling here (their review flag is not raised).
FLOP_PER_SM_CLOCK = {
    "8.0": {"fp32": 128, "tf32": 1024},
    "8.6": {"fp32": 256},
    "8.9": {"fp32": 256},
    "9.0": {"fp32": 256, "tf32": 2048},
}


def precision_ceilings(sm_count: int, clock_hz: float, capability: str) -> dict:
    """precision -> peak FLOP/s of one GPU ("fp32", "3xtf32", "tf32"; only those known for
    its compute capability), from its SM count and clock."""
    rates = FLOP_PER_SM_CLOCK.get(capability, {})
    out = {name: sm_count * per_clock * clock_hz for name, per_clock in rates.items()}
    if "tf32" in out:
        out["3xtf32"] = out["tf32"] / 3
    return out


def l2_name(profiles: list) -> str:
    """The L2 level of a chart's points: L2_IN when every kernel drawn has the delivered bytes,
    else L2_OUT for all (one count per chart)."""
    drawn = [p for p in profiles if not p.tool_kernel and p.flop_per_s]
    return L2_IN if drawn and all(getattr(p, "l2_delivered_bytes", None) for p in drawn) else L2_OUT


def gpu_ceilings(profiles: list, device: str = "H200") -> Ceilings:
    """From the export's measured peaks (highest seen over the kernels), else GPU_TABLE. The L2
    roofs: L2 out always (what L2 can send), and the L2→SM port roof beside it where the points
    are L2→SM (ROOFS: which bounds what)."""
    flop = [p.peak_fp32_flop_per_s for p in profiles if p.peak_fp32_flop_per_s]
    dram = [p.peak_dram_bytes_per_s for p in profiles if p.peak_dram_bytes_per_s]
    out = [p.peak_l2_bytes_per_s for p in profiles if p.peak_l2_bytes_per_s]
    port = [p.peak_l2_delivered_bytes_per_s for p in profiles if getattr(p, "peak_l2_delivered_bytes_per_s", None)]
    if flop and dram:
        bw = {"DRAM": max(dram)}
        if out:
            bw[L2_OUT] = max(out)
        if port and l2_name(profiles) == L2_IN:
            bw[L2_IN] = max(port)
        return Ceilings(device, max(flop), bw, "Nsight Compute's theoretical peaks for this GPU (in the export)")
    return GPU_TABLE[device]


def kernel_label(p) -> str:
    """"naive_S1024: scores_kernel": the profile's range and its kernel's name (the name alone without a range)."""
    name = re.sub(r"\(.*", "", p.kernel).split("::")[-1]
    return f"{p.nvtx}: {name}" if p.nvtx else name


def fastest_l2_delivery(profiles: list) -> tuple[float, object] | None:
    """(bytes/s, profile): the highest rate at which a kernel's SMs received bytes from L2 (its
    L2→SM bytes over its time), or None without those bytes: what the L2 roofs are measured against."""
    rates = [(p.l2_delivered_bytes / (p.total_duration_us * 1e-6), p) for p in profiles
             if getattr(p, "l2_delivered_bytes", None) and p.total_duration_us]
    return max(rates, key=lambda r: r[0]) if rates else None


# A `<name>_S<S>` range whose FP32 counters saw less than this share of the model's FLOPs
# does its products elsewhere: tensor cores (mma/wmma are not FFMA/FADD/FMUL instructions).
COUNTED_SHARE_MIN = 0.25
MODEL_FLOPS = "model FLOPs"


def of_cache(profiles: list, cache: str = "cold") -> list:
    """The profiles of one cache state: "warm" (make profile's warm-pipeline export) or
    "cold" (everything else: Nsight Compute's default flushes the caches before each kernel)."""
    return [p for p in profiles if (getattr(p, "cache", "") == "warm") == (cache == "warm")]


def tensor_core_ranges(profiles: list, B: int, H: int, D: int) -> dict:
    """range -> (counted FP32 FLOPs, model FLOPs) for the ranges whose counters saw less than
    COUNTED_SHARE_MIN of the model's FLOPs (grader/analysis/ai_model.py: the two products, 4·B·H·S²·D)."""
    from .ai_model import fused, profile_ranges
    out = {}
    for (_, S), ps in profile_ranges(of_cache(profiles)).items():
        if any(p.flop is None or p.total_duration_us is None for p in ps):
            continue
        counted, model = sum(p.flop for p in ps), fused(B, H, S, D).flops
        if counted < COUNTED_SHARE_MIN * model:
            out[ps[0].nvtx] = (counted, model)
    return out


def gpu_points(profiles: list, shape: tuple | None = None) -> list[Point]:
    """A DRAM and an L2 point per profiled kernel (tool kernels and kernels without FLOPs left out).

    With `shape` = (B, H, D) of the profiled calls, a range whose FP32 counters missed most
    of the model's FLOPs (tensor_core_ranges) gets one point per level for the whole range
    instead: the model's FLOPs over the range's measured time and bytes, labelled
    "(model FLOPs)". Its counter-based points would sit 10-20x too low. Only the cold
    export is drawn (the one the model's bytes describe); a warm one is left out."""
    points = []
    profiles = of_cache(profiles)
    l2 = l2_name(profiles)
    l2_attr = "l2_delivered_bytes" if l2 == L2_IN else "l2_bytes"
    tc = tensor_core_ranges(profiles, *shape) if shape else {}
    for name in tc:
        ps = [p for p in profiles if p.nvtx == name and not p.tool_kernel]
        seconds = sum(p.total_duration_us for p in ps) * 1e-6
        flops = tc[name][1]
        group = re.sub(r"_S\d+$", "", name)
        for level, attr in (("DRAM", "dram_bytes"), (l2, l2_attr)):
            moved = [getattr(p, attr) for p in ps]
            if seconds > 0 and None not in moved and sum(moved) > 0:
                points.append(Point(f"{name} ({MODEL_FLOPS})", group, level, flops / sum(moved), flops / seconds))
    for p in profiles:
        if p.tool_kernel or not p.flop_per_s or p.nvtx in tc:
            continue
        label = kernel_label(p)                    # the kernel's name alone where there is no range
        group = re.sub(r"_S\d+$", "", p.nvtx) if p.nvtx else label
        for level, ai in (("DRAM", p.ai_dram), (l2, p.ai_l2_delivered if l2 == L2_IN else p.ai_l2)):
            if ai:
                points.append(Point(label, group, level, ai, p.flop_per_s))
    return points


# ---- CPU ------------------------------------------------------------------------------

def measure_cpu_ceilings(threads: int | None = None, cache: bool = True) -> Ceilings:
    """FMA peak and triad bandwidth of this CPU, measured once and cached (~10 s)."""
    from ..core.cache import _locked, cache_root
    threads = threads or os.cpu_count() or 1
    src = (Path(__file__).parent / "native" / "cpu_ceilings.cpp").read_text()
    import hashlib
    key = hashlib.sha256(src.encode()).hexdigest()[:12]
    from ..core.cache import shared_root
    shared = shared_root()
    if cache and shared is not None:         # measured by the batch outside the sandbox
        done = shared / f"cpu-ceilings-{key}" / f"ceilings-{threads}threads.json"
        if done.is_file():
            return Ceilings(**json.loads(done.read_text()))
    root = cache_root() / f"cpu-ceilings-{key}"
    result = root / f"ceilings-{threads}threads.json"
    if cache and result.is_file():
        return Ceilings(**json.loads(result.read_text()))
    root.mkdir(parents=True, exist_ok=True)
    with _locked(root.with_suffix(".lock")):
        mod = _build_ceilings(root, src)
    t0 = time.perf_counter()
    iterations = 1
    while True:                                   # size the FMA loop to ~0.3 s
        gflops = mod.fma_gflops(threads, iterations)
        if 2 * 12 * 16 * iterations * threads / (gflops * 1e9) > 0.3 or iterations > 1 << 30:
            break
        iterations *= 4
    gbytes = mod.triad_gbytes(threads, 1 << 25)   # 3 arrays x 128 MiB: far past the caches
    from ..core.system import _cpu_name
    ceilings = Ceilings(f"{_cpu_name()} ({threads} threads)", gflops * 1e9, {"DRAM": gbytes * 1e9},
                        f"measured on this CPU in {time.perf_counter() - t0:.1f} s: FMA loop, STREAM triad")
    if cache:
        result.write_text(json.dumps(asdict(ceilings)))
    return ceilings


def _build_ceilings(root: Path, src: str):
    """grader/analysis/native/cpu_ceilings.cpp as a shared library (plain C++, ~1 s), via ctypes."""
    import ctypes
    import subprocess
    lib = root / "libceilings.so"
    if not lib.is_file():
        (root / "cpu_ceilings.cpp").write_text(src)
        cmd = ["c++", "-O3", "-march=native", "-mprefer-vector-width=512", "-fopenmp", "-shared", "-fPIC",
               str(root / "cpu_ceilings.cpp"), "-o", str(lib) + ".tmp"]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"building cpu_ceilings.cpp failed: {proc.stderr[-500:]}")
        os.replace(str(lib) + ".tmp", lib)
    mod = ctypes.CDLL(str(lib))
    mod.fma_gflops.argtypes, mod.fma_gflops.restype = [ctypes.c_int, ctypes.c_int64], ctypes.c_double
    mod.triad_gbytes.argtypes, mod.triad_gbytes.restype = [ctypes.c_int, ctypes.c_int64], ctypes.c_double
    return mod


def cpu_points(bench: list[dict]) -> list[Point]:
    """Points for the CPU kernels of a results document's `bench` rows: FLOPs and bytes from
    the AI model (naive: its three passes; fused and the student: the fused count, a lower
    bound on their traffic), performance = model FLOPs (the two products) / measured median time."""
    from .ai_model import fused, naive, total
    models = {"student": lambda s: fused(*s), "naive": lambda s: total("naive", naive(*s)),
              "fused": lambda s: fused(*s), "fused_opt": lambda s: fused(*s)}
    points = []
    for row in bench:
        shape = (row["B"], row["H"], row["S"], row["D"])
        for who, model in models.items():
            ms = row.get(f"{who}_ms")
            if ms:
                cost = model(shape)
                points.append(Point(f"{who} S={row['S']}", who, "model", cost.ai, cost.flops / (ms * 1e-3)))
    return points


# ---- chart ----------------------------------------------------------------------------

FORMATS = {".svg": "svg", ".png": "png", ".pdf": "pdf"}     # chart files: the extension is the format
COLORS = {"student": "#d62728", "naive": "#1f77b4", "fused": "#2ca02c", "fused_opt": "#9467bd",
          "sdpa": "#7f7f7f"}
MARKERS = {"DRAM": "o", L2_IN: "^", L2_OUT: "v", "model": "s", "advisor": "D"}


def chart(ceilings: Ceilings, points: list[Point], path: Path | str, title: str = "") -> Path:
    """Log-log roofline in the format the file's extension names (FORMATS): the compute
    roof, one memory roof per level, the points."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    path = Path(path)
    if path.suffix.lower() not in FORMATS:
        raise ValueError(f"{path}: a chart is written as {', '.join(FORMATS)}; name the file with one of these")
    ais = [p.ai for p in points] or [1.0]
    lo, hi = min(min(ais) / 4, 0.1), max(max(ais) * 4, 4 * max(ceilings.ridge(l) for l in ceilings.bandwidth_bytes_per_s))
    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    xs = [lo * (hi / lo) ** (i / 200) for i in range(201)]
    both = L2_IN in ceilings.bandwidth_bytes_per_s and L2_OUT in ceilings.bandwidth_bytes_per_s
    for level, bw in ceilings.bandwidth_bytes_per_s.items():
        ax.plot(xs, [min(ceilings.peak_flop_per_s, bw * x) / 1e9 for x in xs], "--" if level == L2_IN else "-",
                color="black", lw=1.2 if level == "DRAM" else 0.8, alpha=1.0 if level == "DRAM" else 0.6,
                label=f"{level} roof {bw / 1e9:,.0f} GB/s (ridge {ceilings.ridge(level):.1f} FLOP/B)"
                      + (f":\n{ROOFS[level]}" if both and level in (L2_IN, L2_OUT) else ""))
    ax.axhline(ceilings.peak_flop_per_s / 1e9, color="black", ls=":", lw=0.8,
               label=f"FP32 peak {ceilings.peak_flop_per_s / 1e9:,.0f} GFLOP/s")
    seen = set()
    for p in points:
        key = (p.group, p.level)
        ax.scatter(p.ai, p.flop_per_s / 1e9, marker=MARKERS.get(p.level, "o"), s=36,
                   color=COLORS.get(p.group, "#ff7f0e"), edgecolor="black", linewidth=0.4, zorder=3,
                   label=f"{p.group} ({p.level})" if key not in seen else None)
        seen.add(key)
        if len(points) <= 24:   # name each point after its kernel (the label's last part)
            ax.annotate(p.label.split(": ")[-1][:22], (p.ai, p.flop_per_s / 1e9), fontsize=5,
                        xytext=(3, 3), textcoords="offset points", color="#333333")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("arithmetic intensity [FLOP/byte]")
    ax.set_ylabel("performance [GFLOP/s]")
    ax.set_title(title or f"Roofline: {ceilings.device}", fontsize=10)
    ax.grid(True, which="both", lw=0.3, alpha=0.5)
    ax.legend(fontsize=6.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0)   # never over a point
    fig.text(0.01, 0.01, f"ceilings: {ceilings.source}", fontsize=5.5, color="#555555")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format=FORMATS[path.suffix.lower()], bbox_inches="tight", dpi=150)
    plt.close(fig)
    return path
