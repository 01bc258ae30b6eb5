"""Shared fixtures: the fast test config, the fixture submissions, GPU skipping.

Compiled kernels are cached by source hash under the grader's cache folder, so each
fixture is compiled once per machine and reused across tests and runs.
"""
import faulthandler
import os
import signal
from pathlib import Path

import pytest

from grader.core import config
from grader.run import grade

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
SUBMISSIONS = TESTS / "submissions"
# the template as shipped (grader/pristine/, kept equal to the committed student_template/ by
# tests/test_run.py): a student who edits student_template/, as the handout says, changes no test
TEMPLATE_DIR = REPO / "grader" / "pristine"
FAST_CONFIG = TESTS / "fast_config.toml"

if os.environ.get("PYTEST_STACKS"):
    # tools/gpu_session.sh sends SIGUSR1 just before a test file's time limit: every thread's
    # stack goes to this file, wherever pytest is (a test, a fixture's teardown, the summary)
    _STACKS = open(os.environ["PYTEST_STACKS"], "w")  # noqa: SIM115 (open for the whole run)
    faulthandler.register(signal.SIGUSR1, file=_STACKS, all_threads=True)


def _cuda_available() -> bool:
    try:
        import torch
        return torch.cuda.is_available()
    except Exception:  # noqa: BLE001
        return False


def pytest_collection_modifyitems(config, items):
    if _cuda_available():
        return
    skip = pytest.mark.skip(reason="needs a CUDA GPU (run `pytest -m gpu` on the GPU machine)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


@pytest.fixture(scope="session")
def cfg():
    return config.load(FAST_CONFIG)


@pytest.fixture(scope="session")
def grade_cpu(cfg):
    """grade_cpu(path, bench=False) -> GradeResult, memoised per session."""
    memo = {}

    def run(path, bench=False):
        key = (str(path), bench)
        if key not in memo:
            memo[key] = grade(path, cfg, backend="cpu", bench=bench)
        return memo[key]
    return run


# ---- CPU profile exports made up for the tests (tests/evidence, tests/report) ----------------

def cpu_profile_row(**over) -> dict:
    """One row of a `<label>_cpu.csv` (grader/evidence/cpu_profile.py): made-up numbers."""
    from grader.evidence import cpu_profile as cp
    row = {"format": cp.FORMAT, "label": "before", "kernel": "attention (_CPP_SRC)", "model": "naive", "B": 1,
           "H": 8, "S": 1024, "D": 64, "threads": 4, "reps": 9, "median_ms": 100.0, "min_ms": 95.0, "iqr_ms": 2.0,
           "max_err": 1e-6, "model_flops": "", "model_bytes": "", "counted_flops": "", "counted_bytes": "",
           "flops_counter": "", "bytes_counter": "", "counter_note": "no counters", "cpu": "Test CPU",
           "cores": 4, "peak_flop_per_s": 200e9, "dram_bytes_per_s": 20e9, "ceilings_source": "test",
           "load_before": 0.1, "load_after": 0.2, "measured_at": "2026-11-23T12:00:00+0000"}
    return {**row, **over}


def write_cpu_profile(path: Path, rows: list[dict]) -> Path:
    """A `<label>_cpu.csv` from rows: made-up numbers, no measurement."""
    import csv
    import io

    from grader.evidence import cpu_profile as cp
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cp.COLUMNS, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    path.write_text(buf.getvalue())
    return path


# ---- real Nsight Compute exports with metrics taken out (tests/analysis) ---------------------

# The L2→SM columns `make profile` asks for since issue 28, item 1: exactly the columns the H200
# exports taken before that (2026-11-24) lacked.
L2_TO_SM_COLUMNS = r"^(l1tex__m_xbar2l1tex_read_sectors|lts__t_sectors_srcunit_tex_op_read)\.(avg|max|min|sum)$"


def without_columns(export: Path, out: Path, pattern: str = L2_TO_SM_COLUMNS) -> Path:
    """A real `--page raw` export with the metric columns whose name matches `pattern` removed,
    written to `out`: an export as Nsight Compute writes it when those metrics were not asked for."""
    import csv
    import re
    rows = list(csv.reader(export.read_text().splitlines()))
    keep = [i for i, name in enumerate(rows[0]) if not re.search(pattern, name)]
    assert len(keep) < len(rows[0]), f"{export.name} has no column matching {pattern}"
    with out.open("w", newline="") as f:
        csv.writer(f, quoting=csv.QUOTE_ALL, lineterminator="\n").writerows([r[i] for i in keep] for r in rows)
    return out
