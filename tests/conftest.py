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
