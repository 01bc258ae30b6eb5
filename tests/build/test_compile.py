"""grader/build/compile.py: #line mapping, error trimming, build cache, the signature check."""
import os
import re

import pytest

from grader.build import compile as build
from grader.build.parse import parse

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


def test_every_build_links_the_libstdcxx_this_process_runs(cfg):
    """The GPU image's g++ (/opt/gcc, 2026-11-28) has a static libstdc++ alone: a kernel's library
    carried its own copy of the stream and locale code beside the process's shared one, and a
    student's `std::cout << n` crashed with SIGSEGV. Every build names the process's shared
    libstdc++ (`process_libstdcxx`), so the library needs it and copies none of it."""
    import subprocess

    import torch  # noqa: F401 - loads libstdc++ into this process
    libs = build.process_libstdcxx()
    assert len(libs) == 1 and os.path.basename(libs[0]).startswith("libstdc++.so") and os.path.isfile(libs[0])
    src = parse(SUBMISSIONS / "correct" / "scalar_loop.py").sources["cpp"]
    assert libs[0] in build._build_args(src, cfg, "lean")["ldflags"]
    result, kernel = build.compile_source(src, cfg)
    needed = subprocess.run(["readelf", "-d", kernel.library], capture_output=True, text=True).stdout
    assert "[libstdc++.so.6]" in needed, needed
    # and holds no copy of the stream and locale code (the image's build defined std::locale,
    # num_put and 3481 std:: symbols; this machine's g++ links the shared library either way)
    defined = subprocess.run(["nm", "--defined-only", kernel.library], capture_output=True, text=True).stdout
    assert not [s for s in defined.split() if s.startswith(("_ZNSt6locale", "_ZNKSt7num_put", "_ZNSt8ios_base"))]


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


def test_a_moved_cache_still_finds_its_builds(tmp_path):
    """A build's library is recorded relative to its folder: a copied repo (or another
    GRADER_CACHE) reuses the build; a library that is gone is rebuilt, never a crash."""
    import json
    import os
    import shutil
    import subprocess
    import sys

    from conftest import REPO
    script = ("import json, sys, torch; from grader.build import compile as b; from grader.core.config import load; "
              "from grader.build.parse import parse; src = parse(sys.argv[1]).sources['cpp']; "
              "r, k = b.compile_source(src, load()); q = torch.randn(1, 1, 8, 64); "
              "print(json.dumps({'ok': r.ok, 'cached': r.cached, 'err': float((k(q, q, q) - "
              "torch.softmax(q @ q.transpose(-1, -2) / 8, -1) @ q).abs().max())}))")
    import uuid
    # a source no cache holds, whatever the repo's cache (GRADER_SHARED_CACHE below) holds
    text = (SUBMISSIONS / "correct" / "scalar_loop.py").read_text()
    unique = text.replace("#include <torch/extension.h>\n", f"#include <torch/extension.h>\n// {uuid.uuid4()}\n", 1)
    assert unique != text
    (tmp_path / "attention.py").write_text(unique)
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


ODD_NAMES = ['a"b\\c.py', "a\nb.py", os.fsdecode(b"a\xffb.py"), 'x.py"\n#include "/etc/passwd']


@pytest.mark.parametrize("name", ODD_NAMES)
def test_odd_file_names_cannot_break_or_inject_into_line_directives(name):
    """A file name is escaped in `#line`: a quote, a backslash, a newline or a byte that
    is not UTF-8 becomes `_`, and each directive stays one line of its own."""
    from dataclasses import replace
    src = parse(SUBMISSIONS / "invalid" / "compile_error.py").sources["cpp"]
    text = build.annotate(replace(src, file=name))
    shown = build.display_file(name)
    assert shown and all(c.isprintable() and c not in '"\\' for c in shown)
    lines = text.split("\n")
    directives = [ln for ln in lines if ln.startswith("#line")]
    assert directives and all(re.fullmatch(r'#line \d+ "[^"\\]*"', d) for d in directives)
    assert not any(ln.lstrip().startswith("#include") and "passwd" in ln for ln in lines)   # nothing injected
    assert len(lines) == len(build.annotate(src).split("\n"))
    text.encode("utf-8")                         # writable as the build's source file


def test_errors_of_an_oddly_named_file_still_point_at_its_lines(cfg):
    from dataclasses import replace
    name = 'a"b\\c\n' + os.fsdecode(b"\xff") + ".py"
    src = replace(parse(SUBMISSIONS / "invalid" / "compile_error.py").sources["cpp"], file=name)
    result = build.compile_only(src, cfg)
    assert not result.ok and f"{build.display_file(name)}:10:" in result.log, result.log
    assert "   10 |" in result.log        # the line echoed under the error


def test_a_pybind_block_is_left_out_of_the_build():
    """The grader never imports the library as a module: a pasted PYBIND11_MODULE block is
    blanked (lines and columns kept), its look-alikes in comments and strings are not, and an
    unbalanced one is left for the compiler to report."""
    from grader.build.compile import without_binding
    text = ('int f();\n// PYBIND11_MODULE(x, m) { }\nconst char* s = "PYBIND11_MODULE(a, b) {}";\n'
            'PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {\n  m.def("forward", &f, "a } in a string");\n}\nint g();\n')
    out = without_binding(text)
    assert len(out) == len(text) and out.count("\n") == text.count("\n")
    assert "m.def" not in out and "TORCH_EXTENSION_NAME" not in out
    assert "// PYBIND11_MODULE(x, m) { }" in out and '"PYBIND11_MODULE(a, b) {}"' in out
    assert out.splitlines()[-1] == "int g();"
    broken = "PYBIND11_MODULE(x, m) {\n  m.def(\"f\", &f);\n"
    assert without_binding(broken) == broken


def test_a_build_killed_mid_way_does_not_hang_the_next_grade(tmp_path):
    """A build killed while it held torch's baton (`lock` in its folder: a timeout, an OOM kill)
    left every later load waiting forever (seen 2026-11-25: 'loading torch and the grader's
    binding module took longer than the 300 s limit'). Under the folder's flock the baton is
    stale and removed."""
    import shutil
    import subprocess
    import sys

    from conftest import REPO
    build.prepare()
    key = build.dispatch_key()
    cache = tmp_path / "cache"
    shutil.copytree(build.cache_root() / f"dispatch-{key}", cache / f"dispatch-{key}")
    (cache / f"dispatch-{key}" / "lock").write_text("")            # what a killed build leaves
    env = dict(os.environ, GRADER_CACHE=str(cache))
    env.pop("GRADER_SHARED_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", "from grader.build import compile; compile.prepare(); print('loaded')"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0 and "loaded" in proc.stdout, proc.stderr[-2000:]
