"""grader/compile.py: #line mapping, error trimming, build cache, the signature check."""
from grader import compile as build
from grader.parse import parse

from conftest import SUBMISSIONS


def test_annotate_starts_at_the_literal_line():
    src = parse(SUBMISSIONS / "invalid" / "compile_error.py").sources["cpp"]
    text = build.annotate(src)
    assert text.startswith('#line 5 "compile_error.py"\n')
    assert f'#line 1 "{build.ENTRY_FILE}"' in text


def test_annotate_adds_a_directive_where_concatenated_pieces_jump():
    src = parse(SUBMISSIONS / "correct" / "scalar_loop.py").sources["cpp"]
    directives = [ln for ln in build.annotate(src).splitlines() if ln.startswith("#line")]
    assert len(directives) >= 3   # start, the second literal, the entry point


def test_trim_log_keeps_the_students_diagnostics():
    raw = ("[1/2] c++ -MMD -MF main.o.d -DTORCH_EXTENSION_NAME=x -c main.cpp -o main.o\n"
           "FAILED: main.o\n"
           "c++ -MMD -c main.cpp -o main.o\n"
           "attention.py: In function 'at::Tensor attention(at::Tensor, at::Tensor, at::Tensor)':\n"
           "attention.py:9:36: error: expected ';' before 'return'\n"
           "    9 |     auto out = torch::empty_like(q)\n"
           "      |                                    ^\n"
           "ninja: build stopped: subcommand failed.\n")
    log = build.trim_log(raw, "attention.py")
    assert "attention.py:9:36: error: expected ';' before 'return'" in log
    assert "    9 |     auto out = torch::empty_like(q)" in log
    assert "ninja" not in log and "FAILED" not in log and "-MMD" not in log


def test_compile_error_points_at_the_py_line(cfg):
    src = parse(SUBMISSIONS / "invalid" / "compile_error.py").sources["cpp"]
    result, kernel = build.compile_source(src, cfg)
    assert not result.ok and kernel is None
    assert "compile_error.py:10:" in result.log and "error" in result.log


def test_wrong_signature_names_the_contract(cfg):
    src = parse(SUBMISSIONS / "invalid" / "wrong_signature.py").sources["cpp"]
    result, _ = build.compile_source(src, cfg)
    assert not result.ok
    assert build.SIGNATURE in result.log


def test_unchanged_source_is_not_recompiled(cfg):
    src = parse(SUBMISSIONS / "correct" / "scalar_loop.py").sources["cpp"]
    build.compile_source(src, cfg)                # may build, or reuse an earlier build
    again, kernel = build.compile_source(src, cfg)
    assert again.ok and again.cached and again.seconds == 0.0 and kernel is not None


def test_the_hash_changes_with_the_source_and_flags(cfg):
    from dataclasses import replace
    src = parse(SUBMISSIONS / "correct" / "scalar_loop.py").sources["cpp"]
    base = build.source_hash(src, cfg)
    assert build.source_hash(replace(src, text=src.text + "\n// edit"), cfg) != base
    assert build.source_hash(src, replace(cfg, cpp_flags=("-O2",))) != base
    assert build.source_hash(src, cfg) == base


def test_the_hash_changes_with_the_host_cpu(cfg, monkeypatch):
    """-march=native builds for this CPU: a cache shared with another CPU must not reuse it."""
    src = parse(SUBMISSIONS / "correct" / "scalar_loop.py").sources["cpp"]
    base = build.source_hash(src, cfg)
    assert "model name" not in build.host_cpu() and build.host_cpu()     # the values, not the keys
    monkeypatch.setattr(build, "host_cpu", lambda: "GenuineIntel|Xeon|fpu sse2 avx2")
    assert build.source_hash(src, cfg) != base


def test_only_header_related_errors_trigger_the_full_header_rebuild():
    typo = 'kernel.cu(10): error: identifier "undeclared_value" is undefined'
    assert not build.needs_full_headers(typo)
    assert build.needs_full_headers("x.py:5:20: error: 'vector' is not a member of 'std'")
    assert build.needs_full_headers("x.py:7:9: error: 'cross_entropy' is not a member of 'torch'")
    assert build.needs_full_headers('x.py:3:10: fatal error: ATen/cuda/CUDAContext.h: No such file or directory')
    assert not build.needs_full_headers("x.py:9:36: error: expected ';' before 'return'")


def test_a_moved_cache_still_finds_its_builds(tmp_path):
    """A build's library is recorded relative to its folder: a copied repo (or another
    GRADER_CACHE) reuses the build; a library that is gone is rebuilt, never a crash."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    from conftest import REPO
    script = ("import json, sys, torch; from grader import compile as b; from grader.config import load; "
              "from grader.parse import parse; src = parse(sys.argv[1]).sources['cpp']; "
              "r, k = b.compile_source(src, load()); q = torch.randn(1, 1, 8, 64); "
              "print(json.dumps({'ok': r.ok, 'cached': r.cached, 'err': float((k(q, q, q) - "
              "torch.softmax(q @ q.transpose(-1, -2) / 8, -1) @ q).abs().max())}))")
    import time
    text = (SUBMISSIONS / "correct" / "scalar_loop.py").read_text()   # a source no cache holds yet
    fresh = text.replace("#include <torch/extension.h>", f"// {time.time_ns()}\n#include <torch/extension.h>", 1)
    assert fresh != text
    (tmp_path / "attention.py").write_text(fresh)
    sub = str(tmp_path / "attention.py")

    def run(cache):    # the binding module comes from the repo's cache (GRADER_SHARED_CACHE)
        env = dict(os.environ, GRADER_CACHE=str(cache), GRADER_SHARED_CACHE=str(build.cache_root()))
        proc = subprocess.run([sys.executable, "-c", script, sub], cwd=REPO, env=env, capture_output=True,
                              text=True)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])
    build.prepare()
    first = run(tmp_path / "a")
    assert first["ok"] and not first["cached"] and first["err"] < 1e-4
    shutil.move(tmp_path / "a", tmp_path / "b")
    moved = run(tmp_path / "b")
    assert moved["ok"] and moved["cached"] and moved["err"] < 1e-4
    for marker in (tmp_path / "b").glob("build/*/RESULT.json"):     # its library gone: rebuilt
        doc = json.loads(marker.read_text())
        (marker.parent / doc["library"]).unlink()
    rebuilt = run(tmp_path / "b")
    assert rebuilt["ok"] and not rebuilt["cached"] and rebuilt["err"] < 1e-4
