"""The history of a student's graded runs: each `grade --json PATH --label NAME` keeps a
copy of its results in `history/` beside PATH (`<UTC time>_<label>.json`), so that the
report can put the current run next to an earlier one (`report --before LABEL`).

Why not pytest-benchmark's storage: the timings that matter are the grader's own (SDPA
and the references interleaved in one process, L2 flushed, CUDA graphs at small S, the
method and the system recorded beside them), and the results document already holds
all of it; a second store would hold a second, different measurement of the same run.
"""
from __future__ import annotations

import json
import re
import shutil
from datetime import datetime, timezone
from pathlib import Path

LABEL = re.compile(r"^[A-Za-z0-9_-]{1,40}$")


class HistoryError(Exception):
    """A label or history entry that cannot be used; the message says what to do."""


def check_label(label: str) -> str:
    if not LABEL.match(label):
        raise HistoryError(f"--label {label!r}: use 1-40 letters, digits, '_' or '-' (e.g. naive, fused)")
    return label


def folder(results_json: Path) -> Path:
    return Path(results_json).parent / "history"


def save(results_json: Path, label: str) -> Path:
    """Copy a results document into the history, labelled; returns the copy's path."""
    check_label(label)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    dest = folder(results_json) / f"{stamp}_{label}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(results_json, dest)
    return dest


def entries(results_json: Path) -> list[tuple[str, str, Path]]:
    """(time stamp, label, path) of every saved run, oldest first."""
    out = []
    for p in sorted(folder(results_json).glob("*_*.json")):
        stamp, _, label = p.stem.partition("_")
        out.append((stamp, label, p))
    return out


def find(results_json: Path, label: str) -> dict:
    """The newest saved run with `label`."""
    check_label(label)
    runs = [p for _, lab, p in entries(results_json) if lab == label]
    if not runs:
        known = sorted({lab for _, lab, _ in entries(results_json)})
        raise HistoryError(f"no run labelled {label!r} in {folder(results_json)} "
                           f"(labels there: {', '.join(known) or 'none'}); save one with "
                           f"`make grade RUN={label}` or `python -m grader grade ... --label {label}`")
    try:
        return json.loads(runs[-1].read_text())
    except (OSError, ValueError) as e:
        raise HistoryError(f"{runs[-1]}: not a readable results document ({e})") from None


def compare_runs(before: dict, now: dict, label: str) -> dict:
    """Rows of the report's run-vs-run table: time per S before and now, and the speedup."""
    old = {b["S"]: b for b in before.get("bench", [])}
    rows = []
    for b in now.get("bench", []):
        o = old.get(b["S"])
        if not o or not o.get("student_ms") or not b.get("student_ms"):
            continue
        rows.append({"S": b["S"], "before": o["student_ms"], "now": b["student_ms"],
                     "speedup": o["student_ms"] / b["student_ms"],
                     "before_slowdown": o.get("slowdown"), "now_slowdown": b.get("slowdown")})
    same_device = (before.get("system", {}).get("gpu") or before.get("system", {}).get("cpu")) == \
        (now.get("system", {}).get("gpu") or now.get("system", {}).get("cpu"))
    return {"label": label, "verdict": before.get("verdict"), "rows": rows, "same_device": same_device,
            "backend": before.get("backend"), "conditions": conditions(before, now, label)}


def _quality(doc: dict) -> str | None:
    """The timing-quality status the bench stage recorded ("clean" or "noisy"), if any."""
    q = doc.get("bench_quality")
    return q.get("status") if isinstance(q, dict) else None


def conditions(before: dict, now: dict, label: str) -> list[str]:
    """One sentence per way the two runs were timed under different conditions: device,
    backend, threads, and the bench stage's timing quality (`bench_quality`, absent in
    results older than it)."""
    out = []
    sys_a, sys_b = before.get("system", {}), now.get("system", {})
    for what, a, b in (("device", sys_a.get("gpu") or sys_a.get("cpu"), sys_b.get("gpu") or sys_b.get("cpu")),
                       ("backend", before.get("backend"), now.get("backend")),
                       ("threads", sys_a.get("threads"), sys_b.get("threads"))):
        if a != b and a is not None and b is not None:
            out.append(f"different {what}: {label} {a}, now {b}")
    qa, qb = _quality(before), _quality(now)
    noisy = [name for name, q in ((label, qa), ("this run", qb)) if q == "noisy"]
    if noisy:
        out.append(f"{' and '.join(noisy)} timed on a busy or noisy machine (bench_quality: noisy): the speedup "
                   "mixes your change with the machine's load; grade both again on a quiet machine")
    elif (qa is None) != (qb is None):
        out.append(f"only {'this run' if qa is None else label} recorded its timing quality: the other's "
                   "conditions are unknown")
    return out
