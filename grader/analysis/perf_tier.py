"""The performance tier of a correct kernel, from statistics no single call can move.

The tier comes from the ratio of the medians, yours over SDPA's, both over every timed call
of the interleaved rounds (CPU; on the GPU the median of the round medians): no single
call or round decides it, so a kernel that returns an unwritten tensor on a few calls, or
runs a few calls fast, cannot buy a tier (the fastest call did decide it once, and a kernel
180x slower than SDPA got full points from a few 1.2 µs calls). The fastest calls' ratio is
the cross-check: when the two fall in different tiers the run could not decide between
them, the item says so, and the bench stage's timing-quality signal (`bench_quality`, when
the results have it) says whether the machine was busy (the judge times a noisy size again
before it keeps one). A figure below the physical floor (`floor_ms`: the fastest arithmetic
the assignment allows at the device's peak) is not a time any kernel can take, and the size
scores nothing.

Where the row has the slowdown's 95% interval (grader/analysis/confidence.py: the judge timed more
rounds while it straddled a tier boundary, up to a cap on time), the interval replaces the
fastest calls as the cross-check. An interval still straddling a boundary at the cap is
decided by the stated rule (`boundary_tier`): in the student's favour, by one tier at most,
where the interval is narrow (half-width at most FAVOUR_WIDTH x the precision asked for, the
median that close to the boundary: a kernel that widens its own spread gains nothing), and
marked (`Decision.boundary`) so the gradebook shows it and a person can re-run it.
Pure functions of a results row.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Decision:
    points: float
    tier: float | None              # max_slowdown of the tier met; None: slower than every tier
    best: float                     # slowdown of the fastest calls: the cross-check
    median: float | None            # slowdown of the medians (the headline figure): the tier's statistic
    decided: bool                   # both statistics fall in the same tier
    text: str                       # one line for the gradebook and the student
    boundary: str = ""              # the interval straddled a tier boundary: what the rule did


def tier_of(slowdown: float, tiers: tuple) -> tuple[float, float] | None:
    """The first (fastest) tier (max_slowdown, points) whose bar `slowdown` meets."""
    return next(((m, p) for m, p in sorted(tiers) if slowdown <= m), None)


def best_slowdown(row: dict) -> float | None:
    """Fastest call of yours / fastest call of SDPA's, from the row's timings; None without them."""
    t = row.get("timings") or {}
    mine, sdpa = (t.get(k) or {} for k in ("student", "sdpa"))
    if mine.get("min_ms") and sdpa.get("min_ms"):
        return mine["min_ms"] / sdpa["min_ms"]
    return None


def below_floor(row: dict) -> str | None:
    """Which of the row's figures of the kernel (median, fastest call) is below the physical
    floor `floor_ms`, in words; None when none is (or the row has no floor)."""
    floor = row.get("floor_ms")
    if not floor:
        return None
    mine = (row.get("timings") or {}).get("student") or {}
    figures = {"median": row.get("student_ms"), "fastest call": mine.get("min_ms")}
    low = [f"{name} {ms * 1e3:.1f} µs" for name, ms in figures.items() if ms is not None and ms < floor]
    return ", ".join(low) or None


def decide(row: dict, tiers: tuple, quality: dict | None = None) -> Decision:
    """The tier of one benchmark row (results JSON `bench` entry)."""
    median = row.get("slowdown")
    best = best_slowdown(row)
    name = lambda t: f"tier <= {t[0]:g}x" if t else "slower than every tier"  # noqa: E731
    low = below_floor(row)
    if low:
        return Decision(points=0.0, tier=None, best=best or median, median=median, decided=True, text=(
            f"S={row['S']}: {low}, below the physical floor of {row['floor_ms'] * 1e3:.1f} µs (this shape's "
            "FLOPs at the device's fastest allowed peak): no kernel computes that fast; no points"))
    if median is None:                               # results without a median: the fastest calls
        median = best
    interval = row.get("interval")
    if median is not None and isinstance(interval, dict) and interval.get("low") and interval.get("high"):
        return _with_interval(row, median, best, interval, tiers)
    found = tier_of(median, tiers)
    other = tier_of(best, tiers) if best is not None else found
    decided = found == other
    text = (f"S={row['S']}: medians {median:.2f}x SDPA" + (f", fastest calls {best:.2f}x" if best else "")
            + f"; {name(found)}")
    if best is None:
        text += " (medians only: these results record no spread)"
    elif not decided:
        busy = (quality or {}).get("status") == "noisy"
        text += (f" by the medians; the fastest calls say {name(other)}: this run could not decide between "
                 f"them ({'the machine was busy while timing' if busy else 'the timings spread widely'}); "
                 "grade again on a quiet machine to settle it")
    return Decision(points=found[1] if found else 0.0, tier=found[0] if found else None,
                    best=best if best is not None else median, median=median, decided=decided, text=text)


def boundary_tier(median: float, low: float, tiers: tuple) -> tuple[float, float] | None:
    """The rule at a tier boundary the interval still straddles: the best tier the
    interval reaches (its low end's), at most one tier better than the median's."""
    ordered = sorted(tiers)
    found, better = tier_of(median, tiers), tier_of(low, tiers)
    if better == found:
        return found
    i = ordered.index(found) if found else len(ordered)
    return ordered[max(ordered.index(better), i - 1)]


def _with_interval(row: dict, median: float, best: float | None, interval: dict, tiers: tuple) -> Decision:
    from .confidence import FAVOUR_WIDTH
    name = lambda t: f"tier <= {t[0]:g}x" if t else "slower than every tier"  # noqa: E731
    low, high = interval["low"], interval["high"]
    found = tier_of(median, tiers)
    span = f"95% interval {low:.2f}-{high:.2f}x over {interval.get('rounds', '?')} rounds"
    text = f"S={row['S']}: medians {median:.2f}x SDPA ({span}); {name(found)}"
    keep = dict(best=best if best is not None else median, median=median)
    if tier_of(low, tiers) == tier_of(high, tiers):
        return Decision(points=found[1] if found else 0.0, tier=found[0] if found else None, decided=True,
                        text=text, **keep)
    chosen = boundary_tier(median, low, tiers)
    if chosen == found:                      # only the slow end crosses: no favour to weigh
        return Decision(points=found[1] if found else 0.0, tier=found[0] if found else None, decided=True,
                        text=text + f"; the interval's slow end reaches {name(tier_of(high, tiers))}: "
                        "scored by the median", **keep)
    edge = chosen[0]                         # the boundary the favour crosses: the median is above it
    width = (high - low) / 2 / median
    near = width <= FAVOUR_WIDTH * (interval.get("target") or 0.01) and median - edge <= width * median
    why = ("max_reps ended the timing" if interval.get("stopped_by") == "max_reps" else
           "the cap on timing per size was reached" if interval.get("cap_hit") else "timing stopped")
    if not near:
        mark = (f"S={row['S']}: the interval {low:.2f}-{high:.2f}x reaches across the {edge:g}x boundary but is "
                f"too wide (±{width:.1%}) to decide by; scored {name(found)} by the median")
        return Decision(points=found[1] if found else 0.0, tier=found[0] if found else None, decided=False,
                        text=text + f"; the interval reaches {name(chosen)} but is too wide to count ({why})",
                        boundary=mark, **keep)
    mark = (f"S={row['S']}: the interval {low:.2f}-{high:.2f}x straddles the {edge:g}x boundary ({why}); "
            f"scored {name(chosen)}, in the student's favour")
    text = (f"S={row['S']}: medians {median:.2f}x SDPA ({span}), across the {edge:g}x tier boundary ({why}): "
            f"scored {name(chosen)}, in your favour; a re-run on a quiet machine settles it")
    return Decision(points=chosen[1] if chosen else 0.0, tier=chosen[0] if chosen else None, decided=False,
                    text=text, boundary=mark, **keep)
