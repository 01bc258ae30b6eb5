"""`python -m grader grade`: exit codes, the JSON document, one-line errors."""
import json
import subprocess
import sys

from grader.result import VERDICTS

from conftest import FAST_CONFIG, REPO, SUBMISSIONS

REQUIRED = {"verdict", "backend", "compile", "checks", "bench", "system"}


def _grade(*args):
    return subprocess.run([sys.executable, "-m", "grader", "grade", *args, "--config", str(FAST_CONFIG),
                           "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=600)


def test_template_exits_not_implemented_and_writes_json(tmp_path):
    out = tmp_path / "r.json"
    proc = _grade("--json", str(out))     # default submission: the template
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
    assert "15 / 15   correctness: config 1" in proc.stdout


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
    from grader.result import write_json_atomic
    out = tmp_path / "r.json"
    write_json_atomic(out, {"a": 1, "b": float("nan")})
    assert oct(out.stat().st_mode & 0o777) == "0o644"
    assert json.loads(out.read_text()) == {"a": 1, "b": None}     # NaN is written as null
