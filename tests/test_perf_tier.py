"""grader/perf_tier.py: the tier comes from the fastest calls, so a busy run's inflated median
does not move it; a run whose median and fastest calls disagree says it could not decide."""
from grader.perf_tier import best_slowdown, decide, tier_of

TIERS = ((1.5, 25.0), (3.0, 20.0), (10.0, 10.0), (100.0, 5.0))


def _row(student_min, student_median, sdpa_min=1.0, sdpa_median=1.0):
    timing = lambda lo, mid: {"median_ms": mid, "min_ms": lo, "max_ms": 3 * mid, "iqr_ms": mid - lo, "reps": 9}  # noqa: E731
    return {"S": 1024, "slowdown": student_median / sdpa_median,
            "timings": {"student": timing(student_min, student_median), "sdpa": timing(sdpa_min, sdpa_median)}}


def test_tier_of():
    assert tier_of(1.2, TIERS) == (1.5, 25.0) and tier_of(10.0, TIERS) == (10.0, 10.0) and tier_of(101, TIERS) is None


def test_a_noisy_median_does_not_flip_the_tier():
    quiet = decide(_row(9.0, 9.2), TIERS)
    # the same kernel on a busy machine: a few calls fast, the median 21x (the 9.1x to 21.5x)
    busy = decide(_row(9.1, 21.5, sdpa_min=1.0, sdpa_median=1.0), TIERS, {"status": "noisy"})
    assert quiet.points == busy.points == 10.0 and quiet.decided and not busy.decided
    assert "could not decide" in busy.text and "the machine was busy" in busy.text
    assert "tier <= 10x by the fastest calls; the medians say tier <= 100x" in busy.text
    assert best_slowdown(_row(9.1, 21.5)) == 9.1


def test_results_without_timings_use_the_median_and_say_so():
    d = decide({"S": 512, "slowdown": 2.5}, TIERS)
    assert d.points == 20.0 and d.decided and "medians only" in d.text
    assert decide(_row(200, 250), TIERS).points == 0.0
