"""grader/judge/bench.py: FLOP counts and statistics with literal numbers."""
from grader.judge.bench import flops, make_row, summarize
from grader.core.config import Shape


def test_flops_is_four_b_h_s2_d():
    assert flops(Shape(1, 8, 1024, 64)) == 2_147_483_648        # 2.15 GFLOP (MEASURED.md)
    assert flops(Shape(2, 3, 5, 7)) == 4 * 2 * 3 * 25 * 7


def test_summarize_median_and_spread():
    t = summarize([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (t.median_ms, t.min_ms, t.max_ms, t.reps) == (3.0, 1.0, 5.0, 5)
    assert t.iqr_ms == 3.0     # quartiles 1.5 and 4.5 (exclusive method)


def test_row_slowdown_and_gflops():
    timings = {"student": summarize([4.0]), "sdpa": summarize([2.0]), "naive": summarize([8.0]),
               "fused": None}
    row = make_row(Shape(1, 8, 1024, 64), timings, 1e-6)
    assert row.slowdown == 2.0 and row.naive_ms == 8.0 and row.fused_ms is None
    assert abs(row.student_gflops - 2_147_483_648 / 4e6) < 1e-9


def test_cuda_canaries_are_drawn_over_every_timed_call_and_catch_a_kernel_wrong_on_5_percent():
    """grader/judge/gpu.py: CANARIES calls of each timing method in every request, uniform over its
    timed calls (no round or call is safer to get wrong), and the stated detection holds."""
    import random
    from collections import Counter

    from grader.analysis.confidence import MIN_REQUESTS
    from grader.core.config import Shape
    from grader.judge.gpu import (CALLS, CANARIES, GRAPH_MAX_S, canary_optional, detection, event_slots, graph_slots,
                            pick_canaries)
    rng = random.Random(5)
    small, large = Shape(1, 8, GRAPH_MAX_S, 64), Shape(1, 8, 1024, 64)
    picks = pick_canaries(small, rng)
    assert len(picks) == len(set(picks)) == 2 * CANARIES
    assert sum(canary_optional(p, "events") for p in picks) == CANARIES and not any(canary_optional(p, "graph") for p in picks)
    assert len(pick_canaries(large, rng)) == CANARIES and max(pick_canaries(large, rng)) < event_slots()
    # uniform: every round of the event method, the last ones included, gets its share
    rounds = Counter(p // CALLS for _ in range(4000) for p in pick_canaries(large, rng))
    share = 4000 * CANARIES / (event_slots() // CALLS)
    assert set(rounds) == set(range(event_slots() // CALLS)) and all(abs(n - share) < 0.1 * share for n in rounds.values())
    graph = Counter(p - event_slots() for _ in range(2000) for p in pick_canaries(small, rng) if p >= event_slots())
    assert len(graph) == graph_slots()
    # the stated probability, and a simulation of it: a kernel wrong on 5% of its calls
    assert detection(CANARIES * MIN_REQUESTS) >= 0.99
    caught = 0
    for _ in range(2000):
        wrong = {i for i in range(MIN_REQUESTS * event_slots()) if rng.random() < 0.05}
        checked = [r * event_slots() + p for r in range(MIN_REQUESTS) for p in pick_canaries(large, rng)]
        caught += any(c in wrong for c in checked)
    assert caught / 2000 >= 0.985, caught
