"""The Gradescope autograder (CPU path): run_autograder against a simulated /autograder tree,
its results.json checked against Gradescope's published format; the zip; the limits."""
import json
import uuid
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from grader import config
from grader.gradescope import Container, cpu_quota, fit_timeouts, submitted_at

REPO = Path(__file__).resolve().parent.parent
FAST = REPO / "tests" / "fast_config.toml"
SUBS = REPO / "tests" / "submissions"
RUN_AUTOGRADER = REPO / "tools" / "gradescope" / "run_autograder"

# Gradescope's results.json, as its autograder specification describes it
# (gradescope-autograders.readthedocs.io/en/latest/specs/, "Output format"): every key is
# optional except that a score must be given at the top or on every test.
VISIBILITY = {"enum": ["hidden", "after_due_date", "after_published", "visible"]}
FORMAT = {"enum": ["text", "html", "simple_format", "md", "ansi"]}
TEST = {"type": "object", "additionalProperties": False, "properties": {
    "score": {"type": "number"}, "max_score": {"type": "number"}, "status": {"enum": ["passed", "failed"]},
    "name": {"type": "string"}, "name_format": FORMAT, "number": {"type": "string"},
    "output": {"type": "string"}, "output_format": FORMAT, "tags": {"type": "array", "items": {"type": "string"}},
    "visibility": VISIBILITY, "extra_data": {"type": "object"}}}
SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object", "additionalProperties": False,
    "properties": {
        "score": {"type": "number"}, "execution_time": {"type": "number"}, "output": {"type": "string"},
        "output_format": FORMAT, "test_output_format": FORMAT, "test_name_format": FORMAT,
        "visibility": VISIBILITY, "stdout_visibility": VISIBILITY, "extra_data": {"type": "object"},
        "tests": {"type": "array", "items": TEST},
        "leaderboard": {"type": "array", "items": {
            "type": "object", "required": ["name", "value"], "additionalProperties": False,
            "properties": {"name": {"type": "string"}, "value": {"type": ["number", "string"]},
                           "order": {"enum": ["asc", "desc"]}}}},
    },
    "anyOf": [{"required": ["score"]},
              {"required": ["tests"], "properties": {"tests": {"items": {"required": ["score"]}}}}],
}


def _valid(results: dict) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(results, SCHEMA)


def _autograde(tmp_path: Path, submission: str | None, created_at: str = "2026-12-11T20:00:00+00:00",
               salt: bool = False, **env) -> dict:
    """A fresh /autograder tree in tmp_path, run_autograder on it, results.json back."""
    from grader.compile import cache_root
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    if submission:
        text = (SUBS / submission).read_text()
        if salt:            # a source no cache holds: its build really runs, under the container's limits
            head, _, tail = text.rpartition('\n"""')
            text = f"{head}\n// {uuid.uuid4()}\n\"\"\"{tail}"
        (root / "submission" / "attention.py").write_text(text)
    (root / "submission_metadata.json").write_text(json.dumps({
        "id": 1, "created_at": created_at, "assignment": {"due_date": "2026-12-11T23:59:00+00:00", "title": "attention"},
        "users": [{"email": "s@example.com", "id": 7, "name": "S"}], "previous_submissions": []}))
    full_env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_SOURCE": str(REPO),
                "PYTHON": sys.executable, "GRADER_CACHE": str(cache_root()), "GRADER_CONFIG": str(FAST), **env}
    proc = subprocess.run(["bash", str(RUN_AUTOGRADER)], cwd=tmp_path, env=full_env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    _valid(results)
    return results


def test_ok_submission_scores_with_lateness_from_the_metadata(tmp_path):
    on_time = _autograde(tmp_path / "a", "correct/scalar_loop.py")
    assert on_time["extra_data"]["verdict"] == "ok" and on_time["score"] > 45
    by = {t["name"].split(" (")[0]: t for t in on_time["tests"]}
    assert by["correctness: config 1"]["score"] == 10 and by["correctness: config 1"]["status"] == "passed"
    assert not any("hidden" in t["name"] for t in on_time["tests"])
    assert "Gradescope has no GPUs" in on_time["output"] and on_time["leaderboard"]
    late = _autograde(tmp_path / "b", "correct/scalar_loop.py", created_at="2026-12-13T12:00:00+00:00")
    assert late["extra_data"]["submitted_at"] == "2026-12-13T12:00:00+00:00"
    assert any(t["name"] == "late penalty" and "2 days late" in t["output"] for t in late["tests"])
    raw = sum(t["score"] for t in late["tests"])
    assert late["score"] == pytest.approx(round(raw * 0.8, 2))


@pytest.mark.parametrize("submission, verdict", [
    ("invalid/compile_error.py", "compile_error"),
    ("crash/segfault.py", "runtime_error"),
])
def test_failing_submissions_get_their_verdict(tmp_path, submission, verdict):
    """Built from nothing (a fresh clone's cache): a typo's lean build fails, the retry with
    the full torch headers cannot fit the container's memory, and the verdict is still
    compile_error, with the typo's line."""
    results = _autograde(tmp_path, submission, salt=True)
    assert results["extra_data"]["verdict"] == verdict, results["output"]
    if verdict == "compile_error":
        assert "compile log:" in results["output"] and "attention.py:10" in results["output"], results["output"]
    assert results["score"] == 0 and results["tests"]


def test_a_grader_failure_still_writes_results(tmp_path):
    results = _autograde(tmp_path / "a", "correct/scalar_loop.py", GRADER_CONFIG=str(tmp_path / "missing.toml"))
    assert results["score"] == 0 and results["extra_data"]["verdict"] == "grader_error"
    assert "not a verdict on your code" in results["output"] and "missing.toml" in results["extra_data"]["error"]
    # the grader cannot even start: the shell writes the file
    results = _autograde(tmp_path / "b", "correct/scalar_loop.py", PYTHON="/bin/false")
    assert results["score"] == 0 and results["extra_data"] == {"verdict": "grader_error", "exit_status": 1}


def test_the_limits_fit_gradescopes_default_container():
    cfg = config.load()                          # the course config: 300 + 60 + 300 s of stage timeouts
    fitted = fit_timeouts(cfg, Container())
    total = fitted.timeout_compile + fitted.timeout_check + fitted.timeout_bench
    assert total <= Container().timeout_s - 60 and fitted.timeout_check < cfg.timeout_check
    assert fit_timeouts(cfg, Container(timeout_s=2400)) == cfg          # a longer timeout: unchanged
    with pytest.raises(ValueError, match="no time"):
        fit_timeouts(cfg, Container(timeout_s=30))


def test_cpu_quota_and_submission_time(tmp_path):
    (tmp_path / "cpu.max").write_text("50000 100000\n")
    assert cpu_quota(tmp_path) == 1
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert cpu_quota(tmp_path) is None
    assert submitted_at(tmp_path) is None
    (tmp_path / "submission_metadata.json").write_text('{"created_at": "2026-12-12T01:00:00.5-08:00"}')
    assert submitted_at(tmp_path) == "2026-12-12T01:00:00.5-08:00"


def test_the_autograder_zip(tmp_path):
    out = tmp_path / "autograder.zip"
    proc = subprocess.run([sys.executable, str(REPO / "tools" / "gradescope" / "build_zip.py"), "--out", str(out)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with zipfile.ZipFile(out) as z:
        names = z.namelist()
        modes = {i.filename: (i.external_attr >> 16) & 0o777 for i in z.infolist()}
        assert {"setup.sh", "run_autograder", "pyproject.toml", "assignment/config.toml",
                "grader/gradescope.py", "grader/dispatch.cpp"} <= set(names)
        assert modes["run_autograder"] == modes["setup.sh"] == 0o755
        assert not [n for n in names if "__pycache__" in n or n.startswith(".cache")]
    first = out.read_bytes()
    subprocess.run([sys.executable, str(REPO / "tools" / "gradescope" / "build_zip.py"), "--out", str(out)], check=True,
                   capture_output=True)
    assert out.read_bytes() == first                                    # reproducible
    for script in ("setup.sh", "run_autograder"):
        assert subprocess.run(["bash", "-n", str(REPO / "tools" / "gradescope" / script)]).returncode == 0
