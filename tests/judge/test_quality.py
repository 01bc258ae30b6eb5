"""grader/judge/quality.py: a busy machine is noisy on either backend; a spread is noisy by the
backend's own bar (CPU timings spread 10-22% on a quiet 2-core machine, GPU ones under 3%)."""
import os
from dataclasses import replace

from grader.core.config import Shape
from grader.judge.quality import Meter, summarize
from grader.core.result import Timing


def _quality(device, cfg, spread, other_cores):
    """Meter.quality for ten seconds in which other processes used `other_cores` cores."""
    hz = os.sysconf("SC_CLK_TCK")
    m = Meter.__new__(Meter)
    m.device, m.gpu_before, m.gpu_after = device, None, None
    m.t0, m.t1 = 0.0, 10.0
    m.ticks0, m.ticks1 = (0, 0), (int(other_cores * 10 * hz), 0)
    m.own0 = m.own1 = 0
    timings = {"student": Timing(10.0, 9.0, 12.0, 10.0 * spread, 8), "sdpa": Timing(5.0, 4.9, 5.2, 0.1, 8)}
    return m.quality(Shape(1, 8, 1024, 64), timings, cfg)


def test_a_quiet_cpu_with_its_usual_spread_is_clean_and_a_busy_one_is_noisy(cfg):
    cfg = replace(cfg, max_spread=0.0)
    assert not _quality("cpu", cfg, spread=0.22, other_cores=0.0)["noisy"]
    busy = _quality("cpu", cfg, spread=0.05, other_cores=1.0)
    assert busy["noisy"] and "other processes used 1.00 cores" in busy["reasons"][0]
    # one call's spread on a quiet CPU reached 64%: only a spread beyond the median is noisy there
    assert not _quality("cpu", cfg, spread=0.64, other_cores=0.0)["noisy"]
    assert _quality("cpu", cfg, spread=1.1, other_cores=0.0)["noisy"]
    assert summarize([_quality("cpu", cfg, 0.22, 0.0)], cfg, "cpu")["status"] == "clean"


def test_a_gpu_spread_is_noisy_by_the_gpu_bar_and_the_config_sets_both(cfg):
    assert _quality("cuda", replace(cfg, max_spread=0.0), spread=0.22, other_cores=0.0)["noisy"]
    assert _quality("cpu", replace(cfg, max_spread=0.15), spread=0.22, other_cores=0.0)["noisy"]
    assert summarize([], replace(cfg, max_spread=0.0), "cpu")["thresholds"]["spread"] == 1.0
