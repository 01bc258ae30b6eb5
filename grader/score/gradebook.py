"""Scores, gradebook rows and Gradescope results, computed from a results document.

Everything here is a pure function of one submission's results JSON, the rubric and
deadline of the config (`[rubric]`, `[deadline]`) and its submission time, so a
gradebook can be rebuilt at any time from the per-submission folders (that is what
makes a killed batch resumable without lost or duplicated rows).

Scoring (INSTRUCTORS.md explains it to people):
- correctness: `config_points[i]` for each public config that passed, `hidden_points`
  for each hidden one;
- performance (every public config passed and the benchmark ran with every timed output
  correct; a hidden config failing after it costs that config's points only): the first
  tier of `[[rubric.performance]]` whose `max_slowdown` the kernel meets at the largest
  benchmark S;
- profiler evidence: `profile_points` when profiles/ held an export the grader read,
  `before_after_points` when it held two labelled ones;
- written answers: `written_points` per non-empty section of report.md (provisional: a
  person grades the text through overrides.csv);
- `cheat_suspected` scores 0 until a person has reviewed it (overrides.csv `review`);
- late: minus `penalty_per_day` of the score per started day after due + grace (+ the
  student's `extension` days); 0 after `max_late_days`.
A person's decisions (grader/score/overrides.py) are applied by `scored`; the gradebook's
`overrides` column says which, and by whom.
"""
from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, replace
from datetime import datetime, timedelta

from ..core.config import Deadline, Rubric
from .overrides import Override, OverrideError
from ..core.safetext import FORMULA_START, clipped
from ..core.answers import SECTION_KEYS, SECTIONS, split_answers


@dataclass(frozen=True)
class Item:
    name: str
    score: float
    max_score: float
    output: str
    visibility: str = "visible"      # Gradescope: visible | hidden | after_due_date | after_published
    key: str = ""                    # what overrides.csv calls it: config1, performance, written:gap, ...
    mark: str = ""                   # for the staff: the tier was decided at a boundary (grades.csv tier_boundary)


@dataclass(frozen=True)
class Lateness:
    days: int                        # started days late (0: on time)
    penalty: float                   # fraction of the score taken off
    submitted_at: str | None
    note: str


def lateness(submitted_at: str | None, deadline: Deadline | None, extension_days: float = 0) -> Lateness:
    """How late a submission is; `extension_days` move this student's deadline."""
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
    due = deadline.due + timedelta(days=extension_days)
    ext = f" (with a {extension_days:g}-day extension)" if extension_days else ""
    late_s = (when - due).total_seconds() - deadline.grace_minutes * 60
    if late_s <= 0:
        return Lateness(0, 0.0, submitted_at, "on time" + ext)
    days = math.ceil(late_s / 86400)
    if deadline.max_late_days and days > deadline.max_late_days:
        return Lateness(days, 1.0, submitted_at, f"{days} days late{ext}: past the {deadline.max_late_days:g}-day limit")
    penalty = min(1.0, days * deadline.penalty_per_day)
    return Lateness(days, penalty, submitted_at, f"{days} day{'s' * (days != 1)} late{ext}: -{penalty:.0%}")


def _largest_row(doc: dict) -> dict | None:
    rows = [r for r in doc.get("bench", []) if r.get("slowdown")]
    return max(rows, key=lambda r: r["S"]) if rows else None


def benchmark_counts(doc: dict) -> bool:
    """Whether the performance tier is scored: the kernel passed every public config and
    the benchmark ran to its end with every timed output correct. A failure after it (a
    hidden config: wrong, crashed or out of time) costs that config's points, not the
    benchmark's, since every timed call was of a kernel the judge checked (the verdict
    still says the failure). `cheat_suspected` is withheld elsewhere."""
    if doc["verdict"] == "ok":
        return True
    if doc["verdict"] == "cheat_suspected":
        return False
    public = [c for c in doc.get("checks", []) if not c.get("hidden")]
    n_public = len(doc.get("config", {}).get("configs", []))
    rows = doc.get("bench") or []
    sizes = doc.get("config", {}).get("bench_sizes") or [r.get("S") for r in rows]
    tol = doc.get("config", {}).get("tolerance")
    timed_ok = (len(rows) == len(sizes) and len(rows) > 0 and tol is not None
                and all(r.get("slowdown") and r.get("recheck_max_err") is not None and r["recheck_max_err"] < tol
                        for r in rows))
    return bool(public) and len(public) >= n_public and all(c["passed"] for c in public) and timed_ok


def not_counted(doc: dict) -> set:
    """The profile labels of a results document that earn nothing: exports of another source
    (grader/evidence/exports.py provenance)."""
    from ..evidence.exports import provenance
    return provenance(doc.get("sources") or {}, list(doc.get("profiles") or []))[0]


def counted_labels(doc: dict) -> list[str]:
    """The profile labels that count (a warm-cache export, which make profile records beside each
    cold one, is not a label of its own; a label of another source's exports does not count)."""
    bad = not_counted(doc)
    return [label for label in sorted({k.get("profile", "") for k in doc.get("profiles", []) if k.get("cache") != "warm"})
            if label not in bad]


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
            items.append(Item(label, 0, pts, f"not run: {doc['verdict']} - {doc['message']}", key=f"config{i + 1}"))
            continue
        ok = c["passed"] and not cheat
        err = "-" if c.get("max_err") is None else f"{c['max_err']:.2e}"
        items.append(Item(label, pts if ok else 0, pts,
                          f"max_err {err} (bar {doc['config']['tolerance']:g}): "
                          + ("passed" if c["passed"] else c.get("message") or "failed"), key=f"config{i + 1}"))
    n_hidden = len(hidden) if hidden_count is None else hidden_count
    for i in range(n_hidden):
        c = hidden[i] if i < len(hidden) else None
        ok = bool(c and c["passed"]) and not cheat
        out = "not run" if c is None else ("passed" if c["passed"] else c.get("message") or "failed")
        items.append(Item(f"correctness: hidden config {i + 1}", rubric.hidden_points if ok else 0,
                          rubric.hidden_points, out, visibility="after_published", key=f"hidden{i + 1}"))
    if rubric.performance:
        best = max(p for _, p in rubric.performance)
        row = _largest_row(doc)
        pts, out, mark = 0.0, "no benchmark (the kernel must be correct first)", ""
        if row is not None and benchmark_counts(doc):
            from ..analysis.perf_tier import decide   # a statistic a noisy run cannot flip (grader/analysis/perf_tier.py)
            decision = decide(row, rubric.performance, doc.get("bench_quality"))
            pts, mark = decision.points, decision.boundary
            out = f"{row['student_ms']:.4g} ms vs SDPA {row['sdpa_ms']:.4g} ms (medians); {decision.text}"
        elif cheat:
            out = "withheld: integrity flags need review"
        elif doc.get("backend") == "triton" and not doc.get("bench") and doc.get("verdict") == "ok":
            out = "not timed: checked in Triton's interpreter (no GPU here); a GPU grade times it"
        items.append(Item("performance vs SDPA", pts, best, out, key="performance", mark=mark))
    labels, bad = counted_labels(doc), not_counted(doc)
    if rubric.profile_points:
        out = f"profiles read: {', '.join(labels)}" if labels else "no readable profiler export in profiles/"
        if bad:
            out += f"; not of this submission's kernels, so not counted: {', '.join(sorted(bad))} (see flags)"
        items.append(Item("profiler evidence", rubric.profile_points if labels else 0, rubric.profile_points,
                          out, key="profile"))
    if rubric.before_after_points:
        items.append(Item("profiler evidence: before and after", rubric.before_after_points if len(labels) >= 2 else 0,
                          rubric.before_after_points, f"{len(labels)} labelled profile(s) counted"
                          + (f" ({', '.join(sorted(bad))} not: see flags)" if bad else ""), key="before_after"))
    if rubric.written_points:
        _, answers = split_answers(doc.get("report_md"))
        for key, title in zip(SECTION_KEYS, SECTIONS):
            present = bool(answers.get(key))
            items.append(Item(f"written: {title}", rubric.written_points if present else 0, rubric.written_points,
                              "answered (provisional: full points for a non-empty section until a person "
                              "grades it)" if present else "missing from report.md", key=f"written:{key}"))
    return items


def item_keys(rubric: Rubric, n_public: int, n_hidden: int) -> set[str]:
    """The item names overrides.csv may use for this rubric."""
    return set(item_ranges(rubric, n_hidden)) | {f"config{i + 1}" for i in range(n_public)}


def item_ranges(rubric: Rubric, n_hidden: int) -> dict[str, float]:
    """Item name -> its most points, for the items whose range the rubric fixes (checked in
    overrides.csv before anything is graded)."""
    empty = {"verdict": "ok", "message": "", "config": {"tolerance": 0}}
    return {i.key: i.max_score for i in score_items(empty, rubric, hidden_count=n_hidden) if i.key}


def check_points(o: Override, max_score: float) -> None:
    """OverrideError when an override gives an item points outside 0..max_score."""
    if not 0 <= o.number <= max_score:
        raise OverrideError(f"overrides.csv, line {o.line}: {o.item} takes 0 to {max_score:g} points "
                            f"(got {o.value})")


def is_flagged(doc: dict) -> bool:
    """A grade a person may review: cheat_suspected, or any integrity flag for review or strict
    (warnings are notes, not findings)."""
    return doc.get("verdict") == "cheat_suspected" or any(
        isinstance(f, dict) and f.get("tier") in ("strict", "review") for f in doc.get("flags") or [])


def scored(doc: dict, rubric: Rubric, hidden_count: int | None, chosen: dict[str, Override]) -> list[Item]:
    """The rubric's items with a person's decisions applied (`chosen`: item -> the
    student's override, grader/score/overrides.py). Raises OverrideError for points outside
    an item's range."""
    review = chosen.get("review")
    flagged = is_flagged(doc)
    if review and review.value == "cleared" and doc["verdict"] == "cheat_suspected":
        doc = {**doc, "verdict": doc.get("verdict_without_flags") or doc["verdict"]}
    items = score_items(doc, rubric, hidden_count)
    who = lambda o: f"{o.reviewer or 'a reviewer'}" + (f": {o.reason}" if o.reason else "")  # noqa: E731
    if review and review.value == "confirmed":
        items = [replace(i, score=0, output=f"0: the integrity review confirmed the flags ({who(review)})")
                 for i in items]
    for i, item in enumerate(items):
        o = chosen.get(item.key)
        if o is None:
            continue
        check_points(o, item.max_score)
        items[i] = replace(item, score=o.number, output=f"{o.number:g} of {item.max_score:g}, set by {who(o)} "
                                                        f"(automatic: {item.score:g}; {item.output})")
    if review and (review.value == "confirmed" or flagged):
        # the outcome shown to the student (the returned PDF, Gradescope): a cheat_suspected verdict
        # scored after all says why; who decided it and their reason stay the instructor's (a reason
        # may quote what the flags look for)
        items.append(Item("integrity review", 0, 0, f"{review.value} by the course staff", key="review"))
    if review:   # the instructor's record, kept even where it changed nothing (an unflagged kernel cleared)
        items.append(Item("integrity review (reviewer)", 0, 0, f"{review.value} by {who(review)}",
                          visibility="hidden", key="review:reviewer"))
    if "adjust" in chosen:
        o = chosen["adjust"]
        items.append(Item("manual adjustment", o.number, 0, f"{o.number:+g} points, by {who(o)}", key="adjust"))
    return items


def total(items: list[Item], late: Lateness) -> tuple[float, float]:
    raw = max(0.0, sum(i.score for i in items))
    return round(raw * (1 - late.penalty), 2), round(sum(i.max_score for i in items), 2)


# ---- the gradebook row --------------------------------------------------------------------

def row(doc: dict, items: list[Item], late: Lateness, sizes: list[int], n_public: int, n_hidden: int,
        chosen: dict[str, Override] | None = None, hidden_private: list | None = None) -> dict:
    """One gradebook row. `hidden_private`: the hidden configs' full results (the batch's
    OUT/instructor/<id>.json), whose max_err the student's own results withhold."""
    score, max_score = total(items, late)
    status = doc["verdict"]
    review = (chosen or {}).get("review")
    if review is not None and review.value == "cleared" and status == "cheat_suspected":
        status = doc.get("verdict_without_flags") or status      # as scored; the flags column keeps the flags
    r = {"submission": doc["submission"]["name"], "status": status, "score": score, "max_score": max_score}
    public = [c for c in doc.get("checks", []) if not c.get("hidden")]
    hidden = [c for c in doc.get("checks", []) if c.get("hidden")]
    for i in range(n_public):
        c = public[i] if i < len(public) else {}
        r[f"config{i + 1}_max_err"] = c.get("max_err")
        r[f"config{i + 1}_passed"] = c.get("passed")
    for i in range(n_hidden):
        c = hidden[i] if i < len(hidden) else {}
        full = hidden_private[i] if hidden_private and i < len(hidden_private) else None
        same = isinstance(full, dict) and bool(c) and full.get("name") == c.get("name")
        r[f"hidden{i + 1}_max_err"] = full.get("max_err") if same else c.get("max_err")
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
    r["late_penalty"] = round(late.penalty, 6)      # 3 days at 0.1: 0.3, not 0.30000000000000004
    r["backend"] = doc.get("backend")
    r["message"] = doc.get("message", "")[:300]
    r["overrides"] = "; ".join(o.label() for o in sorted((chosen or {}).values(), key=lambda o: o.line))
    for S in sizes:                          # the slowdown's 95% interval (grader/analysis/confidence.py)
        interval = bench.get(S, {}).get("interval") or {}
        r[f"slowdown_low_S{S}"], r[f"slowdown_high_S{S}"] = interval.get("low"), interval.get("high")
    r["tier_boundary"] = next((i.mark for i in items if i.key == "performance" and i.mark), "")
    return r


def columns(sizes: list[int], n_public: int, n_hidden: int) -> list[str]:
    cols = ["submission", "status", "score", "max_score"]
    cols += [f"config{i + 1}_{x}" for i in range(n_public) for x in ("max_err", "passed")]
    cols += [f"hidden{i + 1}_{x}" for i in range(n_hidden) for x in ("max_err", "passed")]
    cols += [f"{x}_S{S}" for S in sizes for x in ("student_ms", "sdpa_ms", "slowdown")]
    cols += ["compile_seconds", "flags", "late_days", "late_penalty", "backend", "message", "overrides"]
    # added later, at the end, so scripts that read the columns by position keep working
    return cols + [f"slowdown_{x}_S{S}" for S in sizes for x in ("low", "high")] + ["tier_boundary"]


_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def cell(value) -> object:
    """A value as a spreadsheet cell that cannot run: text starting with = + - @ or a
    control character (tab, CR, ...) gets a leading ' (OWASP's rule for CSV injection);
    numbers, including negative ones, stay numbers. A bare CR becomes a newline (the csv
    module quotes fields holding the line terminator, "\n", but not a lone "\r"); every
    other control character, anywhere in the text, is shown as its escape (`safetext`:
    an OSC 52 from a crash tail would write the clipboard of whoever `cat`s the file)."""
    from ..core.safetext import printable
    if value is None:
        return ""
    if not isinstance(value, str) or _NUMBER.fullmatch(value):
        return value
    value = ("'" + value if FORMULA_START.match(value) else value).replace("\r\n", "\n").replace("\r", "\n")
    return printable(value)


def to_csv(rows: list[dict], cols: list[str]) -> str:
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
    w.writeheader()
    for r in rows:
        w.writerow({k: cell(r.get(k)) for k in cols})
    return buf.getvalue()


# ---- Gradescope ---------------------------------------------------------------------------

def gradescope(doc: dict, items: list[Item], late: Lateness) -> dict:
    """Gradescope's autograder results.json: score, tests[], leaderboard."""
    score, _ = total(items, late)
    tests = [{"name": i.name, "score": i.score, "max_score": i.max_score, "output": i.output,
              "visibility": i.visibility} | ({"status": "passed" if i.score >= i.max_score else "failed"}
                                              if i.max_score else {}) for i in items]
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
    return {"score": score, "output": headline(doc), "tests": tests, "leaderboard": leaderboard,
            "visibility": "visible"}


def headline(doc: dict) -> str:
    """Gradescope's top-level output, shown at once: a verdict a hidden config decided waits,
    like that config's own test (`after_published`), for the course to publish the grades."""
    checks = doc.get("checks", [])
    public_ok = all(c.get("passed") for c in checks if not c.get("hidden"))
    decided_hidden = str(doc.get("message", "")).startswith(("hidden ", "a hidden config"))
    if public_ok and decided_hidden and any(c.get("hidden") and not c.get("passed") for c in checks):
        return "verdict: every public config passed; the hidden configs' results appear when the course publishes the grades"
    return f"verdict: {doc['verdict']} - {doc['message']}"


def final_score(items: list[Item], late: Lateness) -> dict:
    """The course's score as the returned PDF shows it: the same items and total as the
    gradebook row and Gradescope's results (hidden configs, a person's decisions and the
    late penalty applied); items Gradescope hides from students are left out."""
    score, max_score = total(items, late)
    return {"score": score, "max": max_score, "late": late.note if late.penalty else "",
            "rows": [{"name": i.name, "score": i.score, "max": i.max_score, "output": clipped(i.output)}
                     for i in items if i.visibility != "hidden"]}


# ---- the student's preview (make grade, report.pdf) --------------------------------------

@dataclass(frozen=True)
class Preview:
    """What the public rubric gives a results document, before what only the course knows."""
    items: tuple[Item, ...]
    score: float
    max_score: float
    may_change: tuple[str, ...]      # what can still move the grade, one sentence each


def preview(doc: dict, rubric: Rubric, deadline: Deadline | None = None) -> Preview | None:
    """The public rubric's items (no hidden configs, no lateness, no review) for one
    results document; None when the config has no [rubric]."""
    items = tuple(score_items(doc, rubric, hidden_count=0))
    if not any(i.max_score for i in items):
        return None
    score, max_score = total(list(items), Lateness(0, 0.0, None, ""))
    notes = []
    if rubric.hidden_points:
        notes.append(f"hidden configs ({rubric.hidden_points:g} points each) are checked when the course grades")
    if doc["verdict"] == "cheat_suspected":
        notes.append("integrity flags score 0 until a person has reviewed them")
    if rubric.written_points:
        notes.append("a person grades the written answers (here: full points for any non-empty section)")
    if deadline is not None and deadline.penalty_per_day:
        notes.append(f"late submissions lose {deadline.penalty_per_day:.0%} per started day after "
                     f"{deadline.due:%Y-%m-%d %H:%M %Z}".rstrip())
    notes.append("the course's own timing run decides the performance tier")
    return Preview(items, score, max_score, tuple(notes))
