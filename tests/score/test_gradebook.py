"""Scores, lateness and the Gradescope document, from canned results (no grading)."""
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from grader.core import config
from grader.score import gradebook as gb
from conftest import TESTS

FIXTURES = TESTS / "fixtures" / "results"
DUE = config.Deadline(due=datetime(2026, 12, 11, 23, 59, tzinfo=timezone.utc), grace_minutes=15,
                      penalty_per_day=0.1, max_late_days=5)


@pytest.mark.parametrize("when, days, penalty", [
    ("2026-12-11T23:00:00+00:00", 0, 0.0),
    ("2026-12-12T00:10:00+00:00", 0, 0.0),          # inside the 15-minute grace
    ("2026-12-12T00:14:01Z", 1, 0.1),               # one second past due+grace: a started day
    ("2026-12-13T00:13:59+00:00", 1, 0.1),
    ("2026-12-13T00:14:01+00:00", 2, 0.2),
    ("2026-12-16T23:00:00-05:00", 6, 1.0),          # time zones respected; past the 5-day limit
])
def test_lateness(when, days, penalty):
    late = gb.lateness(when, DUE)
    assert (late.days, late.penalty) == (days, pytest.approx(penalty))


def test_missing_or_bad_timestamps_are_on_time_with_a_note():
    assert gb.lateness(None, DUE).penalty == 0
    assert "unreadable" in gb.lateness("yesterday", DUE).note
    assert gb.lateness("2027-01-01T00:00:00+00:00", None).penalty == 0


def test_rubric_items_and_total_of_the_course_config():
    rubric, deadline = config.load_rubric()
    doc = json.loads((FIXTURES / "cpu_fused.json").read_text())
    items = gb.score_items(doc, rubric)
    by = {i.name.split(" (")[0]: i for i in items}
    assert by["correctness: config 1"].score == rubric.config_points[0]
    perf = by["performance vs SDPA"]
    row = max(doc["bench"], key=lambda b: b["S"])           # the tier: the medians' ratio (grader/analysis/perf_tier.py)
    best = row["timings"]["student"]["min_ms"] / row["timings"]["sdpa"]["min_ms"]
    expected = next((p for m, p in rubric.performance if row["slowdown"] <= m), 0)
    assert perf.score == expected and f"{best:.2f}x" in perf.output and f"{row['slowdown']:.2f}x" in perf.output
    score, max_score = gb.total(items, gb.lateness(None, deadline))
    assert max_score == rubric.max_score(0) == 100
    late = gb.total(items, gb.Lateness(2, 0.2, "x", ""))[0]
    assert late == pytest.approx(score * 0.8, abs=0.01)


def test_cheat_suspected_scores_nothing_and_shows_no_leaderboard():
    rubric, _ = config.load_rubric()
    doc = json.loads((FIXTURES / "cpu_fused.json").read_text())
    doc = {**doc, "verdict": "cheat_suspected", "flags": [{"code": "aten_compute", "tier": "strict", "detail": "x"}]}
    items = gb.score_items(doc, rubric)
    assert all(i.score == 0 for i in items if i.name.startswith(("correctness", "performance")))
    gs = gb.gradescope(doc, items, gb.lateness(None, None))
    assert gs["leaderboard"] == [] and any(t["name"] == "integrity flags" and t["visibility"] == "hidden"
                                           for t in gs["tests"])


def test_rubric_config_errors_name_the_key(tmp_path):
    text = (config.DEFAULT_CONFIG).read_text().replace("config_points = [10, 15, 10, 10]", "config_points = [15, 15]")
    bad = tmp_path / "c.toml"
    bad.write_text(text)
    with pytest.raises(config.ConfigError, match="config_points"):
        config.load(bad)
    bad.write_text(config.DEFAULT_CONFIG.read_text().replace('due = "2026-12-11T23:59:00+00:00"', 'due = "soon"'))
    with pytest.raises(config.ConfigError, match="ISO 8601"):
        config.load_rubric(bad)


def test_csv_round_trip():
    cols = gb.columns([128], 1, 0)
    text = gb.to_csv([{"submission": "a,b", "status": "ok", "score": 1.5, "config1_passed": True}], cols)
    assert text.splitlines()[0].startswith("submission,status,score,max_score")
    assert '"a,b"' in text


# ---- overrides, extensions, CSV injection --------------------------------------------------

def _doc(**changes):
    return {**json.loads((FIXTURES / "cpu_fused.json").read_text()), **changes}


def _override(item, value, student="s", reviewer="jdoe", reason="read the code", line=2):
    from grader.score.overrides import Override
    return Override(student, item, value, reason, reviewer, line)


def test_review_cleared_scores_the_verdict_without_flags_and_confirmed_scores_zero():
    rubric, _ = config.load_rubric()
    clean = gb.score_items(_doc(), rubric)
    flagged = _doc(verdict="cheat_suspected", verdict_without_flags="ok",
                   flags=[{"code": "aten_compute", "tier": "strict", "detail": "x"}])
    assert gb.total(gb.scored(flagged, rubric, None, {}), gb.lateness(None, None))[0] == 0 < gb.total(clean, gb.lateness(None, None))[0]
    cleared = gb.scored(flagged, rubric, None, {"review": _override("review", "cleared")})
    assert [i.score for i in cleared if i.max_score] == [i.score for i in clean]
    assert any(i.key == "review:reviewer" and "cleared by jdoe" in i.output and i.visibility == "hidden" for i in cleared)
    # the returned PDF says why a cheat_suspected verdict scored (a walkthrough found it silent)
    rows = gb.final_score(cleared, gb.lateness(None, None))["rows"]
    assert any(r["name"] == "integrity review" and r["output"] == "cleared by the course staff" for r in rows), rows
    assert "read the code" not in json.dumps(rows)          # the reviewer's reason stays the instructor's
    # a cleared review of a kernel nothing flagged (a typo'd student, a regrade that no longer
    # flags) changes nothing and tells the student nothing (re-walk, S3: it said "cleared")
    # review-tier flags on an `ok` kernel are flags too: their clearance is said
    reviewed = gb.scored(_doc(flags=[{"code": "too_fast", "tier": "review", "detail": "x"}]), rubric, None,
                         {"review": _override("review", "cleared")})
    assert any(i.key == "review" and i.visibility == "visible" for i in reviewed)
    idle = gb.scored(_doc(), rubric, None, {"review": _override("review", "cleared")})
    assert [i.score for i in idle if i.max_score] == [i.score for i in clean]
    assert not any(r["name"] == "integrity review" for r in gb.final_score(idle, gb.lateness(None, None))["rows"])
    confirmed = gb.scored(_doc(), rubric, None, {"review": _override("review", "confirmed")})
    assert sum(i.score for i in confirmed) == 0 and "confirmed" in confirmed[0].output


def test_manual_points_replace_the_automatic_ones_within_the_item_range():
    rubric, _ = config.load_rubric()
    doc = _doc(report_md="# Performance gap\nbecause.\n")
    items = gb.scored(doc, rubric, None, {"written:gap": _override("written:gap", "2")})
    gap = next(i for i in items if i.key == "written:gap")
    assert gap.score == 2 and gap.max_score == 5 and "set by jdoe" in gap.output and "automatic: 5" in gap.output
    with pytest.raises(gb.OverrideError, match="0 to 5"):
        gb.scored(doc, rubric, None, {"written:gap": _override("written:gap", "6")})
    adjusted = gb.scored(doc, rubric, None, {"adjust": _override("adjust", "-500")})
    assert gb.total(adjusted, gb.lateness(None, None))[0] == 0          # never below zero


def test_an_extension_moves_this_students_deadline():
    when = "2026-12-13T12:00:00+00:00"          # 2 started days late
    assert gb.lateness(when, DUE).days == 2
    late = gb.lateness(when, DUE, extension_days=2)
    assert late.days == 0 and "2-day extension" in late.note
    assert gb.lateness("2026-12-14T12:00:00+00:00", DUE, extension_days=2).days == 1


def test_the_overrides_column_says_what_and_who():
    rubric, _ = config.load_rubric()
    chosen = {"written:gap": _override("written:gap", "2", reviewer="ta-kim", line=3),
              "extension": _override("extension", "1", line=2)}
    r = gb.row(_doc(), gb.scored(_doc(), rubric, None, chosen), gb.lateness(None, None), [128], 3, 0, chosen)
    assert r["overrides"] == "extension=1 by jdoe; written:gap=2 by ta-kim"
    assert "overrides" in gb.columns([128], 3, 0)


@pytest.mark.parametrize("value, written", [
    ("=HYPERLINK(\"http://x\",\"y\")", "'=HYPERLINK"), ("+1+cmd", "'+1+cmd"), ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM"), ("\tTAB", "'\tTAB"), ("\rCR", "'\nCR"), ("alice", "alice"),
    (-3.5, "-3.5"), ("-3.5", "-3.5"), (0, "0"),
])
def test_csv_cells_that_could_run_as_formulas_are_neutralised(value, written):
    import csv
    import io
    cols = ["submission", "score", "message"]
    text = gb.to_csv([{"submission": value, "score": value if not isinstance(value, str) else 1, "message": value}], cols)
    row = next(csv.DictReader(io.StringIO(text)))
    assert row["submission"].startswith(written) and row["message"].startswith(written)
    if not isinstance(value, str):
        assert float(row["score"]) == value          # numbers stay numbers, negative ones too


def test_gradescope_tests_carry_a_status():
    rubric, _ = config.load_rubric()
    items = gb.score_items(_doc(), rubric)
    gs = gb.gradescope(_doc(), items, gb.lateness(None, None))
    by = {t["name"].split(" (")[0]: t for t in gs["tests"]}
    assert by["correctness: config 1"]["status"] == "passed"
    assert by["profiler evidence"]["status"] == "failed"      # the fixture has no profiles/


def test_the_preview_is_the_public_rubric_without_hidden_configs_or_lateness():
    rubric, deadline = config.load_rubric()
    doc = _doc()
    doc["checks"].append({**doc["checks"][0], "hidden": True, "config": None})
    p = gb.preview(doc, rubric, deadline)
    assert p.max_score == 100 and not any("hidden" in i.name for i in p.items)
    assert p.score == gb.total(gb.score_items(doc, rubric, hidden_count=0), gb.lateness(None, None))[0]
    assert any("hidden configs" in n for n in p.may_change) and any("late" in n for n in p.may_change)
    assert gb.preview(doc, config.DEFAULT_RUBRIC) is None


def test_the_gradebook_shows_hidden_max_err_from_the_instructors_copy_only():
    """The student's results withhold a hidden config's max_err; the gradebook (the
    instructor's) takes it from OUT/instructor/<id>.json, and shows none without it."""
    rubric, _ = config.load_rubric()
    doc = _doc()
    doc["checks"] = doc["checks"] + [{"name": "hidden 1", "config": None, "max_err": None, "passed": True,
                                      "message": "", "hidden": True}]
    items = gb.scored(doc, rubric, 1, {})
    late = gb.lateness(None, None)
    assert gb.row(doc, items, late, [128], 3, 1)["hidden1_max_err"] is None
    full = [{"name": "hidden 1", "config": {"B": 1, "H": 2, "S": 300, "D": 64}, "max_err": 3.5e-07, "passed": True}]
    r = gb.row(doc, items, late, [128], 3, 1, hidden_private=full)
    assert r["hidden1_max_err"] == 3.5e-07 and r["hidden1_passed"] is True


def _hidden_failure(doc: dict, verdict: str = "wrong_answer") -> dict:
    """The fixture graded with one hidden config, which the kernel failed after the benchmark."""
    hidden = {**doc["checks"][0], "config": None, "max_err": None, "name": "hidden 1", "hidden": True,
              "passed": False, "message": "wrong (details are withheld on hidden configs)"}
    return {**doc, "verdict": verdict, "message": "hidden 1: wrong", "checks": [*doc["checks"], hidden]}


@pytest.mark.parametrize("verdict", ["wrong_answer", "runtime_error", "timeout"])
def test_a_hidden_failure_costs_its_points_not_the_benchmarks(verdict):
    """Issue 33, item 5: the benchmark ran on a kernel correct on every public config, with
    every timed output checked; a hidden config failing after it costs hidden_points only."""
    rubric, _ = config.load_rubric(TESTS / "fast_config.toml")
    ok = json.loads((FIXTURES / "cpu_fused.json").read_text())
    on_time = gb.Lateness(0, 0.0, None, "")
    passed = {**ok, "checks": [*_hidden_failure(ok)["checks"][:-1],
                               {**_hidden_failure(ok)["checks"][-1], "passed": True, "message": ""}]}
    full, _ = gb.total(gb.score_items(passed, rubric, hidden_count=1), on_time)
    items = gb.score_items(_hidden_failure(ok, verdict), rubric, hidden_count=1)
    by = {i.key: i for i in items}
    assert by["hidden1"].score == 0 and by["performance"].score > 0
    assert gb.total(items, on_time)[0] == full - rubric.hidden_points
    # Gradescope's top-level output shows at once: it waits for publication as the hidden test does
    # (re-walk, S3: it read "verdict: wrong_answer - hidden 1: wrong" before publication)
    shown = gb.gradescope(_hidden_failure(ok, verdict), items, on_time)
    assert "hidden 1" not in shown["output"] and verdict not in shown["output"]
    assert [t["visibility"] for t in shown["tests"] if t["name"].endswith("hidden config 1")] == ["after_published"]
    assert gb.gradescope(passed, items, on_time)["output"].startswith("verdict: ok - ")
    # a verdict the public part decided (wrong on the benchmark inputs) is said, hidden failure or not
    bench_wrong = {**_hidden_failure(ok, "wrong_answer"), "message": "wrong on the benchmark inputs at S=256"}
    assert "wrong on the benchmark inputs" in gb.gradescope(bench_wrong, items, on_time)["output"]


def test_the_benchmark_does_not_count_when_it_did_not_finish_or_a_timed_output_was_wrong():
    rubric, _ = config.load_rubric(TESTS / "fast_config.toml")
    ok = json.loads((FIXTURES / "cpu_fused.json").read_text())
    wrong_timed = {**ok, "verdict": "wrong_answer", "bench": [*ok["bench"][:-1], {**ok["bench"][-1], "recheck_max_err": 0.5}]}
    cut_short = {**ok, "verdict": "runtime_error", "bench": ok["bench"][:-1]}
    public_wrong = {**ok, "verdict": "wrong_answer", "checks": [{**ok["checks"][0], "passed": False}, *ok["checks"][1:]]}
    for doc in (wrong_timed, cut_short, public_wrong, {**ok, "verdict": "cheat_suspected"}):
        assert {i.key: i for i in gb.score_items(doc, rubric)}["performance"].score == 0, doc["verdict"]


def test_the_final_score_is_the_gradebooks_total_with_the_late_penalty():
    rubric, _ = config.load_rubric(TESTS / "fast_config.toml")
    doc = _hidden_failure(json.loads((FIXTURES / "cpu_fused.json").read_text()))
    items = gb.score_items(doc, rubric, hidden_count=1)
    late = gb.lateness("2026-12-13T00:13:59+00:00", DUE)
    final = gb.final_score(items, late)
    assert (final["score"], final["max"]) == gb.total(items, late)
    assert final["score"] == gb.gradescope(doc, items, late)["score"] and "1 day late" in final["late"]


def test_a_long_score_line_is_cut_at_a_word_and_marked():
    """A re-walk found the PDF's performance line cut mid-word, "(the cap on timing pe", and
    nothing said it was cut; Gradescope had the whole line."""
    from grader.core.safetext import clipped
    line = "tier <= 1.5x; the interval reaches tier <= 1.5x but is too wide to count (the cap on timing " \
           "per size was reached); " * 5
    short = clipped(line)
    assert len(short) <= 400 and short.endswith("…") and line.startswith(short[:-1])
    assert short[:-1].split()[-1] in line.split()           # a whole word before the mark
    assert clipped("the whole line") == "the whole line"
    items = [gb.Item("performance vs SDPA", 20, 25, line)]
    assert gb.final_score(items, gb.lateness(None, None))["rows"][0]["output"] == short
