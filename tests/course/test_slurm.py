"""A real Slurm: the documented array (tools/slurm/grade.sbatch, three shards) and the
dependent collect job (tools/slurm/collect.sbatch) on a single-node cluster started on this
machine, against a one-machine batch of the same class (tools/slurm/check_class.py)."""
import csv
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "tools" / "slurm"))
import check_class  # noqa: E402

HAVE_SLURM = all(shutil.which(t) for t in ("munged", "slurmctld", "slurmd", "sbatch", "sinfo"))
# a subset of the CPU fixture class that keeps CI's run short (each submission is graded
# twice, ~1 minute each on a loaded 2-core machine) and still holds every case the merge must
# get right, spread over the three shards (alice+kim, carol+zed, dave): hidden-config points
# (alice, carol, kim), a late submission that scores (kim: -10%), one past the late limit
# (carol, handed in as a zip), no timestamp and a compile error (dave), a hostile zip (zed)
SUBSET = "alice,carol,dave,kim,zed"


@pytest.mark.skipif(not HAVE_SLURM, reason="needs Slurm: apt install slurm-wlm munge")
@pytest.mark.skipif(os.geteuid() != 0, reason="starting slurmd needs root")
def test_the_slurm_array_merges_into_the_one_machine_gradebook(tmp_path):
    work = tmp_path / "work"
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "slurm" / "check_class.py"), str(work),
                           "--class-subset", SUBSET], cwd=REPO, capture_output=True, text=True, timeout=2400,
                          env={**os.environ, "PYTHON": sys.executable})
    print(proc.stdout[-4000:], proc.stderr[-2000:])
    assert proc.returncode == 0 and "equals the one-machine gradebook" in proc.stdout
    with open(work / "grid" / "all" / "grades.csv", newline="") as f:
        rows = {r["submission"]: r for r in csv.DictReader(f)}
    assert sorted(rows) == sorted(SUBSET.split(","))
    alice, kim = rows["alice"], rows["kim"]
    assert float(alice["max_score"]) == 105 and alice["hidden1_passed"] == "True"      # the hidden config's 5
    assert float(alice["score"]) == 105                                                 # one wide performance tier
    assert kim["late_days"] == "1" and float(kim["score"]) == pytest.approx(0.9 * (45 + 5 + 25), abs=0.01)
    assert float(rows["carol"]["late_penalty"]) == 1 and rows["carol"]["hidden1_passed"] == "True"
    assert "warning:no_timestamp" in rows["dave"]["flags"] and "no_timestamp" not in alice["flags"]
    for k in (1, 2, 3):
        assert (work / "grid" / f"shard-{k}" / "grading.json").is_file()


def test_the_comparison_ignores_timings_and_finds_a_real_difference(tmp_path):
    cols = "submission,status,score,student_ms_S64,slowdown_S64,compile_seconds,flags,message\n"
    (tmp_path / "a.csv").write_text(cols + "x,ok,50,1.0,2.0,3.1,review:too_fast;warning:no_timestamp,m\n")
    (tmp_path / "b.csv").write_text(cols + "x,ok,50,9.0,8.0,0.2,warning:no_timestamp,m\n")
    a, b = check_class.comparable(tmp_path / "a.csv"), check_class.comparable(tmp_path / "b.csv")
    assert check_class.differences(a, b) == []
    (tmp_path / "c.csv").write_text(cols + "x,ok,45,1.0,2.0,3.1,warning:no_timestamp,m\ny,ok,1,,,,,\n")
    c = check_class.comparable(tmp_path / "c.csv")
    assert check_class.differences(a, c) == ["x.score: one machine '50', shards '45'",
                                             "y: only in the merged shards"]


def test_the_check_config_has_one_performance_tier(tmp_path):
    from grader.core import config
    rubric, deadline = config.load_rubric(check_class.fast_config(tmp_path))
    assert rubric.performance == ((1e9, 25.0),) and deadline is not None
    assert rubric.hidden_points == 5


def test_the_job_scripts_take_batch_flags_without_a_hidden_file_and_name_a_missing_array(tmp_path):
    """Issue 33's walkthrough (S2): with no hidden file, the first batch flag was taken as the
    hidden file (`--hidden --timestamps`), and a collect with no shard folder named the
    unexpanded glob. The scripts run here as a Slurm task would run them, without Slurm."""
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "ann.py").write_text((REPO / "tests" / "submissions" / "invalid" / "syntax_error.py").read_text())
    (subs / "times.csv").write_text("submission,submitted_at\nann,2026-12-01T10:00:00+00:00\n")
    env = {**os.environ, "PYTHON": sys.executable, "GRADER_REPO": str(REPO), "SLURM_ARRAY_TASK_ID": "1",
           "SLURM_ARRAY_TASK_COUNT": "1", "SLURM_CPUS_PER_TASK": "1"}
    env.pop("CUDA_VISIBLE_DEVICES", None)
    root = tmp_path / "root"
    run = lambda script, *a: subprocess.run(["bash", str(REPO / "tools" / "slurm" / script), *a], cwd=tmp_path,  # noqa: E731
                                            env=env, capture_output=True, text=True, timeout=600)
    empty = run("collect.sbatch", str(root))
    assert empty.returncode == 2 and f"no shard folder in {root}" in empty.stderr and "*" not in empty.stderr
    proc = run("grade.sbatch", str(subs), str(root), "--timestamps", str(subs / "times.csv"),
               "--config", str(REPO / "tests" / "fast_config.toml"), "--no-pdf")
    assert proc.returncode == 0, proc.stderr[-2000:]
    proc = run("collect.sbatch", str(root), "--no-pdf")
    assert proc.returncode == 0, proc.stderr[-2000:]
    with open(root / "all" / "grades.csv", newline="") as f:
        [row] = list(csv.DictReader(f))
    assert row["submission"] == "ann" and row["status"] == "invalid_submission"
    assert "no_timestamp" not in row["flags"]           # the flags reached the batch
