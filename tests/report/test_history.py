"""Run history: grade --label saves a labelled copy; report --before LABEL compares with it."""
import json

import subprocess
import sys
from pathlib import Path

import pytest

from grader.report import history
from grader.report.pdf import ReportError, render
from conftest import REPO, TESTS

FIXTURES = TESTS / "fixtures" / "results"


def _results(tmp_path: Path, scale: float = 1.0) -> Path:
    doc = json.loads((FIXTURES / "cpu_fused.json").read_text())
    for b in doc["bench"]:
        b["student_ms"] *= scale
        b["slowdown"] = b["student_ms"] / b["sdpa_ms"]
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return path


def test_save_find_and_compare(tmp_path):
    slow = _results(tmp_path, scale=2.0)
    history.save(slow, "naive")
    now = _results(tmp_path)                     # the current run: twice as fast
    before = history.find(now, "naive")
    rows = history.compare_runs(before, json.loads(now.read_text()), "naive")["rows"]
    assert rows and all(r["speedup"] == pytest.approx(2.0) for r in rows)
    assert [lab for _, lab, _ in history.entries(now)] == ["naive"]


def test_report_shows_the_comparison(tmp_path):
    history.save(_results(tmp_path, scale=2.0), "naive")
    now = _results(tmp_path)
    pdf = render(now, tmp_path / "r.pdf", before_label="naive")
    from pypdf import PdfReader
    text = "".join(p.extract_text() for p in PdfReader(pdf).pages)
    assert "This run vs your run labelled \u201cnaive\u201d" in text and "2.00x" in text   # Typst's quotes


def test_unknown_label_and_bad_label_are_one_line_errors(tmp_path):
    now = _results(tmp_path)
    with pytest.raises(ReportError, match="no run labelled 'fused'"):
        render(now, tmp_path / "r.pdf", before_label="fused")
    with pytest.raises(history.HistoryError, match="letters, digits"):
        history.save(now, "../evil")
    proc = subprocess.run([sys.executable, "-m", "grader", "report", str(now), "--out", str(tmp_path / "r.pdf"),
                           "--before", "fused"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "make grade RUN=fused" in proc.stderr


def test_grade_label_saves_into_history(tmp_path):
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "tests/submissions/invalid/syntax_error.py",
                           "--json", str(out / "results.json"), "--label", "first", "--quiet"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 15, proc.stderr
    saved = list((out / "history").glob("*_first.json"))
    assert len(saved) == 1 and json.loads(saved[0].read_text())["verdict"] == "invalid_submission"



def test_runs_timed_under_different_conditions_are_flagged(tmp_path):
    base = json.loads((FIXTURES / "cpu_fused.json").read_text())
    quiet = {**base, "bench_quality": {"status": "clean"}}
    busy = {**base, "bench_quality": {"status": "noisy"}, "system": {**base["system"], "threads": 1}}
    notes = history.compare_runs(busy, quiet, "naive")["conditions"]
    assert any("naive timed on a busy or noisy machine" in n for n in notes)
    assert any(n.startswith("different threads: naive 1, now") for n in notes)
    assert history.compare_runs(quiet, quiet, "naive")["conditions"] == []
    assert "conditions are unknown" in history.compare_runs(base, quiet, "naive")["conditions"][0]   # old results
    history.save(_write(tmp_path, busy), "naive")
    now = _write(tmp_path, quiet)
    text = "".join(p.extract_text() for p in __import__("pypdf").PdfReader(render(now, tmp_path / "r.pdf",
                                                                                   before_label="naive")).pages)
    assert "timed under different conditions" in text


def _write(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(doc))
    return path


def _pdf_text(pdf: Path) -> str:
    from pypdf import PdfReader
    return " ".join("".join(p.extract_text() for p in PdfReader(pdf).pages).split())


def test_make_report_keeps_the_comparison_and_the_noise_warning(tmp_path):
    """Issue 33, item 7: `make report` (report without --before) after `make grade BEFORE=naive`
    keeps the before/after comparison; a noisy grade's PDF carries the terminal's warning."""
    history.save(_results(tmp_path, scale=2.0), "naive")
    now = _results(tmp_path)
    doc = json.loads(now.read_text())
    now.write_text(json.dumps({**doc, "bench_quality": {"status": "noisy", "reasons": ["S=1024: spread 31% (IQR/median)"]}}))
    pdf = tmp_path / "report.pdf"
    report = lambda *extra: subprocess.run([sys.executable, "-m", "grader", "report", str(now), "--out", str(pdf),  # noqa: E731
                                            "--as-graded", *extra], cwd=REPO, capture_output=True, text=True)
    assert report("--before", "naive").returncode == 0
    again = report()                                        # what `make report` runs
    assert again.returncode == 0 and "comparing with your run labelled 'naive'" in again.stdout
    text = _pdf_text(pdf)
    assert "This run vs your run labelled" in text and "Timings noisy" in text and "spread 31%" in text
    assert report("--before", "none").returncode == 0 and "This run vs" not in _pdf_text(pdf)
    assert report().returncode == 0 and "This run vs" not in _pdf_text(pdf)     # and that choice stays
