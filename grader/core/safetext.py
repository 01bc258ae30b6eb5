"""Text from a submission, made safe to print: a shared leaf (imports nothing of the grader).

Every string a child can influence (its crash tail, its exception message, a compiler log
quoting its source) reaches a terminal, a CSV file a spreadsheet opens, a JSON file that
`jq -r` prints and Gradescope's page. A control character there is an instruction, not
text: ESC starts a terminal escape (OSC 52 writes the reader's clipboard, others retitle
the window or hide lines), CR rewrites a line, the bidirectional overrides reorder what a
reader sees ("Trojan Source"). `printable` turns each into its visible escape (`\\x1b`,
`\\u202e`), keeping newlines and tabs; it is applied where text leaves the grader (the
results JSON, the gradebook's cells, the terminal), so no path in between can forget it.
"""
from __future__ import annotations

import re

# C0 controls but tab and newline, DEL, the C1 controls, the bidirectional embeddings,
# overrides and isolates, the line and paragraph separators, and the BOM
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ufeff]")


# text a spreadsheet would run as a formula (OWASP's rule for CSV injection): grades.csv writes
# it with a leading ' (grader/score/gradebook.py `cell`), and overrides.csv may name an id so
FORMULA_START = re.compile(r"[=+\-@\x00-\x1f]")


def _escape(m: re.Match) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


def printable(text: str) -> str:
    """`text` with every control character (but newline and tab) shown as its escape."""
    return _UNSAFE.sub(_escape, text) if isinstance(text, str) else text


def printable_tree(obj):
    """`printable` on every string of a JSON-like tree (dict keys too)."""
    if isinstance(obj, str):
        return printable(obj)
    if isinstance(obj, dict):
        return {printable_tree(k): printable_tree(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [printable_tree(v) for v in obj]
    return obj


def clipped(text: str, limit: int = 400) -> str:
    """`text` at most `limit` characters, cut at a word and marked (…) when it was longer: a
    score line cut mid-word ("the cap on timing pe") reads as the whole of it."""
    if len(text) <= limit:
        return text
    cut = text[:limit - 1]
    return (cut[:cut.rfind(" ")] if " " in cut[limit // 2:] else cut).rstrip(" ,;:(") + "…"
