"""The CPU profiler: `make profile` on a machine without a GPU.

It measures the student's `_CPP_SRC` at the benchmark sizes the way the CPU roofline
does (grader/analysis/roofline.py): the median time of repeated calls, and the FLOPs and bytes of
one call. Where the CPU's own counters can be read (`perf stat`: floating-point
operations retired, and last-level-cache misses or DRAM fills x 64 bytes for traffic),
they give the FLOPs and bytes; where they cannot (no perf, not permitted, a virtual
machine without a PMU), the AI model's count for the kernel's kind (naive or fused)
does, and the file says which. Each size runs in a child process, under `perf stat
--control` when counting, so that only the timed calls are counted.

Out comes `profiles/<label>_cpu.csv`, one row per size, labelled like the GPU's exports
(`LABEL=before` / `after`); grader/evidence/exports.py reads it back for the report and the
rubric. Text in, data out: `read_csv` and `parse_perf` are pure.
"""
from __future__ import annotations

import csv
import io
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ..core.config import REPO_ROOT, Config

FORMAT = "attention-grader-cpu-profile-1"
MODELS = ("naive", "fused")
START_S = 120                               # a child's start: Python, torch, loading the cached build
LINE = 64                                   # bytes per cache line: one miss or fill moves one line
# Counter sets, tried in order: (what, {perf event: FLOPs or bytes per count}). Intel's
# fp_arith events count an FMA twice, AMD's fp_ret_sse_avx_ops counts FLOPs (FMA = 2).
FLOP_EVENTS = (
    ("fp_arith_inst_retired (Intel): scalar + 4 x 128-bit + 8 x 256-bit + 16 x 512-bit single",
     {"fp_arith_inst_retired.scalar_single": 1, "fp_arith_inst_retired.128b_packed_single": 4,
      "fp_arith_inst_retired.256b_packed_single": 8, "fp_arith_inst_retired.512b_packed_single": 16}),
    ("fp_ret_sse_avx_ops.all (AMD): FLOPs retired", {"fp_ret_sse_avx_ops.all": 1}),
)
BYTE_EVENTS = (
    ("L1 fills from DRAM x 64 B (AMD Zen 4; reads only)", {"ls_any_fills_from_sys.dram_io_all": LINE}),
    ("L1 fills from memory x 64 B (AMD Zen 3; reads only)",
     {"ls_any_fills_from_sys.mem_io_local": LINE, "ls_any_fills_from_sys.mem_io_remote": LINE}),
    ("last-level-cache misses x 64 B (demand loads and stores; prefetches not counted)",
     {"LLC-load-misses": LINE, "LLC-store-misses": LINE}),
)
COLUMNS = ("format", "label", "kernel", "model", "B", "H", "S", "D", "threads", "reps", "median_ms", "min_ms",
           "iqr_ms", "max_err", "model_flops", "model_bytes", "counted_flops", "counted_bytes", "flops_counter",
           "bytes_counter", "counter_note", "cpu", "cores", "peak_flop_per_s", "dram_bytes_per_s",
           "ceilings_source", "load_before", "load_after", "measured_at", "source")


class CpuProfileError(Exception):
    """Profiling cannot run or its file cannot be read; the message says what to do."""


def model_for(label: str, declared: str | None = None) -> tuple[str, str]:
    """(model, why): the traffic model of a labelled run: as declared, else from the label
    (`naive`/`before` -> naive, `fused`/`after` -> fused), else fused."""
    if declared:
        if declared not in MODELS:
            raise CpuProfileError(f"model {declared!r}: use naive or fused")
        return declared, "declared"
    low = label.lower()
    if "naive" in low or "before" in low:
        return "naive", f"from the label {label!r}"
    if "fused" in low or "after" in low:
        return "fused", f"from the label {label!r}"
    return "fused", "assumed (say MODEL=naive or MODEL=fused)"


def model_cost(model: str, B: int, H: int, S: int, D: int) -> tuple[int, int]:
    """(FLOPs, bytes) of one call by the AI model (grader/analysis/ai_model.py)."""
    from ..analysis.ai_model import fused, naive, total
    cost = total("naive", naive(B, H, S, D)) if model == "naive" else fused(B, H, S, D)
    return cost.flops, cost.bytes_moved


# ---- perf stat ------------------------------------------------------------------------

def parse_perf(text: str) -> dict:
    """`perf stat -x,` output -> {event: count, or None when not supported/counted}.
    Modifiers (`:u`) and PMU prefixes (`cpu_core/.../`, hybrid CPUs) are dropped and
    the same event on several PMUs summed."""
    counts: dict = {}
    for row in csv.reader(io.StringIO(text)):
        if len(row) < 3 or row[0].startswith("#"):
            continue
        value, event = row[0].strip(), row[2].strip()
        event = re.sub(r":[ukhpPGH]+$", "", re.sub(r"^[\w-]+/(.+?)/?$", r"\1", event))
        try:
            number = float(value)
        except ValueError:
            counts.setdefault(event, None)
            continue
        counts[event] = (counts.get(event) or 0.0) + number
    return counts


def perf_binary() -> str | None:
    return shutil.which("perf")


def _paranoid() -> str:
    try:
        return Path("/proc/sys/kernel/perf_event_paranoid").read_text().strip()
    except OSError:
        return "?"


def probe(perf: str | None = None) -> tuple[tuple | None, tuple | None, str]:
    """(FLOP counter set, byte counter set, note): the first sets whose events perf can
    count for this user here, each None when none can, and why."""
    perf = perf or perf_binary()
    if perf is None:
        return None, None, "perf is not installed (apt install linux-perf or linux-tools-$(uname -r))"
    found, why = [], []
    for sets in (FLOP_EVENTS, BYTE_EVENTS):
        chosen = None
        for what, events in sets:
            try:
                proc = subprocess.run([perf, "stat", "-x", ",", "-e", ",".join(events), "--", "true"],
                                      capture_output=True, text=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired) as e:
                return None, None, f"perf could not run ({e})"
            counts = parse_perf(proc.stderr)
            if proc.returncode == 0 and all(counts.get(e) is not None for e in events):
                chosen = (what, events)
                break
            if "perf_event_paranoid" in proc.stderr or "Permission" in proc.stderr or "not permitted" in proc.stderr:
                why.append(f"perf is not permitted here (kernel.perf_event_paranoid = {_paranoid()}; "
                           "sudo sysctl kernel.perf_event_paranoid=1 allows counting your own processes)")
                break
        found.append(chosen)
    if not why and None in found:
        why.append("this CPU exposes no " + " and no ".join(k for k, f in zip(("FLOP", "traffic"), found) if f is None)
                   + " counters to perf (a virtual machine without a PMU, or an unknown CPU)")
    return found[0], found[1], "; ".join(dict.fromkeys(why))


# ---- measuring ------------------------------------------------------------------------

def _run_size(sub_path: str, cfg: Config, shape, threads: int, events: dict, timeout: float) -> tuple[dict, dict]:
    """Time (and count, when `events`) the student's kernel at one size in a child process;
    returns (the child's timings, {event: count over the timed calls})."""
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "PYTHONPATH": str(REPO_ROOT)}
    with tempfile.TemporaryDirectory(prefix="cpu-profile-") as tmp:
        tmp = Path(tmp)
        out = tmp / "timings.json"
        cmd = [sys.executable, "-m", "grader.evidence.cpu_profile", sub_path, cfg.source, str(shape.S), str(threads), str(out)]
        if events:
            os.mkfifo(tmp / "ctl")
            os.mkfifo(tmp / "ack")
            cmd = [perf_binary(), "stat", "-x", ",", "-o", str(tmp / "perf.txt"), "-e", ",".join(events),
                   "--control", f"fifo:{tmp / 'ctl'},{tmp / 'ack'}", "--delay", "-1", "--", *cmd,
                   str(tmp / "ctl"), str(tmp / "ack")]
        proc = subprocess.Popen(cmd, cwd=REPO_ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                text=True, start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, 9)                   # perf and the child under it
            proc.communicate()
            raise CpuProfileError(f"S={shape.S}: timing the kernel took longer than {timeout:g} s") from None
        if not out.is_file():
            tail = " | ".join(output.strip().splitlines()[-3:])
            raise CpuProfileError(f"S={shape.S}: the measurement failed (exit {proc.returncode}): {tail}")
        result = json.loads(out.read_text())
        counts = parse_perf((tmp / "perf.txt").read_text()) if events and (tmp / "perf.txt").is_file() else {}
    if result.get("error"):
        raise CpuProfileError(f"S={shape.S}: {result['error']}")
    return result, counts


def measure(sub, cfg: Config, label: str, model: str | None = None, counters: bool = True,
            progress=None) -> Path:
    """Profile `sub` (a parsed submission with `_CPP_SRC`) at the config's benchmark sizes;
    writes and returns `profiles/<label>_cpu.csv` beside it."""
    from ..build.parse import profiles_dir
    from ..analysis.roofline import measure_cpu_ceilings
    from ..core.system import _cpu_name
    say = progress or (lambda line: None)
    if "cpp" not in sub.sources:
        raise CpuProfileError(f"{sub.file} has no _CPP_SRC to profile on the CPU")
    model, why = model_for(label, model)
    threads = cfg.threads or os.cpu_count() or 1
    from ..build.compile import compile_source, prepare
    say("compiling your _CPP_SRC (the measurements reuse this build) ...")
    prepare()                                   # built here, so that no child is stopped while building
    built, _ = compile_source(sub.sources["cpp"], cfg)
    if not built.ok:
        raise CpuProfileError(f"{sub.file} did not compile (make check-compile shows why):\n{built.log}")
    flop_set, byte_set, note = probe() if counters else (None, None, "counters turned off (--no-counters)")
    events = {**(flop_set[1] if flop_set else {}), **(byte_set[1] if byte_set else {})}
    say(f"counters: {', '.join(s[0] for s in (flop_set, byte_set) if s) or 'none'}"
        + (f" ({note}; the AI model's {model} count stands in)" if note else ""))
    say("measuring this CPU's roofline (FMA peak, memory bandwidth; cached after the first time) ...")
    ceilings = measure_cpu_ceilings(threads)
    rows = []
    for shape in cfg.bench_shapes:
        say(f"S={shape.S}: timing{' and counting' if events else ''} your kernel ({threads} threads) ...")
        load_before = os.getloadavg()[0]
        try:
            t, counts = _run_size(sub.path, cfg, shape, threads, events, START_S + cfg.timeout_bench)
        except CpuProfileError as e:
            if not events or "the measurement failed" not in str(e):
                raise
            note = f"perf stat failed while counting ({e}); measured without counters"
            say(f"  {note}")
            flop_set = byte_set = None
            events = {}
            t, counts = _run_size(sub.path, cfg, shape, threads, events, START_S + cfg.timeout_bench)
        model_flops, model_bytes = model_cost(model, shape.B, shape.H, shape.S, shape.D)
        per_call = lambda s: ("" if s is None or any(counts.get(e) is None for e in s[1]) else  # noqa: E731
                              sum(counts[e] * w for e, w in s[1].items()) / t["reps"])
        rows.append({"format": FORMAT, "label": label, "kernel": "attention (_CPP_SRC)", "model": model,
                     "B": shape.B, "H": shape.H, "S": shape.S, "D": shape.D, "threads": threads, "reps": t["reps"],
                     "median_ms": t["median_ms"], "min_ms": t["min_ms"], "iqr_ms": t["iqr_ms"],
                     "max_err": t["max_err"], "model_flops": model_flops, "model_bytes": model_bytes,
                     "counted_flops": per_call(flop_set), "counted_bytes": per_call(byte_set),
                     "flops_counter": flop_set[0] if flop_set else "", "bytes_counter": byte_set[0] if byte_set else "",
                     "counter_note": note, "cpu": _cpu_name(), "cores": os.cpu_count() or 1,
                     "peak_flop_per_s": ceilings.peak_flop_per_s,
                     "dram_bytes_per_s": ceilings.bandwidth_bytes_per_s["DRAM"], "ceilings_source": ceilings.source,
                     "load_before": round(load_before, 2), "load_after": round(os.getloadavg()[0], 2),
                     "measured_at": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                     "source": sub.sources["cpp"].digest})       # whose kernel (grader/evidence/exports.py)
    say(f"traffic model: {model} ({why})")
    folder = profiles_dir(Path(sub.path))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{label}_cpu.csv"
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(buf.getvalue())
    tmp.replace(path)
    return path


# ---- reading it back --------------------------------------------------------------------

def is_cpu_profile(path: Path) -> bool:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline().startswith("format,") and FORMAT in f.readline()
    except OSError:
        return False


def read_csv(path: Path) -> list[dict]:
    """The kernel records of one `<label>_cpu.csv` (fields like an ncu record's where they
    mean the same: profile, kernel, nvtx, duration_us, flop, ai_dram, bound), or
    CpuProfileError naming the file and the problem."""
    path = Path(path)
    try:
        rows = list(csv.DictReader(io.StringIO(path.read_text(encoding="utf-8"))))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise CpuProfileError(f"{path.name}: cannot be read ({e})") from None
    if not rows:
        raise CpuProfileError(f"{path.name}: no measurements in it; make it again with make profile")
    records = []
    for i, row in enumerate(rows, start=2):
        try:
            records.append(_record(row))
        except (KeyError, ValueError, TypeError) as e:
            raise CpuProfileError(f"{path.name} line {i}: not a CPU profile row ({type(e).__name__}: {e}); "
                                  "make it again with make profile") from None
    return records


def _number(row: dict, key: str) -> float | None:
    return None if row[key] in ("", None) else float(row[key])


def _record(row: dict) -> dict:
    if row["format"] != FORMAT or row["model"] not in MODELS:
        raise ValueError(f"format {row['format']!r}, model {row['model']!r}")
    ints = {k: int(row[k]) for k in ("B", "H", "S", "D", "threads", "reps", "cores")}
    nums = {k: _number(row, k) for k in ("median_ms", "min_ms", "iqr_ms", "max_err", "model_flops", "model_bytes",
                                         "counted_flops", "counted_bytes", "peak_flop_per_s", "dram_bytes_per_s",
                                         "load_before", "load_after")}
    if not nums["median_ms"] or nums["median_ms"] <= 0:
        raise ValueError("median_ms must be > 0")
    text = {k: row[k] for k in ("label", "kernel", "model", "flops_counter", "bytes_counter", "counter_note", "cpu",
                                "ceilings_source", "measured_at")}
    source = row.get("source") or ""
    rec = {"profiler": "cpu", "profile": row["label"], "nvtx": f"student_S{ints['S']}", **ints, **nums, **text,
           "source": source if re.fullmatch(r"[0-9a-f]{12}", source) else "",
           "duration_us": nums["median_ms"] * 1e3, "tool_kernel": False}
    return {**rec, **placed(rec, rec["model"])}


def placed(rec: dict, model: str) -> dict:
    """Where one record sits on the roofline with the traffic model `model`: FLOPs and
    bytes of one call (counted where the counters were read, else the model's), AI,
    FLOP/s, and the side of the ridge it is on."""
    flops_model, bytes_model = model_cost(model, rec["B"], rec["H"], rec["S"], rec["D"])
    flop = rec["counted_flops"] or flops_model
    moved = rec["counted_bytes"] or bytes_model
    ai, per_s = flop / moved, flop / (rec["median_ms"] * 1e-3)
    ridge = rec["peak_flop_per_s"] / rec["dram_bytes_per_s"] if rec.get("peak_flop_per_s") and rec.get("dram_bytes_per_s") else None
    roof = min(rec["peak_flop_per_s"], ai * rec["dram_bytes_per_s"]) if ridge else None
    return {"model": model, "flop": flop, "bytes": moved, "ai_dram": ai, "flop_per_s": per_s,
            "flops_from": "counters" if rec["counted_flops"] else f"model ({model})",
            "bytes_from": "counters" if rec["counted_bytes"] else f"model ({model})",
            "pct_of_roof": None if roof is None else 100 * per_s / roof,
            "bound": None if ridge is None else ("memory-bound" if ai < ridge else "compute-bound") + " (roofline side)"}


def format_table(records: list[dict]) -> str:
    """The terminal table of `make profile` on the CPU."""
    lines = [f"{'label':<10} {'S':>5} {'time ms':>9} {'GFLOP/s':>9} {'AI':>7} {'% roof':>7}  FLOPs from / bytes from"]
    for r in records:
        pct = "-" if r["pct_of_roof"] is None else f"{r['pct_of_roof']:.0f}"
        lines.append(f"{r['profile']:<10} {r['S']:>5} {r['median_ms']:>9.3f} {r['flop_per_s'] / 1e9:>9.1f} "
                     f"{r['ai_dram']:>7.2f} {pct:>7}  {r['flops_from']} / {r['bytes_from']}")
    first = records[0] if records else None
    if first and first.get("peak_flop_per_s"):
        lines.append(f"roofs of this CPU ({first['threads']} threads): FMA peak {first['peak_flop_per_s'] / 1e9:,.1f} "
                     f"GFLOP/s, memory {first['dram_bytes_per_s'] / 1e9:,.1f} GB/s (ridge "
                     f"{first['peak_flop_per_s'] / first['dram_bytes_per_s']:.1f} FLOP/byte)")
    if first and first["counter_note"]:
        lines.append(f"counters: {first['counter_note']}")
    return "\n".join(lines)


# ---- the child: one size, timed (and counted between enable and disable) -------------------

def _child(sub_path: str, config: str, S: int, threads: int, out: str, ctl: str | None, ack: str | None) -> None:
    import torch

    from ..judge.check import make_inputs, truth
    from ..build.compile import compile_source, prepare
    from ..core.config import load
    from ..build.parse import parse

    def control(command: str) -> None:
        if ctl:
            with open(ctl, "w") as f:
                f.write(command + "\n")
            with open(ack) as f:
                f.readline()

    def done(**result) -> None:
        Path(out).write_text(json.dumps(result))

    torch.set_num_threads(threads)
    cfg = load(config)
    shape = next(s for s in cfg.bench_shapes if s.S == S)
    prepare()
    sub = parse(sub_path)
    if not sub.ok:
        return done(error=sub.error)
    result, kernel = compile_source(sub.sources["cpp"], cfg)
    if not result.ok:
        return done(error=f"the kernel did not compile:\n{result.log}")
    q, k, v = make_inputs(shape, seed=shape.S)
    try:
        for _ in range(max(1, cfg.warmup_reps)):
            out_t = kernel(q, k, v)
        err = float((out_t.double() - truth(q, k, v)).abs().max())
    except Exception as exc:  # noqa: BLE001 - the student's error is data
        return done(error=f"attention raised: {str(exc).strip().splitlines()[0][:300]}")
    if not err < cfg.tolerance:
        return done(error=f"the output is wrong (max_err {err:.3g} >= {cfg.tolerance:g}): profile a correct "
                          "kernel (make grade says what is wrong)")
    times, budget = [], cfg.rep_ms / 1000
    control("enable")
    start = time.perf_counter()
    while len(times) < cfg.max_reps and (len(times) < cfg.min_reps or time.perf_counter() - start < budget):
        t0 = time.perf_counter()
        kernel(q, k, v)
        times.append((time.perf_counter() - t0) * 1e3)
    control("disable")
    quart = statistics.quantiles(times, n=4) if len(times) >= 2 else [times[0]] * 3
    done(reps=len(times), median_ms=statistics.median(times), min_ms=min(times), iqr_ms=quart[2] - quart[0],
         max_err=err if math.isfinite(err) else None)


if __name__ == "__main__":
    a = sys.argv[1:]
    _child(a[0], a[1], int(a[2]), int(a[3]), a[4], a[5] if len(a) > 5 else None, a[6] if len(a) > 6 else None)
