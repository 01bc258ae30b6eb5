"""Scores, gradebook rows and Gradescope results, computed from a results document.

Everything here is a pure function of one submission's results JSON, the rubric and
deadline of the config (`[rubric]`, `[deadline]`) and its submission time, so a
gradebook can be rebuilt at any time from the per-submission folders (that is what
makes a killed batch resumable without lost or duplicated rows).

Scoring (INSTRUCTORS.md explains it to people):
- correctness: `config_points[i]` for each public config that passed, `hidden_points`
  for each hidden one;
- performance (verdict `ok` only): the first tier of `[[rubric.performance]]` whose
  `max_slowdown` the kernel meets at the largest benchmark S;
- profiler evidence: `profile_points` when profiles/ held an export the grader read,
  `before_after_points` when it held two labelled ones;
- written answers: `written_points` per non-empty section of report.md;
- `cheat_suspected` scores 0 until a person has reviewed it;
- late: minus `penalty_per_day` of the score per started day after due + grace; 0 after
  `max_late_days`.
"""
from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from datetime import datetime

from .config import Deadline, Rubric
from .report import SECTION_KEYS, SECTIONS, split_answers


@dataclass(frozen=True)
class Item:
    name: str
    score: float
    max_score: float
    output: str
    visibility: str = "visible"      # Gradescope: visible | hidden | after_due_date | after_published


@dataclass(frozen=True)
class Lateness:
    days: int                        # started days late (0: on time)
    penalty: float                   # fraction of the score taken off
    submitted_at: str | None
    note: str


def lateness(submitted_at: str | None, deadline: Deadline | None) -> Lateness:
    if deadline is None:
        return Lateness(0, 0.0, submitted_at, "no deadline configured")
    if not submitted_at:
        return Lateness(0, 0.0, None, "no submission time: treated as on time")
    try:
        when = datetime.fromisoformat(submitted_at.strip().replace("Z", "+00:00"))
    except ValueError:
        return Lateness(0, 0.0, submitted_at, f"unreadable submission time {submitted_at!r}: treated as on time")
    if when.tzinfo is None:
        when = when.replace(tzinfo=deadline.due.tzinfo)
    late_s = (when - deadline.due).total_seconds() - deadline.grace_minutes * 60
    if late_s <= 0:
        return Lateness(0, 0.0, submitted_at, "on time")
    days = math.ceil(late_s / 86400)
    if deadline.max_late_days and days > deadline.max_late_days:
        return Lateness(days, 1.0, submitted_at, f"{days} days late: past the {deadline.max_late_days:g}-day limit")
    penalty = min(1.0, days * deadline.penalty_per_day)
    return Lateness(days, penalty, submitted_at, f"{days} day{'s' * (days != 1)} late: -{penalty:.0%}")


def _largest_row(doc: dict) -> dict | None:
    rows = [r for r in doc.get("bench", []) if r.get("slowdown")]
    return max(rows, key=lambda r: r["S"]) if rows else None


def score_items(doc: dict, rubric: Rubric, hidden_count: int | None = None) -> list[Item]:
    """The rubric's items for one results document (before the late penalty)."""
    items: list[Item] = []
    cheat = doc["verdict"] == "cheat_suspected"
    public = [c for c in doc.get("checks", []) if not c.get("hidden")]
    hidden = [c for c in doc.get("checks", []) if c.get("hidden")]
    shapes = doc.get("config", {}).get("configs", [])
    for i, pts in enumerate(rubric.config_points):
        c = public[i] if i < len(public) else None
        shape = shapes[i] if i < len(shapes) else {}
        label = f"correctness: config {i + 1}" + (f" (B={shape['B']} H={shape['H']} S={shape['S']} D={shape['D']})" if shape else "")
        if c is None:
            items.append(Item(label, 0, pts, f"not run: {doc['verdict']} - {doc['message']}"))
            continue
        ok = c["passed"] and not cheat
        err = "-" if c.get("max_err") is None else f"{c['max_err']:.2e}"
        items.append(Item(label, pts if ok else 0, pts,
                          f"max_err {err} (bar {doc['config']['tolerance']:g}): "
                          + ("passed" if c["passed"] else c.get("message") or "failed")))
    n_hidden = len(hidden) if hidden_count is None else hidden_count
    for i in range(n_hidden):
        c = hidden[i] if i < len(hidden) else None
        ok = bool(c and c["passed"]) and not cheat
        out = "not run" if c is None else ("passed" if c["passed"] else c.get("message") or "failed")
        items.append(Item(f"correctness: hidden config {i + 1}", rubric.hidden_points if ok else 0,
                          rubric.hidden_points, out, visibility="after_published"))
    if rubric.performance:
        best = max(p for _, p in rubric.performance)
        row = _largest_row(doc)
        pts, out = 0.0, "no benchmark (the kernel must be correct first)"
        if row is not None and doc["verdict"] == "ok":
            from .tiers import decide       # a statistic a noisy run cannot flip (grader/tiers.py)
            decision = decide(row, rubric.performance, doc.get("bench_quality"))
            pts = decision.points
            out = f"{row['student_ms']:.4g} ms vs SDPA {row['sdpa_ms']:.4g} ms (medians); {decision.text}"
        elif cheat:
            out = "withheld: integrity flags need review"
        items.append(Item("performance vs SDPA", pts, best, out))
    labels = sorted({k.get("profile", "") for k in doc.get("profiles", [])})
    if rubric.profile_points:
        items.append(Item("profiler evidence", rubric.profile_points if labels else 0, rubric.profile_points,
                          f"profiles read: {', '.join(labels)}" if labels else "no readable profiler export in profiles/"))
    if rubric.before_after_points:
        items.append(Item("profiler evidence: before and after", rubric.before_after_points if len(labels) >= 2 else 0,
                          rubric.before_after_points, f"{len(labels)} labelled profile(s)"))
    if rubric.written_points:
        _, answers = split_answers(doc.get("report_md"))
        for key, title in zip(SECTION_KEYS, SECTIONS):
            present = bool(answers.get(key))
            items.append(Item(f"written: {title}", rubric.written_points if present else 0, rubric.written_points,
                              "answered" if present else "missing from report.md"))
    return items


def total(items: list[Item], late: Lateness) -> tuple[float, float]:
    raw = sum(i.score for i in items)
    return round(raw * (1 - late.penalty), 2), round(sum(i.max_score for i in items), 2)


# ---- the gradebook row --------------------------------------------------------------------

def row(doc: dict, items: list[Item], late: Lateness, sizes: list[int], n_public: int, n_hidden: int) -> dict:
    score, max_score = total(items, late)
    r = {"submission": doc["submission"]["name"], "status": doc["verdict"], "score": score,
         "max_score": max_score}
    public = [c for c in doc.get("checks", []) if not c.get("hidden")]
    hidden = [c for c in doc.get("checks", []) if c.get("hidden")]
    for i in range(n_public):
        c = public[i] if i < len(public) else {}
        r[f"config{i + 1}_max_err"] = c.get("max_err")
        r[f"config{i + 1}_passed"] = c.get("passed")
    for i in range(n_hidden):
        c = hidden[i] if i < len(hidden) else {}
        r[f"hidden{i + 1}_max_err"] = c.get("max_err")
        r[f"hidden{i + 1}_passed"] = c.get("passed")
    bench = {b["S"]: b for b in doc.get("bench", [])}
    for S in sizes:
        b = bench.get(S, {})
        r[f"student_ms_S{S}"] = b.get("student_ms")
        r[f"sdpa_ms_S{S}"] = b.get("sdpa_ms")
        r[f"slowdown_S{S}"] = b.get("slowdown")
    comp = doc.get("compile") or {}
    r["compile_seconds"] = comp.get("seconds")
    r["flags"] = ";".join(dict.fromkeys(f"{f['tier']}:{f['code']}" for f in doc.get("flags", [])))
    r["late_days"] = late.days
    r["late_penalty"] = late.penalty
    r["backend"] = doc.get("backend")
    r["message"] = doc.get("message", "")[:300]
    return r


def columns(sizes: list[int], n_public: int, n_hidden: int) -> list[str]:
    cols = ["submission", "status", "score", "max_score"]
    cols += [f"config{i + 1}_{x}" for i in range(n_public) for x in ("max_err", "passed")]
    cols += [f"hidden{i + 1}_{x}" for i in range(n_hidden) for x in ("max_err", "passed")]
    cols += [f"{x}_S{S}" for S in sizes for x in ("student_ms", "sdpa_ms", "slowdown")]
    return cols + ["compile_seconds", "flags", "late_days", "late_penalty", "backend", "message"]


def to_csv(rows: list[dict], cols: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in cols})
    return buf.getvalue()


# ---- Gradescope ---------------------------------------------------------------------------

def gradescope(doc: dict, items: list[Item], late: Lateness) -> dict:
    """Gradescope's autograder results.json: score, tests[], leaderboard."""
    score, _ = total(items, late)
    tests = [{"name": i.name, "score": i.score, "max_score": i.max_score, "output": i.output,
              "visibility": i.visibility} for i in items]
    if late.penalty:
        tests.append({"name": "late penalty", "score": 0, "max_score": 0,
                      "output": f"{late.note} (submitted {late.submitted_at})", "visibility": "visible"})
    flags = [f for f in doc.get("flags", [])]
    if flags:
        tests.append({"name": "integrity flags", "score": 0, "max_score": 0, "visibility": "hidden",
                      "output": "\n".join(f"[{f['tier']}] {f['detail']}" for f in flags)})
    leaderboard = []
    if doc["verdict"] == "ok":
        for b in sorted(doc.get("bench", []), key=lambda b: b["S"]):
            if b.get("slowdown"):
                leaderboard.append({"name": f"speedup vs SDPA, S={b['S']}", "value": round(1 / b["slowdown"], 4),
                                    "order": "desc"})
    return {"score": score, "output": f"verdict: {doc['verdict']} - {doc['message']}",
            "tests": tests, "leaderboard": leaderboard, "visibility": "visible"}
