"""grader/analysis/perf_tier.py: the tier comes from the medians over every timed call, so no single
call or round moves it; the fastest calls are the cross-check, and a run whose median and
fastest calls disagree says it could not decide; a figure below the physical floor scores
nothing."""
from grader.analysis.perf_tier import best_slowdown, below_floor, decide, tier_of

TIERS = ((1.5, 25.0), (3.0, 20.0), (10.0, 10.0), (100.0, 5.0))


def _row(student_min, student_median, sdpa_min=1.0, sdpa_median=1.0, floor=None):
    timing = lambda lo, mid: {"median_ms": mid, "min_ms": lo, "max_ms": 3 * mid, "iqr_ms": mid - lo, "reps": 9}  # noqa: E731
    return {"S": 1024, "slowdown": student_median / sdpa_median, "student_ms": student_median, "floor_ms": floor,
            "timings": {"student": timing(student_min, student_median), "sdpa": timing(sdpa_min, sdpa_median)}}


def test_tier_of():
    assert tier_of(1.2, TIERS) == (1.5, 25.0) and tier_of(10.0, TIERS) == (10.0, 10.0) and tier_of(101, TIERS) is None


def test_a_few_fast_calls_do_not_buy_a_tier():
    """The H200's attack: 180x slower than SDPA, a few calls returning an unwritten tensor at
    once; the fastest call (1.2 µs) decided the tier, and it got 25/25."""
    d = decide(_row(0.0012, 180.0), TIERS)
    assert d.points == 0.0 and d.tier is None and not d.decided
    assert "medians 180.00x SDPA" in d.text and "slower than every tier by the medians" in d.text


def test_the_fastest_calls_are_the_cross_check():
    quiet = decide(_row(9.0, 9.2), TIERS)
    busy = decide(_row(9.1, 21.5, sdpa_min=1.0, sdpa_median=1.0), TIERS, {"status": "noisy"})
    assert quiet.points == 10.0 and quiet.decided
    assert busy.points == 5.0 and not busy.decided
    assert "could not decide" in busy.text and "the machine was busy" in busy.text
    assert "tier <= 100x by the medians; the fastest calls say tier <= 10x" in busy.text
    assert best_slowdown(_row(9.1, 21.5)) == 9.1


def test_a_figure_below_the_physical_floor_scores_nothing():
    row = _row(0.0012, 0.9, floor=0.004)
    assert below_floor(row) == "fastest call 1.2 µs"
    d = decide(row, TIERS)
    assert d.points == 0.0 and "below the physical floor of 4.0 µs" in d.text
    assert below_floor(_row(0.005, 0.006, floor=0.004)) is None
    assert decide(_row(0.005, 0.9, floor=0.004), TIERS).points == 25.0


def test_results_without_timings_use_the_median_and_say_so():
    d = decide({"S": 512, "slowdown": 2.5}, TIERS)
    assert d.points == 20.0 and d.decided and "medians only" in d.text
    assert decide(_row(200, 250), TIERS).points == 0.0
