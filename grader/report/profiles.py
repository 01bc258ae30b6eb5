"""The report's arithmetic-intensity and profiler figures (grader/report/pdf.py lays them out).

From a results document: the AI model's table at the benchmark sizes (grader/analysis/ai_model.py,
one FLOP convention), the Speed-of-Light table with Nsight Compute's own bottleneck
verdict and the unit it names (grader/analysis/ncu.py), the cold and the warm-pipeline export of
`make profile` side by side, the model next to the measured bytes and FLOPs (reads against
reads, writes against writes), before/after of the student's kernels, and the roofline
points (cold export only). Everything here is formatted text; nothing is measured.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..core.typsttext import T, lit

WARM_SUFFIX = "_warm"     # grader/evidence/profile.py: the warm export's label is `<label>_warm`


def _f(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def _mb(x) -> str:
    return "-" if x is None else f"{x / 1e6:.2f}"


def short_kernel(name: str) -> str:
    return re.sub(r"^void\s+|<unnamed>::|\(anonymous namespace\)::", "", re.sub(r"\(.*", "", name))[:48]


def ai_context(shape: dict, sizes: list[int]) -> dict:
    """The model's table and the sentences about its limits, at the benchmark shape."""
    from ..analysis.ai_model import fused, limits, naive, total, trend
    B, H, D = shape["B"], shape["H"], shape["D"]
    rows = []
    for S in sizes:
        ks = naive(B, H, S, D)
        for k in ks + [total("naive (total)", ks), fused(B, H, S, D)]:
            rows.append({"S": S, "kernel": k.name, "gflop": f"{k.flops / 1e9:.4f}",
                         "other": f"{sum(k.other_ops.values()) / 1e9:.4f}", "rd": _mb(k.reads), "wr": _mb(k.writes),
                         "ai": f"{k.ai:.2f}"})
    lim, t = limits(D), trend(sizes, B, H, D)
    return {"ai_rows": rows, "ai_B": B, "ai_H": H, "ai_D": D,
            "ai_trend": T(f"from {t['naive_ai'][0]:.2f} at $S = {t['S'][0]}$ to {t['naive_ai'][1]:.2f} at "
                          f"$S = {t['S'][1]}$"),
            "ai_limits": {"naive": f"{lim['naive']:g}", "kernels": f"{lim['scores']:g}",
                          "softmax_ops": f"{lim['softmax_ops_per_byte']:.3g}"}}


def profile_labels(profiles: list) -> list[str]:
    """The labels of the cold profiles, in the order they are compared: `before` first, `after` last."""
    cold = [p for p in profiles if p.get("cache") != "warm"]
    return sorted({p.get("profile", "") for p in cold}, key=lambda l: (l != "before", l == "after", l))


def shown_profiles(profiles: list) -> list:
    """What the SOL table and the roofline show (cold exports): the newest label's whole
    export (the student and the references), plus the student's kernels of each earlier
    label, their range named after the label (`before_student_S1024`). Every `make profile`
    export holds the references too; showing them once keeps the tables and the model
    comparison right."""
    cold = [p for p in profiles if p.get("cache") != "warm"]
    labels = profile_labels(cold)
    if len(labels) < 2:
        return cold
    shown = [p for p in cold if p.get("profile", "") == labels[-1]]
    for label in labels[:-1]:
        mine = [p for p in cold if p.get("profile", "") == label]
        student = [p for p in mine if (p.get("nvtx") or "").startswith("student")]
        shown += [dict(p, nvtx=f"{label}_{p['nvtx']}") if p.get("nvtx") else p for p in (student or mine)]
    return shown


def warm_profiles(profiles: list, label: str | None) -> list:
    """The warm-pipeline export that goes with the cold export `label` (`<label>_warm`)."""
    return [p for p in profiles if p.get("cache") == "warm"
            and re.sub(f"{WARM_SUFFIX}$", "", p.get("profile", "")) == (label or "")]


def _student_totals(kernels: list, shape: tuple | None = None, model_flops_always: bool = False) -> dict:
    """Time, DRAM %, AI of the student's kernels in one profile, summed over its kernels.
    `make profile` exports: the `student_S<S>` ranges at the largest S; an export of the
    student's own program (no such ranges): all its kernels. With `shape` = (B, H, D), a
    student range whose FP32 counters missed most of the model's FLOPs (tensor cores,
    grader/analysis/roofline.py) takes the model's FLOPs for its AI; `model_flops_always`: the model's
    FLOPs whatever the counters saw (the other side of a comparison ran on tensor cores)."""
    from ..analysis.ai_model import fused
    from ..analysis.roofline import COUNTED_SHARE_MIN
    student = [p for p in kernels if (p.get("nvtx") or "").startswith("student")]
    largest = None
    if student:
        largest = max(int(re.sub(r"\D", "", p["nvtx"].split("_S")[-1]) or 0) for p in student)
        student = [p for p in student if p["nvtx"].endswith(f"_S{largest}")]
    ks = student or kernels
    us = [p["duration_us"] for p in ks]
    if None in us or not us:
        return {}
    dram_pct = [p["dram_pct"] for p in ks]
    flop, dram, l2, l2_in = ([p.get(k) for p in ks] for k in ("flop", "dram_bytes", "l2_bytes", "l2_delivered_bytes"))
    model_flops = False
    if shape and largest and None not in flop:
        model = fused(shape[0], shape[1], largest, shape[2]).flops
        if model_flops_always or sum(flop) < COUNTED_SHARE_MIN * model:
            flop, model_flops = [model], True
    return {"us": sum(us), "kernels": len(ks), "model_flops": model_flops,
            "dram_pct": None if None in dram_pct else sum(d * u for d, u in zip(dram_pct, us)) / sum(us),
            "ai_dram": None if None in flop or None in dram or not sum(dram) else sum(flop) / sum(dram),
            "ai_l2": None if None in flop or None in l2 or not sum(l2) else sum(flop) / sum(l2),
            "ai_l2_delivered": None if None in flop or None in l2_in or not sum(l2_in) else sum(flop) / sum(l2_in)}


def compare_profiles(profiles: list, shape: tuple | None = None) -> dict | None:
    """Before/after of the student's kernels when profiles/ holds two labelled cold profiles
    (`before` first if present): time, DRAM %, and the move on the roofline (AI)."""
    labels = profile_labels(profiles)
    if len(labels) < 2:
        return None
    cold = [p for p in profiles if p.get("cache") != "warm"]
    first, last = labels[0], labels[-1]
    before = [p for p in cold if p.get("profile", "") == first]
    after = [p for p in cold if p.get("profile", "") == last]
    a, b = _student_totals(before, shape), _student_totals(after, shape)
    if not a or not b:
        return None
    marked = [lab for lab, t in ((first, a), (last, b)) if t["model_flops"]]
    if len(marked) == 1:
        # one FLOP convention on both sides: where one side's counters miss its tensor-core
        # work, the other side's AI is taken from the model's FLOPs too
        a = _student_totals(before, shape, model_flops_always=True)
        b = _student_totals(after, shape, model_flops_always=True)
    ratio = lambda x, y: "-" if not x or not y else f"{y / x:.2f}x"  # noqa: E731
    # both L2 counts, each compared with itself: what the SMs received ('-' on a side whose export
    # lacks it) and L2's output (ncu's L2 roofline, a line multicast to many SMs counted once: it
    # flatters a tiled kernel, and it is all an older export has)
    l2_rows = [("ai_l2_delivered", "L2→SM")] if a["ai_l2_delivered"] or b["ai_l2_delivered"] else []
    l2_rows.append(("ai_l2", "L2 out"))
    both = a["model_flops"] and b["model_flops"]
    modelled = [lab for lab, t in ((first, a), (last, b)) if t["model_flops"]]
    flops_note = (f", the model's FLOPs on both sides: {' and '.join(marked)} on tensor cores" if both and marked
                  else f"; model FLOPs for {' and '.join(modelled)} (tensor cores)" if modelled else "")
    return {"labels": (first, last), "rows": [
        {"what": "time (sum of the kernels, µs)", "before": _f(a["us"], ".2f"), "after": _f(b["us"], ".2f"),
         "change": ratio(a["us"], b["us"])},
        {"what": "kernels", "before": str(a["kernels"]), "after": str(b["kernels"]), "change": ""},
        {"what": "DRAM % (time-weighted)", "before": _f(a["dram_pct"], ".2f"), "after": _f(b["dram_pct"], ".2f"),
         "change": "-" if a["dram_pct"] is None or b["dram_pct"] is None else f"{b['dram_pct'] - a['dram_pct']:+.2f} points"},
        {"what": f"AI at DRAM (FLOP/byte{flops_note})", "before": _f(a["ai_dram"], ".1f"), "after": _f(b["ai_dram"], ".1f"),
         "change": ratio(a["ai_dram"], b["ai_dram"])},
    ] + [{"what": f"AI at L2, {name} (FLOP/byte{flops_note})", "before": _f(a[key], ".2f"), "after": _f(b[key], ".2f"),
          "change": ratio(a[key], b[key])} for key, name in l2_rows]}


def _unit(p: dict) -> str:
    from ..analysis.ncu import KernelProfile, unit_text
    return unit_text(KernelProfile.from_json(p))


def cache_rows(cold: list, warm: list) -> list[dict]:
    """The cold and the warm export of the same kernels side by side (matched by range and
    kernel name); warm columns are '-' where there is no warm export."""
    by = {(p.get("nvtx"), p["kernel"]): p for p in warm}
    rows = []
    for p in cold:
        if not p.get("nvtx"):
            continue
        w = by.get((p.get("nvtx"), p["kernel"]), {})
        rows.append({"range": p["nvtx"], "kernel": short_kernel(p["kernel"]),
                     "cold_us": _f(p.get("duration_us"), ".2f"), "cold_rd": _mb(p.get("dram_bytes_read")),
                     "cold_wr": _mb(p.get("dram_bytes_write")), "warm_us": _f(w.get("duration_us"), ".2f"),
                     "warm_rd": _mb(w.get("dram_bytes_read")), "warm_wr": _mb(w.get("dram_bytes_write"))})
    return rows


def profiler_context(doc: dict, build: Path, shape: tuple) -> dict:
    """The profiler section: SOL table, cold vs warm, model vs measured, before/after, roofline."""
    from ..analysis import roofline
    from ..analysis.ai_model import compare, explain_compare
    from ..analysis.ncu import BOUND_RULE, KernelProfile
    all_profiles = [p for p in doc.get("profiles", []) if not p.get("tool_kernel") and p.get("profiler") != "cpu"]
    profiles = shown_profiles(all_profiles)
    labels = profile_labels(all_profiles)
    warm = warm_profiles(all_profiles, labels[-1] if labels else None)
    sol_rows = [{"range": p.get("nvtx") or p.get("profile", ""), "kernel": short_kernel(p["kernel"]),
                 "us": _f(p["duration_us"], ".2f"), "mem": _f(p["memory_pct"], ".1f"),
                 "sm": _f(p["compute_pct"], ".1f"), "dram": _f(p["dram_pct"], ".2f"),
                 "bound": p["bound"] or "-", "unit": _unit(p)} for p in profiles]
    out = {"sol_rows": sol_rows, "bound_rule": BOUND_RULE, "roofline": None, "measured_rows": [],
           "measured_notes": [], "before_after": None, "roofline_notes": [], "cache_rows": [],
           "has_warm": bool(warm), "newest_label": labels[-1] if labels else ""}
    if not profiles:
        return out
    out["cache_rows"] = cache_rows([p for p in profiles if p.get("profile", "") == out["newest_label"]], warm)
    kps = [KernelProfile.from_json(p) for p in profiles + warm]
    rows = compare(kps, *shape)
    out["measured_rows"] = [{"cache": r["cache"], "range": r["range"], "kernels": r["kernels"],
                             "rd": _mb(r["dram_read"]), "wr": _mb(r["dram_write"]), "l2": _mb(r.get("l2_delivered")),
                             "l2_out": _mb(r["l2_read"]),
                             "naive": f"{_mb(r['naive_read'])} / {_mb(r['naive_write'])}",
                             "fused": f"{_mb(r['fused_read'])} / {_mb(r['fused_write'])}",
                             "ncu_gflop": _f(None if r["measured_flop"] is None else r["measured_flop"] / 1e9, ".4f"),
                             "model_gflop": f"{r['model_flops'] / 1e9:.4f}"} for r in rows]
    out["measured_notes"] = explain_compare(rows)
    out["before_after"] = compare_profiles(all_profiles, shape)
    cold_kps = roofline.of_cache(kps)
    tc = roofline.tensor_core_ranges(cold_kps, *shape)
    if tc:
        seen = ", ".join(f"{name} {counted / model:.0%}" for name, (counted, model) in tc.items())
        out["roofline_notes"].append(f"the FP32 counters saw only part of the model's FLOPs in {seen}: those "
                                     "kernels multiply on tensor cores, which the counters do not count. Their "
                                     "roofline points use the model's FLOPs over the range's measured time and bytes")
    pts = roofline.gpu_points(cold_kps, shape)
    if pts:
        ceilings = roofline.gpu_ceilings(cold_kps)
        bw = ceilings.bandwidth_bytes_per_s
        if roofline.L2_IN in bw and roofline.L2_OUT in bw and (fastest := roofline.fastest_l2_delivery(cold_kps)):
            out["roofline_notes"].append(
                f"two L2 roofs under the L2→SM points: L2 out ({bw[roofline.L2_OUT] / 1e12:.1f} TB/s), "
                f"{roofline.ROOFS[roofline.L2_OUT]}; L2→SM ({bw[roofline.L2_IN] / 1e12:.1f} TB/s), "
                f"{roofline.ROOFS[roofline.L2_IN]}. The fastest delivery in these exports: "
                f"{fastest[0] / 1e12:.2f} TB/s ({roofline.kernel_label(fastest[1])})")
        roofline.chart(ceilings, pts, build / "roofline.svg")
        out["roofline"] = lit("roofline.svg")
    return out
