"""overrides.csv: reading, validation with the line named, last row wins."""
import pytest

from grader.core import config
from grader.score import gradebook as gb
from grader.score.overrides import OverrideError, check_items, for_student, read


def _write(tmp_path, text):
    path = tmp_path / "overrides.csv"
    path.write_text(text)
    return path


def test_rows_are_read_and_a_later_row_replaces_an_earlier_one(tmp_path):
    path = _write(tmp_path, "student,item,value,reason,reviewer\n"
                            "ivan,review,confirmed,first look,jdoe\n"
                            "\n"
                            "alice,written:gap,3,,ta-kim\n"
                            "ivan,review,cleared,\"dead code, checked\",prof\n")
    rows = read(path)
    assert [(o.student, o.item, o.line) for o in rows] == [("ivan", "review", 2), ("alice", "written:gap", 4),
                                                           ("ivan", "review", 5)]
    ivan = for_student(rows, "ivan")
    assert ivan["review"].value == "cleared" and ivan["review"].reason == "dead code, checked"
    assert ivan["review"].label() == "review=cleared by prof"
    assert read(tmp_path / "none.csv") == []


def test_an_id_copied_from_grades_csv_with_its_quote_names_the_student(tmp_path):
    """A walkthrough's S3: grades.csv writes `=1+1` as `'=1+1` (no formula runs); an extension
    row with the id copied from there was a student 'this folder does not hold', not applied."""
    from grader.score.overrides import student_of
    rows = read(_write(tmp_path, "student,item,value,reason,reviewer\n'=1+1,extension,2,,ta\n'bob,extension,1,,ta\n"))
    assert for_student(rows, "=1+1")["extension"].number == 2
    assert for_student(rows, "bob") == {}                        # a quote only where grades.csv adds one
    assert [student_of(o, {"=1+1", "bob"}) for o in rows] == ["=1+1", None]


@pytest.mark.parametrize("body, message", [
    ("who,what\nx,y\n", "header"),
    ("student,item,value,reason,reviewer\nbob,review,maybe,,\n", "line 2: a review is"),
    ("student,item,value,reason,reviewer\nbob,performance,lots,,\n", "line 2: performance needs a number"),
    ("student,item,value,reason,reviewer\nbob,extension,-1,,\n", "days >= 0"),
    ("student,item,value,reason,reviewer\n,performance,3,,\n", "student and item are required"),
])
def test_bad_rows_are_refused_with_the_line(tmp_path, body, message):
    with pytest.raises(OverrideError, match=message):
        read(_write(tmp_path, body))


def test_unknown_items_are_refused_known_ones_listed(tmp_path):
    rubric, _ = config.load_rubric()
    keys = gb.item_keys(rubric, 3, 1)
    assert {"config1", "config3", "hidden1", "performance", "profile", "before_after", "written:gap"} <= keys
    path = _write(tmp_path, "student,item,value,reason,reviewer\nbob,writen:gap,3,,\n")
    with pytest.raises(OverrideError, match="unknown item 'writen:gap'.*written:gap"):
        check_items(read(path), keys, path)
