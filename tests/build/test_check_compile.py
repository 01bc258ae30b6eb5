"""`check-compile`: the reference .cu files and CUDA submissions compile with nvcc on a
machine without a GPU (CI has nvcc and the CPU torch wheel), errors mapped to .py lines."""
import os
import re
import subprocess
import sys

import pytest

from grader.build import compile as build
from grader.build.parse import parse

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
    # the errors shown are the full tier's: nothing in them points into the grader's own headers
    assert result.tier == "full" and "prelude" not in result.log and "grader_proxy" not in result.log
    assert "the grader's proxy headers did not compile it" in result.fallback.splitlines()[0]


def test_cpp_compile_only_maps_lines_too(cfg):
    result = build.compile_only(parse(SUBMISSIONS / "invalid" / "compile_error.py").sources["cpp"], cfg)
    assert not result.ok and "compile_error.py:10:" in result.log


@needs_nvcc
def test_cli_exit_codes():
    run = lambda path: subprocess.run([sys.executable, "-m", "grader", "check-compile", str(path),  # noqa: E731
                                       "--only", "cuda"], cwd=REPO, capture_output=True, text=True)
    bad = run(SUBMISSIONS / "invalid" / "cuda_compile_error.py")
    assert bad.returncode == 11 and "FAILED" in bad.stdout
    good = run(SUBMISSIONS / "gpu" / "never_launches.py")
    assert good.returncode == 0
    assert re.search(r"^  ok \(proxy headers, \d+\.\d s\)$", good.stdout, re.M), good.stdout
    assert "fallback" not in good.stdout


@needs_nvcc
def test_cli_prints_the_tier_the_time_and_each_fallback(tmp_path):
    """A source that falls off the proxy headers says so, in one line naming its .py line,
    before the slower build; then the tier that compiled it and the time."""
    sub = tmp_path / "attention.py"
    sub.write_text('"""A kernel whose host code sums a tensor (not in the proxy headers)."""\n'
                   '_CUDA_SRC = r"""\n#include <torch/extension.h>\n'
                   'torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {\n'
                   '    auto total = q.sum();\n    return torch::empty_like(q);\n}\n"""\n')
    env = dict(os.environ, GRADER_CACHE=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-m", "grader", "check-compile", str(sub)], cwd=REPO, env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    fallback = [ln for ln in lines if ln.startswith("  fallback: ")]
    assert len(fallback) == 1, proc.stdout
    assert fallback[0].startswith("  fallback: attention.py:5: the grader's proxy headers did not compile it")
    assert 'has no member "sum"' in fallback[0] and "the lean torch headers (typically" in fallback[0]
    assert re.fullmatch(r"  ok \(lean headers, \d+\.\d s\)", lines[lines.index(fallback[0]) + 1])


TORCH_CUDA_HEADERS_NOT_ALONE = {
    "ATen/cuda/ApplyGridUtils.cuh",        # defines what CUDAApplyUtils.cuh defines: not both in one file
    "ATen/cuda/cub.cuh", "ATen/cuda/cub.h", "ATen/cuda/cub-RadixSortPairs.cuh",   # need torch's -DCUB_WRAPPED_NAMESPACE
    "ATen/cuda/jiterator_impl.h",          # needs nvcc's --extended-lambda, as in torch's own build
}


@needs_nvcc
def test_torch_cuda_headers_compile_where_the_toolkit_has_only_nvcc(cfg):
    """On a machine whose CUDA toolkit lacks cuBLAS/cuSPARSE/cuSOLVER/cuDNN headers (and a
    CPU wheel of torch), the stand-ins (grader/build/prelude_cpu_wheel/) cover everything torch's
    CUDA headers include: every ATen/cuda and c10/cuda header compiles in the full tier."""
    import tempfile
    from pathlib import Path

    from torch.utils.cpp_extension import include_paths

    from grader.build.parse import Source
    root = Path(include_paths()[0])
    headers = sorted(str(p.relative_to(root)) for pattern in ("ATen/cuda/*.h", "ATen/cuda/*.cuh", "c10/cuda/*.h")
                     for p in root.glob(pattern))
    headers += ["ATen/cudnn/Handle.h", "ATen/cudnn/Types.h", "ATen/cudnn/Utils.h"]
    headers = [h for h in headers if h not in TORCH_CUDA_HEADERS_NOT_ALONE]
    assert "ATen/cuda/CUDAContext.h" in headers and len(headers) > 40
    text = "\n".join(["#include <torch/extension.h>", *(f"#include <{h}>" for h in headers),
                      "torch::Tensor attention(torch::Tensor q, torch::Tensor k, torch::Tensor v) {",
                      "    auto* props = at::cuda::getCurrentDeviceProperties();",
                      "    cublasHandle_t handle = at::cuda::getCurrentCUDABlasHandle();",
                      "    (void)props; (void)handle;",
                      "    return torch::empty_like(q);", "}"])
    src = Source(kind="cuda", text=text, file="all_headers.py", line_map=tuple(range(1, text.count("\n") + 2)))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "kernel.cu"
        path.write_text(build.annotate(src))
        proc = subprocess.run(build._compile_only_cmd(src, cfg, path, "full"), capture_output=True, text=True)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]


def test_an_error_about_a_stood_in_library_says_the_header_is_a_stand_in():
    missing = build._stand_ins_in_use() if _have_nvcc() else []
    if "cublas_v2.h" not in missing:
        pytest.skip("this machine's CUDA toolkit has cuBLAS: no stand-in in use")
    log = 'attention.py(12): error: identifier "cublasSgemm" is undefined'
    hint = build._stand_in_hint(log)
    assert "cublas_v2.h" in hint and "stand-in" in hint
    assert build._stand_in_hint('attention.py(12): error: identifier "x" is undefined') == ""


def test_check_compile_prints_no_terminal_escape_from_the_compilers_log(tmp_path):
    """Held-out attack of 2026-11-27: an `#error` carrying an OSC 52 clipboard write and a clear-screen
    came out of `check-compile` raw (the batch escaped it). Every line it prints is neutralised."""
    sub = tmp_path / "attention.py"
    sub.write_text('_CPP_SRC = r"""\n#include <torch/extension.h>\n#error "\x1b]52;c;cHduZWQ=\x07\x1b[2J pwned"\n"""\n')
    proc = subprocess.run([sys.executable, "-m", "grader", "check-compile", str(sub), "--only", "cpp"], cwd=REPO,
                          capture_output=True, text=True, timeout=600)
    assert "pwned" in proc.stdout, proc.stdout[-500:]
    assert "\x1b" not in proc.stdout and "\x07" not in proc.stdout and "\\x1b" in proc.stdout
