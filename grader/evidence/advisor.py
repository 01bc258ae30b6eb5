"""Intel Advisor CSV exports (CPU roofline dots), text in, data out (FORMATS.md §9).

Survey report: `advisor --report=survey --format=csv --report-output=survey.csv
--project-dir=./adv` after `advisor --collect=roofline`. A short preamble precedes
the table; the header is the first line holding "Function Call Sites and Loops".
Each loop or function with FLOP data becomes a point (Self AI, Self GFLOPS): Advisor's
Self AI is measured against L1/CARM traffic; with `Self DRAM GB` a DRAM-level AI
(Self GFLOP / Self DRAM GB) is added. Roofs report (`--report=roofs`): Name, Bandwidth.
"""
from __future__ import annotations

import csv
import io
import math
import re
from pathlib import Path

from ..analysis.roofline import Ceilings, Point

EXPORT_HELP = ("export one with: advisor --report=survey --format=csv --report-output=survey.csv "
               "--project-dir=./adv (after advisor --collect=roofline --project-dir=./adv -- ./app)")


class AdvisorError(Exception):
    """Not a usable Advisor CSV; the message says how to export one."""


def _number(cell: str) -> float:
    s = (cell or "").strip().lstrip("<").rstrip("s").replace(",", "")
    try:
        return float(s)
    except ValueError:
        return math.nan


def _table(text: str, marker: str, name: str) -> list[dict]:
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if marker in line), None)
    if start is None:
        raise AdvisorError(f"{name}: no '{marker}' header found; {EXPORT_HELP}")
    body = "\n".join(lines[start:])
    delimiter = "\t" if lines[start].count("\t") > lines[start].count(",") else ","
    return list(csv.DictReader(io.StringIO(body), delimiter=delimiter))


def _column(row: dict, *names: str) -> float:
    for n in names:
        if n in row:
            return _number(row[n])
    return math.nan


def survey_points(path: Path | str) -> list[Point]:
    """One point per loop/function with FLOP data (L1/CARM level, and DRAM when exported)."""
    path = Path(path)
    rows = _table(path.read_text(errors="replace"), "Function Call Sites and Loops", path.name)
    points = []
    for row in rows:
        label = re.sub(r"^\[child\]\s*|[\[\]]", "", (row.get("Function Call Sites and Loops") or "").strip())
        gflops = _column(row, "Self GFLOPS", "Self GFLOP/s")
        ai = _column(row, "Self AI", "Self Arithmetic Intensity")
        if not label or not (gflops > 0 and ai > 0):
            continue
        points.append(Point(label, "advisor", "advisor", ai, gflops * 1e9))
        gflop, dram_gb = _column(row, "Self GFLOP"), _column(row, "Self DRAM GB")
        if gflop > 0 and dram_gb > 0:
            points.append(Point(label, "advisor", "DRAM", gflop / dram_gb, gflops * 1e9))
    if not points:
        raise AdvisorError(f"{path.name}: no loop has Self GFLOPS and Self AI (was the roofline "
                           f"collection run, with FLOP data?); {EXPORT_HELP}")
    return points


def roofs(path: Path | str, device: str = "CPU (Intel Advisor)") -> Ceilings:
    """Ceilings from `advisor --report=roofs --format=csv`: the best FP32 FMA peak and DRAM bandwidth."""
    path = Path(path)
    rows = _table(path.read_text(errors="replace"), "Name", path.name)
    peaks = {r["Name"].strip(): _number(r.get("Bandwidth", "")) for r in rows if r.get("Name")}
    flop = [v for k, v in peaks.items() if "SP" in k and "FMA" in k and "single-thread" not in k]
    dram = [v for k, v in peaks.items() if "DRAM" in k and "single-thread" not in k]
    if not flop or not dram:
        raise AdvisorError(f"{path.name}: needs an 'SP ... FMA Peak' and a 'DRAM Bandwidth' row "
                           "(advisor --report=roofs --format=csv)")
    return Ceilings(device, max(flop), {"DRAM": max(dram)}, f"Intel Advisor roofs ({path.name})")
