"""grader/judge/quality.py: a busy machine is noisy on either backend; a spread is noisy by the
backend's own bar (CPU timings spread 10-22% on a quiet 2-core machine, GPU ones under 3%)."""
import os
from dataclasses import replace

from grader.core.config import Shape
from grader.judge import quality
from grader.judge.quality import Meter, machine_ticks, summarize
from grader.core.result import Timing


def _quality(device, cfg, spread, other_cores):
    """Meter.quality for ten seconds in which other processes used `other_cores` cores."""
    hz = os.sysconf("SC_CLK_TCK")
    m = Meter.__new__(Meter)
    m.device, m.gpu_before, m.gpu_after, m.cpus = device, None, None, None
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


def test_on_a_gpu_other_processes_are_noise_only_when_they_leave_the_timing_no_free_cores(cfg, monkeypatch):
    """A batch's other GPU lane and its compiles used 1-16 of an H200 x2's 32 cores: at 0.3 cores
    every size was timed three times on both lanes and every grade was noisy."""
    monkeypatch.setattr(quality, "judge_cpus", lambda: frozenset(range(32)))
    assert not _quality("cuda", cfg, spread=0.01, other_cores=16.0)["noisy"]
    busy = _quality("cuda", cfg, spread=0.01, other_cores=30.5)
    assert busy["noisy"] and "other processes used 30.50 cores" in busy["reasons"][0]
    assert summarize([], cfg, "cuda")["thresholds"]["other_cores_busy"] == 30
    assert _quality("cpu", cfg, spread=0.01, other_cores=1.0)["noisy"]         # the CPU's kernel uses every core
    # a laptop's two cores: any other use is noise
    monkeypatch.setattr(quality, "judge_cpus", lambda: frozenset(range(2)))
    assert _quality("cuda", cfg, spread=0.01, other_cores=1.0)["noisy"]


def test_the_busy_clock_is_read_over_the_judges_cpus_alone():
    """A Slurm job's cpuset: another job's load on the node's other CPUs is not this grade's."""
    whole = machine_ticks()
    each = machine_ticks(frozenset(range(os.cpu_count())))
    assert whole and each and abs(each[1] - whole[1]) <= 0.01 * whole[1]
    one = machine_ticks(frozenset({0}))
    assert one and one[1] < 0.75 * whole[1] if os.cpu_count() > 1 else one
    assert machine_ticks(frozenset({10 ** 6})) is None       # no such CPU: nothing read, not a zero
