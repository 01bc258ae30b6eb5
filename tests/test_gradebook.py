"""Scores, lateness and the Gradescope document, from canned results (no grading)."""
import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from grader import config
from grader import gradebook as gb

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "results"
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
    row = max(doc["bench"], key=lambda b: b["S"])           # the tier: fastest calls' ratio (grader/tiers.py)
    best = row["timings"]["student"]["min_ms"] / row["timings"]["sdpa"]["min_ms"]
    expected = next((p for m, p in rubric.performance if best <= m), 0)
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
