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


def test_only_header_related_errors_trigger_the_full_header_rebuild():
    typo = 'kernel.cu(10): error: identifier "undeclared_value" is undefined'
    assert not build.needs_full_headers(typo)
    assert build.needs_full_headers("x.py:5:20: error: 'vector' is not a member of 'std'")
    assert build.needs_full_headers("x.py:7:9: error: 'cross_entropy' is not a member of 'torch'")
    assert build.needs_full_headers('x.py:3:10: fatal error: ATen/cuda/CUDAContext.h: No such file or directory')
    assert not build.needs_full_headers("x.py:9:36: error: expected ';' before 'return'")
