"""`check-compile`: the reference .cu files and CUDA submissions compile with nvcc on a
machine without a GPU (CI has nvcc and the CPU torch wheel), errors mapped to .py lines."""
import subprocess
import sys

import pytest

from grader import compile as build
from grader.parse import parse

from conftest import REPO, SUBMISSIONS


def _have_nvcc() -> bool:
    try:
        return bool(build._nvcc())
    except FileNotFoundError:
        return False


needs_nvcc = pytest.mark.skipif(not _have_nvcc(), reason="nvcc is not installed here")


@needs_nvcc
@pytest.mark.parametrize("name", ["naive.cu", "fused.cu", "fused_tc.cu"])
def test_reference_cuda_kernels_compile(cfg, name):
    result = build.compile_only(parse(REPO / "reference" / name).sources["cuda"], cfg)
    assert result.ok, result.log


@needs_nvcc
def test_cuda_compile_error_points_at_the_py_line(cfg):
    src = parse(SUBMISSIONS / "invalid" / "cuda_compile_error.py").sources["cuda"]
    result = build.compile_only(src, cfg)
    assert not result.ok
    assert "cuda_compile_error.py(10): error" in result.log, result.log
    assert 'identifier "undeclared_value" is undefined' in result.log
    assert "   10 |         out[i] = undeclared_value;" in result.log   # the line, echoed


def test_cpp_compile_only_maps_lines_too(cfg):
    result = build.compile_only(parse(SUBMISSIONS / "invalid" / "compile_error.py").sources["cpp"], cfg)
    assert not result.ok and "compile_error.py:10:" in result.log


@needs_nvcc
def test_cli_exit_codes():
    run = lambda path: subprocess.run([sys.executable, "-m", "grader", "check-compile", str(path),  # noqa: E731
                                       "--only", "cuda"], cwd=REPO, capture_output=True, text=True)
    bad = run(SUBMISSIONS / "invalid" / "cuda_compile_error.py")
    assert bad.returncode == 11 and "FAILED" in bad.stdout
    assert run(SUBMISSIONS / "gpu" / "never_launches.py").returncode == 0
