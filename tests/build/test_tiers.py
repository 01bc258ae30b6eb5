"""grader/build/tiers.py and the tier walk of grader/build/compile.py: where a build starts, that any
failure goes on to the next tier, the one-line fallback notes and the per-hash decisions.
The walk is driven by a fake compiler here; real builds are in test_compile.py."""
import pytest

from grader.build import compile as build
from grader.build import tiers
from grader.build.parse import Source


def _source(text: str, kind: str = "cuda", first_line: int = 10) -> Source:
    n = text.count("\n") + 1
    return Source(kind=kind, text=text, file="attention.py", line_map=tuple(range(first_line, first_line + n)))


class FakeCompiler:
    """attempt(tier) for _walk_tiers: fails in the tiers of `fails` with that log."""

    def __init__(self, fails: dict):
        self.fails, self.tried, self.events = fails, [], []

    def __call__(self, tier):
        self.tried.append(tier)
        self.events.append(f"build {tier}")
        if tier in self.fails:
            return False, self.fails[tier], ""
        return True, "", f"lib-{tier}"


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GRADER_CACHE", str(tmp_path))
    return tmp_path


def test_a_lean_failure_of_any_kind_is_retried_with_the_full_headers(cache):
    """nvcc's wording of a redefinition, a plain syntax error: both go on to the full tier
    (the old rule knew neither), and the full tier's verdict is the one reported."""
    for lean_log in ('attention.py(14): error: function "at::empty" has already been defined',
                     "attention.py:14:9: error: expected ';' before 'return'"):
        src = _source(f"// {lean_log}\nint x;", kind="cpp")
        fake = FakeCompiler({"lean": lean_log})
        walk = build._walk_tiers(src, build.source_hash(src, _cfg()), fake, None)
        assert fake.tried == ["lean", "full"] and walk.ok and walk.tier == "full"


def test_the_last_tiers_errors_are_the_ones_reported(cache):
    src = _source("int x;", kind="cpp")
    fake = FakeCompiler({"lean": "attention.py:10:1: error: lean says", "full": "attention.py:10:1: error: full says"})
    walk = build._walk_tiers(src, "k1", fake, None)
    assert not walk.ok and walk.tier == "full" and "full says" in walk.log and "lean says" not in walk.log


def test_each_fallback_is_one_line_naming_the_py_line_and_the_cost_as_it_starts(cache):
    src = _source("#include <torch/extension.h>\nauto x = q.sum();\n", first_line=20)
    notes = []
    fake = FakeCompiler({"proxy": 'attention.py(21): error: class "at::Tensor" has no member "sum"'})

    def on_note(line):
        notes.append(line)
        fake.events.append("note")
    walk = build._walk_tiers(src, "k2", fake, on_note)
    assert fake.events == ["build proxy", "note", "build lean"]     # said before the slower build starts
    assert walk.ok and walk.tier == "lean" and walk.fallback == notes[0]
    assert len(notes) == 1 and "\n" not in notes[0]
    assert notes[0].startswith("attention.py:21: the grader's proxy headers did not compile it")
    assert 'has no member "sum"' in notes[0] and "the lean torch headers" in notes[0]
    assert "typically 10-20 s" in notes[0]        # nothing measured on this machine yet


def test_the_scan_skips_a_tier_the_source_cannot_pass_without_building_it(cache):
    src = _source("#include <torch/extension.h>\n#include <torch/script.h>\nint x;\n", first_line=5)
    notes = []
    fake = FakeCompiler({})
    walk = build._walk_tiers(src, "k3", fake, notes.append)
    assert fake.tried == ["full"] and walk.tier == "full"
    assert notes == ["attention.py:6: #include <torch/script.h> is not in the grader's proxy or lean headers; "
                     "compiling with the full torch headers (typically 45-160 s)"]
    src = _source("#include <torch/extension.h>\n#include <ATen/cuda/CUDAEvent.h>\nPYBIND11_MODULE(x, m) {}\n")
    notes = []
    (cache / "tier_seconds.json").unlink()    # the fake full build above was timed
    build._walk_tiers(src, "k4", FakeCompiler({}), notes.append)
    assert notes == ["attention.py:11: #include <ATen/cuda/CUDAEvent.h> is not in the grader's proxy headers; "
                     "compiling with the lean torch headers (typically 10-20 s)",
                     "attention.py:12: PYBIND11_MODULE is not in the lean torch headers; "
                     "compiling with the full torch headers (typically 45-160 s)"]


@pytest.mark.parametrize("text, start", [
    ("#include <torch/extension.h>\n#include <ATen/cuda/CUDAContext.h>\n#include <c10/cuda/CUDAGuard.h>", "proxy"),
    ("#include <torch/python.h>\n#include <ATen/Dispatch.h>", "proxy"),
    ('#include "torch/extension.h"\n#include <ATen/cuda/CUDAEvent.h>', "lean"),    # not in the proxy
    ("#include <torch/extension.h>\n#include <ATen/ops/zeros.h>", "full"),        # defines at::zeros again
    ("#include <torch/extension.h>\n#include <ATen/ops/matmul.h>", "lean"),
    ("#include <torch/extension.h>\n#include <ATen/ops/empty_ops.h>", "lean"),     # the lean tier's own kind
    ("#include <torch/extension.h>\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {}", "full"),
    ("#include <torch/extension.h>\n// no PYBIND11_MODULE needed here", "proxy"),  # a comment is not code
    ("#include <torch/extension.h>\n#include <cuda_fp16.h>\n#include <cub/cub.cuh>", "proxy"),   # not torch's
])
def test_where_the_scan_starts(text, start):
    lines = list(enumerate(text.split("\n"), start=1))
    fallbacks = tiers.plan(lines, "cuda")
    assert (fallbacks[-1].to_tier if fallbacks else "proxy") == start


def test_a_fallback_costs_once_per_source(cache):
    src = _source("auto x = q.sum();\n")
    log = 'attention.py(10): error: class "at::Tensor" has no member "sum"'
    first = FakeCompiler({"proxy": log})
    build._walk_tiers(src, "same-hash", first, None)
    assert first.tried == ["proxy", "lean"]
    again, notes = FakeCompiler({"proxy": log}), []
    walk = build._walk_tiers(src, "same-hash", again, notes.append)
    assert again.tried == ["lean"] and walk.tier == "lean"          # the proxy is not tried again
    assert len(notes) == 1 and "(in an earlier build of this source)" in notes[0]
    assert "about" in notes[0] and "s here" in notes[0]            # the lean build was timed the first time
    other = FakeCompiler({"proxy": log})
    build._walk_tiers(src, "another-hash", other, None)
    assert other.tried == ["proxy", "lean"]


def test_a_decision_cache_that_cannot_be_written_changes_nothing(tmp_path, monkeypatch):
    ro = tmp_path / "ro"
    ro.mkdir()
    (ro / "tiers").write_text("not a folder")          # makes every write below fail
    (ro / "tier_seconds.json").mkdir()
    monkeypatch.setenv("GRADER_CACHE", str(ro))
    fake = FakeCompiler({"proxy": "attention.py(10): error: x"})
    walk = build._walk_tiers(_source("x"), "k", fake, None)
    assert walk.ok and fake.tried == ["proxy", "lean"]


@pytest.mark.parametrize("log, line", [
    ("attention.py:14:9: error: expected ';' before 'return'", 14),
    ('attention.py(21): error: identifier "x" is undefined', 21),
    ("In file included from attention.py:3:\n/usr/include/torch/python.h:5:1: error: boom", 3),
    ('/grader/build/prelude_cuda/grader_proxy/tensor.h(55): error: no instance\n'
     '          detected during instantiation of "f" at line 31 of attention.py', 31),
    ("/usr/bin/ld: cannot find -lfoo", None),
])
def test_the_py_line_a_log_blames(log, line):
    assert tiers.first_py_line(log, "attention.py") == line


def test_the_first_error_message_is_one_short_line():
    assert tiers.first_error("warning: w\nx.py(3): error: expected a \";\"\nmore") == 'expected a ";"'
    assert len(tiers.first_error("x.py(3): error: " + "y" * 500)) <= 120


def test_proxy_defines_only_where_named():
    assert tiers.proxy_defines("float* p;") == []
    assert tiers.proxy_defines("AT_DISPATCH_FLOATING_TYPES(t, \"n\", [&]{});") == ["-DGRADER_PROXY_HALF"]
    assert tiers.proxy_defines("q.packed_accessor32<float, 4>()") == ["-DGRADER_PROXY_ACCESSOR"]


def _cfg():
    from grader.core.config import load
    from conftest import FAST_CONFIG
    return load(FAST_CONFIG)
