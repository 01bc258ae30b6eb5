"""Instructor overrides: a person's decisions, kept in `overrides.csv` beside the gradebook.

The gradebook is rebuilt from the results on every run; what a person decided (a
`cheat_suspected` review, a manual grade of a written answer, an extension, an
adjustment) lives in this file, which the grader reads on every rebuild and never
writes. One row per decision:

    student,item,value,reason,reviewer
    ivan,review,cleared,"the aten call is in a dead debug branch",jdoe
    judy,review,confirmed,"calls torch.bmm through a function pointer",jdoe
    alice,written:gap,3,"ignores memory traffic",ta-kim
    bob,extension,2,"medical certificate",jdoe
    carol,adjust,-5,"resubmitted after the solution was posted",jdoe

`item` is a rubric item (`config1`.., `hidden1`.., `performance`, `profile`,
`before_after`, `written:bound|gap|length|fusion`; value = its points, 0..its maximum),
or one of:
- `review`: `cleared` (the flags were looked at and are fine: scored as the verdict the
  kernel would have had without them) or `confirmed` (scores 0);
- `extension`: extra days added to the deadline for this student;
- `adjust`: points added (or taken off, negative) before the late penalty.

Rows apply in file order; a later row for the same student and item replaces an earlier
one (a correction is a new line, the old one stays as history).
"""
from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

from ..core.safetext import FORMULA_START

COLUMNS = ("student", "item", "value", "reason", "reviewer")
FILE_NAME = "overrides.csv"
REVIEW_OUTCOMES = ("cleared", "confirmed")
SPECIAL_ITEMS = ("review", "extension", "adjust")


class OverrideError(Exception):
    """overrides.csv is malformed; the message names the line and what to fix."""


@dataclass(frozen=True)
class Override:
    student: str
    item: str            # a rubric item key, or review | extension | adjust
    value: str           # as written: points, days, or cleared | confirmed
    reason: str
    reviewer: str
    line: int            # line in overrides.csv (for messages)

    @property
    def number(self) -> float:
        return float(self.value)

    def label(self) -> str:
        """`item=value by reviewer`, as the gradebook's overrides column shows it."""
        return f"{self.item}={self.value}" + (f" by {self.reviewer}" if self.reviewer else "")


def _number(text: str) -> float | None:
    try:
        value = float(text)
    except ValueError:
        return None
    return value if value == value and abs(value) != float("inf") else None


def read(path: Path) -> list[Override]:
    """Every row of `path` (none when the file does not exist), validated."""
    if not path.is_file():
        return []
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.reader(f))
    except (OSError, UnicodeDecodeError, csv.Error) as e:
        raise OverrideError(f"{path}: not a readable CSV file ({e})") from None
    if not rows:
        return []
    header = [h.strip().lower() for h in rows[0]]
    if tuple(header[:len(COLUMNS)]) != COLUMNS:
        raise OverrideError(f"{path}: the first line must be the header {','.join(COLUMNS)} "
                            f"(got {','.join(rows[0])})")
    out = []
    for n, cells in enumerate(rows[1:], start=2):
        if not any(c.strip() for c in cells):
            continue
        cells = [c.strip() for c in cells] + [""] * (len(COLUMNS) - len(cells))
        o = Override(*cells[:len(COLUMNS)], line=n)
        where = f"{path}, line {n}"
        if not o.student or not o.item:
            raise OverrideError(f"{where}: student and item are required")
        if o.item == "review":
            if o.value not in REVIEW_OUTCOMES:
                raise OverrideError(f"{where}: a review is 'cleared' or 'confirmed' (got {o.value!r})")
        elif _number(o.value) is None:
            raise OverrideError(f"{where}: {o.item} needs a number (got {o.value!r})")
        elif o.item == "extension" and o.number < 0:
            raise OverrideError(f"{where}: an extension is a number of days >= 0 (got {o.value})")
        out.append(o)
    return out


def for_student(overrides: list[Override], student: str) -> dict[str, Override]:
    """The overrides of one student, by item; a later row replaces an earlier one. An id
    grades.csv writes with a leading ' (one a spreadsheet would read as a formula: `'=1+1`)
    names the student as copied from there too."""
    return {o.item: o for o in overrides if student_of(o, (student,)) == student}


def student_of(o: Override, ids) -> str | None:
    """The student a row names among `ids` (as written, or as grades.csv quotes it); None if none."""
    if o.student in ids:
        return o.student
    bare = o.student[1:] if o.student.startswith("'") else ""
    return bare if FORMULA_START.match(bare) and bare in ids else None


def check_items(overrides: list[Override], known: set[str], path: Path) -> None:
    """Refuse items the rubric does not have (a typo would otherwise change nothing)."""
    for o in overrides:
        if o.item not in known and o.item not in SPECIAL_ITEMS:
            raise OverrideError(f"{path}, line {o.line}: unknown item {o.item!r}; expected one of "
                                f"{', '.join(sorted(known))}, {', '.join(SPECIAL_ITEMS)}")
