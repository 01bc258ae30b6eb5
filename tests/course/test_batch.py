"""Batch grading end to end on the fixture class (tools/fixture_class.py): every verdict,
the integrity flags, the sandbox escapes, scores and lateness, Gradescope files, the
class summary, hidden configs kept out of student-visible files, kill -9 and resume,
shards and collect. CPU only; the GPU class runs in tests/judge/test_gpu.py."""
import csv
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path

import pytest

from conftest import REPO

from grader.course.batch import BatchError, discover, extract_zip, shard_of
from grader.isolation.sandbox import bwrap_path

FAST = REPO / "tests" / "fast_config.toml"
sys.path.insert(0, str(REPO / "tools"))
import fixture_class  # noqa: E402

HAVE_BWRAP = bwrap_path() is not None
TORCH_2_11 = __import__("torch").__version__.startswith("2.11")
HIDDEN_S, HIDDEN_SEED = 173, 424242
STANDALONE_S = re.compile(rf"(?<![\d.]){HIDDEN_S}(?![\d.])")    # 173, not 0.173 or 1370235173


def _accept_until_closed(listener) -> None:
    """Take the escapes' connections (they must never get here) until the test closes it."""
    try:
        for _ in range(8):
            listener.accept()
    except OSError:
        pass


def _batch(subs: Path, out: Path, *extra: str, timeout: float = 900) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--config", str(FAST),
           "--jobs", "2", "--timeout-run", "8", "--memory-limit", "2", *extra]
    return subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout)


def _rows(out: Path) -> dict:
    with open(out / "grades.csv", newline="") as f:
        return {r["submission"]: r for r in csv.DictReader(f)}


@pytest.fixture(scope="module")
def graded_class(tmp_path_factory):
    """The CPU fixture class, graded once with a hidden config (sandboxed where bwrap is)."""
    root = tmp_path_factory.mktemp("class")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    threading.Thread(target=_accept_until_closed, args=(listener,), daemon=True).start()
    subs, out = root / "subs", root / "out"
    expected = fixture_class.build(subs, out, listener.getsockname()[1])
    if not HAVE_BWRAP:      # without a sandbox the escapes would succeed: leave them out
        for sid in fixture_class.ESCAPES:
            (subs / f"{sid}.py").unlink()
            expected.pop(sid)
    hidden = root / "hidden.toml"
    hidden.write_text(f"[correctness]\nseed = {HIDDEN_SEED}\n[[correctness.configs]]\n"
                      f"B = 1\nH = 2\nS = {HIDDEN_S}\nD = 64\n")
    proc = _batch(subs, out, "--hidden", str(hidden))
    listener.close()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    return {"subs": subs, "out": out, "expected": expected, "proc": proc, "root": root}


def test_every_submission_gets_its_expected_status_flags_and_message(graded_class):
    rows = _rows(graded_class["out"])
    assert set(rows) == set(graded_class["expected"])
    for sid, want in graded_class["expected"].items():
        row = rows[sid]
        assert row["status"] == want["status"], (sid, row["status"], row["message"])
        flags = set(row["flags"].split(";")) - {""}
        assert set(want["flags"]) <= flags, (sid, flags)
        assert want["message"].lower() in row["message"].lower(), (sid, row["message"])
    judy = json.loads((graded_class["out"] / "students" / "judy" / "results.json").read_text())
    assert not [f for f in judy["flags"] if re.match(r"judy\.py:\d+:", f["detail"])]   # the scan saw nothing
    # a correct kernel: no strict or warning flags (review flags come from timings, which a
    # loaded 2-core CI machine can distort)
    assert not [f for f in rows["alice"]["flags"].split(";") if f and not f.startswith("review:")]


def test_one_log_line_per_submission_and_a_loud_warning_without_the_sandbox(graded_class):
    log = graded_class["proc"].stdout
    for sid in graded_class["expected"]:
        assert sum(1 for line in log.splitlines() if f"| {sid} " in line) == 1, sid
    assert "ETA" in log
    # the class folder's timestamps CSV is said to be read, not "not a submission" (a walkthrough's S3)
    assert re.search(r"timestamps: \S*timestamps\.csv: \d+ submission times read from it", log), log[:2000]
    assert "timestamps.csv: not a submission" not in log
    if HAVE_BWRAP:
        assert "sandbox: bwrap" in log
    else:
        assert "WITHOUT a sandbox" in graded_class["proc"].stderr


@pytest.mark.skipif(not HAVE_BWRAP, reason="needs bubblewrap (apt install bubblewrap)")
def test_sandbox_stops_reading_writing_and_connecting(graded_class):
    for sid in fixture_class.ESCAPES:
        doc = json.loads((graded_class["out"] / "students" / sid / "results.json").read_text())
        assert doc["verdict_without_flags"] == "runtime_error", doc["message_without_flags"]
        assert "sandbox held" in doc["message_without_flags"] and "ESCAPE" not in doc["message_without_flags"]
    for target in (graded_class["out"] / "pwned.txt", graded_class["subs"] / "pwned.txt", REPO / "pwned.txt"):
        assert not target.exists()


def test_scores_lateness_and_gradebook_columns(graded_class):
    rows = _rows(graded_class["out"])
    alice, carol, bob, grace = rows["alice"], rows["carol"], rows["bob"], rows["grace"]
    assert float(alice["max_score"]) == 105       # 10 + 15 + 10 + 10 + 1 hidden x 5 + 25 + 5 + 5 + 4 x 5
    # alice: all configs, profiles before/after, four answers; her speed tier depends on the machine
    assert float(alice["score"]) >= 45 + 5 + 5 + 5 + 20
    assert alice["late_days"] == "0" and float(alice["late_penalty"]) == 0
    assert carol["status"] == "ok" and float(carol["late_penalty"]) == 1.0 and float(carol["score"]) == 0
    assert bob["late_days"] == "1"
    assert "warning:no_timestamp" in grace["flags"]
    assert float(rows["ivan"]["score"]) == 0                       # cheat_suspected: 0 until reviewed
    for col in ("config1_max_err", "config1_passed", "hidden1_passed", "student_ms_S200", "sdpa_ms_S200",
                "slowdown_S200", "compile_seconds", "flags", "late_penalty"):
        assert col in alice, col
    assert float(alice["slowdown_S200"]) > 0 and alice["hidden1_passed"] == "True"
    pd = pytest.importorskip("pandas")
    frame = pd.read_csv(graded_class["out"] / "grades.csv")
    assert len(frame) == len(rows) and frame["score"].dtype.kind == "f"


def test_gradescope_results_and_class_summary(graded_class):
    out = graded_class["out"]
    gs = json.loads((out / "students" / "alice" / "results_gradescope.json").read_text())
    assert set(gs) >= {"score", "tests", "leaderboard"}
    for t in gs["tests"]:
        assert set(t) >= {"name", "score", "max_score", "output", "visibility"}
    assert [t["visibility"] for t in gs["tests"] if "hidden" in t["name"]] == ["after_published"]
    assert gs["leaderboard"] and all(e["order"] == "desc" for e in gs["leaderboard"])
    assert gs["score"] == float(_rows(out)["alice"]["score"])
    for sid in graded_class["expected"]:
        assert (out / "students" / sid / "results.json").is_file() and (out / "students" / sid / "results_gradescope.json").is_file()
    assert (out / "students" / "alice" / "report.pdf").read_bytes()[:5] == b"%PDF-"
    from pypdf import PdfReader
    text = "".join(p.extract_text() for p in PdfReader(out / "summary.pdf").pages)
    for phrase in ("class summary", "Verdicts", "Pass rate", "Fastest", "Flagged", "ivan", "judy"):
        assert phrase in text, phrase


def test_hidden_config_and_seed_never_reach_student_visible_files(graded_class):
    out = graded_class["out"]
    from pypdf import PdfReader
    for sid in ("alice", "leo", "bob"):
        for name in ("results.json", "results_gradescope.json"):
            text = (out / "students" / sid / name).read_text()
            assert str(HIDDEN_SEED) not in text and not STANDALONE_S.search(text), (sid, name)
        pdf = "".join(p.extract_text() for p in PdfReader(out / "students" / sid / "report.pdf").pages)
        assert str(HIDDEN_SEED) not in pdf and not STANDALONE_S.search(pdf), sid
    leo = json.loads((out / "students" / "leo" / "results.json").read_text())
    hidden = [c for c in leo["checks"] if c["hidden"]]
    assert hidden and hidden[0]["config"] is None and "withheld" in hidden[0]["message"]


def test_rerun_skips_everything_unchanged_and_applies_the_overrides(graded_class):
    out = graded_class["out"]
    overrides = ("student,item,value,reason,reviewer\n"
                 "ivan,review,cleared,the aten call is the check's own (read by hand),jdoe\n"
                 "alice,written:gap,1,one sentence,ta-kim\n"
                 "bob,review,cleared,wrong row,jdoe\n")      # bob: never benchmarked, so never flagged by timings
    (out / "overrides.csv").write_text(overrides)
    before = _rows(out)
    assert float(before["ivan"]["score"]) == 0
    proc = _batch(graded_class["subs"], out, "--hidden", str(graded_class["root"] / "hidden.toml"), "--no-pdf")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"{len(graded_class['expected'])} submission(s) unchanged" in proc.stdout
    assert "reference run" not in proc.stdout
    rows = _rows(out)
    assert (out / "overrides.csv").read_text() == overrides                      # read, never written
    assert rows["ivan"]["overrides"] == "review=cleared by jdoe" and float(rows["ivan"]["score"]) >= 45
    # the status is the verdict it was scored as (a walkthrough read "cheat_suspected, 60 points" as a
    # contradiction); the flags stay in their column
    assert rows["ivan"]["status"] != "cheat_suspected" and "strict:aten_compute" in rows["ivan"]["flags"]
    assert float(rows["alice"]["score"]) == float(before["alice"]["score"]) - 4   # 5 -> 1 for one answer
    assert rows["alice"]["overrides"] == "written:gap=1 by ta-kim"
    # (alice, graded ok, can carry a timing review flag on a busy machine: review:baseline_slowed in CI)
    assert "clears a review nothing flagged, which changes nothing: bob (line 4: the verdict is wrong_answer)" \
        in proc.stderr
    (out / "overrides.csv").write_text("student,item,value,reason,reviewer\nivan,review,maybe,,\n")
    proc = _batch(graded_class["subs"], out, "--hidden", str(graded_class["root"] / "hidden.toml"), "--no-pdf")
    assert proc.returncode == 2 and "line 2: a review is" in proc.stderr and "unchanged" not in proc.stdout
    (out / "overrides.csv").unlink()


def test_kill_9_at_any_moment_then_rerun_gives_a_complete_gradebook(tmp_path):
    subs, out = tmp_path / "subs", tmp_path / "out"
    subs.mkdir()
    src = REPO / "tests" / "submissions"
    for sid, rel in {"a": "correct/scalar_loop.py", "b": "wrong/wrong_scaling.py",
                     "c": "invalid/syntax_error.py", "d": "crash/raises_error.py"}.items():
        (subs / f"{sid}.py").write_text((src / rel).read_text())
    cmd = [sys.executable, "-m", "grader", "batch", str(subs), "--out", str(out), "--config", str(FAST),
           "--jobs", "1", "--no-pdf"]
    proc = subprocess.Popen(cmd, cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    deadline = time.monotonic() + 600
    while not list(out.glob("students/*/batch.json")) and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.2)
    time.sleep(1.0)                                    # mid-way through the next submission
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    finished_before = {p.parent.name for p in out.glob("students/*/batch.json")}
    assert 0 < len(finished_before) < 4
    rerun = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=900)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    with open(out / "grades.csv", newline="") as f:
        ids = [r["submission"] for r in csv.DictReader(f)]
    assert sorted(ids) == ["a", "b", "c", "d"]                         # each exactly once
    assert f"{len(finished_before)} submission(s) unchanged" in rerun.stdout
    statuses = {r["submission"]: r["status"] for r in csv.DictReader(open(out / "grades.csv"))}
    assert statuses == {"a": "ok", "b": "wrong_answer", "c": "invalid_submission", "d": "runtime_error"}


def test_shards_and_collect_merge_into_one_gradebook(tmp_path):
    subs = tmp_path / "subs"
    subs.mkdir()
    bad = (REPO / "tests" / "submissions" / "invalid" / "syntax_error.py").read_text()
    evil = '=HYPERLINK("http:evil.example","click")'       # a student id a spreadsheet would run
    for sid in ("s1", "s2", "s3", "s4", evil):          # invalid: graded without compiling anything
        (subs / f"{sid}.py").write_text(bad)
    outs = []
    for k in (1, 2):
        out = tmp_path / f"out{k}"
        proc = _batch(subs, out, "--shard", f"{k}/2", "--no-pdf")
        assert proc.returncode == 0, proc.stderr
        outs.append(out)
    assert len(_rows(outs[0])) == 3 and len(_rows(outs[1])) == 2
    merged = tmp_path / "merged"
    proc = subprocess.run([sys.executable, "-m", "grader", "collect", *map(str, outs), "--out", str(merged),
                           "--config", str(FAST), "--no-pdf"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert sorted(_rows(merged)) == sorted(["s1", "s2", "s3", "s4", "'" + evil])
    assert "\n'=HYPERLINK" in (merged / "grades.csv").read_text().replace('"', "")   # written as text


# ---- collect: shard folders that describe themselves ----------------------------------------

RESULT = REPO / "tests" / "fixtures" / "results" / "cpu_fused.json"
STAMPS = {"alice": "2026-12-11T20:00:00+00:00", "bob": "2026-12-12T09:30:00+00:00"}   # bob: 1 day late


def _hidden_cfg(tmp_path, seed=HIDDEN_SEED, S=HIDDEN_S):
    from grader.core import config
    hidden = tmp_path / f"hidden-{seed}-{S}.toml"
    hidden.write_text(f"[correctness]\nseed = {seed}\n[[correctness.configs]]\nB = 1\nH = 2\nS = {S}\nD = 64\n")
    return config.load(FAST, hidden=hidden), hidden


def _shard(out: Path, ids: list, cfg, k: int, n: int, stamps=STAMPS) -> list:
    """A graded shard without grading anything: each student's results (the CPU fixture,
    passing its hidden config), then the gradebook as a batch writes it."""
    from grader.core import config
    from grader.course.batch import write_gradebook
    doc = json.loads(RESULT.read_text())
    doc["checks"].append({**doc["checks"][0], "config": None, "max_err": None, "name": "hidden 1", "hidden": True})
    for sid in ids:
        folder = out / "students" / sid
        folder.mkdir(parents=True)
        (out / "instructor").mkdir(exist_ok=True)          # the hidden config's max_err: only here
        (out / "instructor" / f"{sid}.json").write_text(json.dumps(
            {"submission": sid, "hidden_checks": [{**doc["checks"][-1], "max_err": 2.5e-07, "config": {"S": 300}}]}))
        (folder / "results.json").write_text(json.dumps({**doc, "submission": {**doc["submission"], "name": sid}}))
        (folder / "batch.json").write_text(json.dumps({"submission": sid, "key": "k", "finished_at": "2026-12-20T10:00:00"}))
    rubric, deadline = config.load_rubric(FAST)
    return write_gradebook(out, ids, cfg, rubric, deadline, stamps, render_pdf=False, shard=(k, n))


def _no_timing(rows):
    return [{k: v for k, v in r.items() if "_ms_" not in k and k != "compile_seconds"} for r in rows]


def test_collect_scores_with_the_hidden_configs_and_times_the_shards_recorded(tmp_path):
    from grader.course.batch import collect
    cfg, _ = _hidden_cfg(tmp_path)
    _shard(tmp_path / "s1", ["alice", "carol"], cfg, 1, 2)
    _shard(tmp_path / "s2", ["bob"], cfg, 2, 2)
    merged = collect([tmp_path / "s1", tmp_path / "s2"], tmp_path / "merged", render_pdf=False)
    rows = {r["submission"]: r for r in merged}
    assert rows["alice"]["max_score"] == 105 and rows["alice"]["hidden1_passed"] is True
    assert rows["alice"]["hidden1_max_err"] == 2.5e-07            # the instructor's copies came along
    assert (tmp_path / "merged" / "instructor" / "bob.json").is_file()
    assert rows["bob"]["late_days"] == 1 and rows["bob"]["late_penalty"] == pytest.approx(0.1)
    assert "no_timestamp" not in rows["alice"]["flags"] and "warning:no_timestamp" in rows["carol"]["flags"]
    # the same as one machine grading the whole class
    one = _shard(tmp_path / "one", ["alice", "bob", "carol"], cfg, 1, 1)
    assert _no_timing(sorted(merged, key=lambda r: r["submission"])) == _no_timing(one)
    assert (tmp_path / "merged" / "grades.csv").read_text() == (tmp_path / "one" / "grades.csv").read_text()
    gs = json.loads((tmp_path / "merged" / "students" / "alice" / "results_gradescope.json").read_text())
    assert any(t["name"] == "correctness: hidden config 1" and t["score"] == 5 for t in gs["tests"])


def _pdf_score(pdf: Path) -> tuple[float, float]:
    from pypdf import PdfReader
    text = " ".join("".join(p.extract_text() for p in PdfReader(pdf).pages).split())
    m = re.search(r"([\d.]+) of ([\d.]+) points: the course.s grade", text)
    assert m, text[:1500]
    return float(m[1]), float(m[2])


def test_one_score_per_student_in_the_gradebook_gradescope_and_the_returned_pdf(tmp_path):
    """Issue 33, items 5 and 6: after a hidden failure, a late penalty and an override, the
    PDF a student gets back shows the gradebook's score; it is re-rendered when an
    override changes that score, and left alone when nothing changed."""
    pytest.importorskip("typst")
    from grader.core import config
    from grader.course.batch import write_gradebook
    from grader.course.batch.outputs import rebuild_from_record
    cfg, _ = _hidden_cfg(tmp_path)
    out = tmp_path / "out"
    doc = json.loads(RESULT.read_text())
    doc["checks"].append({**doc["checks"][0], "config": None, "max_err": None, "name": "hidden 1", "hidden": True,
                          "passed": False, "message": "wrong (details are withheld on hidden configs)"})
    doc.update(verdict="wrong_answer", message="hidden 1: wrong (details are withheld on hidden configs)")
    folder = out / "students" / "bob"
    folder.mkdir(parents=True)
    (folder / "results.json").write_text(json.dumps({**doc, "submission": {**doc["submission"], "name": "bob"}}))
    (folder / "batch.json").write_text(json.dumps({"submission": "bob", "key": "k"}))
    rubric, deadline = config.load_rubric(FAST)
    [row] = write_gradebook(out, ["bob"], cfg, rubric, deadline, STAMPS, render_pdf=True)
    gs = json.loads((folder / "results_gradescope.json").read_text())
    perf = next(t for t in gs["tests"] if t["name"] == "performance vs SDPA")
    assert perf["score"] > 0 and row["late_days"] == 1                 # the hidden failure kept the benchmark
    assert _pdf_score(folder / "report.pdf") == (row["score"], row["max_score"]) and gs["score"] == row["score"]
    (out / "overrides.csv").write_text("student,item,value,reason,reviewer\nbob,config1,4,partly hard-coded,ta\n")
    assert rebuild_from_record(out)
    new = {r["submission"]: r for r in _rows_csv(out)}["bob"]
    assert float(new["score"]) < row["score"] and _pdf_score(folder / "report.pdf")[0] == float(new["score"])
    stamp = (folder / "report.pdf").stat().st_mtime_ns
    assert rebuild_from_record(out) and (folder / "report.pdf").stat().st_mtime_ns == stamp


def _rows_csv(out: Path) -> list:
    with open(out / "grades.csv", newline="") as f:
        return list(csv.DictReader(f))


def test_grading_json_keeps_the_secrets_out(tmp_path):
    cfg, _ = _hidden_cfg(tmp_path)
    _shard(tmp_path / "s1", ["alice"], cfg, 1, 1)
    text = (tmp_path / "s1" / "grading.json").read_text()
    doc = json.loads(text)
    assert doc["hidden"]["configs"] == 1 and len(doc["hidden"]["digest"]) == 32 and doc["config"]["seed"] is None
    assert str(HIDDEN_SEED) not in text and not STANDALONE_S.search(text)
    assert doc["timestamps"] == {"alice": STAMPS["alice"]} and doc["shard"] == [1, 1]


def test_collect_refuses_shards_graded_under_different_configs(tmp_path):
    from dataclasses import replace

    from grader.course.batch import collect
    cfg, _ = _hidden_cfg(tmp_path)
    other_hidden, _ = _hidden_cfg(tmp_path, seed=7)
    _shard(tmp_path / "s1", ["alice"], cfg, 1, 3)
    _shard(tmp_path / "s2", ["bob"], replace(cfg, timeout_check=99.0), 2, 3)
    _shard(tmp_path / "s3", ["carol"], other_hidden, 3, 3)
    with pytest.raises(BatchError, match="differs in: timeout_check"):
        collect([tmp_path / "s1", tmp_path / "s2"], tmp_path / "m", render_pdf=False)
    with pytest.raises(BatchError, match="differs in: the hidden configs"):
        collect([tmp_path / "s1", tmp_path / "s3"], tmp_path / "m", render_pdf=False)
    with pytest.raises(BatchError, match="--hidden does not match"):
        collect([tmp_path / "s1"], tmp_path / "m", hidden=other_hidden, render_pdf=False)
    warnings = []
    collect([tmp_path / "s1"], tmp_path / "m", hidden=cfg, render_pdf=False, warn=warnings.append)
    assert any("shards 2/3, 3/3 not among the folders" in w for w in warnings), warnings


def test_folders_without_a_record_need_the_flags_and_cannot_mix(tmp_path):
    from grader.core import config
    from grader.course.batch import collect
    from grader.course.batch.record import setup_from
    cfg, _ = _hidden_cfg(tmp_path)
    _shard(tmp_path / "s1", ["alice"], cfg, 1, 2)
    _shard(tmp_path / "s2", ["bob"], cfg, 2, 2)
    (tmp_path / "s2" / "grading.json").unlink()
    with pytest.raises(BatchError, match="s2: no grading.json"):
        collect([tmp_path / "s1", tmp_path / "s2"], tmp_path / "m", render_pdf=False)
    (tmp_path / "s1" / "grading.json").unlink()
    rubric, deadline = config.load_rubric(FAST)
    rows = collect([tmp_path / "s1", tmp_path / "s2"], tmp_path / "m", stamps={}, render_pdf=False,
                   legacy=setup_from(cfg, rubric, deadline, {}))
    assert sorted(r["submission"] for r in rows) == ["alice", "bob"] and rows[0]["max_score"] == 105


def test_collect_takes_each_student_from_a_shard_that_lists_them_now(tmp_path):
    """Issue 33's walkthrough (S1): the class changed and a shard was re-run under the new split.
    Its folder still held grades of students it no longer lists (newer than the shard that lists
    them now), and collect took those, with the lateness of a shard that has no time for them:
    a student 19 days late scored in full, a withdrawn student back in the gradebook, a
    collect over fewer shards leaving the others' folders in OUT/students."""
    from grader.course.batch import collect
    cfg, _ = _hidden_cfg(tmp_path)
    stamps = {**STAMPS, "carol": "2026-12-30T12:00:00+00:00"}                 # carol: 19 days late
    _shard(tmp_path / "s1", ["alice", "carol"], cfg, 1, 2, stamps)
    _shard(tmp_path / "s2", ["bob"], cfg, 2, 2, stamps)
    doc = json.loads((tmp_path / "s1" / "students" / "carol" / "results.json").read_text())
    for sid in ("carol", "zed"):        # graded by s2 under an earlier split (zed has withdrawn since)
        folder = tmp_path / "s2" / "students" / sid
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps({**doc, "submission": {**doc["submission"], "name": sid}}))
        (folder / "batch.json").write_text(json.dumps({"submission": sid, "key": "k", "finished_at": "2026-12-21T10:00:00"}))
    merged = tmp_path / "merged"
    warnings = []
    rows = {r["submission"]: r for r in collect([tmp_path / "s1", tmp_path / "s2"], merged, render_pdf=False,
                                                warn=warnings.append)}
    assert sorted(rows) == ["alice", "bob", "carol"]
    assert rows["carol"]["late_days"] == 19 and rows["carol"]["score"] == 0 and "no_timestamp" not in rows["carol"]["flags"]
    assert rows["bob"]["late_days"] == 1
    assert any("zed" in w and "no shard lists" in w for w in warnings), warnings
    assert not (merged / "students" / "zed").exists()
    # a collect of fewer shards into the same folder: the others' students leave it
    (merged / "instructor" / "stray.json").write_text("{}")
    rows = collect([tmp_path / "s2"], merged, render_pdf=False, warn=warnings.append)
    assert [r["submission"] for r in rows] == ["bob"]
    assert sorted(p.name for p in (merged / "students").iterdir()) == ["bob"]
    assert sorted(p.name for p in (merged / "instructor").iterdir()) == ["bob.json"]
    assert any("alice, carol" in w and "removed" in w for w in warnings), warnings
    # a batch's own OUT (its grading.json written by a batch, or none yet: an unfinished first
    # run) holds grades, not copies: a collect into it removes nothing
    for record_text in (None, (tmp_path / "s1" / "grading.json").read_text()):
        own = tmp_path / f"own{record_text is None}"
        shutil.copytree(tmp_path / "s1", own)
        if record_text is None:
            (own / "grading.json").unlink()
        collect([tmp_path / "s2"], own, render_pdf=False, warn=warnings.append)
        assert sorted(p.name for p in (own / "students").iterdir()) == ["alice", "bob", "carol"]


def test_an_override_survives_a_collect_and_shard_overrides_are_named(tmp_path):
    from grader.course.batch import collect
    cfg, _ = _hidden_cfg(tmp_path)
    _shard(tmp_path / "s1", ["alice", "carol"], cfg, 1, 2)
    _shard(tmp_path / "s2", ["bob"], cfg, 2, 2)
    merged = tmp_path / "merged"
    collect([tmp_path / "s1", tmp_path / "s2"], merged, render_pdf=False)
    text = ("student,item,value,reason,reviewer\n"
            "bob,extension,1,medical,jdoe\n"
            "alice,written:gap,2,too short,ta-kim\n")
    (merged / "overrides.csv").write_text(text)
    (tmp_path / "s1" / "overrides.csv").write_text(text)
    warnings = []
    rows = {r["submission"]: r for r in collect([tmp_path / "s1", tmp_path / "s2"], merged, render_pdf=False,
                                                warn=warnings.append)}
    assert rows["bob"]["late_days"] == 0 and "extension=1 by jdoe" in rows["bob"]["overrides"]
    assert rows["alice"]["overrides"] == "written:gap=2 by ta-kim"
    assert (merged / "overrides.csv").read_text() == text                       # never rewritten
    assert any("s1/overrides.csv is not applied" in w for w in warnings)
    gs = json.loads((merged / "students" / "alice" / "results_gradescope.json").read_text())
    assert any(t["name"] == "written: Performance gap" and t["score"] == 2 for t in gs["tests"])
    (merged / "overrides.csv").write_text("student,item,value,reason,reviewer\nbob,speed,3,,\n")
    with pytest.raises(BatchError, match="line 2: unknown item 'speed'"):
        collect([tmp_path / "s2"], merged, render_pdf=False)


def test_collect_command_defaults_to_a_new_folder_and_errors_in_one_line(tmp_path):
    cfg, hidden = _hidden_cfg(tmp_path)
    other, other_file = _hidden_cfg(tmp_path, seed=7)
    _shard(tmp_path / "s1", ["alice"], cfg, 1, 2)
    _shard(tmp_path / "s2", ["bob"], cfg, 2, 2)
    run = lambda *a: subprocess.run([sys.executable, "-m", "grader", "collect", *a, "--no-pdf"],  # noqa: E731
                                    cwd=REPO, capture_output=True, text=True)
    proc = run(str(tmp_path / "s1"), str(tmp_path / "s2"), "--hidden", str(hidden), "--config", str(FAST))
    assert proc.returncode == 0, proc.stderr
    assert sorted(_rows(tmp_path / "merged")) == ["alice", "bob"] and not (tmp_path / "s1" / "students" / "bob").exists()
    proc = run(str(tmp_path / "s1"), "--hidden", str(other_file), "--config", str(FAST))
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "--hidden does not match" in proc.stderr


# ---- units ------------------------------------------------------------------------------

def test_discover_names_and_skips(tmp_path):
    (tmp_path / "alice").mkdir()
    (tmp_path / "bob.py").write_text("")
    (tmp_path / "carol.zip").write_bytes(b"")
    (tmp_path / "alice.zip").write_bytes(b"")
    (tmp_path / "timestamps.csv").write_text("")
    (tmp_path / ".hidden.py").write_text("")
    ids = [e.id for e in discover(tmp_path)]
    assert ids == ["alice", "alice.zip", "bob", "carol"]
    assert [e.id for e in shard_of(discover(tmp_path), 2, 2)] == ["alice.zip", "carol"]
    with pytest.raises(BatchError):
        discover(tmp_path / "missing")


@pytest.mark.parametrize("members, reason", [
    ({"../evil.py": "x"}, "unsafe path"),
    ({"/abs.py": "x"}, "unsafe path"),
    ({"big.py": "x" * (65 << 20)}, "MiB"),
])
def test_hostile_zips_are_refused(tmp_path, members, reason):
    z = tmp_path / "s.zip"
    with zipfile.ZipFile(z, "w", zipfile.ZIP_DEFLATED) as f:
        for name, text in members.items():
            f.writestr(name, text)
    with pytest.raises(ValueError, match=reason):
        extract_zip(z, tmp_path / "x")


def test_zip_with_a_symlink_is_refused(tmp_path):
    z = tmp_path / "s.zip"
    with zipfile.ZipFile(z, "w") as f:
        info = zipfile.ZipInfo("link.py")
        info.external_attr = (0o120777 << 16)
        f.writestr(info, "/etc/passwd")
    with pytest.raises(ValueError, match="symbolic link"):
        extract_zip(z, tmp_path / "x")


def test_batch_command_errors_are_one_line(tmp_path):
    proc = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path / "nope"), "--out",
                           str(tmp_path / "o")], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1 and "not a folder" in proc.stderr
    proc = subprocess.run([sys.executable, "-m", "grader", "batch", str(tmp_path), "--out", str(tmp_path / "o"),
                           "--shard", "3/2"], cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 2 and "--shard" in proc.stderr


@pytest.mark.gpu
def test_gpu_class_gets_the_expected_gradebook(tmp_path):
    """The CUDA fixtures (and the CPU class beside them) graded with --gpus 0."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    threading.Thread(target=_accept_until_closed, args=(listener,), daemon=True).start()
    subs, out = tmp_path / "subs", tmp_path / "out"
    expected = fixture_class.build(subs, out, listener.getsockname()[1], gpu=True)
    if not HAVE_BWRAP:
        for sid in fixture_class.ESCAPES:
            (subs / f"{sid}.py").unlink()
            expected.pop(sid)
    proc = _batch(subs, out, "--gpus", "0", "--jobs", "8")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    rows = _rows(out)
    for sid, want in expected.items():
        assert rows[sid]["status"] == want["status"], (sid, rows[sid]["message"])
        if sid == "leo" and TORCH_2_11:
            continue      # crashes instead of raising there: test_torch_check_with_sizes_keeps_its_message
        assert want["message"].lower() in rows[sid]["message"].lower(), (sid, rows[sid]["message"])
    assert rows["gpu_alice"]["backend"] == "cuda" and rows["alice"]["backend"] == "cpu"
    doc = json.loads((out / "students" / "gpu_erin" / "results.json").read_text())
    assert doc["bench"][0]["fused_ms"] and "once on this device" in doc["timing"]["references"]


@pytest.mark.gpu
@pytest.mark.xfail(condition=TORCH_2_11, strict=True,
                   reason="known bug (torch 2.11 GPU image): TORCH_CHECK(false, \"text\", q.sizes()) in a CPU "
                          "kernel ends in SIGSEGV instead of the message; a literal-only message works")
def test_torch_check_with_sizes_keeps_its_message(cfg):
    from grader.run import grade
    result = grade(REPO / "tests" / "submissions" / "cheat" / "leaks_shape.py", cfg, backend="cpu", bench=False)
    assert result.verdict == "runtime_error" and "LEAK shape=[1, 4, 128, 64]" in result.message


def test_a_grader_error_is_a_row_and_the_batch_exits_non_zero(tmp_path, monkeypatch, cfg):
    """The grader failing on one submission neither stops the batch nor loses the row."""
    import grader.run
    from grader.course.batch import Batch, BatchOptions
    from grader.core.config import load_rubric
    subs = tmp_path / "subs"
    subs.mkdir()
    bad = (REPO / "tests" / "submissions" / "invalid" / "syntax_error.py").read_text()
    for sid in ("a", "b"):
        (subs / f"{sid}.py").write_text(bad)
    real = grader.run.grade

    def flaky(path, *args, **kwargs):
        if Path(path).stem == "a":
            raise RuntimeError("disk on fire")
        return real(path, *args, **kwargs)
    monkeypatch.setattr(grader.run, "grade", flaky)
    rubric, deadline = load_rubric(FAST)
    out = tmp_path / "out"
    summary = Batch(BatchOptions(submissions=subs, out=out, cfg=cfg, rubric=rubric, deadline=None,
                                 render_pdf=False, sandbox="off"), log=lambda line: None).run()
    rows = {r["submission"]: r for r in summary["rows"]}
    assert rows["a"]["status"] == "grader_error" and "disk on fire" in rows["a"]["message"]
    assert rows["b"]["status"] == "invalid_submission"
    assert _rows(out)["a"]["status"] == "grader_error"
    # a re-run grades it again (it is never taken as done) ...
    monkeypatch.setattr(grader.run, "grade", real)
    again = Batch(BatchOptions(submissions=subs, out=out, cfg=cfg, rubric=rubric, deadline=None,
                               render_pdf=False, sandbox="off"), log=lambda line: None).run()
    assert again["graded"] == 1 and _rows(out)["a"]["status"] == "invalid_submission"
    # ... and the command line exits non-zero while any row has it
    proc = subprocess.run([sys.executable, "-c", "import sys, grader.run as r, grader.cli as c\n"
                           "def boom(*a, **k): raise RuntimeError('boom')\n"
                           "r.grade = boom\n"
                           f"sys.exit(c.main(['batch', {str(subs)!r}, '--out', {str(tmp_path / 'o2')!r}, "
                           f"'--config', {str(FAST)!r}, '--no-pdf', '--sandbox', 'off']))"],
                          cwd=REPO, capture_output=True, text=True)
    assert proc.returncode == 70, proc.stderr[-1000:]
    assert "grader_error" in proc.stderr


def test_the_wait_for_a_device_is_its_own_stage(tmp_path, monkeypatch, cfg):
    """A submission waiting for a device slot (a lane, the CPU, the slot's reference run)
    after its compile is `queued` in stage_seconds, not `audit`: on the H200, 50 submissions
    showed a mean "audit" of 55.7 s that was this wait."""
    from grader.course.batch import Batch, BatchOptions
    from grader.core.config import load_rubric
    subs = tmp_path / "subs"
    subs.mkdir()
    (subs / "a.py").write_text((REPO / "tests" / "submissions" / "correct" / "scalar_loop.py").read_text())
    real = Batch._take_device

    def slow(self, backend):
        time.sleep(3)                                  # the slot is busy with someone else
        return real(self, backend)
    monkeypatch.setattr(Batch, "_take_device", slow)
    rubric, _ = load_rubric(FAST)
    out = tmp_path / "out"
    Batch(BatchOptions(submissions=subs, out=out, cfg=cfg, rubric=rubric, deadline=None,
                       render_pdf=False, sandbox="off"), log=lambda line: None).run()
    stages = json.loads((out / "students" / "a" / "results.json").read_text())["stage_seconds"]
    # `ready` where its child was started ahead and waits at the gate (GPU lanes, the CPU slot)
    assert stages.get("queued", 0) + stages.get("ready", 0) >= 3 and stages["audit"] < 3, stages


def test_a_rerun_without_the_hidden_file_is_refused_before_grading(tmp_path):
    """Walkthrough of 2026-11-27 (S1): re-running `batch` on an OUT graded with hidden configs,
    --hidden forgotten, regraded the whole class without them and replaced the grades of record.
    Now it stops before grading anything, and says what to pass; --replace-hidden does it on purpose."""
    cfg, hidden = _hidden_cfg(tmp_path)
    _shard(tmp_path / "out", ["alice"], cfg, 1, 1)
    before = (tmp_path / "out" / "grades.csv").read_text()
    empty = tmp_path / "class"
    empty.mkdir()
    run = lambda *a: subprocess.run([sys.executable, "-m", "grader", "batch", str(empty), "--out",  # noqa: E731
                                     str(tmp_path / "out"), "--config", str(FAST), "--no-pdf", *a],
                                    capture_output=True, text=True, cwd=REPO, timeout=300)
    proc = run()
    assert proc.returncode == 2 and "was graded with 1 hidden config(s) or a secret seed" in proc.stderr, proc.stderr
    assert "--hidden" in proc.stderr and "--replace-hidden" in proc.stderr
    assert (tmp_path / "out" / "grades.csv").read_text() == before          # nothing regraded or rewritten
    other, other_file = _hidden_cfg(tmp_path, seed=7)
    assert "this run has other ones" in run("--hidden", str(other_file)).stderr
    assert "was graded with" not in run("--hidden", str(hidden)).stderr
    assert "was graded with" not in run("--replace-hidden").stderr


def test_points_outside_an_items_range_stop_the_batch_before_grading(tmp_path):
    """Walkthrough of 2026-11-27 (S2): `written:gap,7` was caught only after the class was
    regraded, leaving one student three scores. read_overrides (run before anything is graded)
    now checks each item's range, and names the file once."""
    from grader.core import config
    from grader.course.batch.outputs import read_overrides
    from grader.course.batch.record import setup_from
    cfg, _ = _hidden_cfg(tmp_path)
    rubric, deadline = config.load_rubric(FAST)
    (tmp_path / "overrides.csv").write_text("student,item,value,reason,reviewer\nerin,written:gap,7,,ta\n")
    with pytest.raises(BatchError) as e:
        read_overrides(tmp_path, setup_from(cfg, rubric, deadline, {}))
    assert "line 2: written:gap takes 0 to 5 points (got 7)" in str(e.value)
    assert str(e.value).count("overrides.csv") == 1, str(e.value)


def test_a_deadline_change_in_another_config_file_keeps_every_key(tmp_path):
    """INSTRUCTORS: "a rubric or deadline change needs no regrade", in place or given as
    `batch --config FILE`: the key of a grade leaves out where the config was read from; what
    the grade depends on (a tolerance, the tier boundaries its timing runs clear of, the file's
    [precision] policy) still changes it."""
    from grader.core import config
    from grader.course.batch import submission_key
    sub = tmp_path / "alice.py"
    sub.write_text((REPO / "grader" / "pristine" / "attention.py").read_text())
    text = (REPO / "assignment" / "config.toml").read_text()
    later = tmp_path / "later.toml"
    later.write_text(text.replace("2026-12-11", "2026-12-18"))
    assert later.read_text() != text and "2026-12-18" in later.read_text()
    base = config.load(REPO / "assignment" / "config.toml")
    moved = config.load(later)
    assert moved.source != base.source
    assert submission_key(sub, moved, "auto") == submission_key(sub, base, "auto")
    for name, changed in (("stricter", re.sub(r"(?m)^tolerance = .*$", "tolerance = 0.0005", text)),
                          ("tiers", re.sub(r"(?m)^(\s*)max_slowdown = 1\.5$", r"\1max_slowdown = 1.6", text)),
                          ("fp32", re.sub(r"(?m)^allowed = .*$", 'allowed = ["fp32"]', text))):
        assert changed != text, name
        path = tmp_path / f"{name}.toml"
        path.write_text(changed)
        assert submission_key(sub, config.load(path), "auto") != submission_key(sub, base, "auto"), name
