"""grader/evidence/profile.py: without ncu or a GPU, one clear message with the exact commands."""
import subprocess
import sys

import pytest

from grader.core.config import load
from grader.evidence.profile import METRICS, ProfileError, ncu_commands, profile, profiles_dir

from conftest import REPO, SUBMISSIONS


def test_commands_export_both_pages_in_base_units():
    run, details, raw = ncu_commands("python3 app.py", "before")
    assert "--clock-control none" in run and "--nvtx-include profile/" in run
    assert "--section SpeedOfLight_RooflineChart" in run and "sm__sass_thread_inst_executed_op_ffma_pred_on.sum" in run
    assert details.endswith("--page details --print-units base > profiles/before_details.csv")
    assert raw.endswith("--page raw --print-units base > profiles/before_raw.csv")
    assert len(METRICS) == len(set(METRICS))
    assert "--cache-control" not in run and "--replay-mode" not in run      # cold: ncu's default flush


def test_warm_commands_keep_the_caches_and_replay_the_whole_program():
    run, details, raw = ncu_commands("python3 -m grader.evidence.profile_driver a.py", "after", warm=True)
    assert "--cache-control none --replay-mode application" in run
    assert "--nvtx-include profile_warm/" in run and run.endswith("a.py --warm")
    assert "-o profiles/after_warm " in run and details.endswith("> profiles/after_warm_details.csv")
    assert raw.endswith("> profiles/after_warm_raw.csv")


def test_the_driver_names_its_outer_range_after_the_export():
    """The parser tells the exports apart by the driver's outer NVTX range (grader/analysis/ncu.py)."""
    from grader.analysis.ncu import CACHE_RANGES
    from grader.evidence.profile_driver import OUTER_RANGE
    assert OUTER_RANGE == {"cold": "profile", "warm": "profile_warm"}
    assert {CACHE_RANGES[name] for name in OUTER_RANGE.values()} == {"cold", "warm"}


def test_a_label_ending_in_warm_is_refused():
    with pytest.raises(ProfileError, match="warm exports"):
        profile(REPO / "reference" / "fused.cu", load(), label="after_warm")


def test_profiles_folder_is_inside_a_folder_submission(tmp_path):
    assert profiles_dir(tmp_path) == tmp_path / "profiles"
    assert profiles_dir(tmp_path / "attention.py") == tmp_path / "profiles"


def test_cpu_only_submission_is_refused_with_a_reason():
    # (without --backend cuda it is profiled on the CPU instead: tests/evidence/test_cpu_profile.py)
    with pytest.raises(ProfileError, match="no _CUDA_SRC.*make profile BACKEND=cpu"):
        profile(SUBMISSIONS / "correct" / "scalar_loop.py", load(), backend="cuda")


@pytest.mark.skipif(subprocess.run(["which", "ncu"], capture_output=True).returncode == 0,
                    reason="ncu is installed here")
def test_without_ncu_the_message_gives_the_commands():
    proc = subprocess.run([sys.executable, "-m", "grader", "profile", str(REPO / "reference" / "fused.cu")],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert "ncu (Nsight Compute) is not installed here" in proc.stderr
    assert "--page raw --print-units base" in proc.stderr and "make profile SUBMISSION=" in proc.stderr
    assert "--cache-control none" in proc.stderr and "after_warm_raw.csv" in proc.stderr
