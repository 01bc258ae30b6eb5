"""The corpus of third-party-style kernels (tests/third_party/, MANIFEST.toml): each gets
the verdict its code deserves, on the header tier its code allows. CUDA kernels compile
with nvcc here (no GPU); C++ kernels are graded on the CPU; the GPU grades run with -m gpu."""
import importlib.util
import tomllib
from dataclasses import replace

import pytest

from grader.build import compile as build
from grader.build.parse import parse

from conftest import TESTS

CORPUS = TESTS / "third_party"
MANIFEST = tomllib.loads((CORPUS / "MANIFEST.toml").read_text())["kernel"]
FIELDS = {"file", "kind", "style", "imitates", "commit", "glue", "tier", "cpu_verdict", "gpu_verdict", "diagnosis",
          "fails", "why"}


def _entries(kind: str) -> list:
    return [pytest.param(e, id=e["file"]) for e in MANIFEST if e["kind"] == kind]


def _have_nvcc() -> bool:
    try:
        return bool(build._nvcc())
    except FileNotFoundError:
        return False


def test_the_manifest_describes_every_kernel_and_only_them():
    assert len(MANIFEST) >= 8
    assert sorted(e["file"] for e in MANIFEST) == sorted(p.name for p in CORPUS.glob("*.py"))
    for e in MANIFEST:
        assert set(e) == FIELDS, e["file"]
        assert e["kind"] in ("cpp", "cuda", "triton")
        assert e["tier"] in (("triton",) if e["kind"] == "triton" else build.tiers(parse(CORPUS / e["file"]).sources[e["kind"]]))
        assert e["imitates"].startswith("https://github.com/") and e["glue"] and e["why"]
        # a Triton kernel has both: Triton's interpreter on the CPU, compiled on the GPU
        assert (e["cpu_verdict"] != "") == (e["kind"] in ("cpp", "triton"))
        assert (e["gpu_verdict"] != "") == (e["kind"] in ("cuda", "triton"))
        header = (CORPUS / e["file"]).read_text().split('"""')[1]
        assert "Written here" in header and "licence: the project's" in header.replace("\n", " ")
    styles = " ".join(e["style"] for e in MANIFEST).lower()
    for needed in ("plain c++ loops", "openmp", "at_dispatch", "accessor", "flashattention", "bounds checks",
                   "pybind11_module", "<torch/python.h>", "triton repository's fused-attention tutorial"):
        assert needed in styles, needed
    assert {e["tier"] for e in MANIFEST} >= {"proxy", "lean", "full"}
    assert any(e["cpu_verdict"] == "wrong_answer" for e in MANIFEST)      # a tile that misses S = 333


# a full-tier build parses every torch header: 219 s of CI's 2 cores for what the check-compile
# tests prove already (tests/build/test_check_compile.py: full-tier errors, torch's CUDA
# headers); those entries compile in the GPU session's run (-m gpu), the rest here
@pytest.mark.skipif(not _have_nvcc(), reason="nvcc is not installed here")
@pytest.mark.parametrize("entry", [pytest.param(e, id=e["file"], marks=[pytest.mark.gpu] if e["tier"] == "full" else [])
                                   for e in MANIFEST if e["kind"] == "cuda"])
def test_cuda_kernels_compile_on_their_tier(cfg, entry):
    src = parse(CORPUS / entry["file"]).sources["cuda"]
    notes = []
    # the full tier parses every torch header: minutes on a busy 2-core machine
    result = build.compile_only(src, replace(cfg, timeout_compile=1800), on_note=notes.append)
    assert result.ok, result.log
    assert result.tier == entry["tier"], (result.tier, notes)
    assert bool(notes) == (entry["tier"] != "proxy"), notes      # a fallback says so, in one line each
    assert all(line.startswith(f"{entry['file']}:") and "\n" not in line for line in notes), notes


@pytest.mark.parametrize("entry", _entries("cpp") + [
    pytest.param(e, id=e["file"], marks=pytest.mark.skipif(
        importlib.util.find_spec("triton") is None, reason="Triton is not installed: pip install -e '.[triton]'"))
    for e in MANIFEST if e["kind"] == "triton"])
def test_cpu_kernels_get_their_verdict(cfg, entry, monkeypatch):
    """C++ on the CPU; Triton in its interpreter (TRITON_INTERPRET=1, on a GPU machine too)."""
    from grader.run import grade
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    backend = "triton" if entry["kind"] == "triton" else "cpu"
    result = grade(CORPUS / entry["file"], replace(cfg, timeout_compile=1800), backend=backend, bench=False)
    assert result.verdict == entry["cpu_verdict"], (result.verdict, result.message)
    assert result.compile.tier == entry["tier"], result.compile
    if entry["cpu_verdict"] == "wrong_answer":
        failed = [c for c in result.checks if not c.passed]
        assert [c.config["S"] for c in failed] == entry["fails"], [(c.name, c.message) for c in failed]
    if entry["diagnosis"]:         # the real bug named (issue 32, item 8), in the message or over the configs
        from dataclasses import asdict

        from grader.analysis.diagnose import across_configs
        said = result.message + " " + (across_configs([asdict(c) for c in result.checks]) or "")
        assert entry["diagnosis"] in said, said


@pytest.mark.gpu
@pytest.mark.parametrize("entry", _entries("cuda") + _entries("triton"))
def test_cuda_kernels_get_their_verdict_on_a_gpu(cfg, entry, monkeypatch):
    from grader.run import grade
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    backend = "triton" if entry["kind"] == "triton" else "cuda"
    result = grade(CORPUS / entry["file"], replace(cfg, timeout_compile=1800), backend=backend, bench=False)
    assert result.verdict == entry["gpu_verdict"], (result.verdict, result.message)
    assert result.compile.tier == entry["tier"], result.compile
