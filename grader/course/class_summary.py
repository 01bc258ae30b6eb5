"""summary.pdf of a batch: verdicts, pass rate per config, speedup distribution, fastest
kernels, flagged and failed submissions, the instructor's overrides and the most similar
pairs of kernels. Computed from the gradebook rows and the results documents; laid out by
report_template/summary.typ.j2."""
from __future__ import annotations

import statistics
from collections import Counter
from datetime import date
from pathlib import Path

from ..core.config import PRISTINE_DIR, Config
from ..report.pdf import format_ms, lit, render_template

TEMPLATE = PRISTINE_DIR / "attention.py"   # the handout's template, as shipped


def _chart(speedups: list[float], ref: float | None, path: Path) -> None:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    fig, ax = plt.subplots(figsize=(6.4, 2.8))
    lo, hi = min(speedups + [ref or 1, 1]) / 1.5, max(speedups + [ref or 1, 1]) * 1.5
    bins = np.geomspace(lo, hi, 25)
    ax.hist(speedups, bins=bins, color="#4a78c2", edgecolor="white")
    ax.set_xscale("log")
    ax.axvline(1.0, color="black", lw=1, ls="--", label="SDPA")
    if ref:
        ax.axvline(ref, color="#cf222e", lw=1.2, label="reference fused")
    ax.set_xlabel("speedup over SDPA (higher is faster)")
    ax.set_ylabel("submissions")
    ax.legend(frameon=False, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, format="svg")
    plt.close(fig)


def _integrity(flags: str) -> list[str]:
    """The integrity flags of a gradebook row (lateness bookkeeping left out)."""
    return [f for f in flags.split(";") if f and not f.endswith(":no_timestamp")]


def similar_pairs(docs: list[dict]) -> list:
    """Every pair of kernels by similarity (grader/course/similarity.py), the template's lines ignored."""
    from .similarity import class_sources, compare, template_hashes
    return compare(class_sources(docs), template_hashes(TEMPLATE) if TEMPLATE.is_file() else {})


def context(rows: list[dict], docs: list[dict], cfg: Config, build: Path, n_hidden: int | None = None,
            overrides: tuple = ()) -> dict:
    n = len(rows)
    verdicts = Counter(r["status"] for r in rows)
    scores = [r["score"] for r in rows]
    configs = []
    for i, shape in enumerate(cfg.configs):
        ran = [r for r in rows if r.get(f"config{i + 1}_passed") not in (None, "")]
        passed = sum(1 for r in ran if r[f"config{i + 1}_passed"] is True)
        configs.append({"name": f"config {i + 1}", "shape": str(shape), "passed": passed, "ran": len(ran),
                        "rate": f"{passed / len(ran):.0%}" if ran else "-"})
    for i in range(len(cfg.hidden_configs) if n_hidden is None else n_hidden):
        ran = [r for r in rows if r.get(f"hidden{i + 1}_passed") not in (None, "")]
        passed = sum(1 for r in ran if r[f"hidden{i + 1}_passed"] is True)
        configs.append({"name": f"hidden {i + 1}", "shape": "hidden", "passed": passed, "ran": len(ran),
                        "rate": f"{passed / len(ran):.0%}" if ran else "-"})
    S = max(s.S for s in cfg.bench_shapes)
    timed = [(d["submission"]["name"], b) for d in docs if d["verdict"] == "ok"
             for b in d.get("bench", []) if b["S"] == S and b.get("slowdown")]
    timed.sort(key=lambda t: t[1]["slowdown"])
    refs = [b for d in docs for b in d.get("bench", []) if b["S"] == S and b.get("fused_ms") and b.get("sdpa_ms")]
    ref_speedup = refs[0]["sdpa_ms"] / refs[0]["fused_ms"] if refs else None
    chart = None
    if timed:
        _chart([1 / b["slowdown"] for _, b in timed], ref_speedup, build / "speedups.svg")
        chart = lit("speedups.svg")
    devices = sorted({(d.get("system") or {}).get("gpu") or (d.get("system") or {}).get("cpu") or "" for d in docs} - {""})
    return {
        "n": n, "date": date.today().isoformat(), "devices": ", ".join(devices) or "-",
        "mean_score": f"{statistics.mean(scores):.1f}" if scores else "-",
        "median_score": f"{statistics.median(scores):.1f}" if scores else "-",
        "max_score": f"{rows[0]['max_score']:g}" if rows else "-", "n_ok": verdicts.get("ok", 0),
        "n_flagged": sum(1 for r in rows if _integrity(r["flags"])),
        "n_late": sum(1 for r in rows if r["late_days"]),
        "n_no_time": sum(1 for r in rows if "no_timestamp" in r["flags"]),
        "verdicts": [{"name": v, "count": c, "share": f"{c / n:.0%}"} for v, c in verdicts.most_common()],
        "configs": configs, "S": S, "chart": chart,
        "ref_speedup": f"{ref_speedup:.2f}x" if ref_speedup else "-",
        "fastest": [{"rank": i + 1, "id": sid, "ms": format_ms(b["student_ms"]), "sdpa": format_ms(b["sdpa_ms"]),
                     "speedup": f"{1 / b['slowdown']:.2f}x"} for i, (sid, b) in enumerate(timed[:10])],
        "flagged": [{"id": r["submission"], "verdict": r["status"] + (" (review cleared)" if "review=cleared"
                                                                       in (r.get("overrides") or "") else ""),
                     "flags": ", ".join(_integrity(r["flags"]))} for r in rows if _integrity(r["flags"])],
        "failures": [{"id": r["submission"], "verdict": r["status"], "message": r["message"][:160]}
                     for r in rows if r["status"] != "ok"],
        **_overrides_and_similarity(docs, overrides),
    }


def _overrides_and_similarity(docs: list[dict], overrides) -> dict:
    from .similarity import K_TOKENS, REPORT_ABOVE, WINDOW
    pairs = similar_pairs(docs)
    shown = [p for p in pairs if p.score >= REPORT_ABOVE][:25]
    return {
        "overrides": [{"id": o.student, "item": o.item, "value": o.value, "reviewer": o.reviewer or "-",
                       "reason": o.reason[:160]} for o in overrides],
        "similar": [{"a": p.a, "b": p.b, "kind": p.kind, "score": f"{p.score:.0%}", "shared": p.shared,
                     "lines": f"{p.lines_a[:60]} | {p.lines_b[:60]}"} for p in shown],
        "n_pairs": len(pairs), "similar_above": f"{REPORT_ABOVE:.0%}",
        "similar_min_tokens": WINDOW + K_TOKENS - 1,
    }


def render_summary(rows: list[dict], docs: list[dict], cfg: Config, n_hidden: int | None, out_pdf: Path,
                   overrides: tuple = ()) -> Path:
    """summary.pdf; `n_hidden`: hidden configs graded (None: those of `cfg`)."""
    return render_template("summary.typ.j2", lambda build: context(rows, docs, cfg, build, n_hidden, tuple(overrides)),
                           out_pdf)
