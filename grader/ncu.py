"""Profile stage: read Nsight Compute CSV exports into per-kernel numbers (text in, data out).

Accepts `--page raw` and `--page details` exports, from `ncu -i report --csv` or from
live `ncu --csv ...` stdout (`==PROF==`/`==WARNING==` and program lines are skipped),
in base or auto-scaled units, with thousands separators, NVTX / `Body Item Label`
columns and `--print-metric-name label|name|label-name`. Columns are found by name.
Formulas are Nsight Compute's own (shared/ncu/FORMATS.md §4): FP32 FLOP = 2·FFMA +
FADD + FMUL (thread instructions), DRAM bytes from `dram__bytes*`, L2 bytes = 32 ×
`lts__lts2xbar_cycles_active`. Units in names: `_ns`, `_us`, `_bytes`, `_per_s`.
"""
from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field
from pathlib import Path

EXPORT_HELP = ("export one with: ncu -i report.ncu-rep --csv --page raw --print-units base > raw.csv "
               "(or run `make profile` on the GPU machine)")
BOUND_RULE = ("bound: latency-bound if both SOL Memory % and SOL Compute % are below 60% (neither "
              "unit is busy: too little parallel work or waiting on latency); else memory-bound if "
              "Memory % >= Compute %, else compute-bound")
BUSY_PCT = 60.0   # Nsight Compute's own Speed-of-Light threshold for "this unit is the limiter"

# Tool kernels: work torch or the driver launches around the student's kernel.
TOOL_KERNEL = re.compile(r"distribution_elementwise|philox|FillFunctor|fill_kernel|memset|memcpy|"
                         r"vectorized_elementwise_kernel|unrolled_elementwise_kernel|redzone|"
                         r"at::native::.*(copy|fill|random|normal|uniform)", re.IGNORECASE)
SENTINELS = {"", "n/a", "N/A", "nan", "no data", "-"}
PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
TIME = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "nsecond": 1e-9, "usecond": 1e-6,
        "msecond": 1e-3, "second": 1.0}

# details-page labels -> metric names, keyed by (section, body item, label)
SOL = "GPU Speed Of Light Throughput"
MWA = "Memory Workload Analysis"
ROOF = "GPU Speed Of Light Roofline Chart"
LABELS = {
    (SOL, "", "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    (SOL, "", "SM Frequency"): "gpc__cycles_elapsed.avg.per_second",
    (SOL, "", "Elapsed Cycles"): "gpc__cycles_elapsed.max",
    (SOL, "", "Memory Throughput"): "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
    (SOL, "", "DRAM Throughput"): "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed",
    (SOL, "", "Duration"): "gpu__time_duration.sum",
    (SOL, "", "L1/TEX Cache Throughput"): "l1tex__throughput.avg.pct_of_peak_sustained_active",
    (SOL, "", "L2 Cache Throughput"): "lts__throughput.avg.pct_of_peak_sustained_elapsed",
    (SOL, "", "SM Active Cycles"): "sm__cycles_active.avg",
    (SOL, "", "Compute (SM) Throughput"): "sm__throughput.avg.pct_of_peak_sustained_elapsed",
    (MWA, "", "Memory Throughput"): "dram__bytes.sum.per_second",
    (MWA, "", "L2 Hit Rate"): "lts__t_sector_hit_rate.pct",
    (MWA, "", "L1/TEX Hit Rate"): "l1tex__t_sector_hit_rate.pct",
    (MWA, "", "Mem Busy"): "gpu__compute_memory_access_throughput.avg.pct_of_peak_sustained_elapsed",
    # --print-details all on the roofline section (FORMATS.md §2.4)
    (ROOF, "Single Precision Roofline", "Theoretical Predicated-On FFMA Operations"): "derived__sm__ffma_x2.peak",
    (ROOF, "Single Precision Roofline", "SM Frequency"): "sm__cycles_elapsed.avg.per_second",
    (ROOF, "Single Precision Roofline", "Theoretical DRAM Bytes Accessible"): "dram__bytes.sum.peak_sustained",
    (ROOF, "Single Precision Roofline", "DRAM Frequency"): "dram__cycles_elapsed.avg.per_second",
    (ROOF, "Single Precision Achieved Value", "Predicated-On FFMA Operations Per Cycle"): "derived__smsp__ffma_x2.pc",
    (ROOF, "Single Precision Achieved Value", "SM Frequency"): "smsp__cycles_elapsed.avg.per_second",
    (ROOF, "Single Precision Achieved Value",
     "Predicated-On FADD Thread Instructions Executed Per Cycle"): "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum.per_cycle_elapsed",
    (ROOF, "Single Precision Achieved Value",
     "Predicated-On FMUL Thread Instructions Executed Per Cycle"): "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum.per_cycle_elapsed",
    (ROOF, "Single Precision Achieved Value", "DRAM Bandwidth"): "dram__bytes.sum.per_second",
}
ID_COLUMNS = {"ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream",
              "Block Size", "Grid Size", "Device", "CC", "Kernel Time"}
NVTX_RANGE = re.compile(r'<[^>]*>:([^:"]+):')


def nvtx_range(row: dict) -> str:
    """The innermost NVTX push/pop range of a launch ('' without --nvtx): the
    'thread Domain:Push/Pop_Range:...' cell lists the open ranges, outermost first."""
    for column, value in row.items():
        if column.startswith("thread Domain:Push/Pop_Range"):
            names = NVTX_RANGE.findall(value or "")
            return names[-1] if names else ""
    return ""


class NcuError(Exception):
    """The file is not a usable Nsight Compute CSV export; the message says what to do."""


@dataclass(frozen=True)
class Launch:
    """One profiled kernel launch: metric name -> value in base units (s, byte, hz, ...)."""
    key: tuple                    # (process id, launch id)
    kernel: str
    metrics: dict
    nvtx: str = ""                # innermost NVTX range ('' when the export has none)


@dataclass(frozen=True)
class KernelProfile:
    """One kernel (all its launches). None where the export lacks the metrics."""
    kernel: str
    launches: int
    ids: tuple
    duration_us: float | None            # mean per launch
    total_duration_us: float | None
    memory_pct: float | None             # SOL Memory Throughput (max over L1, L2, DRAM)
    compute_pct: float | None            # SOL Compute (SM) Throughput
    dram_pct: float | None
    l1_pct: float | None
    l2_pct: float | None
    dram_bytes_read: float | None
    dram_bytes_write: float | None
    dram_bytes: float | None
    l2_bytes: float | None
    flop: float | None                   # FP32: 2·FFMA + FADD + FMUL thread instructions
    flop_per_s: float | None
    ai_dram: float | None                # FLOP / DRAM byte
    ai_l2: float | None                  # FLOP / L2 byte
    peak_fp32_flop_per_s: float | None
    peak_dram_bytes_per_s: float | None
    peak_l2_bytes_per_s: float | None
    bound: str | None
    tool_kernel: bool
    files: tuple = field(default_factory=tuple)
    nvtx: str = ""                       # the NVTX range the launches ran in (make profile: kernel_S<S>)
    l2_cache_bytes: float | None = None  # device__attribute_l2_cache_size, when exported

    def to_json(self) -> dict:
        from dataclasses import asdict
        d = asdict(self)
        d["ids"], d["files"] = list(self.ids), list(self.files)
        return {k: (None if isinstance(v, float) and not math.isfinite(v) else v) for k, v in d.items()}

    @staticmethod
    def from_json(d: dict) -> "KernelProfile":
        """Inverse of to_json (keys it does not know, like a results file's `profile`, are ignored)."""
        fields = KernelProfile.__dataclass_fields__
        return KernelProfile(**{k: (tuple(v) if k in ("ids", "files") else v) for k, v in d.items() if k in fields})


# ---- values and units ------------------------------------------------------------------

def to_number(cell: str) -> float | str:
    """'1,166,986' -> 1166986.0; 'n/a' -> nan; '16,384 (16,384)' -> 16384.0; text stays text."""
    s = cell.strip()
    if s in SENTINELS:
        return math.nan
    s = s.split(" (", 1)[0]                  # --print-metric-instances suffix
    try:
        return float(s.replace(",", ""))
    except ValueError:
        return cell


def to_base(value: float, unit: str) -> float:
    """Scale an auto-unit value to base units: us -> s, Gbyte/s -> byte/s, Ghz -> hz, ..."""
    u = unit.strip()
    if u in TIME:
        return value * TIME[u]
    if m := re.fullmatch(r"([KMGT]?)hz", u, re.IGNORECASE):
        return value * PREFIX[m[1].upper()]
    if m := re.fullmatch(r"cycle/(n|u|m|)second", u):
        return value / {"n": 1e-9, "u": 1e-6, "m": 1e-3, "": 1.0}[m[1]]
    if m := re.fullmatch(r"([KMGT]?)byte(/s|/second|/cycle|/block)?", u):
        return value * PREFIX[m[1]]
    return value


# ---- text -> tables --------------------------------------------------------------------

def _tables(text: str, name: str) -> list[list[list[str]]]:
    """The CSV tables in `text`: non-CSV lines dropped, a new table at each header line."""
    if "\x00" in text[:4096]:
        raise NcuError(f"{name} is a binary file (an .ncu-rep report?), not a CSV; {EXPORT_HELP}")
    if not text.strip():
        raise NcuError(f"{name} is empty; {EXPORT_HELP}")
    tables, current = [], None
    for line in text.splitlines():
        if line.startswith(('"ID",', '"Process ID",')):
            current = [line]
            tables.append(current)
        elif current is not None and line.startswith('"'):
            current.append(line)
    if not tables:
        raise NcuError(f"{name} holds no Nsight Compute CSV table (no line starts with \"ID\",); "
                       f"was --csv missing, or did profiling fail? {EXPORT_HELP}")
    return [list(csv.reader(io.StringIO("\n".join(t)))) for t in tables]


def _label_key(section: str, body: str, label: str) -> str:
    m = re.fullmatch(r"(.*) \(([\w.]+)\)", label)      # --print-metric-name label-name
    if m:
        return m[2]
    if re.fullmatch(r"[a-z0-9_]+__[\w.]+", label):     # --print-metric-name name / --metrics rows
        return label
    return LABELS.get((section, body, label)) or LABELS.get((section, "", label)) or f"{section}/{body}/{label}"


def _launches_details(rows: list[list[str]], name: str) -> dict:
    hdr = rows[0]
    for col in ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"):
        if col not in hdr:
            raise NcuError(f"{name}: the details table has no '{col}' column; {EXPORT_HELP}")
    launches: dict = {}
    for n, row in enumerate(rows[1:], start=2):
        d = dict(zip(hdr, row))
        if not d.get("Metric Name"):
            continue                                       # a rule (advice) row
        if "Metric Value" not in d:
            raise NcuError(f"{name}: row {n} is cut short (a truncated file?); export it again: {EXPORT_HELP}")
        key = (d.get("Process ID", ""), d["ID"])
        launch = launches.setdefault(key, (d["Kernel Name"], {"__nvtx": nvtx_range(d)}))
        metric = _label_key(d.get("Section Name", ""), d.get("Body Item Label", ""), d["Metric Name"])
        value = to_number(d["Metric Value"])
        launch[1][metric] = to_base(value, d["Metric Unit"]) if isinstance(value, float) else value
    return launches


def _launches_raw(rows: list[list[str]], name: str) -> dict:
    hdr = rows[0]
    if "Kernel Name" not in hdr or len(rows) < 2:
        raise NcuError(f"{name}: a raw-page table needs a header, a units row and kernel rows; {EXPORT_HELP}")
    units = rows[1]
    if any(units[i] for i, h in enumerate(hdr) if h in ID_COLUMNS and i < len(units)):
        raise NcuError(f"{name}: the second row of a --page raw export must be the units row; {EXPORT_HELP}")
    launches: dict = {}
    for n, row in enumerate(rows[2:], start=3):
        if len(row) != len(hdr):
            raise NcuError(f"{name}: row {n} has {len(row)} of {len(hdr)} columns (a truncated file?); "
                           f"export it again: {EXPORT_HELP}")
        d = dict(zip(hdr, row))
        metrics = {"__nvtx": nvtx_range(d)}
        for h, u, v in zip(hdr, units, row):
            if h in ID_COLUMNS or h.startswith(("thread Domain:", "Id:Domain:")):
                continue
            value = to_number(v)
            metrics[h] = to_base(value, u) if isinstance(value, float) else value
        launches[(d.get("Process ID", ""), d["ID"])] = (d["Kernel Name"], metrics)
    return launches


def read_launches(text: str, name: str = "input") -> list[Launch]:
    """Every kernel launch in one export (raw or details page, any units)."""
    merged: dict = {}
    for rows in _tables(text, name):
        hdr = rows[0]
        if "Average" in hdr and "Invocations" in hdr:
            raise NcuError(f"{name} is a --print-summary export (averages only); {EXPORT_HELP}")
        parse = _launches_details if "Metric Value" in hdr else _launches_raw
        for key, (kernel, metrics) in parse(rows, name).items():
            merged.setdefault(key, (kernel, {}))[1].update(metrics)
    if not merged:
        raise NcuError(f"{name} has a header but no kernel rows (a truncated file?); {EXPORT_HELP}")
    return [Launch(key=k, kernel=kernel, metrics=m, nvtx=m.get("__nvtx", "")) for k, (kernel, m) in merged.items()]


# ---- per-launch quantities (FORMATS.md §4) ------------------------------------------------

def _get(m: dict, *names: str) -> float | None:
    for n in names:
        v = m.get(n)
        if isinstance(v, float) and math.isfinite(v):
            return v
    return None


def _launch_numbers(m: dict) -> dict:
    """Duration, bytes, FLOP, peaks and SOL % of one launch (None where missing)."""
    seconds = _get(m, "gpu__time_duration.sum")
    rd, wr = _get(m, "dram__bytes_read.sum"), _get(m, "dram__bytes_write.sum")
    dram = rd + wr if rd is not None and wr is not None else None
    dram_rate = _get(m, "dram__bytes.sum.per_second")
    if dram is None and dram_rate is not None and seconds:
        dram = dram_rate * seconds
    counts = [_get(m, f"sm__sass_thread_inst_executed_op_{op}_pred_on.sum") for op in ("ffma", "fadd", "fmul")]
    per_cycle = [_get(m, f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum.per_cycle_elapsed")
                 for op in ("ffma", "fadd", "fmul")]
    if per_cycle[0] is None and _get(m, "derived__smsp__ffma_x2.pc") is not None:
        per_cycle[0] = _get(m, "derived__smsp__ffma_x2.pc") / 2
    smsp_hz = _get(m, "smsp__cycles_elapsed.avg.per_second")
    flop = None
    if None not in counts:
        flop = 2 * counts[0] + counts[1] + counts[2]
    elif None not in per_cycle and smsp_hz and seconds:
        flop = (2 * per_cycle[0] + per_cycle[1] + per_cycle[2]) * smsp_hz * seconds
    l2_rate = _get(m, "lts__lts2xbar_cycles_active.sum.per_second")
    l2 = 32 * l2_rate * seconds if l2_rate is not None and seconds else None
    sm_hz = _get(m, "sm__cycles_elapsed.avg.per_second", "gpc__cycles_elapsed.avg.per_second")
    ffma_peak = _get(m, "sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained")
    if ffma_peak is None and _get(m, "derived__sm__ffma_x2.peak") is not None:
        ffma_peak = _get(m, "derived__sm__ffma_x2.peak") / 2
    dram_peak, dram_hz = _get(m, "dram__bytes.sum.peak_sustained"), _get(m, "dram__cycles_elapsed.avg.per_second")
    l2_peak, lts_hz = _get(m, "lts__lts2xbar_cycles_active.sum.peak_sustained"), _get(m, "lts__cycles_elapsed.avg.per_second")
    flop_rate = None     # FLOP/s straight from the rates, for exports without a duration
    if None not in per_cycle and smsp_hz:
        flop_rate = (2 * per_cycle[0] + per_cycle[1] + per_cycle[2]) * smsp_hz
    return {
        "seconds": seconds, "dram_read": rd, "dram_write": wr, "dram": dram, "l2": l2, "flop": flop,
        "flop_rate": flop_rate, "dram_rate": dram_rate, "l2_rate": 32 * l2_rate if l2_rate is not None else None,
        "peak_flop": 2 * ffma_peak * sm_hz if ffma_peak and sm_hz else None,
        "peak_dram": dram_peak * dram_hz if dram_peak and dram_hz else None,
        "peak_l2": 32 * l2_peak * lts_hz if l2_peak and lts_hz else None,
        "memory_pct": _get(m, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),
        "compute_pct": _get(m, "sm__throughput.avg.pct_of_peak_sustained_elapsed"),
        "dram_pct": _get(m, "gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
        "l1_pct": _get(m, "l1tex__throughput.avg.pct_of_peak_sustained_active"),
        "l2_pct": _get(m, "lts__throughput.avg.pct_of_peak_sustained_elapsed"),
    }


def classify(memory_pct: float | None, compute_pct: float | None) -> str | None:
    """The Speed-of-Light verdict (BOUND_RULE)."""
    if memory_pct is None or compute_pct is None:
        return None
    if max(memory_pct, compute_pct) < BUSY_PCT:
        return "latency-bound"
    return "memory-bound" if memory_pct >= compute_pct else "compute-bound"


def _sum(values: list) -> float | None:
    return None if any(v is None for v in values) else sum(values)


def _mean(values: list) -> float | None:
    return None if not values or any(v is None for v in values) else sum(values) / len(values)


def _weighted(values: list, weights: list) -> float | None:
    """Duration-weighted mean of a percentage over launches (plain mean without durations)."""
    if any(v is None for v in values):
        return None
    if any(w is None for w in weights) or not sum(weights):
        return _mean(values)
    return sum(v * w for v, w in zip(values, weights)) / sum(weights)


def _ratio(a, b):
    return a / b if a is not None and b else None


def summarize(launches: list[Launch], files: tuple = ()) -> list[KernelProfile]:
    """One KernelProfile per (NVTX range, kernel name), in order of first launch."""
    by_kernel: dict[tuple, list[Launch]] = {}
    for launch in sorted(launches, key=lambda l: (l.key[0], int(l.key[1]) if str(l.key[1]).isdigit() else 0)):
        by_kernel.setdefault((launch.nvtx, launch.kernel), []).append(launch)
    profiles = []
    for (nvtx, kernel), group in by_kernel.items():
        nums = [_launch_numbers(l.metrics) for l in group]
        col = lambda k: [n[k] for n in nums]  # noqa: E731
        secs = _sum(col("seconds"))
        flop, dram, l2 = _sum(col("flop")), _sum(col("dram")), _sum(col("l2"))
        # without durations, rates are averaged over launches instead of totals divided by time
        flop_rate = _ratio(flop, secs) or _mean(col("flop_rate"))
        dram_rate = _ratio(dram, secs) or _mean(col("dram_rate"))
        l2_rate = _ratio(l2, secs) or _mean(col("l2_rate"))
        pct = {k: _weighted(col(k), col("seconds")) for k in ("memory_pct", "compute_pct", "dram_pct", "l1_pct", "l2_pct")}
        peaks = {k: (max(v for v in col(k) if v is not None) if any(v is not None for v in col(k)) else None)
                 for k in ("peak_flop", "peak_dram", "peak_l2")}
        profiles.append(KernelProfile(
            kernel=kernel, launches=len(group), ids=tuple(int(l.key[1]) if str(l.key[1]).isdigit() else l.key[1] for l in group),
            duration_us=secs / len(group) * 1e6 if secs is not None else None,
            total_duration_us=secs * 1e6 if secs is not None else None,
            **pct, dram_bytes_read=_sum(col("dram_read")), dram_bytes_write=_sum(col("dram_write")),
            dram_bytes=dram, l2_bytes=l2, flop=flop, flop_per_s=flop_rate,
            ai_dram=_ratio(flop, dram) or _ratio(flop_rate, dram_rate),
            ai_l2=_ratio(flop, l2) or _ratio(flop_rate, l2_rate),
            peak_fp32_flop_per_s=peaks["peak_flop"], peak_dram_bytes_per_s=peaks["peak_dram"],
            peak_l2_bytes_per_s=peaks["peak_l2"], bound=classify(pct["memory_pct"], pct["compute_pct"]),
            tool_kernel=bool(TOOL_KERNEL.search(kernel)), files=files, nvtx=nvtx,
            l2_cache_bytes=_get(group[0].metrics, "device__attribute_l2_cache_size")))
    return profiles


def read_files(paths: list[Path | str]) -> list[KernelProfile]:
    """Parse and merge several exports (e.g. details + raw of one report, or before/after)."""
    launches: dict = {}
    names = []
    for p in paths:
        p = Path(p)
        try:
            data = p.read_bytes()
        except OSError as e:
            raise NcuError(f"{p}: cannot be read ({e.strerror})") from None
        text = data.decode("utf-8", errors="replace") if b"\x00" not in data[:4096] else "\x00"
        names.append(p.name)
        for launch in read_launches(text, p.name):
            key = (launch.key, launch.kernel)
            if key in launches:
                launches[key].metrics.update(launch.metrics)
            else:
                launches[key] = launch
    return summarize(list(launches.values()), tuple(names))


def format_table(profiles: list[KernelProfile]) -> str:
    def f(x, spec):
        return "-" if x is None else format(x, spec)
    nvtx = any(p.nvtx for p in profiles)
    width = 16 if nvtx else 0
    lines = [f"{'range' if nvtx else '':<{width}}{'kernel':<44} {'n':>3} {'time us':>10} {'Mem %':>6} {'SM %':>6} {'DRAM %':>7} "
             f"{'DRAM MB':>9} {'GFLOP/s':>10} {'AI DRAM':>8} {'AI L2':>7}  bound"]
    for p in profiles:
        name = re.sub(r"\(.*", "", p.kernel).replace("void ", "")[:40] + (" [tool]" if p.tool_kernel else "")
        lines.append(f"{p.nvtx[:15] if nvtx else '':<{width}}{name:<44} {p.launches:>3} {f(p.duration_us, '.2f'):>10} {f(p.memory_pct, '.1f'):>6} "
                     f"{f(p.compute_pct, '.1f'):>6} {f(p.dram_pct, '.2f'):>7} "
                     f"{f(None if p.dram_bytes is None else p.dram_bytes / 1e6, '.2f'):>9} "
                     f"{f(None if p.flop_per_s is None else p.flop_per_s / 1e9, '.1f'):>10} "
                     f"{f(p.ai_dram, '.1f'):>8} {f(p.ai_l2, '.2f'):>7}  {p.bound or '-'}")
    peak = next((p for p in profiles if p.peak_fp32_flop_per_s and p.peak_dram_bytes_per_s), None)
    if peak:
        lines.append(f"device peaks: FP32 {peak.peak_fp32_flop_per_s / 1e12:.1f} TFLOP/s, DRAM "
                     f"{peak.peak_dram_bytes_per_s / 1e12:.2f} TB/s (ridge "
                     f"{peak.peak_fp32_flop_per_s / peak.peak_dram_bytes_per_s:.1f} FLOP/byte)")
    lines += [BOUND_RULE, "'-': the export lacks the metrics (profile with `make profile`, or "
              "export --page raw --print-units base)"]
    return "\n".join(lines)
