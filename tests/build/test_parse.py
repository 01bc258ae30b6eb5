"""grader/build/parse.py: sources come out of the file without running it, lines map back."""
from pathlib import Path

from grader.build.parse import parse, parse_python

from conftest import REPO, SUBMISSIONS


def _parse_text(text: str):
    return parse_python(text, Path("attention.py"), "student")


def test_template_has_the_three_sources():
    from conftest import TEMPLATE_DIR
    sub = parse(TEMPLATE_DIR / "attention.py")
    assert sub.ok and set(sub.sources) == {"cpp", "cuda", "triton"}
    assert all("not implemented yet" in s.text for s in sub.sources.values())


def test_plain_and_raw_literals_and_line_map():
    sub = _parse_text('x = 1\n_CPP_SRC = """\nline a\nline b\n"""\n')
    src = sub.sources["cpp"]
    assert src.text == "\nline a\nline b\n"
    # source line 1 is the rest of file line 2 (after the quotes); "line a" is line 3
    assert src.file_line(1) == 2 and src.file_line(2) == 3 and src.file_line(3) == 4


def test_implicit_concatenation_maps_each_piece():
    sub = parse(SUBMISSIONS / "correct" / "scalar_loop.py")
    src = sub.sources["cpp"]
    lines = src.text.split("\n")
    file_lines = (SUBMISSIONS / "correct" / "scalar_loop.py").read_text().split("\n")
    for i, line in enumerate(lines, start=1):
        if line.strip():
            assert file_lines[src.file_line(i) - 1].endswith(line.rstrip()) or line in file_lines[src.file_line(i) - 1]


def test_escaped_newlines_map_to_the_literal_line():
    sub = _parse_text('_CPP_SRC = "a\\nb"\n')
    assert sub.sources["cpp"].text == "a\nb"
    assert sub.sources["cpp"].line_map == (1, 1)


def test_fstring_is_rejected_with_the_expected_form():
    sub = parse(SUBMISSIONS / "invalid" / "computed_source.py")
    assert not sub.ok
    assert "computed_source.py:4: _CPP_SRC must be a module-level assignment of a string literal" in sub.error


def test_syntax_error_names_the_line():
    sub = parse(SUBMISSIONS / "invalid" / "syntax_error.py")
    assert not sub.ok and sub.error.startswith("syntax_error.py:")
    assert "Python syntax error" in sub.error


def test_no_source():
    sub = parse(SUBMISSIONS / "invalid" / "no_source.py")
    assert not sub.ok and "no _CPP_SRC or _CUDA_SRC found" in sub.error


def test_never_executes_the_file(tmp_path):
    marker = tmp_path / "ran"
    f = tmp_path / "attention.py"
    f.write_text(f"open({str(marker)!r}, 'w').write('x')\n_CPP_SRC = 'int x;'\n")
    assert parse(f).ok
    assert not marker.exists()


def test_folder_submission_with_report(tmp_path):
    (tmp_path / "attention.py").write_text('_CPP_SRC = r"""int x;"""\n')
    (tmp_path / "report.md").write_text("# answers\n")
    sub = parse(tmp_path)
    assert sub.ok and sub.name == tmp_path.name and sub.report_md == "# answers\n"


def test_folder_with_two_files_is_ambiguous(tmp_path):
    (tmp_path / "a.py").write_text('_CPP_SRC = "x"\n')
    (tmp_path / "b.py").write_text('_CPP_SRC = "y"\n')
    sub = parse(tmp_path)
    assert not sub.ok and "expected one .py file" in sub.error


def test_reference_kernel_file_is_a_source():
    sub = parse(REPO / "reference" / "fused.cpp")
    assert sub.ok and sub.sources["cpp"].file_line(5) == 5
