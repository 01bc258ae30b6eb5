"""grader/evidence/cpu_profile.py: perf's output parsed, counters probed (a stand-in perf), the
enable/disable window counts only the timed calls (real perf, a software event), the CSV
read back, and a CPU student's before/after pair earning the rubric's profiler points."""
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from grader.evidence import cpu_profile as cp
from grader.core.config import load

from conftest import FAST_CONFIG, REPO, SUBMISSIONS, cpu_profile_row as _row, write_cpu_profile as write_rows

# `perf stat -x,` output in the format perf documents (value, unit, event, run time, %, ...);
# written by hand: this machine's virtual CPU has no hardware counters to record a real one
PERF_TEXT = """# started on Mon Nov 23 15:09:10 2026

1200000,,fp_arith_inst_retired.scalar_single:u,1000,100.00,,
300000,,cpu_core/fp_arith_inst_retired.512b_packed_single/,1000,100.00,,
200000,,cpu_atom/fp_arith_inst_retired.512b_packed_single/,1000,100.00,,
<not supported>,,LLC-store-misses,0,100.00,,
<not counted>,,fp_arith_inst_retired.128b_packed_single,0,0.00,,
264.59,msec,task-clock,264592387,100.00,0.102,CPUs utilized
"""


def test_parse_perf():
    counts = cp.parse_perf(PERF_TEXT)
    assert counts["fp_arith_inst_retired.scalar_single"] == 1200000
    assert counts["fp_arith_inst_retired.512b_packed_single"] == 500000     # two PMUs of a hybrid CPU summed
    assert counts["LLC-store-misses"] is None and counts["fp_arith_inst_retired.128b_packed_single"] is None
    assert counts["task-clock"] == pytest.approx(264.59)


def test_model_for_label_and_declared():
    assert cp.model_for("before")[0] == "naive" and cp.model_for("my_naive_v2")[0] == "naive"
    assert cp.model_for("after")[0] == "fused" and cp.model_for("tiled")[1].startswith("assumed")
    assert cp.model_for("after", "naive") == ("naive", "declared")
    with pytest.raises(cp.CpuProfileError, match="use naive or fused"):
        cp.model_for("x", "blocked")


def _fake_perf(tmp_path: Path, body: str) -> str:
    """A stand-in perf: a shell script printing `body` on stderr, as perf stat does."""
    path = tmp_path / "perf"
    path.write_text(f"#!/bin/sh\ncat >&2 <<'EOF'\n{body}\nEOF\n" + ("exit 129\n" if "syntax error" in body else ""))
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return str(path)


def test_probe_finds_the_counter_sets_or_says_why(tmp_path):
    amd = _fake_perf(tmp_path, "5,,fp_ret_sse_avx_ops.all,10,100.00,,\n7,,LLC-load-misses,10,100.00,,\n"
                               "3,,LLC-store-misses,10,100.00,,\n<not supported>,,ls_any_fills_from_sys.dram_io_all,0,100.00,,")
    flops, moved, note = cp.probe(amd)
    # the stand-in prints every event whatever is asked: the Intel set is missing its other events
    assert flops[1] == {"fp_ret_sse_avx_ops.all": 1} and "LLC-load-misses" in moved[1] and note == ""
    vm = _fake_perf(tmp_path, "<not supported>,,fp_ret_sse_avx_ops.all,0,100.00,,")
    assert cp.probe(vm)[:2] == (None, None) and "exposes no FLOP and no traffic counters" in cp.probe(vm)[2]
    denied = _fake_perf(tmp_path, "Error:\nAccess to performance monitoring and observability operations is "
                                  "limited.\nConsider adjusting /proc/sys/kernel/perf_event_paranoid setting")
    assert "not permitted" in cp.probe(denied)[2]
    assert "not installed" in cp.probe(None)[2] or shutil.which("perf")


def test_read_back_and_placed_with_each_model(tmp_path):
    path = write_rows(tmp_path / "before_cpu.csv", [_row(), _row(S=512, median_ms=25.0)])
    assert cp.is_cpu_profile(path)
    recs = cp.read_csv(path)
    assert [r["S"] for r in recs] == [1024, 512] and recs[0]["profile"] == "before" and recs[0]["profiler"] == "cpu"
    naive_flops, naive_bytes = cp.model_cost("naive", 1, 8, 1024, 64)
    assert recs[0]["ai_dram"] == pytest.approx(naive_flops / naive_bytes) and recs[0]["bytes_from"] == "model (naive)"
    fused = cp.placed(recs[0], "fused")
    assert fused["ai_dram"] > 10 * recs[0]["ai_dram"]                  # the same run, the fused byte count
    counted = cp.read_csv(write_rows(tmp_path / "c_cpu.csv", [_row(counted_flops=3e9, counted_bytes=1e8)]))[0]
    assert counted["ai_dram"] == pytest.approx(30) and counted["bytes_from"] == "counters"
    assert counted["flop_per_s"] == pytest.approx(3e10) and counted["bound"].startswith("compute-bound")


def test_a_broken_file_is_named(tmp_path):
    path = write_rows(tmp_path / "x_cpu.csv", [_row(median_ms="fast")])
    with pytest.raises(cp.CpuProfileError, match="x_cpu.csv line 2"):
        cp.read_csv(path)
    from grader.evidence.exports import read_folder
    kernels, notes = read_folder(tmp_path)
    assert kernels == () and "x_cpu.csv line 2" in notes[0]


def _perf_counts_task_clock() -> bool:
    perf = shutil.which("perf")
    if not perf:
        return False
    proc = subprocess.run([perf, "stat", "-x", ",", "-e", "task-clock", "--", "true"], capture_output=True, text=True)
    return proc.returncode == 0 and cp.parse_perf(proc.stderr).get("task-clock") is not None


@pytest.mark.skipif(not _perf_counts_task_clock(), reason="needs perf with the task-clock software event")
def test_the_counting_window_holds_only_the_timed_calls(tmp_path):
    """perf stat --control with task-clock (CPU milliseconds, a software event every Linux
    has) in place of a hardware counter: per timed call it must be about the call's time,
    not the seconds the child spends importing torch and loading the kernel."""
    folder = tmp_path / "ada"
    folder.mkdir()
    shutil.copy(SUBMISSIONS / "correct" / "scalar_loop.py", folder / "attention.py")
    cfg = load(FAST_CONFIG)
    shape = cfg.bench_shapes[-1]
    timings, counts = cp._run_size(str(folder), cfg, shape, 1, {"task-clock": 1}, 300)
    per_call_ms = counts["task-clock"] / timings["reps"]
    assert 0.3 * timings["min_ms"] < per_call_ms < 3 * timings["median_ms"] + 5, (per_call_ms, timings)


def test_a_cpu_student_earns_the_profiler_points(tmp_path):
    """make profile LABEL=before on the naive kernel, LABEL=after on a fused one, as a CPU
    student does: both exports read back and the rubric gives both profiler items."""
    from grader.score import gradebook
    from grader.core.config import load_rubric
    from grader.evidence.exports import read_folder
    from grader.build.parse import parse
    folder = tmp_path / "ada"
    folder.mkdir()
    shutil.copy(SUBMISSIONS / "correct" / "scalar_loop.py", folder / "attention.py")
    bin_dir = tmp_path / "bin"                  # a perf that sees no counters: the measured fallback everywhere
    bin_dir.mkdir()
    _fake_perf(bin_dir, "<not supported>,,fp_ret_sse_avx_ops.all,0,100.00,,")

    def profile(label):
        proc = subprocess.run([sys.executable, "-m", "grader", "profile", str(folder), "--label", label,
                               "--config", str(FAST_CONFIG), "--backend", "cpu"],
                              cwd=REPO, capture_output=True, text=True, timeout=900,
                              env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"})
        assert proc.returncode == 0, proc.stdout + proc.stderr
        return proc
    before = profile("before")
    assert "before_cpu.csv" in before.stdout and "model (naive) / model (naive)" in before.stdout
    assert "exposes no FLOP and no traffic counters" in before.stdout
    fused = (REPO / "reference" / "fused.cpp").read_text()
    (folder / "attention.py").write_text(f'_CPP_SRC = r"""\n{fused}"""\n')
    profile("after")
    records, notes = read_folder(folder / "profiles")
    assert notes == () and {r["profile"] for r in records} == {"before", "after"}
    rubric, _ = load_rubric(FAST_CONFIG)
    doc = {"verdict": "ok", "message": "", "checks": [], "config": {"configs": [], "tolerance": 1e-3},
           "bench": [], "profiles": list(records), "report_md": None,
           "sources": {k: src.text for k, src in parse(folder).sources.items()}}
    # each export records whose kernel it is: the naive one before, this submission's after
    assert {r["source"] for r in records} == {parse(folder).sources["cpp"].digest,
                                               parse(SUBMISSIONS / "correct" / "scalar_loop.py").sources["cpp"].digest}
    items = {i.name: i for i in gradebook.score_items(doc, rubric)}
    assert items["profiler evidence"].score == rubric.profile_points > 0
    assert items["profiler evidence: before and after"].score == rubric.before_after_points > 0


def test_a_wrong_kernel_is_not_profiled(tmp_path):
    folder = tmp_path / "bob"
    folder.mkdir()
    shutil.copy(SUBMISSIONS / "wrong" / "missing_scale.py", folder / "attention.py")
    proc = subprocess.run([sys.executable, "-m", "grader", "profile", str(folder), "--label", "before", "--config",
                           str(FAST_CONFIG), "--backend", "cpu"], cwd=REPO, capture_output=True, text=True,
                          timeout=900)
    assert proc.returncode == 2 and "the output is wrong" in proc.stderr and "Traceback" not in proc.stderr
    assert not (folder / "profiles" / "before_cpu.csv").exists()
