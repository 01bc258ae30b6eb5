"""The Gradescope autograder built and run for real: tools/gradescope/emulate.py builds the
image from the zip in a fresh debootstrap'd root (setup.sh as Gradescope runs it), then runs
run_autograder on a known class in memory cgroups of Gradescope's default (768 MB), of the
smallest size the grader accepts (MIN_MB) and of the size INSTRUCTORS.md recommends, and
checks every results.json and the measured memory against the budget in grader/course/gradescope.py.

Minutes, root and a cgroup-v1 memory controller: it runs only when GRADER_GRADESCOPE_IMAGE=1
(`sudo GRADER_GRADESCOPE_IMAGE=1 .venv/bin/python -m pytest -s tests/course/test_gradescope_image.py`).
Measured on the 2-core CPU machine: ~7 minutes (base root 24 s once, cached under
/var/cache/gradescope-emulate; image 77 s; 15 grades).
"""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.course import gradescope as gs
from conftest import REPO

EMULATE = REPO / "tools" / "gradescope" / "emulate.py"
WHEELS = Path(os.environ.get("GRADER_TORCH_WHEELS", "/opt/wheels"))


def _missing() -> str | None:
    if os.environ.get("GRADER_GRADESCOPE_IMAGE") != "1":
        return "builds the Gradescope image in a fresh root (minutes): set GRADER_GRADESCOPE_IMAGE=1 to run it"
    if os.geteuid() != 0:
        return "needs root (debootstrap, mounts, cgroups)"
    for tool in ("debootstrap", "bwrap", "mount"):
        if not shutil.which(tool):
            return f"needs {tool} (apt-get install debootstrap bubblewrap)"
    if not os.access("/sys/fs/cgroup/memory", os.W_OK):
        return "needs a writable cgroup-v1 memory controller at /sys/fs/cgroup/memory"
    if not list(WHEELS.glob("torch-*-cp311-*.whl")):
        return f"needs a CPU torch wheel for Python 3.11 in {WHEELS} (GRADER_TORCH_WHEELS)"
    return None


pytestmark = pytest.mark.skipif(_missing() is not None, reason=_missing() or "")

LEAN = ["tests/submissions/correct/scalar_loop.py", "reference/fused.cpp", "tests/submissions/wrong/missing_scale.py",
        "tests/submissions/escape/memory_hog.py"]


@pytest.fixture(scope="module")
def emulated(tmp_path_factory):
    """emulate.py's summary: the image built once, the class graded in three container sizes."""
    out = tmp_path_factory.mktemp("gradescope-image")
    text = (REPO / "tests" / "submissions" / "correct" / "scalar_loop.py").read_text()
    head, _, tail = text.rpartition('\n"""')
    full = out / "full_headers.py"           # needs the full torch headers (a build of ~1.8 GB)
    binding = 'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("attention", &attention); }'
    full.write_text(f'{head}\n{binding}\n"""{tail}')
    sizes = f"768,{gs.MIN_MB},{gs.RECOMMENDED_MB}"
    proc = subprocess.run([sys.executable, str(EMULATE), "--out", str(out), "--memory", sizes, "--wheels", str(WHEELS),
                           "--cache", os.environ.get("GRADER_EMULATE_CACHE", "/var/cache/gradescope-emulate"),
                           *LEAN, str(full)], capture_output=True, text=True, timeout=3000)
    print(proc.stdout[-6000:])
    summary = json.loads((out / "summary.json").read_text())
    assert proc.returncode == 0 and summary.get("setup_status") == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return summary


def _runs(summary: dict, mb: int) -> dict:
    return {r["submission"]: r for r in summary["runs"] if r["memory_mb"] == mb}


def test_the_image_builds_from_the_zip_on_a_bare_root(emulated):
    assert emulated["setup_status"] == 0 and emulated["python"].startswith("Python 3.1")
    print(f"setup.sh: {emulated['setup_s']} s, image {emulated['image_mib']} MiB, {emulated['python']}")


def test_every_result_is_gradescopes_format_and_no_process_was_oom_killed(emulated):
    from test_gradescope import _valid
    for run in emulated["runs"]:
        _valid(run["results"])
        assert run["status"] == 0 and run["oom_kills"] == 0, (run["submission"], run["memory_mb"], run["stdout_tail"])


def test_gradescopes_default_container_grades_nothing_and_says_why(emulated):
    for name, run in _runs(emulated, 768).items():
        r = run["results"]
        assert r["extra_data"]["reason"] == "container_memory" and r["score"] == 0, (name, r["output"])
        assert "not a verdict on your code" in r["output"] and run["max_usage_mib"] < 768


@pytest.mark.parametrize("mb", [gs.MIN_MB, gs.RECOMMENDED_MB])
def test_the_class_grades_in_the_accepted_containers(emulated, mb):
    runs = _runs(emulated, mb)
    verdicts = {name: run["results"]["extra_data"]["verdict"] for name, run in runs.items()}
    assert verdicts["scalar_loop"] == verdicts["fused"] == "ok" and verdicts["missing_scale"] == "wrong_answer"
    assert runs["scalar_loop"]["results"]["score"] > 45 and runs["fused"]["results"]["score"] > 45
    hog = runs["memory_hog"]["results"]          # stopped by the grader's limit, before the container's
    assert verdicts["memory_hog"] == "runtime_error" and "used more than" in hog["output"], hog["output"]
    full = runs["full_headers"]["results"]
    if mb >= gs.RECOMMENDED_MB:
        assert verdicts["full_headers"] == "ok", full["output"]
    else:                                        # the build does not fit: the container's memory, said so
        assert full["extra_data"]["reason"] == "compile_memory" and "not your kernel" in full["output"]


def test_the_memory_budget_is_what_was_measured(emulated):
    """The judge stays within JUDGE_MB while the worker exists; a lean-header build fits the
    kernel's share of MIN_MB, a full-header build that of RECOMMENDED_MB."""
    table = []
    for run in emulated["runs"]:
        if run["memory_mb"] == 768:
            continue
        judge = run["judge_rss_with_worker_mib"]
        assert judge <= gs.JUDGE_MB, (run["submission"], judge)
        table.append(f"{run['submission']:>14} {run['memory_mb']:>5} MB: {run['results']['extra_data']['verdict']:>13}"
                     f" max usage {run['max_usage_mib']:>5} MiB, rss+shmem {run['peak_rss_shmem_mib']:>5} MiB,"
                     f" submission PSS {run['peak_submission_pss_mib']:>5} MiB, judge {judge:>4} MiB,"
                     f" {run['seconds']} s")
    print("\n".join(table))
    for mb in (gs.MIN_MB, gs.RECOMMENDED_MB):
        runs = _runs(emulated, mb)
        for name in ("scalar_loop", "fused", "missing_scale"):
            assert runs[name]["peak_submission_pss_mib"] <= gs.Container(gs.MIN_MB).kernel_mb - 64, name
    assert _runs(emulated, gs.RECOMMENDED_MB)["full_headers"]["peak_submission_pss_mib"] <= \
        gs.Container(gs.RECOMMENDED_MB).kernel_mb - 256
