"""The handout (assignment/README.md): its numbers are the config's and the models', every
command it shows exists, and a student's first hour works on a fresh clone."""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from grader.cli import build_parser

REPO = Path(__file__).resolve().parent.parent
HANDOUT = REPO / "assignment" / "README.md"
DOCS = [HANDOUT, REPO / "assignment" / "INSTRUCTORS.md", REPO / "README.md"]


def _commands(path: Path) -> list[str]:
    """`make ...` and `python -m grader ...` commands in sh blocks and inline code."""
    text = path.read_text()
    found = []
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        found += [ln.split("#")[0].strip() for ln in block.replace("\\\n", " ").splitlines()]
    found += re.findall(r"`((?:make|python -m grader) [^`]*)`", text)
    return [c for c in found if c.startswith(("make", "python -m grader"))]


def _make_targets() -> set:
    return set(re.findall(r"^([a-z][\w-]*):", (REPO / "Makefile").read_text(), re.M))


def test_generated_blocks_match_the_config_and_models():
    proc = subprocess.run([sys.executable, "tools/handout.py", "--check"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_every_command_shown_exists(doc):
    commands = _commands(doc)
    assert commands, doc
    targets = _make_targets()
    parser = build_parser()
    for cmd in commands:
        if cmd.startswith("make"):
            words = [w for w in cmd.split()[1:] if "=" not in w and not w.startswith("[")]
            for target in words[:1]:
                assert target in targets, f"{doc.name}: `{cmd}`: no make target {target!r}"
            continue
        synopsis = re.sub(r"\[[^\]]*\]", "", cmd.replace("...", ""))      # optional parts left out
        synopsis = re.sub(r"\$\{?[A-Z_]+\}?", "1", synopsis)                # shell variables
        argv = [("x" if re.fullmatch(r"[A-Z][A-Z_0-9]*", w) else w) for w in shlex.split(synopsis)[3:]]
        try:
            parser.parse_args(argv)
        except SystemExit as e:
            raise AssertionError(f"{doc.name}: `{cmd}` is not a valid command ({argv})") from e


def test_handout_states_the_build_flags_of_the_config():
    """The handout's build flags are the config's (a walkthrough could not tell whether its
    `#pragma omp` did anything)."""
    from grader.core.config import load
    cfg, text = load(), " ".join(HANDOUT.read_text().split())
    assert f"`_CPP_SRC` with `{' '.join(cfg.cpp_flags)}`" in text
    assert f"`_CUDA_SRC` with `{' '.join(cfg.cuda_flags)}`" in text


def test_handout_states_the_measured_ai_trend_not_the_myth():
    text = HANDOUT.read_text()
    from grader.analysis.ai_model import trend
    t = trend([128, 1024])
    assert t["naive_ai"][1] > t["naive_ai"][0]                 # the model: naive AI rises with S
    assert f"{t['naive_ai'][0]:.2f} to {t['naive_ai'][1]:.2f}" in text
    assert "decreases" in text and "Compute it yourself" in text  # the claim is put as a question


def test_first_hour_on_a_fresh_clone(tmp_path):
    """Clone, `make grade` the template (not_implemented), paste a naive CPU solution (the
    reference's three passes), `make grade` again (ok), and the report PDF is there."""
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    for path in ("tests/submissions",):      # the working tree's fixtures may be newer than HEAD
        shutil.copytree(REPO / path, clone / path, dirs_exist_ok=True)
    env = {**os.environ, "PYTHON": sys.executable,
           "GRADER_CACHE": os.environ.get("GRADER_CACHE", str(REPO / ".cache" / "grader"))}
    first = subprocess.run(["make", "grade", "BACKEND=cpu"], cwd=clone, env=env, capture_output=True, text=True)
    assert first.returncode != 0 and "verdict: not_implemented" in first.stdout, first.stdout[-1500:]
    assert (clone / "report" / "results.json").is_file()

    template = clone / "student_template" / "attention.py"
    naive = (REPO / "reference" / "naive.cpp").read_text()
    text = template.read_text()
    start = text.index('_CPP_SRC = r"""') + len('_CPP_SRC = r"""')
    end = text.index('"""', start)
    template.write_text(text[:start] + "\n" + naive + text[end:])
    second = subprocess.run(["make", "grade", "BACKEND=cpu"], cwd=clone, env=env, capture_output=True, text=True)
    assert second.returncode == 0 and "verdict: ok" in second.stdout, second.stdout[-2000:] + second.stderr[-2000:]
    assert (clone / "report" / "report.pdf").read_bytes()[:5] == b"%PDF-"
    rerender = subprocess.run(["make", "report"], cwd=clone, env=env, capture_output=True, text=True)
    assert rerender.returncode == 0, rerender.stderr
