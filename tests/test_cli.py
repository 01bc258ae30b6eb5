"""`python -m grader grade`: exit codes, the JSON document, one-line errors."""
import json
import subprocess
import sys

from grader.core.result import VERDICTS

from conftest import FAST_CONFIG, REPO, SUBMISSIONS

REQUIRED = {"verdict", "backend", "compile", "checks", "bench", "system"}


def _grade(*args):
    return subprocess.run([sys.executable, "-m", "grader", "grade", *args, "--config", str(FAST_CONFIG),
                           "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_template_exits_not_implemented_and_writes_json(tmp_path):
    out = tmp_path / "r.json"
    from conftest import TEMPLATE_DIR
    from grader.cli import build_parser
    assert str(build_parser().parse_args(["grade"]).submission).endswith("student_template")   # the default
    proc = _grade(str(TEMPLATE_DIR), "--json", str(out))     # as shipped: a student's edits change no test
    assert proc.returncode == VERDICTS["not_implemented"], proc.stdout + proc.stderr
    assert "verdict: not_implemented" in proc.stdout
    doc = json.loads(out.read_text())
    assert REQUIRED <= set(doc)
    assert doc["verdict"] == "not_implemented" and doc["backend"] == "cpu"
    assert {"ok", "seconds", "log"} <= set(doc["compile"])
    check = doc["checks"][0]
    assert {"config", "max_err", "passed", "message"} <= set(check)
    assert set(check["config"]) == {"B", "H", "S", "D"}


def test_ok_json_has_bench_rows(tmp_path):
    out = tmp_path / "r.json"
    proc = _grade(str(SUBMISSIONS / "correct" / "scalar_loop.py"), "--json", str(out))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    doc = json.loads(out.read_text())
    row = doc["bench"][0]
    assert {"S", "student_ms", "sdpa_ms", "slowdown", "naive_ms", "fused_ms"} <= set(row)
    assert "slowdown" in proc.stdout
    # the score preview: the public rubric's points, said to be a preview
    assert "score preview (public rubric): " in proc.stdout and "a preview, not your grade" in proc.stdout
    assert "10 / 10   correctness: config 1" in proc.stdout


def test_bad_config_is_one_line_with_exit_2(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(FAST_CONFIG.read_text().replace("tolerance", "tol"))
    proc = subprocess.run([sys.executable, "-m", "grader", "grade", "--config", str(bad)],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown key 'tol'" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_missing_submission_is_invalid_not_a_traceback():
    proc = _grade("does/not/exist.py")
    assert proc.returncode == VERDICTS["invalid_submission"]
    assert "no such file or folder" in proc.stdout and "Traceback" not in proc.stderr


def test_cuda_only_submission_without_gpu_says_what_to_do(tmp_path):
    f = tmp_path / "attention.py"
    f.write_text('_CUDA_SRC = r"""int x;"""\n')
    proc = _grade(str(f))
    assert proc.returncode == 2 and "check-compile" in proc.stderr


def test_results_file_is_readable_by_others(tmp_path):
    from grader.core.result import write_json_atomic
    out = tmp_path / "r.json"
    write_json_atomic(out, {"a": 1, "b": float("nan")})
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    assert json.loads(out.read_text()) == {"a": 1, "b": None}     # NaN is written as null


def test_a_broken_screenshot_makes_grade_exit_nonzero_naming_the_file(tmp_path):
    """An ok kernel whose folder holds a broken screenshot: the grade is fine, the PDF is
    not written, the exit status says so (3), the message names the student's file."""
    import shutil
    folder = tmp_path / "ada"
    (folder / "profiles").mkdir(parents=True)
    shutil.copy(SUBMISSIONS / "correct" / "scalar_loop.py", folder / "attention.py")
    (folder / "profiles" / "ncu.png").write_bytes(b"GIF89a not really a png")
    out = tmp_path / "report"
    (out).mkdir()
    (out / "report.pdf").write_bytes(b"%PDF- an older grade's report")
    proc = _grade(str(folder), "--json", str(out / "results.json"), "--report", "--no-bench")
    assert proc.returncode == 3, proc.stdout + proc.stderr
    assert "report.pdf was NOT written" in proc.stderr and str(folder / "profiles" / "ncu.png") in proc.stderr
    assert "verdict: ok" in proc.stdout and "Traceback" not in proc.stderr
    assert not (out / "report.pdf").exists() and (out / "report.STALE.pdf").exists()
    assert "ncu.png" in (out / "report.FAILED.txt").read_text()
    (folder / "profiles" / "ncu.png").unlink()
    proc = subprocess.run([sys.executable, "-m", "grader", "report", str(out / "results.json"), "--out",
                           str(out / "report.pdf")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0 and (out / "report.pdf").read_bytes()[:5] == b"%PDF-"
    assert not (out / "report.FAILED.txt").exists()


def test_roofline_out_writes_the_format_its_extension_names(tmp_path):
    results = REPO / "tests" / "fixtures" / "results" / "cpu_fused.json"
    for name, magic in (("r.png", b"\x89PNG"), ("r.svg", b"<?xml"), ("r.pdf", b"%PDF")):
        proc = subprocess.run([sys.executable, "-m", "grader", "roofline", "--results", str(results),
                               "--advisor-roofs", str(REPO / "tests" / "fixtures" / "advisor" / "roofs.csv"),
                               "--out", str(tmp_path / name)], cwd=REPO, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        assert (tmp_path / name).read_bytes().startswith(magic), name
    proc = subprocess.run([sys.executable, "-m", "grader", "roofline", "--results", str(results), "--out",
                           str(tmp_path / "r.jpg")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and "name the file with one of these" in proc.stderr
    assert not (tmp_path / "r.jpg").exists()
    # a results file that is not there, or not results: one line in the CLI's words, not errno's
    (tmp_path / "notes.json").write_text("[1, 2]")
    for name, said in (("nothere.json", "cannot be read (No such file or directory)"),
                       ("notes.json", "not a results JSON")):
        proc = subprocess.run([sys.executable, "-m", "grader", "roofline", "--results", str(tmp_path / name),
                               "--out", str(tmp_path / "r.svg")], cwd=REPO, capture_output=True, text=True)
        assert proc.returncode == 2 and said in proc.stderr and "Errno" not in proc.stderr, proc.stderr


def test_a_python_without_the_dependencies_says_wrong_interpreter(tmp_path):
    """`python -S` leaves out site-packages: jinja2, typst, torch, ... are missing, as in a
    Python outside the project's environment."""
    results = REPO / "tests" / "fixtures" / "results" / "cpu_fused.json"
    proc = subprocess.run([sys.executable, "-S", "-m", "grader", "report", str(results), "--out",
                           str(tmp_path / "r.pdf")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("wrong interpreter: ") and "tools/python.sh" in proc.stderr
    assert "internal error" not in proc.stderr and "Traceback" not in proc.stderr
    # grading (walkthrough of 2026-11-27): torch missing was a kernel "crash" with a score, exit 12
    proc = subprocess.run([sys.executable, "-S", "-m", "grader", "grade", str(REPO / "reference" / "naive.cpp"),
                           "--no-bench", "--json", str(tmp_path / "r.json")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.startswith("wrong interpreter: ") and "'torch'" in proc.stderr, \
        proc.stderr[-500:]
    assert "verdict" not in proc.stdout and not (tmp_path / "r.json").exists()
