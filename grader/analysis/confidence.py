"""How precisely the headline slowdown is known, and how long to keep timing for it.

The headline is a ratio, the median of the kernel's times over the median of SDPA's. The
two are timed interleaved, one call of each per round (CPU) or one batch of calls per round
(GPU), so a round is a pair: what slowed the machine during a round slowed both. The
interval resamples whole rounds (a paired percentile bootstrap, `RESAMPLES` draws, a fixed
seed: the same samples give the same interval) and recomputes the ratio of the medians on
each draw; its 2.5th and 97.5th percentiles bound the 95% interval.

The stopping rule (`StoppingRule`): after the configured minimum (`min_reps` rounds and
`rep_ms` of timing per kernel), rounds go on while the interval's half-width is above the
precision asked for (`[benchmark] precision`, 1% of the ratio) or the interval straddles a
boundary of the rubric's performance tiers, up to `precision_cap_s` seconds of timing per
size (or `max_reps` rounds); the result says when the cap ended it. A tier the interval
still straddles then is decided by `boundary_tier` (grader/analysis/perf_tier.py): in the student's
favour by one tier at most, only where the interval is narrow (FAVOUR_WIDTH), and the
gradebook marks it.

Everything here is a pure function of the judge's samples, so the tests drive it with
synthetic timing data (tests/analysis/test_confidence.py).
"""
from __future__ import annotations

from dataclasses import dataclass, replace

LEVEL = 0.95
RESAMPLES = 2000
# draws x rounds held in memory at once, at most: beyond it fewer draws (not below
# MIN_RESAMPLES). 2000 draws of 5000 rounds took 2 s and 330 MiB on the 2-core machine.
MAX_ELEMENTS = 1_000_000
MIN_RESAMPLES = 400
# The rule at a tier boundary favours the student only where the interval is narrow: its
# half-width at most FAVOUR_WIDTH x the precision asked for, and the median that close to the
# boundary. A wide interval is noise (the machine's, or the kernel's own: a kernel controls
# the spread of what it reports) and earns nothing: the median's tier stands.
FAVOUR_WIDTH = 2.0
SEED = 20261125
# Seconds of timing per size the stopping rule may spend in all ([benchmark] precision_cap_s
# sets both): on the GPU a round of S = 1024 costs ~ 5 ms and 10 s buys ~ 1000 rounds; on
# the CPU a round of the references at S = 1024 costs 100-300 ms on 2 cores and its timings
# spread 10-22%, so no cap a student would wait for reaches 1%: the cap is short and the
# interval says how wide it stayed.
CAP_S = {"cuda": 10.0, "cpu": 4.0}
PRECISION = 0.01           # half-width / ratio asked for ([benchmark] precision)
# GPU: requests of the harness's rounds (each with its own input pool) before the interval may
# settle. Measured on an H100 (fused.cu, 5 grades): one request's 10 rounds gave ±0.2%, yet
# the grades' slowdowns spread 1.3%: what varies between requests must be in the interval.
MIN_REQUESTS = 5
# What varies between grades and never within one (a process's own state: where its buffers
# and SDPA's workspace landed, the module as loaded): a standard deviation, as a fraction of
# the ratio, added in quadrature to the interval (`run_to_run`). Measured on the H200
# (2026-11-27, `make fidelity`, 5 grades of reference/fused.cu): at S = 512 the grades'
# slowdowns had a standard deviation of ~0.27% where each grade's own interval implied
# ~0.17%, so ~0.21% came from the grade itself, and no grade's interval held every other
# grade's slowdown; 0.25% covers it. The CPU's timings spread 10-22% per round and its
# intervals are wide already: nothing is added there. `make fidelity` prints the part it
# measures beside this one, so the next run checks it.
RUN_TO_RUN = {"cuda": 0.0025, "cpu": 0.0}


@dataclass(frozen=True)
class Interval:
    """The headline ratio and its 95% interval, from `rounds` paired rounds."""
    ratio: float
    low: float
    high: float
    rounds: int
    level: float = LEVEL
    run_to_run: float = 0.0     # the grade-to-grade standard deviation added (RUN_TO_RUN)

    @property
    def half_width(self) -> float:
        """Half the interval's width as a fraction of the ratio (0.01: ±1%)."""
        return (self.high - self.low) / 2 / self.ratio if self.ratio else float("inf")

    def as_dict(self, cap_hit: bool, target: float, cap_s: float) -> dict:
        return {"low": self.low, "high": self.high, "level": self.level, "rounds": self.rounds,
                "half_width": self.half_width, "target": target, "cap_hit": cap_hit, "cap_s": cap_s,
                "run_to_run": self.run_to_run}


def _median(values):
    import torch
    return torch.quantile(values, 0.5, dim=-1)     # the mean of the middle two, as statistics.median


def ratio_interval(mine: list[float], base: list[float], resamples: int = RESAMPLES,
                   level: float = LEVEL, seed: int = SEED, groups: list[int] | None = None,
                   run_to_run: float = 0.0) -> Interval | None:
    """The ratio of the medians, median(mine) / median(base), and its paired bootstrap
    interval; `mine[i]` and `base[i]` were timed in the same round. `groups[i]`: the request
    round i came from (GPU: a request's rounds share its memory placement and its state, and
    measured on an H100 they agree with each other more than with another request's, or
    another grade's): the draws then resample requests, then rounds within each (a two-stage
    bootstrap), so the interval holds what varies between requests. `run_to_run`: what varies
    between grades alone (RUN_TO_RUN), a standard deviation as a fraction of the ratio, added
    in quadrature to each side. None with fewer than two rounds or a time that is not positive."""
    import torch
    n = min(len(mine), len(base))
    if n < 2:
        return None
    t = torch.tensor([mine[:n], base[:n]], dtype=torch.float64)
    if not bool(t.isfinite().all()) or not bool((t >= 0).all()):
        return None
    t = t.clamp(min=1e-6)                     # a call below the timer's resolution: 1 ns
    resamples = draws_for(n, resamples)
    ratio = float(_median(t[0]) / _median(t[1]))
    gen = torch.Generator().manual_seed(seed)
    if groups is not None and len(set(groups[:n])) >= 2:
        rows = _two_stage(groups[:n], resamples, gen)
    else:
        rows = torch.randint(n, (resamples, n), generator=gen)
    draws = _median(t[0][rows]) / _median(t[1][rows])
    tail = (1 - level) / 2
    low, high = (float(x) for x in torch.quantile(draws, torch.tensor([tail, 1 - tail], dtype=torch.float64)))
    return widened(Interval(ratio=ratio, low=min(low, ratio), high=max(high, ratio), rounds=n, level=level),
                   run_to_run)


def widened(interval: Interval | None, run_to_run: float) -> Interval | None:
    """The interval with a grade-to-grade standard deviation (a fraction of the ratio) added
    in quadrature to each side (RUN_TO_RUN)."""
    if interval is None or run_to_run <= 0:
        return interval
    from statistics import NormalDist
    ratio = interval.ratio
    extra = NormalDist().inv_cdf(1 - (1 - interval.level) / 2) * run_to_run * ratio
    return replace(interval, low=ratio - ((ratio - interval.low) ** 2 + extra ** 2) ** 0.5,
                   high=ratio + ((interval.high - ratio) ** 2 + extra ** 2) ** 0.5,
                   run_to_run=interval.run_to_run + run_to_run)


def draws_for(n: int, resamples: int = RESAMPLES) -> int:
    """Bootstrap draws for n rounds: `resamples`, fewer where draws x rounds would pass
    MAX_ELEMENTS (memory and time in the judge), never below MIN_RESAMPLES."""
    return max(MIN_RESAMPLES, min(resamples, MAX_ELEMENTS // max(n, 1)))


def _two_stage(groups: list[int], resamples: int, gen):
    """Row indices of `resamples` draws: as many groups as there are, drawn with replacement,
    and from each drawn group as many of its rounds as the largest group has, with
    replacement (each group weighs the same)."""
    import torch
    order = sorted(range(len(groups)), key=lambda i: groups[i])
    ids = sorted(set(groups))
    sizes = torch.tensor([groups.count(g) for g in ids])
    starts = torch.cumsum(sizes, 0) - sizes
    k, m = len(ids), int(sizes.max())
    chosen = torch.randint(k, (resamples, k), generator=gen)
    within = (torch.rand((resamples, k, m), generator=gen, dtype=torch.float64)
              * sizes[chosen].unsqueeze(-1)).long()
    flat = (starts[chosen].unsqueeze(-1) + within).reshape(resamples, k * m)
    return torch.tensor(order)[flat]


def straddles(interval: Interval, bounds: tuple[float, ...]) -> float | None:
    """The tier boundary (a `max_slowdown`) inside the interval, if there is one."""
    return next((m for m in sorted(bounds) if interval.low <= m < interval.high), None)


def settled(interval: Interval | None, target: float, bounds: tuple[float, ...], run_to_run: float = 0.0) -> bool:
    """Precise enough, and on one side of every tier boundary. With `run_to_run`, `interval` is
    the rounds' own and the precision is the widened interval's, while the boundary is judged
    on the rounds' own: more rounds cannot narrow what varies between grades, so a median
    within that of a boundary is left to the boundary rule (perf_tier) instead of the cap."""
    return (interval is not None and widened(interval, run_to_run).half_width <= target
            and straddles(interval, bounds) is None)


class StoppingRule:
    """Whether to time another round of one size (module doc). Feed it the paired samples
    so far and the seconds spent; after it said no, `interval` and `cap_hit` say why."""

    def __init__(self, min_reps: int, max_reps: int, base_s: float, cap_s: float, target: float,
                 bounds: tuple[float, ...] = (), min_groups: int = 0, run_to_run: float = 0.0):
        self.min_reps, self.max_reps, self.base_s = min_reps, max_reps, base_s
        self.run_to_run = run_to_run      # RUN_TO_RUN of the backend, added to every interval
        self.min_groups = min_groups      # GPU: requests before the interval may settle (MIN_REQUESTS)
        self.cap_s, self.target, self.bounds = cap_s, target, tuple(bounds)
        self.own: Interval | None = None       # the rounds' own interval; `interval` adds run_to_run
        self.groups: list[int] | None = None
        self.cap_hit = False
        self.stopped_by = ""       # "cap" (time) or "max_reps" when one of them ended the timing
        self._at = 0            # rounds when the interval was last computed

    def more(self, mine: list[float], base: list[float], elapsed_s: float, groups: list[int] | None = None) -> bool:
        n = min(len(mine), len(base))
        self.groups = groups
        if n < self.min_reps or groups is not None and len(set(groups)) < self.min_groups and elapsed_s < self.cap_s:
            return True
        if n >= self.max_reps or elapsed_s >= self.cap_s and n:
            self._final(mine, base, n)
            self.cap_hit = not settled(self.own, self.target, self.bounds, self.run_to_run)
            self.stopped_by = "max_reps" if n >= self.max_reps else "cap"
            return False
        if elapsed_s < self.base_s:
            return True
        if self.target <= 0:
            self._final(mine, base, n)
            return False
        # the interval costs 0.1-0.5 s at hundreds to thousands of rounds: computed again
        # after a quarter more rounds
        if self.own is None or n >= self._at + max(5, self._at // 4):
            self.own, self._at = ratio_interval(mine, base, groups=self.groups), n
        return not settled(self.own, self.target, self.bounds, self.run_to_run)

    def _final(self, mine, base, n) -> None:
        if self.own is None or self._at != n:
            self.own, self._at = ratio_interval(mine, base, groups=self.groups), n

    @property
    def interval(self) -> Interval | None:
        """The reported interval: the rounds' own with RUN_TO_RUN added."""
        return widened(self.own, self.run_to_run)

    def summary(self) -> dict | None:
        """results.json's `interval` of the row (None below two rounds)."""
        if not self.interval:
            return None
        out = self.interval.as_dict(self.cap_hit, self.target, self.cap_s)
        if self.cap_hit:
            out["stopped_by"] = self.stopped_by
        if self.groups is not None:
            out["requests"] = len(set(self.groups))
        return out


def scaled(interval: dict | None, raw: float | None, adjusted: float | None) -> dict | None:
    """The interval of a headline the judge adjusted after timing (grader/judge/judge.py
    `cap_baseline`: SDPA capped to the judge's clock, time charged back): the same relative
    interval around the adjusted ratio."""
    if not interval or not raw or not adjusted or raw == adjusted:
        return interval
    f = adjusted / raw
    return {**interval, "low": interval["low"] * f, "high": interval["high"] * f, "adjusted": True}


def describe(interval: dict | None) -> str:
    """One line of a row's interval for the terminal and the PDF: "2.91-3.02x (±1.9%, 240
    rounds; stopped at the cap of 4 s per size, short of ±1%)"."""
    if not interval or not interval.get("low"):
        return ""
    text = (f"{interval['low']:.2f}-{interval['high']:.2f}x (±{interval['half_width']:.1%}, "
            f"{interval['rounds']} rounds")
    if interval.get("cap_hit"):
        cap = f" of {interval['cap_s']:g} s per size" if interval.get("cap_s") else " per size"
        if interval.get("stopped_by") == "max_reps":
            cap = " on rounds ([benchmark] max_reps)"
        short = (f"short of ±{interval['target']:.0%}" if interval["half_width"] > interval["target"]
                 else "still across a tier boundary")
        text += f"; stopped at the cap{cap}, {short}"
    return text + ")"
