"""grader/bench.py: FLOP counts and statistics with literal numbers."""
from grader.bench import flops, make_row, summarize
from grader.config import Shape


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
