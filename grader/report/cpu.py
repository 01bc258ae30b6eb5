"""The report's CPU evidence: the CPU profiler's labelled runs (grader/evidence/cpu_profile.py) and
the grade's own CPU roofline, each point placed with its own traffic model.

A run's model (naive or fused) is the one `make profile` recorded (MODEL=, else from the
label), unless report.md declares it in its front matter: `profile before: naive`. The
grade's own kernel is placed with `kernel: naive|fused` from the front matter, else with
the fused count (a lower bound on its traffic), and the report says which.
"""
from __future__ import annotations

from pathlib import Path

from ..evidence.cpu_profile import MODELS, model_cost, placed


def declared_models(front: dict) -> dict:
    """{label: model} declared in report.md's front matter (`profile <label>: naive|fused`)."""
    return {k.split(None, 1)[1]: v for k, v in front.items()
            if k.startswith("profile ") and len(k.split(None, 1)) == 2 and v in MODELS}


def _labels(records: list) -> list[str]:
    from .profiles import profile_labels
    return profile_labels(records)


def cpu_evidence(records: list, front: dict, build: Path) -> dict | None:
    """Tables, before/after and roofline of the CPU profiler's records; None without any."""
    if not records:
        return None
    from ..analysis.roofline import Ceilings, Point, chart
    declared = declared_models(front)
    runs = [{**r, **placed(r, declared.get(r["profile"], r["model"]))} for r in records]
    f = lambda x, spec: "-" if x is None else format(x, spec)  # noqa: E731
    rows = [{"label": r["profile"], "S": r["S"], "model": r["model"], "ms": f"{r['median_ms']:.3f}",
             "gflops": f"{r['flop_per_s'] / 1e9:.2f}", "ai": f"{r['ai_dram']:.2f}",
             "from": f"{r['flops_from']} / {r['bytes_from']}", "roof": f(r["pct_of_roof"], ".0f"),
             "bound": r["bound"] or "-"} for r in runs]
    labels = _labels(runs)
    first = runs[0]
    points = [Point(f"{r['profile']} S={r['S']}", r["model"], "counters" if r["counted_bytes"] else "model",
                    r["ai_dram"], r["flop_per_s"]) for r in runs]
    svg = None
    if first.get("peak_flop_per_s") and first.get("dram_bytes_per_s"):
        ceilings = Ceilings(f"{first['cpu']} ({first['threads']} threads)", first["peak_flop_per_s"],
                            {"DRAM": first["dram_bytes_per_s"]}, first["ceilings_source"])
        chart(ceilings, points, build / "cpu_profile_roofline.svg",
              title=f"Your runs on the CPU roofline: {ceilings.device}")
        svg = "cpu_profile_roofline.svg"
    return {"rows": rows, "svg": svg, "before_after": _before_after(runs, labels) if len(labels) >= 2 else None,
            "notes": _conditions(runs, labels) + _model_notes(runs, declared),
            "counter_note": first["counter_note"]}


def _before_after(runs: list, labels: list) -> dict | None:
    """The first and last label at the largest S both measured: time, FLOP/s, AI, bytes."""
    a_label, b_label = labels[0], labels[-1]
    common = {r["S"] for r in runs if r["profile"] == a_label} & {r["S"] for r in runs if r["profile"] == b_label}
    if not common:
        return None
    S = max(common)
    a = next(r for r in runs if r["profile"] == a_label and r["S"] == S)
    b = next(r for r in runs if r["profile"] == b_label and r["S"] == S)
    ratio = lambda x, y: f"{y / x:.2f}x"  # noqa: E731
    return {"labels": (a_label, b_label), "S": S, "rows": [
        {"what": "time per call (ms, median)", "before": f"{a['median_ms']:.3f}", "after": f"{b['median_ms']:.3f}",
         "change": ratio(a["median_ms"], b["median_ms"])},
        {"what": "GFLOP/s", "before": f"{a['flop_per_s'] / 1e9:.2f}", "after": f"{b['flop_per_s'] / 1e9:.2f}",
         "change": ratio(a["flop_per_s"], b["flop_per_s"])},
        {"what": "bytes per call (MB)", "before": f"{a['bytes'] / 1e6:.2f} ({a['bytes_from']})",
         "after": f"{b['bytes'] / 1e6:.2f} ({b['bytes_from']})", "change": ratio(a["bytes"], b["bytes"])},
        {"what": "AI (FLOP/byte): the move right on the roofline", "before": f"{a['ai_dram']:.2f}",
         "after": f"{b['ai_dram']:.2f}", "change": ratio(a["ai_dram"], b["ai_dram"])},
    ]}


def _busy(r: dict) -> bool:
    """The machine was busy: a 1-minute load above half its cores while measuring."""
    loads = [x for x in (r.get("load_before"), r.get("load_after")) if x is not None]
    return bool(loads) and max(loads) > 0.5 * max(r.get("cores") or 1, 1)


def _conditions(runs: list, labels: list) -> list[str]:
    """One line per difference in the conditions the labelled runs were measured under."""
    if len(labels) < 2:
        return []
    by = {lab: [r for r in runs if r["profile"] == lab] for lab in labels}
    notes = []
    for what, key in (("on different CPUs", "cpu"), ("with different thread counts", "threads")):
        values = {lab: rs[0][key] for lab, rs in by.items()}
        if len(set(values.values())) > 1:
            notes.append(f"the runs were measured {what} ({', '.join(f'{k}: {v}' for k, v in values.items())}): "
                         "their times do not compare")
    busy = [lab for lab, rs in by.items() if any(_busy(r) for r in rs)]
    if busy and len(busy) < len(by):
        notes.append(f"{' and '.join(busy)} ran while the machine was busy (load above half its cores) and the "
                     "other run(s) did not: profile both again on a quiet machine before comparing times")
    elif busy:
        notes.append("every run was measured while the machine was busy (load above half its cores): the times "
                     "are slower than the machine can do; close other programs and profile again")
    counted = {lab: bool(rs[0]["counted_bytes"]) for lab, rs in by.items()}
    if len(set(counted.values())) > 1:
        notes.append("only some runs had the CPU's counters: their bytes come from different sources")
    return notes


def _model_notes(runs: list, declared: dict) -> list[str]:
    out = []
    for label in dict.fromkeys(r["profile"] for r in runs):
        r = next(x for x in runs if x["profile"] == label)
        if not r["counted_bytes"]:
            why = "declared in report.md" if label in declared else "recorded by make profile"
            out.append(f"{label}: bytes from the {r['model']} model ({why}); no counter measured them")
    return out


def bench_points(bench: list, student_model: str | None) -> tuple[list, str]:
    """(points, sentence) of the grade's CPU roofline: the references with their own models,
    yours with `student_model` (report.md's `kernel:`), else the fused count."""
    from ..analysis.roofline import Point, cpu_points
    points = [p for p in cpu_points(bench) if p.group != "student" or student_model in (None, "fused")]
    if student_model == "naive":
        for row in bench:
            if row.get("student_ms"):
                flops, moved = model_cost("naive", row["B"], row["H"], row["S"], row["D"])
                points.append(Point(f"student S={row['S']}", "student", "model", flops / moved,
                                    flops / (row["student_ms"] * 1e-3)))
    if student_model:
        return points, f"for yours, the {student_model} count (report.md says kernel: {student_model})"
    return points, ("for yours, the fused count: a lower bound on your traffic (write 'kernel: naive' in "
                    "report.md's front matter if yours is the naive kind)")
