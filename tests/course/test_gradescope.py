"""The Gradescope autograder (CPU path): run_autograder against a simulated /autograder tree,
its results.json checked against Gradescope's published format; the zip; setup.sh; the
memory budget (the container's cgroup, the judge's own share, what is never the kernel's
fault); Gradescope's dates (submission_metadata.json). The image itself, built from the zip
in a fresh root and run in memory cgroups: tests/course/test_gradescope_image.py."""
import json
import os
import re
import subprocess
import sys
import uuid
import zipfile
from pathlib import Path

import pytest

from grader.core import config
from grader.course import gradescope as gs
from grader.course.gradescope import Container, cpu_quota, fit_timeouts, submitted_at
from conftest import REPO

FAST = REPO / "tests" / "fast_config.toml"
SUBS = REPO / "tests" / "submissions"
GRADESCOPE = REPO / "tools" / "gradescope"
RUN_AUTOGRADER = GRADESCOPE / "run_autograder"

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


def metadata(created_at: str, due: str = "2026-12-11T23:59:00.000000+00:00", late_due: str | None = None,
             own_due: str | None = None, own_late_due: str | None = None, users: int = 1) -> dict:
    """submission_metadata.json as Gradescope writes it: the documented fields
    (gradescope-autograders.readthedocs.io/en/latest/submission_metadata/) and each user's
    own dates in users[].assignment (an extension moves them; without one they are the
    assignment's)."""
    return {
        "id": 123456, "created_at": created_at, "submission_method": "upload",
        "assignment": {"due_date": due, "group_size": None, "group_submission": users > 1, "id": 25828,
                       "course_id": 1234, "late_due_date": late_due, "release_date": "2026-11-01T00:00:00.000000+00:00",
                       "title": "Attention", "total_points": "100.0"},
        "users": [{"email": f"student{i}@example.com", "id": 1234 + i, "name": f"Student {i}",
                   "assignment": {"release_date": "2026-11-01T00:00:00.000000+00:00",
                                  "due_date": own_due if own_due and i == 0 else due,
                                  "late_due_date": own_late_due if own_late_due and i == 0 else late_due}}
                  for i in range(users)],
        "previous_submissions": [{"submission_time": "2026-12-10T09:00:00.000000+00:00", "score": 0.0,
                                  "results": {"score": 0.0}}],
    }


_SOURCE: dict = {}


def autograder_source() -> Path:
    """The autograder as Gradescope has it: built by tools/gradescope/build_zip.py and unpacked
    (its /autograder/source), not this checkout: what the zip lacks, a grade there lacks."""
    if "dir" not in _SOURCE:
        import tempfile
        out = Path(tempfile.mkdtemp(prefix="autograder-source-"))
        subprocess.run([sys.executable, str(GRADESCOPE / "build_zip.py"), "--out", str(out / "autograder.zip"),
                        "--config", str(FAST)], check=True, capture_output=True)
        with zipfile.ZipFile(out / "autograder.zip") as z:
            z.extractall(out / "source")
        # its binding module built into the cache, as setup.sh does when the image is built
        from grader.build.compile import cache_root
        subprocess.run([sys.executable, "-c", "from grader.build import compile; compile.prepare()"],
                       cwd=out / "source", env={**os.environ, "GRADER_CACHE": str(cache_root())}, check=True,
                       capture_output=True)
        _SOURCE["dir"] = out / "source"
    return _SOURCE["dir"]


def _autograde(tmp_path: Path, submission: str | None, created_at: str = "2026-12-11T20:00:00+00:00",
               salt: bool = False, meta: dict | None = None, text: str | None = None, **env) -> dict:
    """A fresh /autograder tree in tmp_path, run_autograder on it, results.json back. The
    container's cgroup is an empty folder (none can be read: MEMORY_MB counts, 1536 MB: a
    full-header build is stopped in seconds) unless GRADER_CGROUP_ROOT is given."""
    from grader.build.compile import cache_root, prepare
    prepare()               # the binding module, built as setup.sh builds it into the image (not in the worker)
    root = tmp_path / "autograder"
    (root / "submission").mkdir(parents=True)
    if submission or text:
        text = text if text is not None else (SUBS / submission).read_text()
        if salt:            # a source no cache holds: its build really runs, under the container's limits
            head, _, tail = text.rpartition('\n"""')
            text = f"{head}\n// {uuid.uuid4()}\n\"\"\"{tail}"
        (root / "submission" / "attention.py").write_text(text)
    (root / "submission_metadata.json").write_text(json.dumps(meta or metadata(created_at)))
    (tmp_path / "no-cgroup").mkdir(exist_ok=True)
    full_env = {**os.environ, "AUTOGRADER_ROOT": str(root), "AUTOGRADER_SOURCE": str(autograder_source()),
                "PYTHON": sys.executable, "GRADER_CACHE": str(cache_root()), "GRADER_CONFIG": str(FAST),
                "GRADER_CGROUP_ROOT": str(tmp_path / "no-cgroup"), "MEMORY_MB": "1536", **env}
    proc = subprocess.run(["bash", str(RUN_AUTOGRADER)], cwd=tmp_path, env=full_env, capture_output=True,
                          text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    results = json.loads((root / "results" / "results.json").read_text())
    _valid(results)
    return results


def test_ok_submission_scores_with_lateness_from_the_metadata(tmp_path):
    """Two days after the assignment's due date: on time for the student whose extension
    (users[].assignment.due_date) runs three days longer, two days late (-20%: the config's
    penalty per day) for one without."""
    extended = _autograde(tmp_path / "a", "correct/scalar_loop.py", meta=metadata(
        "2026-12-13T12:00:00.000000+00:00", own_due="2026-12-14T23:59:00.000000+00:00"))
    assert extended["extra_data"]["verdict"] == "ok" and extended["score"] > 45
    by = {t["name"].split(" (")[0]: t for t in extended["tests"]}
    assert by["correctness: config 1"]["score"] == 10 and by["correctness: config 1"]["status"] == "passed"
    assert not any("hidden" in t["name"] or "late" in t["name"] for t in extended["tests"])
    assert "Gradescope has no GPUs" in extended["output"] and extended["leaderboard"]
    assert "your due date on Gradescope, 2026-12-14T23:59:00+00:00" in extended["output"]
    assert extended["score"] == pytest.approx(round(sum(t["score"] for t in extended["tests"]), 2))
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
    assert "time limit" not in results["output"] and "memory" not in results["output"]


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
                "grader/course/gradescope.py", "grader/build/dispatch.cpp"} <= set(names)
        assert modes["run_autograder"] == modes["setup.sh"] == 0o755
        assert not [n for n in names if "__pycache__" in n or n.startswith(".cache")]
    first = out.read_bytes()
    subprocess.run([sys.executable, str(REPO / "tools" / "gradescope" / "build_zip.py"), "--out", str(out)], check=True,
                   capture_output=True)
    assert out.read_bytes() == first                                    # reproducible
    for script in ("setup.sh", "run_autograder"):
        assert subprocess.run(["bash", "-n", str(REPO / "tools" / "gradescope" / script)]).returncode == 0


# ---- setup.sh: the image builds on a bare base image -----------------------------------------

def test_setup_sh_installs_what_a_bare_image_lacks():
    """A minimal Ubuntu/Debian has no Python headers and no ninja outside the venv: the
    binding module (and every kernel) is built against Python.h, and torch runs `ninja`
    from PATH. torch comes from TORCH_PIP_ARGS (the CPU index by default) and is pinned, so
    the grader's dependencies never swap it for PyPI's CUDA build. The real build:
    tools/gradescope/emulate.py (tests/course/test_gradescope_image.py)."""
    text = (GRADESCOPE / "setup.sh").read_text()
    installs = [ln for ln in text.splitlines() if ln.lstrip().startswith("apt-get install")]
    assert "python3-dev" in installs[0].split() and "python3.11-dev" in installs[1].split()
    prepare = text.index("compile.prepare()")
    assert re.search(r'^export PATH="\$PATH:\$VENV/bin"$', text[:prepare], re.M), "the venv's ninja before the build"
    assert 'TORCH_PIP_ARGS="${TORCH_PIP_ARGS:-torch --index-url https://download.pytorch.org/whl/cpu}"' in text
    assert re.search(r'pip" install -q -c "\$VENV/torch-pin.txt" -e /autograder/source', text)
    assert subprocess.run(["bash", "-n", str(GRADESCOPE / "setup.sh")]).returncode == 0


def test_run_autograder_finds_the_venvs_ninja(tmp_path):
    """On Gradescope the only ninja is the venv's: run_autograder puts PYTHON's folder on
    PATH (after the system's), or every kernel would end in "Ninja is required"."""
    bare = tmp_path / "bin"                  # the system's programs, no ninja among them
    bare.mkdir()
    for prog in ("bash", "timeout", "dirname", "mkdir", "rm", "awk", "cat", "env"):
        os.symlink(subprocess.run(["bash", "-c", f"command -v {prog}"], capture_output=True, text=True)
                   .stdout.strip(), bare / prog)
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "ninja").write_text("#!/bin/sh\necho 1.13\n")
    (venv / "python").write_text(           # a stand-in for the grader: it reports the ninja it sees
        "#!/bin/sh\nroot=$(dirname \"$0\")/../../autograder\nmkdir -p \"$root/results\"\n"
        "printf '{\"score\": 1, \"output\": \"%s\"}' \"$(command -v ninja)\" > \"$root/results/results.json\"\n")
    for f in ("ninja", "python"):
        (venv / f).chmod(0o755)
    (tmp_path / "autograder").mkdir()
    proc = subprocess.run([str(bare / "bash"), str(RUN_AUTOGRADER)], capture_output=True, text=True,
                          env={"PATH": str(bare), "AUTOGRADER_ROOT": str(tmp_path / "autograder"),
                               "AUTOGRADER_SOURCE": str(tmp_path), "PYTHON": str(venv / "python")})
    assert proc.returncode == 0, proc.stderr
    results = json.loads((tmp_path / "autograder" / "results" / "results.json").read_text())
    assert results["output"] == str(venv / "ninja")


# ---- memory: the container's, the judge's, never the kernel's fault ----------------------------

def test_the_judges_budget_holds_python_torch_and_the_grader():
    """JUDGE_MB is this process's peak while the worker exists: at least what importing
    torch and the grader takes (the old budget, 128 MB, was below torch alone). The figures
    of a whole grade are measured in the image (tests/course/test_gradescope_image.py)."""
    probe = ("import torch, grader.course.gradescope, grader.run, grader.judge.judge, grader.judge.check, grader.judge.bench; "
             "print(grader.course.gradescope.peak_mib())")
    ballast = bytearray(b"\1" * (gs.JUDGE_MB + 200 << 20))   # the parent's peak must not count (pytest's was 495 MiB)
    used = int(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                              cwd=REPO).stdout)
    del ballast
    assert 150 < used < gs.JUDGE_MB, used
    assert Container(gs.MIN_MB).kernel_mb >= 700          # a lean-header build: 623-629 MiB PSS measured
    assert Container(gs.RECOMMENDED_MB).kernel_mb >= 1850  # a full-header build: 1756 MiB PSS measured
    assert Container().kernel_mb < 700 and Container().memory_mb < gs.MIN_MB      # Gradescope's 768 MB


def test_the_containers_memory_comes_from_its_cgroup(tmp_path):
    v2, v1, none = tmp_path / "v2", tmp_path / "v1", tmp_path / "none"
    (v1 / "memory").mkdir(parents=True)
    v2.mkdir()
    none.mkdir()
    (v2 / "memory.max").write_text(f"{3 << 30}\n")
    (v2 / "memory.events").write_text("low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n")
    (v1 / "memory" / "memory.limit_in_bytes").write_text(f"{768 << 20}\n")
    (v1 / "memory" / "memory.oom_control").write_text("oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
    assert gs.cgroup_memory_mb(v2) == 3072 and gs.oom_kills(v2) == 1
    assert gs.cgroup_memory_mb(v1) == 768 and gs.oom_kills(v1) == 3
    assert gs.cgroup_memory_mb(none) is None and gs.oom_kills(none) is None
    (v2 / "memory.max").write_text("max\n")
    (v1 / "memory" / "memory.limit_in_bytes").write_text("9223372036854771712\n")      # v1's "unlimited"
    assert gs.cgroup_memory_mb(v2) is None and gs.cgroup_memory_mb(v1) is None
    # the cgroup wins over run_autograder's MEMORY_MB (the instructor raised the setting and
    # forgot the script: the grader still uses what the container has)
    (v2 / "memory.max").write_text(f"{2 << 30}\n")
    assert gs.container(1536, 600, v2) == Container(2048, 600, "the container's cgroup")
    assert gs.container(1536, 600, none) == Container(1536, 600, "MEMORY_MB in run_autograder")
    assert gs.container(None, 600, none).memory_mb == 768


def _cgroup(tmp_path: Path, mb: int) -> Path:
    root = tmp_path / "cgroup"
    root.mkdir()
    (root / "memory.max").write_text(f"{mb << 20}\n")
    (root / "memory.events").write_text("oom 0\noom_kill 0\n")
    return root


def test_gradescopes_default_container_grades_nothing_and_blames_no_kernel(tmp_path):
    """768 MB cannot hold the grader, a build and a kernel (a correct kernel was killed while
    compiling): the result says so to the student and the staff, and what to set."""
    results = _autograde(tmp_path, "correct/scalar_loop.py", GRADER_CGROUP_ROOT=str(_cgroup(tmp_path, 768)))
    assert results["score"] == 0 and results["tests"] == []
    assert results["extra_data"]["verdict"] == "grader_error" and results["extra_data"]["reason"] == "container_memory"
    assert "768 MB" in results["output"] and "not a verdict on your code" in results["output"]
    assert f"{gs.RECOMMENDED_MB} MB" in results["output"] and "used more than" not in results["output"]


def test_a_build_the_container_cannot_hold_is_not_the_kernels_fault(tmp_path):
    """A source that needs the full torch headers (a PYBIND11_MODULE) builds at ~1.8 GB:
    in the smallest container the grader stops the build, and the result says the
    container's memory, not the kernel, was short (it was a compile_error, 'the kernel did
    not compile')."""
    text = (SUBS / "correct" / "scalar_loop.py").read_text()
    head, _, tail = text.rpartition('\n"""')
    text = f'{head}\nPYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {{ m.def("attention", &attention); }}\n"""{tail}'
    results = _autograde(tmp_path, None, text=text, salt=True, GRADER_CGROUP_ROOT=str(_cgroup(tmp_path, gs.MIN_MB)))
    assert results["extra_data"]["verdict"] == "grader_error", results["output"]
    assert results["extra_data"]["reason"] == "compile_memory" and results["score"] == 0
    assert "not your kernel" in results["output"] and "not a verdict on your code" in results["output"]
    assert "PYBIND11_MODULE" in results["output"]


@pytest.mark.parametrize("message, verdict, build, ours", [
    ("compiling (attention.py (cpp)): the kernel used more than 0.625 GiB of memory (0.632 GiB in its "
     "processes, 0 GiB in its /tmp and /dev/shm) (stopped)", "runtime_error", None, True),
    ("loading torch and the grader's binding module: the kernel used more than 1.06 GiB of memory", "runtime_error",
     None, True),
    ("the kernel did not compile (the full torch headers need more memory than this grader has; see the compile "
     "log)", "compile_error", {"tier": "full", "fallback": "attention.py:37: PYBIND11_MODULE is not in the lean torch "
                               "headers; compiling with the full torch headers (typically 30-60 s)"}, True),
    # the lean build failed on an error of the source's own first: that error is the verdict
    ("the kernel did not compile (the full torch headers need more memory than this grader has; see the compile "
     "log)", "compile_error", {"tier": "full", "fallback": "attention.py:10: the lean torch headers did not compile "
                               "it: 'flaot' was not declared"}, False),
    ("checking (config 1: B=1 H=4 S=128 D=64): the kernel used more than 0.8125 GiB of memory", "runtime_error",
     None, False),
])
def test_which_memory_failures_are_the_graders(message, verdict, build, ours):
    assert gs._grader_out_of_memory({"verdict": verdict, "message": message, "compile": build}) == ours


def test_the_containers_oom_killer_blames_no_kernel(tmp_path, monkeypatch):
    """The container's own out-of-memory killer took a process (the grader's limit had not
    caught it): the grade cannot say whose memory it was, and says so."""
    import grader.run
    cgroup = _cgroup(tmp_path, 3072)
    doc = {"verdict": "runtime_error", "message": "checking (config 1: B=1 H=4 S=128 D=64): the process crashed "
                                                  "with SIGKILL", "compile": None}

    class Result:
        def to_json(self):
            (cgroup / "memory.events").write_text("oom 1\noom_kill 1\n")
            return doc
    monkeypatch.setattr(grader.run, "grade", lambda *a, **k: Result())
    monkeypatch.setattr(gs, "premeasure_ceilings", lambda threads: None)
    (tmp_path / "submission").mkdir()
    results = gs.grade_submission(tmp_path, FAST, gs.container(None, 600, cgroup), cgroup)
    _valid(results)
    assert results["extra_data"]["reason"] == "container_out_of_memory" and results["score"] == 0
    assert "ran out of memory (3072 MB)" in results["output"] and "not a verdict on your code" in results["output"]
    assert results["extra_data"]["memory"]["kernel_limit_mib"] == 3072 - gs.JUDGE_MB - gs.CACHE_MB


def test_run_autograder_says_when_the_judge_itself_ran_out_of_memory(tmp_path):
    """The container's OOM killer took the grader (status 137 long before any time limit):
    the shell's results say memory, not time, and not the kernel."""
    cgroup = _cgroup(tmp_path, 3072)
    judge = tmp_path / "judge.sh"
    judge.write_text(f"#!/bin/bash\necho 'oom 1\noom_kill 1' > {cgroup}/memory.events\nkill -9 $$\n")
    judge.chmod(0o755)
    results = _autograde(tmp_path, "correct/scalar_loop.py", PYTHON=str(judge), GRADER_CGROUP_ROOT=str(cgroup))
    assert results["score"] == 0 and results["extra_data"] == {"verdict": "grader_error", "exit_status": 137}
    assert "ran out of memory" in results["output"] and "not a verdict on your code" in results["output"]
    assert "time limit" not in results["output"]


# ---- Gradescope's dates ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def course_deadline():
    return config.load_rubric(FAST)[1]       # due 2026-12-11T23:59Z, 15 min grace, -10%/day, 5 days at most


@pytest.mark.parametrize("meta, days, penalty, says", [
    # on time by Gradescope's assignment due date
    (metadata("2026-12-11T23:00:00.000000+00:00"), 0, 0.0, "Gradescope's due date, 2026-12-11T23:59:00+00:00"),
    # two days late by the assignment's date: the config's -10% per day
    (metadata("2026-12-13T12:00:00.000000+00:00"), 2, 0.2, "Gradescope's due date"),
    # the same time, on time with an extension of three days (users[].assignment)
    (metadata("2026-12-13T12:00:00.000000+00:00", own_due="2026-12-14T23:59:00.000000+00:00"), 0, 0.0,
     "your due date on Gradescope, 2026-12-14T23:59:00+00:00 (the assignment's is 2026-12-11T23:59:00+00:00)"),
    # Gradescope's due date moved past the config's: Gradescope's counts
    (metadata("2026-12-13T12:00:00.000000+00:00", due="2026-12-20T23:59:00.000000-08:00"), 0, 0.0,
     "Gradescope's due date, 2026-12-20T23:59:00-08:00"),
    # a late due date: late before it (penalty per day), 0 after it (not the config's 5 days)
    (metadata("2026-12-12T12:00:00.000000+00:00", late_due="2026-12-12T23:59:00.000000+00:00"), 1, 0.1,
     "late submissions until 2026-12-12T23:59:00+00:00"),
    (metadata("2026-12-13T12:00:00.000000+00:00", late_due="2026-12-12T23:59:00.000000+00:00"), 2, 1.0,
     "late submissions until"),
    # an extension of the late due date too
    (metadata("2026-12-13T12:00:00.000000+00:00", late_due="2026-12-12T23:59:00.000000+00:00",
              own_late_due="2026-12-15T23:59:00.000000+00:00"), 2, 0.2, "late submissions until 2026-12-15"),
    # a group: one member's extension covers the submission
    (metadata("2026-12-13T12:00:00.000000+00:00", own_due="2026-12-14T23:59:00.000000+00:00", users=2), 0, 0.0,
     "your due date"),
    # no dates from Gradescope (an older harness): the config's deadline
    ({"id": 1, "created_at": "2026-12-13T12:00:00+00:00", "users": [{"email": "s@example.com"}]}, 2, 0.2,
     "the course's deadline"),
])
def test_lateness_follows_gradescopes_dates(course_deadline, meta, days, penalty, says):
    dates = gs.gradescope_dates(meta, course_deadline)
    late = gs.lateness(meta["created_at"], dates)
    assert (late.days, late.penalty) == (days, pytest.approx(penalty)) and says in dates.note, (late, dates.note)


def test_gradescopes_dates_without_a_configured_deadline():
    """No [deadline] in the config: Gradescope's dates still say late or not, with no
    penalty per day, and score 0 past the late due date."""
    meta = metadata("2026-12-13T12:00:00.000000+00:00", late_due="2026-12-12T23:59:00.000000+00:00")
    dates = gs.gradescope_dates(meta, None)
    late = gs.lateness(meta["created_at"], dates)
    assert dates.deadline.due.isoformat() == "2026-12-11T23:59:00+00:00" and (late.days, late.penalty) == (2, 1.0)
    assert gs.gradescope_dates({"created_at": "2026-12-13T12:00:00Z"}, None).deadline is None
