"""grader/judge/cpusample.py: where the child's CPU time went, sampled from outside its process."""
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from grader.judge.cpusample import SAMPLE_US, Sampler, Unavailable, judge_samples


def _sampled(pids: list, seconds: float) -> Sampler:
    """A Sampler of `pids` run for `seconds`, stopped (the caller closes it); the test skipped
    where perf events cannot be opened."""
    try:
        sampler = Sampler(pids)
    except Unavailable as exc:
        pytest.skip(f"perf events cannot be opened here: {exc}")
    sampler.start()
    time.sleep(seconds)
    sampler.stop()
    return sampler


def test_samples_land_in_the_code_that_ran():
    """A process spinning in Python's interpreter: the judge's samples of it (perf events on
    its threads, one ring buffer a CPU) land in libpython or the python binary, none in a
    library it never ran, and the rule is quiet about code it was not asked about."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)
        sampler = _sampled([proc.pid], 0.5)
        counts = sampler.counts("/nonexistent/kernel.so")
        sampler.close()
    finally:
        proc.kill()
        proc.wait()
    assert counts["own"] == 0 and counts["torch"] == 0
    # half a second of one busy thread, a sample each SAMPLE_US of its time
    assert counts["other"] > 0.5 * 0.5e6 / SAMPLE_US, counts
    assert any("python" in name for name in counts["where"]), counts["where"]


def test_a_cgroup_is_sampled_whole_however_many_threads_it_parks(tmp_path):
    """Issue 26 (held-out, thread swarm): a child that parks thousands of idle threads made
    the per-thread sampler need more perf events than it may open; it gave up and the
    benchmark ran unobserved. Sampled per CPU through the child's cgroup, the count of
    threads does not matter, and the busy thread's time is all there."""
    from grader.isolation.cpugroup import CpuGroup
    group, why = CpuGroup.make()
    if group is None or group.kind != "cgroup v2":
        if group is not None:
            group.remove()
        pytest.skip(f"no cgroup v2 group can be made here: {why or group.kind}")
    park = ("import threading, time, sys\n"
            "ev = threading.Event()\n"
            "ts = [threading.Thread(target=ev.wait) for _ in range(3000)]\n"
            "[t.start() for t in ts]\n"
            "print('parked', flush=True)\n"
            "sys.stdin.readline()\n"
            "t = time.thread_time()\n"                      # this thread's: not a sum over 3000
            "while time.thread_time() - t < 0.5:\n"
            "    for _ in range(20000): pass\n"
            "ev.set()\n")
    proc = subprocess.Popen([sys.executable, "-c", park], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            preexec_fn=group.enter)
    try:
        assert proc.stdout.readline().strip() == "parked"
        with pytest.raises(Unavailable, match="more perf events"):
            Sampler([proc.pid])                               # per thread: 3000 x CPUs, refused
        try:
            sampler = Sampler([], group=str(group.path))
        except Unavailable as exc:
            pytest.skip(f"perf events cannot be opened for a cgroup here: {exc}")
        sampler.start()
        proc.stdin.write("go\n")
        proc.stdin.flush()
        proc.wait(timeout=30)
        sampler.stop()
        counts = sampler.counts("/nonexistent/kernel.so")
        sampler.close()
    finally:
        proc.kill()
        proc.wait()
        group.remove()
    assert sampler.scope == "cgroup"
    # (user space only: the loop reads the clock once in 20000 turns, a system call where the vDSO's
    # clock is not used; read every turn, they took over half its time on a loaded machine: CI's
    # run of 2026-11-27 had 1019 samples of the 2500, this machine's 1091)
    assert counts["own"] + counts["torch"] + counts["other"] > 0.5 * 0.5e6 / SAMPLE_US, counts


def test_the_rule_flags_calls_whose_time_ran_in_torch_not_in_their_own_code():
    ms = 200 * SAMPLE_US / 1000                     # calls worth 200 samples of one thread, SDPA's the same
    honest = {"own": 260, "torch": 150, "other": 900, "where": {"kernel.so": 260}}
    assert judge_samples(256, honest, ms, ms) == []
    flash = {"own": 0, "torch": 480, "other": 3000, "where": {"libtorch_cpu.so": 480, "libgomp.so.1": 3000}}
    (flag,) = judge_samples(256, flash, ms, ms)
    assert flag["code"] == "foreign_cpu_time" and flag["tier"] == "strict" and "libtorch_cpu.so 14%" in flag["detail"]
    # a machine loaded 100-fold: the calls' wall time grew, not their CPU samples; beside SDPA's,
    # the kernel's share of the samples is still that of its time: no finding
    loaded = {"own": 95, "torch": 91, "other": 4515, "where": {"libgomp.so.1": 4408}}
    assert judge_samples(64, loaded, 100 * ms, 100 * ms) == []
    # a little of its own code: for a person to look at
    some = {"own": 30, "torch": 480, "other": 3000, "where": {}}
    assert [f["tier"] for f in judge_samples(256, some, ms, ms)] == ["review"]
    # too few samples to tell: no finding either way
    assert judge_samples(64, flash, 20 * SAMPLE_US / 1000, 20 * SAMPLE_US / 1000) == []


def test_a_busy_machine_leaves_the_sampled_flag_strict():
    """On a machine other processes kept busy the judge's clock flags go to a person, but
    foreign_cpu_time keeps its tier: its two observations are thinned alike by load (above:
    a machine loaded 100-fold gives an honest kernel no finding), and on a loaded CI machine
    SDPA's flash kernel called straight through (tests/redteam/elf_flash_direct.py) kept its
    points with the flag demoted to review."""
    from grader.judge.judge import on_busy
    ms = 200 * SAMPLE_US / 1000
    (flag,) = judge_samples(256, {"own": 0, "torch": 480, "other": 3000, "where": {}}, ms, ms)
    assert on_busy(flag, busy=True)["tier"] == "strict"
    forged = {"code": "forged_timings", "tier": "strict", "detail": ""}
    assert on_busy(forged, busy=True)["tier"] == "review" and on_busy(forged, busy=False)["tier"] == "strict"


def test_the_kernels_own_calls_samples_decide_before_the_rounds_pooled():
    """Every timed call a request of its own, so the samples of the kernel's calls' brackets are
    told apart (`in_calls`, and `in_fast_calls`: the faster half, which decides the tier). The
    held-out attacks of 2026-11-28 passed the pooled rule: a thread of its own spinning only
    while SDPA ran, own code padding torch's flash kernel to 40% of its time, torch's bmm for
    the products beside its own softmax, flash on 3 calls in 5 and a slow honest kernel on the
    rest (samples by bracket as those runs would give them)."""
    from grader.judge.cpusample import in_call_flags
    ms = 200 * SAMPLE_US / 1000
    pooled_ok = {"own": 567, "torch": 326, "other": 483, "where": {}}       # the pooled rule finds nothing
    assert judge_samples(256, pooled_ok, ms, ms) == []
    honest = {"in_calls": {"own": 190, "torch": 9, "other": 40}, "in_fast_calls": {"own": 92, "torch": 5, "other": 20}}
    assert judge_samples(256, {**pooled_ok, **honest}, ms, ms) == []
    spinner = {"in_calls": {"own": 2, "torch": 300, "other": 50}, "in_fast_calls": {"own": 1, "torch": 150, "other": 25}}
    (flag,) = judge_samples(256, {**pooled_ok, **spinner}, ms, ms)
    assert flag["tier"] == "strict" and "its timed calls" in flag["detail"]
    padded = {"in_calls": {"own": 40, "torch": 60, "other": 10}, "in_fast_calls": {"own": 20, "torch": 30, "other": 5}}
    assert [f["tier"] for f in in_call_flags(256, padded)] == ["review"]
    mix = {"in_calls": {"own": 600, "torch": 200, "other": 10}, "in_fast_calls": {"own": 3, "torch": 120, "other": 9}}
    (flag,) = in_call_flags(256, mix)
    assert flag["tier"] == "strict" and "faster half" in flag["detail"]
    # too few samples in the brackets to tell: the pooled rule decides
    few = {"in_calls": {"own": 1, "torch": 20, "other": 3}, "in_fast_calls": {"own": 0, "torch": 10, "other": 1}}
    assert in_call_flags(64, few) == [] and judge_samples(64, {**pooled_ok, **few}, ms, ms) == []


def test_a_size_timed_more_than_once_is_judged_on_the_samples_of_all_its_runs():
    """A busy machine thins one run's samples below the bracket rule's minimum: median_mix (its
    faster half all torch's flash) went unflagged at S = 256 on a loaded CI run. Every run of the
    size is the kernel's calls, so their samples together decide; one run alone stays as it was."""
    from grader.judge.cpusample import BRACKET_SAMPLES
    from grader.judge.judge import _brackets_over_runs
    thin = {"in_calls": {"own": 30, "torch": 25, "other": 5}, "in_fast_calls": {"own": 0, "torch": BRACKET_SAMPLES // 2}}
    runs = [{"cpu_samples": thin, "clock_flags": []} for _ in range(3)]
    assert _brackets_over_runs(256, runs[:1], runs[0]) == []
    flags = _brackets_over_runs(256, runs, runs[2])
    assert [(f["code"], f["tier"]) for f in flags] == [("foreign_cpu_time", "strict")]
    assert "faster half" in flags[0]["detail"] and "over the 3 timings" in flags[0]["detail"]
    honest = {"in_calls": {"own": 90, "torch": 5}, "in_fast_calls": {"own": 40, "torch": 2}}
    assert _brackets_over_runs(256, [{"cpu_samples": honest, "clock_flags": []}] * 3, {"clock_flags": []}) == []


def test_a_size_whose_few_bracket_samples_point_at_torch_is_timed_again():
    """The mechanism behind median_mix's lost flag (found 2026-11-28): at S = 64 its faster half
    gave 1 sample of its own against 22 of torch's in one quiet run, below the rule's minimum, so
    that size said nothing unless its spread had it timed again; at S = 256 a loaded machine
    scrambles which calls are the faster half (own 102 against torch 110: review, not strict).
    Few samples that point at torch are a reason to time the size again (its runs' samples are
    then judged together), never a reason to pass it; few that point at the kernel's own code,
    as an honest kernel's do, are not."""
    from grader.judge.cpusample import BRACKET_SAMPLES, THIN_SAMPLES, thin_brackets
    quiet_mix = {"in_calls": {"own": 48, "torch": 38, "other": 276}, "in_fast_calls": {"own": 1, "torch": 22, "other": 97}}
    why = thin_brackets(64, quiet_mix)
    assert why and "S=64" in why and "1 of its own against 22" in why
    honest = {"in_calls": {"own": 30, "torch": 4}, "in_fast_calls": {"own": 15, "torch": 2}}
    assert thin_brackets(64, honest) is None
    plenty = {"in_calls": {"own": 3, "torch": 120}, "in_fast_calls": {"own": 1, "torch": BRACKET_SAMPLES}}
    assert thin_brackets(256, plenty) is None          # enough to judge: the rule itself decides
    nothing = {"in_calls": {"own": 0, "torch": THIN_SAMPLES - 1}, "in_fast_calls": {"own": 0, "torch": 3}}
    assert thin_brackets(64, nothing) is None          # too few to point anywhere
    assert thin_brackets(64, {}) is None


def test_the_runs_too_thin_to_judge_alone_are_judged_together():
    """median_mix beside one spinning process (2026-11-28): at S = 64 the busiest run's faster
    half was scrambled by the load (own code and torch's alike), the two others held 0 samples of
    its own against 19 and 26 of torch's, each too few alone. All three pooled said review
    (30%); the thin two together are strict, as each would be with enough samples."""
    from grader.judge.judge import _brackets_over_runs

    def run(own, torch_n):
        return {"cpu_samples": {"in_calls": {"own": 40 + own, "torch": 30 + torch_n},
                                "in_fast_calls": {"own": own, "torch": torch_n}}, "clock_flags": []}
    runs = [run(30, 25), run(0, 19), run(0, 26)]
    (flag,) = _brackets_over_runs(64, runs, runs[2])
    assert flag["tier"] == "strict" and "faster half" in flag["detail"] and "0 against 45" in flag["detail"]
    assert "2 timings" in flag["detail"]
    honest = [run(30, 25), run(15, 2), run(12, 3)]          # few samples, its own code's
    assert _brackets_over_runs(64, honest, honest[2]) == []


def test_pooled_samples_that_only_doubt_reach_a_person_where_nothing_else_did():
    """Beside a process spinning the other core, median_mix's runs at S = 64 held 14 own/22
    torch and 1/17 in their faster halves (2026-11-28): strict nowhere, and the row was clean.
    Pooled they say review; a kept run that flagged its calls already keeps its own flag."""
    from grader.judge.judge import _brackets_over_runs

    def run(own, torch_n, flags=()):
        return {"cpu_samples": {"in_calls": {"own": 40 + own, "torch": 30 + torch_n},
                                "in_fast_calls": {"own": own, "torch": torch_n}}, "clock_flags": list(flags)}
    runs = [run(14, 22), run(1, 17)]
    (flag,) = _brackets_over_runs(64, runs, runs[1])
    assert flag["tier"] == "review" and "15 against 39" in flag["detail"]
    said = run(1, 17, [{"code": "foreign_cpu_time", "tier": "review"}])
    assert _brackets_over_runs(64, [runs[0], said], said) == []


def test_a_strict_finding_of_a_timing_not_kept_stands():
    """A kernel that runs torch's code in a timing it makes noisy (re-timed, not kept) and its own
    code once timed again: the kept run's figures are its own code's, but the first run's strict
    flag still says what its calls ran."""
    from grader.judge.judge import _brackets_over_runs
    honest = {"cpu_samples": {"in_calls": {"own": 300, "torch": 20}}, "clock_flags": []}
    cheat = {"cpu_samples": {"in_calls": {"own": 2, "torch": 300}},
             "clock_flags": [{"code": "foreign_cpu_time", "tier": "strict", "detail": "S=256: ..."}]}
    (flag,) = _brackets_over_runs(256, [cheat, honest], honest)
    assert flag["tier"] == "strict" and "not kept: 2 timed" in flag["detail"]
    review = {**cheat, "clock_flags": [{"code": "foreign_cpu_time", "tier": "review", "detail": "S=256: ..."}]}
    assert all("not kept" not in f["detail"] for f in _brackets_over_runs(256, [review, honest], honest))


def test_a_kernel_that_changes_its_ways_once_timed_again_keeps_none_of_its_first_figures():
    """Found by review (2026-11-28): a kernel can tell a size is timed again (a second bench_begin
    of the same shape). First timing: torch in its faster half, samples too few (the doubt) and
    a tight spread; then its own code, its spread widened on purpose. The doubtful run is kept
    last, and a doubt no timing settled, or pooled samples under the minimum that are almost none
    its own, are said for review, never passed."""
    from grader.judge.judge import _brackets_over_runs, _kept_run

    def run(own, torch_n, noisy=True, score=1.0, doubt=None):
        return {"cpu_samples": {"in_fast_calls": {"own": own, "torch": torch_n}}, "clock_flags": [],
                "quality": {"noisy": noisy, "score": score}, "doubt": doubt}
    first = run(1, 22, score=0.1, doubt="S=64: too few CPU samples")
    later = [run(60, 2, score=3.0), run(58, 3, score=2.5)]
    assert _kept_run([first] + later) is later[1]
    assert _kept_run([first, run(60, 2, noisy=False, score=0.0)])["quality"]["noisy"] is False
    # kept just under the minimum in every timing: 0 of its own against 12 each
    under = [run(0, 12, doubt="d") for _ in range(3)]
    (flag,) = _brackets_over_runs(64, under, _kept_run(under))
    assert flag["tier"] == "review" and "too few samples to be strict" in flag["detail"]
    # one timing alone, its doubt never settled: said
    alone = run(2, 15, doubt="S=64: too few CPU samples in the faster half of its calls")
    (flag,) = _brackets_over_runs(64, [alone], alone)
    assert flag["tier"] == "review" and "timed 1 times" in flag["detail"]


def _per_call(name: str) -> list:
    """A real grade's per-call samples (tests/fixtures/cpusample/per_call.json says whose)."""
    data = json.loads((Path(__file__).parent.parent / "fixtures" / "cpusample" / "per_call.json").read_text())
    return [(ms, {"own": own, "torch": torch_n, "other": other}) for ms, own, torch_n, other in data[name]]


def test_the_calls_counted_once_hold_where_a_loaded_machine_scrambles_the_faster_half():
    """median_mix (flash on 3 calls in 5, a slow kernel of its own on the rest) beside two
    spinning processes lost its strict flag in 3 runs of 3 and in CI (2026-11-28): the load
    delayed torch's calls past the median, so the faster half held 174 samples of its own
    against 87. Each call's samples are CPU time, which the load leaves alone: of its calls with
    CALL_SAMPLES samples or more in its code and torch's, 32 of 57 ran torch's code loaded and 35
    of 59 quiet (36 of 60 by its design). An honest kernel's calls beside the same load: 0 of 41."""
    from grader.judge.cpusample import bracket_sets, in_call_flags
    loaded = bracket_sets(_per_call("median_mix_loaded_S256"))
    assert loaded["in_fast_calls"]["own"] == 174 and loaded["in_fast_calls"]["torch"] == 87
    assert loaded["calls_in_torch"] == {"own": 25, "torch": 32}
    (flag,) = in_call_flags(256, loaded)
    assert flag["tier"] == "strict" and "32 of its 57 timed calls" in flag["detail"]
    quiet = bracket_sets(_per_call("median_mix_quiet_S256"))
    assert quiet["calls_in_torch"] == {"own": 24, "torch": 35}
    assert [f["tier"] for f in in_call_flags(256, quiet)] == ["strict"]
    honest = bracket_sets(_per_call("honest_loaded_S64"))
    assert honest["calls_in_torch"] == {"own": 41, "torch": 0}
    assert in_call_flags(64, honest) == []


def test_calls_counted_once_need_enough_of_them_and_a_majority_for_strict():
    """A third of the calls in torch's code is review, most of them strict, with BRACKET_CALLS
    counted; a call of fewer than CALL_SAMPLES samples in its code and torch's is not counted
    (a torch sample alone in a short honest call says nothing), and few counted calls that point
    at torch have the size timed again."""
    from grader.judge.cpusample import BRACKET_CALLS, CALL_SAMPLES, bracket_sets, in_call_flags, thin_brackets

    def calls(n_torch, n_own, n_short=0):
        return [(0.5, {"own": 0, "torch": 5, "other": 3})] * n_torch + \
               [(0.6, {"own": 4, "torch": 1, "other": 3})] * n_own + \
               [(0.1, {"own": 0, "torch": CALL_SAMPLES - 1, "other": 1})] * n_short
    # (the samples' sets of these calls are kept out: only the calls counted once are judged)
    only = lambda got: {"calls_in_torch": got["calls_in_torch"]}     # noqa: E731
    assert [f["tier"] for f in in_call_flags(256, only(bracket_sets(calls(21, 19))))] == ["strict"]
    assert [f["tier"] for f in in_call_flags(256, only(bracket_sets(calls(15, 25))))] == ["review"]
    assert in_call_flags(256, only(bracket_sets(calls(10, 30)))) == []
    assert bracket_sets(calls(0, 40, n_short=100))["calls_in_torch"] == {"own": 40, "torch": 0}
    few = only(bracket_sets(calls(BRACKET_CALLS // 2, 5)))
    assert in_call_flags(64, few) == [] and "calls" in (thin_brackets(64, few) or "")


def test_each_pooled_set_names_the_timings_it_was_pooled_over():
    """Found by review (2026-11-28): the sets are thin at their own minimums (40 samples, 30
    calls), so in the thin-only pooling one set can hold two timings and another three; a flag
    named the most of any set."""
    from grader.judge.cpusample import in_call_flags, pooled_sets
    runs = [{"in_fast_calls": {"own": 0, "torch": 25}, "calls_in_torch": {"own": 1, "torch": 12}},
            {"in_fast_calls": {"own": 0, "torch": 25}, "calls_in_torch": {"own": 1, "torch": 12}},
            {"in_fast_calls": {"own": 30, "torch": 60}, "calls_in_torch": {"own": 2, "torch": 12}}]
    merged = pooled_sets(runs, thin_only=True)
    assert merged["in_fast_calls"]["runs"] == 2 and merged["calls_in_torch"]["runs"] == 3
    details = [f["detail"] for f in in_call_flags(64, {"in_fast_calls": merged["in_fast_calls"]}, pooled="")]
    assert details and "over the 2 timings of this size" in details[0]
    (flag,) = in_call_flags(64, {"calls_in_torch": merged["calls_in_torch"]}, pooled=", each too thin")
    assert "over the 3 timings of this size, each too thin" in flag["detail"] and "busy machine" in flag["detail"]


def test_torch_code_in_its_calls_beside_sdpas_is_what_padding_cannot_hide():
    """A kernel that runs torch's flash kernel on every call and pads each with its own code
    (tests/redteam/flash_padded.py: both threads spinning 110% of the flash call's time) has no
    call counted as torch's and over half of the samples its own: nothing flagged it (ok, on
    5da4eaa). Padding adds samples of its own, never fewer of torch's: at S = 256 its calls ran
    2.42 samples of torch's code each, SDPA's 3.07 (2026-11-28). Figures of the red-team class at
    S = 256, each kernel's calls beside SDPA's: computing their own 0.09-0.21, torch's bmm 0.98,
    flash on 3 calls in 5 0.57; at S = 64 SDPA's calls ran under TORCH_WORK_SDPA samples each,
    and the harness's torch code alone was 0.18-0.42 of them: not judged."""
    from grader.judge.cpusample import TORCH_WORK_SDPA, torch_work_flags

    def work(mine, sdpa, calls=60):
        return {"torch_work": {"torch": round(mine * calls), "calls": calls, "sdpa_torch": round(sdpa * calls),
                               "sdpa_calls": calls}}
    padded = work(2.42, 3.07)
    padded.update({"in_calls": {"own": 359, "torch": 145}, "in_fast_calls": {"own": 91, "torch": 69},
                   "calls_in_torch": {"own": 59, "torch": 0}})
    ms = 200 * SAMPLE_US / 1000
    (flag,) = judge_samples(256, padded, ms, ms)
    assert flag["tier"] == "strict" and "SDPA's 3.1" in flag["detail"] and "79%" in flag["detail"]
    assert [f["tier"] for f in torch_work_flags(256, work(2.38, 4.2))] == ["strict"]       # median_mix
    assert [f["tier"] for f in torch_work_flags(256, work(4.45, 4.55))] == ["strict"]      # aten_cpu_bmm
    for mine, sdpa in ((0.32, 3.48), (0.87, 5.15), (1.08, 5.17), (0.5, 3.4)):              # their own compute
        assert torch_work_flags(256, work(mine, sdpa)) == []
    assert [f["tier"] for f in torch_work_flags(256, work(1.2, 3.2))] == ["review"]        # over 30%
    assert torch_work_flags(64, work(0.7, TORCH_WORK_SDPA - 0.5)) == []                    # the harness's share
    assert torch_work_flags(64, work(2.0, 2.0)) == []
    assert torch_work_flags(256, work(3.0, 3.1, calls=9)) == []                            # too few calls
    assert torch_work_flags(256, work(3.0, 3.1, calls=15)) == []                           # too few samples
    assert [f["tier"] for f in torch_work_flags(1024, work(150, 160, calls=14))] == ["strict"]
    assert torch_work_flags(1024, work(1.5, 160, calls=14)) == []
    assert torch_work_flags(256, {"torch_work": "x"}) == [] and torch_work_flags(256, {}) == []
    from grader.judge.cpusample import bracket_sets
    got = bracket_sets([(0.5, {"own": 4, "torch": 2, "other": 1})] * 30, [{"own": 0, "torch": 5, "other": 2}] * 20)
    assert got["torch_work"] == {"torch": 60, "calls": 30, "sdpa_torch": 100, "sdpa_calls": 20}
    assert "torch_work" not in bracket_sets([(0.5, {"own": 4, "torch": 2, "other": 1})] * 30)


def test_code_the_judge_cannot_name_counts_as_torchs_never_as_the_harnesss():
    """Found by review (2026-11-28): the maps are read after the rounds, so a worker process that
    ran torch's flash kernel and exited left samples in no mapping ("other" then: no flag at all),
    and libtorch's text copied into a memfd and mapped over itself has a path no name rule knows.
    Neither is the kernel's own code or the harness's: both count as torch's."""
    from grader.judge.cpusample import _classify
    lib = "/work/kernel.so"
    maps = sorted([(0x1000, 0x2000, lib, (8, 1, 10)), (0x3000, 0x4000, "/usr/lib/x86_64-linux-gnu/libc.so.6", (8, 1, 11)),
                   (0x5000, 0x6000, "/memfd:x (deleted)", (0, 1, 12)), (0x7000, 0x8000, "/tmp/libx.so (deleted)", (0, 30, 13)),
                   (0x9000, 0xa000, "", (0, 0, 0)), (0xb000, 0xc000, "/site-packages/torch/lib/libtorch_cpu.so", (8, 1, 14))])
    assert _classify(maps, 0x1800, lib)[0] == "own"
    assert _classify(maps, 0x3800, lib)[0] == "other"
    for ip in (0x5800, 0x7800, 0x9800, 0xb800, 0xd000):
        assert _classify(maps, ip, lib)[0] == "torch", hex(ip)
    assert _classify([], 0x1800, lib) == ("torch", "[unmapped]")        # its process gone: no maps


def test_foreign_code_is_found_by_where_it_sits_and_its_inode_not_its_name():
    """A layout read before the library loads (cpusample.Layout): the harness's code is where it
    was and of the file it was (device, inode); the kernel's code is its library where it was
    loaded. Anything else mapped since, or now at the harness's addresses, is foreign, whatever
    its path says (a path torch's name rule knows stays torch's)."""
    from grader.judge.cpusample import Layout, _classify
    lib, libc, torch_lib = "/work/kernel.so", "/usr/lib/libc.so.6", "/venv/torch/lib/libtorch_cpu.so"
    harness = [(0x10000, 0x20000, libc, (8, 1, 11)), (0x30000, 0x40000, torch_lib, (8, 1, 14)),
               (0x50000, 0x51000, "[vdso]", (0, 0, 0))]
    layout = Layout({5: harness}, 5, ((0x60000, 0x61000),), (8, 2, 99))
    now = sorted(harness[:1] + harness[2:] + [
        (0x30000, 0x40000, "/work/seg.bin", (8, 2, 50)),       # torch's text, copied to a file, mapped over itself
        (0x60000, 0x61000, lib, (8, 2, 99)),                   # the library where it was loaded
        (0x70000, 0x71000, lib, (8, 2, 99)),                   # ... and mapped again elsewhere
        (0x80000, 0x81000, "/work/libhelper.so", (8, 2, 51)),   # a file the harness never loaded (a copy of torch's)
        (0x90000, 0x91000, libc, (8, 1, 11)),                  # the harness's libc, mapped again elsewhere (a
    ])                                                         # copy of torch's code there, swapped at the end)
    assert _classify(now, 0x60800, lib, layout, 5) == ("own", lib)
    assert _classify(now, 0x30800, lib, layout, 5) == ("foreign", "seg.bin over libtorch_cpu.so")
    assert _classify(now, 0x70800, lib, layout, 5) == ("foreign", lib)
    assert _classify(now, 0x80800, lib, layout, 5)[0] == "foreign"
    assert _classify(now, 0x10800, lib, layout, 5)[0] == "other"
    assert _classify(now, 0x90800, lib, layout, 5)[0] == "foreign"
    assert _classify(now, 0x50800, lib, layout, 5)[0] == "other"             # the vDSO: no file, the kernel's page
    # libc over the library's own range is not its code (nor the harness's: mapped since); nor is the
    # library over torch's
    assert _classify(sorted(harness + [(0x60000, 0x61000, libc, (8, 1, 11))]), 0x60800, lib, layout, 5)[0] == "foreign"
    over = sorted(harness[:1] + harness[2:] + [(0x30000, 0x40000, lib, (8, 2, 99))])
    assert _classify(over, 0x30800, lib, layout, 5)[0] == "foreign"
    # a process the judge did not see before the library loaded (forked or exec'd since): never its
    # own code, nor the harness's
    assert _classify(now, 0x60800, lib, layout, 6)[0] == "foreign"
    assert _classify(now, 0x10800, lib, layout, 6)[0] == "foreign"
    assert _classify(now, 0x50000 - 1, lib, layout, 6)[0] == "torch"     # no mapping: [unmapped]
    # without a layout the path decides, as before: the copy over torch's text is "other"
    assert _classify(now, 0x30800, lib)[0] == "other"


_SWAP_CHILD = r"""
import ctypes, os, sys
def ask(): return sys.stdin.readline().strip()
print("ready", flush=True)
ask()
lib = ctypes.CDLL(sys.argv[1])                           # the "kernel's library"
print("loaded", flush=True)
ask()
best = None
for line in open("/proc/self/maps"):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    if "x" in f[1] and len(f) > 5 and "python" in f[5] and (best is None or hi - lo > best[1] - best[0]):
        best = (lo, hi, f[5])
lo, hi, _ = best                                          # the interpreter's code
seg = os.path.join(os.path.dirname(sys.argv[1]), "seg.bin")
with open(seg, "wb") as out:
    out.write(ctypes.string_at(lo, hi - lo))
fd = os.open(seg, os.O_RDONLY)
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
got = libc.mmap(lo, hi - lo, 1 | 4, 0x02 | 0x10, fd, 0)    # PROT_READ|EXEC, MAP_PRIVATE|FIXED, over itself
print("swapped" if got == lo else f"failed {ctypes.get_errno()}", flush=True)
x = 0
while True:
    x += 1
"""


def _loaded_swap_child(tmp_path, preexec=None):
    """_SWAP_CHILD started with a copy of libm as its "kernel's library", and asked to load it:
    (the process, the library, its executable mappings before the load and just after)."""
    import shutil
    from grader.judge.cpusample import exec_maps
    libm = next((p for p in ("/lib/x86_64-linux-gnu/libm.so.6", "/usr/lib/x86_64-linux-gnu/libm.so.6",
                             "/lib64/libm.so.6") if Path(p).is_file()), None)
    if libm is None:
        pytest.skip("no libm to load as the library")
    library = tmp_path / "kernel.so"
    shutil.copy(libm, library)
    proc = subprocess.Popen([sys.executable, "-c", _SWAP_CHILD, str(library)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, preexec_fn=preexec)
    assert proc.stdout.readline().strip() == "ready"
    before = {proc.pid: exec_maps(proc.pid)}
    proc.stdin.write("load\n")
    proc.stdin.flush()
    assert proc.stdout.readline().strip() == "loaded"
    return proc, library, before, {proc.pid: exec_maps(proc.pid)}


def test_the_interpreters_code_mapped_over_itself_from_a_copy_is_foreign(tmp_path):
    """A real process copies its interpreter's executable code to a file and maps it over itself
    at the same addresses (the red team's text_swap_flash does this to libtorch), then spins in
    it. By path the samples are "other" (a file no rule names); by the layout read before its
    library loaded they are foreign: the interpreter's addresses now hold another inode."""
    from grader.judge.cpusample import exec_segments, read_layout
    proc, library, before, after = _loaded_swap_child(tmp_path)
    try:
        layout = read_layout(before, after, str(library), exec_segments(str(library)))
        assert layout is not None and layout.own and layout.loader == proc.pid
        proc.stdin.write("swap\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "swapped"
        sampler = _sampled([proc.pid], 0.5)
        by_path = sampler.counts(str(library))
        sampler.layout = layout
        by_layout = sampler.counts(str(library))
        sampler.close()
    finally:
        proc.kill()
        proc.wait()
    total = sum(by_layout[k] for k in ("own", "torch", "foreign", "other"))
    assert total > 0.5 * 0.5e6 / SAMPLE_US, by_layout
    assert by_path["foreign"] == 0 and by_path["other"] > 0.8 * total, by_path
    assert by_layout["foreign"] > 0.8 * total, by_layout
    assert any(name.startswith("seg.bin over ") for name in by_layout["where"]), by_layout["where"]


def test_the_layout_finds_the_library_by_its_inode_and_never_over_the_harness(tmp_path):
    """read_layout: the library by its path, or by its device and inode where its constructor
    renamed it, one mapping at each of its code segments' offsets (`exec_segments`); a second
    mapping of its file made by its constructor (over the harness's code, or elsewhere to hold
    other bytes) leaves nothing its own; and where no process maps it at all, nothing is its own
    (never the attribution by path, which a rename blinds)."""
    import os
    from grader.judge.cpusample import _classify, read_layout
    lib = tmp_path / "kernel.so"
    lib.write_bytes(b"\x7fELF")
    st = os.stat(lib)
    key = (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
    torch_lib = (0x30000, 0x40000, "/venv/torch/lib/libtorch_cpu.so", (8, 1, 14), 0x1000)
    before = {7: [torch_lib]}
    renamed = {7: [torch_lib, (0x60000, 0x61000, str(tmp_path / "renamed.so"), key, 0x1000)]}
    layout = read_layout(before, renamed, str(lib), frozenset({0x1000}))
    assert layout.own == ((0x60000, 0x61000),) and layout.own_file == key and layout.loader == 7
    # its constructor mapped its file again: over the harness's code, at its code's offset elsewhere
    # (a copy of torch's bytes written over it), or at an offset that holds no code: nothing is its own
    for extra in ((0x30000, 0x40000, str(lib), key, 0x1000), (0x90000, 0x91000, str(lib), key, 0x1000),
                  (0x90000, 0x91000, str(lib), key, 0x0)):
        assert read_layout(before, {7: sorted(renamed[7] + [extra])}, str(lib), frozenset({0x1000})).own == ()
    gone = read_layout(before, {7: [torch_lib]}, str(lib))
    assert gone.own == () and _classify(sorted(renamed[7]), 0x60800, str(lib), gone, 7)[0] == "foreign"
    assert read_layout({}, renamed, str(lib)) is None                 # nothing read before: by path


@pytest.mark.parametrize("scope", ["threads", "cgroup"])
def test_code_mapped_while_the_rounds_run_is_recorded(tmp_path, scope):
    """PERF_RECORD_MMAP2: an executable mapping made while the sampler runs is recorded, with its file
    and what it landed on (a copy mapped over the interpreter's code and swapped back before the maps
    are read would leave no trace in them), per thread and per CPU through the child's cgroup; a
    process that maps nothing records nothing."""
    from grader.isolation.cpugroup import CpuGroup
    from grader.judge.cpusample import read_layout
    group = None
    if scope == "cgroup":
        group, why = CpuGroup.make()
        if group is None or group.kind != "cgroup v2":
            if group is not None:
                group.remove()
            pytest.skip(f"no cgroup v2 group can be made here: {why or group.kind}")
    proc, library, before, after = _loaded_swap_child(tmp_path, group.enter if group else None)
    try:
        try:
            sampler = Sampler([], group=str(group.path)) if group else Sampler([proc.pid])
        except Unavailable as exc:
            pytest.skip(f"perf events cannot be opened here: {exc}")
        sampler.layout = read_layout(before, after, str(library))
        sampler.start()
        time.sleep(0.2)
        sampler.drain()
        quiet = list(sampler.mapped)
        proc.stdin.write("swap\n")
        proc.stdin.flush()
        assert proc.stdout.readline().strip() == "swapped"
        time.sleep(0.2)
        sampler.stop()
        sampler.close()
    finally:
        proc.kill()
        proc.wait()
        if group is not None:
            group.remove()
    assert quiet == []
    (name, over), = [m for m in sampler.mapped if m[0] == "seg.bin"]
    assert "python" in over and sampler.mapped_over == 1, sampler.mapped


def test_code_mapped_over_the_harnesss_is_strict_and_elsewhere_review():
    """_landed_on / mapped_code / mapped_flags: a mapping that lands on a file of the harness's code
    (not its own file again) or the library's is strict (a swap under the samples' feet), counted
    however many harmless mappings come first; one elsewhere review, none nothing at all."""
    from types import SimpleNamespace
    from grader.judge.cpusample import Layout, _landed_on, mapped_code, mapped_flags
    layout = Layout({5: [(0x30000, 0x40000, "/venv/torch/lib/libtorch_cpu.so", (8, 1, 14)),
                         (0x50000, 0x51000, "", (0, 0, 0))]}, 5, ((0x60000, 0x61000),), (8, 2, 99))
    assert _landed_on(layout, 5, 0x31000, 0x32000, (8, 2, 50)) == "libtorch_cpu.so"
    assert _landed_on(layout, 5, 0x60000, 0x61000, (8, 2, 50)) == "the kernel's library"
    assert _landed_on(layout, 5, 0x31000, 0x32000, (8, 1, 14)) == ""          # its own file again
    assert _landed_on(layout, 5, 0x50000, 0x51000, (0, 0, 0)) == ""           # anonymous over anonymous
    assert _landed_on(layout, 5, 0x90000, 0x91000, (8, 2, 51)) == ""
    got = mapped_code(SimpleNamespace(mapped=[("seg.bin", "libtorch_cpu.so")] + [("", "")] * 9,
                                      mapped_count=10, mapped_over=1))
    assert got["count"] == 10 and got["over"] == 1 and got["what"][0] == "seg.bin over libtorch_cpu.so"
    (flag,) = mapped_flags(256, {"mapped": got})
    assert flag["tier"] == "strict" and "seg.bin over libtorch_cpu.so" in flag["detail"]
    (flag,) = mapped_flags(256, {"mapped": mapped_code(SimpleNamespace(mapped=[("helper.so", "")], mapped_count=1,
                                                                        mapped_over=0))})
    assert flag["tier"] == "review"
    assert mapped_flags(256, {"mapped": mapped_code(SimpleNamespace(mapped=[], mapped_count=0, mapped_over=0))}) == []
    assert mapped_flags(256, {}) == []


_WRITE_CHILD = r"""
import ctypes, sys
best = None
for line in open("/proc/self/maps"):
    f = line.split()
    lo, hi = (int(x, 16) for x in f[0].split("-"))
    if "x" in f[1] and len(f) > 5 and "python" in f[5] and (best is None or hi - lo > best[1] - best[0]):
        best = (lo, hi)
if sys.argv[1] == "write":                           # its own code's first page, written back as it was
    page = ctypes.string_at(best[0], 4096)
    with open("/proc/self/mem", "r+b", buffering=0) as mem:
        mem.seek(best[0])
        mem.write(page)
print("done", flush=True)
sys.stdin.readline()
"""


@pytest.mark.parametrize("write", [False, True])
def test_code_written_in_memory_is_seen_in_its_pages(write):
    """modified_code: a process that writes over its own code through /proc/self/mem (no mprotect,
    no mapping made: nothing for PERF_RECORD_MMAP2), even with the bytes it held, leaves private
    dirty pages in a file's executable mapping; a process that runs its code as read holds none."""
    from grader.judge.cpusample import modified_code, modified_flags
    proc = subprocess.Popen([sys.executable, "-c", _WRITE_CHILD, "write" if write else "read"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "done"
        got = modified_code([proc.pid])
    finally:
        proc.kill()
        proc.wait()
    if not write:
        assert got == [] and modified_flags(256, {"modified_code": got}) == []
        return
    assert len(got) == 1 and "python" in got[0] and f"(pid {proc.pid})" in got[0], got
    (flag,) = modified_flags(256, {"modified_code": got})
    assert flag["tier"] == "strict"
