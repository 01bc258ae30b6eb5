"""The performance tier of a correct kernel, from a statistic a noisy run cannot flip.

Interference on a timing machine only ever adds time, to some calls more than others: a
busy run's medians move with the load, its fastest calls hardly do (the reason `timeit`
reports the minimum). So the tier comes from the ratio of the fastest calls, yours over
SDPA's, both timed in the same interleaved rounds (`best` below). The median ratio is the
cross-check: when the two fall in different tiers the run could not decide between them,
the item says so, and the bench stage's timing-quality signal (`bench_quality`, when the
results have it) says whether the machine was busy. Pure functions of a results row.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Decision:
    points: float
    tier: float | None              # max_slowdown of the tier met; None: slower than every tier
    best: float                     # slowdown of the fastest calls: the statistic the tier comes from
    median: float | None            # slowdown of the medians (the headline figure), the cross-check
    decided: bool                   # both statistics fall in the same tier
    text: str                       # one line for the gradebook and the student


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


def decide(row: dict, tiers: tuple, quality: dict | None = None) -> Decision:
    """The tier of one benchmark row (results JSON `bench` entry)."""
    median = row.get("slowdown")
    best = best_slowdown(row)
    if best is None:                                 # results without the spread: the median only
        best = median
    found = tier_of(best, tiers)
    other = tier_of(median, tiers) if median is not None else found
    decided = found == other
    name = lambda t: f"tier <= {t[0]:g}x" if t else "slower than every tier"  # noqa: E731
    text = (f"S={row['S']}: fastest calls {best:.2f}x SDPA" + (f", medians {median:.2f}x" if median else "")
            + f"; {name(found)}")
    if best_slowdown(row) is None:
        text += " (medians only: these results record no spread)"
    elif not decided:
        busy = (quality or {}).get("status") == "noisy"
        text += (f" by the fastest calls; the medians say {name(other)}: this run could not decide between "
                 f"them ({'the machine was busy while timing' if busy else 'the timings spread widely'}); "
                 "grade again on a quiet machine to settle it")
    return Decision(points=found[1] if found else 0.0, tier=found[0] if found else None, best=best,
                    median=median, decided=decided, text=text)
