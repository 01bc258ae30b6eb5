"""Text into Typst markup: escaped to print literally (`esc`), wrappable (`breakable`), as a
string literal (`lit`), or markup we generated ourselves (`T`). A shared leaf (imports
nothing of the grader): the report and its helpers write through it.
"""
from __future__ import annotations

import re

_PUNCT = re.compile(r"([!-/:-@\[-`{-~])")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


class T(str):
    """Typst source we generated ourselves: inserted as is."""


def esc(value) -> str:
    """Text that prints literally in Typst markup: a backslash before every ASCII
    punctuation character, control characters removed."""
    if isinstance(value, T):
        return value
    text = _CONTROL.sub("", "" if value is None else str(value))
    return _PUNCT.sub(r"\\\1", text)


def breakable(value) -> T:
    """`esc(value)` with a zero-width space after each _ < , and : so that a long kernel or
    range name ("fused_attention_kernel<64>", "before_student_S1024") wraps inside its table
    column instead of running into the next one."""
    return T(re.sub(r"(\\[_<,:])", "\\1\u200b", esc(value)))


def lit(value) -> T:
    """A Typst string literal (for raw(), image paths, ...)."""
    text = _CONTROL.sub("", str(value))
    return T('"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"')
